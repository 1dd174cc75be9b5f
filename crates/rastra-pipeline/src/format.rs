//! Texel and vertex formats: what the memory holds and how the units convert it (T3 vertex
//! fetch "unpack it into the float format the shader cores want", T9 ROP format conversion).
//!
//! Render-target texels are stored in their real encoding (8-bit unorm, sRGB, half, float);
//! the output merger decodes to `f32`, blends, and encodes with round-to-nearest, so results
//! carry the format's precision exactly like a hardware ROP's.

use half::f16;

/// Texture formats: one definition for the whole GPU, owned by the texture units.
pub use rastra_texture::format::TextureFormat;

/// Whether the ROPs can render to `format`: Ok for the float and normalized colour formats
/// and the depth formats; why not otherwise.
pub fn check_renderable(format: TextureFormat) -> Result<(), Unrenderable> {
    use TextureFormat::*;
    use rastra_texture::format::SampleType;
    if format.is_compressed() || matches!(format, Rgb9e5Ufloat | Stencil8) {
        return Err(Unrenderable::Never);
    }
    if matches!(
        format,
        R8Snorm | Rg8Snorm | Rgba8Snorm | R16Snorm | Rg16Snorm | Rgba16Snorm
    ) {
        return Err(Unrenderable::Never);
    }
    if matches!(format.sample_type(), SampleType::Uint | SampleType::Sint) {
        return Err(Unrenderable::NotYet("integer render targets"));
    }
    if matches!(format, Depth32FloatStencil8) {
        return Err(Unrenderable::NotYet("depth32float-stencil8 attachments"));
    }
    Ok(())
}

/// Why a format cannot be rendered to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unrenderable {
    /// WebGPU does not allow it.
    Never,
    /// rastra's ROPs do not write it yet (named).
    NotYet(&'static str),
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
    /// Every vertex format, for tests that cover them all.
    #[cfg(test)]
    pub(crate) const ALL: [VertexFormat; 32] = [
        VertexFormat::Uint8x2,
        VertexFormat::Uint8x4,
        VertexFormat::Sint8x2,
        VertexFormat::Sint8x4,
        VertexFormat::Unorm8x2,
        VertexFormat::Unorm8x4,
        VertexFormat::Snorm8x2,
        VertexFormat::Snorm8x4,
        VertexFormat::Uint16x2,
        VertexFormat::Uint16x4,
        VertexFormat::Sint16x2,
        VertexFormat::Sint16x4,
        VertexFormat::Unorm16x2,
        VertexFormat::Unorm16x4,
        VertexFormat::Snorm16x2,
        VertexFormat::Snorm16x4,
        VertexFormat::Float16x2,
        VertexFormat::Float16x4,
        VertexFormat::Float32,
        VertexFormat::Float32x2,
        VertexFormat::Float32x3,
        VertexFormat::Float32x4,
        VertexFormat::Uint32,
        VertexFormat::Uint32x2,
        VertexFormat::Uint32x3,
        VertexFormat::Uint32x4,
        VertexFormat::Sint32,
        VertexFormat::Sint32x2,
        VertexFormat::Sint32x3,
        VertexFormat::Sint32x4,
        VertexFormat::Unorm10_10_10_2,
        VertexFormat::Unorm8x4Bgra,
    ];

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

    /// For formats of 32-bit components (whose values are the buffer's words as they
    /// are): the component count and what `unpack` puts in the missing fourth component.
    pub const fn whole_words(self) -> Option<(usize, u32)> {
        match self.shape() {
            (n, 4, AttributeKind::Float) => Some((n, 0x3f80_0000)),
            (n, 4, _) => Some((n, 1)),
            _ => None,
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
