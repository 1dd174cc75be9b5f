//! Shader modules and programs: WGSL, GLSL or SPIR-V in, validated naga module, lowered
//! [`Program`] out (T3: the driver's shader compiler; ATTILA's shader program objects).
//!
//! API boundary: the `from_*` constructors are the only place source errors are reported;
//! [`ShaderModule::program_with_overrides`] reports only missing entry points, bad
//! pipeline-overridable constants and constructs rastra does not implement. A [`Program`] is
//! immutable and shared by every warp that runs it.

use crate::ir::Block;
use crate::simt::Code;
use crate::{
    BindingVar, CompileError, EarlyDepthTest, IoVar, SamplerVar, Stage, StorageTextureVar,
    TextureVar,
};

/// A parsed and validated naga module.
#[derive(Debug)]
pub struct ShaderModule {
    pub(crate) module: naga::Module,
    pub(crate) info: naga::valid::ModuleInfo,
}

/// One entry point lowered to rastra IR, plus its interface.
#[derive(Clone, Debug)]
pub struct Program {
    pub stage: Stage,
    pub entry: String,
    /// Entry-point arguments, struct members flattened, in declaration order.
    pub inputs: Vec<IoVar>,
    /// Entry-point result, struct members flattened, in declaration order.
    pub outputs: Vec<IoVar>,
    /// Every uniform/storage buffer the entry point (transitively) uses, sorted by
    /// (group, binding). `Resources::buffers[i]` serves `bindings[i]`.
    pub bindings: Vec<BindingVar>,
    /// Every sampled texture the entry point uses, sorted by (group, binding).
    /// `Resources::textures[i]` serves `textures[i]`.
    pub textures: Vec<TextureVar>,
    /// Every sampler the entry point uses, sorted by (group, binding).
    pub samplers: Vec<SamplerVar>,
    /// Every storage texture the entry point uses, sorted by (group, binding).
    /// `Resources::images[i]` serves `storage_textures[i]`.
    pub storage_textures: Vec<StorageTextureVar>,
    /// Some derivative (`dpdx`, `dpdy`, `fwidth`, any variant) is reachable.
    pub uses_derivatives: bool,
    /// A `discard` is reachable.
    pub uses_discard: bool,
    /// The outputs contain `Builtin::FragDepth`.
    pub writes_depth: bool,
    /// The early depth test the fragment shader asks for (`@early_depth_test`), if any.
    pub early_depth_test: Option<EarlyDepthTest>,
    /// Compute workgroup size (overrides resolved); at most
    /// [`crate::MAX_WORKGROUP_INVOCATIONS`] invocations.
    pub workgroup_size: [u32; 3],
    /// Bytes of workgroup memory (`var<workgroup>` variables, one word per scalar).
    pub workgroup_memory: u32,
    /// Registers a warp needs; inputs come first, then outputs, then everything else.
    pub num_regs: u32,
    /// The program body (an entry region: `Return` ends the invocation).
    pub code: Block,
    /// `code` laid out for the warp interpreter's control stack.
    pub(crate) simt: Code,
    /// `simt` compiled to native code (`jit`), when the host and the program allow it.
    pub(crate) compiled: Option<std::sync::Arc<crate::jit::Compiled>>,
}

impl Program {
    /// Whether warps run this program as native code (`jit`) rather than on the
    /// interpreter.
    pub fn is_compiled(&self) -> bool {
        self.compiled.is_some()
    }

    /// Per register (`0..num_regs`): whether some instruction or control op of the program
    /// reads it. An input no instruction reads need not be given a value — a fragment input
    /// of this kind is a dead varying, which linking leaves out.
    pub fn registers_read(&self) -> Vec<bool> {
        crate::jit::registers_read(&self.simt, self.num_regs)
    }

    /// Per register (`0..num_regs`): whether some instruction of the program writes it. A
    /// register none writes — an input the program only reads — holds after a warp ran
    /// what it held before, in every lane.
    pub fn registers_written(&self) -> Vec<bool> {
        crate::jit::registers_written(&self.simt, self.num_regs)
    }

