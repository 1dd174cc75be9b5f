//! Texel and vertex formats: what the memory holds and how the units convert it (T3 vertex
//! fetch "unpack it into the float format the shader cores want", T9 ROP format conversion).
//!
//! Render-target texels are stored in their real encoding (8-bit unorm, sRGB, half, float);
//! the output merger decodes to `f32`, blends, and encodes with round-to-nearest, so results
//! carry the format's precision exactly like a hardware ROP's.

use half::f16;

/// Formats a texture can have. Names and meaning follow WebGPU's `GPUTextureFormat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureFormat {
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
}

impl TextureFormat {
    /// Bytes one texel (one sample) occupies.
    pub const fn texel_size(self) -> usize {
        use TextureFormat::*;
        match self {
            R8Unorm => 1,
            Rg8Unorm | R16Float | Depth16Unorm => 2,
            Rgba8Unorm | Rgba8UnormSrgb | Bgra8Unorm | Bgra8UnormSrgb | Rg16Float | R32Float
            | Depth24Plus | Depth24PlusStencil8 | Depth32Float => 4,
            Rgba16Float | Rg32Float => 8,
            Rgba32Float => 16,
        }
    }

    /// True for formats with a depth aspect.
    pub const fn is_depth(self) -> bool {
        use TextureFormat::*;
        matches!(
            self,
            Depth16Unorm | Depth24Plus | Depth24PlusStencil8 | Depth32Float
        )
    }

    /// True for formats with a stencil aspect.
    pub const fn has_stencil(self) -> bool {
        matches!(self, TextureFormat::Depth24PlusStencil8)
    }

    /// True when the format stores sRGB-encoded colour (decoded to linear on read, encoded
    /// on write; blending happens in linear space).
    pub const fn is_srgb(self) -> bool {
        matches!(
            self,
            TextureFormat::Rgba8UnormSrgb | TextureFormat::Bgra8UnormSrgb
        )
    }

    /// True when the format can be blended (every colour format rastra has is float or
    /// normalised).
    pub const fn is_blendable(self) -> bool {
        !self.is_depth()
            && !matches!(
                self,
                TextureFormat::R32Float | TextureFormat::Rg32Float | TextureFormat::Rgba32Float
            )
    }

    /// Colour components the format stores (1–4); depth formats report 1.
    pub const fn components(self) -> usize {
        use TextureFormat::*;
        match self {
            R8Unorm | R16Float | R32Float | Depth16Unorm | Depth24Plus | Depth24PlusStencil8
            | Depth32Float => 1,
            Rg8Unorm | Rg16Float | Rg32Float => 2,
            _ => 4,
        }
    }

    /// Writes linear RGBA `c` into `out` (`texel_size` bytes), converting to the format's
    /// encoding with round-to-nearest. Only for colour formats.
    pub fn encode_color(self, c: [f32; 4], out: &mut [u8]) {
        use TextureFormat::*;
        match self {
            R8Unorm => out[0] = unorm8(c[0]),
            Rg8Unorm => {
                out[0] = unorm8(c[0]);
                out[1] = unorm8(c[1]);
            }
            Rgba8Unorm => {
                for i in 0..4 {
                    out[i] = unorm8(c[i]);
                }
            }
            Bgra8Unorm => {
                out[0] = unorm8(c[2]);
                out[1] = unorm8(c[1]);
                out[2] = unorm8(c[0]);
                out[3] = unorm8(c[3]);
            }
            Rgba8UnormSrgb => {
                for i in 0..3 {
                    out[i] = srgb8(c[i]);
                }
                out[3] = unorm8(c[3]);
            }
            Bgra8UnormSrgb => {
                out[0] = srgb8(c[2]);
                out[1] = srgb8(c[1]);
                out[2] = srgb8(c[0]);
                out[3] = unorm8(c[3]);
            }
            R16Float | Rg16Float | Rgba16Float => {
                for i in 0..self.components() {
                    out[2 * i..2 * i + 2].copy_from_slice(&f16::from_f32(c[i]).to_le_bytes());
                }
            }
            R32Float | Rg32Float | Rgba32Float => {
                for i in 0..self.components() {
                    out[4 * i..4 * i + 4].copy_from_slice(&c[i].to_le_bytes());
                }
            }
            Depth16Unorm | Depth24Plus | Depth24PlusStencil8 | Depth32Float => {
                unreachable!("encode_color on depth format {self:?}: callers check is_depth")
            }
        }
    }

