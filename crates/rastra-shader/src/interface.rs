//! The contract between the shader cores and the fixed-function pipeline: how a program's
//! inputs, outputs and resource bindings are described, and how a warp's registers are
//! addressed. Everything here is plain data; the pipeline reads it to wire stages together.

use std::fmt;
use std::sync::atomic::AtomicU32;

use rastra_texture::{
    Sampler, StorageImage, Texture, TextureFormat, TextureView, TextureViewDimension,
};

/// Lanes in one warp. A pixel warp holds `WARP_LANES / 4` quads; lane `4*q + i` is pixel
/// `i` of quad `q`, with `i` = 0 (x0,y0), 1 (x1,y0), 2 (x0,y1), 3 (x1,y1). 64, as AMD's
/// GCN wavefronts: a pixel warp is a whole 8×8 block, and per-warp costs (entering the
/// compiled shader, setting up interpolation, handing results to the output merger) are
/// spread over twice the lanes of a 32-lane warp (which in turn halved a 16-lane warp's:
/// blended_layers 1 thread 588 → 486–507 ms).
pub const WARP_LANES: usize = 64;

/// One bit per lane, bit `i` = lane `i`. Only the low [`WARP_LANES`] bits are used.
pub type Mask = u64;

/// All lanes of a warp.
pub const FULL_MASK: Mask = lane_mask(WARP_LANES);

/// Mask of the first `n` lanes (`n ≤ WARP_LANES`).
#[inline]
pub const fn lane_mask(n: usize) -> Mask {
    if n >= Mask::BITS as usize {
        Mask::MAX
    } else {
        (1 << n) - 1
    }
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
    /// Compute input: index of the invocation's warp in its workgroup.
    SubgroupId,
    /// Compute input: warps in the workgroup.
    NumSubgroups,
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

/// What a texture binding holds, as the shader declares it (WGSL `texture_*` types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureSampleKind {
    /// `texture_*<f32>`.
    Float,
    Sint,
    Uint,
    /// `texture_depth_*`: results are one f32; compares allowed.
    Depth,
}

/// A sampled texture the program uses (`texture_1d` … `texture_depth_multisampled_2d`).
/// `Resources::textures[i]` serves `textures[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct TextureVar {
    pub group: u32,
    pub binding: u32,
    pub dimension: TextureViewDimension,
    pub sample_kind: TextureSampleKind,
    pub multisampled: bool,
    pub name: String,
}

/// How a shader may access a storage texture (WGSL's access mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StorageAccess {
    ReadOnly,
    WriteOnly,
    ReadWrite,
}

/// A storage texture the program uses (`texture_storage_1d` … `texture_storage_3d`).
/// `Resources::images[i]` serves `storage_textures[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct StorageTextureVar {
    pub group: u32,
    pub binding: u32,
    pub dimension: TextureViewDimension,
    /// The texel format the shader declares; the bound view must have it.
    pub format: TextureFormat,
    pub access: StorageAccess,
    pub name: String,
}

/// A sampler the program uses. `Resources::samplers[i]` serves `samplers[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplerVar {
    pub group: u32,
    pub binding: u32,
    /// `sampler_comparison`.
    pub comparison: bool,
    pub name: String,
}

/// A texture as the texture unit reads it: the texture's memory and the bound view.
#[derive(Clone, Copy, Debug)]
pub struct TextureBinding<'a> {
    pub texture: &'a Texture,
    pub view: &'a TextureView,
}

/// Memory a warp may access: one range of device memory per entry of `Program::bindings`,
/// in that order, as 32-bit words (device memory is words of `AtomicU32`, so shader loads,
/// stores and atomics from any number of threads are all defined). Every access is
/// bounds-checked against its range (WebGPU robust access). Textures and samplers serve
/// `Program::textures` and `Program::samplers` in order; the texture unit reads them.
/// Storage images serve `Program::storage_textures` in order; warps load and store them
/// directly.
#[derive(Clone, Copy, Debug)]
pub struct Resources<'a> {
    pub buffers: &'a [&'a [AtomicU32]],
    pub textures: &'a [TextureBinding<'a>],
    pub samplers: &'a [&'a Sampler],
    pub images: &'a [StorageImage<'a>],
}

impl Resources<'static> {
    /// No buffers, textures, samplers or images.
    pub const EMPTY: Resources<'static> = Resources {
        buffers: &[],
        textures: &[],
        samplers: &[],
        images: &[],
    };
}

impl<'a> Resources<'a> {
    /// Only buffers.
    pub fn buffers(buffers: &'a [&'a [AtomicU32]]) -> Resources<'a> {
        Resources {
            buffers,
            ..Resources::EMPTY
        }
    }
}

/// A shader failed to compile.
#[derive(Clone, Debug, PartialEq)]
pub enum CompileError {
    /// The source did not parse or validate. Line and column are 1-based; 0 when the input
    /// has no source text (SPIR-V).
    Source {
        message: String,
        line: u32,
        column: u32,
    },
    /// The entry point does not exist for that stage.
    NoEntryPoint { name: String, stage: Stage },
    /// A valid construct rastra's shader cores do not implement yet.
    Unsupported(String),
    /// Pipeline-overridable constants could not be applied (unknown name or id, missing
    /// value, value out of range for its type); the message names the constant.
    Override(String),
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
            CompileError::Override(what) => write!(f, "pipeline-overridable constants: {what}"),
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

/// What one warp (or workgroup) execution did. Summable (`+=`) across warps and workgroups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExecInfo {
    /// Lanes that executed `discard` (they finished as helpers; their outputs are dead).
    /// Summing ORs the masks, which only means something for the same warp.
    pub discarded: Mask,
    /// IR instructions issued (each counts once per warp, whatever the mask), loop iterations
    /// included. Always `alu + transcendental + memory + texture + control`.
    pub instructions: u64,
    /// Issued ALU instructions (arithmetic, conversions, moves, register indexing, subgroup
    /// and quad operations).
    pub alu: u64,
    /// Issued transcendental instructions (the SFU: sqrt, exp, log, trigonometry, pow).
    pub transcendental: u64,
    /// Issued memory instructions (buffer and workgroup loads, stores, atomics, lengths).
    pub memory: u64,
    /// Issued texture instructions.
    pub texture: u64,
    /// Issued control instructions (branches, loop iterations, calls, break/continue/return,
    /// discard, barriers).
    pub control: u64,
    /// Sum over issued instructions of the lanes active when issued; lane utilisation is
    /// `active_lanes / (instructions × WARP_LANES)`.
    pub active_lanes: u64,
    /// Branch decisions where the active mask split: an `if` with lanes on both sides, a
    /// `switch` whose lanes went to more than one case, a loop iteration after which some
    /// lanes left and others went on.
    pub divergent_branches: u64,
    /// Times a warp suspended at a workgroup barrier.
    pub barrier_waits: u64,
}

impl std::ops::AddAssign for ExecInfo {
    fn add_assign(&mut self, o: ExecInfo) {
        self.discarded |= o.discarded;
        self.instructions += o.instructions;
        self.alu += o.alu;
        self.transcendental += o.transcendental;
        self.memory += o.memory;
        self.texture += o.texture;
        self.control += o.control;
        self.active_lanes += o.active_lanes;
        self.divergent_branches += o.divergent_branches;
        self.barrier_waits += o.barrier_waits;
    }
}
