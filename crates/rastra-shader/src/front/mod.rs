//! naga IR → rastra IR lowering: the shader compiler of the shader cores (T3 shader units,
//! ATTILA unified shaders).
//!
//! Split by concern: [`types`] (register and memory layout), `expr` (expressions, pointers,
//! buffer and workgroup loads), `math` (builtin functions, lowered to scalar ops), `stmt`
//! (statements, structured control flow, call inlining, stores, atomics, barriers),
//! `subgroup` (subgroup and quad operations), `texture` (texture-unit requests), `io`
//! (entry-point interface and bindings).
//!
//! Every function call is inlined into a [`Node::Region`]; each inlined instance gets fresh
//! registers. A function's expressions that no `Emit` covers (literals, constants, arguments,
//! variables, constant-folded composites) are lowered in a prologue at the top of its region;
//! module-scope constants, overrides and private variables are lowered once into a program
//! prologue.
//!
//! A second front end (rastra's own SPIR-V reader for the geometry and tessellation stages
//! naga lacks) feeds the same IR: it must produce a [`crate::Program`] whose `code` keeps the
//! IR invariants in [`crate::ir`] (structured control flow only — SPIR-V's merge/continue
//! blocks map to `If`/`Loop`/`Switch`; every call inlined into a `Region`; registers
//! allocated densely, inputs then outputs first), describe its interface with `IoVar`s and
//! `BindingVar`s, address memory through `Mem` (byte offsets in WGSL/std430 layout for
//! buffers, one word per scalar for workgroup memory), and then lay the code out with
//! `simt::Code::new` (the only derived field). Nothing below this module depends on naga.

mod expr;
mod io;
mod math;
mod stmt;
mod subgroup;
mod texture;
mod types;

use std::collections::HashMap;

use naga::{Expression, Handle};

use crate::ir::{BinOp, Block, Inst, Mem, Node, Reg, TerOp, UnOp};
use crate::{BindingVar, CompileError};

pub(crate) use io::lower_entry_point;

/// What an expression lowered to.
#[derive(Clone, Debug)]
enum Value {
    /// Not lowered (yet).
    Undef,
    /// A value in `words` consecutive registers. Never written again after definition.
    Regs { first: Reg, words: u32 },
    /// A pointer (resolved at lowering time).
    Ptr(Ptr),
    /// A sampled texture: its index in `Program::textures`.
    Texture(u32),
    /// A sampler: its index in `Program::samplers`.
    Sampler(u32),
    /// A storage texture: its index in `Program::storage_textures`.
    Image(u32),
    /// A handle-typed value rastra cannot use yet (external textures…); names the construct.
    Opaque(&'static str),
}

/// Where a pointer points.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// A variable in registers `base..base + len`. Offsets count registers.
    Regs { base: Reg, len: u32 },
    /// Memory: a buffer binding (WGSL host-shareable layout) or workgroup memory (one word
    /// per scalar, register order). Offsets count bytes.
    Mem(Mem),
}

#[derive(Clone, Copy, Debug)]
struct Ptr {
    place: Place,
    /// Static offset (registers or bytes, see [`Place`]).
    off: u32,
    /// Dynamic offset added to `off`, per lane.
    dynoff: Option<Reg>,
}

/// Where an expression's type comes from.
#[derive(Clone, Copy)]
enum TySource<'m> {
    Func(&'m naga::valid::FunctionInfo),
    Global,
}

/// The lowering state of one inlined function instance (or of the module-scope expressions).
struct Scope<'m> {
    exprs: &'m naga::Arena<Expression>,
    tys: TySource<'m>,
    values: Vec<Value>,
    args: Vec<Value>,
    locals: Vec<Ptr>,
    /// Registers `Return` stores the result into.
    result: Option<(Reg, u32)>,
}

struct Lowerer<'m> {
    module: &'m naga::Module,
    info: &'m naga::valid::ModuleInfo,
    next_reg: u32,
    /// The block instructions are currently appended to.
    out: Block,
    /// Program prologue: module-scope constants, overrides, private variables.
    global_code: Block,
    global_scope: Option<Scope<'m>>,
    privates: HashMap<Handle<naga::GlobalVariable>, Ptr>,
    /// Byte offsets of the workgroup variables placed so far in workgroup memory.
    workgroup_vars: HashMap<Handle<naga::GlobalVariable>, u32>,
    /// Bytes of workgroup memory allocated.
    workgroup_bytes: u32,
    /// Code run once at program start: builtins computed rather than supplied by the
    /// pipeline (`subgroup_size`, `subgroup_invocation_id`).
    entry_code: Block,
    /// Buffer globals in slot order.
    slots: Vec<(Handle<naga::GlobalVariable>, BindingVar)>,
    /// Sampled-texture globals in slot order.
    textures: Vec<(Handle<naga::GlobalVariable>, crate::TextureVar)>,
    /// Sampler globals in slot order.
    samplers: Vec<(Handle<naga::GlobalVariable>, crate::SamplerVar)>,
    /// Storage-texture globals in slot order.
    images: Vec<(Handle<naga::GlobalVariable>, crate::StorageTextureVar)>,
    uses_derivatives: bool,
    uses_discard: bool,
    scratch: Vec<u32>,
    /// Function calls inlined so far: every call is inlined, so a program of small functions
    /// calling each other twice could grow exponentially without this bound.
    inlined_calls: u32,
}

