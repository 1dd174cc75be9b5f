//! Every WebGPU texture format (`GPUTextureFormat`, plus the 16-bit unorm/snorm formats of
//! `texture-formats-tier1`): its block shape, components, sample type and aspects, and the
//! conversions the texture unit's cache-fill path applies (T4: "you can handle most of the
//! differences between the >50 different texture formats … in your cache fill path").
//!
//! Decoding produces what the shader core's registers hold: `f32` for float-typed formats
//! (unorm, snorm, sRGB — converted to linear here — half, float, packed floats, depth) and
//! 32-bit integers for uint/sint formats. Encoding (uncompressed formats only) follows the
//! Vulkan rules (§3.9 "Fixed-Point Data Conversions", §3.10 packed floats): NaN → 0 for
//! normalised formats, clamp to the representable range, round to nearest (ties to even for
//! floats); integers saturate. Compressed formats are decoded a block at a time in
//! `compressed`.
//!
//! The first sixteen variant names and the methods `texel_size`, `is_depth`, `has_stencil`,
//! `is_srgb`, `components`, `encode_color`, `decode_color`, `quantize_depth`, `encode_depth`,
//! `decode_depth`, `encode_stencil` match `rastra-pipeline`'s render-target format so it can
//! switch to this type mechanically.

mod byte;
pub use byte::*;

use half::f16;

use crate::TextureError;

/// ASTC block footprints (texels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AstcBlock {
    B4x4,
    B5x4,
    B5x5,
    B6x5,
    B6x6,
    B8x5,
    B8x6,
    B8x8,
    B10x5,
    B10x6,
    B10x8,
    B10x10,
    B12x10,
    B12x12,
}

impl AstcBlock {
    /// Every ASTC footprint WebGPU has.
    pub const ALL: [AstcBlock; 14] = [
        AstcBlock::B4x4,
        AstcBlock::B5x4,
        AstcBlock::B5x5,
        AstcBlock::B6x5,
        AstcBlock::B6x6,
        AstcBlock::B8x5,
        AstcBlock::B8x6,
        AstcBlock::B8x8,
        AstcBlock::B10x5,
        AstcBlock::B10x6,
        AstcBlock::B10x8,
        AstcBlock::B10x10,
        AstcBlock::B12x10,
        AstcBlock::B12x12,
    ];

    /// Width and height of the footprint in texels.
    pub const fn dims(self) -> (u32, u32) {
        use AstcBlock::*;
        match self {
            B4x4 => (4, 4),
            B5x4 => (5, 4),
            B5x5 => (5, 5),
            B6x5 => (6, 5),
            B6x6 => (6, 6),
            B8x5 => (8, 5),
            B8x6 => (8, 6),
            B8x8 => (8, 8),
            B10x5 => (10, 5),
            B10x6 => (10, 6),
            B10x8 => (10, 8),
            B10x10 => (10, 10),
            B12x10 => (12, 10),
            B12x12 => (12, 12),
        }
    }
}

/// How an ASTC texture's decoded values are interpreted (WebGPU has LDR unorm and sRGB).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AstcChannel {
    Unorm,
    UnormSrgb,
}

/// Formats a texture can have. Names and meaning follow WebGPU's `GPUTextureFormat` (wgpu's
/// spelling).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureFormat {
    // The render-target formats rastra-pipeline already has, in its order.
    R8Unorm,
    Rg8Unorm,
    Rgba8Unorm,
    Rgba8UnormSrgb,
    Bgra8Unorm,
    Bgra8UnormSrgb,
    R16Float,
    Rg16Float,
    Rgba16Float,
    R32Float,
    Rg32Float,
    Rgba32Float,
    Depth16Unorm,
    Depth24Plus,
    Depth24PlusStencil8,
    Depth32Float,
    // 8-bit per channel.
    R8Snorm,
    R8Uint,
    R8Sint,
    Rg8Snorm,
    Rg8Uint,
    Rg8Sint,
    Rgba8Snorm,
    Rgba8Uint,
    Rgba8Sint,
    // 16-bit per channel.
    R16Uint,
    R16Sint,
    R16Unorm,
    R16Snorm,
    Rg16Uint,
    Rg16Sint,
    Rg16Unorm,
    Rg16Snorm,
    Rgba16Uint,
    Rgba16Sint,
    Rgba16Unorm,
    Rgba16Snorm,
    // 32-bit per channel.
    R32Uint,
    R32Sint,
    Rg32Uint,
    Rg32Sint,
    Rgba32Uint,
    Rgba32Sint,
    // Packed.
    Rgb9e5Ufloat,
    Rgb10a2Uint,
    Rgb10a2Unorm,
    Rg11b10Ufloat,
    // Depth and stencil.
    Stencil8,
    Depth32FloatStencil8,
    // S3TC / BC (4×4 blocks).
    Bc1RgbaUnorm,
    Bc1RgbaUnormSrgb,
    Bc2RgbaUnorm,
    Bc2RgbaUnormSrgb,
    Bc3RgbaUnorm,
    Bc3RgbaUnormSrgb,
    Bc4RUnorm,
    Bc4RSnorm,
    Bc5RgUnorm,
    Bc5RgSnorm,
    Bc6hRgbUfloat,
    Bc6hRgbFloat,
    Bc7RgbaUnorm,
    Bc7RgbaUnormSrgb,
    // ETC2 / EAC (4×4 blocks).
    Etc2Rgb8Unorm,
    Etc2Rgb8UnormSrgb,
    Etc2Rgb8A1Unorm,
    Etc2Rgb8A1UnormSrgb,
    Etc2Rgba8Unorm,
    Etc2Rgba8UnormSrgb,
    EacR11Unorm,
    EacR11Snorm,
    EacRg11Unorm,
    EacRg11Snorm,
    // ASTC (LDR).
    Astc {
        block: AstcBlock,
        channel: AstcChannel,
    },
}

