//! SIMT code: the structured IR ([`crate::ir`]) laid out linearly for a warp's control stack
//! (T3 "Shader Unit internals", ATTILA's unified shaders: a shader unit keeps a program
//! counter and an execution-mask stack per warp and switches warps at long-latency points).
//!
//! Every structured node becomes an opening op, its blocks, and closing ops that merge masks
//! (`If … Else … EndIf`, `Loop … Continuing … LoopBack LoopEnd`, `Switch (Case … CaseEnd)*
//! EndSwitch`, `Region … EndRegion`). At run time each construct pushes one [`Frame`] holding
//! the masks of lanes waiting to rejoin; because the frame stack mirrors the static nesting,
//! `Break`/`Continue`/`Return` name their target frame by depth. A warp's whole control state
//! is therefore `(pc, mask, frames)` — plain data, so a warp can stop at a barrier anywhere
//! (inside loops, branches, inlined calls) and resume later.
//!
//! Invariants (established by [`Code::new`], trusted by the warp interpreter):
//! - a non-structural op never runs with an empty mask: when the mask empties, the warp jumps
//!   to the innermost frame's `end`, which is always a closing op;
//! - closing ops run with the frame their opening op pushed on top of the stack;
//! - the frame stack never grows beyond [`Code::max_depth`].

use crate::ir::{Block, Inst, Node, Reg, UnOp};
use crate::{Mask, lane_mask};

/// Instruction class, for the statistics (`ExecInfo::alu` …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Alu = 0,
    Transcendental = 1,
    Memory = 2,
    /// No texture instructions exist yet; counted as 0.
    #[allow(dead_code)]
    Texture = 3,
    Control = 4,
}

/// One op of SIMT code. `*_pc` fields are indices into [`Code::ops`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
    /// A barrier (it suspends the warp, so it never joins a run).
    Barrier,
    /// `len` straight-line instructions, `Code::insts[start..start + len]`: issued together
    /// (one budget check, one update of the statistics) and executed back to back — no
    /// control flow can enter or leave a run.
    Run {
        start: u32,
        len: u32,
        /// Instructions of each [`Class`], indexed by the class.
        classes: [u32; 5],
    },
    /// Push an `If` frame; run the accept block (pc + 1) on `mask & cond`.
    If {
        cond: Reg,
        else_pc: u32,
        end_pc: u32,
    },
    /// End of the accept block: run the reject block on the other lanes.
    Else {
        end_pc: u32,
    },
    /// Merge both sides, pop.
    EndIf,
    /// Push a `Loop` frame and start the first iteration (body at pc + 1).
    Loop {
        continuing_pc: u32,
    },
    /// End of the body: lanes that continued rejoin; run `continuing`.
    Continuing {
        back_pc: u32,
        end_pc: u32,
    },
    /// End of `continuing`: apply `break_if`; iterate again or fall into `LoopEnd`.
    LoopBack {
        break_if: Option<Reg>,
        body_pc: u32,
        continuing_pc: u32,
        end_pc: u32,
    },
    /// The lanes that broke out continue; pop.
    LoopEnd,
    /// Push a `Switch` frame; `values` are every case's selector value.
    Switch {
        selector: Reg,
        values: Box<[u32]>,
    },
    /// Lanes selecting this case join the fall-through lanes; body at pc + 1.
    Case {
        selector: Reg,
        value: Option<u32>,
        case_end_pc: u32,
        next_pc: u32,
    },
    CaseEnd {
        fall_through: bool,
    },
    EndSwitch,
    /// Push a `Region` frame (an inlined call).
    Region {
        end_pc: u32,
    },
    EndRegion,
    Break {
        frame: u32,
    },
    /// `if !cond { break; }` (every `for` and `while` loop's exit test) as one op: lanes
    /// where `cond == 0` leave for frame `frame`, the others go on; no frame is pushed. It
    /// issues as one control instruction (the `If` and `Break` it replaces were two when
    /// some lanes left).
    BreakUnless {
        cond: Reg,
        frame: u32,
    },
    Continue {
        frame: u32,
    },
    Return {
        frame: u32,
    },
    Kill,
    End,
}

