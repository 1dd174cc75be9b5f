//! Compute workgroups: the warps of one workgroup, its workgroup memory, and the warp scheduler
//! that advances them together between barriers (T13 compute shaders; T3 and ATTILA: a shader
//! unit switches between warps instead of giving every invocation a thread).
//!
//! Execution model. A workgroup of `n` invocations is `ceil(n / WARP_LANES)` warps; invocation
//! `i` (`local_invocation_index`) is lane `i % WARP_LANES` of warp `i / WARP_LANES`, and the
//! last warp's missing lanes are masked off. The scheduler runs the warps round-robin, each
//! until it issues a barrier or finishes. A barrier completes when every warp that has not
//! finished has reached a barrier; then all waiting warps resume. Barriers are counted per
//! warp, not matched by identity, so a barrier in non-uniform control flow (invalid WGSL that
//! naga's uniformity analysis missed) cannot hang: a warp waits only while some other warp is
//! still running, and a running warp always either reaches a barrier or finishes. Lanes of a
//! warp that did not take the branch simply resume with the warp. The instruction budget is
//! shared by all warps, so a runaway loop in any warp ends in `BudgetExhausted`.
//!
//! Memory model. All warps of a workgroup run on one thread, in scheduler order, so workgroup
//! memory is plain program-order memory between barriers; storage accesses are relaxed word
//! atomics on device memory, so workgroups may run on different threads at once.

use rastra_texture::TextureUnit;

use std::sync::atomic::{AtomicU32, Ordering};

use crate::warp::{Stop, run};
use crate::{
    Builtin, ExecError, ExecInfo, IoBinding, Program, Resources, WARP_LANES, Warp, lane_mask,
};

/// Most invocations one workgroup may have (WebGPU's `maxComputeInvocationsPerWorkgroup` is
/// 256 by default; rastra allows up to this many).
pub const MAX_WORKGROUP_INVOCATIONS: u32 = 1024;

/// A workgroup's state: `ceil(workgroup_size / WARP_LANES)` warps, workgroup memory, scheduler.
/// Reusable: [`execute_workgroup`] resets everything it uses.
#[derive(Debug)]
pub struct Workgroup {
    warps: Vec<Warp>,
    waiting: Vec<bool>,
    done: Vec<bool>,
    shared: Vec<AtomicU32>,
    invocations: u32,
}

impl Workgroup {
    /// Allocates the warps and workgroup memory `program` needs.
    pub fn new(program: &Program) -> Workgroup {
        let invocations = program
            .workgroup_size
            .iter()
            .fold(1u64, |a, &s| a * s as u64)
            .min(MAX_WORKGROUP_INVOCATIONS as u64) as u32;
        let n = (invocations as usize).div_ceil(WARP_LANES);
        Workgroup {
            warps: (0..n).map(|_| Warp::new(program)).collect(),
            waiting: vec![false; n],
            done: vec![false; n],
            shared: (0..program.workgroup_memory.div_ceil(4))
                .map(|_| AtomicU32::new(0))
                .collect(),
            invocations,
        }
    }

    /// The workgroup memory, one word per 4 bytes (for tests and debuggers).
    pub fn memory(&self) -> &[AtomicU32] {
        &self.shared
    }

    /// The warps (their registers hold the invocations' final values after a run).
    pub fn warps(&self) -> &[Warp] {
        &self.warps
    }
}

/// Runs one workgroup of a compute program to completion. Fills the compute builtins itself
/// (local_invocation_id/index, global_invocation_id, workgroup_id, num_workgroups, subgroup
/// id and count); zero-initialises workgroup memory. `wg` must come from
/// [`Workgroup::new`] for this `program`.
pub fn execute_workgroup(
    program: &Program,
    wg: &mut Workgroup,
    workgroup_id: [u32; 3],
    num_workgroups: [u32; 3],
    resources: &Resources,
    unit: &mut TextureUnit,
    budget: &mut u64,
) -> Result<ExecInfo, ExecError> {
    for w in &wg.shared {
        w.store(0, Ordering::Relaxed);
    }
    let size = program.workgroup_size.map(|s| s.max(1));
    let num_warps = wg.warps.len() as u32;
    for (wi, warp) in wg.warps.iter_mut().enumerate() {
        let first = wi as u32 * WARP_LANES as u32;
        let lanes = (wg.invocations - first).min(WARP_LANES as u32);
        // Each lane's local id: the first lane's by division, the others by stepping x,
        // then y, then z (the same values; divisions per lane are slow).
        let [mut x, mut y, mut z] = [
            first % size[0],
            first / size[0] % size[1],
            first / (size[0] * size[1]),
        ];
        let mut local = [[0u32; WARP_LANES]; 3];
        if x + WARP_LANES as u32 <= size[0] {
            // The warp stays in one row: x counts up, y and z are the first lane's.
            local[0] = std::array::from_fn(|l| x + l as u32);
            local[1] = [y; WARP_LANES];
            local[2] = [z; WARP_LANES];
        } else {
            let [lx, ly, lz] = &mut local;
            for ((lx, ly), lz) in lx.iter_mut().zip(ly.iter_mut()).zip(lz.iter_mut()) {
                [*lx, *ly, *lz] = [x, y, z];
                x += 1;
                if x == size[0] {
                    x = 0;
                    y += 1;
                    if y == size[1] {
                        y = 0;
                        z += 1;
                    }
                }
            }
        }
        for io in &program.inputs {
            let IoBinding::Builtin(b) = io.binding else {
                continue;
            };
            let regs = warp.regs_mut(io.first_reg, io.ty.components as u32);
            for (c, r) in regs.iter_mut().enumerate() {
                let k = c.min(2);
                *r = match b {
                    Builtin::LocalInvocationIndex if c == 0 => {
                        std::array::from_fn(|l| first + l as u32)
                    }
                    Builtin::LocalInvocationId => local[k],
                    Builtin::GlobalInvocationId => {
                        let base = workgroup_id[k].wrapping_mul(size[k]);
                        local[k].map(|v| base.wrapping_add(v))
                    }
                    Builtin::WorkGroupId => [workgroup_id[k]; WARP_LANES],
                    Builtin::NumWorkGroups => [num_workgroups[k]; WARP_LANES],
                    Builtin::SubgroupId if c == 0 => [wi as u32; WARP_LANES],
                    Builtin::NumSubgroups if c == 0 => [num_warps; WARP_LANES],
                    _ => [0; WARP_LANES],
                };
            }
        }
        warp.start(program, lane_mask(lanes as usize), 0);
    }
    wg.done.fill(false);
    let mut info = ExecInfo::default();
    loop {
        wg.waiting.fill(false);
        for wi in 0..wg.warps.len() {
            if wg.done[wi] {
                continue;
            }
            match run(
                program,
                &mut wg.warps[wi],
                &wg.shared,
                resources,
                unit,
                budget,
                &mut info,
            )? {
                Stop::Finished => wg.done[wi] = true,
                Stop::Barrier => {
                    wg.waiting[wi] = true;
                    info.barrier_waits += 1;
                }
            }
        }
        // Every unfinished warp now waits at a barrier: it completes.
        if !wg.waiting.iter().any(|&w| w) {
            break;
        }
    }
    Ok(info)
}