/// What a shader reads from a format (WebGPU's `GPUTextureSampleType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SampleType {
    /// Filterable float (unorm, snorm, sRGB, half, packed floats, compressed).
    Float,
    /// 32-bit float: float, but not filterable without `float32-filterable`.
    UnfilterableFloat,
    Uint,
    Sint,
    Depth,
}

/// Which aspect of a depth-stencil format an operation addresses (WebGPU `GPUTextureAspect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TextureAspect {
    #[default]
    All,
    DepthOnly,
    StencilOnly,
}

/// Per-channel storage of the plain (one value per channel) formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ch {
    Unorm8,
    Snorm8,
    Uint8,
    Sint8,
    Unorm16,
    Snorm16,
    Uint16,
    Sint16,
    Float16,
    Uint32,
    Sint32,
    Float32,
}

impl Ch {
    const fn bytes(self) -> usize {
        use Ch::*;
        match self {
            Unorm8 | Snorm8 | Uint8 | Sint8 => 1,
            Unorm16 | Snorm16 | Uint16 | Sint16 | Float16 => 2,
            Uint32 | Sint32 | Float32 => 4,
        }
    }
}

/// How a format's texel is laid out in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Enc {
    /// `n` channels of `ch`, stored R, G, B, A (or B, G, R, A when `bgra`).
    Plain {
        ch: Ch,
        n: usize,
        bgra: bool,
    },
    Rgb9e5,
    Rgb10a2Unorm,
    Rgb10a2Uint,
    Rg11b10,
    /// 16-bit unorm depth.
    D16,
    /// 24-bit unorm depth in bytes 0..3 (byte 3 unused, or stencil for `D24S8`).
    D24,
    D24S8,
    D32F,
    /// f32 depth, stencil in byte 4, bytes 5..8 padding.
    D32FS8,
    S8,
    Compressed,
}

impl TextureFormat {
    /// Every format, uncompressed first, then BC, ETC2/EAC and each ASTC footprint in unorm
    /// and sRGB.
    pub fn all() -> Vec<TextureFormat> {
        use TextureFormat::*;
        let mut v = vec![
            R8Unorm,
            Rg8Unorm,
            Rgba8Unorm,
            Rgba8UnormSrgb,
            Bgra8Unorm,
            Bgra8UnormSrgb,
            R16Float,
            Rg16Float,
            Rgba16Float,
            R32Float,
            Rg32Float,
            Rgba32Float,
            Depth16Unorm,
            Depth24Plus,
            Depth24PlusStencil8,
            Depth32Float,
            R8Snorm,
            R8Uint,
            R8Sint,
            Rg8Snorm,
            Rg8Uint,
            Rg8Sint,
            Rgba8Snorm,
            Rgba8Uint,
            Rgba8Sint,
            R16Uint,
            R16Sint,
            R16Unorm,
            R16Snorm,
            Rg16Uint,
            Rg16Sint,
            Rg16Unorm,
            Rg16Snorm,
            Rgba16Uint,
            Rgba16Sint,
            Rgba16Unorm,
            Rgba16Snorm,
            R32Uint,
            R32Sint,
            Rg32Uint,
            Rg32Sint,
            Rgba32Uint,
            Rgba32Sint,
            Rgb9e5Ufloat,
            Rgb10a2Uint,
            Rgb10a2Unorm,
            Rg11b10Ufloat,
            Stencil8,
            Depth32FloatStencil8,
            Bc1RgbaUnorm,
            Bc1RgbaUnormSrgb,
            Bc2RgbaUnorm,
            Bc2RgbaUnormSrgb,
            Bc3RgbaUnorm,
            Bc3RgbaUnormSrgb,
            Bc4RUnorm,
            Bc4RSnorm,
            Bc5RgUnorm,
            Bc5RgSnorm,
            Bc6hRgbUfloat,
            Bc6hRgbFloat,
            Bc7RgbaUnorm,
            Bc7RgbaUnormSrgb,
            Etc2Rgb8Unorm,
            Etc2Rgb8UnormSrgb,
            Etc2Rgb8A1Unorm,
            Etc2Rgb8A1UnormSrgb,
            Etc2Rgba8Unorm,
            Etc2Rgba8UnormSrgb,
            EacR11Unorm,
            EacR11Snorm,
            EacRg11Unorm,
            EacRg11Snorm,
        ];
        for block in AstcBlock::ALL {
            for channel in [AstcChannel::Unorm, AstcChannel::UnormSrgb] {
                v.push(Astc { block, channel });
            }
        }
        v
    }

