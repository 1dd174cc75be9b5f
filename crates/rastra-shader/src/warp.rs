//! The SIMT shader core: executes a [`Program`] on a whole warp of [`WARP_LANES`] lanes under
//! execution masks (T3 "Shader Unit internals", T8 quads, derivatives and helper lanes,
//! ATTILA's unified shader units).
//!
//! Structured control flow becomes masks: `If` splits the mask, `Loop` iterates while any lane
//! remains, and `Break`/`Continue`/`Return` move lanes out of the running mask into the pending
//! mask of the construct they leave (innermost loop/switch, loop, inlined call region). `Kill`
//! (discard) demotes lanes to helpers: they keep running so their quad's derivatives stay
//! defined, but their side effects are suppressed and their outputs are dead.
//!
//! Cost model: each instruction is one `match` followed by a tight loop over all lanes (pure
//! ops compute inactive lanes too, writes to variables are masked). Nothing here allocates:
//! the register file is preallocated in [`Warp`] and nesting uses the native stack, bounded by
//! the program's structural depth.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::ir::{Block, DerivAxis, Inst, Node};
use crate::{ExecError, ExecInfo, Mask, Program, Resources, WARP_LANES};

/// One warp's register file: `num_regs` registers of `[u32; WARP_LANES]`.
#[derive(Clone, Debug)]
pub struct Warp {
    regs: Vec<[u32; WARP_LANES]>,
}

impl Warp {
    /// A zeroed register file sized for `program`.
    pub fn new(program: &Program) -> Warp {
        Warp {
            regs: vec![[0; WARP_LANES]; program.num_regs as usize],
        }
    }

    /// Registers `first..first + count`.
    pub fn regs(&self, first: u32, count: u32) -> &[[u32; WARP_LANES]] {
        &self.regs[first as usize..(first + count) as usize]
    }

    /// Registers `first..first + count`, mutably.
    pub fn regs_mut(&mut self, first: u32, count: u32) -> &mut [[u32; WARP_LANES]] {
        &mut self.regs[first as usize..(first + count) as usize]
    }

    /// Number of registers.
    pub fn num_regs(&self) -> u32 {
        self.regs.len() as u32
    }
}

/// Executes `program` once on the lanes in `active`. See the crate docs for the contract:
/// inputs must be in their registers; `helpers ⊆ active` run without side effects; `budget`
/// is decremented per instruction issued and per loop iteration.
pub fn execute(
    program: &Program,
    warp: &mut Warp,
    active: Mask,
    helpers: Mask,
    resources: &Resources,
    budget: &mut u64,
) -> Result<ExecInfo, ExecError> {
    debug_assert!(warp.regs.len() >= program.num_regs as usize);
    let mut cx = Cx {
        regs: &mut warp.regs,
        resources,
        budget,
        issued: 0,
        brk: 0,
        cont: 0,
        ret: 0,
        helpers: helpers & active,
        discarded: 0,
    };
    let mut mask = active & crate::FULL_MASK;
    cx.block(&program.code, &mut mask)?;
    Ok(ExecInfo {
        discarded: cx.discarded,
        instructions: cx.issued,
    })
}

struct Cx<'a, 'r> {
    regs: &'a mut [[u32; WARP_LANES]],
    resources: &'a Resources<'r>,
    budget: &'a mut u64,
    issued: u64,
    /// Lanes that left the innermost loop/switch with `break`.
    brk: Mask,
    /// Lanes that left the innermost loop body with `continue`.
    cont: Mask,
    /// Lanes that left the innermost region with `return`.
    ret: Mask,
    /// Lanes whose side effects are suppressed (helpers and discarded lanes). Unused until
    /// side-effecting instructions exist.
    #[allow(dead_code)]
    helpers: Mask,
    discarded: Mask,
}

#[inline(always)]
fn lane_on(mask: Mask, l: usize) -> bool {
    (mask >> l) & 1 != 0
}

fn cond_mask(r: &[u32; WARP_LANES]) -> Mask {
    let mut m = 0;
    for (l, v) in r.iter().enumerate() {
        m |= ((*v != 0) as Mask) << l;
    }
    m
}

