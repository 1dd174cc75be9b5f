//! rastra state → wgpu state: one function per vocabulary (formats, vertex fetch, primitive
//! assembly, depth, blending, usages). rastra's state types follow WebGPU's one to one, so
//! every match here is a rename; a variant added on either side fails to compile here
//! rather than mapping silently to the wrong thing.

use rastra::{
    BlendComponent, BlendFactor, BlendOperation, BlendState, BufferUsages, Color, ColorWrites,
    CompareFunction, CullMode, DepthStencilState, FrontFace, IndexFormat, PrimitiveState,
    PrimitiveTopology, TextureFormat, VertexAttribute, VertexFormat, VertexStepMode,
};

/// Texture formats (every format rastra has; wgpu names them the same way).
pub fn texture_format(f: TextureFormat) -> wgpu::TextureFormat {
    use TextureFormat as F;
    use rastra::{AstcBlock as B, AstcChannel as C};
    use wgpu::TextureFormat as W;
    match f {
        F::R8Unorm => W::R8Unorm,
        F::Rg8Unorm => W::Rg8Unorm,
        F::Rgba8Unorm => W::Rgba8Unorm,
        F::Rgba8UnormSrgb => W::Rgba8UnormSrgb,
        F::Bgra8Unorm => W::Bgra8Unorm,
        F::Bgra8UnormSrgb => W::Bgra8UnormSrgb,
        F::R16Float => W::R16Float,
        F::Rg16Float => W::Rg16Float,
        F::Rgba16Float => W::Rgba16Float,
        F::R32Float => W::R32Float,
        F::Rg32Float => W::Rg32Float,
        F::Rgba32Float => W::Rgba32Float,
        F::Depth16Unorm => W::Depth16Unorm,
        F::Depth24Plus => W::Depth24Plus,
        F::Depth24PlusStencil8 => W::Depth24PlusStencil8,
        F::Depth32Float => W::Depth32Float,
        F::R8Snorm => W::R8Snorm,
        F::R8Uint => W::R8Uint,
        F::R8Sint => W::R8Sint,
        F::Rg8Snorm => W::Rg8Snorm,
        F::Rg8Uint => W::Rg8Uint,
        F::Rg8Sint => W::Rg8Sint,
        F::Rgba8Snorm => W::Rgba8Snorm,
        F::Rgba8Uint => W::Rgba8Uint,
        F::Rgba8Sint => W::Rgba8Sint,
        F::R16Uint => W::R16Uint,
        F::R16Sint => W::R16Sint,
        F::R16Unorm => W::R16Unorm,
        F::R16Snorm => W::R16Snorm,
        F::Rg16Uint => W::Rg16Uint,
        F::Rg16Sint => W::Rg16Sint,
        F::Rg16Unorm => W::Rg16Unorm,
        F::Rg16Snorm => W::Rg16Snorm,
        F::Rgba16Uint => W::Rgba16Uint,
        F::Rgba16Sint => W::Rgba16Sint,
        F::Rgba16Unorm => W::Rgba16Unorm,
        F::Rgba16Snorm => W::Rgba16Snorm,
        F::R32Uint => W::R32Uint,
        F::R32Sint => W::R32Sint,
        F::Rg32Uint => W::Rg32Uint,
        F::Rg32Sint => W::Rg32Sint,
        F::Rgba32Uint => W::Rgba32Uint,
        F::Rgba32Sint => W::Rgba32Sint,
        F::Rgb9e5Ufloat => W::Rgb9e5Ufloat,
        F::Rgb10a2Uint => W::Rgb10a2Uint,
        F::Rgb10a2Unorm => W::Rgb10a2Unorm,
        F::Rg11b10Ufloat => W::Rg11b10Ufloat,
        F::Stencil8 => W::Stencil8,
        F::Depth32FloatStencil8 => W::Depth32FloatStencil8,
        F::Bc1RgbaUnorm => W::Bc1RgbaUnorm,
        F::Bc1RgbaUnormSrgb => W::Bc1RgbaUnormSrgb,
        F::Bc2RgbaUnorm => W::Bc2RgbaUnorm,
        F::Bc2RgbaUnormSrgb => W::Bc2RgbaUnormSrgb,
        F::Bc3RgbaUnorm => W::Bc3RgbaUnorm,
        F::Bc3RgbaUnormSrgb => W::Bc3RgbaUnormSrgb,
        F::Bc4RUnorm => W::Bc4RUnorm,
        F::Bc4RSnorm => W::Bc4RSnorm,
        F::Bc5RgUnorm => W::Bc5RgUnorm,
        F::Bc5RgSnorm => W::Bc5RgSnorm,
        F::Bc6hRgbUfloat => W::Bc6hRgbUfloat,
        F::Bc6hRgbFloat => W::Bc6hRgbFloat,
        F::Bc7RgbaUnorm => W::Bc7RgbaUnorm,
        F::Bc7RgbaUnormSrgb => W::Bc7RgbaUnormSrgb,
        F::Etc2Rgb8Unorm => W::Etc2Rgb8Unorm,
        F::Etc2Rgb8UnormSrgb => W::Etc2Rgb8UnormSrgb,
        F::Etc2Rgb8A1Unorm => W::Etc2Rgb8A1Unorm,
        F::Etc2Rgb8A1UnormSrgb => W::Etc2Rgb8A1UnormSrgb,
        F::Etc2Rgba8Unorm => W::Etc2Rgba8Unorm,
        F::Etc2Rgba8UnormSrgb => W::Etc2Rgba8UnormSrgb,
        F::EacR11Unorm => W::EacR11Unorm,
        F::EacR11Snorm => W::EacR11Snorm,
        F::EacRg11Unorm => W::EacRg11Unorm,
        F::EacRg11Snorm => W::EacRg11Snorm,
        F::Astc { block, channel } => W::Astc {
            block: match block {
                B::B4x4 => wgpu::AstcBlock::B4x4,
                B::B5x4 => wgpu::AstcBlock::B5x4,
                B::B5x5 => wgpu::AstcBlock::B5x5,
                B::B6x5 => wgpu::AstcBlock::B6x5,
                B::B6x6 => wgpu::AstcBlock::B6x6,
                B::B8x5 => wgpu::AstcBlock::B8x5,
                B::B8x6 => wgpu::AstcBlock::B8x6,
                B::B8x8 => wgpu::AstcBlock::B8x8,
                B::B10x5 => wgpu::AstcBlock::B10x5,
                B::B10x6 => wgpu::AstcBlock::B10x6,
                B::B10x8 => wgpu::AstcBlock::B10x8,
                B::B10x10 => wgpu::AstcBlock::B10x10,
                B::B12x10 => wgpu::AstcBlock::B12x10,
                B::B12x12 => wgpu::AstcBlock::B12x12,
            },
            channel: match channel {
                C::Unorm => wgpu::AstcChannel::Unorm,
                C::UnormSrgb => wgpu::AstcChannel::UnormSrgb,
            },
        },
    }
}

