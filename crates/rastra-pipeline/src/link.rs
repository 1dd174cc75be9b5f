//! Pipeline linking: wires the vertex fetch, the vertex shader's outputs, the fragment
//! shader's inputs and the colour targets together once, when a render pipeline is created,
//! so that the units of a draw only follow precomputed tables (BRIEF "validate at the
//! boundary, then trust inside").

use std::fmt;
use std::sync::Arc;

use rastra_shader::{
    Builtin, EarlyDepthTest, Interpolation, IoBinding, Program, Sampling, ScalarKind, Stage,
};

use crate::format::{AttributeKind, TextureFormat, VertexFormat};
use crate::state::{
    ColorTargetState, DepthStencilState, MultisampleState, PrimitiveState, PrimitiveTopology,
    VertexBufferLayout, VertexStepMode,
};

/// Everything needed to build a render pipeline (the API layer's descriptor, resolved).
#[derive(Clone, Debug)]
pub struct RenderPipelineDesc {
    pub vertex: Arc<Program>,
    pub vertex_buffers: Vec<VertexBufferLayout>,
    pub fragment: Option<Arc<Program>>,
    pub targets: Vec<Option<ColorTargetState>>,
    pub primitive: PrimitiveState,
    pub depth_stencil: Option<DepthStencilState>,
    pub multisample: MultisampleState,
}

/// Where a vertex shader input comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VertexInputSource {
    Attribute {
        slot: usize,
        format: VertexFormat,
        offset: u64,
        stride: u64,
        step: VertexStepMode,
    },
    VertexIndex,
    InstanceIndex,
}

/// One vertex-shader input register block and its source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VertexInput {
    pub source: VertexInputSource,
    pub first_reg: u32,
    pub components: u32,
}

/// One varying: a vertex output that a fragment input reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Varying {
    /// First register of the vertex shader output.
    pub vs_reg: u32,
    /// First register of the fragment shader input.
    pub fs_reg: u32,
    /// Offset of the varying inside a shaded vertex's attribute words.
    pub word: u32,
    pub components: u32,
    pub interpolation: Interpolation,
    pub sampling: Sampling,
}

/// A fragment output feeding a colour target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColorOutput {
    pub target: usize,
    pub reg: u32,
    pub components: u32,
}

/// A linked, validated render pipeline: the state every unit needs for a draw.
#[derive(Clone, Debug)]
pub struct RenderPipeline {
    pub desc: RenderPipelineDesc,
    pub vertex_inputs: Vec<VertexInput>,
    /// First register of the vertex shader's `@builtin(position)` output.
    pub position_reg: u32,
    pub varyings: Vec<Varying>,
    /// Attribute words per shaded vertex (sum of varying components).
    pub varying_words: u32,
    /// Fragment input registers for `@builtin(position)` and `@builtin(front_facing)`.
    pub frag_position_reg: Option<u32>,
    /// Which of the position's components (x, y, z, 1/w) the fragment shader reads: the
    /// others are not computed (all false without a position input).
    pub frag_position_read: [bool; 4],
    pub front_facing_reg: Option<u32>,
    pub sample_mask_in_reg: Option<u32>,
    pub color_outputs: Vec<ColorOutput>,
    pub frag_depth_reg: Option<u32>,
    /// How depth testing interleaves with shading for this pipeline (T7).
    pub depth_mode: DepthMode,
    /// Whether the fragment shader writes none of its varyings' registers: a pixel warp's
    /// inputs then hold, after shading, the values they were given (`pixel` keeps a
    /// constant triangle's inputs for the next warp of the same values).
    pub varyings_kept: bool,
}

/// Where the depth test and the depth write happen relative to pixel shading (T7 "Early
/// Z/Stencil", "Z/stencil writes: the full truth").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepthMode {
    /// No depth attachment, or a test that always passes without writing.
    Off,
    /// Test and write before shading: the shader cannot change coverage or depth.
    EarlyTestWrite,
    /// Test before shading, write after it: the shader may discard, so a sample's depth is
    /// only written once it has survived the shader.
    EarlyTestLateWrite,
    /// Test and write after shading: the shader writes its own depth.
    Late,
}