impl Cx<'_, '_> {
    #[inline(always)]
    fn issue(&mut self) -> Result<(), ExecError> {
        if *self.budget == 0 {
            return Err(ExecError::BudgetExhausted);
        }
        *self.budget -= 1;
        self.issued += 1;
        Ok(())
    }

    fn block(&mut self, block: &Block, mask: &mut Mask) -> Result<(), ExecError> {
        for node in block {
            if *mask == 0 {
                break;
            }
            self.issue()?;
            match node {
                Node::Inst(inst) => self.inst(inst, *mask),
                Node::If {
                    cond,
                    accept,
                    reject,
                } => {
                    let c = cond_mask(&self.regs[cond.0 as usize]);
                    let mut t = *mask & c;
                    let mut e = *mask & !c;
                    if t != 0 {
                        self.block(accept, &mut t)?;
                    }
                    if e != 0 {
                        self.block(reject, &mut e)?;
                    }
                    *mask = t | e;
                }
                Node::Loop {
                    body,
                    continuing,
                    break_if,
                } => {
                    let (outer_brk, outer_cont) = (self.brk, self.cont);
                    self.brk = 0;
                    let mut m = *mask;
                    while m != 0 {
                        self.issue()?;
                        self.cont = 0;
                        self.block(body, &mut m)?;
                        m |= self.cont;
                        if m == 0 {
                            break;
                        }
                        self.block(continuing, &mut m)?;
                        if let Some(r) = break_if {
                            let c = cond_mask(&self.regs[r.0 as usize]);
                            self.brk |= m & c;
                            m &= !c;
                        }
                    }
                    *mask = self.brk;
                    self.brk = outer_brk;
                    self.cont = outer_cont;
                }
                Node::Switch { selector, cases } => {
                    let sel = self.regs[selector.0 as usize];
                    let matches = |v: u32| {
                        let mut m = 0;
                        for (l, s) in sel.iter().enumerate() {
                            m |= ((*s == v) as Mask) << l;
                        }
                        m
                    };
                    let mut matched = 0;
                    for case in cases {
                        if let Some(v) = case.value {
                            matched |= matches(v);
                        }
                    }
                    let outer_brk = self.brk;
                    self.brk = 0;
                    let mut done = 0;
                    let mut running: Mask = 0;
                    for case in cases {
                        let entry = match case.value {
                            Some(v) => matches(v),
                            None => !matched,
                        };
                        running |= *mask & entry;
                        if running != 0 {
                            self.block(&case.body, &mut running)?;
                        }
                        if !case.fall_through {
                            done |= running;
                            running = 0;
                        }
                    }
                    *mask = done | running | self.brk;
                    self.brk = outer_brk;
                }
                Node::Region(body) => {
                    let outer_ret = self.ret;
                    self.ret = 0;
                    let mut m = *mask;
                    self.block(body, &mut m)?;
                    *mask = m | self.ret;
                    self.ret = outer_ret;
                }
                Node::Break => {
                    self.brk |= *mask;
                    *mask = 0;
                }
                Node::Continue => {
                    self.cont |= *mask;
                    *mask = 0;
                }
                Node::Return => {
                    self.ret |= *mask;
                    *mask = 0;
                }
                Node::Kill => {
                    self.discarded |= *mask;
                    self.helpers |= *mask;
                }
            }
        }
        Ok(())
    }