    fn enc(self) -> Enc {
        use Ch::*;
        use TextureFormat::*;
        let p = |ch, n| Enc::Plain { ch, n, bgra: false };
        match self {
            R8Unorm => p(Unorm8, 1),
            Rg8Unorm => p(Unorm8, 2),
            Rgba8Unorm | Rgba8UnormSrgb => p(Unorm8, 4),
            Bgra8Unorm | Bgra8UnormSrgb => Enc::Plain {
                ch: Unorm8,
                n: 4,
                bgra: true,
            },
            R16Float => p(Float16, 1),
            Rg16Float => p(Float16, 2),
            Rgba16Float => p(Float16, 4),
            R32Float => p(Float32, 1),
            Rg32Float => p(Float32, 2),
            Rgba32Float => p(Float32, 4),
            Depth16Unorm => Enc::D16,
            Depth24Plus => Enc::D24,
            Depth24PlusStencil8 => Enc::D24S8,
            Depth32Float => Enc::D32F,
            R8Snorm => p(Snorm8, 1),
            R8Uint => p(Uint8, 1),
            R8Sint => p(Sint8, 1),
            Rg8Snorm => p(Snorm8, 2),
            Rg8Uint => p(Uint8, 2),
            Rg8Sint => p(Sint8, 2),
            Rgba8Snorm => p(Snorm8, 4),
            Rgba8Uint => p(Uint8, 4),
            Rgba8Sint => p(Sint8, 4),
            R16Uint => p(Uint16, 1),
            R16Sint => p(Sint16, 1),
            R16Unorm => p(Unorm16, 1),
            R16Snorm => p(Snorm16, 1),
            Rg16Uint => p(Uint16, 2),
            Rg16Sint => p(Sint16, 2),
            Rg16Unorm => p(Unorm16, 2),
            Rg16Snorm => p(Snorm16, 2),
            Rgba16Uint => p(Uint16, 4),
            Rgba16Sint => p(Sint16, 4),
            Rgba16Unorm => p(Unorm16, 4),
            Rgba16Snorm => p(Snorm16, 4),
            R32Uint => p(Uint32, 1),
            R32Sint => p(Sint32, 1),
            Rg32Uint => p(Uint32, 2),
            Rg32Sint => p(Sint32, 2),
            Rgba32Uint => p(Uint32, 4),
            Rgba32Sint => p(Sint32, 4),
            Rgb9e5Ufloat => Enc::Rgb9e5,
            Rgb10a2Uint => Enc::Rgb10a2Uint,
            Rgb10a2Unorm => Enc::Rgb10a2Unorm,
            Rg11b10Ufloat => Enc::Rg11b10,
            Stencil8 => Enc::S8,
            Depth32FloatStencil8 => Enc::D32FS8,
            _ => Enc::Compressed,
        }
    }

    /// Width and height in texels of one block (1×1 for uncompressed formats).
    pub fn block_dims(self) -> (u32, u32) {
        match self {
            TextureFormat::Astc { block, .. } => block.dims(),
            f if f.is_compressed() => (4, 4),
            _ => (1, 1),
        }
    }

    /// Bytes one block occupies (one texel for uncompressed formats; one sample of it).
    pub fn block_size(self) -> usize {
        use TextureFormat::*;
        match self.enc() {
            Enc::Plain { ch, n, .. } => ch.bytes() * n,
            Enc::Rgb9e5 | Enc::Rgb10a2Unorm | Enc::Rgb10a2Uint | Enc::Rg11b10 => 4,
            Enc::D16 => 2,
            Enc::D24 | Enc::D24S8 | Enc::D32F => 4,
            Enc::D32FS8 => 8,
            Enc::S8 => 1,
            Enc::Compressed => match self {
                Bc1RgbaUnorm | Bc1RgbaUnormSrgb | Bc4RUnorm | Bc4RSnorm | Etc2Rgb8Unorm
                | Etc2Rgb8UnormSrgb | Etc2Rgb8A1Unorm | Etc2Rgb8A1UnormSrgb | EacR11Unorm
                | EacR11Snorm => 8,
                _ => 16,
            },
        }
    }

    /// Bytes one texel (one sample) occupies; for compressed formats, one block.
    pub fn texel_size(self) -> usize {
        self.block_size()
    }

    /// True for block-compressed formats (BC, ETC2/EAC, ASTC).
    pub fn is_compressed(self) -> bool {
        self.enc() == Enc::Compressed
    }

    /// True for the BC (S3TC/BPTC/RGTC) family.
    pub fn is_bc(self) -> bool {
        use TextureFormat::*;
        matches!(
            self,
            Bc1RgbaUnorm
                | Bc1RgbaUnormSrgb
                | Bc2RgbaUnorm
                | Bc2RgbaUnormSrgb
                | Bc3RgbaUnorm
                | Bc3RgbaUnormSrgb
                | Bc4RUnorm
                | Bc4RSnorm
                | Bc5RgUnorm
                | Bc5RgSnorm
                | Bc6hRgbUfloat
                | Bc6hRgbFloat
                | Bc7RgbaUnorm
                | Bc7RgbaUnormSrgb
        )
    }

    /// True for ASTC formats.
    pub fn is_astc(self) -> bool {
        matches!(self, TextureFormat::Astc { .. })
    }

    /// True for ETC2 and EAC formats.
    pub fn is_etc2(self) -> bool {
        self.is_compressed() && !self.is_bc() && !self.is_astc()
    }

    /// True for formats with a depth aspect.
    pub fn is_depth(self) -> bool {
        matches!(
            self.enc(),
            Enc::D16 | Enc::D24 | Enc::D24S8 | Enc::D32F | Enc::D32FS8
        )
    }

    /// True for formats with a stencil aspect.
    pub fn has_stencil(self) -> bool {
        matches!(self.enc(), Enc::D24S8 | Enc::D32FS8 | Enc::S8)
    }

    /// True for depth and/or stencil formats.
    pub fn is_depth_stencil(self) -> bool {
        self.is_depth() || self.has_stencil()
    }

    /// True when the aspect exists in this format (`All` always does).
    pub fn has_aspect(self, aspect: TextureAspect) -> bool {
        match aspect {
            TextureAspect::All => true,
            TextureAspect::DepthOnly => self.is_depth(),
            TextureAspect::StencilOnly => self.has_stencil(),
        }
    }

