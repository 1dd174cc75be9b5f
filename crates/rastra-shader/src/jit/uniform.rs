//! Which registers hold one value in every lane that can read it — uniform values, the
//! scalar registers of a GPU (AMD's SGPRs: a loop counter, a stride, a branch condition the
//! whole warp agrees on are kept once per warp, not once per lane).
//!
//! The compiled code keeps such a register as one machine word: its instructions are
//! scalar instructions, and a branch on it takes the whole warp one way with no lane mask
//! to gather. Lanes outside the warp's starting mask never run, so "every lane that can
//! read it" is every lane of that mask.
//!
//! A register is uniform when every write gives all those lanes one value:
//! - unmasked writes (`Const`, `Mov`, arithmetic: every lane is written) of operands that
//!   are all uniform;
//! - masked `Store`s of a uniform value where the control flow is uniform — the mask there
//!   is the warp's starting mask, because no lane has left by a divergent branch, break,
//!   continue or return;
//! - loads from buffer or workgroup memory at a uniform address (a uniform-buffer field,
//!   `array[k]` for a uniform k: AMD's scalar memory loads): a load writes every lane, all
//!   of them from the one word, in one instruction.
//!
//! Control is uniform at the program's start; an `If`, `Switch` or exit test keeps it
//! uniform when its condition is. A construct some lanes leave early (a `Break`,
//! `Continue`, `Return` or exit test under divergent control) makes the rest of every
//! construct up to the one they leave for divergent, and a loop that lanes leave at
//! different iterations is divergent all through (its later iterations run with fewer
//! lanes). Uniform registers decide which conditions are uniform, which decides which
//! stores are at uniform control, so the analysis starts from "all uniform" and repeats
//! until nothing changes (each pass only takes uniformity away, so it ends).
//!
//! Registers the program never writes (its inputs) or may read before its first write are
//! not uniform; neither is anything texture, image, atomic or cross-lane operations write,
//! nor a load at per-lane addresses.

use std::collections::HashSet;

use crate::ir::{Inst, Reg};
use crate::simt::{Code, Op};

use super::liveness::{RegUses, inst_regs};

/// The uniform registers of one program.
pub(super) struct Uniform {
    uniform: Vec<bool>,
    /// Per op: for a barrier, the uniform registers whose values may be read after it
    /// (they go through the register file while the warp waits).
    kept: Vec<Vec<Reg>>,
    /// Per op: control is uniform there (the mask is the warp's starting mask).
    control: Vec<bool>,
}

/// A control construct open at some point of the code.
struct Frame {
    /// Control is uniform here (at the point being walked).
    uniform: bool,
    /// The `If`'s condition (for its reject block).
    cond: Option<Reg>,
    /// The pc of the `Loop` op, for loops.
    loop_pc: Option<usize>,
}

impl Uniform {
    /// The analysis of `code`, whose results the pipeline reads from `outputs`.
    pub fn new(code: &Code, outputs: &[u32], uses: &RegUses) -> Uniform {
        // Per register: the first instruction reading it and the first writing it.
        let mut first: Vec<[Option<usize>; 2]> = Vec::new();
        for (i, inst) in code.insts.iter().enumerate() {
            let (mut reads, mut writes) = (Vec::new(), Vec::new());
            inst_regs(inst, &mut |r, n| reads.push((r, n)), &mut |r, n| {
                writes.push((r, n))
            });
            for (side, list) in [reads, writes].into_iter().enumerate() {
                for (r, n) in list {
                    for r in r.0 as usize..(r.0 + n) as usize {
                        if r >= first.len() {
                            first.resize(r + 1, [None; 2]);
                        }
                        first[r][side].get_or_insert(i);
                    }
                }
            }
        }
        // Written, and never read before the first write (instruction order is program
        // order except for loops' back edges, which a first read cannot come by).
        let mut uniform: Vec<bool> = first
            .iter()
            .map(|&[read, write]| match (read, write) {
                (_, None) => false,
                (Some(read), Some(write)) => write <= read,
                (None, Some(_)) => true,
            })
            .collect();
        let mut divergent_loops = HashSet::new();
        let mut control = vec![false; code.ops.len()];
        // The pass that changes nothing has seen the final state: its control flags hold.
        while walk(code, &mut uniform, &mut divergent_loops, &mut control) {}
        let kept = kept_across_barriers(code, outputs, uses, &uniform);
        Uniform {
            uniform,
            kept,
            control,
        }
    }

    /// Whether control is uniform at op `pc`: every lane of the warp's starting mask is
    /// active there, so a masked write there may write every lane.
    pub fn uniform_control(&self, pc: usize) -> bool {
        self.control.get(pc).copied().unwrap_or(false)
    }