/// Vertex attribute formats.
pub fn vertex_format(f: VertexFormat) -> wgpu::VertexFormat {
    use wgpu::VertexFormat as W;
    match f {
        VertexFormat::Uint8x2 => W::Uint8x2,
        VertexFormat::Uint8x4 => W::Uint8x4,
        VertexFormat::Sint8x2 => W::Sint8x2,
        VertexFormat::Sint8x4 => W::Sint8x4,
        VertexFormat::Unorm8x2 => W::Unorm8x2,
        VertexFormat::Unorm8x4 => W::Unorm8x4,
        VertexFormat::Snorm8x2 => W::Snorm8x2,
        VertexFormat::Snorm8x4 => W::Snorm8x4,
        VertexFormat::Uint16x2 => W::Uint16x2,
        VertexFormat::Uint16x4 => W::Uint16x4,
        VertexFormat::Sint16x2 => W::Sint16x2,
        VertexFormat::Sint16x4 => W::Sint16x4,
        VertexFormat::Unorm16x2 => W::Unorm16x2,
        VertexFormat::Unorm16x4 => W::Unorm16x4,
        VertexFormat::Snorm16x2 => W::Snorm16x2,
        VertexFormat::Snorm16x4 => W::Snorm16x4,
        VertexFormat::Float16x2 => W::Float16x2,
        VertexFormat::Float16x4 => W::Float16x4,
        VertexFormat::Float32 => W::Float32,
        VertexFormat::Float32x2 => W::Float32x2,
        VertexFormat::Float32x3 => W::Float32x3,
        VertexFormat::Float32x4 => W::Float32x4,
        VertexFormat::Uint32 => W::Uint32,
        VertexFormat::Uint32x2 => W::Uint32x2,
        VertexFormat::Uint32x3 => W::Uint32x3,
        VertexFormat::Uint32x4 => W::Uint32x4,
        VertexFormat::Sint32 => W::Sint32,
        VertexFormat::Sint32x2 => W::Sint32x2,
        VertexFormat::Sint32x3 => W::Sint32x3,
        VertexFormat::Sint32x4 => W::Sint32x4,
        VertexFormat::Unorm10_10_10_2 => W::Unorm10_10_10_2,
        VertexFormat::Unorm8x4Bgra => W::Unorm8x4Bgra,
    }
}