    /// True when the format stores sRGB-encoded colour (decoded to linear on read, encoded
    /// on write; filtering and blending happen in linear space).
    pub fn is_srgb(self) -> bool {
        use TextureFormat::*;
        matches!(
            self,
            Rgba8UnormSrgb
                | Bgra8UnormSrgb
                | Bc1RgbaUnormSrgb
                | Bc2RgbaUnormSrgb
                | Bc3RgbaUnormSrgb
                | Bc7RgbaUnormSrgb
                | Etc2Rgb8UnormSrgb
                | Etc2Rgb8A1UnormSrgb
                | Etc2Rgba8UnormSrgb
                | Astc {
                    channel: AstcChannel::UnormSrgb,
                    ..
                }
        )
    }

    /// The sRGB or non-sRGB sibling (the other view format of the same bits), if any.
    pub fn srgb_sibling(self) -> Option<TextureFormat> {
        use TextureFormat::*;
        let pairs = [
            (Rgba8Unorm, Rgba8UnormSrgb),
            (Bgra8Unorm, Bgra8UnormSrgb),
            (Bc1RgbaUnorm, Bc1RgbaUnormSrgb),
            (Bc2RgbaUnorm, Bc2RgbaUnormSrgb),
            (Bc3RgbaUnorm, Bc3RgbaUnormSrgb),
            (Bc7RgbaUnorm, Bc7RgbaUnormSrgb),
            (Etc2Rgb8Unorm, Etc2Rgb8UnormSrgb),
            (Etc2Rgb8A1Unorm, Etc2Rgb8A1UnormSrgb),
            (Etc2Rgba8Unorm, Etc2Rgba8UnormSrgb),
        ];
        if let Astc { block, channel } = self {
            let channel = match channel {
                AstcChannel::Unorm => AstcChannel::UnormSrgb,
                AstcChannel::UnormSrgb => AstcChannel::Unorm,
            };
            return Some(Astc { block, channel });
        }
        pairs.iter().find_map(|&(a, b)| {
            if a == self {
                Some(b)
            } else if b == self {
                Some(a)
            } else {
                None
            }
        })
    }

    /// Colour components the format stores (1–4); depth and stencil formats report 1.
    pub fn components(self) -> usize {
        use TextureFormat::*;
        match self.enc() {
            Enc::Plain { n, .. } => n,
            Enc::Rgb9e5 | Enc::Rg11b10 => 3,
            Enc::Rgb10a2Unorm | Enc::Rgb10a2Uint => 4,
            Enc::D16 | Enc::D24 | Enc::D24S8 | Enc::D32F | Enc::D32FS8 | Enc::S8 => 1,
            Enc::Compressed => match self {
                Bc4RUnorm | Bc4RSnorm | EacR11Unorm | EacR11Snorm => 1,
                Bc5RgUnorm | Bc5RgSnorm | EacRg11Unorm | EacRg11Snorm => 2,
                Bc6hRgbUfloat | Bc6hRgbFloat | Etc2Rgb8Unorm | Etc2Rgb8UnormSrgb => 3,
                _ => 4,
            },
        }
    }

    /// What a shader reads from the `All` aspect (depth for depth formats, uint for
    /// stencil8). Use `sample_type_of` for a single aspect.
    pub fn sample_type(self) -> SampleType {
        self.sample_type_of(TextureAspect::All)
    }

    /// What a shader reads from `aspect` of this format.
    pub fn sample_type_of(self, aspect: TextureAspect) -> SampleType {
        use Ch::*;
        match (self.enc(), aspect) {
            (Enc::S8, _) | (Enc::D24S8 | Enc::D32FS8, TextureAspect::StencilOnly) => {
                SampleType::Uint
            }
            (Enc::D16 | Enc::D24 | Enc::D24S8 | Enc::D32F | Enc::D32FS8, _) => SampleType::Depth,
            (Enc::Plain { ch, .. }, _) => match ch {
                Uint8 | Uint16 | Uint32 => SampleType::Uint,
                Sint8 | Sint16 | Sint32 => SampleType::Sint,
                Float32 => SampleType::UnfilterableFloat,
                _ => SampleType::Float,
            },
            (Enc::Rgb10a2Uint, _) => SampleType::Uint,
            _ => SampleType::Float,
        }
    }

    /// True for uint and sint formats (their texels are integers, never filtered).
    pub fn is_integer(self) -> bool {
        matches!(self.sample_type(), SampleType::Uint | SampleType::Sint)
    }

    /// True when the format can be blended as a render target.
    pub fn is_blendable(self) -> bool {
        self.sample_type() == SampleType::Float && !self.is_compressed()
    }

    /// Whether shaders may load and store the format as a storage texture (WebGPU's core
    /// storage texel formats).
    pub fn is_storage_format(self) -> bool {
        use TextureFormat as F;
        matches!(
            self,
            F::Rgba8Unorm
                | F::Rgba8Snorm
                | F::Rgba8Uint
                | F::Rgba8Sint
                | F::Rgba16Uint
                | F::Rgba16Sint
                | F::Rgba16Float
                | F::R32Uint
                | F::R32Sint
                | F::R32Float
                | F::Rg32Uint
                | F::Rg32Sint
                | F::Rg32Float
                | F::Rgba32Uint
                | F::Rgba32Sint
                | F::Rgba32Float
        )
    }

    /// Whether one binding may both load and store the format (`read_write` access).
    pub fn is_read_write_storage_format(self) -> bool {
        use TextureFormat as F;
        matches!(self, F::R32Uint | F::R32Sint | F::R32Float)
    }