    /// Registers the program's instructions name (the analysis covers `0..registers()`).
    pub fn registers(&self) -> usize {
        self.uniform.len()
    }

    pub fn is_uniform(&self, r: Reg) -> bool {
        self.uniform.get(r.0 as usize).copied().unwrap_or(false)
    }

    /// The uniform registers whose values the code after the barrier at `pc` may read.
    pub fn kept_across(&self, pc: usize) -> &[Reg] {
        &self.kept[pc]
    }

    /// Every register some barrier keeps.
    pub fn kept_anywhere(&self) -> Vec<Reg> {
        let mut all: Vec<Reg> = self.kept.iter().flatten().copied().collect();
        all.sort_unstable_by_key(|r| r.0);
        all.dedup();
        all
    }
}

/// Per op, for barriers: the uniform registers read after the barrier (at a later
/// instruction, by a later control op or by the pipeline) or anywhere in a loop around it
/// (the next iteration reads what this one wrote) — except values only read in the run
/// that wrote them (no barrier is inside a run).
fn kept_across_barriers(
    code: &Code,
    outputs: &[u32],
    uses: &RegUses,
    uniform: &[bool],
) -> Vec<Vec<Reg>> {
    let mut local = vec![false; uniform.len()];
    for op in &code.ops {
        if let Op::Run { start, len, .. } = *op {
            for inst in &code.insts[start as usize..(start + len) as usize] {
                inst_regs(inst, &mut |_, _| {}, &mut |r, n| {
                    for k in 0..n {
                        let r = r.0 + k;
                        if let Some(l) = local.get_mut(r as usize) {
                            *l |= uses.local_to(r, start, start + len);
                        }
                    }
                });
            }
        }
    }
    // Reads by position: instruction index, or for a control op the index of the next
    // instruction; the pipeline reads outputs after everything.
    let mut reads: Vec<(u32, usize)> = Vec::new();
    for (i, inst) in code.insts.iter().enumerate() {
        inst_regs(
            inst,
            &mut |r, n| {
                for k in 0..n {
                    reads.push((r.0 + k, i));
                }
            },
            &mut |_, _| {},
        );
    }
    let mut position = Vec::with_capacity(code.ops.len());
    let mut next = 0usize;
    for op in &code.ops {
        position.push(next);
        match *op {
            Op::Run { len, .. } => next += len as usize,
            Op::If { cond, .. } | Op::BreakUnless { cond, .. } => reads.push((cond.0, next)),
            Op::LoopBack {
                break_if: Some(cond),
                ..
            } => reads.push((cond.0, next)),
            Op::Switch { selector, .. } | Op::Case { selector, .. } => {
                reads.push((selector.0, next))
            }
            _ => {}
        }
    }
    reads.extend(outputs.iter().map(|&r| (r, usize::MAX)));
    reads.retain(|&(r, _)| uniform.get(r as usize).copied().unwrap_or(false) && !local[r as usize]);
    let mut kept = vec![Vec::new(); code.ops.len()];
    // Instruction ranges of the loops open at each point.
    let mut open: Vec<usize> = Vec::new();
    let mut loops: Vec<(usize, usize)> = Vec::new();
    let mut end_of = vec![0usize; code.ops.len()];
    for (pc, op) in code.ops.iter().enumerate() {
        match op {
            Op::Loop { .. } => open.push(pc),
            Op::LoopEnd => {
                let start = open.pop().expect("loops nest");
                end_of[start] = position[pc];
            }
            _ => {}
        }
    }
    for (pc, op) in code.ops.iter().enumerate() {
        match op {
            Op::Loop { .. } => loops.push((position[pc], end_of[pc])),
            Op::LoopEnd => {
                loops.pop();
            }
            Op::Barrier => {
                let at = position[pc];
                let mut regs: Vec<Reg> = reads
                    .iter()
                    .filter(|&&(_, i)| i >= at || loops.iter().any(|&(s, e)| s <= i && i < e))
                    .map(|&(r, _)| Reg(r))
                    .collect();
                regs.sort_unstable_by_key(|r| r.0);
                regs.dedup();
                kept[pc] = regs;
            }
            _ => {}
        }
    }
    kept
}

