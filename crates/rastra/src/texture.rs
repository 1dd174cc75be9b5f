//! Textures, texture views and samplers as the API exposes them (WebGPU `GPUTexture`,
//! `GPUTextureView`, `GPUSampler`; T4's resource / view / sampler-state split).
//!
//! A texture's memory is a `rastra_texture::Texture` (tiled layout, every format) behind a
//! lock the command processor takes for the work that uses it: shared while shaders sample
//! it, exclusive while it is a render attachment or a copy destination. Depth textures keep
//! hierarchical-Z bounds per 2D subresource (mip level × layer) beside their memory, like
//! hardware's on-chip Hi-Z memory.

use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use rastra_pipeline::hiz::HiZBuffer;
use rastra_texture::{MipBlend, TextureDesc, TextureError};

use crate::TextureFormat;
use crate::error::{Error, validation};
use crate::resource::TextureUsages;

pub use rastra_texture::{
    AddressMode, BorderColor, DataLayout as TexelCopyBufferLayout, FilterMode, TextureAspect,
    TextureDimension, TextureViewDimension,
};

impl From<TextureError> for Error {
    fn from(e: TextureError) -> Self {
        match e {
            TextureError::Validation(m) => Error::Validation(m),
            TextureError::Unsupported(m) => Error::Unsupported(m),
        }
    }
}

/// Size of a texture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent3d {
    pub width: u32,
    pub height: u32,
    pub depth_or_array_layers: u32,
}

impl Extent3d {
    fn array(self) -> [u32; 3] {
        [self.width, self.height, self.depth_or_array_layers]
    }
}

/// Creation parameters of a texture (WebGPU `GPUTextureDescriptor`; any view may use the
/// texture's format or its sRGB sibling, so there is no `view_formats` list).
#[derive(Clone, Debug)]
pub struct TextureDescriptor<'a> {
    pub label: Option<&'a str>,
    pub size: Extent3d,
    pub mip_level_count: u32,
    pub sample_count: u32,
    pub dimension: TextureDimension,
    pub format: TextureFormat,
    pub usage: TextureUsages,
}

pub(crate) struct TextureInner {
    pub label: String,
    pub usage: TextureUsages,
    pub desc: TextureDesc,
    pub memory: RwLock<rastra_texture::Texture>,
    /// Hi-Z bounds of a depth texture, one per (mip level, layer), created on first use as
    /// an attachment.
    pub hiz: Mutex<Vec<Option<HiZBuffer>>>,
}

/// An image in device memory.
#[derive(Clone)]
pub struct Texture(pub(crate) Arc<TextureInner>);

impl std::fmt::Debug for Texture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = &self.0.desc;
        write!(
            f,
            "Texture({:?}, {:?} {:?} {:?}, {} mips ×{})",
            self.0.label, d.dimension, d.size, d.format, d.mip_level_count, d.sample_count
        )
    }
}