    /// Whether the program's only effect is its outputs, and each lane's outputs depend on
    /// its quad's lanes alone: no storage-buffer or storage-texture store, no atomic, no
    /// subgroup operation or lane index (those see the rest of the warp). Quads of such a
    /// fragment program may be packed into warps in any way, and a quad whose outputs
    /// nothing will read need not run at all.
    pub fn is_quad_local(&self) -> bool {
        use crate::ir::{ImageOp, Inst};
        !self.simt.insts.iter().any(|inst| match inst {
            Inst::StoreMem { .. }
            | Inst::Atomic { .. }
            | Inst::CompareExchange { .. }
            | Inst::LaneId { .. }
            | Inst::Ballot { .. }
            | Inst::SubgroupOp { .. }
            | Inst::Shuffle { .. } => true,
            Inst::Image(image) => matches!(image.op, ImageOp::Store { .. }),
            _ => false,
        })
    }

    /// This program without its native code: every warp runs it on the interpreter (for
    /// differential tests and measurements; `RASTRA_JIT=0` does it for every program).
    pub fn interpreted(&self) -> Program {
        Program {
            compiled: None,
            ..self.clone()
        }
    }
}

/// Validator capabilities rastra accepts: core WGSL plus naga's `@early_depth_test`
/// extension, f16 quantisation and subgroup operations (subgroup = warp).
fn validator() -> naga::valid::Validator {
    use naga::valid::{Capabilities as C, ShaderStages, SubgroupOperationSet};
    let mut v = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        C::default()
            | C::SHADER_FLOAT16_IN_FLOAT32
            | C::EARLY_DEPTH_TEST
            | C::SUBGROUP
            | C::SUBGROUP_BARRIER
            | C::SUBGROUP_VERTEX_STAGE,
    );
    v.subgroup_stages(ShaderStages::VERTEX | ShaderStages::FRAGMENT | ShaderStages::COMPUTE);
    v.subgroup_operations(SubgroupOperationSet::all());
    v
}

/// Validates `module`; errors get the line and column of `source` when there is one.
fn validate(module: naga::Module, source: Option<&str>) -> Result<ShaderModule, CompileError> {
    let info = validator().validate(&module).map_err(|e| {
        let (line, column) = source
            .and_then(|s| e.location(s))
            .map_or(if source.is_some() { (1, 1) } else { (0, 0) }, |l| {
                (l.line_number, l.line_position)
            });
        let mut message = e.as_inner().to_string();
        let mut src: Option<&dyn std::error::Error> = std::error::Error::source(e.as_inner());
        while let Some(s) = src {
            message.push_str(": ");
            message.push_str(&s.to_string());
            src = s.source();
        }
        CompileError::Source {
            message,
            line,
            column,
        }
    })?;
    Ok(ShaderModule { module, info })
}

impl ShaderModule {
    /// Parses WGSL with naga and validates it. Errors become [`CompileError::Source`] with the
    /// 1-based line and column of the first error's span.
    pub fn from_wgsl(source: &str) -> Result<ShaderModule, CompileError> {
        let module = naga::front::wgsl::parse_str(source).map_err(|e| {
            let (line, column) = e
                .location(source)
                .map_or((1, 1), |l| (l.line_number, l.line_position));
            CompileError::Source {
                message: e.message().to_string(),
                line,
                column,
            }
        })?;
        validate(module, Some(source))
    }

