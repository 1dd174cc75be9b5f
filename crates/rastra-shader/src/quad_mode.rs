//! Which texture instructions helper lanes need results from (T8: helper lanes exist only so
//! that a quad's derivatives are defined). A helper lane's values matter only where another
//! lane of its quad reads them — a derivative, a cross-lane operation, an implicit-LOD
//! sample's coordinates — or where they steer control flow (which would change what the
//! warp executes). A texture result that reaches none of those is dead in helper lanes, and
//! the texture unit need not fetch texels for them: GPU compilers make the same decision per
//! instruction (whole-quad mode only where derivatives need it, "exact" mode elsewhere).
//!
//! The analysis is flow-insensitive and conservative: a register counts as carrying the
//! result if any instruction that reads a carrying register writes it, anywhere in the
//! program and in any order (so loops are covered), with reads and writes as [`inst_regs`]
//! gives them (a texture instruction's exactly: a wider count could reach the registers of
//! outputs written from a sample's result — a false path back into the quad's
//! coordinates). A result marked helper-free is therefore never read by a derivative, a
//! cross-lane operation, an implicit-LOD sample or a control op, on any path.

use crate::ir::{Inst, Reg, SampleLod, TexOp, inst_regs};
use crate::simt::Op;

/// Sets [`crate::ir::TexInst::helper_results`] of every texture instruction in `insts`
/// (the instructions of SIMT code whose control ops are `ops`).
pub(crate) fn mark_helper_results(insts: &mut [Inst], ops: &[Op]) {
    if !insts.iter().any(|i| matches!(i, Inst::Texture(_))) {
        return;
    }
    // Every instruction's register reads and writes, expanded to single registers.
    let mut reads: Vec<Vec<u32>> = Vec::with_capacity(insts.len());
    let mut writes: Vec<Vec<u32>> = Vec::with_capacity(insts.len());
    let mut num_regs = 0u32;
    for inst in insts.iter() {
        let (mut r, mut w) = (Vec::new(), Vec::new());
        inst_regs(
            inst,
            &mut |first: Reg, n| r.extend(first.0..first.0 + n),
            &mut |first: Reg, n| w.extend(first.0..first.0 + n),
        );
        num_regs = num_regs.max(r.iter().chain(&w).map(|&x| x + 1).max().unwrap_or(0));
        reads.push(r);
        writes.push(w);
    }
    let control: Vec<u32> = ops
        .iter()
        .filter_map(|op| match *op {
            Op::If { cond, .. } | Op::BreakUnless { cond, .. } => Some(cond.0),
            Op::LoopBack {
                break_if: Some(cond),
                ..
            } => Some(cond.0),
            Op::Switch { selector, .. } | Op::Case { selector, .. } => Some(selector.0),
            _ => None,
        })
        .collect();
    num_regs = num_regs.max(control.iter().map(|&x| x + 1).max().unwrap_or(0));
    // Per instruction, the registers whose values it reads in other lanes.
    let quad_reads: Vec<Vec<u32>> = insts
        .iter()
        .map(cross_lane_reads)
        .filter(|r| !r.is_empty())
        .collect();
    let mut carrying = vec![false; num_regs as usize];
    for i in 0..insts.len() {
        if !matches!(insts[i], Inst::Texture(_)) {
            continue;
        }
        carrying.iter_mut().for_each(|c| *c = false);
        for &r in &writes[i] {
            carrying[r as usize] = true;
        }
        // To a fixed point: whatever reads a carrying register carries the result on.
        let mut changed = true;
        while changed {
            changed = false;
            for (r, w) in reads.iter().zip(&writes) {
                if r.iter().any(|&x| carrying[x as usize]) {
                    for &x in w {
                        changed |= !std::mem::replace(&mut carrying[x as usize], true);
                    }
                }
            }
        }
        let needed = control.iter().any(|&x| carrying[x as usize])
            || quad_reads
                .iter()
                .any(|r| r.iter().any(|&x| carrying.get(x as usize) == Some(&true)));
        if let Inst::Texture(t) = &mut insts[i] {
            t.helper_results = needed;
        }
    }
}

