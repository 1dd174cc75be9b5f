//! Buffers, and the usage flags of buffers and textures: device memory the pipeline reads
//! and writes (BRIEF "Memory"). A buffer is words of `AtomicU32` that every unit and the
//! API access directly (WebGPU's data races are then races on atomics, never undefined
//! behaviour). Textures are in `texture`.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use rastra_pipeline::memory::{read_bytes, write_bytes};

use crate::error::{Error, validation};

/// Largest buffer or texture allocation, in bytes.
pub(crate) const MAX_ALLOCATION: u64 = 1 << 32;

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
        QUERY_RESOLVE = 512,
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

    /// Host access to `offset..offset + out.len()`, for an API layer that maps buffers
    /// (it enforces the mapping rules; this only checks the range).
    pub fn host_read(&self, offset: u64, out: &mut [u8]) -> Result<(), Error> {
        self.check_host_range(offset, out.len())?;
        self.read_bytes(offset, out);
        Ok(())
    }

    /// Host writes to `offset..offset + data.len()`, for an API layer that maps buffers.
    pub fn host_write(&self, offset: u64, data: &[u8]) -> Result<(), Error> {
        self.check_host_range(offset, data.len())?;
        self.write_bytes(offset, data);
        Ok(())
    }

    fn check_host_range(&self, offset: u64, len: usize) -> Result<(), Error> {
        if offset
            .checked_add(len as u64)
            .is_none_or(|e| e > self.0.size)
        {
            return validation(format!(
                "host access {offset}+{len} exceeds the {}-byte buffer {:?}",
                self.0.size, self.0.label
            ));
        }
        Ok(())
    }

    pub(crate) fn same(&self, other: &Buffer) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
