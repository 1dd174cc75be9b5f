//! The shader compiler's back end: SIMT code ([`crate::simt`]) compiled to native code with
//! Cranelift, so a warp runs without an interpreter loop (T3 "Shader Unit internals": the
//! driver compiles shaders to the hardware's ISA; here the hardware is the host CPU and a
//! warp's 64 lanes are sixteen 128-bit vectors).
//!
//! The compiled function is the warp interpreter (`warp::run`) unrolled over one program:
//! every SIMT op becomes a block doing what the interpreter does for that op, with the
//! execution mask, the control frames and the statistics in machine registers instead of a
//! `Warp`'s fields. Frame `k` of the interpreter's stack is a fixed set of variables: the
//! nesting is static, and so is the op a frame's `end` names at each point of the code
//! ([`static_ends`]), so "jump to the innermost frame's end" is a direct branch.
//!
//! Straight-line instructions whose results are exactly defined by IEEE 754 or two's
//! complement arithmetic (add, multiply, divide, fused multiply-add, rounding, comparisons,
//! selects, bit operations, min and max by the interpreter's stated rule, …) are emitted as
//! vector instructions, and so are buffer and workgroup loads and stores (`memory`) and the
//! unsigned operations of `arith`; a run's straight-line code is generated one 4-lane chunk
//! at a time, and values no other part of the program reads stay out of the register file
//! (`liveness`). Every other instruction (texture accesses, atomics, the transcendental
//! functions, …) calls back into the interpreter's own code for that one instruction, built
//! for AVX2 and FMA when the CPU has them (`warp::exec_one_wide`; unary operations straight
//! to their lane loop, `unary_callback`; sine and cosine, on a CPU with AVX2, called directly
//! with the two registers' addresses, `trig::sin_file_avx2`), so both
//! paths share one definition of each and give the same bits. (That includes sin and cos: the
//! interpreter's eight-lane version of `trig` over a whole warp beat the same operations
//! emitted here four lanes at a time — blended_layers 7.5% fewer instructions, one thread
//! 414–421 → 385–406 ms in four of five alternating rounds.)
//! Budget, instruction classes, active lanes and divergent branches are counted exactly as
//! the interpreter counts them; the budget is checked at loop back edges, barriers and the
//! end rather than at every op (a program that overspends fails either way).
//!
//! Registers every lane agrees on (`uniform`: loop counters, strides, uniform conditions)
//! are scalar variables: their instructions are scalar instructions, a branch on one needs
//! no lane mask, and it is written to the register file only where something reads the
//! register file. Under uniform control every lane of the starting mask is active, so a
//! variable's masked store there writes all lanes (lanes outside that mask are never read:
//! their registers are unspecified after the program).
//!
//! A workgroup barrier suspends the warp: the code stores its mask and frames
//! ([`Suspended`], kept in the warp between calls) and returns; the next call enters at a
//! dispatch block that reloads them and branches to the op after that barrier.
//! `RASTRA_JIT=0` turns the compiler off (every program is interpreted).

mod arith;
mod liveness;
mod memory;
mod registers;
mod scalar;
mod straight;
mod uniform;

use std::collections::HashMap;
use std::sync::atomic::AtomicU32;

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{AbiParam, Block, InstBuilder, MemFlagsData, Value, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module};
use rastra_texture::TextureUnit;

use crate::ir::{BinOp, Inst, Reg, UnOp};
use crate::simt::{Class, Code, Op};
use crate::{ExecError, ExecInfo, Mask, Resources, WARP_LANES};

/// Vectors of four lanes per warp register.
const CHUNKS: usize = WARP_LANES / 4;
/// Bytes of one warp register in the register file.
const REG_BYTES: i32 = (WARP_LANES * 4) as i32;
/// A lane mask ([`Mask`]) as the generated code holds it: one bit per lane.
const MASK_TY: types::Type = types::I64;
/// Bytes of one [`Mask`] in memory.
const MASK_BYTES: usize = std::mem::size_of::<Mask>();
const _: () = assert!(Mask::BITS == 64 && WARP_LANES <= 64);

/// The counters the compiled code keeps, in [`Cx::counters`] order. The first
/// [`LIVE_COUNTERS`] (the budget) lives in a machine register while the code runs; the
/// others are added to in memory. (Machine registers are the scarce resource here: with
/// control instructions or divergent branches also kept in registers, the register
/// allocator spilled a loop's warp registers instead, and compute_fma_reduce's compiled
/// FMA loop ran 17% more instructions; the active-lane count in a register was spilled and
/// reloaded at every op, 4% more instructions than adding to it in memory.) Instructions
/// issued are the budget spent, and ALU instructions are those not in another class, so
/// neither is kept.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counter {
    Budget = 0,
    ActiveLanes,
    Control,
    Transcendental,
    Memory,
    Texture,
    Divergent,
    /// Instructions issued where control is not uniform. Under uniform control the mask
    /// is the warp's starting mask, so those ops' active lanes are added once, at the end
    /// of the call: the starting mask's lanes × (instructions issued − these).
    DivergentIssued,
}
const COUNTERS: usize = 8;
const LIVE_COUNTERS: usize = 1;

/// What the compiled code reads and writes: the warp's registers and control state in, the
/// discarded lanes and counters out, and (for instructions it calls back for) the
/// interpreter's context. `#[repr(C)]`: the generated code addresses its fields by offset.
#[repr(C)]
struct Cx {
    regs: *mut [u32; WARP_LANES],
    num_regs: usize,
    mask: Mask,
    helpers: Mask,
    discarded: Mask,
    /// In: 0 to start the program, else the op to resume at (after a barrier). Out: the op
    /// to resume at when the code stopped at a barrier.
    resume: u32,
    /// Frame masks `a, b, c, d` of every frame level, saved at a barrier.
    frames: *mut Mask,
    counters: [u64; COUNTERS],
    // Read by `exec_callback` only.
    insts: *const Inst,
    resources: *const Resources<'static>,
    unit: *mut TextureUnit,
    shared: *const AtomicU32,
    shared_len: usize,
    /// The first [`NATIVE_BUFFERS`] buffer bindings, for the loads and stores the code makes
    /// itself (`memory`); missing bindings are empty.
    buffers: [BufferWords; NATIVE_BUFFERS],
    /// Always 0: loads outside a memory read it.
    zero: u32,
    /// Never read: stores outside a memory, or by lanes without side effects, write it.
    sink: u32,
}

/// Buffer bindings whose loads and stores compiled code makes itself; instructions on
/// later bindings call the interpreter's code.
const NATIVE_BUFFERS: usize = 8;