/// One vertex attribute.
pub fn vertex_attribute(a: &VertexAttribute) -> wgpu::VertexAttribute {
    wgpu::VertexAttribute {
        format: vertex_format(a.format),
        offset: a.offset,
        shader_location: a.shader_location,
    }
}

/// Per-vertex or per-instance stepping.
pub fn step_mode(m: VertexStepMode) -> wgpu::VertexStepMode {
    match m {
        VertexStepMode::Vertex => wgpu::VertexStepMode::Vertex,
        VertexStepMode::Instance => wgpu::VertexStepMode::Instance,
    }
}

/// Index formats.
pub fn index_format(f: IndexFormat) -> wgpu::IndexFormat {
    match f {
        IndexFormat::Uint16 => wgpu::IndexFormat::Uint16,
        IndexFormat::Uint32 => wgpu::IndexFormat::Uint32,
    }
}

/// True for the strip topologies, whose pipelines must name the index format (WebGPU's
/// `stripIndexFormat`) when drawn indexed, so the driver knows the primitive-restart value.
pub fn is_strip(t: PrimitiveTopology) -> bool {
    matches!(
        t,
        PrimitiveTopology::LineStrip | PrimitiveTopology::TriangleStrip
    )
}

/// Primitive assembly and culling; `strip_index` is the index format of the indexed draws
/// that use the pipeline when its topology is a strip (None otherwise).
pub fn primitive_state(
    p: PrimitiveState,
    strip_index: Option<IndexFormat>,
) -> wgpu::PrimitiveState {
    wgpu::PrimitiveState {
        topology: match p.topology {
            PrimitiveTopology::PointList => wgpu::PrimitiveTopology::PointList,
            PrimitiveTopology::LineList => wgpu::PrimitiveTopology::LineList,
            PrimitiveTopology::LineStrip => wgpu::PrimitiveTopology::LineStrip,
            PrimitiveTopology::TriangleList => wgpu::PrimitiveTopology::TriangleList,
            PrimitiveTopology::TriangleStrip => wgpu::PrimitiveTopology::TriangleStrip,
        },
        strip_index_format: strip_index.map(index_format),
        front_face: match p.front_face {
            FrontFace::Ccw => wgpu::FrontFace::Ccw,
            FrontFace::Cw => wgpu::FrontFace::Cw,
        },
        cull_mode: match p.cull_mode {
            CullMode::None => None,
            CullMode::Front => Some(wgpu::Face::Front),
            CullMode::Back => Some(wgpu::Face::Back),
        },
        unclipped_depth: p.unclipped_depth,
        polygon_mode: wgpu::PolygonMode::Fill,
        conservative: false,
    }
}

/// Depth comparison functions.
pub fn compare_function(c: CompareFunction) -> wgpu::CompareFunction {
    use wgpu::CompareFunction as W;
    match c {
        CompareFunction::Never => W::Never,
        CompareFunction::Less => W::Less,
        CompareFunction::Equal => W::Equal,
        CompareFunction::LessEqual => W::LessEqual,
        CompareFunction::Greater => W::Greater,
        CompareFunction::NotEqual => W::NotEqual,
        CompareFunction::GreaterEqual => W::GreaterEqual,
        CompareFunction::Always => W::Always,
    }
}