    /// True when the format can be a multisampled texture (renderable colour and depth
    /// formats, except the 64- and 128-bit ones and rgb9e5).
    pub fn supports_multisample(self) -> bool {
        use TextureFormat::*;
        !self.is_compressed()
            && !matches!(
                self,
                Rgb9e5Ufloat
                    | Rg32Float
                    | Rg32Uint
                    | Rg32Sint
                    | Rgba32Float
                    | Rgba32Uint
                    | Rgba32Sint
                    | R8Snorm
                    | Rg8Snorm
                    | Rgba8Snorm
            )
    }

    // ---- decoding -------------------------------------------------------------------

    /// Reads an uncompressed texel as what a shader register holds, as 32-bit patterns:
    /// `f32` bits for float and depth sample types, integers for uint/sint (sint in two's
    /// complement). Missing components read 0, alpha 1. `aspect` picks depth or stencil of a
    /// combined format (`All` reads depth). Compressed formats and short slices read zero.
    pub fn decode_bits(self, aspect: TextureAspect, t: &[u8]) -> [u32; 4] {
        match self.sample_type_of(aspect) {
            SampleType::Uint | SampleType::Sint => self.decode_int(aspect, t),
            _ => self.decode_float(t).map(f32::to_bits),
        }
    }

    /// Reads a texel of a float-typed (or depth) format as linear RGBA; sRGB is decoded to
    /// linear. Integer formats return their values converted to float. Missing components
    /// read as 0, alpha as 1; depth formats return `[d, 0, 0, 1]`.
    pub fn decode_float(self, t: &[u8]) -> [f32; 4] {
        let Some(t) = t.get(..self.block_size()) else {
            return [0.0; 4];
        };
        match self.enc() {
            Enc::Plain { ch, n, bgra } => {
                let mut c = [0.0, 0.0, 0.0, 1.0];
                let srgb = self.is_srgb();
                for (i, v) in c.iter_mut().enumerate().take(n) {
                    let at = if bgra && i < 3 { 2 - i } else { i };
                    *v = decode_channel_f32(ch, t, at);
                    if srgb && i < 3 {
                        *v = srgb_to_linear8(t[at]);
                    }
                }
                c
            }
            Enc::Rgb9e5 => decode_rgb9e5(u32le(t, 0)),
            Enc::Rgb10a2Unorm => {
                let v = u32le(t, 0);
                [
                    (v & 0x3ff) as f32 / 1023.0,
                    ((v >> 10) & 0x3ff) as f32 / 1023.0,
                    ((v >> 20) & 0x3ff) as f32 / 1023.0,
                    (v >> 30) as f32 / 3.0,
                ]
            }
            Enc::Rg11b10 => {
                let v = u32le(t, 0);
                [
                    ufloat_to_f32(v & 0x7ff, 6),
                    ufloat_to_f32((v >> 11) & 0x7ff, 6),
                    ufloat_to_f32(v >> 22, 5),
                    1.0,
                ]
            }
            Enc::D16 | Enc::D24 | Enc::D24S8 | Enc::D32F | Enc::D32FS8 => {
                [self.decode_depth(t), 0.0, 0.0, 1.0]
            }
            Enc::Rgb10a2Uint | Enc::S8 => self.decode_int(TextureAspect::All, t).map(|v| v as f32),
            Enc::Compressed => [0.0; 4],
        }
    }

    /// Reads a texel of a uint/sint format (or the stencil aspect) as 32-bit integers (sint
    /// as two's-complement bits); missing components read 0, alpha 1. Float formats return
    /// the bits of their float values.
    pub fn decode_int(self, aspect: TextureAspect, t: &[u8]) -> [u32; 4] {
        let Some(t) = t.get(..self.block_size()) else {
            return [0; 4];
        };
        match (self.enc(), aspect) {
            (Enc::S8, _) => [t[0] as u32, 0, 0, 1],
            (Enc::D24S8, TextureAspect::StencilOnly) => [t[3] as u32, 0, 0, 1],
            (Enc::D32FS8, TextureAspect::StencilOnly) => [t[4] as u32, 0, 0, 1],
            (Enc::Rgb10a2Uint, _) => {
                let v = u32le(t, 0);
                [v & 0x3ff, (v >> 10) & 0x3ff, (v >> 20) & 0x3ff, v >> 30]
            }
            (Enc::Plain { ch, n, .. }, _) if self.is_integer() => {
                let mut c = [0, 0, 0, 1];
                for (i, v) in c.iter_mut().enumerate().take(n) {
                    *v = match ch {
                        Ch::Uint8 => t[i] as u32,
                        Ch::Sint8 => t[i] as i8 as i32 as u32,
                        Ch::Uint16 => u16le(t, i) as u32,
                        Ch::Sint16 => u16le(t, i) as i16 as i32 as u32,
                        _ => u32le(t, i),
                    };
                }
                c
            }
            _ => self.decode_float(t).map(f32::to_bits),
        }
    }

    /// Reads a texel as linear RGBA (rastra-pipeline's name for `decode_float`).
    pub fn decode_color(self, t: &[u8]) -> [f32; 4] {
        self.decode_float(t)
    }

    /// Reads the depth aspect of a depth texel (0 for formats without depth).
    pub fn decode_depth(self, t: &[u8]) -> f32 {
        let Some(t) = t.get(..self.block_size()) else {
            return 0.0;
        };
        match self.enc() {
            Enc::D16 => u16le(t, 0) as f32 / 65535.0,
            Enc::D24 | Enc::D24S8 => {
                let d = t[0] as u32 | (t[1] as u32) << 8 | (t[2] as u32) << 16;
                (d as f64 / 16_777_215.0) as f32
            }
            Enc::D32F | Enc::D32FS8 => f32::from_bits(u32le(t, 0)),
            _ => 0.0,
        }
    }