/// One buffer binding's words, as compiled code reads them.
#[repr(C)]
#[derive(Clone, Copy)]
struct BufferWords {
    ptr: *const AtomicU32,
    len: usize,
}

/// The generated function: returns 0 when the program ended, 1 when the budget ran out, 2
/// when it stopped at a barrier.
type Entry = unsafe extern "C" fn(*mut Cx) -> u32;

/// A program compiled to native code. The code is immutable once compiled and re-entrant
/// (all state lives in the [`Cx`] each call passes), so it is shared by every warp.
pub(crate) struct Compiled {
    entry: Entry,
    module: Option<JITModule>,
}

// SAFETY: after `finalize_definitions` the module is never used again except to free its
// memory on drop; the code it holds is read-only and keeps no state between calls.
unsafe impl Send for Compiled {}
unsafe impl Sync for Compiled {}

impl Drop for Compiled {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: `entry` dies with `self`; nothing else points into the module.
            unsafe { m.free_memory() };
        }
    }
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compiled(native code)")
    }
}

/// A compiled warp's control state while it waits at a barrier: the op to resume at (0:
/// not started or finished), its masks, and `a, b, c, d` of every frame level.
#[derive(Clone, Debug, Default)]
pub(crate) struct Suspended {
    pub resume: u32,
    /// The lanes the program started with (the mask wherever control is uniform).
    pub start_mask: Mask,
    pub mask: Mask,
    pub helpers: Mask,
    pub discarded: Mask,
    pub frames: Vec<Mask>,
}

/// How a call of compiled code ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stopped {
    Finished { discarded: Mask },
    Barrier,
}

/// Whether the environment allows compiling (`RASTRA_JIT=0` forbids it).
fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("RASTRA_JIT").map_or(true, |v| v != "0"))
}

/// Per register of `0..count`: whether some instruction or control op of `code` reads it.
pub(crate) fn registers_read(code: &Code, count: u32) -> Vec<bool> {
    let uses = liveness::RegUses::new(code, &[]);
    (0..count).map(|r| uses.is_read(r)).collect()
}

/// Per register of `0..count`: whether some instruction of `code` writes it.
pub(crate) fn registers_written(code: &Code, count: u32) -> Vec<bool> {
    let uses = liveness::RegUses::new(code, &[]);
    (0..count).map(|r| uses.is_written(r)).collect()
}

/// Compiles `code`, whose results the pipeline reads from the registers `outputs`, or gives
/// `None` when it must be interpreted: the compiler is turned off or the host has no
/// Cranelift back end.
pub(crate) fn compile(code: &Code, outputs: &[u32]) -> Option<Compiled> {
    if !enabled() {
        return None;
    }
    let ends = static_ends(code)?;
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").ok()?;
    // The generated code is checked in debug builds (tests); release builds skip the
    // verifier's pass over every function.
    flags
        .set(
            "enable_verifier",
            if cfg!(debug_assertions) {
                "true"
            } else {
                "false"
            },
        )
        .ok()?;
    let isa = cranelift_native::builder()
        .ok()?
        .finish(settings::Flags::new(flags))
        .ok()?;
    let flag = |name: &str| {
        isa.isa_flags()
            .iter()
            .any(|f| f.name == name && f.as_bool() == Some(true))
    };
    let native = Native {
        fma: flag("has_fma"),
        round: flag("has_sse41"),
    };
    let mut module = JITModule::new(JITBuilder::with_isa(
        isa,
        cranelift_module::default_libcall_names(),
    ));
    let config = module.target_config();
    let ptr = config.pointer_type();
    let mut ctx = module.make_context();
    ctx.func.signature.params.push(AbiParam::new(ptr));
    ctx.func.signature.returns.push(AbiParam::new(types::I32));
    let mut fctx = FunctionBuilderContext::new();
    {
        let b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let uses = liveness::RegUses::new(code, outputs);
        let uniform = uniform::Uniform::new(code, outputs, &uses);
        Gen::new(b, code, &ends, &uses, &uniform, outputs, ptr, native).program(config);
    }
    let id = module
        .declare_function("warp", Linkage::Local, &ctx.func.signature)
        .ok()?;
    ctx.set_disasm(std::env::var("RASTRA_JIT_DUMP").is_ok());
    if let Err(e) = module.define_function(id, &mut ctx) {
        // Generated code the verifier rejects is a compiler bug: loud in debug builds; a
        // release build interprets the program instead.
        debug_assert!(false, "shader JIT: {e:?}");
        return None;
    }
    if let Some(v) = ctx.compiled_code().and_then(|c| c.vcode.clone()) {
        // The instructions first: callbacks name them by index.
        for (i, inst) in code.insts.iter().enumerate() {
            eprintln!("; inst {i}: {inst:?}");
        }
        eprintln!("{}\n{v}", ctx.func.display());
    }
    module.clear_context(&mut ctx);
    module.finalize_definitions().ok()?;
    let p = module.get_finalized_function(id);
    // SAFETY: the function was built with the `Entry` signature.
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(p) };
    Some(Compiled {
        entry,
        module: Some(module),
    })
}

/// For each op, the op the innermost control frame's `end` names after the op has run —
/// where the interpreter jumps when the mask empties there. Frames are pushed and updated
/// at fixed points of the code, so this is a property of the position. `None` if the code
/// breaks the nesting invariants (never for code from `Code::new`).
fn static_ends(code: &Code) -> Option<Vec<u32>> {
    let last = code.ops.len() as u32 - 1;
    let mut stack = vec![last];
    let mut ends = Vec::with_capacity(code.ops.len());
    for op in &code.ops {
        match *op {
            Op::If { else_pc, .. } => stack.push(else_pc),
            Op::Loop { continuing_pc } => stack.push(continuing_pc),
            Op::Switch { .. } => stack.push(u32::MAX),
            Op::Region { end_pc } => stack.push(end_pc),
            Op::Else { end_pc } => *stack.last_mut()? = end_pc,
            Op::Continuing { back_pc, .. } => *stack.last_mut()? = back_pc,
            Op::Case { case_end_pc, .. } => *stack.last_mut()? = case_end_pc,
            Op::EndIf | Op::LoopEnd | Op::EndSwitch | Op::EndRegion => {
                stack.pop()?;
            }
            _ => {}
        }
        ends.push(*stack.last()?);
    }
    Some(ends)
}