/// Per-construct run-time state. Field use by frame kind:
/// - root: none;
/// - `If`: `b` = lanes for the reject block, `c` = lanes that finished the accept block;
/// - `Loop`: `a` = lanes that broke out, `b` = lanes that continued, `c` = lanes that started
///   the current iteration;
/// - `Switch`: `a` = lanes that broke out, `b` = lanes that entered the switch, `c` = lanes
///   matching some case value, `d` = lanes that finished a case;
/// - `Region`: `a` = lanes that returned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Frame {
    /// The closing op the warp jumps to when its mask empties inside this frame.
    pub end: u32,
    pub a: Mask,
    pub b: Mask,
    pub c: Mask,
    pub d: Mask,
}

/// A program's SIMT code.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Code {
    pub ops: Vec<Op>,
    /// The instructions of every [`Op::Run`].
    pub insts: Vec<Inst>,
    /// Frames a warp needs at most, the root frame included.
    pub max_depth: u32,
}

impl Code {
    /// Lays out `block` (the program body) as SIMT code.
    pub fn new(block: &Block) -> Code {
        let mut b = Builder {
            ops: Vec::new(),
            insts: Vec::new(),
            depth: 1,
            max_depth: 1,
            loops: Vec::new(),
            breaks: Vec::new(),
            regions: Vec::new(),
        };
        b.block(block);
        b.ops.push(Op::End);
        crate::quad_mode::mark_helper_results(&mut b.insts, &b.ops);
        Code {
            ops: b.ops,
            insts: b.insts,
            max_depth: b.max_depth,
        }
    }
}

struct Builder {
    ops: Vec<Op>,
    insts: Vec<Inst>,
    /// Frames on the stack at the current position (root = 1).
    depth: u32,
    max_depth: u32,
    /// Frame indices of enclosing loops, switches+loops (break targets), regions.
    loops: Vec<u32>,
    breaks: Vec<u32>,
    regions: Vec<u32>,
}

impl Builder {
    fn pc(&self) -> u32 {
        self.ops.len() as u32
    }

    /// Pushes `op` and returns its pc (for patching).
    fn push(&mut self, op: Op) -> usize {
        self.ops.push(op);
        self.ops.len() - 1
    }