/// Why a render pipeline could not be created.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkError {
    Validation(String),
    Unsupported(String),
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Validation(m) => write!(f, "invalid render pipeline: {m}"),
            LinkError::Unsupported(m) => write!(f, "unsupported: {m}"),
        }
    }
}

impl std::error::Error for LinkError {}

fn invalid<T>(message: String) -> Result<T, LinkError> {
    Err(LinkError::Validation(message))
}

/// Largest vertex buffer stride (WebGPU `maxVertexBufferArrayStride`).
pub const MAX_VERTEX_STRIDE: u64 = 2048;
/// Vertex attributes and shader locations (WebGPU `maxVertexAttributes`).
pub const MAX_VERTEX_ATTRIBUTES: u32 = 16;

/// WebGPU's vertex buffer layout rules: strides and offsets in range and aligned, every
/// attribute inside its element, shader locations in range and used once.
fn validate_vertex_buffers(buffers: &[VertexBufferLayout]) -> Result<(), LinkError> {
    let mut seen = [false; MAX_VERTEX_ATTRIBUTES as usize];
    for (slot, layout) in buffers.iter().enumerate() {
        let stride = layout.array_stride;
        if stride > MAX_VERTEX_STRIDE || !stride.is_multiple_of(4) {
            return invalid(format!(
                "vertex buffer {slot}: array stride {stride} must be a multiple of 4 and at most \
                 {MAX_VERTEX_STRIDE}"
            ));
        }
        let limit = if stride == 0 {
            MAX_VERTEX_STRIDE
        } else {
            stride
        };
        for a in &layout.attributes {
            let size = a.format.size() as u64;
            let location = a.shader_location;
            if a.offset.checked_add(size).is_none_or(|end| end > limit) {
                return invalid(format!(
                    "vertex buffer {slot}: attribute @location({location}) at offset {} does not \
                     fit in the {limit}-byte element",
                    a.offset
                ));
            }
            if !a.offset.is_multiple_of(size.min(4)) {
                return invalid(format!(
                    "vertex buffer {slot}: attribute @location({location}) offset {} is not \
                     aligned to {}",
                    a.offset,
                    size.min(4)
                ));
            }
            if location >= MAX_VERTEX_ATTRIBUTES {
                return invalid(format!(
                    "shader location {location} (the limit is {MAX_VERTEX_ATTRIBUTES})"
                ));
            }
            if std::mem::replace(&mut seen[location as usize], true) {
                return invalid(format!(
                    "shader location {location} is used by two attributes"
                ));
            }
        }
    }
    Ok(())
}