/// Runs `compiled` on a warp: from the start of its program (`state` holds its lanes in
/// `mask` and `helpers`), or from the barrier it stopped at, until the end or the next
/// barrier.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    compiled: &Compiled,
    code: &Code,
    regs: &mut [[u32; WARP_LANES]],
    state: &mut Suspended,
    shared: &[AtomicU32],
    resources: &Resources,
    unit: &mut TextureUnit,
    budget: &mut u64,
    info: &mut ExecInfo,
) -> Result<Stopped, ExecError> {
    let levels = 4 * (code.max_depth as usize + 1);
    if state.frames.len() < levels {
        state.frames.resize(levels, 0);
    }
    // Field by field (`warp::run` has just stored them one by one): a wider load spanning
    // those stores waits for them to reach the cache — a stall on every call.
    // SAFETY: plain reads of initialised fields of a live reference.
    let (mask, helpers, discarded, resume) = unsafe {
        (
            std::ptr::read_volatile(&state.mask),
            std::ptr::read_volatile(&state.helpers),
            std::ptr::read_volatile(&state.discarded),
            std::ptr::read_volatile(&state.resume),
        )
    };
    let mut cx = Cx {
        regs: regs.as_mut_ptr(),
        num_regs: regs.len(),
        mask,
        helpers,
        discarded,
        resume,
        frames: state.frames.as_mut_ptr(),
        counters: [0; COUNTERS],
        insts: code.insts.as_ptr(),
        resources: (resources as *const Resources).cast(),
        unit,
        shared: shared.as_ptr(),
        shared_len: shared.len(),
        buffers: [BufferWords {
            ptr: std::ptr::null(),
            len: 0,
        }; NATIVE_BUFFERS],
        zero: 0,
        sink: 0,
    };
    for (table, words) in cx.buffers.iter_mut().zip(resources.buffers) {
        *table = BufferWords {
            ptr: words.as_ptr(),
            len: words.len(),
        };
    }
    // Compiled code checks the budget as a signed number after overspending it by at most
    // a loop iteration's instructions (`Gen::check_budget`).
    let start = (*budget).min(1 << 62);
    cx.counters[Counter::Budget as usize] = start;
    // SAFETY: `cx` points at live registers of at least `num_regs` (the program's count), at
    // a frame buffer for every level and at the program's instructions; the code only
    // addresses registers < `num_regs` (IR invariant), frame levels ≤ `max_depth`, and calls
    // back with instruction indices of this program.
    let status = unsafe { (compiled.entry)(&mut cx) };
    // One 8-byte load per counter: the code has just stored them one by one, and a wider
    // load spanning two of those stores waits for both to reach the cache (store
    // forwarding fails) — a stall on every call.
    let c: [u64; COUNTERS] = std::array::from_fn(|k| {
        // SAFETY: a plain read of an initialised field of a live local.
        unsafe { std::ptr::read_volatile(&cx.counters[k]) }
    });
    let c = &c;
    let left = (c[Counter::Budget as usize] as i64).max(0) as u64;
    let spent = start - left;
    *budget -= spent;
    let other = [
        Counter::Control,
        Counter::Transcendental,
        Counter::Memory,
        Counter::Texture,
    ]
    .map(|k| c[k as usize])
    .iter()
    .sum::<u64>();
    info.instructions += spent;
    // (After an overspent budget the counts are not reported: the call fails.)
    info.alu += spent.saturating_sub(other);
    info.transcendental += c[Counter::Transcendental as usize];
    info.memory += c[Counter::Memory as usize];
    info.texture += c[Counter::Texture as usize];
    info.control += c[Counter::Control as usize];
    let uniform_issued = spent.saturating_sub(c[Counter::DivergentIssued as usize]);
    // (A full warp without a bit count; a partial one by `popcnt` where the CPU has it —
    // with the same `count_ones` in both arms, the compiler counted every warp's bits with
    // the baseline's arithmetic.)
    let start_lanes = match state.start_mask {
        m if m == crate::lane_mask(WARP_LANES) => WARP_LANES as u64,
        m => rastra_texture::cpu::count_ones(m) as u64,
    };
    info.active_lanes += c[Counter::ActiveLanes as usize] + uniform_issued * start_lanes;
    info.divergent_branches += c[Counter::Divergent as usize];
    match status {
        0 => {
            state.resume = 0;
            Ok(Stopped::Finished {
                discarded: cx.discarded,
            })
        }
        2 => {
            // Field by field, for the reason the counters are.
            // SAFETY: plain reads of initialised fields of a live local.
            unsafe {
                state.resume = std::ptr::read_volatile(&cx.resume);
                state.mask = std::ptr::read_volatile(&cx.mask);
                state.helpers = std::ptr::read_volatile(&cx.helpers);
                state.discarded = std::ptr::read_volatile(&cx.discarded);
            }
            Ok(Stopped::Barrier)
        }
        _ => Err(ExecError::BudgetExhausted),
    }
}

/// Executes instruction `index` of the program on the lanes in `mask` (`effects` = those
/// allowed side effects) with the interpreter's code.
extern "C" fn exec_callback(cx: *mut Cx, index: u32, mask: Mask, effects: Mask) {
    // SAFETY: called only by the generated code with the `Cx` that `run` built, whose
    // pointers are live for the call; no other reference to the registers exists meanwhile.
    unsafe {
        let cx = &mut *cx;
        let regs = std::slice::from_raw_parts_mut(cx.regs, cx.num_regs);
        let inst = &*cx.insts.add(index as usize);
        let shared = std::slice::from_raw_parts(cx.shared, cx.shared_len);
        crate::warp::exec_one_wide(
            regs,
            inst,
            mask,
            effects,
            shared,
            &*cx.resources,
            &mut *cx.unit,
        );
    }
}

/// Executes instruction `index` of the program, a unary ALU instruction, with the
/// interpreter's lane loop for its operation — [`exec_callback`] for the transcendentals
/// without the dispatch over every kind of instruction (blended_layers' `sin`).
extern "C" fn unary_callback(cx: *const Cx, index: u32) {
    // SAFETY: as for `exec_callback`.
    unsafe {
        let cx = &*cx;
        let regs = std::slice::from_raw_parts_mut(cx.regs, cx.num_regs);
        if let Inst::Unary { op, dst, a } = *cx.insts.add(index as usize) {
            let (a, dst) = (a.0 as usize, dst.0 as usize);
            match op {
                UnOp::FSin => crate::warp::sin_wide(regs, a, dst),
                UnOp::FCos => crate::warp::cos_wide(regs, a, dst),
                _ => crate::warp::unary_wide(op, regs, a, dst),
            }
        }
    }
}