    /// Reads the stencil aspect (0 for formats without stencil).
    pub fn decode_stencil(self, t: &[u8]) -> u8 {
        match self.enc() {
            Enc::S8 => t.first().copied().unwrap_or(0),
            Enc::D24S8 => t.get(3).copied().unwrap_or(0),
            Enc::D32FS8 => t.get(4).copied().unwrap_or(0),
            _ => 0,
        }
    }

    // ---- encoding -------------------------------------------------------------------

    /// Writes linear RGBA `c` into `out` (`texel_size` bytes) with round-to-nearest: unorm
    /// and snorm clamp (NaN → 0), sRGB encodes in the encoded domain, half and packed floats
    /// round to nearest even (packed floats clamp to their largest finite value, negative to
    /// 0), integer formats saturate the rounded value, depth formats store `c[0]` as depth.
    /// Compressed formats are rejected.
    pub fn encode_float(self, c: [f32; 4], out: &mut [u8]) -> Result<(), TextureError> {
        let size = self.block_size();
        let Some(out) = out.get_mut(..size) else {
            return crate::invalid!("texel buffer shorter than {size} bytes for {self:?}");
        };
        match self.enc() {
            Enc::Plain { ch, n, bgra } => {
                let srgb = self.is_srgb();
                for (i, &v) in c.iter().enumerate().take(n) {
                    let at = if bgra && i < 3 { 2 - i } else { i };
                    if srgb && i < 3 {
                        out[at] = linear_to_srgb8(v);
                    } else {
                        encode_channel_f32(ch, v, out, at);
                    }
                }
            }
            Enc::Rgb9e5 => out.copy_from_slice(&encode_rgb9e5(c).to_le_bytes()),
            Enc::Rgb10a2Unorm => {
                let u = |x: f32, max: f32| unorm(x, max);
                let v = u(c[0], 1023.0)
                    | u(c[1], 1023.0) << 10
                    | u(c[2], 1023.0) << 20
                    | u(c[3], 3.0) << 30;
                out.copy_from_slice(&v.to_le_bytes());
            }
            Enc::Rg11b10 => {
                let v = f32_to_ufloat(c[0], 6)
                    | f32_to_ufloat(c[1], 6) << 11
                    | f32_to_ufloat(c[2], 5) << 22;
                out.copy_from_slice(&v.to_le_bytes());
            }
            Enc::Rgb10a2Uint | Enc::S8 => {
                let ints = c.map(float_to_u32_sat);
                return self.encode_int(ints, out);
            }
            Enc::D16 | Enc::D24 | Enc::D24S8 | Enc::D32F | Enc::D32FS8 => {
                let z = if c[0].is_nan() { 0.0 } else { c[0] };
                let z = match self.enc() {
                    Enc::D32F | Enc::D32FS8 => z,
                    _ => z.clamp(0.0, 1.0),
                };
                self.encode_depth(self.quantize_depth(z), out);
            }
            Enc::Compressed => {
                return Err(TextureError::Unsupported(format!(
                    "encoding texels of compressed format {self:?}"
                )));
            }
        }
        Ok(())
    }

    /// Writes integer RGBA into an integer texel, saturating to the channel range (`c` holds
    /// u32 values for uint formats and i32 bits for sint formats). The stencil aspect of
    /// `Stencil8` stores `c[0]`. Float-typed formats store the bit patterns as floats.
    pub fn encode_int(self, c: [u32; 4], out: &mut [u8]) -> Result<(), TextureError> {
        let size = self.block_size();
        let Some(out) = out.get_mut(..size) else {
            return crate::invalid!("texel buffer shorter than {size} bytes for {self:?}");
        };
        match self.enc() {
            Enc::S8 => out[0] = c[0].min(255) as u8,
            Enc::Rgb10a2Uint => {
                let v = c[0].min(1023)
                    | c[1].min(1023) << 10
                    | c[2].min(1023) << 20
                    | c[3].min(3) << 30;
                out.copy_from_slice(&v.to_le_bytes());
            }
            Enc::Plain { ch, n, .. } if self.is_integer() => {
                for (i, &v) in c.iter().enumerate().take(n) {
                    let s = v as i32;
                    match ch {
                        Ch::Uint8 => out[i] = v.min(u8::MAX as u32) as u8,
                        Ch::Sint8 => out[i] = s.clamp(i8::MIN as i32, i8::MAX as i32) as i8 as u8,
                        Ch::Uint16 => put16(out, i, v.min(u16::MAX as u32) as u16),
                        Ch::Sint16 => put16(
                            out,
                            i,
                            s.clamp(i16::MIN as i32, i16::MAX as i32) as i16 as u16,
                        ),
                        _ => put32(out, i, v),
                    }
                }
            }
            _ => return self.encode_float(c.map(f32::from_bits), out),
        }
        Ok(())
    }

    /// Writes linear RGBA into a colour texel (rastra-pipeline's name for `encode_float`);
    /// does nothing for compressed formats or a short `out`.
    pub fn encode_color(self, c: [f32; 4], out: &mut [u8]) {
        // Errors only for compressed formats and short buffers: leave `out` untouched then.
        let _ = self.encode_float(c, out);
    }

