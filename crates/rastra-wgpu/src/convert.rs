//! rastra state ⇄ wgpu state: one pair of functions per vocabulary (formats, vertex fetch,
//! primitive assembly, depth, blending, sampling, usages). rastra's state types follow
//! WebGPU's one to one, so most pairs come from one list of variant names: a variant added
//! on rastra's side fails to compile here rather than mapping silently to the wrong thing.
//! wgpu has vocabulary rastra lacks (more formats, more vertex formats); those map to
//! `None` on the way in and the caller reports them as unsupported.
//!
//! Both directions live here so there is one table: `to_wgpu` serves the lavapipe
//! reference runner (rastra frames on wgpu), `from_wgpu` serves the wgpu backend.

use rastra::{
    BlendComponent, BlendFactor, BlendOperation, BlendState, BufferUsages, Color, ColorWrites,
    CompareFunction, CullMode, FrontFace, IndexFormat, PrimitiveTopology, TextureFormat,
    TextureUsages, VertexFormat, VertexStepMode,
};

/// Generates `$to: rastra → wgpu` (total) and `$from: wgpu → rastra` (None where rastra has
/// no such variant) for enums whose variants carry the same names on both sides; `extra`
/// arms cover variants with fields.
macro_rules! same_names {
    (
        $(#[$doc:meta])*
        $to:ident / $from:ident : $r:ty => $w:ty { $($name:ident),* $(,)? }
        $(extra { $($to_pat:pat => $to_expr:expr),* } { $($from_pat:pat => $from_expr:expr),* })?
    ) => {
        $(#[$doc])*
        pub fn $to(v: $r) -> $w {
            type R = $r;
            type W = $w;
            match v {
                $(R::$name => W::$name,)*
                $($($to_pat => $to_expr,)*)?
            }
        }

        $(#[$doc])*
        #[allow(unreachable_patterns)]
        pub fn $from(v: $w) -> Option<$r> {
            type R = $r;
            type W = $w;
            match v {
                $(W::$name => Some(R::$name),)*
                $($($from_pat => $from_expr,)*)?
                _ => None,
            }
        }
    };
}

same_names! {
    /// Texture formats (every format rastra has; wgpu names them the same way).
    texture_format / texture_format_from : TextureFormat => wgpu::TextureFormat {
        R8Unorm, Rg8Unorm, Rgba8Unorm, Rgba8UnormSrgb, Bgra8Unorm, Bgra8UnormSrgb, R16Float,
        Rg16Float, Rgba16Float, R32Float, Rg32Float, Rgba32Float, Depth16Unorm, Depth24Plus,
        Depth24PlusStencil8, Depth32Float, R8Snorm, R8Uint, R8Sint, Rg8Snorm, Rg8Uint, Rg8Sint,
        Rgba8Snorm, Rgba8Uint, Rgba8Sint, R16Uint, R16Sint, R16Unorm, R16Snorm, Rg16Uint,
        Rg16Sint, Rg16Unorm, Rg16Snorm, Rgba16Uint, Rgba16Sint, Rgba16Unorm, Rgba16Snorm,
        R32Uint, R32Sint, Rg32Uint, Rg32Sint, Rgba32Uint, Rgba32Sint, Rgb9e5Ufloat, Rgb10a2Uint,
        Rgb10a2Unorm, Rg11b10Ufloat, Stencil8, Depth32FloatStencil8, Bc1RgbaUnorm,
        Bc1RgbaUnormSrgb, Bc2RgbaUnorm, Bc2RgbaUnormSrgb, Bc3RgbaUnorm, Bc3RgbaUnormSrgb,
        Bc4RUnorm, Bc4RSnorm, Bc5RgUnorm, Bc5RgSnorm, Bc6hRgbUfloat, Bc6hRgbFloat, Bc7RgbaUnorm,
        Bc7RgbaUnormSrgb, Etc2Rgb8Unorm, Etc2Rgb8UnormSrgb, Etc2Rgb8A1Unorm, Etc2Rgb8A1UnormSrgb,
        Etc2Rgba8Unorm, Etc2Rgba8UnormSrgb, EacR11Unorm, EacR11Snorm, EacRg11Unorm, EacRg11Snorm,
    }
    extra {
        R::Astc { block, channel } => W::Astc {
            block: astc_block(block),
            channel: astc_channel(channel),
        }
    } {
        W::Astc { block, channel } => Some(R::Astc {
            block: astc_block_from(block)?,
            channel: astc_channel_from(channel)?,
        })
    }
}

same_names! {
    /// ASTC block footprints.
    astc_block / astc_block_from : rastra::AstcBlock => wgpu::AstcBlock {
        B4x4, B5x4, B5x5, B6x5, B6x6, B8x5, B8x6, B8x8, B10x5, B10x6, B10x8, B10x10, B12x10,
        B12x12,
    }
}

same_names! {
    /// ASTC channel encodings (wgpu's HDR channel has no rastra counterpart).
    astc_channel / astc_channel_from : rastra::AstcChannel => wgpu::AstcChannel {
        Unorm, UnormSrgb,
    }
}

same_names! {
    /// Vertex attribute formats.
    vertex_format / vertex_format_from : VertexFormat => wgpu::VertexFormat {
        Uint8x2, Uint8x4, Sint8x2, Sint8x4, Unorm8x2, Unorm8x4, Snorm8x2, Snorm8x4, Uint16x2,
        Uint16x4, Sint16x2, Sint16x4, Unorm16x2, Unorm16x4, Snorm16x2, Snorm16x4, Float16x2,
        Float16x4, Float32, Float32x2, Float32x3, Float32x4, Uint32, Uint32x2, Uint32x3,
        Uint32x4, Sint32, Sint32x2, Sint32x3, Sint32x4, Unorm10_10_10_2, Unorm8x4Bgra,
    }
}

same_names! {
    /// Per-vertex or per-instance stepping.
    step_mode / step_mode_from : VertexStepMode => wgpu::VertexStepMode { Vertex, Instance }
}

same_names! {
    /// Index formats.
    index_format / index_format_from : IndexFormat => wgpu::IndexFormat { Uint16, Uint32 }
}

same_names! {
    /// Primitive topologies.
    topology / topology_from : PrimitiveTopology => wgpu::PrimitiveTopology {
        PointList, LineList, LineStrip, TriangleList, TriangleStrip,
    }
}

same_names! {
    /// Winding of front faces.
    front_face / front_face_from : FrontFace => wgpu::FrontFace { Ccw, Cw }
}

same_names! {
    /// Comparison functions (depth test, comparison samplers).
    compare_function / compare_function_from : CompareFunction => wgpu::CompareFunction {
        Never, Less, Equal, LessEqual, Greater, NotEqual, GreaterEqual, Always,
    }
}

same_names! {
    /// Blend factors (wgpu's dual-source factors have no rastra counterpart).
    blend_factor / blend_factor_from : BlendFactor => wgpu::BlendFactor {
        Zero, One, Src, OneMinusSrc, SrcAlpha, OneMinusSrcAlpha, Dst, OneMinusDst, DstAlpha,
        OneMinusDstAlpha, SrcAlphaSaturated, Constant, OneMinusConstant,
    }
}

same_names! {
    /// Blend operations.
    blend_operation / blend_operation_from : BlendOperation => wgpu::BlendOperation {
        Add, Subtract, ReverseSubtract, Min, Max,
    }
}

same_names! {
    /// Texture dimensions.
    texture_dimension / texture_dimension_from : rastra::TextureDimension => wgpu::TextureDimension {
        D1, D2, D3,
    }
}

same_names! {
    /// Texture view dimensions.
    view_dimension / view_dimension_from : rastra::TextureViewDimension => wgpu::TextureViewDimension {
        D1, D2, D2Array, Cube, CubeArray, D3,
    }
}

same_names! {
    /// Texture aspects (wgpu's plane aspects have no rastra counterpart).
    texture_aspect / texture_aspect_from : rastra::TextureAspect => wgpu::TextureAspect {
        All, DepthOnly, StencilOnly,
    }
}

same_names! {
    /// Texture address modes.
    address_mode / address_mode_from : rastra::AddressMode => wgpu::AddressMode {
        Repeat, MirrorRepeat, ClampToEdge, ClampToBorder,
    }
}

same_names! {
    /// Texture filters.
    filter_mode / filter_mode_from : rastra::FilterMode => wgpu::FilterMode { Nearest, Linear }
}

/// Mip filters (wgpu gives them their own type).
pub fn mipmap_filter(f: rastra::FilterMode) -> wgpu::MipmapFilterMode {
    match f {
        rastra::FilterMode::Nearest => wgpu::MipmapFilterMode::Nearest,
        rastra::FilterMode::Linear => wgpu::MipmapFilterMode::Linear,
    }
}

/// Mip filters, wgpu to rastra.
pub fn mipmap_filter_from(f: wgpu::MipmapFilterMode) -> rastra::FilterMode {
    match f {
        wgpu::MipmapFilterMode::Nearest => rastra::FilterMode::Nearest,
        wgpu::MipmapFilterMode::Linear => rastra::FilterMode::Linear,
    }
}

/// Face culling.
pub fn cull_mode(c: CullMode) -> Option<wgpu::Face> {
    match c {
        CullMode::None => None,
        CullMode::Front => Some(wgpu::Face::Front),
        CullMode::Back => Some(wgpu::Face::Back),
    }
}

/// Face culling, wgpu to rastra.
pub fn cull_mode_from(c: Option<wgpu::Face>) -> CullMode {
    match c {
        None => CullMode::None,
        Some(wgpu::Face::Front) => CullMode::Front,
        Some(wgpu::Face::Back) => CullMode::Back,
    }
}

/// Blend state of a colour target.
pub fn blend_state(b: BlendState) -> wgpu::BlendState {
    let component = |c: BlendComponent| wgpu::BlendComponent {
        src_factor: blend_factor(c.src_factor),
        dst_factor: blend_factor(c.dst_factor),
        operation: blend_operation(c.operation),
    };
    wgpu::BlendState {
        color: component(b.color),
        alpha: component(b.alpha),
    }
}

/// Blend state, wgpu to rastra (None when a factor is one rastra lacks).
pub fn blend_state_from(b: wgpu::BlendState) -> Option<BlendState> {
    let component = |c: wgpu::BlendComponent| {
        Some(BlendComponent {
            src_factor: blend_factor_from(c.src_factor)?,
            dst_factor: blend_factor_from(c.dst_factor)?,
            operation: blend_operation_from(c.operation)?,
        })
    };
    Some(BlendState {
        color: component(b.color)?,
        alpha: component(b.alpha)?,
    })
}

/// The write-mask channels in the order both sides number them: red, green, blue, alpha.
const WRITE_CHANNELS: [wgpu::ColorWrites; 4] = [
    wgpu::ColorWrites::RED,
    wgpu::ColorWrites::GREEN,
    wgpu::ColorWrites::BLUE,
    wgpu::ColorWrites::ALPHA,
];

/// Colour write masks.
pub fn color_writes(w: ColorWrites) -> wgpu::ColorWrites {
    let mut out = wgpu::ColorWrites::empty();
    for (i, flag) in WRITE_CHANNELS.into_iter().enumerate() {
        if w.writes(i) {
            out |= flag;
        }
    }
    out
}

/// Colour write masks, wgpu to rastra.
pub fn color_writes_from(w: wgpu::ColorWrites) -> ColorWrites {
    let rastra_flags = [
        ColorWrites::RED,
        ColorWrites::GREEN,
        ColorWrites::BLUE,
        ColorWrites::ALPHA,
    ];
    WRITE_CHANNELS
        .into_iter()
        .zip(rastra_flags)
        .filter(|(flag, _)| w.contains(*flag))
        .fold(ColorWrites::NONE, |acc, (_, r)| acc | r)
}

/// Buffer usage flags, pairwise.
const BUFFER_USAGES: [(BufferUsages, wgpu::BufferUsages); 10] = [
    (BufferUsages::MAP_READ, wgpu::BufferUsages::MAP_READ),
    (BufferUsages::MAP_WRITE, wgpu::BufferUsages::MAP_WRITE),
    (BufferUsages::COPY_SRC, wgpu::BufferUsages::COPY_SRC),
    (BufferUsages::COPY_DST, wgpu::BufferUsages::COPY_DST),
    (BufferUsages::INDEX, wgpu::BufferUsages::INDEX),
    (BufferUsages::VERTEX, wgpu::BufferUsages::VERTEX),
    (BufferUsages::UNIFORM, wgpu::BufferUsages::UNIFORM),
    (BufferUsages::STORAGE, wgpu::BufferUsages::STORAGE),
    (BufferUsages::INDIRECT, wgpu::BufferUsages::INDIRECT),
    (
        BufferUsages::QUERY_RESOLVE,
        wgpu::BufferUsages::QUERY_RESOLVE,
    ),
];

/// Buffer usages.
pub fn buffer_usages(u: BufferUsages) -> wgpu::BufferUsages {
    BUFFER_USAGES
        .iter()
        .filter(|(r, _)| u.contains(*r))
        .fold(wgpu::BufferUsages::empty(), |acc, (_, w)| acc | *w)
}

/// Buffer usages, wgpu to rastra; Err names the first flag rastra does not know.
pub fn buffer_usages_from(u: wgpu::BufferUsages) -> Result<BufferUsages, wgpu::BufferUsages> {
    let known = BUFFER_USAGES
        .iter()
        .fold(wgpu::BufferUsages::empty(), |acc, (_, w)| acc | *w);
    let unknown = u - known;
    if !unknown.is_empty() {
        return Err(unknown);
    }
    Ok(BUFFER_USAGES
        .iter()
        .filter(|(_, w)| u.contains(*w))
        .fold(BufferUsages::empty(), |acc, (r, _)| acc | *r))
}

/// Texture usage flags, pairwise.
const TEXTURE_USAGES: [(TextureUsages, wgpu::TextureUsages); 5] = [
    (TextureUsages::COPY_SRC, wgpu::TextureUsages::COPY_SRC),
    (TextureUsages::COPY_DST, wgpu::TextureUsages::COPY_DST),
    (
        TextureUsages::TEXTURE_BINDING,
        wgpu::TextureUsages::TEXTURE_BINDING,
    ),
    (
        TextureUsages::STORAGE_BINDING,
        wgpu::TextureUsages::STORAGE_BINDING,
    ),
    (
        TextureUsages::RENDER_ATTACHMENT,
        wgpu::TextureUsages::RENDER_ATTACHMENT,
    ),
];

/// Texture usages, wgpu to rastra; Err names the flags rastra does not know.
pub fn texture_usages_from(u: wgpu::TextureUsages) -> Result<TextureUsages, wgpu::TextureUsages> {
    let known = TEXTURE_USAGES
        .iter()
        .fold(wgpu::TextureUsages::empty(), |acc, (_, w)| acc | *w);
    let unknown = u - known;
    if !unknown.is_empty() {
        return Err(unknown);
    }
    Ok(TEXTURE_USAGES
        .iter()
        .filter(|(_, w)| u.contains(*w))
        .fold(TextureUsages::empty(), |acc, (r, _)| acc | *r))
}

/// Clear colours and blend constants.
pub fn color(c: Color) -> wgpu::Color {
    wgpu::Color {
        r: c.r,
        g: c.g,
        b: c.b,
        a: c.a,
    }
}

/// Clear colours and blend constants, wgpu to rastra.
pub fn color_from(c: wgpu::Color) -> Color {
    Color {
        r: c.r,
        g: c.g,
        b: c.b,
        a: c.a,
    }
}

/// Border colours (wgpu's `Zero` is transparent black for every format rastra samples).
pub fn border_color(b: rastra::BorderColor) -> wgpu::SamplerBorderColor {
    match b {
        rastra::BorderColor::TransparentBlack => wgpu::SamplerBorderColor::TransparentBlack,
        rastra::BorderColor::OpaqueBlack => wgpu::SamplerBorderColor::OpaqueBlack,
        rastra::BorderColor::OpaqueWhite => wgpu::SamplerBorderColor::OpaqueWhite,
    }
}

/// Border colours, wgpu to rastra.
pub fn border_color_from(b: Option<wgpu::SamplerBorderColor>) -> rastra::BorderColor {
    match b {
        None
        | Some(wgpu::SamplerBorderColor::TransparentBlack | wgpu::SamplerBorderColor::Zero) => {
            rastra::BorderColor::TransparentBlack
        }
        Some(wgpu::SamplerBorderColor::OpaqueBlack) => rastra::BorderColor::OpaqueBlack,
        Some(wgpu::SamplerBorderColor::OpaqueWhite) => rastra::BorderColor::OpaqueWhite,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_masks_keep_their_channels() {
        for w in [
            ColorWrites::ALL,
            ColorWrites::NONE,
            ColorWrites::RED | ColorWrites::ALPHA,
        ] {
            assert_eq!(color_writes_from(color_writes(w)), w);
        }
        assert_eq!(
            color_writes(ColorWrites::RED | ColorWrites::ALPHA),
            wgpu::ColorWrites::RED | wgpu::ColorWrites::ALPHA
        );
    }

    #[test]
    fn formats_round_trip_and_unknown_ones_are_none() {
        for f in [
            TextureFormat::Rgba8UnormSrgb,
            TextureFormat::Depth24PlusStencil8,
            TextureFormat::Bc7RgbaUnorm,
            TextureFormat::Astc {
                block: rastra::AstcBlock::B10x6,
                channel: rastra::AstcChannel::UnormSrgb,
            },
        ] {
            assert_eq!(texture_format_from(texture_format(f)), Some(f));
        }
        assert_eq!(texture_format_from(wgpu::TextureFormat::R64Uint), None);
        assert_eq!(vertex_format_from(wgpu::VertexFormat::Float64x2), None);
    }

    #[test]
    fn usages_round_trip() {
        let u = BufferUsages::VERTEX | BufferUsages::MAP_READ | BufferUsages::COPY_DST;
        assert_eq!(buffer_usages_from(buffer_usages(u)), Ok(u));
    }
}
