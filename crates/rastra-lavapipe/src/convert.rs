//! rastra frame state → wgpu descriptors for running frames on lavapipe. The one-to-one
//! vocabulary (formats, factors, modes) comes from `rastra_wgpu::convert`, the single
//! table both directions share; what is here assembles whole descriptors and the choices
//! only the reference runner makes (no mapping usages, strip index formats).

use rastra::{
    BufferUsages, DepthStencilState, IndexFormat, PrimitiveState, PrimitiveTopology,
    VertexAttribute,
};
pub use rastra_wgpu::convert::{
    address_mode, blend_state, color, color_writes, compare_function, cull_mode, filter_mode,
    front_face, index_format, mipmap_filter, step_mode, texture_aspect, texture_dimension,
    texture_format, topology, vertex_format, view_dimension,
};

/// One vertex attribute.
pub fn vertex_attribute(a: &VertexAttribute) -> wgpu::VertexAttribute {
    wgpu::VertexAttribute {
        format: vertex_format(a.format),
        offset: a.offset,
        shader_location: a.shader_location,
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
        topology: topology(p.topology),
        strip_index_format: strip_index.map(index_format),
        front_face: front_face(p.front_face),
        cull_mode: cull_mode(p.cull_mode),
        unclipped_depth: p.unclipped_depth,
        polygon_mode: wgpu::PolygonMode::Fill,
        conservative: false,
    }
}

/// Depth test, write and bias (no stencil: rastra has none yet).
pub fn depth_stencil_state(d: &DepthStencilState) -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format: texture_format(d.format),
        depth_write_enabled: Some(d.depth_write_enabled),
        depth_compare: Some(compare_function(d.depth_compare)),
        stencil: wgpu::StencilState::default(),
        bias: wgpu::DepthBiasState {
            constant: d.bias.constant,
            slope_scale: d.bias.slope_scale,
            clamp: d.bias.clamp,
        },
    }
}

/// Buffer usages the frame's buffers need on wgpu. Mapping flags are dropped (the frame's
/// buffers are created initialised and never mapped; wgpu forbids MAP_* with most other
/// usages) and COPY_DST is not needed.
pub fn buffer_usages(u: BufferUsages) -> wgpu::BufferUsages {
    rastra_wgpu::convert::buffer_usages(u)
        - (wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::MAP_WRITE)
}

/// A view descriptor.
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

/// A sampler descriptor.
pub fn sampler(s: &rastra::SamplerDescriptor) -> wgpu::SamplerDescriptor<'static> {
    wgpu::SamplerDescriptor {
        label: None,
        address_mode_u: address_mode(s.address_mode_u),
        address_mode_v: address_mode(s.address_mode_v),
        address_mode_w: address_mode(s.address_mode_w),
        mag_filter: filter_mode(s.mag_filter),
        min_filter: filter_mode(s.min_filter),
        mipmap_filter: mipmap_filter(s.mipmap_filter),
        lod_min_clamp: s.lod_min_clamp,
        lod_max_clamp: s.lod_max_clamp,
        compare: s.compare.map(compare_function),
        anisotropy_clamp: s.max_anisotropy,
        border_color: Some(rastra_wgpu::convert::border_color(s.border_color)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usages_drop_mapping() {
        let u = buffer_usages(BufferUsages::VERTEX | BufferUsages::MAP_READ);
        assert_eq!(u, wgpu::BufferUsages::VERTEX);
    }
}
