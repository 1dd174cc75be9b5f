//! rastra as a wgpu backend (`wgpu::custom`, wgpu 30): a wgpu program runs on rastra by
//! creating its instance with [`instance()`] and changes nothing else.
//!
//! ```text
//! wgpu API ─► wgpu::custom traits (this crate) ─► rastra's API (validation, encoders,
//!             objects + WebGPU error model        queue) ─► command processor ─► pipeline
//! ```
//!
//! This crate translates; rastra does the work. wgpu objects wrap rastra objects
//! (`resource`, `binding`, `pipeline`), wgpu's free-standing passes record into a list that
//! `finish` replays through rastra's encoder (`command`), and WebGPU's error model (error
//! scopes, uncaptured errors, invalid objects, device loss) sits on top (`error`,
//! `device`). The adapter advertises only what rastra implements (`instance`);
//! unimplemented calls report `Unsupported` validation errors, never panic.
//!
//! rastra's statistics for a submission are reachable from wgpu code through
//! [`last_report`].

mod binding;
mod command;
pub mod convert;
mod device;
mod error;
mod instance;
mod pipeline;
mod resource;
mod surface;
mod unsupported;

pub use device::{RastraDevice, RastraQueue};
pub use instance::{RastraAdapter, RastraInstance};

/// A wgpu instance whose one adapter is rastra, with rastra's default device settings
/// (threads: `RASTRA_THREADS` or every core).
pub fn instance() -> wgpu::Instance {
    instance_with(rastra::DeviceDescriptor::default())
}

/// A wgpu instance whose devices use `config` (thread count, shader instruction budget,
/// texel-cache geometry).
pub fn instance_with(config: rastra::DeviceDescriptor) -> wgpu::Instance {
    wgpu::Instance::from_custom(RastraInstance::with_config(config))
}

/// rastra's statistics (per draw and dispatch: vertices, primitives, quads, texel cache,
/// ROP traffic …) of the last submission on `device`; None if `device` is not a rastra
/// device or nothing was submitted yet.
pub fn last_report(device: &wgpu::Device) -> Option<rastra::FrameStats> {
    device.as_custom::<RastraDevice>()?.last_report()
}
