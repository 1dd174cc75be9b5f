//! Render pipelines: shaders plus fixed-function state, validated and linked once
//! (`rastra_pipeline::RenderPipeline::new`) so draws only follow precomputed tables.

use std::sync::Arc;

use rastra_shader::Stage;

use crate::error::{Error, validation};
use crate::shader::ShaderModule;
use crate::{
    ColorTargetState, DepthStencilState, MultisampleState, PrimitiveState, VertexBufferLayout,
};

/// The vertex stage of a pipeline.
#[derive(Clone, Debug)]
pub struct VertexState<'a> {
    pub module: &'a ShaderModule,
    /// None picks the module's only vertex entry point.
    pub entry_point: Option<&'a str>,
    pub buffers: &'a [VertexBufferLayout],
    /// Values of pipeline-overridable constants, by `@id` or name.
    pub constants: &'a [(&'a str, f64)],
}

/// The fragment stage of a pipeline.
#[derive(Clone, Debug)]
pub struct FragmentState<'a> {
    pub module: &'a ShaderModule,
    pub entry_point: Option<&'a str>,
    pub targets: &'a [Option<ColorTargetState>],
    /// Values of pipeline-overridable constants, by `@id` or name.
    pub constants: &'a [(&'a str, f64)],
}

/// Creation parameters of a render pipeline.
#[derive(Clone, Debug)]
pub struct RenderPipelineDescriptor<'a> {
    pub label: Option<&'a str>,
    pub vertex: VertexState<'a>,
    pub primitive: PrimitiveState,
    pub depth_stencil: Option<DepthStencilState>,
    pub multisample: MultisampleState,
    pub fragment: Option<FragmentState<'a>>,
}

/// A linked render pipeline.
#[derive(Clone, Debug)]
pub struct RenderPipeline(pub(crate) Arc<rastra_pipeline::RenderPipeline>);

/// Most vertex buffers a pipeline may use (WebGPU `maxVertexBuffers`).
const MAX_VERTEX_BUFFERS: usize = 8;
/// Most colour targets (WebGPU `maxColorAttachments`).
const MAX_COLOR_TARGETS: usize = 8;
/// Bind groups a pipeline may use (WebGPU `maxBindGroups`).
pub(crate) const MAX_BIND_GROUPS: u32 = 4;

impl RenderPipeline {
    pub(crate) fn new(desc: &RenderPipelineDescriptor<'_>) -> Result<RenderPipeline, Error> {
        if desc.vertex.buffers.len() > MAX_VERTEX_BUFFERS {
            return validation(format!(
                "{} vertex buffers (the limit is {MAX_VERTEX_BUFFERS})",
                desc.vertex.buffers.len()
            ));
        }
        let vertex = desc.vertex.module.program(
            desc.vertex.entry_point,
            Stage::Vertex,
            desc.vertex.constants,
        )?;
        let (fragment, targets) = match &desc.fragment {
            Some(f) => {
                if f.targets.len() > MAX_COLOR_TARGETS {
                    return validation(format!(
                        "{} colour targets (the limit is {MAX_COLOR_TARGETS})",
                        f.targets.len()
                    ));
                }
                (
                    Some(
                        f.module
                            .program(f.entry_point, Stage::Fragment, f.constants)?,
                    ),
                    f.targets.to_vec(),
                )
            }
            None => (None, Vec::new()),
        };
        for program in std::iter::once(&vertex).chain(fragment.as_ref()) {
            crate::binding_check::check_group_limit(program)?;
        }
        if let Some(f) = &fragment {
            for a in &vertex.bindings {
                if let Some(b) = f
                    .bindings
                    .iter()
                    .find(|b| b.group == a.group && b.binding == a.binding)
                    && a.kind != b.kind
                {
                    return validation(format!(
                        "@group({}) @binding({}) is {:?} in the vertex shader and {:?} in the fragment shader",
                        a.group, a.binding, a.kind, b.kind
                    ));
                }
            }
        }
        let linked = rastra_pipeline::RenderPipeline::new(rastra_pipeline::RenderPipelineDesc {
            vertex,
            vertex_buffers: desc.vertex.buffers.to_vec(),
            fragment,
            targets,
            primitive: desc.primitive,
            depth_stencil: desc.depth_stencil,
            multisample: desc.multisample,
        })?;
        Ok(RenderPipeline(Arc::new(linked)))
    }
}

impl RenderPipeline {
    /// The resources the pipeline's shaders use (for automatic bind group layouts).
    pub fn shader_bindings(&self) -> Vec<crate::ShaderBinding> {
        let d = &self.0.desc;
        let mut programs = vec![d.vertex.as_ref()];
        programs.extend(d.fragment.as_deref());
        crate::binding::shader_bindings(&programs)
    }
}
