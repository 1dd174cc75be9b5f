//! Buffers and textures: device memory the pipeline reads and writes (BRIEF "Memory").
//! A buffer is words of `AtomicU32` that every unit and the API access directly (WebGPU's
//! data races are then races on atomics, never undefined behaviour); a texture's bytes live
//! behind a lock the command processor takes for the work that uses them.

use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use rastra_pipeline::hiz::HiZBuffer;

use rastra_pipeline::memory::{read_bytes, write_bytes};

use crate::TextureFormat;
use crate::error::{Error, validation};

/// Largest buffer or texture allocation, in bytes.
pub(crate) const MAX_ALLOCATION: u64 = 1 << 32;
/// Largest texture edge, in texels (WebGPU's default `maxTextureDimension2D`).
pub(crate) const MAX_TEXTURE_DIMENSION: u32 = 8192;

macro_rules! usage_flags {
    ($(#[doc = $doc:literal])* $name:ident { $($flag:ident = $bit:expr,)+ }) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub u32);
        impl $name {
            $(pub const $flag: $name = $name($bit);)+
            /// No flags.
            pub const fn empty() -> $name { $name(0) }
            /// Whether every flag of `other` is set.
            pub fn contains(self, other: $name) -> bool { self.0 & other.0 == other.0 }
        }
        impl std::ops::BitOr for $name {
            type Output = $name;
            fn bitor(self, rhs: $name) -> $name { $name(self.0 | rhs.0) }
        }
    };
}

usage_flags! {
    /// How a buffer may be used (WebGPU `GPUBufferUsage`).
    BufferUsages {
        MAP_READ = 1,
        MAP_WRITE = 2,
        COPY_SRC = 4,
        COPY_DST = 8,
        INDEX = 16,
        VERTEX = 32,
        UNIFORM = 64,
        STORAGE = 128,
        INDIRECT = 256,
    }
}

usage_flags! {
    /// How a texture may be used (WebGPU `GPUTextureUsage`).
    TextureUsages {
        COPY_SRC = 1,
        COPY_DST = 2,
        TEXTURE_BINDING = 4,
        STORAGE_BINDING = 8,
        RENDER_ATTACHMENT = 16,
    }
}

/// Creation parameters of a buffer.
#[derive(Clone, Debug)]
pub struct BufferDescriptor<'a> {
    pub label: Option<&'a str>,
    pub size: u64,
    pub usage: BufferUsages,
}

pub(crate) struct BufferInner {
    pub label: String,
    pub size: u64,
    pub usage: BufferUsages,
    /// `size` bytes, rounded up to whole words.
    pub words: Box<[AtomicU32]>,
}

/// A linear block of device memory.
#[derive(Clone)]
pub struct Buffer(pub(crate) Arc<BufferInner>);

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({:?}, {} bytes)", self.0.label, self.0.size)
    }
}

impl Buffer {
    pub(crate) fn new(desc: &BufferDescriptor<'_>) -> Result<Buffer, Error> {
        if desc.size > MAX_ALLOCATION {
            return Err(Error::OutOfMemory(format!(
                "buffer of {} bytes (the limit is {MAX_ALLOCATION})",
                desc.size
            )));
        }
        let mapping = desc.usage.0 & (BufferUsages::MAP_READ.0 | BufferUsages::MAP_WRITE.0);
        if mapping == (BufferUsages::MAP_READ.0 | BufferUsages::MAP_WRITE.0) {
            return validation("a buffer cannot have both MAP_READ and MAP_WRITE usage");
        }
        if desc.usage.0 == 0 {
            return validation("buffer usage must not be empty");
        }
        Ok(Buffer(Arc::new(BufferInner {
            label: desc.label.unwrap_or("").to_string(),
            size: desc.size,
            usage: desc.usage,
            words: (0..desc.size.div_ceil(4))
                .map(|_| AtomicU32::new(0))
                .collect(),
        })))
    }

    pub fn size(&self) -> u64 {
        self.0.size
    }

    pub fn usage(&self) -> BufferUsages {
        self.0.usage
    }

    /// The buffer's memory.
    pub(crate) fn words(&self) -> &[AtomicU32] {
        &self.0.words
    }

    /// Copies bytes out of the buffer (the range must be inside it).
    pub(crate) fn read_bytes(&self, offset: u64, out: &mut [u8]) {
        read_bytes(&self.0.words, offset, out);
    }

    /// Copies bytes into the buffer (the range must be inside it).
    pub(crate) fn write_bytes(&self, offset: u64, data: &[u8]) {
        write_bytes(&self.0.words, offset, data);
    }

    /// Reads the whole buffer (the buffer must have MAP_READ usage; submitted work is
    /// complete when `Queue::submit` returns).
    pub fn read(&self) -> Result<Vec<u8>, Error> {
        if !self.0.usage.contains(BufferUsages::MAP_READ) {
            return validation(format!(
                "buffer {:?} is read back but lacks MAP_READ usage",
                self.0.label
            ));
        }
        let mut out = vec![0; self.0.size as usize];
        self.read_bytes(0, &mut out);
        Ok(out)
    }