/// Host features that decide which instructions are emitted as vector code: a fused
/// multiply-add and the rounding instructions are single exact instructions only with them
/// (without, Cranelift would call a library, so the interpreter's code is called instead).
#[derive(Clone, Copy)]
struct Native {
    fma: bool,
    round: bool,
}

/// One chunk of a register's value during a run.
#[derive(Clone, Copy)]
struct Cached {
    ty: types::Type,
    v: Value,
    /// Changed since it was last read from or written to the register file.
    dirty: bool,
}

/// The state of one control frame, as variables.
#[derive(Clone, Copy)]
struct FrameVars {
    a: Variable,
    b: Variable,
    c: Variable,
    d: Variable,
}

struct Gen<'a, 'f> {
    b: FunctionBuilder<'f>,
    code: &'a Code,
    ends: &'a [u32],
    /// Where registers are read and written: which values need not reach the register file.
    uses: &'a liveness::RegUses,
    /// Per register: for a uniform one, the scalar variable holding its value instead of
    /// chunks in the register file (written there only where the interpreter's code, the
    /// pipeline or a barrier's resumption reads it).
    scalars: Vec<Option<Variable>>,
    /// Per register: for a promoted one (`promoted_registers`), a variable per chunk
    /// instead of the register file.
    promoted: Vec<Option<[Variable; CHUNKS]>>,
    uniform: &'a uniform::Uniform,
    /// The registers the pipeline reads after the program.
    outputs: &'a [u32],
    ptr: types::Type,
    native: Native,
    cx: Value,
    regs: Value,
    blocks: Vec<Block>,
    exhausted: Block,
    mask: Variable,
    helpers: Variable,
    discarded: Variable,
    counters: [Variable; LIVE_COUNTERS],
    frames: Vec<FrameVars>,
    /// Frames on the stack before each op.
    depth: Vec<usize>,
    /// The op being generated.
    pc: usize,
    /// Per op: for a `Continuing`, whether some `continue` leaves for its loop.
    continued: Vec<bool>,
    /// Register chunks (register, chunk) the current run has read or written.
    cache: HashMap<(u32, usize), Cached>,
    /// The chunks of a warp register the code being generated computes.
    chunks: std::ops::Range<usize>,
}

/// Per op: for a `Continuing`, whether a `Continue` op targets its loop's frame (`depth`:
/// frames before each op).
fn continued_loops(code: &Code, depth: &[usize]) -> Vec<bool> {
    let mut out = vec![false; code.ops.len()];
    // Open loops: (frame index, some continue seen).
    let mut open: Vec<(usize, bool)> = Vec::new();
    for (pc, op) in code.ops.iter().enumerate() {
        match *op {
            Op::Loop { .. } => open.push((depth[pc], false)),
            Op::Continue { frame } => {
                if let Some(l) = open.iter_mut().rev().find(|l| l.0 == frame as usize) {
                    l.1 = true;
                }
            }
            Op::Continuing { .. } => out[pc] = open.last().is_some_and(|l| l.1),
            Op::LoopEnd => {
                open.pop();
            }
            _ => {}
        }
    }
    out
}

/// The condition of a float comparison instruction.
fn float_cc(op: BinOp) -> Option<FloatCC> {
    Some(match op {
        BinOp::FEq => FloatCC::Equal,
        BinOp::FNe => FloatCC::NotEqual,
        BinOp::FLt => FloatCC::LessThan,
        BinOp::FLe => FloatCC::LessThanOrEqual,
        BinOp::FGt => FloatCC::GreaterThan,
        BinOp::FGe => FloatCC::GreaterThanOrEqual,
        _ => return None,
    })
}

/// The condition of an integer comparison instruction.
fn int_cc(op: BinOp) -> Option<IntCC> {
    Some(match op {
        BinOp::IEq => IntCC::Equal,
        BinOp::INe => IntCC::NotEqual,
        BinOp::SLt => IntCC::SignedLessThan,
        BinOp::SLe => IntCC::SignedLessThanOrEqual,
        BinOp::SGt => IntCC::SignedGreaterThan,
        BinOp::SGe => IntCC::SignedGreaterThanOrEqual,
        BinOp::ULt => IntCC::UnsignedLessThan,
        BinOp::ULe => IntCC::UnsignedLessThanOrEqual,
        BinOp::UGt => IntCC::UnsignedGreaterThan,
        BinOp::UGe => IntCC::UnsignedGreaterThanOrEqual,
        _ => return None,
    })
}

/// `+ − × ÷` of floats.
fn is_float_arith(op: BinOp) -> bool {
    matches!(op, BinOp::FAdd | BinOp::FSub | BinOp::FMul | BinOp::FDiv)
}

/// The integer operations with one Cranelift instruction of the same meaning.
fn is_int_arith(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::IAdd
            | BinOp::ISub
            | BinOp::IMul
            | BinOp::And
            | BinOp::Or
            | BinOp::Xor
            | BinOp::SMin
            | BinOp::SMax
            | BinOp::UMin
            | BinOp::UMax
    )
}

/// `x op y` for the operations of [`is_float_arith`] and [`is_int_arith`], as one
/// instruction on values of any width (scalars or vectors of the right type).
fn arith(b: &mut FunctionBuilder, op: BinOp, x: Value, y: Value) -> Option<Value> {
    let i = b.ins();
    Some(match op {
        BinOp::FAdd => i.fadd(x, y),
        BinOp::FSub => i.fsub(x, y),
        BinOp::FMul => i.fmul(x, y),
        BinOp::FDiv => i.fdiv(x, y),
        BinOp::IAdd => i.iadd(x, y),
        BinOp::ISub => i.isub(x, y),
        BinOp::IMul => i.imul(x, y),
        BinOp::And => i.band(x, y),
        BinOp::Or => i.bor(x, y),
        BinOp::Xor => i.bxor(x, y),
        BinOp::SMin => i.smin(x, y),
        BinOp::SMax => i.smax(x, y),
        BinOp::UMin => i.umin(x, y),
        BinOp::UMax => i.umax(x, y),
        _ => return None,
    })
}