/// One pass over the code: takes uniformity from registers written with varying values
/// and marks loops that lanes leave divergently; notes whether control is uniform at each
/// op. Whether anything changed.
fn walk(
    code: &Code,
    uniform: &mut [bool],
    divergent_loops: &mut HashSet<usize>,
    control: &mut [bool],
) -> bool {
    let mut changed = false;
    let u = |uniform: &[bool], r: Reg| uniform.get(r.0 as usize).copied().unwrap_or(false);
    let mut stack = vec![Frame {
        uniform: true,
        cond: None,
        loop_pc: None,
    }];
    // Lanes leaving for frame `target` under divergent control: the rest of every frame
    // from there in is divergent, and so is every loop among them.
    let escape = |stack: &mut Vec<Frame>, target: usize, loops: &mut HashSet<usize>| {
        let mut changed = false;
        for f in stack.iter_mut().skip(target) {
            f.uniform = false;
            if let Some(pc) = f.loop_pc {
                changed |= loops.insert(pc);
            }
        }
        changed
    };
    for (pc, op) in code.ops.iter().enumerate() {
        let cur = stack.last().is_some_and(|f| f.uniform);
        control[pc] = cur;
        match *op {
            Op::Run { start, len, .. } => {
                for inst in &code.insts[start as usize..(start + len) as usize] {
                    let keeps = match *inst {
                        Inst::Const { .. } | Inst::BufferLen { .. } => true,
                        // Every lane reads (masked or not) the word at one address, in
                        // one instruction: one value.
                        Inst::Load { offset, .. } => offset.is_none_or(|r| u(uniform, r)),
                        Inst::Mov { src, .. } => u(uniform, src),
                        Inst::Store { src, .. } => cur && u(uniform, src),
                        Inst::Unary { a, .. } => u(uniform, a),
                        Inst::Binary { a, b, .. } => u(uniform, a) && u(uniform, b),
                        Inst::Ternary { a, b, c, .. } => {
                            u(uniform, a) && u(uniform, b) && u(uniform, c)
                        }
                        _ => false,
                    };
                    if !keeps {
                        inst_regs(inst, &mut |_, _| {}, &mut |r, n| {
                            for k in 0..n as usize {
                                if let Some(x) = uniform.get_mut(r.0 as usize + k) {
                                    changed |= std::mem::replace(x, false);
                                }
                            }
                        });
                    }
                }
            }
            Op::If { cond, .. } => stack.push(Frame {
                uniform: cur && u(uniform, cond),
                cond: Some(cond),
                loop_pc: None,
            }),
            Op::Else { .. } => {
                let n = stack.len();
                let outer = stack[n - 2].uniform;
                let cond = stack[n - 1].cond.expect("an Else is inside an If");
                stack[n - 1].uniform = outer && u(uniform, cond);
            }
            Op::Loop { .. } => stack.push(Frame {
                uniform: cur && !divergent_loops.contains(&pc),
                cond: None,
                loop_pc: Some(pc),
            }),
            Op::LoopBack {
                break_if: Some(r), ..
            } if !(cur && u(uniform, r)) => {
                let top = stack.len() - 1;
                changed |= escape(&mut stack, top, divergent_loops);
            }
            Op::Switch { selector, .. } => stack.push(Frame {
                uniform: cur && u(uniform, selector),
                cond: None,
                loop_pc: None,
            }),
            Op::Region { .. } => stack.push(Frame {
                uniform: cur,
                cond: None,
                loop_pc: None,
            }),
            Op::EndIf | Op::LoopEnd | Op::EndSwitch | Op::EndRegion => {
                stack.pop();
            }
            Op::Break { frame } | Op::Continue { frame } | Op::Return { frame } if !cur => {
                changed |= escape(&mut stack, frame as usize, divergent_loops);
            }
            Op::BreakUnless { cond, frame } if !(cur && u(uniform, cond)) => {
                changed |= escape(&mut stack, frame as usize, divergent_loops);
            }
            _ => {}
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ShaderModule, Stage};

    /// The analysis of `src`'s entry point and the registers its ALU instructions and loads
    /// write, in order, with the instruction's text — enough to pick out a register by what writes it.
    fn analyse(src: &str, stage: Stage) -> (Uniform, Vec<(Reg, String)>) {
        let module = ShaderModule::from_wgsl(src).expect("compiles");
        let (name, _) = module.entry_points()[0].clone();
        let p = module.program(&name, stage).expect("lowers");
        let outputs: Vec<u32> = p
            .outputs
            .iter()
            .flat_map(|o| o.first_reg..o.first_reg + o.ty.components as u32)
            .collect();
        let uses = RegUses::new(&p.simt, &outputs);
        let u = Uniform::new(&p.simt, &outputs, &uses);
        let writes = p
            .simt
            .insts
            .iter()
            .filter_map(|i| {
                let dst = match *i {
                    Inst::Load { dst, .. } => Some(dst),
                    _ => super::super::alu_dst(i),
                };
                dst.map(|d| (d, format!("{i:?}")))
            })
            .collect();
        (u, writes)
    }

    /// Whether every register that instructions matching `pat` write is uniform (there
    /// must be one).
    fn all_uniform(u: &Uniform, writes: &[(Reg, String)], pat: &str) -> bool {
        let regs: Vec<Reg> = writes
            .iter()
            .filter(|(_, t)| t.contains(pat))
            .map(|(r, _)| *r)
            .collect();
        assert!(!regs.is_empty(), "no instruction matches {pat}");
        regs.iter().all(|&r| u.is_uniform(r))
    }

    #[test]
    fn loop_counters_are_uniform_and_per_lane_values_are_not() {
        let (u, w) = analyse(
            "@group(0) @binding(0) var<storage, read_write> out: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) id: vec3<u32>) {
                var x = f32(id.x) * 0.5;
                for (var i = 0; i < 64; i = i + 1) {
                    x = fma(x, 0.999, 0.0007);
                }
                out[id.x] = x;
            }",
            Stage::Compute,
        );
        // The counter's compare and increment, and the FMA on the per-lane value.
        assert!(all_uniform(&u, &w, "op: SLt"));
        assert!(all_uniform(&u, &w, "op: IAdd"));
        assert!(!all_uniform(&u, &w, "op: Fma"));
        assert!(!all_uniform(&u, &w, "op: U2F"));
    }

    #[test]
    fn a_divergent_break_makes_the_loop_divergent() {
        // `n` is only ever given uniform values, but lanes leave the loop at different
        // iterations (the break comes after the store: only the loop's later iterations
        // run with fewer lanes), so after it lanes hold different counts.
        let (u, w) = analyse(
            "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {
                var n = 0u;
                loop {
                    n = n + 3u;
                    if x < f32(n) { break; }
                }
                return vec4<f32>(f32(n));
            }",
            Stage::Fragment,
        );
        assert!(!all_uniform(&u, &w, "op: IAdd"));
        assert!(!all_uniform(&u, &w, "op: U2F"));
    }

    #[test]
    fn stores_under_divergent_control_are_not_uniform() {
        let (u, w) = analyse(
            "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {
                var a = 1.0;
                var b = 2.0;
                if x > 0.5 { a = 5.0; }
                if b > 1.0 { b = 7.0; }
                return vec4<f32>(a * 3.0, b * 4.0, 0.0, 1.0);
            }",
            Stage::Fragment,
        );
        // `b`'s branch is uniform (its condition is), `a`'s is not.
        let muls: Vec<Reg> = w
            .iter()
            .filter(|(_, t)| t.contains("op: FMul"))
            .map(|(r, _)| *r)
            .collect();
        assert_eq!(muls.len(), 2);
        assert!(!u.is_uniform(muls[0]), "a * 3.0");
        assert!(u.is_uniform(muls[1]), "b * 4.0");
    }

    #[test]
    fn loads_at_uniform_addresses_are_uniform() {
        let (u, w) = analyse(
            "struct Globals { light: vec4<f32>, k: u32 }
            @group(0) @binding(0) var<uniform> g: Globals;
            @group(0) @binding(1) var<storage, read> table: array<f32>;
            @fragment fn main(@location(0) x: f32, @location(1) @interpolate(flat) i: u32)
                -> @location(0) vec4<f32> {
                let l = normalize(g.light.xyz);
                return vec4<f32>(l * x, table[g.k] + table[i]);
            }",
            Stage::Fragment,
        );
        // The light's fields are loads at fixed addresses: its normalisation is uniform,
        // its products with the per-lane `x` are not.
        assert!(all_uniform(&u, &w, "mem: Buffer(0)"));
        assert!(all_uniform(&u, &w, "op: FSqrt"));
        assert!(all_uniform(&u, &w, "op: FDiv"));
        assert!(!all_uniform(&u, &w, "op: FMul, dst"));
        // `table[g.k]` is read at a uniform address, `table[i]` at per-lane ones.
        let table: Vec<bool> = w
            .iter()
            .filter(|(_, t)| t.contains("mem: Buffer(1)"))
            .map(|(r, _)| u.is_uniform(*r))
            .collect();
        assert_eq!(table, [true, false]);
    }

    #[test]
    fn inputs_are_not_uniform() {
        let (u, _) = analyse(
            "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {
                return vec4<f32>(x);
            }",
            Stage::Fragment,
        );
        assert!(!u.is_uniform(Reg(0)));
    }
}
