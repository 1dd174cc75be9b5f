//! The reference shader core: a slow, obviously-correct interpreter of rastra IR that runs one
//! lane at a time with plain recursive control flow and no masks (the "reference path beside
//! every fast path" of STYLE.md; T3 shader units). Differential tests compare
//! [`crate::execute`] against it register-for-register.
//!
//! Side effects (storage stores and atomics) happen as the lane reaches them; a discarded lane
//! has none after its `discard`.
//!
//! Limitations: a lone lane has no quad, so derivative and texture instructions make it return
//! [`RefError::NeedsQuad`]; it has no warp, so subgroup and quad operations return
//! [`RefError::NeedsWarp`]; and it has no workgroup, so barriers and workgroup memory return
//! [`RefError::NeedsWorkgroup`].

use std::sync::atomic::AtomicU32;

use crate::ir::{Block, Inst, Mem, Node};
use crate::warp::{atomic_word, compare_exchange_word, load_word, store_word};
use crate::{ExecError, Mask, Program, Resources, WARP_LANES, Warp};

/// How one lane's execution ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneResult {
    /// The lane executed `discard`.
    pub discarded: bool,
    /// Instructions this lane issued (the warp interpreter counts per warp instead).
    pub instructions: u64,
}

/// Why the reference interpreter stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefError {
    Exec(ExecError),
    /// The program uses a derivative, which needs a whole quad.
    NeedsQuad,
    /// The program uses a subgroup or quad operation, which needs a whole warp.
    NeedsWarp,
    /// The program uses a barrier or workgroup memory, which need a whole workgroup.
    NeedsWorkgroup,
}

impl From<ExecError> for RefError {
    fn from(e: ExecError) -> Self {
        RefError::Exec(e)
    }
}

/// How a node finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Normal,
    Break,
    Continue,
    Return,
}

struct Lane<'a, 'r> {
    regs: &'a mut [u32],
    /// This lane's index in its warp (`subgroup_invocation_id`).
    lane: u32,
    resources: &'a Resources<'r>,
    budget: &'a mut u64,
    result: LaneResult,
}

/// Runs `program` on one lane whose registers are `regs` (inputs already written); `lane` is
/// its index in its warp.
pub fn execute_lane(
    program: &Program,
    regs: &mut [u32],
    lane: u32,
    resources: &Resources,
    budget: &mut u64,
) -> Result<LaneResult, RefError> {
    let mut lane = Lane {
        regs,
        lane,
        resources,
        budget,
        result: LaneResult::default(),
    };
    lane.block(&program.code)?;
    Ok(lane.result)
}

/// Runs [`execute_lane`] for every lane in `active` of `warp`, in lane order, sharing one
/// budget. Returns the mask of lanes that discarded.
pub fn execute_warp(
    program: &Program,
    warp: &mut Warp,
    active: Mask,
    resources: &Resources,
    budget: &mut u64,
) -> Result<Mask, RefError> {
    let n = warp.num_regs();
    let mut lane_regs = vec![0u32; n as usize];
    let mut discarded = 0;
    for l in 0..WARP_LANES {
        if (active >> l) & 1 == 0 {
            continue;
        }
        for (r, v) in warp.regs(0, n).iter().zip(lane_regs.iter_mut()) {
            *v = r[l];
        }
        let res = execute_lane(program, &mut lane_regs, l as u32, resources, budget)?;
        if res.discarded {
            discarded |= 1 << l;
        }
        for (r, v) in warp.regs_mut(0, n).iter_mut().zip(lane_regs.iter()) {
            r[l] = *v;
        }
    }
    Ok(discarded)
}

impl Lane<'_, '_> {
    fn issue(&mut self) -> Result<(), RefError> {
        if *self.budget == 0 {
            return Err(ExecError::BudgetExhausted.into());
        }
        *self.budget -= 1;
        self.result.instructions += 1;
        Ok(())
    }