    fn enter(&mut self) -> u32 {
        let frame = self.depth;
        self.depth += 1;
        self.max_depth = self.max_depth.max(self.depth);
        frame
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn block(&mut self, block: &Block) {
        for node in block {
            self.node(node);
        }
    }

    fn node(&mut self, node: &Node) {
        match node {
            Node::Inst(Inst::Barrier) => {
                self.push(Op::Barrier);
            }
            // Consecutive instructions extend the run just pushed. Jump targets are always
            // control ops or the start of a run (every pc the builder takes is followed by a
            // control op or a new run), so nothing jumps into the middle of a run.
            Node::Inst(inst) => {
                let at = self.insts.len() as u32;
                self.insts.push(inst.clone());
                let class = class(inst) as usize;
                match self.ops.last_mut() {
                    Some(Op::Run {
                        start,
                        len,
                        classes,
                    }) if *start + *len == at => {
                        *len += 1;
                        classes[class] += 1;
                    }
                    _ => {
                        let mut classes = [0; 5];
                        classes[class] = 1;
                        self.push(Op::Run {
                            start: at,
                            len: 1,
                            classes,
                        });
                    }
                }
            }
            Node::If {
                cond,
                accept,
                reject,
            } if accept.is_empty()
                && matches!(reject.as_slice(), [Node::Break])
                && !self.breaks.is_empty() =>
            {
                let frame = self.breaks[self.breaks.len() - 1];
                self.push(Op::BreakUnless { cond: *cond, frame });
            }
            Node::If {
                cond,
                accept,
                reject,
            } => {
                self.enter();
                let at = self.push(Op::If {
                    cond: *cond,
                    else_pc: 0,
                    end_pc: 0,
                });
                self.block(accept);
                let else_pc = self.pc();
                let at_else = self.push(Op::Else { end_pc: 0 });
                self.block(reject);
                let end_pc = self.pc();
                self.push(Op::EndIf);
                self.ops[at] = Op::If {
                    cond: *cond,
                    else_pc,
                    end_pc,
                };
                self.ops[at_else] = Op::Else { end_pc };
                self.leave();
            }
            Node::Loop {
                body,
                continuing,
                break_if,
            } => {
                let frame = self.enter();
                let at = self.push(Op::Loop { continuing_pc: 0 });
                let body_pc = self.pc();
                self.loops.push(frame);
                self.breaks.push(frame);
                self.block(body);
                self.loops.pop();
                self.breaks.pop();
                let continuing_pc = self.pc();
                let at_cont = self.push(Op::Continuing {
                    back_pc: 0,
                    end_pc: 0,
                });
                self.block(continuing);
                let back_pc = self.pc();
                let end_pc = back_pc + 1;
                self.push(Op::LoopBack {
                    break_if: *break_if,
                    body_pc,
                    continuing_pc,
                    end_pc,
                });
                self.push(Op::LoopEnd);
                self.ops[at] = Op::Loop { continuing_pc };
                self.ops[at_cont] = Op::Continuing { back_pc, end_pc };
                self.leave();
            }
            Node::Switch { selector, cases } => {
                let frame = self.enter();
                let values = cases.iter().filter_map(|c| c.value).collect();
                self.push(Op::Switch {
                    selector: *selector,
                    values,
                });
                self.breaks.push(frame);
                for case in cases {
                    let at = self.push(Op::Case {
                        selector: *selector,
                        value: case.value,
                        case_end_pc: 0,
                        next_pc: 0,
                    });
                    self.block(&case.body);
                    let case_end_pc = self.pc();
                    self.push(Op::CaseEnd {
                        fall_through: case.fall_through,
                    });
                    self.ops[at] = Op::Case {
                        selector: *selector,
                        value: case.value,
                        case_end_pc,
                        next_pc: case_end_pc + 1,
                    };
                }
                self.breaks.pop();
                self.push(Op::EndSwitch);
                self.leave();
            }
            Node::Region(body) => {
                let frame = self.enter();
                let at = self.push(Op::Region { end_pc: 0 });
                self.regions.push(frame);
                self.block(body);
                self.regions.pop();
                let end_pc = self.pc();
                self.push(Op::EndRegion);
                self.ops[at] = Op::Region { end_pc };
                self.leave();
            }
            // IR invariants guarantee a target; a stray one targets the root frame, whose
            // masks nothing reads (the lanes simply stop).
            Node::Break => {
                let frame = self.breaks.last().copied().unwrap_or(0);
                self.push(Op::Break { frame });
            }
            Node::Continue => {
                let frame = self.loops.last().copied().unwrap_or(0);
                self.push(Op::Continue { frame });
            }
            Node::Return => {
                let frame = self.regions.last().copied().unwrap_or(0);
                self.push(Op::Return { frame });
            }
            Node::Kill => {
                self.push(Op::Kill);
            }
        }
    }
}

/// The statistics class of an instruction.
fn class(inst: &Inst) -> Class {
    use UnOp as U;
    match inst {
        Inst::Unary {
            op:
                U::FSqrt
                | U::FInvSqrt
                | U::FExp
                | U::FExp2
                | U::FLog
                | U::FLog2
                | U::FSin
                | U::FCos
                | U::FTan
                | U::FAsin
                | U::FAcos
                | U::FAtan
                | U::FSinh
                | U::FCosh
                | U::FTanh
                | U::FAsinh
                | U::FAcosh
                | U::FAtanh,
            ..
        }
        | Inst::Binary {
            op: crate::ir::BinOp::FPow | crate::ir::BinOp::FAtan2,
            ..
        } => Class::Transcendental,
        Inst::Load { .. }
        | Inst::StoreMem { .. }
        | Inst::Atomic { .. }
        | Inst::CompareExchange { .. }
        | Inst::BufferLen { .. }
        | Inst::Image(_) => Class::Memory,
        Inst::Barrier => Class::Control,
        Inst::Texture(_) => Class::Texture,
        _ => Class::Alu,
    }
}

/// Mask of the lanes of `r` whose value is non-zero.
#[inline]
pub(crate) fn cond_mask(r: &[u32; crate::WARP_LANES]) -> Mask {
    let mut m = 0;
    for (l, v) in r.iter().enumerate() {
        m |= ((*v != 0) as Mask) << l;
    }
    m & lane_mask(crate::WARP_LANES)
}