impl RenderPipeline {
    /// Validates the descriptor against the shaders' interfaces and links them.
    pub fn new(desc: RenderPipelineDesc) -> Result<RenderPipeline, LinkError> {
        let vs = &desc.vertex;
        if vs.stage != Stage::Vertex {
            return invalid(format!("`{}` is not a vertex entry point", vs.entry));
        }
        match desc.primitive.topology {
            PrimitiveTopology::TriangleList | PrimitiveTopology::TriangleStrip => {}
            other => {
                return Err(LinkError::Unsupported(format!(
                    "primitive topology {other:?} (points and lines arrive with a later issue)"
                )));
            }
        }
        if !matches!(desc.multisample.count, 1 | 4) {
            return invalid(format!(
                "sample count {} (must be 1 or 4)",
                desc.multisample.count
            ));
        }
        if desc.multisample.alpha_to_coverage_enabled {
            return Err(LinkError::Unsupported("alpha-to-coverage".into()));
        }

        // Vertex fetch: every location input needs an attribute of a matching kind.
        let mut vertex_inputs = Vec::new();
        for input in &vs.inputs {
            let components = input.ty.components as u32;
            let source = match input.binding {
                IoBinding::Builtin(Builtin::VertexIndex) => VertexInputSource::VertexIndex,
                IoBinding::Builtin(Builtin::InstanceIndex) => VertexInputSource::InstanceIndex,
                IoBinding::Builtin(b) => {
                    return Err(LinkError::Unsupported(format!(
                        "vertex shader input builtin {b:?}"
                    )));
                }
                IoBinding::Location(loc) => {
                    let found = desc
                        .vertex_buffers
                        .iter()
                        .enumerate()
                        .find_map(|(slot, l)| {
                            l.attributes
                                .iter()
                                .find(|a| a.shader_location == loc)
                                .map(|a| (slot, l, a))
                        });
                    let Some((slot, layout, attr)) = found else {
                        return invalid(format!(
                            "vertex shader input @location({loc}) has no vertex attribute"
                        ));
                    };
                    let kind_ok = matches!(
                        (attr.format.kind(), input.ty.scalar),
                        (AttributeKind::Float, ScalarKind::F32)
                            | (AttributeKind::Sint, ScalarKind::I32)
                            | (AttributeKind::Uint, ScalarKind::U32)
                    );
                    if !kind_ok {
                        return invalid(format!(
                            "vertex attribute @location({loc}) has format {:?}, which the \
                             shader's {:?} input cannot read",
                            attr.format, input.ty.scalar
                        ));
                    }
                    VertexInputSource::Attribute {
                        slot,
                        format: attr.format,
                        offset: attr.offset,
                        stride: layout.array_stride,
                        step: layout.step_mode,
                    }
                }
            };
            vertex_inputs.push(VertexInput {
                source,
                first_reg: input.first_reg,
                components,
            });
        }
        validate_vertex_buffers(&desc.vertex_buffers)?;

        let Some(position) = vs
            .outputs
            .iter()
            .find(|o| o.binding == IoBinding::Builtin(Builtin::Position))
        else {
            return invalid(format!(
                "vertex shader `{}` does not write @builtin(position)",
                vs.entry
            ));
        };
        let position_reg = position.first_reg;

        let mut pipeline = RenderPipeline {
            vertex_inputs,
            position_reg,
            varyings: Vec::new(),
            varying_words: 0,
            frag_position_reg: None,
            frag_position_read: [false; 4],
            front_facing_reg: None,
            sample_mask_in_reg: None,
            color_outputs: Vec::new(),
            frag_depth_reg: None,
            depth_mode: DepthMode::Off,
            varyings_kept: false,
            desc: desc.clone(),
        };

        if let Some(fs) = &desc.fragment {
            if fs.stage != Stage::Fragment {
                return invalid(format!("`{}` is not a fragment entry point", fs.entry));
            }
            let registers_read = fs.registers_read();
            let read = |r: u32| registers_read.get(r as usize).copied().unwrap_or(false);
            for input in &fs.inputs {
                match input.binding {
                    IoBinding::Builtin(Builtin::Position) => {
                        pipeline.frag_position_reg = Some(input.first_reg);
                        pipeline.frag_position_read =
                            std::array::from_fn(|k| read(input.first_reg + k as u32));
                    }
                    IoBinding::Builtin(Builtin::FrontFacing) => {
                        pipeline.front_facing_reg = Some(input.first_reg)
                    }
                    IoBinding::Builtin(Builtin::SampleMask) => {
                        pipeline.sample_mask_in_reg = Some(input.first_reg)
                    }
                    IoBinding::Builtin(b) => {
                        return Err(LinkError::Unsupported(format!(
                            "fragment shader input builtin {b:?} (per-sample shading arrives \
                             with a later issue)"
                        )));
                    }
                    IoBinding::Location(loc) => {
                        let Some(out) = vs
                            .outputs
                            .iter()
                            .find(|o| o.binding == IoBinding::Location(loc))
                        else {
                            return invalid(format!(
                                "fragment input @location({loc}) is not written by the vertex \
                                 shader"
                            ));
                        };
                        if out.ty != input.ty {
                            return invalid(format!(
                                "@location({loc}) is {:?} in the vertex shader but {:?} in the \
                                 fragment shader",
                                out.ty, input.ty
                            ));
                        }
                        if out.interpolation != input.interpolation
                            || out.sampling != input.sampling
                        {
                            return invalid(format!(
                                "@location({loc}) interpolation differs between the stages"
                            ));
                        }
                        if input.sampling == Sampling::Sample {
                            return Err(LinkError::Unsupported(
                                "@interpolate(.., sample) (per-sample shading)".into(),
                            ));
                        }
                        // Dead varyings (as compilers eliminate them): components after
                        // the last one the fragment shader reads, and a varying it never
                        // reads, are neither kept per vertex nor interpolated.
                        let components = (0..input.ty.components as u32)
                            .rev()
                            .find(|&c| read(input.first_reg + c))
                            .map_or(0, |c| c + 1);
                        if components == 0 {
                            continue;
                        }
                        pipeline.varyings.push(Varying {
                            vs_reg: out.first_reg,
                            fs_reg: input.first_reg,
                            word: pipeline.varying_words,
                            components,
                            interpolation: input.interpolation,
                            sampling: input.sampling,
                        });
                        pipeline.varying_words += components;
                    }
                }
            }
            let written = fs.registers_written();
            pipeline.varyings_kept = pipeline.varyings.iter().all(|v| {
                (v.fs_reg..v.fs_reg + v.components)
                    .all(|r| !written.get(r as usize).copied().unwrap_or(false))
            });
            for output in &fs.outputs {
                match output.binding {
                    IoBinding::Location(loc) => {
                        let target = loc as usize;
                        match desc.targets.get(target) {
                            Some(Some(t)) => {
                                if output.ty.scalar != ScalarKind::F32 {
                                    return invalid(format!(
                                        "fragment output @location({loc}) is {:?}; target \
                                         format {:?} takes floats",
                                        output.ty.scalar, t.format
                                    ));
                                }
                                if output.ty.components < t.format.components() as u8 {
                                    return invalid(format!(
                                        "fragment output @location({loc}) has {} components; \
                                         target format {:?} needs {}",
                                        output.ty.components,
                                        t.format,
                                        t.format.components()
                                    ));
                                }
                            }
                            _ => continue, // WebGPU: outputs without a target are dropped.
                        }
                        pipeline.color_outputs.push(ColorOutput {
                            target,
                            reg: output.first_reg,
                            components: output.ty.components as u32,
                        });
                    }
                    IoBinding::Builtin(Builtin::FragDepth) => {
                        pipeline.frag_depth_reg = Some(output.first_reg)
                    }
                    IoBinding::Builtin(b) => {
                        return Err(LinkError::Unsupported(format!(
                            "fragment shader output builtin {b:?}"
                        )));
                    }
                }
            }
            for (i, t) in desc.targets.iter().enumerate() {
                if let Some(t) = t {
                    match crate::format::check_renderable(t.format) {
                        Ok(()) => {}
                        Err(crate::format::Unrenderable::Never) => {
                            return invalid(format!(
                                "colour target {i} format {:?} is not renderable",
                                t.format
                            ));
                        }
                        Err(crate::format::Unrenderable::NotYet(what)) => {
                            return Err(LinkError::Unsupported(what.to_string()));
                        }
                    }
                    if t.format.is_depth() {
                        return invalid(format!(
                            "colour target {i} has depth format {:?}",
                            t.format
                        ));
                    }
                    if t.blend.is_some() && !t.format.is_blendable() {
                        return invalid(format!(
                            "colour target {i} format {:?} is not blendable",
                            t.format
                        ));
                    }
                    if !pipeline.color_outputs.iter().any(|o| o.target == i) && t.write_mask.0 != 0
                    {
                        return invalid(format!(
                            "colour target {i} has no fragment output @location({i}) but its \
                             write mask is not empty"
                        ));
                    }
                }
            }
        } else if desc.targets.iter().any(|t| t.is_some()) {
            return invalid("colour targets without a fragment shader".into());
        }

        if let Some(ds) = &desc.depth_stencil
            && !ds.format.is_depth()
        {
            return invalid(format!(
                "depth format {:?} is not a depth format",
                ds.format
            ));
        }
        if pipeline.frag_depth_reg.is_some() && desc.depth_stencil.is_none() {
            // Legal; the written depth simply goes nowhere.
        }
        pipeline.depth_mode = match &desc.depth_stencil {
            None => DepthMode::Off,
            Some(ds)
                if ds.depth_compare == crate::state::CompareFunction::Always
                    && !ds.depth_write_enabled =>
            {
                DepthMode::Off
            }
            Some(_) => {
                let fs = desc.fragment.as_deref();
                let early = fs.and_then(|f| f.early_depth_test);
                let writes_depth = pipeline.frag_depth_reg.is_some();
                let discards = fs.is_some_and(|f| f.uses_discard);
                match early {
                    // Forced early tests: depth is final before shading; discard and the
                    // shader's depth no longer touch the depth buffer.
                    Some(EarlyDepthTest::Force) => DepthMode::EarlyTestWrite,
                    _ if writes_depth => DepthMode::Late,
                    _ if discards => DepthMode::EarlyTestLateWrite,
                    _ => DepthMode::EarlyTestWrite,
                }
            }
        };
        Ok(pipeline)
    }