/// Depth test and write (no stencil, no bias: rastra has neither yet).
pub fn depth_stencil_state(d: &DepthStencilState) -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format: texture_format(d.format),
        depth_write_enabled: Some(d.depth_write_enabled),
        depth_compare: Some(compare_function(d.depth_compare)),
        stencil: wgpu::StencilState::default(),
        bias: wgpu::DepthBiasState::default(),
    }
}

/// Blend factors.
pub fn blend_factor(f: BlendFactor) -> wgpu::BlendFactor {
    use wgpu::BlendFactor as W;
    match f {
        BlendFactor::Zero => W::Zero,
        BlendFactor::One => W::One,
        BlendFactor::Src => W::Src,
        BlendFactor::OneMinusSrc => W::OneMinusSrc,
        BlendFactor::SrcAlpha => W::SrcAlpha,
        BlendFactor::OneMinusSrcAlpha => W::OneMinusSrcAlpha,
        BlendFactor::Dst => W::Dst,
        BlendFactor::OneMinusDst => W::OneMinusDst,
        BlendFactor::DstAlpha => W::DstAlpha,
        BlendFactor::OneMinusDstAlpha => W::OneMinusDstAlpha,
        BlendFactor::SrcAlphaSaturated => W::SrcAlphaSaturated,
        BlendFactor::Constant => W::Constant,
        BlendFactor::OneMinusConstant => W::OneMinusConstant,
    }
}

/// Blend operations.
pub fn blend_operation(o: BlendOperation) -> wgpu::BlendOperation {
    use wgpu::BlendOperation as W;
    match o {
        BlendOperation::Add => W::Add,
        BlendOperation::Subtract => W::Subtract,
        BlendOperation::ReverseSubtract => W::ReverseSubtract,
        BlendOperation::Min => W::Min,
        BlendOperation::Max => W::Max,
    }
}

fn blend_component(c: BlendComponent) -> wgpu::BlendComponent {
    wgpu::BlendComponent {
        src_factor: blend_factor(c.src_factor),
        dst_factor: blend_factor(c.dst_factor),
        operation: blend_operation(c.operation),
    }
}

/// Blend state of a colour target.
pub fn blend_state(b: BlendState) -> wgpu::BlendState {
    wgpu::BlendState {
        color: blend_component(b.color),
        alpha: blend_component(b.alpha),
    }
}

/// Colour write masks (same bit order: red, green, blue, alpha).
pub fn color_writes(w: ColorWrites) -> wgpu::ColorWrites {
    let mut out = wgpu::ColorWrites::empty();
    for (i, flag) in [
        wgpu::ColorWrites::RED,
        wgpu::ColorWrites::GREEN,
        wgpu::ColorWrites::BLUE,
        wgpu::ColorWrites::ALPHA,
    ]
    .into_iter()
    .enumerate()
    {
        if w.writes(i) {
            out |= flag;
        }
    }
    out
}

