//! Compute dispatch (T13 "compute shaders"; ATTILA's unified shader model): a dispatch is a
//! grid of workgroups, each run on the shader cores as one or more warps that advance
//! together between barriers (`rastra_shader::execute_workgroup`). Workgroups are
//! independent, so the workers take them in parallel (each worker reusing one `Workgroup`
//! state); their statistics are merged in workgroup order, so they do not depend on the
//! thread count. Memory is `AtomicU32` words, so concurrent workgroups' stores and atomics
//! are well defined.

use std::sync::atomic::{AtomicU64, Ordering};

use rastra_shader::{ExecError, ExecInfo, Program, Workgroup, execute_workgroup};
use rastra_stats::Counters;
use rastra_texture::{L2Cache, TextureUnit};

use crate::DrawError;
use crate::cores::{account, account_texels, drain_texture_unit};
use crate::draw::StageResources;
use crate::workers::Workers;

/// Runs `counts` workgroups of the compute `program`. Each run of workgroups starts on a
/// shader core with an empty texture L1; the runs' L2 traffic reaches `l2` in run order.
pub fn dispatch(
    program: &Program,
    counts: [u32; 3],
    stage: &StageResources<'_>,
    workers: &Workers,
    l2: &mut L2Cache,
    budget: &mut u64,
    counters: &mut Counters,
) -> Result<(), DrawError> {
    if counts.contains(&0) {
        return Ok(());
    }
    let resources = stage.resources();
    let textured = stage.uses_textures();
    let size = program.workgroup_size;
    let invocations = size.iter().map(|&s| s as u64).product::<u64>();
    let warps = invocations.div_ceil(rastra_shader::WARP_LANES as u64);
    let total = counts.iter().map(|&c| c as usize).product::<usize>();
    let shared_budget = AtomicU64::new(*budget);
    let texel_cache = *l2.config();
    // Workers take runs of consecutive workgroups (x fastest), so small workgroups amortise
    // the hand-off.
    const RUN: usize = 8;
    let results = workers.map_init(
        total.div_ceil(RUN),
        || {
            (
                Workgroup::new(program),
                TextureUnit::with_shared_l2(texel_cache),
            )
        },
        |(workgroup, unit), run| -> Result<_, ExecError> {
            if textured {
                unit.invalidate_l1();
            }
            let mut info = ExecInfo::default();
            for i in run * RUN..(run * RUN + RUN).min(total) {
                let x = (i % counts[0] as usize) as u32;
                let y = (i / counts[0] as usize % counts[1] as usize) as u32;
                let z = (i / (counts[0] as usize * counts[1] as usize)) as u32;
                let start = shared_budget.load(Ordering::Relaxed);
                let mut local = start;
                let result = execute_workgroup(
                    program,
                    workgroup,
                    [x, y, z],
                    counts,
                    &resources,
                    unit,
                    &mut local,
                );
                let used = start - local;
                let _ = shared_budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                    Some(b.saturating_sub(used))
                });
                info += result?;
            }
            Ok((info, textured.then(|| drain_texture_unit(unit, None))))
        },
    );
    for result in results {
        let (info, texels) = result?;
        account(&info, counters);
        if let Some(texels) = texels {
            account_texels(texels, l2, counters);
        }
    }
    counters.workgroups_dispatched += total as u64;
    counters.compute_warps += warps * total as u64;
    counters.compute_shader_invocations += invocations * total as u64;
    *budget = shared_budget.load(Ordering::Relaxed);
    Ok(())
}