    /// Rounds a depth value in [0, 1] to what the format can store (24-bit and 16-bit
    /// unorm grids; float formats keep it).
    pub fn quantize_depth(self, z: f32) -> f32 {
        match self.enc() {
            Enc::D16 => (z * 65535.0).round() / 65535.0,
            Enc::D24 | Enc::D24S8 => ((z as f64 * 16_777_215.0).round() / 16_777_215.0) as f32,
            _ => z,
        }
    }

    /// Stores depth `z` (already quantized) into a depth texel, keeping any stencil bits.
    /// Does nothing for formats without depth or a short `out`.
    pub fn encode_depth(self, z: f32, out: &mut [u8]) {
        if out.len() < self.block_size() {
            return;
        }
        match self.enc() {
            Enc::D16 => put16(out, 0, (z.clamp(0.0, 1.0) * 65535.0).round() as u16),
            Enc::D24 | Enc::D24S8 => {
                let d = (z.clamp(0.0, 1.0) as f64 * 16_777_215.0).round() as u32;
                out[0] = d as u8;
                out[1] = (d >> 8) as u8;
                out[2] = (d >> 16) as u8;
            }
            Enc::D32F | Enc::D32FS8 => put32(out, 0, z.to_bits()),
            _ => {}
        }
    }

    /// Stores a stencil value into a texel of a format with stencil (others: no effect).
    pub fn encode_stencil(self, s: u8, out: &mut [u8]) {
        let at = match self.enc() {
            Enc::S8 => 0,
            Enc::D24S8 => 3,
            Enc::D32FS8 => 4,
            _ => return,
        };
        if let Some(b) = out.get_mut(at) {
            *b = s;
        }
    }
}

// ---- channel conversions ------------------------------------------------------------

fn u16le(t: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([t[2 * i], t[2 * i + 1]])
}

fn u32le(t: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]])
}