    /// Reads a texel as linear RGBA; missing components read as 0 (alpha as 1).
    pub fn decode_color(self, t: &[u8]) -> [f32; 4] {
        use TextureFormat::*;
        let n = |b: u8| b as f32 / 255.0;
        match self {
            R8Unorm => [n(t[0]), 0.0, 0.0, 1.0],
            Rg8Unorm => [n(t[0]), n(t[1]), 0.0, 1.0],
            Rgba8Unorm => [n(t[0]), n(t[1]), n(t[2]), n(t[3])],
            Bgra8Unorm => [n(t[2]), n(t[1]), n(t[0]), n(t[3])],
            Rgba8UnormSrgb => {
                let d = &srgb_tables().decode;
                [
                    d[t[0] as usize],
                    d[t[1] as usize],
                    d[t[2] as usize],
                    n(t[3]),
                ]
            }
            Bgra8UnormSrgb => {
                let d = &srgb_tables().decode;
                [
                    d[t[2] as usize],
                    d[t[1] as usize],
                    d[t[0] as usize],
                    n(t[3]),
                ]
            }
            R16Float | Rg16Float | Rgba16Float => {
                let mut c = [0.0, 0.0, 0.0, 1.0];
                for (i, v) in c.iter_mut().enumerate().take(self.components()) {
                    *v = f16::from_le_bytes([t[2 * i], t[2 * i + 1]]).to_f32();
                }
                c
            }
            R32Float | Rg32Float | Rgba32Float => {
                let mut c = [0.0, 0.0, 0.0, 1.0];
                for (i, v) in c.iter_mut().enumerate().take(self.components()) {
                    *v = f32::from_le_bytes(t[4 * i..4 * i + 4].try_into().unwrap());
                }
                c
            }
            Depth16Unorm | Depth24Plus | Depth24PlusStencil8 | Depth32Float => {
                [self.decode_depth(t), 0.0, 0.0, 1.0]
            }
        }
    }

    /// Rounds a depth value in [0, 1] to what the format can store (24-bit and 16-bit
    /// unorm grids; float formats keep it).
    pub fn quantize_depth(self, z: f32) -> f32 {
        match self {
            TextureFormat::Depth16Unorm => (z * 65535.0).round() / 65535.0,
            TextureFormat::Depth24Plus | TextureFormat::Depth24PlusStencil8 => {
                ((z as f64 * 16_777_215.0).round() / 16_777_215.0) as f32
            }
            _ => z,
        }
    }

    /// Stores depth `z` (already quantized) into a depth texel, keeping any stencil bits.
    pub fn encode_depth(self, z: f32, out: &mut [u8]) {
        match self {
            TextureFormat::Depth16Unorm => {
                out[..2].copy_from_slice(&((z * 65535.0).round() as u16).to_le_bytes())
            }
            TextureFormat::Depth24Plus | TextureFormat::Depth24PlusStencil8 => {
                let d = (z as f64 * 16_777_215.0).round() as u32;
                out[0] = d as u8;
                out[1] = (d >> 8) as u8;
                out[2] = (d >> 16) as u8;
            }
            _ => out[..4].copy_from_slice(&z.to_le_bytes()),
        }
    }

    /// Reads the depth aspect of a depth texel.
    pub fn decode_depth(self, t: &[u8]) -> f32 {
        match self {
            TextureFormat::Depth16Unorm => u16::from_le_bytes([t[0], t[1]]) as f32 / 65535.0,
            TextureFormat::Depth24Plus | TextureFormat::Depth24PlusStencil8 => {
                let d = t[0] as u32 | (t[1] as u32) << 8 | (t[2] as u32) << 16;
                (d as f64 / 16_777_215.0) as f32
            }
            _ => f32::from_le_bytes(t[..4].try_into().unwrap()),
        }
    }

    /// Stores a stencil value into a depth-stencil texel (formats with stencil only).
    pub fn encode_stencil(self, s: u8, out: &mut [u8]) {
        if self.has_stencil() {
            out[3] = s;
        }
    }
}

/// Float to 8-bit unorm: clamp to [0, 1] (NaN → 0), round to nearest.
fn unorm8(x: f32) -> u8 {
    let x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    (x * 255.0 + 0.5) as u8
}

/// Lookup tables that make 8-bit sRGB conversion exact and cheap: the linear value of every
/// code, and the linear values where the rounded code changes.
struct SrgbTables {
    decode: [f32; 256],
    /// `thresholds[k]`: smallest linear value that encodes to code `k + 1` or more (the
    /// linear value of encoded `(k + 0.5) / 255`).
    thresholds: [f32; 255],
}