/// The registers `inst` reads in other lanes of its quad or subgroup: the operand of a
/// derivative, a subgroup operation, a shuffle or a ballot, and the coordinates of a sample
/// whose LOD comes from its quad (exactly those: an instruction's own result registers may
/// follow its operands, and [`inst_regs`] counts four coordinate registers).
fn cross_lane_reads(inst: &Inst) -> Vec<u32> {
    match inst {
        Inst::Derivative { src, .. }
        | Inst::SubgroupOp { src, .. }
        | Inst::Shuffle { src, .. }
        | Inst::Ballot { pred: src, .. } => vec![src.0],
        Inst::Texture(t) => match t.op {
            TexOp::Sample {
                coords,
                coord_count,
                lod: SampleLod::Implicit | SampleLod::Bias(_),
                ..
            } => (coords.0..coords.0 + coord_count.min(3)).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::Inst;
    use crate::{ShaderModule, Stage};

    /// The `helper_results` flags of `body`'s texture instructions, in program order, for
    /// a fragment shader with a 2D texture `t`, a sampler `s` and an input `uv`.
    fn flags(body: &str) -> Vec<bool> {
        let src = format!(
            "@group(0) @binding(0) var t: texture_2d<f32>;
            @group(0) @binding(1) var s: sampler;
            @fragment fn main(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {{
                {body}
            }}"
        );
        let module = ShaderModule::from_wgsl(&src).expect("compiles");
        let program = module.program("main", Stage::Fragment).expect("lowers");
        program
            .simt
            .insts
            .iter()
            .filter_map(|i| match i {
                Inst::Texture(t) => Some(t.helper_results),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn results_only_written_out_are_helper_free() {
        assert_eq!(flags("return textureSample(t, s, uv) * 2.0;"), [false]);
    }

    #[test]
    fn derivatives_of_results_need_helpers() {
        assert_eq!(
            flags("let c = textureSample(t, s, uv); return vec4<f32>(dpdx(c.r * 3.0));"),
            [true]
        );
        assert_eq!(
            flags("let c = textureSample(t, s, uv); return vec4<f32>(fwidth(c.g + 1.0));"),
            [true]
        );
    }

    #[test]
    fn dependent_reads_need_helpers_only_with_implicit_lod() {
        // The first sample's result is the second's coordinates: its LOD comes from them.
        assert_eq!(
            flags("let c = textureSample(t, s, uv); return textureSample(t, s, c.xy);"),
            [true, false]
        );
        // An explicit LOD reads only the lane's own coordinates.
        assert_eq!(
            flags("let c = textureSample(t, s, uv); return textureSampleLevel(t, s, c.xy, 0.0);"),
            [false, false]
        );
    }

    #[test]
    fn results_steering_control_flow_need_helpers() {
        assert_eq!(
            flags(
                "let c = textureSample(t, s, uv);
                if c.a < 0.5 { return vec4<f32>(0.0); }
                return c;"
            ),
            [true]
        );
    }

    #[test]
    fn results_carried_around_a_loop_are_followed() {
        // The sum reaches a derivative only after the loop, through a variable.
        assert_eq!(
            flags(
                "var acc = vec4<f32>(0.0);
                for (var i = 0; i < 3; i++) {
                    acc += textureSampleLevel(t, s, uv + vec2<f32>(f32(i)), 0.0);
                }
                return vec4<f32>(dpdy(acc.b));"
            ),
            [true]
        );
        assert_eq!(
            flags(
                "var acc = vec4<f32>(0.0);
                for (var i = 0; i < 3; i++) {
                    acc += textureSampleLevel(t, s, uv + vec2<f32>(f32(i)), 0.0);
                }
                return acc;"
            ),
            [false]
        );
    }
}