/// Registers compiled code keeps as variables ([`CHUNKS`] vectors each) rather than in the
/// register file: per-lane variables a loop stores to (their values go round the loop),
/// that are no outputs, in programs without barriers — at most two. (The limit was chosen
/// with 16-lane warps, four vectors a register, a quarter of the machine's sixteen: more
/// made the register allocator spill a loop's values. At 64 lanes a promoted register is
/// sixteen vectors, and the allocator keeps what fits in machine registers and the rest in
/// its spill slots.) Reads by the interpreter's code see them written to the register file
/// first (`materialize`).
fn promoted_registers(code: &Code, outputs: &[u32], uniform: &uniform::Uniform) -> Vec<bool> {
    const MOST: usize = 2;
    let mut out = Vec::new();
    if code.ops.iter().any(|op| matches!(op, Op::Barrier)) {
        return out;
    }
    // Registers some instruction reads or writes as part of a range (texture coordinates,
    // results, local arrays): never promoted.
    let (mut read, mut written) = (Vec::new(), Vec::new());
    for inst in &code.insts {
        liveness::inst_regs(inst, &mut |r, n| read.push((r, n)), &mut |r, n| {
            written.push((r, n))
        });
    }
    let ranged: std::collections::HashSet<u32> = read
        .into_iter()
        .chain(written)
        .filter(|&(_, n)| n > 1)
        .flat_map(|(r, n)| r.0..r.0 + n)
        .collect();
    let mut depth = 0usize;
    let mut chosen = Vec::new();
    for op in &code.ops {
        match *op {
            Op::Loop { .. } => depth += 1,
            Op::LoopEnd => depth -= 1,
            Op::Run { start, len, .. } if depth > 0 => {
                for inst in &code.insts[start as usize..(start + len) as usize] {
                    if let Inst::Store { dst, .. } = *inst
                        && !uniform.is_uniform(dst)
                        && !outputs.contains(&dst.0)
                        && !ranged.contains(&dst.0)
                        && !chosen.contains(&dst.0)
                        && chosen.len() < MOST
                    {
                        chosen.push(dst.0);
                    }
                }
            }
            _ => {}
        }
    }
    for r in chosen {
        if out.len() <= r as usize {
            out.resize(r as usize + 1, false);
        }
        out[r as usize] = true;
    }
    out
}

/// The register an ALU instruction (one `uniform` can find uniform) writes.
fn alu_dst(inst: &Inst) -> Option<Reg> {
    match *inst {
        Inst::Const { dst, .. }
        | Inst::Mov { dst, .. }
        | Inst::Store { dst, .. }
        | Inst::Unary { dst, .. }
        | Inst::Binary { dst, .. }
        | Inst::Ternary { dst, .. } => Some(dst),
        _ => None,
    }
}

/// Register-file accesses: never trapping, but only 4-byte aligned.
fn reg_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// Where mask `i` (`a, b, c, d`) of frame level `k` is saved ([`Cx::frames`]).
fn frame_offset(k: usize, i: usize) -> i32 {
    ((4 * k + i) * MASK_BYTES) as i32
}

fn counter_offset(c: usize) -> i32 {
    (std::mem::offset_of!(Cx, counters) + 8 * c) as i32
}