fn srgb_tables() -> &'static SrgbTables {
    static TABLES: std::sync::OnceLock<SrgbTables> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let to_linear = |e: f64| {
            if e <= 0.040_45 {
                e / 12.92
            } else {
                ((e + 0.055) / 1.055).powf(2.4)
            }
        };
        SrgbTables {
            decode: std::array::from_fn(|k| to_linear(k as f64 / 255.0) as f32),
            thresholds: std::array::from_fn(|k| to_linear((k as f64 + 0.5) / 255.0) as f32),
        }
    })
}

/// Linear float to 8-bit sRGB with round-to-nearest in the encoded domain (NaN → 0).
#[inline]
#[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(x > 0)` is deliberate: NaN encodes to 0.
fn srgb8(x: f32) -> u8 {
    if !(x > 0.0) {
        return 0;
    }
    srgb_tables().thresholds.partition_point(|&t| t <= x) as u8
}

/// Index buffer element formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexFormat {
    Uint16,
    Uint32,
}

impl IndexFormat {
    pub const fn size(self) -> usize {
        match self {
            IndexFormat::Uint16 => 2,
            IndexFormat::Uint32 => 4,
        }
    }

    /// The primitive-restart value for strips.
    pub const fn restart_value(self) -> u32 {
        match self {
            IndexFormat::Uint16 => 0xffff,
            IndexFormat::Uint32 => 0xffff_ffff,
        }
    }
}

/// How the shader sees a fetched vertex attribute: as floats, signed or unsigned integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttributeKind {
    Float,
    Sint,
    Uint,
}

/// Vertex attribute formats (WebGPU's `GPUVertexFormat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VertexFormat {
    Uint8x2,
    Uint8x4,
    Sint8x2,
    Sint8x4,
    Unorm8x2,
    Unorm8x4,
    Snorm8x2,
    Snorm8x4,
    Uint16x2,
    Uint16x4,
    Sint16x2,
    Sint16x4,
    Unorm16x2,
    Unorm16x4,
    Snorm16x2,
    Snorm16x4,
    Float16x2,
    Float16x4,
    Float32,
    Float32x2,
    Float32x3,
    Float32x4,
    Uint32,
    Uint32x2,
    Uint32x3,
    Uint32x4,
    Sint32,
    Sint32x2,
    Sint32x3,
    Sint32x4,
    Unorm10_10_10_2,
    Unorm8x4Bgra,
}

impl VertexFormat {
    /// (component count, bytes per component or 0 for packed formats, kind).
    const fn shape(self) -> (usize, usize, AttributeKind) {
        use AttributeKind::*;
        use VertexFormat::*;
        match self {
            Uint8x2 => (2, 1, Uint),
            Uint8x4 => (4, 1, Uint),
            Sint8x2 => (2, 1, Sint),
            Sint8x4 => (4, 1, Sint),
            Unorm8x2 | Snorm8x2 => (2, 1, Float),
            Unorm8x4 | Snorm8x4 | Unorm8x4Bgra => (4, 1, Float),
            Uint16x2 => (2, 2, Uint),
            Uint16x4 => (4, 2, Uint),
            Sint16x2 => (2, 2, Sint),
            Sint16x4 => (4, 2, Sint),
            Unorm16x2 | Snorm16x2 | Float16x2 => (2, 2, Float),
            Unorm16x4 | Snorm16x4 | Float16x4 => (4, 2, Float),
            Float32 => (1, 4, Float),
            Float32x2 => (2, 4, Float),
            Float32x3 => (3, 4, Float),
            Float32x4 => (4, 4, Float),
            Uint32 => (1, 4, Uint),
            Uint32x2 => (2, 4, Uint),
            Uint32x3 => (3, 4, Uint),
            Uint32x4 => (4, 4, Uint),
            Sint32 => (1, 4, Sint),
            Sint32x2 => (2, 4, Sint),
            Sint32x3 => (3, 4, Sint),
            Sint32x4 => (4, 4, Sint),
            Unorm10_10_10_2 => (4, 0, Float),
        }
    }

    /// Bytes one attribute occupies in the vertex buffer.
    pub const fn size(self) -> usize {
        match self.shape() {
            (_, 0, _) => 4,
            (n, b, _) => n * b,
        }
    }

    /// Components the attribute has.
    pub const fn components(self) -> usize {
        self.shape().0
    }

    /// Whether the shader reads it as float, sint or uint.
    pub const fn kind(self) -> AttributeKind {
        self.shape().2
    }

