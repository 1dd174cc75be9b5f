//! Shader modules (WGSL, GLSL, SPIR-V through rastra's naga front ends) and render and
//! compute pipelines, with their explicit or automatic layouts.
//!
//! A module that fails to compile is reported at creation (with line and column in its
//! compilation info) and stays invalid. Pipeline state rastra lacks (stencil tests, depth
//! bias, polygon modes other than fill, conservative rasterization, formats rastra does
//! not know) is reported as unsupported rather than ignored.

use std::collections::BTreeMap;
use std::future::ready;
use std::pin::Pin;
use std::sync::Arc;

use wgpu::custom::*;

use crate::binding::{
    LayoutData, RastraBindGroupLayout, RastraPipelineLayout, auto_entry, entry_serves,
};
use crate::convert;
use crate::device::DeviceShared;
use crate::resource::format_from;

/// A wgpu shader module on rastra.
#[derive(Debug)]
pub struct RastraShaderModule {
    pub(crate) inner: Option<rastra::ShaderModule>,
    info: wgpu::CompilationInfo,
}

impl RastraShaderModule {
    pub(crate) fn new(device: &Arc<DeviceShared>, desc: wgpu::ShaderModuleDescriptor<'_>) -> Self {
        const CALL: &str = "Device::create_shader_module";
        let label = desc.label.unwrap_or("");
        let module = compile(device, desc.source);
        let info = match &module {
            Ok(_) => wgpu::CompilationInfo { messages: vec![] },
            Err(e) => wgpu::CompilationInfo {
                messages: vec![compilation_message(e)],
            },
        };
        RastraShaderModule {
            inner: device.check(CALL, label, module),
            info,
        }
    }

    pub(crate) fn unsupported(device: &Arc<DeviceShared>, label: &str, what: &str) -> Self {
        let e = rastra::Error::Unsupported(what.to_string());
        let info = wgpu::CompilationInfo {
            messages: vec![compilation_message(&e)],
        };
        device.report("Device::create_shader_module", label, e);
        RastraShaderModule { inner: None, info }
    }
}

fn compile(
    device: &DeviceShared,
    source: wgpu::ShaderSource<'_>,
) -> Result<rastra::ShaderModule, rastra::Error> {
    let create = |source| {
        device
            .device
            .create_shader_module(&rastra::ShaderModuleDescriptor {
                label: None,
                source,
            })
    };
    match source {
        wgpu::ShaderSource::Wgsl(text) => create(rastra::ShaderSource::Wgsl(&text)),
        wgpu::ShaderSource::Glsl {
            shader,
            stage,
            defines,
        } => {
            let stage = match stage {
                wgpu::naga::ShaderStage::Vertex => rastra::ShaderStage::Vertex,
                wgpu::naga::ShaderStage::Fragment => rastra::ShaderStage::Fragment,
                wgpu::naga::ShaderStage::Compute => rastra::ShaderStage::Compute,
                other => {
                    return Err(rastra::Error::Unsupported(format!("{other:?} shaders")));
                }
            };
            let source = with_defines(&shader, defines);
            create(rastra::ShaderSource::Glsl {
                source: &source,
                stage,
            })
        }
        wgpu::ShaderSource::SpirV(words) => {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            create(rastra::ShaderSource::SpirV(&bytes))
        }
        _ => Err(rastra::Error::Unsupported(
            "this kind of shader source (WGSL, GLSL and SPIR-V are supported)".into(),
        )),
    }
}

