//! rastra's fixed-function pipeline: the units between the API and memory, in pipeline order.
//!
//! ```text
//! draw ─► input_assembler ─► vertex (batches of ≤32 unique vertices, shaded on the cores)
//!      ─► primitive (assembly) ─► clip (out-codes, guard band) ─► setup (divide, viewport,
//!         8-bit snap, cull, edge functions) ─► binning (screen tiles, API order)
//!      ─► raster (coarse 8×8 blocks, fine 2×2 quads) ─► depth (early Z) ─► pixel (quad warps
//!         on the cores, helper lanes) ─► depth (late Z) ─► output_merger (blend, masks, store)
//! ```
//!
//! Units are modules named after the stage they implement; [`draw`] is the command processor's
//! entry point that runs one draw through all of them, [`compute`] the one that runs a
//! dispatch; [`cores`] accounts the shader cores' statistics for both. Every unit counts its work in
//! [`rastra_stats::Counters`] where the work happens.

// Units walk parallel per-lane / per-sample / per-component arrays by index on purpose.
#![allow(clippy::needless_range_loop)]

pub mod format;
pub mod state;

pub mod link;
pub mod memory;

pub mod binning;
pub mod clip;
pub mod depth;
pub mod hidden;
pub mod hiz;
pub mod input_assembler;
pub mod interpolate;
pub mod output_merger;
pub mod pixel;
pub mod primitive;
pub mod raster;
pub mod setup;
pub mod vertex;

pub mod workers;

pub mod front_end;

pub mod draw;

pub mod compute;

pub mod cores;

#[cfg(test)]
mod test_support;

pub use draw::{DrawCall, DrawError, DrawOutput, DrawRange, StageResources, draw_batch};
pub use front_end::ChunkPool;
pub use link::{LinkError, RenderPipeline, RenderPipelineDesc};
pub use memory::{BufferSlice, ColorTarget, DepthTarget, Framebuffer};
pub use workers::Workers;
