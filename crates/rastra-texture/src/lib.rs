//! rastra's texture units (T4 "Texture samplers", issue 4): the three pieces of texture state
//! T4 names — the resource (`storage`: texture memory in a tiled layout), the view (`view`:
//! how the bits are interpreted) and the sampler state (`sampler`) — plus the texture unit
//! itself (`unit`), which turns a 2×2 quad's coordinates into four filtered results and reads
//! texels only through the modelled texel cache (`cache`, decoded texels in L1, raw memory in
//! L2). `format` knows every WebGPU texture format; `compressed` decodes block-compressed
//! formats (S3TC/BC, ETC2/EAC, ASTC) when a cache line is filled; `cube` is the cube-map face
//! selection and seam-crossing arithmetic (Vulkan §16.5.4).
//!
//! Modules are declared in the order a sample request flows: request → sampler state and
//! view → LOD and addressing (`unit`, `cube`) → texel cache (`cache`) → memory (`storage`)
//! → format decode (`format`, `compressed`). Outside the sample path, `mipmap` builds mip
//! chains from a level 0 (box filter in linear space), and `image` is the storage-texture
//! path: shader loads and stores by texel coordinates, no sampler or cache.
//!
//! **API boundary.** Descriptors (`TextureDesc`, `TextureViewDesc`, `SamplerDesc`) and copies
//! are validated here per the WebGPU rules and errors are values (`TextureError`); sampling
//! requests never panic: out-of-range coordinates, NaN and infinities have defined results.

pub mod cache;
pub mod compressed;
pub mod cpu;
pub mod cube;
pub mod format;
pub mod image;
pub mod sampler;
pub mod storage;
pub mod unit;
pub mod view;

pub mod mipmap;

pub use cache::{CacheConfig, L2Cache, L2Request, L2Sets, L2Share, L2Split, TexelCacheStats};
pub use format::{AstcBlock, AstcChannel, SampleType, TextureAspect, TextureFormat};
pub use image::{ImageLayout, StorageImage};
pub use sampler::{
    AddressMode, BorderColor, CompareFunction, FilterMode, MipBlend, Sampler, SamplerDesc,
};
pub use storage::{
    DataLayout, Limits, SurfaceLayout, Texture, TextureCopy, TextureDesc, TextureDimension,
    copy_texture_to_texture, morton8, tiled_element,
};
pub use unit::{Lod, Quad, QuadRun, TextureUnit};
pub use view::{TextureView, TextureViewDesc, TextureViewDimension};

/// Why a texture operation was refused. Each message names the rule that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextureError {
    /// A descriptor, view, sampler or copy breaks a WebGPU validation rule.
    Validation(String),
    /// A valid request rastra's texture units do not implement (named).
    Unsupported(String),
}

impl std::fmt::Display for TextureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextureError::Validation(m) => write!(f, "texture validation error: {m}"),
            TextureError::Unsupported(m) => write!(f, "unsupported texture feature: {m}"),
        }
    }
}

impl std::error::Error for TextureError {}

/// Shorthand for a validation error with a formatted message.
macro_rules! invalid {
    ($($arg:tt)*) => {
        Err($crate::TextureError::Validation(format!($($arg)*)))
    };
}
pub(crate) use invalid;