/// GLSL with `#define`s for `defines` inserted after the `#version` line (or first).
fn with_defines(source: &str, defines: &[(&str, &str)]) -> String {
    if defines.is_empty() {
        return source.to_string();
    }
    let block: String = defines
        .iter()
        .map(|(k, v)| format!("#define {k} {v}\n"))
        .collect();
    let version_end = source
        .lines()
        .scan(0usize, |at, line| {
            let start = *at;
            *at += line.len() + 1;
            Some((start, line))
        })
        .find(|(_, line)| line.trim_start().starts_with("#version"))
        .map(|(start, line)| (start + line.len() + 1).min(source.len()));
    match version_end {
        Some(end) => {
            let newline = if source[..end].ends_with('\n') {
                ""
            } else {
                "\n"
            };
            format!("{}{newline}{block}{}", &source[..end], &source[end..])
        }
        None => format!("{block}{source}"),
    }
}

fn compilation_message(e: &rastra::Error) -> wgpu::CompilationMessage {
    let location = match e {
        rastra::Error::Shader(rastra::CompileError::Source { line, column, .. }) if *line > 0 => {
            Some(wgpu::SourceLocation {
                line_number: *line,
                line_position: *column,
                offset: 0,
                length: 0,
            })
        }
        _ => None,
    };
    wgpu::CompilationMessage {
        message: e.to_string(),
        message_type: wgpu::CompilationMessageType::Error,
        location,
    }
}

impl ShaderModuleInterface for RastraShaderModule {
    fn get_compilation_info(&self) -> Pin<Box<dyn ShaderCompilationInfoFuture>> {
        Box::pin(ready(self.info.clone()))
    }
}

/// The bind group layouts of a pipeline: the explicit layout's, checked against what the
/// shaders use, or an automatic layout built from it.
fn pipeline_layouts(
    layout: Option<&wgpu::PipelineLayout>,
    bindings: &[rastra::ShaderBinding],
) -> Result<Vec<Option<Arc<LayoutData>>>, rastra::Error> {
    let Some(layout) = layout else {
        let mut groups: BTreeMap<u32, Vec<wgpu::BindGroupLayoutEntry>> = BTreeMap::new();
        for b in bindings {
            groups.entry(b.group).or_default().push(auto_entry(b));
        }
        let count = groups.keys().next_back().map_or(0, |g| g + 1);
        return Ok((0..count)
            .map(|g| {
                Some(Arc::new(LayoutData {
                    entries: groups.remove(&g).unwrap_or_default(),
                }))
            })
            .collect());
    };
    let Some(groups) = layout
        .as_custom::<RastraPipelineLayout>()
        .and_then(|l| l.groups.clone())
    else {
        return Err(rastra::Error::Validation(
            "the pipeline layout is invalid".into(),
        ));
    };
    for b in bindings {
        let entry = groups
            .get(b.group as usize)
            .and_then(Option::as_ref)
            .and_then(|g| g.entries.iter().find(|e| e.binding == b.binding));
        match entry {
            None => {
                return Err(rastra::Error::Validation(format!(
                    "the shaders use @group({}) @binding({}), which the pipeline layout lacks",
                    b.group, b.binding
                )));
            }
            Some(e) if !entry_serves(e, b) => {
                return Err(rastra::Error::Validation(format!(
                    "@group({}) @binding({}): the layout's {:?} (visible to {:?}) does not \
                     serve the shaders' {:?}",
                    b.group, b.binding, e.ty, e.visibility, b.kind
                )));
            }
            Some(_) => {}
        }
    }
    Ok(groups)
}

/// The layout of group `index`, or an invalid layout (reported) when there is none.
fn group_layout(
    device: &Option<Arc<DeviceShared>>,
    layouts: &[Option<Arc<LayoutData>>],
    index: u32,
) -> DispatchBindGroupLayout {
    let data = layouts.get(index as usize).cloned().flatten();
    if data.is_none()
        && let Some(device) = device
    {
        device.invalid(
            "get_bind_group_layout",
            "",
            format!("the pipeline has no bind group layout {index}"),
        );
    }
    DispatchBindGroupLayout::custom(RastraBindGroupLayout {
        label: String::new(),
        data,
    })
}

