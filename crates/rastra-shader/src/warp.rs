//! The SIMT shader core: executes a [`Program`] on a whole warp of [`WARP_LANES`] lanes under
//! execution masks (T3 "Shader Unit internals", T8 quads, derivatives and helper lanes,
//! ATTILA's unified shader units, T13 compute warps).
//!
//! A warp runs the program's SIMT code (`simt`): a program counter, the current execution
//! mask and a stack of control frames. `If` splits the mask, `Loop` iterates while any lane
//! remains, and `Break`/`Continue`/`Return` move lanes out of the running mask into the frame
//! of the construct they leave (innermost loop/switch, loop, inlined call region). Because
//! that state is plain data in [`Warp`], a warp can stop at a workgroup barrier anywhere and
//! resume later (`crate::workgroup` schedules the warps of a workgroup). `Kill` (discard)
//! demotes lanes to helpers: they keep running so their quad's derivatives stay defined, but
//! their side effects are suppressed and their outputs are dead.
//!
//! Side effects (storage and workgroup stores, atomics) happen only for lanes that are active
//! and not helpers, one lane at a time in lane order, so a warp's effects are deterministic.
//!
//! Cost model: each op is one `match` followed by a tight loop over all lanes (pure ops compute
//! inactive lanes too, writes to variables are masked). Nothing here allocates: the register
//! file and the frame stack are preallocated in [`Warp`].

use std::sync::atomic::{AtomicU32, Ordering};

use rastra_texture::TextureUnit;

use crate::ir::{AtomicOp, DerivAxis, Inst, Mem, Scan, ShuffleMode, UnOp};
use crate::simt::{Class, Frame, Op, cond_mask};
use crate::{ExecError, ExecInfo, FULL_MASK, Mask, Program, Resources, WARP_LANES};

/// One warp: its register file (`num_regs` registers of `[u32; WARP_LANES]`) and its control
/// state (program counter, execution mask, control frames).
#[derive(Clone, Debug)]
pub struct Warp {
    regs: Vec<[u32; WARP_LANES]>,
    pub(crate) state: State,
}

/// A warp's control state between two runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct State {
    pc: u32,
    mask: Mask,
    /// Lanes whose side effects are suppressed (helpers and discarded lanes).
    helpers: Mask,
    discarded: Mask,
    frames: Vec<Frame>,
    /// The state compiled code (`jit`) keeps while the warp waits at a barrier.
    jit: crate::jit::Suspended,
}

