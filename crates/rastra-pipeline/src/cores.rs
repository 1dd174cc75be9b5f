//! The pipeline's view of the shader cores' statistics: one place that turns what a warp
//! execution reports (`ExecInfo`) into the frame's counters, for every stage.

use rastra_shader::ExecInfo;
use rastra_stats::Counters;
use rastra_texture::{L2Cache, L2Request, L2Share, L2Split, TexelCacheStats, TextureUnit};

use crate::workers::Workers;

/// What a texture unit's caches did since it was last drained ([`drain_texture_unit`]):
/// its figures and the L2 requests its L1 fills logged, in order.
pub struct TexelLog {
    pub stats: TexelCacheStats,
    pub requests: Vec<L2Request>,
    /// When the log is split by share of the L2's sets ([`L2Split::split`]): where each
    /// share's run of `requests` ends. Empty when it is not.
    pub share_ends: Vec<usize>,
}

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

/// Collects what a texture unit's caches did since its last reset — its figures and the
/// L2 requests its L1 fills logged, for the owner of the shared L2 to replay (callers do
/// this in a fixed order — tile, batch or workgroup-run order — so the figures do not
/// depend on threads) — and zeroes the unit's counters. With `split`, the log comes split
/// by share of the L2's sets ([`L2Split::split`]), on the worker that drains it, so that
/// each share of a parallel replay ([`account_texel_logs`]) reads only its own requests.
pub fn drain_texture_unit(unit: &mut TextureUnit, split: Option<&L2Split>) -> TexelLog {
    let stats = unit.stats();
    unit.reset_stats();
    let mut requests = unit.take_l2_requests();
    let share_ends = match split {
        Some(splitter) => splitter.split(&mut requests),
        None => Vec::new(),
    };
    TexelLog {
        stats,
        requests,
        share_ends,
    }
}

/// Replays one unit's drained L2 log into `l2` and adds its texel-cache figures to
/// `counters`.
pub fn account_texels(log: TexelLog, l2: &mut L2Cache, counters: &mut Counters) {
    let mut stats = log.stats;
    // (A split log replayed whole finds what the log finds: `L2Split::split`.)
    l2.replay(&log.requests, &mut stats);
    add_texel_stats(&stats, counters);
}

/// Logs at least this long in all are replayed in shares of the L2's sets, one per worker
/// ([`account_texel_logs`]); shorter ones on the calling thread (the same figures).
const SHARED_REPLAY_REQUESTS: usize = 1 << 14;

/// [`account_texels`] for many drained units, `logs[i]` counted to `counters[logs[i].0]`,
/// the logs replayed in their order — by the workers, each replaying every log into its own
/// share of the L2's sets ([`L2Cache::shares`]), when there are many requests: a line's
/// set alone decides its hits and misses, so the figures are those of one serial replay,
/// for any number of workers. A log split into as many shares ([`drain_texture_unit`])
/// gives each share only its run; another log is read whole by every share.
pub fn account_texel_logs(
    logs: Vec<(usize, TexelLog)>,
    l2: &mut L2Cache,
    workers: &Workers,
    counters: &mut [Counters],
) {
    let requests: usize = logs.iter().map(|(_, log)| log.requests.len()).sum();
    if requests == 0 {
        for (d, log) in &logs {
            add_texel_stats(&log.stats, &mut counters[*d]);
        }
        return;
    }
    let parts = if requests >= SHARED_REPLAY_REQUESTS {
        workers.threads()
    } else {
        1
    };
    let mut shares: Vec<(L2Share<'_>, Vec<u64>)> = l2
        .shares(parts)
        .into_iter()
        .map(|s| (s, Vec::new()))
        .collect();
    let n = shares.len();
    // Share k's part of each log: its run of a log split into n shares, else the whole log.
    fn part(log: &TexelLog, k: usize, n: usize) -> &[L2Request] {
        if log.share_ends.len() == n {
            let start = if k == 0 { 0 } else { log.share_ends[k - 1] };
            &log.requests[start..log.share_ends[k]]
        } else {
            &log.requests
        }
    }
    workers.for_each_mut(
        &mut shares,
        || (),
        |_, k, (share, misses)| {
            let lists: Vec<&[L2Request]> = logs.iter().map(|(_, log)| part(log, k, n)).collect();
            *misses = share.replay(&lists);
        },
    );
    let misses: Vec<u64> = (0..logs.len())
        .map(|i| shares.iter().map(|(_, m)| m[i]).sum())
        .collect();
    drop(shares);
    l2.advance(requests as u64);
    for ((d, log), misses) in logs.into_iter().zip(misses) {
        let mut stats = log.stats;
        l2.count(log.requests.len(), misses, &mut stats);
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
