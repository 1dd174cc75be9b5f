//! Compute dispatch (T13 "compute shaders"; ATTILA's unified shader model): a dispatch is a
//! grid of workgroups, each run on the shader cores as one or more warps that advance
//! together between barriers (`rastra_shader::execute_workgroup`). Workgroups run in
//! order, x fastest, on one `Workgroup` state that is reused.

use std::sync::atomic::AtomicU32;

use rastra_shader::{Program, Resources, Workgroup, execute_workgroup};
use rastra_stats::Counters;

use crate::DrawError;
use crate::cores::account;

/// Runs `counts` workgroups of the compute `program`.
pub fn dispatch(
    program: &Program,
    counts: [u32; 3],
    resources: &[&[AtomicU32]],
    budget: &mut u64,
    counters: &mut Counters,
) -> Result<(), DrawError> {
    if counts.contains(&0) {
        return Ok(());
    }
    let resources = Resources { buffers: resources };
    let mut workgroup = Workgroup::new(program);
    let size = program.workgroup_size;
    let invocations = size.iter().map(|&s| s as u64).product::<u64>();
    let warps = invocations.div_ceil(rastra_shader::WARP_LANES as u64);
    for z in 0..counts[2] {
        for y in 0..counts[1] {
            for x in 0..counts[0] {
                let info = execute_workgroup(
                    program,
                    &mut workgroup,
                    [x, y, z],
                    counts,
                    &resources,
                    budget,
                )?;
                account(&info, counters);
                counters.workgroups_dispatched += 1;
                counters.compute_warps += warps;
                counters.compute_shader_invocations += invocations;
            }
        }
    }
    Ok(())
}