/// A wgpu render pipeline on rastra.
#[derive(Debug)]
pub struct RastraRenderPipeline {
    device: Option<Arc<DeviceShared>>,
    pub(crate) inner: Option<rastra::RenderPipeline>,
    pub(crate) layouts: Vec<Option<Arc<LayoutData>>>,
}

impl RastraRenderPipeline {
    pub(crate) fn invalid() -> Self {
        RastraRenderPipeline {
            device: None,
            inner: None,
            layouts: Vec::new(),
        }
    }

    pub(crate) fn new(
        device: &Arc<DeviceShared>,
        desc: &wgpu::RenderPipelineDescriptor<'_>,
    ) -> Self {
        let label = desc.label.unwrap_or("");
        let built = build_render(device, desc);
        let (inner, layouts) = match device.check("Device::create_render_pipeline", label, built) {
            Some((p, l)) => (Some(p), l),
            None => (None, Vec::new()),
        };
        RastraRenderPipeline {
            device: Some(device.clone()),
            inner,
            layouts,
        }
    }
}

fn module(m: &wgpu::ShaderModule) -> Result<&rastra::ShaderModule, rastra::Error> {
    m.as_custom::<RastraShaderModule>()
        .and_then(|m| m.inner.as_ref())
        .ok_or_else(|| rastra::Error::Validation("the shader module is invalid".into()))
}

type Built<P> = Result<(P, Vec<Option<Arc<LayoutData>>>), rastra::Error>;

fn build_render(
    device: &DeviceShared,
    desc: &wgpu::RenderPipelineDescriptor<'_>,
) -> Built<rastra::RenderPipeline> {
    let unsupported = |what: &str| Err(rastra::Error::Unsupported(what.to_string()));
    let p = &desc.primitive;
    if p.polygon_mode != wgpu::PolygonMode::Fill {
        return unsupported("polygon modes other than Fill");
    }
    if p.conservative {
        return unsupported("conservative rasterization");
    }
    if desc.multiview_mask.is_some() {
        return unsupported("multiview");
    }
    let depth_stencil = match &desc.depth_stencil {
        None => None,
        Some(d) => {
            if d.stencil.is_enabled() {
                return unsupported("stencil tests");
            }
            let format = format_from(d.format)?;
            Some(rastra::DepthStencilState {
                format,
                depth_write_enabled: d.depth_write_enabled.unwrap_or(false),
                depth_compare: d
                    .depth_compare
                    .map(|c| convert::compare_function_from(c).expect("every compare"))
                    .unwrap_or(rastra::CompareFunction::Always),
                bias: rastra::DepthBias {
                    constant: d.bias.constant,
                    slope_scale: d.bias.slope_scale,
                    clamp: d.bias.clamp,
                },
            })
        }
    };
    let mut buffers: Vec<rastra::VertexBufferLayout> = Vec::new();
    let used = desc
        .vertex
        .buffers
        .iter()
        .rposition(Option::is_some)
        .map_or(0, |i| i + 1);
    for (slot, b) in desc.vertex.buffers[..used].iter().enumerate() {
        let Some(b) = b else {
            return unsupported(&format!("an empty vertex buffer layout at slot {slot}"));
        };
        let mut attributes = Vec::with_capacity(b.attributes.len());
        for a in b.attributes {
            let format = convert::vertex_format_from(a.format).ok_or_else(|| {
                rastra::Error::Unsupported(format!("vertex format {:?}", a.format))
            })?;
            attributes.push(rastra::VertexAttribute {
                format,
                offset: a.offset,
                shader_location: a.shader_location,
            });
        }
        buffers.push(rastra::VertexBufferLayout {
            array_stride: b.array_stride,
            step_mode: convert::step_mode_from(b.step_mode).expect("both step modes"),
            attributes,
        });
    }
    let mut targets = Vec::new();
    if let Some(f) = &desc.fragment {
        for t in f.targets {
            targets.push(match t {
                None => None,
                Some(t) => Some(rastra::ColorTargetState {
                    format: format_from(t.format)?,
                    blend: match t.blend {
                        None => None,
                        Some(b) => Some(convert::blend_state_from(b).ok_or_else(|| {
                            rastra::Error::Unsupported(format!("blend state {b:?}"))
                        })?),
                    },
                    write_mask: convert::color_writes_from(t.write_mask),
                }),
            });
        }
    }
    let mask = desc.multisample.mask;
    let fragment = match &desc.fragment {
        None => None,
        Some(f) => Some(rastra::FragmentState {
            module: module(f.module)?,
            entry_point: f.entry_point,
            targets: &targets,
            constants: f.compilation_options.constants,
        }),
    };
    let pipeline = device
        .device
        .create_render_pipeline(&rastra::RenderPipelineDescriptor {
            label: desc.label,
            vertex: rastra::VertexState {
                module: module(desc.vertex.module)?,
                entry_point: desc.vertex.entry_point,
                buffers: &buffers,
                constants: desc.vertex.compilation_options.constants,
            },
            primitive: rastra::PrimitiveState {
                topology: convert::topology_from(p.topology).expect("every topology"),
                front_face: convert::front_face_from(p.front_face).expect("both windings"),
                cull_mode: convert::cull_mode_from(p.cull_mode),
                unclipped_depth: p.unclipped_depth,
            },
            depth_stencil,
            multisample: rastra::MultisampleState {
                count: desc.multisample.count,
                mask: mask as u32,
                alpha_to_coverage_enabled: desc.multisample.alpha_to_coverage_enabled,
            },
            fragment,
        })?;
    let layouts = pipeline_layouts(desc.layout, &pipeline.shader_bindings())?;
    Ok((pipeline, layouts))
}