    /// Unpacks one attribute from `bytes` (`size()` long) into four 32-bit register values
    /// (f32 bits for float kinds), filling missing components with 0, 0, 0, 1.
    pub fn unpack(self, bytes: &[u8]) -> [u32; 4] {
        use VertexFormat::*;
        let (n, _, kind) = self.shape();
        let one = match kind {
            AttributeKind::Float => 1.0f32.to_bits(),
            _ => 1,
        };
        let mut out = [0, 0, 0, one];
        let u16_at = |i: usize| u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
        for (i, o) in out.iter_mut().enumerate().take(n) {
            *o = match self {
                Uint8x2 | Uint8x4 => bytes[i] as u32,
                Sint8x2 | Sint8x4 => bytes[i] as i8 as i32 as u32,
                Unorm8x2 | Unorm8x4 => (bytes[i] as f32 / 255.0).to_bits(),
                Unorm8x4Bgra => (bytes[[2, 1, 0, 3][i]] as f32 / 255.0).to_bits(),
                Snorm8x2 | Snorm8x4 => (bytes[i] as i8 as f32 / 127.0).max(-1.0).to_bits(),
                Uint16x2 | Uint16x4 => u16_at(i) as u32,
                Sint16x2 | Sint16x4 => u16_at(i) as i16 as i32 as u32,
                Unorm16x2 | Unorm16x4 => (u16_at(i) as f32 / 65535.0).to_bits(),
                Snorm16x2 | Snorm16x4 => (u16_at(i) as i16 as f32 / 32767.0).max(-1.0).to_bits(),
                Float16x2 | Float16x4 => f16::from_bits(u16_at(i)).to_f32().to_bits(),
                Float32 | Float32x2 | Float32x3 | Float32x4 | Uint32 | Uint32x2 | Uint32x3
                | Uint32x4 | Sint32 | Sint32x2 | Sint32x3 | Sint32x4 => u32_at(i),
                Unorm10_10_10_2 => {
                    let v = u32_at(0);
                    let (bits, shift) = if i < 3 { (0x3ff, 10 * i) } else { (0x3, 30) };
                    (((v >> shift) & bits) as f32 / bits as f32).to_bits()
                }
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sRGB transfer function (IEC 61966-2-1), linear → encoded.
    fn linear_to_srgb(x: f32) -> f32 {
        if x.is_nan() || x <= 0.0 {
            0.0
        } else if x <= 0.003_130_8 {
            x * 12.92
        } else if x < 1.0 {
            1.055 * x.powf(1.0 / 2.4) - 0.055
        } else {
            1.0
        }
    }

    #[test]
    fn unorm8_rounds_to_nearest_and_clamps() {
        let mut t = [0u8; 4];
        TextureFormat::Rgba8Unorm.encode_color([0.5, -1.0, 2.0, f32::NAN], &mut t);
        assert_eq!(t, [128, 0, 255, 0]);
        TextureFormat::Bgra8Unorm.encode_color([1.0, 0.0, 0.2, 1.0], &mut t);
        assert_eq!(t, [51, 0, 255, 255]);
    }

    #[test]
    fn srgb_round_trips_every_code() {
        for code in 0..=255u8 {
            let linear = TextureFormat::Rgba8UnormSrgb.decode_color(&[code, code, code, code])[0];
            let mut t = [0u8; 4];
            TextureFormat::Rgba8UnormSrgb.encode_color([linear; 4], &mut t);
            assert_eq!(t[0], code);
        }
    }

    #[test]
    fn srgb_encoding_matches_the_transfer_function() {
        for i in 0..=4096 {
            let x = i as f32 / 4096.0;
            let mut t = [0u8; 4];
            TextureFormat::Rgba8UnormSrgb.encode_color([x, 0.0, 0.0, 0.0], &mut t);
            assert_eq!(t[0], unorm8(linear_to_srgb(x)), "x = {x}");
        }
    }

    #[test]
    fn depth24_stores_quantized_value_exactly() {
        let f = TextureFormat::Depth24PlusStencil8;
        let z = f.quantize_depth(0.3);
        let mut t = [0u8; 4];
        f.encode_stencil(7, &mut t);
        f.encode_depth(z, &mut t);
        assert_eq!(f.decode_depth(&t), z);
        assert_eq!(t[3], 7);
    }

    #[test]
    fn vertex_formats_unpack() {
        assert_eq!(
            VertexFormat::Unorm8x4.unpack(&[255, 0, 0, 255])[0],
            1.0f32.to_bits()
        );
        assert_eq!(
            VertexFormat::Sint16x2.unpack(&[0xff, 0xff, 2, 0]),
            [u32::MAX, 2, 0, 1]
        );
        assert_eq!(
            VertexFormat::Snorm8x2.unpack(&[0x80, 0x7f])[..2],
            [(-1.0f32).to_bits(), 1.0f32.to_bits()]
        );
        assert_eq!(VertexFormat::Float32x2.unpack(&[0; 8])[3], 1.0f32.to_bits());
    }
}
