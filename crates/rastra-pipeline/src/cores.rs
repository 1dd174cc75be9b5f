//! The pipeline's view of the shader cores' statistics: one place that turns what a warp
//! execution reports (`ExecInfo`) into the frame's counters, for every stage.

use rastra_shader::ExecInfo;
use rastra_stats::Counters;

/// Adds one execution's shader-core statistics to `counters`.
pub fn account(info: &ExecInfo, counters: &mut Counters) {
    counters.instructions_alu += info.alu;
    counters.instructions_transcendental += info.transcendental;
    counters.instructions_memory += info.memory;
    counters.instructions_texture += info.texture;
    counters.instructions_control += info.control;
    counters.issued_lane_slots += info.instructions * rastra_shader::WARP_LANES as u64;
    counters.active_lane_slots += info.active_lanes;
    counters.divergent_branches += info.divergent_branches;
    counters.barrier_waits += info.barrier_waits;
}