    fn block(&mut self, block: &Block) -> Result<Flow, RefError> {
        for node in block {
            let flow = self.node(node)?;
            if flow != Flow::Normal {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    fn node(&mut self, node: &Node) -> Result<Flow, RefError> {
        self.issue()?;
        Ok(match node {
            Node::Inst(inst) => {
                self.inst(inst)?;
                Flow::Normal
            }
            Node::If {
                cond,
                accept,
                reject,
            } => {
                if self.regs[cond.0 as usize] != 0 {
                    self.block(accept)?
                } else {
                    self.block(reject)?
                }
            }
            Node::Loop {
                body,
                continuing,
                break_if,
            } => loop {
                self.issue()?;
                match self.block(body)? {
                    Flow::Break => break Flow::Normal,
                    Flow::Return => break Flow::Return,
                    Flow::Normal | Flow::Continue => {}
                }
                // `continuing` holds no break/continue/return (WGSL rule).
                self.block(continuing)?;
                if let Some(r) = break_if
                    && self.regs[r.0 as usize] != 0
                {
                    break Flow::Normal;
                }
            },
            Node::Switch { selector, cases } => {
                let sel = self.regs[selector.0 as usize];
                let start = cases
                    .iter()
                    .position(|c| c.value == Some(sel))
                    .or_else(|| cases.iter().position(|c| c.value.is_none()));
                let mut flow = Flow::Normal;
                if let Some(start) = start {
                    for case in &cases[start..] {
                        flow = self.block(&case.body)?;
                        if flow != Flow::Normal || !case.fall_through {
                            break;
                        }
                    }
                }
                match flow {
                    Flow::Break => Flow::Normal,
                    other => other,
                }
            }
            Node::Region(body) => match self.block(body)? {
                Flow::Return => Flow::Normal,
                other => other,
            },
            Node::Break => Flow::Break,
            Node::Continue => Flow::Continue,
            Node::Return => Flow::Return,
            Node::Kill => {
                self.result.discarded = true;
                Flow::Normal
            }
        })
    }

    fn inst(&mut self, inst: &Inst) -> Result<(), RefError> {
        let r = &mut *self.regs;
        let g = |r: &[u32], x: crate::ir::Reg| r[x.0 as usize];
        match *inst {
            Inst::Const { dst, value } => r[dst.0 as usize] = value,
            Inst::Mov { dst, src } | Inst::Store { dst, src } => r[dst.0 as usize] = g(r, src),
            Inst::LoadIndexed {
                dst,
                base,
                len,
                index,
                add,
            } => {
                let k = g(r, index).wrapping_add(add).min(len - 1);
                r[dst.0 as usize] = r[(base.0 + k) as usize];
            }
            Inst::StoreIndexed {
                base,
                len,
                index,
                add,
                src,
            } => {
                let k = g(r, index).wrapping_add(add).min(len - 1);
                r[(base.0 + k) as usize] = g(r, src);
            }
            Inst::Unary { op, dst, a } => r[dst.0 as usize] = op.eval(g(r, a)),
            Inst::Binary { op, dst, a, b } => r[dst.0 as usize] = op.eval(g(r, a), g(r, b)),
            Inst::Ternary { op, dst, a, b, c } => {
                r[dst.0 as usize] = op.eval(g(r, a), g(r, b), g(r, c))
            }
            Inst::Derivative { .. } => return Err(RefError::NeedsQuad),
            Inst::Load {
                dst,
                mem,
                offset,
                add,
            } => {
                let buf = memory(self.resources, mem)?;
                let off = offset.map_or(0, |o| g(r, o));
                r[dst.0 as usize] = load_word(buf, off as u64 + add as u64);
            }
            Inst::StoreMem {
                mem,
                offset,
                add,
                src,
            } => {
                let buf = memory(self.resources, mem)?;
                let off = offset.map_or(0, |o| g(r, o));
                if !self.result.discarded {
                    store_word(buf, off as u64 + add as u64, g(r, src));
                }
            }
            Inst::Atomic {
                op,
                mem,
                offset,
                add,
                dst,
                value,
            } => {
                let buf = memory(self.resources, mem)?;
                let off = offset.map_or(0, |o| g(r, o));
                r[dst.0 as usize] = if self.result.discarded {
                    0
                } else {
                    atomic_word(buf, off as u64 + add as u64, op, g(r, value))
                };
            }
            Inst::CompareExchange {
                mem,
                offset,
                add,
                dst,
                compare,
                value,
            } => {
                let buf = memory(self.resources, mem)?;
                let off = offset.map_or(0, |o| g(r, o));
                let (old, ok) = if self.result.discarded {
                    (0, 0)
                } else {
                    compare_exchange_word(buf, off as u64 + add as u64, g(r, compare), g(r, value))
                };
                r[dst.0 as usize] = old;
                r[dst.0 as usize + 1] = ok;
            }
            Inst::BufferLen { dst, slot } => {
                let len = self
                    .resources
                    .buffers
                    .get(slot as usize)
                    .map_or(0, |b| b.len() * 4);
                r[dst.0 as usize] = len.min(u32::MAX as usize) as u32;
            }
            Inst::Barrier => return Err(RefError::NeedsWorkgroup),
            Inst::LaneId { dst } => r[dst.0 as usize] = self.lane,
            // The texture unit serves quads (implicit LODs come from the quad).
            Inst::Texture(_) => return Err(RefError::NeedsQuad),
            Inst::Image(ref i) => {
                let out = crate::image::run_lane(
                    i,
                    self.resources,
                    |reg| r[reg.0 as usize],
                    !self.result.discarded,
                );
                if let Some(out) = out {
                    r[out.dst.0 as usize..out.dst.0 as usize + out.words]
                        .copy_from_slice(&out.values[..out.words]);
                }
            }
            Inst::Ballot { .. } | Inst::SubgroupOp { .. } | Inst::Shuffle { .. } => {
                return Err(RefError::NeedsWarp);
            }
        }
        Ok(())
    }
}

/// The words `mem` addresses (a lone lane has no workgroup memory).
fn memory<'r>(resources: &Resources<'r>, mem: Mem) -> Result<&'r [AtomicU32], RefError> {
    match mem {
        Mem::Buffer(slot) => Ok(resources.buffers.get(slot as usize).copied().unwrap_or(&[])),
        Mem::Workgroup => Err(RefError::NeedsWorkgroup),
    }
}
