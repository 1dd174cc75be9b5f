//! The pipeline's view of the shader cores' statistics: one place that turns what a warp
//! execution reports (`ExecInfo`) into the frame's counters, for every stage.

use rastra_shader::ExecInfo;
use rastra_stats::Counters;
use rastra_texture::{L2Cache, L2Share, TexelCacheStats, TextureUnit};

use crate::front_end::TexelLog;
use crate::workers::Workers;

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
    add_texel_stats(&stats, counters);
}

/// Logs at least this long in all are replayed in shares of the L2's sets, one per worker
/// ([`account_texel_logs`]); shorter ones on the calling thread (the same figures).
const SHARED_REPLAY_REQUESTS: usize = 1 << 14;

/// [`account_texels`] for many drained units, `logs[i]` counted to `counters[logs[i].0]`,
/// the logs replayed in their order — by the workers, each replaying every log into its own
/// share of the L2's sets ([`L2Cache::shares`]), when there are many requests: a line's
/// set alone decides its hits and misses, so the figures are those of one serial replay,
/// for any number of workers.
pub fn account_texel_logs(
    logs: Vec<(usize, TexelLog)>,
    l2: &mut L2Cache,
    workers: &Workers,
    counters: &mut [Counters],
) {
    let requests: usize = logs.iter().map(|(_, (_, log))| log.len()).sum();
    if requests == 0 {
        for (d, (stats, _)) in &logs {
            add_texel_stats(stats, &mut counters[*d]);
        }
        return;
    }
    let parts = if requests >= SHARED_REPLAY_REQUESTS {
        workers.threads()
    } else {
        1
    };
    let lists: Vec<&[rastra_texture::L2Request]> =
        logs.iter().map(|(_, (_, log))| &log[..]).collect();
    let mut shares: Vec<(L2Share<'_>, Vec<u64>)> = l2
        .shares(parts)
        .into_iter()
        .map(|s| (s, Vec::new()))
        .collect();
    workers.for_each_mut(
        &mut shares,
        || (),
        |_, _, (share, misses)| {
            *misses = share.replay(&lists);
        },
    );
    let misses: Vec<u64> = (0..logs.len())
        .map(|i| shares.iter().map(|(_, m)| m[i]).sum())
        .collect();
    drop(shares);
    l2.advance(requests as u64);
    for ((d, (mut stats, log)), misses) in logs.into_iter().zip(misses) {
        l2.count(log.len(), misses, &mut stats);
        add_texel_stats(&stats, &mut counters[d]);
    }
}

/// Adds a unit's texel-cache figures (L2 replayed) to `counters`.
fn add_texel_stats(stats: &TexelCacheStats, counters: &mut Counters) {
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