impl RenderPipelineInterface for RastraRenderPipeline {
    fn get_bind_group_layout(&self, index: u32) -> DispatchBindGroupLayout {
        group_layout(&self.device, &self.layouts, index)
    }
}

/// A wgpu compute pipeline on rastra.
#[derive(Debug)]
pub struct RastraComputePipeline {
    device: Arc<DeviceShared>,
    pub(crate) inner: Option<rastra::ComputePipeline>,
    pub(crate) layouts: Vec<Option<Arc<LayoutData>>>,
}

impl RastraComputePipeline {
    pub(crate) fn new(
        device: &Arc<DeviceShared>,
        desc: &wgpu::ComputePipelineDescriptor<'_>,
    ) -> Self {
        let label = desc.label.unwrap_or("");
        let built = (|| -> Built<rastra::ComputePipeline> {
            let pipeline =
                device
                    .device
                    .create_compute_pipeline(&rastra::ComputePipelineDescriptor {
                        label: desc.label,
                        module: module(desc.module)?,
                        entry_point: desc.entry_point,
                        constants: desc.compilation_options.constants,
                    })?;
            let layouts = pipeline_layouts(desc.layout, &pipeline.shader_bindings())?;
            Ok((pipeline, layouts))
        })();
        let (inner, layouts) = match device.check("Device::create_compute_pipeline", label, built) {
            Some((p, l)) => (Some(p), l),
            None => (None, Vec::new()),
        };
        RastraComputePipeline {
            device: device.clone(),
            inner,
            layouts,
        }
    }
}

impl ComputePipelineInterface for RastraComputePipeline {
    fn get_bind_group_layout(&self, index: u32) -> DispatchBindGroupLayout {
        group_layout(&Some(self.device.clone()), &self.layouts, index)
    }
}

#[cfg(test)]
mod tests {
    use super::with_defines;

    #[test]
    fn defines_go_after_the_version_line() {
        let s = with_defines("#version 450\nvoid main() {}\n", &[("N", "4")]);
        assert_eq!(s, "#version 450\n#define N 4\nvoid main() {}\n");
        let s = with_defines("void main() {}", &[("A", "1")]);
        assert_eq!(s, "#define A 1\nvoid main() {}");
    }
}