/// Buffer usages the frame's buffers need on wgpu. Mapping flags are dropped (the frame's
/// buffers are created initialised and never mapped; wgpu forbids MAP_* with most other
/// usages) and COPY_DST is not needed.
pub fn buffer_usages(u: BufferUsages) -> wgpu::BufferUsages {
    let mut out = wgpu::BufferUsages::empty();
    for (r, w) in [
        (BufferUsages::COPY_SRC, wgpu::BufferUsages::COPY_SRC),
        (BufferUsages::COPY_DST, wgpu::BufferUsages::COPY_DST),
        (BufferUsages::INDEX, wgpu::BufferUsages::INDEX),
        (BufferUsages::VERTEX, wgpu::BufferUsages::VERTEX),
        (BufferUsages::UNIFORM, wgpu::BufferUsages::UNIFORM),
        (BufferUsages::STORAGE, wgpu::BufferUsages::STORAGE),
        (BufferUsages::INDIRECT, wgpu::BufferUsages::INDIRECT),
    ] {
        if u.contains(r) {
            out |= w;
        }
    }
    out
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

pub fn texture_dimension(d: rastra::TextureDimension) -> wgpu::TextureDimension {
    match d {
        rastra::TextureDimension::D1 => wgpu::TextureDimension::D1,
        rastra::TextureDimension::D2 => wgpu::TextureDimension::D2,
        rastra::TextureDimension::D3 => wgpu::TextureDimension::D3,
    }
}

pub fn view_dimension(d: rastra::TextureViewDimension) -> wgpu::TextureViewDimension {
    use rastra::TextureViewDimension as V;
    match d {
        V::D1 => wgpu::TextureViewDimension::D1,
        V::D2 => wgpu::TextureViewDimension::D2,
        V::D2Array => wgpu::TextureViewDimension::D2Array,
        V::Cube => wgpu::TextureViewDimension::Cube,
        V::CubeArray => wgpu::TextureViewDimension::CubeArray,
        V::D3 => wgpu::TextureViewDimension::D3,
    }
}

pub fn texture_aspect(a: rastra::TextureAspect) -> wgpu::TextureAspect {
    match a {
        rastra::TextureAspect::All => wgpu::TextureAspect::All,
        rastra::TextureAspect::DepthOnly => wgpu::TextureAspect::DepthOnly,
        rastra::TextureAspect::StencilOnly => wgpu::TextureAspect::StencilOnly,
    }
}

pub fn texture_view(v: &rastra::TextureViewDescriptor) -> wgpu::TextureViewDescriptor<'static> {
    wgpu::TextureViewDescriptor {
        label: None,
        format: v.format.map(texture_format),
        dimension: v.dimension.map(view_dimension),
        usage: None,
        aspect: texture_aspect(v.aspect),
        base_mip_level: v.base_mip_level,
        mip_level_count: v.mip_level_count,
        base_array_layer: v.base_array_layer,
        array_layer_count: v.array_layer_count,
    }
}

pub fn address_mode(m: rastra::AddressMode) -> wgpu::AddressMode {
    match m {
        rastra::AddressMode::Repeat => wgpu::AddressMode::Repeat,
        rastra::AddressMode::MirrorRepeat => wgpu::AddressMode::MirrorRepeat,
        rastra::AddressMode::ClampToEdge => wgpu::AddressMode::ClampToEdge,
        rastra::AddressMode::ClampToBorder => wgpu::AddressMode::ClampToBorder,
    }
}

pub fn filter_mode(f: rastra::FilterMode) -> wgpu::FilterMode {
    match f {
        rastra::FilterMode::Nearest => wgpu::FilterMode::Nearest,
        rastra::FilterMode::Linear => wgpu::FilterMode::Linear,
    }
}

pub fn sampler(s: &rastra::SamplerDescriptor) -> wgpu::SamplerDescriptor<'static> {
    wgpu::SamplerDescriptor {
        label: None,
        address_mode_u: address_mode(s.address_mode_u),
        address_mode_v: address_mode(s.address_mode_v),
        address_mode_w: address_mode(s.address_mode_w),
        mag_filter: filter_mode(s.mag_filter),
        min_filter: filter_mode(s.min_filter),
        mipmap_filter: match s.mipmap_filter {
            rastra::FilterMode::Nearest => wgpu::MipmapFilterMode::Nearest,
            rastra::FilterMode::Linear => wgpu::MipmapFilterMode::Linear,
        },
        lod_min_clamp: s.lod_min_clamp,
        lod_max_clamp: s.lod_max_clamp,
        compare: s.compare.map(compare_function),
        anisotropy_clamp: s.max_anisotropy,
        border_color: match s.border_color {
            rastra::BorderColor::TransparentBlack => {
                Some(wgpu::SamplerBorderColor::TransparentBlack)
            }
            rastra::BorderColor::OpaqueBlack => Some(wgpu::SamplerBorderColor::OpaqueBlack),
            rastra::BorderColor::OpaqueWhite => Some(wgpu::SamplerBorderColor::OpaqueWhite),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_masks_keep_their_channels() {
        assert_eq!(color_writes(ColorWrites::ALL), wgpu::ColorWrites::ALL);
        assert_eq!(color_writes(ColorWrites::NONE), wgpu::ColorWrites::empty());
        assert_eq!(
            color_writes(ColorWrites::RED | ColorWrites::ALPHA),
            wgpu::ColorWrites::RED | wgpu::ColorWrites::ALPHA
        );
    }

    #[test]
    fn usages_drop_mapping() {
        let u = buffer_usages(BufferUsages::VERTEX | BufferUsages::MAP_READ);
        assert_eq!(u, wgpu::BufferUsages::VERTEX);
    }
}