impl Warp {
    /// A zeroed register file sized for `program`.
    pub fn new(program: &Program) -> Warp {
        Warp {
            regs: vec![[0; WARP_LANES]; program.num_regs as usize],
            state: State {
                frames: Vec::with_capacity(program.simt.max_depth as usize),
                ..State::default()
            },
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

    /// Resets the control state to the program start with `active` lanes.
    pub(crate) fn start(&mut self, program: &Program, active: Mask, helpers: Mask) {
        let active = active & FULL_MASK;
        let st = &mut self.state;
        st.pc = 0;
        st.mask = active;
        st.helpers = helpers & active;
        st.discarded = 0;
        st.frames.clear();
        st.frames.push(Frame {
            end: program.simt.ops.len() as u32 - 1,
            ..Frame::default()
        });
    }
}

/// Executes `program` once on the lanes in `active`. See the crate docs for the contract:
/// inputs must be in their registers; `helpers ⊆ active` run without side effects (they do
/// sample textures, through `unit`, the shader core's texture unit); `budget`
/// is decremented per instruction issued and per loop iteration. Barriers do nothing here (a
/// graphics warp has no workgroup). Afterwards the outputs hold the results of the active
/// lanes; what registers hold in the other lanes is unspecified (compiled code writes a
/// value every active lane shares to all sixteen).
pub fn execute(
    program: &Program,
    warp: &mut Warp,
    active: Mask,
    helpers: Mask,
    resources: &Resources,
    unit: &mut TextureUnit,
    budget: &mut u64,
) -> Result<ExecInfo, ExecError> {
    debug_assert!(warp.regs.len() >= program.num_regs as usize);
    let mut info = ExecInfo::default();
    warp.start(program, active, helpers);
    while run(program, warp, &[], resources, unit, budget, &mut info)? == Stop::Barrier {}
    info.discarded = warp.state.discarded;
    Ok(info)
}

impl State {
    /// After a construct closes with no lanes left (they all broke out of or returned from an
    /// enclosing construct), skips to the end of the enclosing block.
    #[inline]
    fn skip_if_empty(&mut self) {
        if self.mask == 0 {
            self.pc = self.frames[self.frames.len() - 1].end;
        }
    }
}

/// Why [`run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    Finished,
    /// The warp issued a barrier; calling [`run`] again resumes after it.
    Barrier,
}

#[inline(always)]
fn lane_on(mask: Mask, l: usize) -> bool {
    (mask >> l) & 1 != 0
}

/// Counts one issued instruction: budget, instruction classes and active lanes. The mask's
/// lane count is remembered in `lanes` (mask, count) — masks change only at control flow, and
/// a popcount is a long instruction sequence on CPUs without a popcount unit.
#[inline(always)]
fn issue(
    budget: &mut u64,
    info: &mut ExecInfo,
    class: Class,
    mask: Mask,
    lanes: &mut (Mask, u64),
) -> Result<(), ExecError> {
    if *budget == 0 {
        return Err(ExecError::BudgetExhausted);
    }
    *budget -= 1;
    info.instructions += 1;
    if lanes.0 != mask {
        *lanes = (mask, mask.count_ones() as u64);
    }
    info.active_lanes += lanes.1;
    match class {
        Class::Alu => info.alu += 1,
        Class::Transcendental => info.transcendental += 1,
        Class::Memory => info.memory += 1,
        Class::Texture => info.texture += 1,
        Class::Control => info.control += 1,
    }
    Ok(())
}

/// Counts the issue of a run of `len` straight-line instructions (see [`issue`]); the budget
/// must cover the whole run (a run that does not fit is not started: the device is lost
/// either way, a runaway shader's last partial run is simply not executed).
#[inline(always)]
fn issue_run(
    budget: &mut u64,
    info: &mut ExecInfo,
    len: u32,
    classes: &[u32; 5],
    mask: Mask,
    lanes: &mut (Mask, u64),
) -> Result<(), ExecError> {
    let len = len as u64;
    if *budget < len {
        return Err(ExecError::BudgetExhausted);
    }
    *budget -= len;
    info.instructions += len;
    if lanes.0 != mask {
        *lanes = (mask, mask.count_ones() as u64);
    }
    info.active_lanes += lanes.1 * len;
    info.alu += classes[Class::Alu as usize] as u64;
    info.transcendental += classes[Class::Transcendental as usize] as u64;
    info.memory += classes[Class::Memory as usize] as u64;
    info.texture += classes[Class::Texture as usize] as u64;
    info.control += classes[Class::Control as usize] as u64;
    Ok(())
}

/// Runs `warp` from its current state until the program ends or a barrier is issued,
/// adding what it did to `info`. `shared` is the workgroup memory (empty outside compute).
/// A warp of a compiled program (`jit`) runs its native code (its `pc` is then 0 before
/// the start, the op after the barrier it waits at, or the `End` op); otherwise the
/// interpreter runs it.
pub(crate) fn run(
    program: &Program,
    warp: &mut Warp,
    shared: &[AtomicU32],
    resources: &Resources,
    unit: &mut TextureUnit,
    budget: &mut u64,
    info: &mut ExecInfo,
) -> Result<Stop, ExecError> {
    if let Some(compiled) = &program.compiled {
        let st = &mut warp.state;
        if st.pc == 0 {
            // A fresh start: the lanes `start` gave the warp.
            st.jit.resume = 0;
            st.jit.start_mask = st.mask;
            st.jit.mask = st.mask;
            st.jit.helpers = st.helpers;
            st.jit.discarded = 0;
        }
        let stopped = crate::jit::run(
            compiled,
            &program.simt,
            &mut warp.regs,
            &mut st.jit,
            shared,
            resources,
            unit,
            budget,
            info,
        )?;
        return Ok(match stopped {
            crate::jit::Stopped::Finished { discarded } => {
                st.discarded = discarded;
                st.pc = program.simt.ops.len() as u32 - 1;
                Stop::Finished
            }
            crate::jit::Stopped::Barrier => {
                st.pc = st.jit.resume;
                Stop::Barrier
            }
        });
    }
    interpret(program, warp, shared, resources, unit, budget, info)
}

rastra_texture::multiversion! {
/// Runs `warp` from its current state until the program ends or a barrier is issued,
/// adding what it did to `info`. `shared` is the workgroup memory (empty outside compute).
/// Compiled for the baseline CPU and for AVX2+FMA (`rastra_texture::cpu`): the lane loops
/// of the ops executed here are inlined into both.
fn interpret(
    program: &Program,
    warp: &mut Warp,
    shared: &[AtomicU32],
    resources: &Resources,
    unit: &mut TextureUnit,
    budget: &mut u64,
    info: &mut ExecInfo,
) -> Result<Stop, ExecError> {
    let code = &program.simt.ops[..];
    let insts = &program.simt.insts[..];
    let regs = &mut warp.regs[..];
    let st = &mut warp.state;
    let mut lanes: (Mask, u64) = (0, 0);
    loop {
        let op = &code[st.pc as usize];
        st.pc += 1;
        match op {
            Op::Run {
                start,
                len,
                classes,
            } => {
                issue_run(budget, info, *len, classes, st.mask, &mut lanes)?;
                let (mask, effects) = (st.mask, st.mask & !st.helpers);
                for inst in &insts[*start as usize..(*start + *len) as usize] {
                    exec_one(regs, inst, mask, effects, shared, resources, unit);
                }
            }
            Op::Barrier => {
                issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                return Ok(Stop::Barrier);
            }
            Op::If {
                cond,
                else_pc,
                end_pc: _,
            } => {
                issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                let c = cond_mask(&regs[cond.0 as usize]);
                let (t, e) = (st.mask & c, st.mask & !c);
                if t != 0 && e != 0 {
                    info.divergent_branches += 1;
                }
                st.frames.push(Frame {
                    end: *else_pc,
                    b: e,
                    ..Frame::default()
                });
                st.mask = t;
                if t == 0 {
                    st.pc = *else_pc;
                }
            }
            Op::Else { end_pc } => {
                let top = st.frames.len() - 1;
                let f = &mut st.frames[top];
                f.c = st.mask;
                st.mask = f.b;
                f.end = *end_pc;
                if st.mask == 0 {
                    st.pc = *end_pc;
                }
            }
            Op::EndIf => {
                let f = st.frames.pop().unwrap_or_default();
                st.mask |= f.c;
                st.skip_if_empty();
            }
            Op::Loop { continuing_pc } => {
                issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                st.frames.push(Frame {
                    end: *continuing_pc,
                    c: st.mask,
                    ..Frame::default()
                });
            }
            Op::Continuing { back_pc, end_pc } => {
                let top = st.frames.len() - 1;
                let f = &mut st.frames[top];
                st.mask |= f.b;
                if st.mask == 0 {
                    st.pc = *end_pc;
                } else {
                    f.end = *back_pc;
                }
            }
            Op::LoopBack {
                break_if,
                body_pc,
                continuing_pc,
                end_pc: _,
            } => {
                let top = st.frames.len() - 1;
                let f = &mut st.frames[top];
                if let Some(r) = break_if {
                    let c = cond_mask(&regs[r.0 as usize]);
                    f.a |= st.mask & c;
                    st.mask &= !c;
                }
                if st.mask != 0 {
                    if st.mask != f.c {
                        info.divergent_branches += 1;
                    }
                    f.b = 0;
                    f.c = st.mask;
                    f.end = *continuing_pc;
                    st.pc = *body_pc;
                    issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                }
            }
            Op::LoopEnd => {
                let f = st.frames.pop().unwrap_or_default();
                st.mask = f.a;
                st.skip_if_empty();
            }
            Op::Switch { selector, values } => {
                issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                let sel = &regs[selector.0 as usize];
                let mut matched = 0;
                let mut targets = 0;
                for &v in values.iter() {
                    let m = eq_mask(sel, v);
                    targets += (st.mask & m & !matched != 0) as u32;
                    matched |= m;
                }
                targets += (st.mask & !matched != 0) as u32;
                if targets > 1 {
                    info.divergent_branches += 1;
                }
                st.frames.push(Frame {
                    end: 0,
                    a: 0,
                    b: st.mask,
                    c: matched,
                    d: 0,
                });
                st.mask = 0;
            }
            Op::Case {
                selector,
                value,
                case_end_pc,
                next_pc,
            } => {
                let top = st.frames.len() - 1;
                let f = &mut st.frames[top];
                let entry = match value {
                    Some(v) => eq_mask(&regs[selector.0 as usize], *v),
                    None => !f.c,
                };
                st.mask |= f.b & entry;
                if st.mask == 0 {
                    st.pc = *next_pc;
                } else {
                    f.end = *case_end_pc;
                }
            }
            Op::CaseEnd { fall_through } => {
                if !fall_through {
                    let top = st.frames.len() - 1;
                    st.frames[top].d |= st.mask;
                    st.mask = 0;
                }
            }
            Op::EndSwitch => {
                let f = st.frames.pop().unwrap_or_default();
                st.mask |= f.d | f.a;
                st.skip_if_empty();
            }
            Op::Region { end_pc } => {
                issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                st.frames.push(Frame {
                    end: *end_pc,
                    ..Frame::default()
                });
            }
            Op::EndRegion => {
                let f = st.frames.pop().unwrap_or_default();
                st.mask |= f.a;
                st.skip_if_empty();
            }
            Op::Break { frame } | Op::Return { frame } => {
                issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                st.frames[*frame as usize].a |= st.mask;
                st.mask = 0;
                st.pc = st.frames[st.frames.len() - 1].end;
            }
            Op::BreakUnless { cond, frame } => {
                issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                let c = cond_mask(&regs[cond.0 as usize]);
                let leaving = st.mask & !c;
                if leaving != 0 {
                    if st.mask & c != 0 {
                        info.divergent_branches += 1;
                    }
                    st.frames[*frame as usize].a |= leaving;
                    st.mask &= c;
                    st.skip_if_empty();
                }
            }
            Op::Continue { frame } => {
                issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                st.frames[*frame as usize].b |= st.mask;
                st.mask = 0;
                st.pc = st.frames[st.frames.len() - 1].end;
            }
            Op::Kill => {
                issue(budget, info, Class::Control, st.mask, &mut lanes)?;
                st.discarded |= st.mask;
                st.helpers |= st.mask;
            }
            Op::End => return Ok(Stop::Finished),
        }
    }
}
}

fn eq_mask(r: &[u32; WARP_LANES], v: u32) -> Mask {
    let mut m = 0;
    for (l, s) in r.iter().enumerate() {
        m |= ((*s == v) as Mask) << l;
    }
    m
}

/// The memories a warp addresses.
struct MemCx<'a, 'r> {
    resources: &'a Resources<'r>,
    shared: &'a [AtomicU32],
}

impl MemCx<'_, '_> {
    #[inline]
    fn words(&self, mem: Mem) -> &[AtomicU32] {
        match mem {
            Mem::Buffer(slot) => self
                .resources
                .buffers
                .get(slot as usize)
                .copied()
                .unwrap_or(&[]),
            Mem::Workgroup => self.shared,
        }
    }
}

/// `dst = src` on the lanes in `mask`, as a select (no branch per lane).
#[inline(always)]
fn masked_store(dst: &mut [u32; WARP_LANES], src: &[u32; WARP_LANES], mask: Mask) {
    for l in 0..WARP_LANES {
        let on = 0u32.wrapping_sub(((mask >> l) & 1) as u32);
        dst[l] = (src[l] & on) | (dst[l] & !on);
    }
}

/// Executes one straight-line instruction on the lanes in `mask` (`effects` = the active
/// lanes allowed side effects): the common register-to-register instructions here, the rest
/// in `exec_inst`, the texture and image units. The interpreter inlines it into its run
/// loop; compiled code (`jit`) calls it for the instructions it does not emit itself.
#[inline(always)]
pub(crate) fn exec_one(
    regs: &mut [[u32; WARP_LANES]],
    inst: &Inst,
    mask: Mask,
    effects: Mask,
    shared: &[AtomicU32],
    resources: &Resources,
    unit: &mut TextureUnit,
) {
    match *inst {
        Inst::Const { dst, value } => regs[dst.0 as usize] = [value; WARP_LANES],
        Inst::Mov { dst, src } => regs[dst.0 as usize] = regs[src.0 as usize],
        Inst::Store { dst, src } => {
            let s = regs[src.0 as usize];
            masked_store(&mut regs[dst.0 as usize], &s, mask);
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
        Inst::Texture(ref t) => crate::texture::execute(regs, t, mask, effects, resources, unit),
        Inst::Image(ref i) => crate::image::execute(regs, i, mask, effects, resources),
        _ => exec_inst(regs, inst, mask, effects, &MemCx { resources, shared }),
    }
}

rastra_texture::multiversion! {
/// Unary operation `op` over every lane of register `a` into register `dst` (which may be
/// the same register), compiled for the baseline and for AVX2+FMA (picked at run time, as
/// the interpreter is): what compiled code calls for the unary instructions it does not
/// emit itself (transcendentals) — `exec_one`'s lane loop without its dispatch over every
/// kind of instruction, so the same bits.
pub(crate) fn unary_wide(op: UnOp, regs: &mut [[u32; WARP_LANES]], a: usize, dst: usize) {
    let x = regs[a];
    op.eval_lanes(&x, &mut regs[dst])
}
}

rastra_texture::multiversion! {
/// [`unary_wide`] for sine, the commonest of them in pixel shaders, in a function of its
/// own: without the other operations' library calls around it, it needs no saved registers.
pub(crate) fn sin_wide(regs: &mut [[u32; WARP_LANES]], a: usize, dst: usize) {
    crate::trig::sin_in_file(regs, a, dst)
}
}

rastra_texture::multiversion! {
/// [`sin_wide`] for cosine.
pub(crate) fn cos_wide(regs: &mut [[u32; WARP_LANES]], a: usize, dst: usize) {
    crate::trig::cos_in_file(regs, a, dst)
}
}

rastra_texture::multiversion! {
/// [`exec_one`] compiled for the baseline and for AVX2+FMA (picked at run time, as the
/// interpreter is): what compiled code calls for the instructions it does not emit itself.
pub(crate) fn exec_one_wide(
    regs: &mut [[u32; WARP_LANES]],
    inst: &Inst,
    mask: Mask,
    effects: Mask,
    shared: &[AtomicU32],
    resources: &Resources,
    unit: &mut TextureUnit,
) {
    exec_one(regs, inst, mask, effects, shared, resources, unit)
}
}

/// Executes one straight-line instruction other than those `exec_one` executes itself (register
/// moves, ALU operations, barriers, texture and image instructions). `mask` = active lanes,
/// `effects` = active lanes allowed side effects.
#[inline(never)]
fn exec_inst(regs: &mut [[u32; WARP_LANES]], inst: &Inst, mask: Mask, effects: Mask, m: &MemCx) {
    match *inst {
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
        Inst::Derivative {
            axis,
            fine,
            dst,
            src,
        } => regs[dst.0 as usize] = derivative(&regs[src.0 as usize], axis, fine),
        Inst::Load {
            dst,
            mem,
            offset,
            add,
        } => {
            let buf = m.words(mem);
            let off = offset.map_or([0; WARP_LANES], |r| regs[r.0 as usize]);
            let mut out = [0; WARP_LANES];
            for l in 0..WARP_LANES {
                out[l] = load_word(buf, off[l] as u64 + add as u64);
            }
            regs[dst.0 as usize] = out;
        }
        Inst::StoreMem {
            mem,
            offset,
            add,
            src,
        } => {
            let buf = m.words(mem);
            let off = offset.map_or([0; WARP_LANES], |r| regs[r.0 as usize]);
            let s = regs[src.0 as usize];
            for l in 0..WARP_LANES {
                if lane_on(effects, l) {
                    store_word(buf, off[l] as u64 + add as u64, s[l]);
                }
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
            let buf = m.words(mem);
            let off = offset.map_or([0; WARP_LANES], |r| regs[r.0 as usize]);
            let v = regs[value.0 as usize];
            let mut out = [0; WARP_LANES];
            for l in 0..WARP_LANES {
                if lane_on(effects, l) {
                    out[l] = atomic_word(buf, off[l] as u64 + add as u64, op, v[l]);
                }
            }
            regs[dst.0 as usize] = out;
        }
        Inst::CompareExchange {
            mem,
            offset,
            add,
            dst,
            compare,
            value,
        } => {
            let buf = m.words(mem);
            let off = offset.map_or([0; WARP_LANES], |r| regs[r.0 as usize]);
            let (c, v) = (regs[compare.0 as usize], regs[value.0 as usize]);
            let mut old = [0; WARP_LANES];
            let mut ok = [0; WARP_LANES];
            for l in 0..WARP_LANES {
                if lane_on(effects, l) {
                    (old[l], ok[l]) =
                        compare_exchange_word(buf, off[l] as u64 + add as u64, c[l], v[l]);
                }
            }
            regs[dst.0 as usize] = old;
            regs[dst.0 as usize + 1] = ok;
        }
        Inst::BufferLen { dst, slot } => {
            let len = m.words(Mem::Buffer(slot)).len() * 4;
            regs[dst.0 as usize] = [len.min(u32::MAX as usize) as u32; WARP_LANES];
        }
        // Run by `run` itself.
        Inst::Const { .. }
        | Inst::Mov { .. }
        | Inst::Store { .. }
        | Inst::Unary { .. }
        | Inst::Binary { .. }
        | Inst::Ternary { .. }
        | Inst::Barrier
        | Inst::Texture(_)
        | Inst::Image(_) => {}
        Inst::LaneId { dst } => {
            regs[dst.0 as usize] = std::array::from_fn(|l| l as u32);
        }
        Inst::Ballot { dst, pred } => {
            // The mask's words, low first (a vec4<u32> holds up to 128 lanes).
            let b = cond_mask(&regs[pred.0 as usize]) & mask;
            for k in 0..4 {
                let word = b.checked_shr(32 * k as u32).unwrap_or(0) as u32;
                regs[dst.0 as usize + k] = [word; WARP_LANES];
            }
        }
        Inst::SubgroupOp {
            op,
            scan,
            identity,
            dst,
            src,
        } => {
            let s = regs[src.0 as usize];
            let mut out = [identity; WARP_LANES];
            let mut acc: Option<u32> = None;
            for l in 0..WARP_LANES {
                if !lane_on(mask, l) {
                    continue;
                }
                if scan == Scan::Exclusive {
                    out[l] = acc.unwrap_or(identity);
                }
                acc = Some(match acc {
                    None => s[l],
                    Some(a) => op.eval(a, s[l]),
                });
                if scan == Scan::Inclusive {
                    out[l] = acc.unwrap_or(identity);
                }
            }
            if scan == Scan::Reduce {
                out = [acc.unwrap_or(identity); WARP_LANES];
            }
            regs[dst.0 as usize] = out;
        }
        Inst::Shuffle {
            mode,
            dst,
            src,
            index,
        } => {
            let s = regs[src.0 as usize];
            let idx = regs[index.0 as usize];
            let first = mask.trailing_zeros() as usize;
            let mut out = [0; WARP_LANES];
            for (l, o) in out.iter_mut().enumerate() {
                let from = match mode {
                    ShuffleMode::BroadcastFirst => first as u64,
                    ShuffleMode::Index => idx[l] as u64,
                    ShuffleMode::Xor => (l as u64) ^ idx[l] as u64,
                    ShuffleMode::Up => (l as u64).wrapping_sub(idx[l] as u64),
                    ShuffleMode::Down => l as u64 + idx[l] as u64,
                    ShuffleMode::QuadIndex if idx[l] < 4 => (l as u64 & !3) + idx[l] as u64,
                    ShuffleMode::QuadIndex => u64::MAX,
                };
                if from < WARP_LANES as u64 && lane_on(mask, from as usize) {
                    *o = s[from as usize];
                }
            }
            regs[dst.0 as usize] = out;
        }
    }
}

/// The word at byte address `addr` (a multiple of 4: every host-shareable WGSL type is
/// word-aligned), if it is inside `buf`.
#[inline]
fn word(buf: &[AtomicU32], addr: u64) -> Option<&AtomicU32> {
    usize::try_from(addr / 4).ok().and_then(|w| buf.get(w))
}

/// Reads the word at byte address `addr`, or 0 when it is outside the buffer.
#[inline]
pub(crate) fn load_word(buf: &[AtomicU32], addr: u64) -> u32 {
    word(buf, addr).map_or(0, |w| w.load(Ordering::Relaxed))
}

/// Writes the word at byte address `addr`; dropped when it is outside the buffer.
#[inline]
pub(crate) fn store_word(buf: &[AtomicU32], addr: u64, v: u32) {
    if let Some(w) = word(buf, addr) {
        w.store(v, Ordering::Relaxed);
    }
}

/// Atomic read-modify-write of the word at `addr`; returns the old value, or 0 (and does
/// nothing) when it is outside the buffer. WGSL atomics are relaxed.
pub(crate) fn atomic_word(buf: &[AtomicU32], addr: u64, op: AtomicOp, v: u32) -> u32 {
    let Some(w) = word(buf, addr) else {
        return 0;
    };
    let o = Ordering::Relaxed;
    match op {
        AtomicOp::Add => w.fetch_add(v, o),
        AtomicOp::Sub => w.fetch_sub(v, o),
        AtomicOp::And => w.fetch_and(v, o),
        AtomicOp::Or => w.fetch_or(v, o),
        AtomicOp::Xor => w.fetch_xor(v, o),
        AtomicOp::UMin => w.fetch_min(v, o),
        AtomicOp::UMax => w.fetch_max(v, o),
        AtomicOp::SMin => w
            .fetch_update(o, o, |x| Some((x as i32).min(v as i32) as u32))
            .unwrap_or_else(|x| x),
        AtomicOp::SMax => w
            .fetch_update(o, o, |x| Some((x as i32).max(v as i32) as u32))
            .unwrap_or_else(|x| x),
        AtomicOp::Exchange => w.swap(v, o),
    }
}

/// Strong compare-exchange of the word at `addr`: `(old, exchanged)`; `(0, 0)` outside.
pub(crate) fn compare_exchange_word(buf: &[AtomicU32], addr: u64, cmp: u32, v: u32) -> (u32, u32) {
    let Some(w) = word(buf, addr) else {
        return (0, 0);
    };
    match w.compare_exchange(cmp, v, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(old) => (old, 1),
        Err(old) => (old, 0),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane functions compiled code calls take their operand register wherever it lies
    /// — before the destination, after it, or the destination itself — and write every lane.
    #[test]
    fn unary_callbacks_read_the_operand_wherever_it_lies() {
        let x: [u32; WARP_LANES] = std::array::from_fn(|l| (l as f32 * 0.37 - 9.0).to_bits());
        for (a, dst) in [(1, 3), (3, 1), (2, 2)] {
            let mut regs = vec![[0u32; WARP_LANES]; 4];
            regs[a] = x;
            sin_wide(&mut regs, a, dst);
            let want = x.map(|v| crate::trig::sin(f32::from_bits(v)).to_bits());
            assert_eq!(regs[dst], want, "sin: {a} into {dst}");
            if a != dst {
                assert_eq!(regs[a], x, "operand {a} kept");
            }
            regs[a] = x;
            unary_wide(UnOp::FAbs, &mut regs, a, dst);
            assert_eq!(regs[dst], x.map(|v| v & 0x7fff_ffff), "abs: {a} into {dst}");
        }
    }
}
