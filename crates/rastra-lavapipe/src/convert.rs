//! rastra state → wgpu state: one function per vocabulary (formats, vertex fetch, primitive
//! assembly, depth, blending, usages). rastra's state types follow WebGPU's one to one, so
//! every match here is a rename; a variant added on either side fails to compile here
//! rather than mapping silently to the wrong thing.

use rastra::{
    BlendComponent, BlendFactor, BlendOperation, BlendState, BufferUsages, Color, ColorWrites,
    CompareFunction, CullMode, DepthStencilState, FrontFace, IndexFormat, PrimitiveState,
    PrimitiveTopology, TextureFormat, VertexAttribute, VertexFormat, VertexStepMode,
};

/// Texture formats.
pub fn texture_format(f: TextureFormat) -> wgpu::TextureFormat {
    use wgpu::TextureFormat as W;
    match f {
        TextureFormat::R8Unorm => W::R8Unorm,
        TextureFormat::Rg8Unorm => W::Rg8Unorm,
        TextureFormat::Rgba8Unorm => W::Rgba8Unorm,
        TextureFormat::Rgba8UnormSrgb => W::Rgba8UnormSrgb,
        TextureFormat::Bgra8Unorm => W::Bgra8Unorm,
        TextureFormat::Bgra8UnormSrgb => W::Bgra8UnormSrgb,
        TextureFormat::R16Float => W::R16Float,
        TextureFormat::Rg16Float => W::Rg16Float,
        TextureFormat::Rgba16Float => W::Rgba16Float,
        TextureFormat::R32Float => W::R32Float,
        TextureFormat::Rg32Float => W::Rg32Float,
        TextureFormat::Rgba32Float => W::Rgba32Float,
        TextureFormat::Depth16Unorm => W::Depth16Unorm,
        TextureFormat::Depth24Plus => W::Depth24Plus,
        TextureFormat::Depth24PlusStencil8 => W::Depth24PlusStencil8,
        TextureFormat::Depth32Float => W::Depth32Float,
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