/// Most function calls one program may inline.
const MAX_INLINED_CALLS: u32 = 1 << 16;

/// Most registers one program may use (a warp's register file is 64 bytes per register).
const MAX_REGISTERS: u32 = 1 << 18;

/// Most bytes of workgroup memory one program may use (WebGPU's limit is 16 KiB).
const MAX_WORKGROUP_BYTES: u32 = 1 << 20;

type R<T> = Result<T, CompileError>;

fn internal<T>(what: &str) -> R<T> {
    Err(CompileError::Unsupported(format!(
        "internal lowering error: {what}"
    )))
}

impl<'m> Lowerer<'m> {
    fn alloc(&mut self, n: u32) -> R<Reg> {
        let r = Reg(self.next_reg);
        self.next_reg = self
            .next_reg
            .checked_add(n)
            .filter(|&t| t <= MAX_REGISTERS)
            .map_or_else(|| types::unsupported("more than 2^18 registers"), Ok)?;
        Ok(r)
    }

    fn emit(&mut self, inst: Inst) {
        self.out.push(Node::Inst(inst));
    }

    fn konst(&mut self, value: u32) -> R<Reg> {
        let dst = self.alloc(1)?;
        self.emit(Inst::Const { dst, value });
        Ok(dst)
    }

    fn un(&mut self, op: UnOp, a: Reg) -> R<Reg> {
        let dst = self.alloc(1)?;
        self.emit(Inst::Unary { op, dst, a });
        Ok(dst)
    }

    fn bin(&mut self, op: BinOp, a: Reg, b: Reg) -> R<Reg> {
        let dst = self.alloc(1)?;
        self.emit(Inst::Binary { op, dst, a, b });
        Ok(dst)
    }

    fn ter(&mut self, op: TerOp, a: Reg, b: Reg, c: Reg) -> R<Reg> {
        let dst = self.alloc(1)?;
        self.emit(Inst::Ternary { op, dst, a, b, c });
        Ok(dst)
    }

    /// Copies `words` registers from `src` into fresh consecutive registers.
    fn copy(&mut self, src: &[Reg]) -> R<Reg> {
        let first = self.alloc(src.len() as u32)?;
        for (k, &s) in src.iter().enumerate() {
            self.emit(Inst::Mov {
                dst: first.offset(k as u32),
                src: s,
            });
        }
        Ok(first)
    }

    /// Lowers `block` into a fresh IR block.
    fn nested<F>(&mut self, f: F) -> R<Block>
    where
        F: FnOnce(&mut Self) -> R<()>,
    {
        let saved = std::mem::take(&mut self.out);
        let r = f(self);
        let block = std::mem::replace(&mut self.out, saved);
        r.map(|()| block)
    }

    /// Type of expression `h` in `scope`.
    fn ty(&self, scope: &Scope<'m>, h: Handle<Expression>) -> &'m naga::TypeInner {
        match scope.tys {
            TySource::Func(fi) => fi[h].ty.inner_with(&self.module.types),
            TySource::Global => self.info[h].inner_with(&self.module.types),
        }
    }

    /// Lowers module-scope expression `h` into the program prologue (once).
    fn global_value(&mut self, h: Handle<Expression>) -> R<Value> {
        let Some(mut gs) = self.global_scope.take() else {
            return internal("reentrant global expression");
        };
        let saved_out = std::mem::replace(&mut self.out, std::mem::take(&mut self.global_code));
        let r = self.global_expr(&mut gs, h);
        self.global_code = std::mem::replace(&mut self.out, saved_out);
        self.global_scope = Some(gs);
        r
    }

    /// Lowers a module-scope expression (operands first, on demand) in the global scope.
    fn global_expr(&mut self, gs: &mut Scope<'m>, h: Handle<Expression>) -> R<Value> {
        if !matches!(gs.values[h.index()], Value::Undef) {
            return Ok(gs.values[h.index()].clone());
        }
        let mut operands = Vec::new();
        self.module.global_expressions[h].operands(&mut operands);
        for o in operands {
            self.global_expr(gs, o)?;
        }
        let v = self.expr(gs, h)?;
        gs.values[h.index()] = v.clone();
        Ok(v)
    }
}

/// Operands of an expression that must be lowered before it (module-scope expressions).
trait Operands {
    fn operands(&self, out: &mut Vec<Handle<Expression>>);
}

impl Operands for Expression {
    fn operands(&self, out: &mut Vec<Handle<Expression>>) {
        match *self {
            Expression::Compose { ref components, .. } => out.extend(components.iter().copied()),
            Expression::Access { base, index } => out.extend([base, index]),
            Expression::AccessIndex { base, .. } => out.push(base),
            Expression::Splat { value, .. } => out.push(value),
            Expression::Swizzle { vector, .. } => out.push(vector),
            Expression::Unary { expr, .. } => out.push(expr),
            Expression::Binary { left, right, .. } => out.extend([left, right]),
            Expression::Select {
                condition,
                accept,
                reject,
            } => out.extend([condition, accept, reject]),
            Expression::Relational { argument, .. } => out.push(argument),
            Expression::Math {
                arg,
                arg1,
                arg2,
                arg3,
                ..
            } => out.extend([Some(arg), arg1, arg2, arg3].into_iter().flatten()),
            Expression::As { expr, .. } => out.push(expr),
            _ => {}
        }
    }
}
