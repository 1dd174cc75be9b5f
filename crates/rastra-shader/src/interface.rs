//! The contract between the shader cores and the fixed-function pipeline: how a program's
//! inputs, outputs and resource bindings are described, and how a warp's registers are
//! addressed. Everything here is plain data; the pipeline reads it to wire stages together.

use std::fmt;
use std::sync::atomic::AtomicU32;

/// Lanes in one warp. A pixel warp holds `WARP_LANES / 4` quads; lane `4*q + i` is pixel
/// `i` of quad `q`, with `i` = 0 (x0,y0), 1 (x1,y0), 2 (x0,y1), 3 (x1,y1).
pub const WARP_LANES: usize = 16;

/// One bit per lane, bit `i` = lane `i`. Only the low [`WARP_LANES`] bits are used.
pub type Mask = u32;

/// All lanes of a warp.
pub const FULL_MASK: Mask = if WARP_LANES == 32 {
    u32::MAX
} else {
    (1u32 << WARP_LANES) - 1
};

/// Mask of the first `n` lanes (`n ≤ WARP_LANES`).
#[inline]
pub const fn lane_mask(n: usize) -> Mask {
    if n >= 32 { u32::MAX } else { (1u32 << n) - 1 }
}

/// Pipeline stage a program runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    Vertex,
    Fragment,
    Compute,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Vertex => "vertex",
            Stage::Fragment => "fragment",
            Stage::Compute => "compute",
        })
    }
}

/// Scalar type of an interface value. Registers always hold 32 raw bits; this says how to
/// read them (`Bool` is 0 or 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    F32,
    I32,
    U32,
    Bool,
}

/// Type of an interface value: a scalar or a vector of 2–4 components.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IoType {
    pub scalar: ScalarKind,
    /// 1 for a scalar, 2–4 for a vector.
    pub components: u8,
}

/// Built-in values a program can read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// Vertex output: clip-space position. Fragment input: framebuffer position
    /// (x, y at the pixel centre or sample, z = depth, w = 1 / clip w).
    Position,
    VertexIndex,
    InstanceIndex,
    FrontFacing,
    FragDepth,
    SampleIndex,
    SampleMask,
    LocalInvocationId,
    LocalInvocationIndex,
    GlobalInvocationId,
    WorkGroupId,
    NumWorkGroups,
}

/// Where an interface value comes from or goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoBinding {
    Location(u32),
    Builtin(Builtin),
}

/// How a fragment input is interpolated across a primitive (T7/T8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Interpolation {
    #[default]
    Perspective,
    Linear,
    Flat,
}

/// Where within the pixel an interpolated fragment input is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Sampling {
    #[default]
    Center,
    Centroid,
    Sample,
}

/// One entry-point input or output, flattened out of argument/result structs.
#[derive(Clone, Debug, PartialEq)]
pub struct IoVar {
    pub binding: IoBinding,
    pub ty: IoType,
    pub interpolation: Interpolation,
    pub sampling: Sampling,
    /// First of `ty.components` consecutive registers holding this value, component-major.
    pub first_reg: u32,
}

/// Early depth testing a fragment shader asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EarlyDepthTest {
    /// Depth is tested (and written) before shading; discard and a written depth do not
    /// affect the depth buffer.
    Force,
    /// A conservative-depth promise: an early test is allowed, but the late test with the
    /// shader's depth still decides.
    Conservative,
}

/// How a resource binding is accessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindingKind {
    Uniform,
    Storage { read_only: bool },
}

/// A resource binding the program uses. `Resources::buffers[i]` serves `bindings[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct BindingVar {
    pub group: u32,
    pub binding: u32,
    pub kind: BindingKind,
    /// Smallest buffer size in bytes that holds the variable's type (for a runtime-sized
    /// array: the fixed part plus one element).
    pub min_size: u64,
    /// Variable name in the source, for error messages.
    pub name: String,
}

/// Memory a warp may access: one range of device memory per entry of `Program::bindings`,
/// in that order, as 32-bit words (device memory is words of `AtomicU32`, so shader loads,
/// stores and atomics from any number of threads are all defined). Every access is
/// bounds-checked against its range (WebGPU robust access).
#[derive(Clone, Copy, Debug)]
pub struct Resources<'a> {
    pub buffers: &'a [&'a [AtomicU32]],
}

/// A shader failed to compile.
#[derive(Clone, Debug, PartialEq)]
pub enum CompileError {
    /// The source did not parse or validate. Line and column are 1-based.
    Source {
        message: String,
        line: u32,
        column: u32,
    },
    /// The entry point does not exist for that stage.
    NoEntryPoint { name: String, stage: Stage },
    /// A valid construct rastra's shader cores do not implement yet.
    Unsupported(String),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Source {
                message,
                line,
                column,
            } => write!(f, "{line}:{column}: {message}"),
            CompileError::NoEntryPoint { name, stage } => {
                write!(f, "no {stage} entry point named `{name}`")
            }
            CompileError::Unsupported(what) => write!(f, "unsupported shader construct: {what}"),
        }
    }
}

impl std::error::Error for CompileError {}

/// A warp stopped abnormally while executing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// The instruction budget ran out (runaway shader; the device reports itself lost).
    BudgetExhausted,
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::BudgetExhausted => {
                f.write_str("shader exceeded its instruction budget (runaway shader)")
            }
        }
    }
}

impl std::error::Error for ExecError {}

/// What one warp execution did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExecInfo {
    /// Lanes that executed `discard` (they finished as helpers; their outputs are dead).
    pub discarded: Mask,
    /// IR instructions issued (each counts once per warp, whatever the mask).
    pub instructions: u64,
}