impl<'a, 'f> Gen<'a, 'f> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        mut b: FunctionBuilder<'f>,
        code: &'a Code,
        ends: &'a [u32],
        uses: &'a liveness::RegUses,
        uniform: &'a uniform::Uniform,
        outputs: &'a [u32],
        ptr: types::Type,
        native: Native,
    ) -> Self {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let cx = b.block_params(entry)[0];
        let flags = MemFlagsData::trusted();
        let regs = b
            .ins()
            .load(ptr, flags, cx, std::mem::offset_of!(Cx, regs) as i32);
        let mask_var = |b: &mut FunctionBuilder, v: Value| {
            let var = b.declare_var(MASK_TY);
            b.def_var(var, v);
            var
        };
        let m = b
            .ins()
            .load(MASK_TY, flags, cx, std::mem::offset_of!(Cx, mask) as i32);
        let mask = mask_var(&mut b, m);
        let h = b
            .ins()
            .load(MASK_TY, flags, cx, std::mem::offset_of!(Cx, helpers) as i32);
        let helpers = mask_var(&mut b, h);
        let no_lanes = b.ins().iconst(MASK_TY, 0);
        let discarded = mask_var(&mut b, no_lanes);
        let counters = std::array::from_fn(|c| {
            let v = b.ins().load(types::I64, flags, cx, counter_offset(c));
            let var = b.declare_var(types::I64);
            b.def_var(var, v);
            var
        });
        let frames: Vec<FrameVars> = (0..code.max_depth as usize + 1)
            .map(|_| FrameVars {
                a: mask_var(&mut b, no_lanes),
                b: mask_var(&mut b, no_lanes),
                c: mask_var(&mut b, no_lanes),
                d: mask_var(&mut b, no_lanes),
            })
            .collect();
        // Every scalar starts defined (as 0): an undefined use cannot happen in code from
        // the front end (uniform registers are written before they are read).
        let zero = b.ins().iconst(types::I32, 0);
        let scalars: Vec<Option<Variable>> = (0..uniform.registers() as u32)
            .map(|r| {
                uniform.is_uniform(Reg(r)).then(|| {
                    let var = b.declare_var(types::I32);
                    b.def_var(var, zero);
                    var
                })
            })
            .collect();
        // Loop-carried per-lane variables kept in machine registers (their chunks read from
        // the register file once, at entry).
        let promoted: Vec<Option<[Variable; CHUNKS]>> = promoted_registers(code, outputs, uniform)
            .into_iter()
            .enumerate()
            .map(|(r, yes)| {
                yes.then(|| {
                    std::array::from_fn(|j| {
                        let var = b.declare_var(types::I32X4);
                        let off = r as i32 * REG_BYTES + 16 * j as i32;
                        let v = b.ins().load(types::I32X4, reg_flags(), regs, off);
                        b.def_var(var, v);
                        var
                    })
                })
            })
            .collect();
        let blocks: Vec<Block> = (0..code.ops.len()).map(|_| b.create_block()).collect();
        let exhausted = b.create_block();
        // Resuming after a barrier: the saved masks and frames, then the op after it.
        let resume = b.ins().load(
            types::I32,
            flags,
            cx,
            std::mem::offset_of!(Cx, resume) as i32,
        );
        let resuming = b.create_block();
        b.ins().brif(resume, resuming, &[], blocks[0], &[]);
        b.seal_block(resuming);
        b.switch_to_block(resuming);
        let saved = b
            .ins()
            .load(ptr, flags, cx, std::mem::offset_of!(Cx, frames) as i32);
        for (var, field) in [
            (mask, std::mem::offset_of!(Cx, mask)),
            (helpers, std::mem::offset_of!(Cx, helpers)),
            (discarded, std::mem::offset_of!(Cx, discarded)),
        ] {
            let v = b.ins().load(MASK_TY, flags, cx, field as i32);
            b.def_var(var, v);
        }
        for (k, f) in frames.iter().enumerate() {
            for (i, var) in [f.a, f.b, f.c, f.d].into_iter().enumerate() {
                let v = b.ins().load(MASK_TY, flags, saved, frame_offset(k, i));
                b.def_var(var, v);
            }
        }
        // Uniform registers a barrier kept were written to the register file (every lane)
        // there; the others are not read after any barrier.
        for r in uniform.kept_anywhere() {
            if let Some(&Some(var)) = scalars.get(r.0 as usize) {
                let v = b
                    .ins()
                    .load(types::I32, reg_flags(), regs, r.0 as i32 * REG_BYTES);
                b.def_var(var, v);
            }
        }
        let mut switch = Switch::new();
        for (pc, op) in code.ops.iter().enumerate() {
            if matches!(op, Op::Barrier) {
                switch.set_entry(pc as u128 + 1, blocks[pc + 1]);
            }
        }
        switch.emit(&mut b, resume, exhausted);
        // Static frame depth before each op.
        let mut depth = Vec::with_capacity(code.ops.len());
        let mut d = 1usize;
        for op in &code.ops {
            depth.push(d);
            match op {
                Op::If { .. } | Op::Loop { .. } | Op::Switch { .. } | Op::Region { .. } => d += 1,
                Op::EndIf | Op::LoopEnd | Op::EndSwitch | Op::EndRegion => d -= 1,
                _ => {}
            }
        }
        let continued = continued_loops(code, &depth);
        Gen {
            b,
            code,
            ends,
            uses,
            scalars,
            promoted,
            uniform,
            outputs,
            ptr,
            native,
            cx,
            regs,
            blocks,
            exhausted,
            mask,
            helpers,
            discarded,
            counters,
            frames,
            depth,
            pc: 0,
            continued,
            cache: HashMap::new(),
            chunks: 0..CHUNKS,
        }
    }

    fn program(mut self, config: cranelift_codegen::isa::TargetFrontendConfig) {
        for pc in 0..self.code.ops.len() {
            self.b.switch_to_block(self.blocks[pc]);
            self.op(pc);
        }
        // Out of budget: hand back the counters, report it.
        self.b.switch_to_block(self.exhausted);
        self.save_counters();
        let one = self.b.ins().iconst(types::I32, 1);
        self.b.ins().return_(&[one]);
        self.b.seal_all_blocks();
        self.b.finalize(config);
    }

    fn save_counters(&mut self) {
        for c in 0..LIVE_COUNTERS {
            let v = self.b.use_var(self.counters[c]);
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, self.cx, counter_offset(c));
        }
    }

    fn next(&mut self, pc: usize) {
        self.b.ins().jump(self.blocks[pc + 1], &[]);
    }

    /// Continues at `target` when `v == 0`, else at `pc + 1`.
    fn branch_if_zero(&mut self, v: Value, target: u32, pc: usize) {
        let (t, n) = (self.blocks[target as usize], self.blocks[pc + 1]);
        self.b.ins().brif(v, n, &[], t, &[]);
    }

    /// After the op at `pc`: to the innermost frame's end if the mask is empty, else on.
    fn skip_if_empty(&mut self, pc: usize) {
        let m = self.b.use_var(self.mask);
        self.branch_if_zero(m, self.ends[pc], pc);
    }

    fn add_counter(&mut self, c: Counter, v: Value) {
        let k = c as usize;
        if k < LIVE_COUNTERS {
            let old = self.b.use_var(self.counters[k]);
            let new = self.b.ins().iadd(old, v);
            self.b.def_var(self.counters[k], new);
        } else {
            let flags = MemFlagsData::trusted();
            let old = self
                .b
                .ins()
                .load(types::I64, flags, self.cx, counter_offset(k));
            let new = self.b.ins().iadd(old, v);
            self.b.ins().store(flags, new, self.cx, counter_offset(k));
        }
    }

    fn add_counter_imm(&mut self, c: Counter, n: i64) {
        if n != 0 {
            let v = self.b.ins().iconst(types::I64, n);
            self.add_counter(c, v);
        }
    }

    /// `warp::issue_run`: `len` instructions of the given classes under the current mask.
    /// The budget is taken without a check: [`Gen::check_budget`] runs at every loop's
    /// back edge, at barriers and at the end, so a runaway program stops within one
    /// iteration of overspending, and a program that overspent anywhere fails just as it
    /// does on the interpreter (spending only grows).
    fn issue(&mut self, len: u32, classes: &[u32; 5]) {
        let budget = self.b.use_var(self.counters[Counter::Budget as usize]);
        let rest = self.b.ins().iadd_imm_s(budget, -(len as i64));
        self.b
            .def_var(self.counters[Counter::Budget as usize], rest);
        if !self.uniform.uniform_control(self.pc) {
            let m = self.b.use_var(self.mask);
            let lanes = self.b.ins().popcnt(m);
            let lanes = self.b.ins().imul_imm_s(lanes, len as i64);
            self.add_counter(Counter::ActiveLanes, lanes);
            self.add_counter_imm(Counter::DivergentIssued, len as i64);
        }
        let classes_in_order = [
            (Class::Transcendental, Counter::Transcendental),
            (Class::Memory, Counter::Memory),
            (Class::Texture, Counter::Texture),
            (Class::Control, Counter::Control),
        ];
        for (class, counter) in classes_in_order {
            self.add_counter_imm(counter, classes[class as usize] as i64);
        }
    }

    /// Leaves to the exhausted block when the budget is overspent (below zero: `run`
    /// starts it at most 2⁶², far above anything one call can overspend).
    fn check_budget(&mut self) {
        let budget = self.b.use_var(self.counters[Counter::Budget as usize]);
        let over = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, budget, 0);
        let ok = self.b.create_block();
        self.b.ins().brif(over, self.exhausted, &[], ok, &[]);
        self.b.seal_block(ok);
        self.b.switch_to_block(ok);
    }

    fn issue_control(&mut self, n: u32) {
        let mut classes = [0; 5];
        classes[Class::Control as usize] = n;
        self.issue(n, &classes);
    }

    /// Counts a divergent branch of a branch on register `r` when `cond` is set (never,
    /// when `r` is uniform: all lanes go one way).
    fn count_divergent_on(&mut self, r: Reg, cond: Value) {
        if self.scalar_var(r).is_none() {
            self.count_divergent(cond);
        }
    }

    /// Counts a divergent branch when `cond` (an i8/i32 0/1 value) is set.
    fn count_divergent(&mut self, cond: Value) {
        let c = self.b.ins().uextend(types::I64, cond);
        self.add_counter(Counter::Divergent, c);
    }

    fn frame(&self, pc: usize) -> FrameVars {
        self.frames[self.depth[pc] - 1]
    }

    /// Pushes a frame for the construct opening at `pc`: its variables reset, then set.
    fn push_frame(&mut self, pc: usize, a: Value, b: Value, c: Value, d: Value) {
        let f = self.frames[self.depth[pc]];
        self.b.def_var(f.a, a);
        self.b.def_var(f.b, b);
        self.b.def_var(f.c, c);
        self.b.def_var(f.d, d);
    }

    /// Every active lane leaves for frame `frame` (joins its lanes that broke out or
    /// returned); none is left active.
    fn leave_all(&mut self, frame: u32) {
        let f = self.frames[frame as usize];
        let m = self.b.use_var(self.mask);
        let a = self.b.use_var(f.a);
        let a = self.b.ins().bor(a, m);
        self.b.def_var(f.a, a);
        let z = self.zero();
        self.b.def_var(self.mask, z);
    }

    /// The empty lane mask.
    fn zero(&mut self) -> Value {
        self.b.ins().iconst(MASK_TY, 0)
    }

    fn op(&mut self, pc: usize) {
        let code = self.code;
        self.pc = pc;
        // Values cached by an earlier op live in blocks that need not dominate this one.
        self.cache.clear();
        match code.ops[pc] {
            Op::Run {
                start,
                len,
                ref classes,
            } => {
                self.issue(len, classes);
                self.run(start as usize, len as usize);
                self.next(pc);
            }
            Op::Barrier => {
                // Issue it, save the control state, stop; the next call resumes at pc + 1.
                self.issue_control(1);
                self.check_budget();
                self.save_counters();
                for &r in self.uniform.kept_across(pc) {
                    self.materialize(r);
                }
                let flags = MemFlagsData::trusted();
                let saved = self.b.ins().load(
                    self.ptr,
                    flags,
                    self.cx,
                    std::mem::offset_of!(Cx, frames) as i32,
                );
                for k in 0..self.depth[pc] {
                    let f = self.frames[k];
                    for (i, var) in [f.a, f.b, f.c, f.d].into_iter().enumerate() {
                        let v = self.b.use_var(var);
                        self.b.ins().store(flags, v, saved, frame_offset(k, i));
                    }
                }
                for (var, field) in [
                    (self.mask, std::mem::offset_of!(Cx, mask)),
                    (self.helpers, std::mem::offset_of!(Cx, helpers)),
                    (self.discarded, std::mem::offset_of!(Cx, discarded)),
                ] {
                    let v = self.b.use_var(var);
                    self.b.ins().store(flags, v, self.cx, field as i32);
                }
                let next = self.b.ins().iconst(types::I32, pc as i64 + 1);
                self.b.ins().store(
                    flags,
                    next,
                    self.cx,
                    std::mem::offset_of!(Cx, resume) as i32,
                );
                let two = self.b.ins().iconst(types::I32, 2);
                self.b.ins().return_(&[two]);
            }
            Op::If { cond, else_pc, .. } => {
                self.issue_control(1);
                let c = self.cond_mask(cond);
                let m = self.b.use_var(self.mask);
                let t = self.b.ins().band(m, c);
                let e = self.b.ins().band_not(m, c);
                let t_any = self.b.ins().icmp_imm_s(IntCC::NotEqual, t, 0);
                let e_any = self.b.ins().icmp_imm_s(IntCC::NotEqual, e, 0);
                let both = self.b.ins().band(t_any, e_any);
                self.count_divergent_on(cond, both);
                let z = self.zero();
                self.push_frame(pc, z, e, z, z);
                self.b.def_var(self.mask, t);
                self.branch_if_zero(t, else_pc, pc);
            }
            Op::Else { end_pc } => {
                let f = self.frame(pc);
                let m = self.b.use_var(self.mask);
                self.b.def_var(f.c, m);
                let rb = self.b.use_var(f.b);
                self.b.def_var(self.mask, rb);
                self.branch_if_zero(rb, end_pc, pc);
            }
            Op::EndIf => {
                let f = self.frame(pc);
                let m = self.b.use_var(self.mask);
                let c = self.b.use_var(f.c);
                let m = self.b.ins().bor(m, c);
                self.b.def_var(self.mask, m);
                self.skip_if_empty(pc);
            }
            Op::Loop { .. } => {
                self.issue_control(2);
                let m = self.b.use_var(self.mask);
                let z = self.zero();
                self.push_frame(pc, z, z, m, z);
                self.next(pc);
            }
            Op::Continuing { end_pc, .. } if !self.continued[pc] => {
                // No `continue` leaves for this loop: no lanes wait to rejoin, the mask
                // stays the same value (loop-invariant, when nothing else changes it).
                let m = self.b.use_var(self.mask);
                self.branch_if_zero(m, end_pc, pc);
            }
            Op::Continuing { end_pc, .. } => {
                let f = self.frame(pc);
                let m = self.b.use_var(self.mask);
                let fb = self.b.use_var(f.b);
                let m = self.b.ins().bor(m, fb);
                self.b.def_var(self.mask, m);
                self.branch_if_zero(m, end_pc, pc);
            }
            Op::LoopBack {
                break_if, body_pc, ..
            } => {
                let f = self.frame(pc);
                if let Some(r) = break_if {
                    let c = self.cond_mask(r);
                    let m = self.b.use_var(self.mask);
                    let leaving = self.b.ins().band(m, c);
                    let a = self.b.use_var(f.a);
                    let a = self.b.ins().bor(a, leaving);
                    self.b.def_var(f.a, a);
                    let m = self.b.ins().band_not(m, c);
                    self.b.def_var(self.mask, m);
                }
                let m = self.b.use_var(self.mask);
                let again = self.b.create_block();
                self.b.ins().brif(m, again, &[], self.blocks[pc + 1], &[]);
                self.b.seal_block(again);
                self.b.switch_to_block(again);
                if !self.uniform.uniform_control(pc) {
                    // (Under uniform control every iteration starts with the same lanes.)
                    let started = self.b.use_var(f.c);
                    let split = self.b.ins().icmp(IntCC::NotEqual, m, started);
                    self.count_divergent(split);
                }
                let z = self.zero();
                self.b.def_var(f.b, z);
                self.b.def_var(f.c, m);
                self.issue_control(1);
                self.check_budget();
                self.b.ins().jump(self.blocks[body_pc as usize], &[]);
            }
            Op::LoopEnd => {
                let f = self.frame(pc);
                let a = self.b.use_var(f.a);
                self.b.def_var(self.mask, a);
                self.skip_if_empty(pc);
            }
            Op::Switch {
                selector,
                ref values,
            } => {
                self.issue_control(1);
                let m = self.b.use_var(self.mask);
                let mut matched = self.zero();
                let mut targets = self.b.ins().iconst(types::I32, 0);
                for &v in values.iter() {
                    let mm = self.eq_mask(selector, v);
                    let new = self.b.ins().band_not(mm, matched);
                    let new = self.b.ins().band(m, new);
                    let hit = self.b.ins().icmp_imm_s(IntCC::NotEqual, new, 0);
                    let hit = self.b.ins().uextend(types::I32, hit);
                    targets = self.b.ins().iadd(targets, hit);
                    matched = self.b.ins().bor(matched, mm);
                }
                let rest = self.b.ins().band_not(m, matched);
                let hit = self.b.ins().icmp_imm_s(IntCC::NotEqual, rest, 0);
                let hit = self.b.ins().uextend(types::I32, hit);
                targets = self.b.ins().iadd(targets, hit);
                let split = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThan, targets, 1);
                self.count_divergent_on(selector, split);
                let z = self.zero();
                self.push_frame(pc, z, m, matched, z);
                self.b.def_var(self.mask, z);
                self.next(pc);
            }
            Op::Case {
                selector,
                value,
                next_pc,
                ..
            } => {
                let f = self.frame(pc);
                let entry = match value {
                    Some(v) => self.eq_mask(selector, v),
                    None => {
                        let c = self.b.use_var(f.c);
                        self.b.ins().bnot(c)
                    }
                };
                let fb = self.b.use_var(f.b);
                let add = self.b.ins().band(fb, entry);
                let m = self.b.use_var(self.mask);
                let m = self.b.ins().bor(m, add);
                self.b.def_var(self.mask, m);
                self.branch_if_zero(m, next_pc, pc);
            }
            Op::CaseEnd { fall_through } => {
                if !fall_through {
                    let f = self.frame(pc);
                    let m = self.b.use_var(self.mask);
                    let d = self.b.use_var(f.d);
                    let d = self.b.ins().bor(d, m);
                    self.b.def_var(f.d, d);
                    let z = self.zero();
                    self.b.def_var(self.mask, z);
                }
                self.next(pc);
            }
            Op::EndSwitch => {
                let f = self.frame(pc);
                let m = self.b.use_var(self.mask);
                let d = self.b.use_var(f.d);
                let a = self.b.use_var(f.a);
                let m = self.b.ins().bor(m, d);
                let m = self.b.ins().bor(m, a);
                self.b.def_var(self.mask, m);
                self.skip_if_empty(pc);
            }
            Op::Region { .. } => {
                self.issue_control(1);
                let z = self.zero();
                self.push_frame(pc, z, z, z, z);
                self.next(pc);
            }
            Op::EndRegion => {
                let f = self.frame(pc);
                let m = self.b.use_var(self.mask);
                let a = self.b.use_var(f.a);
                let m = self.b.ins().bor(m, a);
                self.b.def_var(self.mask, m);
                self.skip_if_empty(pc);
            }
            Op::Break { frame } | Op::Return { frame } => {
                self.issue_control(1);
                self.leave_all(frame);
                self.b.ins().jump(self.blocks[self.ends[pc] as usize], &[]);
            }
            Op::BreakUnless { cond, frame } if self.scalar_var(cond).is_some() => {
                // A uniform exit test: all lanes stay (the mask is unchanged) or all leave.
                self.issue_control(1);
                let x = self.scalar(cond);
                let leave = self.b.create_block();
                self.b.ins().brif(x, self.blocks[pc + 1], &[], leave, &[]);
                self.b.seal_block(leave);
                self.b.switch_to_block(leave);
                self.leave_all(frame);
                // With no lanes left, a `Continuing` no `continue` leaves for passes
                // straight on to its loop's end: go there (the body's end then is the only
                // way into the `Continuing`, so the mask stays one value through the loop).
                let mut target = self.ends[pc] as usize;
                while let Op::Continuing { end_pc, .. } = self.code.ops[target]
                    && !self.continued[target]
                {
                    target = end_pc as usize;
                }
                self.b.ins().jump(self.blocks[target], &[]);
            }
            Op::BreakUnless { cond, frame } => {
                self.issue_control(1);
                let c = self.cond_mask(cond);
                let m = self.b.use_var(self.mask);
                let leaving = self.b.ins().band_not(m, c);
                let staying = self.b.ins().band(m, c);
                let l_any = self.b.ins().icmp_imm_s(IntCC::NotEqual, leaving, 0);
                let s_any = self.b.ins().icmp_imm_s(IntCC::NotEqual, staying, 0);
                let split = self.b.ins().band(l_any, s_any);
                self.count_divergent_on(cond, split);
                let f = self.frames[frame as usize];
                let a = self.b.use_var(f.a);
                let a = self.b.ins().bor(a, leaving);
                self.b.def_var(f.a, a);
                self.b.def_var(self.mask, staying);
                // With no lane leaving the mask is unchanged (and not empty).
                self.skip_if_empty(pc);
            }
            Op::Continue { frame } => {
                self.issue_control(1);
                let f = self.frames[frame as usize];
                let m = self.b.use_var(self.mask);
                let fb = self.b.use_var(f.b);
                let fb = self.b.ins().bor(fb, m);
                self.b.def_var(f.b, fb);
                let z = self.zero();
                self.b.def_var(self.mask, z);
                self.b.ins().jump(self.blocks[self.ends[pc] as usize], &[]);
            }
            Op::Kill => {
                self.issue_control(1);
                let m = self.b.use_var(self.mask);
                let d = self.b.use_var(self.discarded);
                let d = self.b.ins().bor(d, m);
                self.b.def_var(self.discarded, d);
                let h = self.b.use_var(self.helpers);
                let h = self.b.ins().bor(h, m);
                self.b.def_var(self.helpers, h);
                self.next(pc);
            }
            Op::End => {
                self.check_budget();
                for &r in self.outputs {
                    self.materialize(Reg(r));
                }
                self.save_counters();
                let d = self.b.use_var(self.discarded);
                self.b.ins().store(
                    MemFlagsData::trusted(),
                    d,
                    self.cx,
                    std::mem::offset_of!(Cx, discarded) as i32,
                );
                let finished = self.b.ins().iconst(types::I32, 0);
                self.b.ins().return_(&[finished]);
            }
        }
    }
}