impl Texture {
    /// A texture of `desc` in the memory region `next_region` names, which it advances.
    pub(crate) fn new(
        desc: &TextureDescriptor<'_>,
        next_region: &std::sync::atomic::AtomicU64,
    ) -> Result<Texture, Error> {
        if desc.usage.0 == 0 {
            return validation("texture usage must not be empty");
        }
        let d = TextureDesc {
            dimension: desc.dimension,
            size: desc.size.array(),
            mip_level_count: desc.mip_level_count,
            sample_count: desc.sample_count,
            format: desc.format,
        };
        if desc.usage.contains(TextureUsages::RENDER_ATTACHMENT) {
            if desc.dimension != TextureDimension::D2 {
                return Err(Error::Unsupported(format!(
                    "render attachments of {:?} textures",
                    desc.dimension
                )));
            }
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
        if desc.sample_count > 1 && !desc.usage.contains(TextureUsages::RENDER_ATTACHMENT) {
            return validation("multisampled textures need RENDER_ATTACHMENT usage");
        }
        if desc.usage.contains(TextureUsages::STORAGE_BINDING)
            && (!desc.format.is_storage_format() || desc.sample_count > 1)
        {
            return validation(format!(
                "{:?}{} cannot have STORAGE_BINDING usage",
                desc.format,
                if desc.sample_count > 1 {
                    " with multisampling"
                } else {
                    ""
                }
            ));
        }
        let mut memory = rastra_texture::Texture::new(d)?;
        memory.place_in_region(next_region.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let subresources = (d.mip_level_count * d.array_layers()) as usize;
        Ok(Texture(Arc::new(TextureInner {
            label: desc.label.unwrap_or("").to_string(),
            usage: desc.usage,
            desc: d,
            memory: RwLock::new(memory),
            hiz: Mutex::new((0..subresources).map(|_| None).collect()),
        })))
    }

    /// Width of mip level 0.
    pub fn width(&self) -> u32 {
        self.0.desc.size[0]
    }

    /// Height of mip level 0.
    pub fn height(&self) -> u32 {
        self.0.desc.size[1]
    }

    /// Depth (3D) or array layers (1D/2D).
    pub fn depth_or_array_layers(&self) -> u32 {
        self.0.desc.size[2]
    }

    pub fn mip_level_count(&self) -> u32 {
        self.0.desc.mip_level_count
    }

    pub fn dimension(&self) -> TextureDimension {
        self.0.desc.dimension
    }

    pub fn format(&self) -> TextureFormat {
        self.0.desc.format
    }

    pub fn sample_count(&self) -> u32 {
        self.0.desc.sample_count
    }

    pub fn usage(&self) -> TextureUsages {
        self.0.usage
    }

    /// Size of mip `level`: width, height, depth (3D) or layers.
    pub fn mip_size(&self, level: u32) -> [u32; 3] {
        self.0.desc.mip_size(level)
    }

    /// The default view: the whole texture, its format, its natural dimension.
    pub fn create_view(&self) -> TextureView {
        self.create_view_with(&TextureViewDescriptor::default())
            .expect("the default view of a valid texture is valid")
    }

    /// A view of a subset of the texture, maybe in its sRGB sibling format or another
    /// dimension (a 2D array as cubes).
    pub fn create_view_with(&self, desc: &TextureViewDescriptor) -> Result<TextureView, Error> {
        let view = rastra_texture::TextureView::new(
            &self.read_lock(),
            &rastra_texture::TextureViewDesc {
                format: desc.format,
                dimension: desc.dimension,
                aspect: desc.aspect,
                base_mip_level: desc.base_mip_level,
                mip_level_count: desc.mip_level_count,
                base_array_layer: desc.base_array_layer,
                array_layer_count: desc.array_layer_count,
            },
        )?;
        Ok(TextureView {
            texture: self.clone(),
            view,
        })
    }

    pub(crate) fn write_lock(&self) -> RwLockWriteGuard<'_, rastra_texture::Texture> {
        self.0.memory.write().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn read_lock(&self) -> RwLockReadGuard<'_, rastra_texture::Texture> {
        self.0.memory.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The Hi-Z bounds of every subresource.
    pub(crate) fn hiz_lock(&self) -> MutexGuard<'_, Vec<Option<HiZBuffer>>> {
        self.0.hiz.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Index of subresource (level, layer) in the Hi-Z list.
    pub(crate) fn subresource(&self, level: u32, layer: u32) -> usize {
        (level * self.0.desc.array_layers() + layer) as usize
    }

    /// Forgets the Hi-Z bounds of every subresource (after a copy or upload wrote depth):
    /// bounds not created yet are created disabled, since the memory is no longer the
    /// zeros a fresh texture starts with.
    pub(crate) fn invalidate_hiz(&self) {
        if !self.format().is_depth() {
            return;
        }
        let layers = self.0.desc.array_layers().max(1);
        for (i, h) in self.hiz_lock().iter_mut().enumerate() {
            let [w, hgt, _] = self.mip_size(i as u32 / layers);
            h.get_or_insert_with(|| HiZBuffer::new(w, hgt, 0.0))
                .invalidate();
        }
    }

    pub(crate) fn same(&self, other: &Texture) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Creation parameters of a view (WebGPU `GPUTextureViewDescriptor`); `None` takes the
/// texture's format, its natural dimension, and all remaining mips / layers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextureViewDescriptor {
    pub format: Option<TextureFormat>,
    pub dimension: Option<TextureViewDimension>,
    pub aspect: TextureAspect,
    pub base_mip_level: u32,
    pub mip_level_count: Option<u32>,
    pub base_array_layer: u32,
    pub array_layer_count: Option<u32>,
}

/// A view of a texture: which mips, layers, format and dimension shaders or a render pass
/// see.
#[derive(Clone, Debug)]
pub struct TextureView {
    pub(crate) texture: Texture,
    pub(crate) view: rastra_texture::TextureView,
}

impl TextureView {
    pub fn texture(&self) -> &Texture {
        &self.texture
    }

    pub fn format(&self) -> TextureFormat {
        self.view.format
    }

    pub fn dimension(&self) -> TextureViewDimension {
        self.view.dimension
    }

    pub fn base_mip_level(&self) -> u32 {
        self.view.base_mip_level
    }

    pub fn mip_level_count(&self) -> u32 {
        self.view.mip_level_count
    }

    pub fn base_array_layer(&self) -> u32 {
        self.view.base_array_layer
    }

    /// Width and height of the view's first mip level.
    pub fn size(&self) -> (u32, u32) {
        let [w, h, _] = self.texture.mip_size(self.view.base_mip_level);
        (w, h)
    }

    /// Whether the view includes subresource (`level`, `layer`) of its texture.
    pub(crate) fn covers(&self, level: u32, layer: u32) -> bool {
        let v = &self.view;
        (v.base_mip_level..v.base_mip_level + v.mip_level_count).contains(&level)
            && (v.base_array_layer..v.base_array_layer + v.array_layer_count).contains(&layer)
    }

    /// Whether the view can be a render attachment: one mip level, one layer, 2D.
    pub(crate) fn check_attachment(&self, what: &str) -> Result<(), Error> {
        let v = &self.view;
        if v.mip_level_count != 1 || v.array_layer_count != 1 {
            return validation(format!(
                "{what}: an attachment view must have one mip level and one layer \
                 ({} and {} given)",
                v.mip_level_count, v.array_layer_count
            ));
        }
        if !matches!(
            v.dimension,
            TextureViewDimension::D2 | TextureViewDimension::D2Array
        ) {
            return validation(format!(
                "{what}: a {:?} view cannot be attached",
                v.dimension
            ));
        }
        if v.format != self.texture.format() {
            return Err(Error::Unsupported(format!(
                "{what}: rendering through a view in another format ({:?} of a {:?} texture)",
                v.format,
                self.texture.format()
            )));
        }
        Ok(())
    }
}

/// Creation parameters of a sampler (WebGPU `GPUSamplerDescriptor`; `border_color` is the
/// clamp-to-border colour of Vulkan and wgpu).
pub type SamplerDescriptor = rastra_texture::SamplerDesc;

/// Sampler state: filters, address modes, LOD clamp, comparison, anisotropy.
#[derive(Clone, Debug)]
pub struct Sampler(pub(crate) Arc<rastra_texture::Sampler>);

impl Sampler {
    pub(crate) fn new(desc: &SamplerDescriptor, blend: MipBlend) -> Result<Sampler, Error> {
        Ok(Sampler(Arc::new(rastra_texture::Sampler::with_mip_blend(
            *desc, blend,
        )?)))
    }

    pub fn desc(&self) -> &SamplerDescriptor {
        self.0.desc()
    }
}

/// Where a copy reads or writes a texture (WebGPU `GPUTexelCopyTextureInfo`).
#[derive(Clone, Debug)]
pub struct TexelCopyTextureInfo<'a> {
    pub texture: &'a Texture,
    pub mip_level: u32,
    /// x, y, and z = array layer or 3D slice.
    pub origin: [u32; 3],
    pub aspect: TextureAspect,
}

impl TexelCopyTextureInfo<'_> {
    /// Mip level 0 at the origin, all aspects.
    pub fn whole(texture: &Texture) -> TexelCopyTextureInfo<'_> {
        TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: [0; 3],
            aspect: TextureAspect::All,
        }
    }

    pub(crate) fn at(&self) -> rastra_texture::TextureCopy {
        rastra_texture::TextureCopy {
            mip_level: self.mip_level,
            origin: self.origin,
            aspect: self.aspect,
        }
    }
}