    #[inline]
    fn inst(&mut self, inst: &Inst, mask: Mask) {
        let regs = &mut *self.regs;
        match *inst {
            Inst::Const { dst, value } => regs[dst.0 as usize] = [value; WARP_LANES],
            Inst::Mov { dst, src } => regs[dst.0 as usize] = regs[src.0 as usize],
            Inst::Store { dst, src } => {
                let s = regs[src.0 as usize];
                let d = &mut regs[dst.0 as usize];
                for l in 0..WARP_LANES {
                    if lane_on(mask, l) {
                        d[l] = s[l];
                    }
                }
            }
            Inst::LoadIndexed {
                dst,
                base,
                len,
                index,
                add,
            } => {
                let idx = regs[index.0 as usize];
                let mut out = [0; WARP_LANES];
                for (l, o) in out.iter_mut().enumerate() {
                    let k = idx[l].wrapping_add(add).min(len - 1);
                    *o = regs[(base.0 + k) as usize][l];
                }
                regs[dst.0 as usize] = out;
            }
            Inst::StoreIndexed {
                base,
                len,
                index,
                add,
                src,
            } => {
                let idx = regs[index.0 as usize];
                let s = regs[src.0 as usize];
                for l in 0..WARP_LANES {
                    if lane_on(mask, l) {
                        let k = idx[l].wrapping_add(add).min(len - 1);
                        regs[(base.0 + k) as usize][l] = s[l];
                    }
                }
            }
            Inst::Unary { op, dst, a } => {
                let x = regs[a.0 as usize];
                op.eval_lanes(&x, &mut regs[dst.0 as usize]);
            }
            Inst::Binary { op, dst, a, b } => {
                let (x, y) = (regs[a.0 as usize], regs[b.0 as usize]);
                op.eval_lanes(&x, &y, &mut regs[dst.0 as usize]);
            }
            Inst::Ternary { op, dst, a, b, c } => {
                let (x, y, z) = (regs[a.0 as usize], regs[b.0 as usize], regs[c.0 as usize]);
                op.eval_lanes(&x, &y, &z, &mut regs[dst.0 as usize]);
            }
            Inst::Derivative {
                axis,
                fine,
                dst,
                src,
            } => regs[dst.0 as usize] = derivative(&regs[src.0 as usize], axis, fine),
            Inst::LoadBuffer {
                dst,
                slot,
                offset,
                add,
            } => {
                let buf: &[AtomicU32] = self
                    .resources
                    .buffers
                    .get(slot as usize)
                    .copied()
                    .unwrap_or(&[]);
                let off = match offset {
                    Some(r) => regs[r.0 as usize],
                    None => [0; WARP_LANES],
                };
                let mut out = [0; WARP_LANES];
                for l in 0..WARP_LANES {
                    out[l] = load_word(buf, off[l] as u64 + add as u64);
                }
                regs[dst.0 as usize] = out;
            }
            Inst::BufferLen { dst, slot } => {
                let len = self
                    .resources
                    .buffers
                    .get(slot as usize)
                    .map_or(0, |b| b.len() * 4);
                regs[dst.0 as usize] = [len.min(u32::MAX as usize) as u32; WARP_LANES];
            }
        }
    }
}

/// Reads the word at byte address `addr` (a multiple of 4: every host-shareable WGSL type is
/// word-aligned), or 0 when it is outside the buffer.
pub(crate) fn load_word(buf: &[AtomicU32], addr: u64) -> u32 {
    usize::try_from(addr / 4)
        .ok()
        .and_then(|w| buf.get(w))
        .map_or(0, |w| w.load(Ordering::Relaxed))
}

/// Quad derivatives of one register (T8). Lanes `4q..4q+4` are quad `q`:
/// (x0,y0), (x1,y0), (x0,y1), (x1,y1).
fn derivative(v: &[u32; WARP_LANES], axis: DerivAxis, fine: bool) -> [u32; WARP_LANES] {
    let f = |l: usize| f32::from_bits(v[l]);
    let mut out = [0; WARP_LANES];
    for q in 0..WARP_LANES / 4 {
        let b = 4 * q;
        for i in 0..4 {
            let d = match (axis, fine) {
                (DerivAxis::X, false) => f(b + 1) - f(b),
                (DerivAxis::Y, false) => f(b + 2) - f(b),
                // Row of lane i: 0 for i < 2.
                (DerivAxis::X, true) => f(b + (i & 2) + 1) - f(b + (i & 2)),
                // Column of lane i: i & 1.
                (DerivAxis::Y, true) => f(b + (i & 1) + 2) - f(b + (i & 1)),
            };
            out[b + i] = d.to_bits();
        }
    }
    out
}
