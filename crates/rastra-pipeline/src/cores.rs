//! The pipeline's view of the shader cores' statistics: one place that turns what a warp
//! execution reports (`ExecInfo`) into the frame's counters, for every stage.

use rastra_shader::ExecInfo;
use rastra_stats::Counters;
use rastra_texture::{L2Cache, TexelCacheStats, TextureUnit};

/// Adds one execution's shader-core statistics to `counters`. The execution has just
/// written `info` field by field, so each field is read on its own: a vector load spanning
/// several of those stores waits for them to reach the cache (a stall per warp).
#[inline(always)]
pub fn account(info: &ExecInfo, counters: &mut Counters) {
    // SAFETY: a plain read of an initialised field of a live reference.
    let read = |v: &u64| unsafe { std::ptr::read_volatile(v) };
    counters.instructions_alu += read(&info.alu);
    counters.instructions_transcendental += read(&info.transcendental);
    counters.instructions_memory += read(&info.memory);
    counters.instructions_texture += read(&info.texture);
    counters.instructions_control += read(&info.control);
    counters.issued_lane_slots += read(&info.instructions) * rastra_shader::WARP_LANES as u64;
    counters.active_lane_slots += read(&info.active_lanes);
    counters.divergent_branches += read(&info.divergent_branches);
    counters.barrier_waits += read(&info.barrier_waits);
}

/// Collects what a texture unit's caches did since its last reset: replays the L2
/// requests its L1 fills logged into the shared `l2` (callers do this in a fixed order —
/// tile, batch or workgroup-run order — so the figures do not depend on threads), and
/// zeroes the unit's counters.
pub fn drain_texture_unit(
    unit: &mut TextureUnit,
) -> (TexelCacheStats, Vec<rastra_texture::L2Request>) {
    let stats = unit.stats();
    unit.reset_stats();
    (stats, unit.take_l2_requests())
}

/// Replays one unit's drained L2 log into `l2` and adds its texel-cache figures to
/// `counters`.
pub fn account_texels(
    (mut stats, log): (TexelCacheStats, Vec<rastra_texture::L2Request>),
    l2: &mut L2Cache,
    counters: &mut Counters,
) {
    l2.replay(&log, &mut stats);
    counters.texel_requests += stats.requests;
    counters.texels_read += stats.texel_reads;
    counters.texel_l1_accesses += stats.l1_accesses;
    counters.texel_l1_misses += stats.l1_misses;
    counters.texel_l1_texels_filled += stats.l1_texels_filled;
    counters.texel_blocks_decoded += stats.blocks_decoded;
    counters.texel_l2_accesses += stats.l2_accesses;
    counters.texel_l2_misses += stats.l2_misses;
    counters.texture_bytes_from_memory += stats.bytes_from_memory;
}
