//! Shader modules and programs: WGSL in, validated naga module, lowered [`Program`] out (T3:
//! the driver's shader compiler; ATTILA's shader program objects).
//!
//! API boundary: [`ShaderModule::from_wgsl`] is the only place source errors are reported;
//! [`ShaderModule::program`] reports only missing entry points and constructs rastra does not
//! implement. A [`Program`] is immutable and shared by every warp that runs it.

use crate::ir::Block;
use crate::{BindingVar, CompileError, EarlyDepthTest, IoVar, Stage};

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
    /// Some derivative (`dpdx`, `dpdy`, `fwidth`, any variant) is reachable.
    pub uses_derivatives: bool,
    /// A `discard` is reachable.
    pub uses_discard: bool,
    /// The outputs contain `Builtin::FragDepth`.
    pub writes_depth: bool,
    /// The early depth test the fragment shader asks for (`@early_depth_test`), if any.
    pub early_depth_test: Option<EarlyDepthTest>,
    pub workgroup_size: [u32; 3],
    /// Registers a warp needs; inputs come first, then outputs, then everything else.
    pub num_regs: u32,
    /// The program body (an entry region: `Return` ends the invocation).
    pub code: Block,
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
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            // quantizeToF16 (core WGSL) and naga's @early_depth_test extension, which naga
            // gates behind capabilities.
            naga::valid::Capabilities::default()
                | naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32
                | naga::valid::Capabilities::EARLY_DEPTH_TEST,
        );
        let info = validator.validate(&module).map_err(|e| {
            let (line, column) = e
                .location(source)
                .map_or((1, 1), |l| (l.line_number, l.line_position));
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

    /// Entry points present in the module (mesh/task/ray stages are not listed).
    pub fn entry_points(&self) -> Vec<(String, Stage)> {
        self.module
            .entry_points
            .iter()
            .filter_map(|ep| stage_of(ep.stage).map(|s| (ep.name.clone(), s)))
            .collect()
    }

    /// Lowers one entry point to rastra IR.
    pub fn program(&self, entry: &str, stage: Stage) -> Result<Program, CompileError> {
        let index = self
            .module
            .entry_points
            .iter()
            .position(|ep| ep.name == entry && stage_of(ep.stage) == Some(stage))
            .ok_or_else(|| CompileError::NoEntryPoint {
                name: entry.to_string(),
                stage,
            })?;
        crate::front::lower_entry_point(&self.module, &self.info, index, stage)
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
