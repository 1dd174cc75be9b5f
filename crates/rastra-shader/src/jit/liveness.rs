//! Which register values the compiled code may keep out of the register file.
//!
//! A run's native code works on register chunks held in machine registers and writes the
//! ones it changed back to the warp's register file when a segment of it ends (at a callback
//! into the interpreter, at `sin`/`cos`, at the end of the run). Most of those values are
//! temporaries of one expression: written and read inside the same segment and never again.
//! Writing them back is wasted work — the register file is read only by later
//! instructions, by control ops and, for a program's outputs, by the pipeline. This module
//! finds, for every register, where it is read and written, so that the code generator can
//! leave a value out of the register file when every read of that register anywhere in the
//! program lies inside the segment being generated, after a write in that segment (so no
//! read, in any iteration of any loop, can see a value from elsewhere), and the register is
//! not an output. The same tables show which registers hold one constant for the whole
//! program (set once, in the straight-line prefix, before any read): the code generator
//! uses the constant instead of reading the register.
//!
//! Reads are over-approximated where an instruction's operand count is not fixed (texture
//! and image operands count as four registers each): a register read by mistake only loses
//! the saving, a read missed would lose a value.

pub(super) use crate::ir::inst_regs;
use crate::ir::{Inst, Reg};
use crate::simt::{Code, Op};

/// Where each register is read and written in a program's SIMT code.
pub(super) struct RegUses {
    /// Per register: the lowest and highest index (into `Code::insts`) of an instruction
    /// reading it; `NEVER_LOCAL` as the highest when a control op or the pipeline reads it.
    reads: Vec<Option<(u32, u32)>>,
    /// Per register: the instructions writing it, ascending.
    writes: Vec<Vec<u32>>,
    /// Per register: its value, when the program gives it one value before any use (see
    /// [`RegUses::constant`]).
    constants: Vec<Option<u32>>,
}

/// A read index no segment contains (control ops, outputs).
const NEVER_LOCAL: u32 = u32::MAX;

impl RegUses {
    /// The uses in `code`; `outputs` are the registers the pipeline reads after the program.
    pub fn new(code: &Code, outputs: &[u32]) -> RegUses {
        let mut uses = RegUses {
            reads: Vec::new(),
            writes: Vec::new(),
            constants: Vec::new(),
        };
        let (mut read, mut written) = (Vec::new(), Vec::new());
        for (index, inst) in code.insts.iter().enumerate() {
            let index = index as u32;
            read.clear();
            written.clear();
            inst_regs(inst, &mut |r, n| read.push((r, n)), &mut |r, n| {
                written.push((r, n))
            });
            for &(r, n) in &read {
                uses.read(r, n, index);
            }
            for &(r, n) in &written {
                for k in 0..n {
                    let r = r.0 as usize + k as usize;
                    uses.grow(r);
                    uses.writes[r].push(index);
                }
            }
        }
        for op in &code.ops {
            match *op {
                Op::If { cond, .. } | Op::BreakUnless { cond, .. } => {
                    uses.read(cond, 1, NEVER_LOCAL)
                }
                Op::LoopBack {
                    break_if: Some(cond),
                    ..
                } => uses.read(cond, 1, NEVER_LOCAL),
                Op::Switch { selector, .. } | Op::Case { selector, .. } => {
                    uses.read(selector, 1, NEVER_LOCAL)
                }
                _ => {}
            }
        }
        for &r in outputs {
            uses.read(Reg(r), 1, NEVER_LOCAL);
        }
        // Instructions of the program's straight-line prefix: the runs before any op that
        // branches or can take lanes away (an inlined call's region may open around them).
        // Every warp executes them, in order, before anything else.
        let mut prefix = vec![false; code.insts.len()];
        for op in &code.ops {
            match *op {
                Op::Run { start, len, .. } => {
                    prefix[start as usize..(start + len) as usize].fill(true)
                }
                Op::Region { .. } | Op::Barrier => {}
                _ => break,
            }
        }
        uses.constants = (0..uses.writes.len())
            .map(|r| {
                let [w] = uses.writes[r][..] else {
                    return None;
                };
                let Inst::Const { value, .. } = code.insts[w as usize] else {
                    return None;
                };
                let before_reads =
                    uses.reads[r].is_none_or(|(first, last)| w < first && last != NEVER_LOCAL);
                (prefix[w as usize] && before_reads).then_some(value)
            })
            .collect();
        uses
    }

    /// The value register `r` always holds when an instruction reads it: `r` is written by
    /// one instruction only, a `Const` in the program's straight-line prefix (so it writes
    /// every lane, whatever the mask, before anything can read it), and read only by
    /// instructions after it — not by control ops or the pipeline.
    pub fn constant(&self, r: u32) -> Option<u32> {
        self.constants.get(r as usize).copied().flatten()
    }

    /// Whether any instruction or control op reads register `r` (or the pipeline does, for
    /// an output).
    pub fn is_read(&self, r: u32) -> bool {
        self.reads.get(r as usize).is_some_and(|x| x.is_some())
    }

    /// Whether any instruction writes register `r`.
    pub fn is_written(&self, r: u32) -> bool {
        self.writes.get(r as usize).is_some_and(|w| !w.is_empty())
    }

    fn grow(&mut self, r: usize) {
        if r >= self.reads.len() {
            self.reads.resize(r + 1, None);
            self.writes.resize(r + 1, Vec::new());
        }
    }

    fn read(&mut self, first: Reg, count: u32, index: u32) {
        for k in 0..count {
            let r = first.0 as usize + k as usize;
            self.grow(r);
            let range = self.reads[r].get_or_insert((index, index));
            range.0 = range.0.min(index);
            range.1 = range.1.max(index);
        }
    }

    /// Whether the value register `r` holds when the segment `insts[start..end]` ends is
    /// never read: every read of `r` is an instruction of the segment that comes after one
    /// of the segment's writes of `r` (or `r` is never read at all), and `r` is no output.
    pub fn local_to(&self, r: u32, start: u32, end: u32) -> bool {
        let r = r as usize;
        let Some(&reads) = self.reads.get(r) else {
            return true;
        };
        let Some((first, last)) = reads else {
            return true;
        };
        start <= first && last < end && self.writes[r].iter().any(|&w| start <= w && w < first)
    }
}