fn put16(out: &mut [u8], i: usize, v: u16) {
    out[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
}

fn put32(out: &mut [u8], i: usize, v: u32) {
    out[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

fn decode_channel_f32(ch: Ch, t: &[u8], i: usize) -> f32 {
    match ch {
        Ch::Unorm8 => t[i] as f32 / 255.0,
        Ch::Snorm8 => (t[i] as i8 as f32 / 127.0).max(-1.0),
        Ch::Uint8 => t[i] as f32,
        Ch::Sint8 => t[i] as i8 as f32,
        Ch::Unorm16 => u16le(t, i) as f32 / 65535.0,
        Ch::Snorm16 => (u16le(t, i) as i16 as f32 / 32767.0).max(-1.0),
        Ch::Uint16 => u16le(t, i) as f32,
        Ch::Sint16 => u16le(t, i) as i16 as f32,
        Ch::Float16 => f16::from_bits(u16le(t, i)).to_f32(),
        Ch::Uint32 => u32le(t, i) as f32,
        Ch::Sint32 => u32le(t, i) as i32 as f32,
        Ch::Float32 => f32::from_bits(u32le(t, i)),
    }
}

fn encode_channel_f32(ch: Ch, v: f32, out: &mut [u8], i: usize) {
    match ch {
        Ch::Unorm8 => out[i] = unorm(v, 255.0) as u8,
        Ch::Snorm8 => out[i] = snorm(v, 127.0) as i8 as u8,
        Ch::Unorm16 => put16(out, i, unorm(v, 65535.0) as u16),
        Ch::Snorm16 => put16(out, i, snorm(v, 32767.0) as i16 as u16),
        Ch::Float16 => put16(out, i, f16::from_f32(v).to_bits()),
        Ch::Float32 => put32(out, i, v.to_bits()),
        // Integer channels reached through `encode_float`: round and saturate.
        Ch::Uint8 => out[i] = float_to_u32_sat(v).min(255) as u8,
        Ch::Uint16 => put16(out, i, float_to_u32_sat(v).min(65535) as u16),
        Ch::Uint32 => put32(out, i, float_to_u32_sat(v)),
        Ch::Sint8 => out[i] = (v.round() as i32).clamp(-128, 127) as i8 as u8,
        Ch::Sint16 => put16(
            out,
            i,
            (v.round() as i32).clamp(-32768, 32767) as i16 as u16,
        ),
        Ch::Sint32 => put32(out, i, v.round() as i32 as u32),
    }
}

/// Float to an unsigned integer, rounded to nearest and saturated (NaN → 0).
fn float_to_u32_sat(v: f32) -> u32 {
    v.round() as u32
}

/// Float to unorm code with `max` = 2^bits − 1 (at most 65535): NaN → 0, clamp to
/// [0, 1], multiply by `max` in single precision, round to nearest even — D3D's FLOAT →
/// UNORM rule, and what one instruction per vector does (`cvtps2dq`). Vulkan §3.9.2 asks
/// for one of the two integers nearest the product, and an integer product kept: the
/// rounded product is within half an ulp of the exact one, so its rounding is the exact
/// one or, for a product within that of a midpoint, the other neighbour; an integer below
/// 2^24 is its own rounded product.
#[inline]
fn unorm(x: f32, max: f32) -> u32 {
    let x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    (x * max).round_ties_even() as u32
}

/// Float to snorm code with `max` = 2^(bits−1) − 1: NaN → 0, clamp to [−1, 1], round to
/// nearest (ties away from zero). −max is the most negative code produced, never −max−1.
#[inline]
fn snorm(x: f32, max: f32) -> i32 {
    let x = if x.is_nan() { 0.0 } else { x.clamp(-1.0, 1.0) };
    // Round half away from zero: truncate |v| + 0.5 (exact in f64), then restore the sign.
    let v = x as f64 * max as f64;
    let magnitude = (v.abs() + 0.5) as i32;
    if v < 0.0 { -magnitude } else { magnitude }
}

/// Decodes an unsigned small float with a 5-bit exponent and `m` mantissa bits (the 11- and
/// 10-bit floats of rg11b10ufloat).
fn ufloat_to_f32(v: u32, m: u32) -> f32 {
    let e = (v >> m) as i32;
    let man = (v & ((1 << m) - 1)) as f32;
    let scale = (1u32 << m) as f32;
    match e {
        0 => man / scale * 2f32.powi(-14),
        31 if man == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + man / scale) * 2f32.powi(e - 15),
    }
}

/// Encodes an unsigned small float (5-bit exponent, `m` mantissa bits) with round to nearest
/// even: negative values and −0 → 0, NaN → NaN, +∞ → +∞, finite values above the largest
/// finite value clamp to it (Vulkan §3.10 "Unsigned 11/10-Bit Floating-Point Numbers").
fn f32_to_ufloat(x: f32, m: u32) -> u32 {
    let max_bits = (30 << m) | ((1 << m) - 1);
    if x.is_nan() {
        return (31 << m) | (1 << (m - 1));
    }
    if x <= 0.0 {
        return 0;
    }
    if x == f32::INFINITY {
        return 31 << m;
    }
    let x = x as f64;
    let e = x.log2().floor() as i32;
    let bits = if e < -14 {
        // Denormal: units of 2^-14 / 2^m; rounding up to 2^m lands on the smallest normal.
        (x * 2f64.powi(14 + m as i32)).round_ties_even() as u32
    } else {
        let q = (x * 2f64.powi(m as i32 - e)).round_ties_even() as u32;
        (((e + 15) as u32) << m) + (q - (1 << m))
    };
    bits.min(max_bits)
}

/// rgb9e5ufloat decode: 9-bit mantissas with a shared 5-bit exponent (bias 15), no implicit 1.
fn decode_rgb9e5(v: u32) -> [f32; 4] {
    let e = (v >> 27) as i32;
    let scale = 2f32.powi(e - 15 - 9);
    [
        (v & 0x1ff) as f32 * scale,
        ((v >> 9) & 0x1ff) as f32 * scale,
        ((v >> 18) & 0x1ff) as f32 * scale,
        1.0,
    ]
}

/// rgb9e5ufloat encode (EXT_texture_shared_exponent): clamp each channel to [0, max] (NaN →
/// 0), pick the shared exponent from the largest, round each mantissa to nearest.
fn encode_rgb9e5(c: [f32; 4]) -> u32 {
    const N: i32 = 9;
    const B: i32 = 15;
    let max = (511.0 / 512.0) * 2f64.powi(16);
    let cl = |x: f32| {
        if x.is_nan() {
            0.0
        } else {
            (x as f64).clamp(0.0, max)
        }
    };
    let (r, g, b) = (cl(c[0]), cl(c[1]), cl(c[2]));
    let maxc = r.max(g).max(b);
    let mut exp = if maxc > 0.0 {
        (maxc.log2().floor() as i32).max(-B - 1) + 1 + B
    } else {
        0
    };
    let maxm = (maxc / 2f64.powi(exp - B - N) + 0.5).floor() as i32;
    if maxm == 1 << N {
        exp += 1;
    }
    let q = |x: f64| ((x / 2f64.powi(exp - B - N) + 0.5).floor() as u32).min(511);
    q(r) | q(g) << 9 | q(b) << 18 | (exp as u32) << 27
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unorm rounding is the single-precision product rounded to nearest even, one of
    /// the two integers nearest the exact product; the snorm rounding is round-half-away of the exact
    /// product: on every code's midpoint neighbourhood and on a sweep of the range.
    #[test]
    fn unorm_and_snorm_round_like_the_reference() {
        // The single-precision product, rounded to nearest even by hand: its fraction
        // compared with one half.
        let reference_unorm = |x: f32, max: f32| {
            let x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
            let p = x * max;
            let (whole, fraction) = (p.floor(), p - p.floor());
            let up = fraction > 0.5 || (fraction == 0.5 && whole as u32 % 2 == 1);
            whole as u32 + up as u32
        };
        let reference_snorm = |x: f32, max: f32| {
            let x = if x.is_nan() { 0.0 } else { x.clamp(-1.0, 1.0) };
            (x as f64 * max as f64).round() as i32
        };
        for max in [255.0f32, 1023.0, 65535.0, 127.0, 32767.0] {
            let mut values: Vec<f32> = vec![f32::NAN, -2.0, -1.0, -0.0, 0.0, 1.0, 2.0];
            for k in 0..=max as u32 {
                let mid = (k as f32 + 0.5) / max;
                values.extend([mid, mid.next_up(), mid.next_down(), -mid, -mid.next_up()]);
            }
            values.extend((0..10_000).map(|i| i as f32 / 9_999.0 * 2.0 - 1.0));
            for x in values {
                let code = unorm(x, max);
                assert_eq!(code, reference_unorm(x, max), "unorm {x} × {max}");
                let exact = if x.is_nan() {
                    0.0
                } else {
                    x.clamp(0.0, 1.0) as f64 * max as f64
                };
                assert!(
                    (code as f64 - exact).abs() < 1.0
                        && (exact.fract() != 0.0 || code as f64 == exact),
                    "unorm {x} × {max}: {code} is not a nearest integer of {exact}"
                );
                assert_eq!(snorm(x, max), reference_snorm(x, max), "snorm {x} × {max}");
            }
        }
    }
}