    /// Sample count of the pipeline's targets.
    pub fn samples(&self) -> u32 {
        self.desc.multisample.count
    }

    /// Format of each colour target (None for an unused slot).
    pub fn target_formats(&self) -> Vec<Option<TextureFormat>> {
        self.desc
            .targets
            .iter()
            .map(|t| t.map(|t| t.format))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ColorWrites;
    use rastra_shader::ShaderModule;

    /// Dead varyings: a varying the fragment shader never reads is left out (not kept per
    /// vertex, not interpolated), one it reads in part keeps its components up to the last
    /// one read, and only the position's components it reads are made.
    #[test]
    fn varyings_the_fragment_shader_does_not_read_are_left_out() {
        let module = ShaderModule::from_wgsl(
            "struct V {
                @builtin(position) clip: vec4<f32>,
                @location(0) color: vec4<f32>,
                @location(1) uv: vec2<f32>,
                @location(2) normal: vec3<f32>,
            }
            @vertex fn vs(@builtin(vertex_index) i: u32) -> V {
                let x = f32(i);
                return V(vec4<f32>(x, x, 0.5, 1.0), vec4<f32>(x), vec2<f32>(x), vec3<f32>(x));
            }
            @fragment fn fs(v: V) -> @location(0) vec4<f32> {
                return vec4<f32>(v.color.g, v.normal.x, v.clip.y, 1.0);
            }",
        )
        .expect("compiles");
        let program = |entry, stage| Arc::new(module.program(entry, stage).expect("lowers"));
        let pipeline = RenderPipeline::new(RenderPipelineDesc {
            vertex: program("vs", Stage::Vertex),
            vertex_buffers: Vec::new(),
            fragment: Some(program("fs", Stage::Fragment)),
            targets: vec![Some(ColorTargetState {
                format: TextureFormat::Rgba8Unorm,
                blend: None,
                write_mask: ColorWrites::ALL,
            })],
            primitive: PrimitiveState::default(),
            depth_stencil: None,
            multisample: MultisampleState::default(),
        })
        .expect("links");
        let kept: Vec<(u32, u32)> = pipeline
            .varyings
            .iter()
            .map(|v| (v.word, v.components))
            .collect();
        // color's r and g (g is read), normal's x; uv never.
        assert_eq!(kept, [(0, 2), (2, 1)]);
        assert_eq!(pipeline.varying_words, 3);
        assert_eq!(pipeline.frag_position_read, [false, true, false, false]);
    }
}