/// The size of a copy: width, height, depth or layers.
pub(crate) fn copy_size(e: Extent3d) -> [u32; 3] {
    e.array()
}

/// Which way texels move in a copy between a texture and a buffer (or host memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CopyDirection {
    IntoTexture,
    OutOfTexture,
}

/// WebGPU's depth/stencil rules for copies between a texture and a buffer: the copy names
/// one aspect (a combined format needs `DepthOnly` or `StencilOnly`); stencil aspects copy
/// both ways; the depth aspect of `depth16unorm` both ways, of `depth32float` only out of the
/// texture, of `depth24plus` never (its bits are the implementation's).
pub(crate) fn check_depth_stencil_copy(
    format: TextureFormat,
    aspect: TextureAspect,
    direction: CopyDirection,
) -> Result<(), Error> {
    if !format.is_depth_stencil() {
        return Ok(());
    }
    let combined = format.is_depth() && format.has_stencil();
    let depth = match aspect {
        TextureAspect::All if combined => {
            return validation(format!(
                "a buffer copy of {format:?} must name one aspect (DepthOnly or StencilOnly)"
            ));
        }
        TextureAspect::All => format.is_depth(),
        TextureAspect::DepthOnly => true,
        TextureAspect::StencilOnly => false,
    };
    if !depth {
        return Ok(());
    }
    let allowed = match format {
        TextureFormat::Depth16Unorm => true,
        TextureFormat::Depth32Float | TextureFormat::Depth32FloatStencil8 => {
            direction == CopyDirection::OutOfTexture
        }
        _ => false,
    };
    if allowed {
        Ok(())
    } else {
        let way = match direction {
            CopyDirection::IntoTexture => "into",
            CopyDirection::OutOfTexture => "out of",
        };
        validation(format!(
            "the depth aspect of {format:?} cannot be copied {way} a texture from or to a \
             buffer (WebGPU allows depth16unorm both ways and depth32float out only)"
        ))
    }
}