    /// Parses GLSL (`#version 450`-style Vulkan GLSL) for one stage with naga and validates
    /// it. Errors carry the 1-based line and column of the first error naga reports.
    pub fn from_glsl(source: &str, stage: Stage) -> Result<ShaderModule, CompileError> {
        let stage = match stage {
            Stage::Vertex => naga::ShaderStage::Vertex,
            Stage::Fragment => naga::ShaderStage::Fragment,
            Stage::Compute => naga::ShaderStage::Compute,
        };
        let module = naga::front::glsl::Frontend::default()
            .parse(&naga::front::glsl::Options::from(stage), source)
            .map_err(|e| {
                let first = e.errors.first();
                let (line, column) = first
                    .and_then(|f| f.meta.location(source).into())
                    .map_or((1, 1), |l: naga::SourceLocation| {
                        (l.line_number, l.line_position)
                    });
                CompileError::Source {
                    message: first.map_or_else(|| e.to_string(), |f| f.kind.to_string()),
                    line,
                    column,
                }
            })?;
        validate(module, Some(source))
    }

    /// Parses a SPIR-V binary (little-endian words as bytes) with naga and validates it.
    /// SPIR-V has no source text, so errors have line and column 0.
    pub fn from_spirv(words_or_bytes: &[u8]) -> Result<ShaderModule, CompileError> {
        let options = naga::front::spv::Options {
            adjust_coordinate_space: false,
            strict_capabilities: false,
            block_ctx_dump_prefix: None,
        };
        let module = naga::front::spv::parse_u8_slice(words_or_bytes, &options).map_err(|e| {
            CompileError::Source {
                message: e.to_string(),
                line: 0,
                column: 0,
            }
        })?;
        validate(module, None)
    }

    /// Entry points present in the module (mesh/task/ray stages are not listed).
    pub fn entry_points(&self) -> Vec<(String, Stage)> {
        self.module
            .entry_points
            .iter()
            .filter_map(|ep| stage_of(ep.stage).map(|s| (ep.name.clone(), s)))
            .collect()
    }

    /// Lowers one entry point to rastra IR, every override at its default value.
    pub fn program(&self, entry: &str, stage: Stage) -> Result<Program, CompileError> {
        self.program_with_overrides(entry, stage, &[])
    }

    /// Lowers one entry point to rastra IR with pipeline-overridable constants set: each
    /// `(key, value)` names an override by its `@id` (as a decimal string) or, without one, by
    /// its name. naga's `process_overrides` substitutes them (override-sized arrays and
    /// workgroup sizes included). An unknown key, a missing value for an override without a
    /// default, or a value its type cannot hold is a [`CompileError::Override`].
    pub fn program_with_overrides(
        &self,
        entry: &str,
        stage: Stage,
        overrides: &[(String, f64)],
    ) -> Result<Program, CompileError> {
        let index = self
            .module
            .entry_points
            .iter()
            .position(|ep| ep.name == entry && stage_of(ep.stage) == Some(stage))
            .ok_or_else(|| CompileError::NoEntryPoint {
                name: entry.to_string(),
                stage,
            })?;
        if overrides.is_empty() && self.module.overrides.is_empty() {
            return crate::front::lower_entry_point(&self.module, &self.info, index, stage);
        }
        let mut constants = naga::back::PipelineConstants::default();
        for (k, v) in overrides {
            constants.insert(k.clone(), *v);
        }
        let ep_stage = self.module.entry_points[index].stage;
        let (module, info) = naga::back::pipeline_constants::process_overrides(
            &self.module,
            &self.info,
            Some((ep_stage, entry)),
            &constants,
        )
        .map_err(|e| CompileError::Override(e.to_string()))?;
        let index = module
            .entry_points
            .iter()
            .position(|ep| ep.name == entry && ep.stage == ep_stage)
            .ok_or_else(|| CompileError::NoEntryPoint {
                name: entry.to_string(),
                stage,
            })?;
        crate::front::lower_entry_point(&module, &info, index, stage)
    }
}

pub(crate) fn stage_of(stage: naga::ShaderStage) -> Option<Stage> {
    match stage {
        naga::ShaderStage::Vertex => Some(Stage::Vertex),
        naga::ShaderStage::Fragment => Some(Stage::Fragment),
        naga::ShaderStage::Compute => Some(Stage::Compute),
        _ => None,
    }
}