    pub(crate) fn same(&self, other: &Buffer) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Size of a texture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent3d {
    pub width: u32,
    pub height: u32,
    pub depth_or_array_layers: u32,
}

/// Creation parameters of a texture. This textures are 2D, one mip level, one layer.
#[derive(Clone, Debug)]
pub struct TextureDescriptor<'a> {
    pub label: Option<&'a str>,
    pub size: Extent3d,
    pub mip_level_count: u32,
    pub sample_count: u32,
    pub format: TextureFormat,
    pub usage: TextureUsages,
}

pub(crate) struct TextureInner {
    pub label: String,
    pub width: u32,
    pub height: u32,
    pub sample_count: u32,
    pub format: TextureFormat,
    pub usage: TextureUsages,
    pub data: RwLock<Vec<u8>>,
    /// Hierarchical-Z bounds of a depth texture (T7), kept beside its data like hardware's
    /// on-chip Hi-Z memory.
    pub hiz: Mutex<Option<HiZBuffer>>,
}

/// An image in device memory.
#[derive(Clone)]
pub struct Texture(pub(crate) Arc<TextureInner>);

impl std::fmt::Debug for Texture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = &self.0;
        write!(
            f,
            "Texture({:?}, {}×{} {:?} ×{})",
            t.label, t.width, t.height, t.format, t.sample_count
        )
    }
}

impl Texture {
    pub(crate) fn new(desc: &TextureDescriptor<'_>) -> Result<Texture, Error> {
        let s = desc.size;
        if s.width == 0 || s.height == 0 || s.depth_or_array_layers == 0 {
            return validation("texture size must not be zero");
        }
        if s.width > MAX_TEXTURE_DIMENSION || s.height > MAX_TEXTURE_DIMENSION {
            return validation(format!(
                "texture size {}×{} exceeds the limit of {MAX_TEXTURE_DIMENSION}",
                s.width, s.height
            ));
        }
        if s.depth_or_array_layers != 1 || desc.mip_level_count != 1 {
            return Err(Error::Unsupported(
                "texture arrays and mip chains (they arrive with the texture-units issue)".into(),
            ));
        }
        if !matches!(desc.sample_count, 1 | 4) {
            return validation(format!(
                "sample count {} (must be 1 or 4)",
                desc.sample_count
            ));
        }
        if desc.format.is_compressed() {
            return Err(Error::Unsupported(format!(
                "{:?} textures (compressed textures arrive with the texture units in the API)",
                desc.format
            )));
        }
        if desc.usage.contains(TextureUsages::RENDER_ATTACHMENT) {
            match rastra_pipeline::format::check_renderable(desc.format) {
                Ok(()) => {}
                Err(rastra_pipeline::format::Unrenderable::Never) => {
                    return validation(format!("{:?} cannot be a render attachment", desc.format));
                }
                Err(rastra_pipeline::format::Unrenderable::NotYet(what)) => {
                    return Err(Error::Unsupported(what.to_string()));
                }
            }
        }
        if desc.sample_count == 4 && !desc.usage.contains(TextureUsages::RENDER_ATTACHMENT) {
            return validation("multisampled textures need RENDER_ATTACHMENT usage");
        }
        if desc.usage.0 == 0 {
            return validation("texture usage must not be empty");
        }
        let bytes = s.width as u64
            * s.height as u64
            * desc.sample_count as u64
            * desc.format.texel_size() as u64;
        if bytes > MAX_ALLOCATION {
            return Err(Error::OutOfMemory(format!("texture of {bytes} bytes")));
        }
        Ok(Texture(Arc::new(TextureInner {
            label: desc.label.unwrap_or("").to_string(),
            width: s.width,
            height: s.height,
            sample_count: desc.sample_count,
            format: desc.format,
            usage: desc.usage,
            data: RwLock::new(vec![0; bytes as usize]),
            // Textures start zeroed, so a depth texture's bounds start "cleared to 0".
            hiz: Mutex::new(
                desc.format
                    .is_depth()
                    .then(|| HiZBuffer::new(s.width, s.height, 0.0)),
            ),
        })))
    }

    pub fn width(&self) -> u32 {
        self.0.width
    }

    pub fn height(&self) -> u32 {
        self.0.height
    }

    pub fn format(&self) -> TextureFormat {
        self.0.format
    }

    pub fn sample_count(&self) -> u32 {
        self.0.sample_count
    }

    pub fn usage(&self) -> TextureUsages {
        self.0.usage
    }

    /// A view of the whole texture.
    pub fn create_view(&self) -> TextureView {
        TextureView(self.clone())
    }

    pub(crate) fn write_lock(&self) -> RwLockWriteGuard<'_, Vec<u8>> {
        self.0.data.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The Hi-Z bounds (Some for depth formats).
    pub(crate) fn hiz_lock(&self) -> MutexGuard<'_, Option<HiZBuffer>> {
        self.0.hiz.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn read_lock(&self) -> RwLockReadGuard<'_, Vec<u8>> {
        self.0.data.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn same(&self, other: &Texture) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A view of a texture (this issue: always the whole texture).
#[derive(Clone, Debug)]
pub struct TextureView(pub(crate) Texture);

impl TextureView {
    pub fn texture(&self) -> &Texture {
        &self.0
    }
}
