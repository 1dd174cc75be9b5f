//! rastra's shader cores (T3 "Shader Unit internals", T8 pixel shading, ATTILA's unified shader model).
//!
//! Shaders enter as WGSL, GLSL or SPIR-V, are parsed and validated by naga, and are lowered to rastra's own
//! scalar IR ([`ir`]): one lane is one invocation, vectors and matrices are split into scalar
//! registers, structured control flow stays structured. A shader core ([`warp`]) executes one
//! warp of [`WARP_LANES`] lanes at a time under an execution mask; pixel warps are whole 2×2
//! quads so derivatives come from neighbouring lanes. A slow reference interpreter
//! ([`reference`](mod@reference)) runs the same IR one lane at a time for differential tests.
//!
//! Pipeline of this crate, in order:
//! [`ShaderModule::from_wgsl`] / `from_glsl` / `from_spirv` (naga parse + validate) →
//! [`ShaderModule::program_with_overrides`] (`front`: naga IR → rastra [`ir`], inlining every
//! call; `simt`: laid out for a warp's control stack) → [`execute`] on a [`Warp`] (`warp`,
//! using the ALU tables in `alu`) for vertex and pixel warps, [`execute_workgroup`] on a
//! [`Workgroup`] (`workgroup`: warps scheduled between barriers) for compute, or
//! [`reference::execute_lane`].
//!
//! API boundary: the shader core knows nothing about primitives, pixels or formats. The
//! fixed-function pipeline fills input registers, runs a warp and reads output registers
//! through the [`Program`]'s interface description.

mod interface;
pub use interface::*;

mod program;
pub use program::{Program, ShaderModule};

mod front;
pub mod ir;

mod alu;
mod image;
mod jit;
mod pow;
mod quad_mode;
mod simt;
mod texture;
mod trig;
pub mod warp;
pub use warp::{Warp, execute};

mod workgroup;
pub use workgroup::{MAX_WORKGROUP_INVOCATIONS, Workgroup, execute_workgroup};

pub mod reference;
