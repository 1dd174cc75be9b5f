//! Statement lowering: structured control flow (if, switch with fall-through, loop with
//! continuing and break-if, break, continue, return, discard), stores, and inlining of every
//! function call into a region (T3 shader units: the structured control flow a SIMT core turns
//! into execution masks).

use naga::{Expression, Handle, Statement, TypeInner};

use super::types::{self, Kind, unsupported};
use super::{Lowerer, Place, Ptr, R, Scope, TySource, Value, internal};
use crate::ir::{AtomicOp, Case, Inst, Node, Reg};

impl<'m> Lowerer<'m> {
    /// Lowers one function instance (prologue + body) into the current block. `args` are the
    /// argument values; `Return` stores into `result`.
    pub(super) fn function(
        &mut self,
        func: &'m naga::Function,
        finfo: &'m naga::valid::FunctionInfo,
        args: Vec<Value>,
        result: Option<(Reg, u32)>,
    ) -> R<()> {
        let n = func.expressions.len();
        let mut scope = Scope {
            exprs: &func.expressions,
            tys: TySource::Func(finfo),
            values: vec![Value::Undef; n],
            args,
            locals: Vec::new(),
            result,
        };
        let mut covered = vec![false; n];
        mark_emitted(&func.body, &mut covered);
        // naga's WGSL front end also emits the constant initialisers of local variables, but
        // the variables are initialised on entry: lower those (constant) trees in the prologue.
        for (_, lv) in func.local_variables.iter() {
            if let Some(init) = lv.init {
                uncover_constant_tree(&func.expressions, init, &mut covered);
            }
        }

        for (_, lv) in func.local_variables.iter() {
            let len = types::words(self.module, &self.module.types[lv.ty].inner)?;
            let base = self.alloc(len)?;
            scope.locals.push(Ptr {
                place: Place::Regs { base, len },
                off: 0,
                dynoff: None,
            });
        }
        // Prologue: expressions no `Emit` covers, in arena order (operands come first).
        for (h, e) in func.expressions.iter() {
            if covered[h.index()] || defined_by_statement(e) {
                continue;
            }
            let v = self.expr(&mut scope, h)?;
            scope.values[h.index()] = v;
        }
        // Local variables: their constant initialiser or zero, each time the function runs.
        for (i, (_, lv)) in func.local_variables.iter().enumerate() {
            let Place::Regs { base, len } = scope.locals[i].place else {
                return internal("local variable place");
            };
            match lv.init {
                Some(init) => {
                    let (src, words) = self.regs(&scope, init)?;
                    for k in 0..words.min(len) {
                        self.emit(Inst::Mov {
                            dst: base.offset(k),
                            src: src.offset(k),
                        });
                    }
                }
                None => {
                    for k in 0..len {
                        self.emit(Inst::Const {
                            dst: base.offset(k),
                            value: 0,
                        });
                    }
                }
            }
        }
        self.block(&mut scope, &func.body)
    }

    fn block(&mut self, scope: &mut Scope<'m>, block: &'m naga::Block) -> R<()> {
        for stmt in block.iter() {
            self.statement(scope, stmt)?;
        }
        Ok(())
    }

    fn statement(&mut self, scope: &mut Scope<'m>, stmt: &'m Statement) -> R<()> {
        match *stmt {
            Statement::Emit(ref range) => {
                for h in range.clone() {
                    // Constant initialisers were already lowered in the prologue.
                    if matches!(scope.values[h.index()], Value::Undef) {
                        let v = self.expr(scope, h)?;
                        scope.values[h.index()] = v;
                    }
                }
            }
            Statement::Block(ref b) => self.block(scope, b)?,
            Statement::If {
                condition,
                ref accept,
                ref reject,
            } => {
                let cond = self.reg1(scope, condition)?;
                let accept = self.nested(|lw| lw.block(scope, accept))?;
                let reject = self.nested(|lw| lw.block(scope, reject))?;
                self.out.push(Node::If {
                    cond,
                    accept,
                    reject,
                });
            }
            Statement::Switch {
                selector,
                ref cases,
            } => {
                let selector = self.reg1(scope, selector)?;
                let mut out = Vec::with_capacity(cases.len());
                for case in cases {
                    let value = match case.value {
                        naga::SwitchValue::I32(v) => Some(v as u32),
                        naga::SwitchValue::U32(v) => Some(v),
                        naga::SwitchValue::Default => None,
                    };
                    let body = self.nested(|lw| lw.block(scope, &case.body))?;
                    out.push(Case {
                        value,
                        body,
                        fall_through: case.fall_through,
                    });
                }
                self.out.push(Node::Switch {
                    selector,
                    cases: out,
                });
            }
            Statement::Loop {
                ref body,
                ref continuing,
                break_if,
            } => {
                let body = self.nested(|lw| lw.block(scope, body))?;
                let mut cond = None;
                let continuing = self.nested(|lw| {
                    lw.block(scope, continuing)?;
                    if let Some(b) = break_if {
                        cond = Some(lw.reg1(scope, b)?);
                    }
                    Ok(())
                })?;
                self.out.push(Node::Loop {
                    body,
                    continuing,
                    break_if: cond,
                });
            }
            Statement::Break => self.out.push(Node::Break),
            Statement::Continue => self.out.push(Node::Continue),
            Statement::Return { value } => {
                if let (Some(v), Some((dst, words))) = (value, scope.result) {
                    let (src, n) = self.regs(scope, v)?;
                    for k in 0..n.min(words) {
                        self.emit(Inst::Store {
                            dst: dst.offset(k),
                            src: src.offset(k),
                        });
                    }
                }
                self.out.push(Node::Return);
            }
            Statement::Kill => {
                self.uses_discard = true;
                self.out.push(Node::Kill);
            }
            Statement::Store { pointer, value } => {
                let ptr = self.ptr(scope, pointer)?;
                let (src, words) = self.regs(scope, value)?;
                let ty = self.ty(scope, value);
                self.store(ptr, ty, src, words)?;
            }
            Statement::Call {
                function,
                ref arguments,
                result,
            } => {
                self.inlined_calls += 1;
                if self.inlined_calls > super::MAX_INLINED_CALLS {
                    return unsupported(
                        "more than 65536 inlined function calls (the program is too large once \
                         every call is inlined)",
                    );
                }
                let callee = &self.module.functions[function];
                let finfo = &self.info[function];
                let mut args = Vec::with_capacity(arguments.len());
                for &a in arguments {
                    args.push(self.get(scope, a)?);
                }
                let res = match callee.result {
                    Some(ref r) => {
                        let words = types::words(self.module, &self.module.types[r.ty].inner)?;
                        Some((self.alloc(words)?, words))
                    }
                    None => None,
                };
                let region = self.nested(|lw| lw.function(callee, finfo, args, res))?;
                self.out.push(Node::Region(region));
                if let (Some(h), Some((first, words))) = (result, res) {
                    scope.values[h.index()] = Value::Regs { first, words };
                }
            }
            // A workgroup's warps run on one thread, so memory barriers order nothing more;
            // a subgroup is a warp, which runs in lockstep.
            Statement::ControlBarrier(b) => {
                if b.intersects(
                    naga::Barrier::WORK_GROUP | naga::Barrier::STORAGE | naga::Barrier::TEXTURE,
                ) {
                    self.emit(Inst::Barrier);
                }
            }
            Statement::MemoryBarrier(_) => {}
            Statement::ImageStore {
                image,
                coordinate,
                array_index,
                value,
            } => self.image_store(scope, image, coordinate, array_index, value)?,
            Statement::ImageAtomic { .. } => return unsupported("texture atomics"),
            Statement::Atomic {
                pointer,
                ref fun,
                value,
                result,
            } => self.atomic(scope, pointer, fun, value, result)?,
            Statement::WorkGroupUniformLoad { pointer, result } => {
                // WGSL: a workgroup barrier, the load, and another barrier (so no invocation
                // overwrites the value before every invocation has read it).
                self.emit(Inst::Barrier);
                let v = self.load(scope, result, pointer)?;
                scope.values[result.index()] = v;
                self.emit(Inst::Barrier);
            }
            Statement::RayQuery { .. } | Statement::RayPipelineFunction(_) => {
                return unsupported("ray tracing");
            }
            Statement::SubgroupBallot { result, predicate } => {
                let pred = match predicate {
                    Some(p) => self.reg1(scope, p)?,
                    None => self.konst(1)?,
                };
                let dst = self.alloc(4)?;
                self.emit(Inst::Ballot { dst, pred });
                scope.values[result.index()] = Value::Regs {
                    first: dst,
                    words: 4,
                };
            }
            Statement::SubgroupGather {
                mode,
                argument,
                result,
            } => {
                let v = self.subgroup_gather(scope, mode, argument)?;
                scope.values[result.index()] = v;
            }
            Statement::SubgroupCollectiveOperation {
                op,
                collective_op,
                argument,
                result,
            } => {
                let v = self.subgroup_collective(scope, op, collective_op, argument)?;
                scope.values[result.index()] = v;
            }
            Statement::CooperativeStore { .. } => return unsupported("cooperative matrices"),
        }
        Ok(())
    }

    /// Stores `words` registers of a `ty` value from `src` through `ptr`, on active lanes only
    /// (and, in memory, only for lanes allowed side effects).
    pub(super) fn store(&mut self, ptr: Ptr, ty: &TypeInner, src: Reg, words: u32) -> R<()> {
        match ptr.place {
            Place::Regs { base, len } => {
                for k in 0..words {
                    let inst = match ptr.dynoff {
                        None => Inst::Store {
                            dst: base.offset((ptr.off + k).min(len - 1)),
                            src: src.offset(k),
                        },
                        Some(index) => Inst::StoreIndexed {
                            base,
                            len,
                            index,
                            add: ptr.off + k,
                            src: src.offset(k),
                        },
                    };
                    self.emit(inst);
                }
                Ok(())
            }
            Place::Mem(mem) => {
                let mut leaves = std::mem::take(&mut self.scratch);
                leaves.clear();
                let r = self.mem_leaves(mem, ty, &mut leaves);
                if r.is_ok() && leaves.len() as u32 != words {
                    return internal("memory layout does not match register layout");
                }
                for (k, &leaf) in leaves.iter().enumerate() {
                    self.emit(Inst::StoreMem {
                        mem,
                        offset: ptr.dynoff,
                        add: ptr.off + leaf,
                        src: src.offset(k as u32),
                    });
                }
                self.scratch = leaves;
                r
            }
        }
    }

    /// `atomicAdd` … `atomicCompareExchangeWeak` (naga `Statement::Atomic`).
    fn atomic(
        &mut self,
        scope: &mut Scope<'m>,
        pointer: Handle<Expression>,
        fun: &naga::AtomicFunction,
        value: Handle<Expression>,
        result: Option<Handle<Expression>>,
    ) -> R<()> {
        use naga::AtomicFunction as F;
        let ptr = self.ptr(scope, pointer)?;
        let Place::Mem(mem) = ptr.place else {
            return internal("atomic outside memory");
        };
        let k = types::kind(self.ty(scope, value))?;
        if k == Kind::F {
            return unsupported("f32 atomics");
        }
        let v = self.reg1(scope, value)?;
        let signed = k == Kind::S;
        let op = match *fun {
            F::Add => AtomicOp::Add,
            F::Subtract => AtomicOp::Sub,
            F::And => AtomicOp::And,
            F::InclusiveOr => AtomicOp::Or,
            F::ExclusiveOr => AtomicOp::Xor,
            F::Min if signed => AtomicOp::SMin,
            F::Min => AtomicOp::UMin,
            F::Max if signed => AtomicOp::SMax,
            F::Max => AtomicOp::UMax,
            F::Exchange { compare: None } => AtomicOp::Exchange,
            F::Exchange { compare: Some(cmp) } => {
                let compare = self.reg1(scope, cmp)?;
                let dst = self.alloc(2)?;
                self.emit(Inst::CompareExchange {
                    mem,
                    offset: ptr.dynoff,
                    add: ptr.off,
                    dst,
                    compare,
                    value: v,
                });
                if let Some(h) = result {
                    scope.values[h.index()] = Value::Regs {
                        first: dst,
                        words: 2,
                    };
                }
                return Ok(());
            }
        };
        let dst = self.alloc(1)?;
        self.emit(Inst::Atomic {
            op,
            mem,
            offset: ptr.dynoff,
            add: ptr.off,
            dst,
            value: v,
        });
        if let Some(h) = result {
            scope.values[h.index()] = Value::Regs {
                first: dst,
                words: 1,
            };
        }
        Ok(())
    }
}

/// Expressions whose value a statement defines (never lowered in the prologue).
fn defined_by_statement(e: &Expression) -> bool {
    matches!(
        e,
        Expression::CallResult(_)
            | Expression::AtomicResult { .. }
            | Expression::WorkGroupUniformLoadResult { .. }
            | Expression::RayQueryProceedResult
            | Expression::SubgroupBallotResult
            | Expression::SubgroupOperationResult { .. }
    )
}

/// Clears the `covered` mark of a constant expression and of its operands.
fn uncover_constant_tree(
    exprs: &naga::Arena<Expression>,
    h: naga::Handle<Expression>,
    covered: &mut [bool],
) {
    covered[h.index()] = false;
    match exprs[h] {
        Expression::Compose { ref components, .. } => {
            for &c in components {
                uncover_constant_tree(exprs, c, covered);
            }
        }
        Expression::Splat { value, .. } => uncover_constant_tree(exprs, value, covered),
        _ => {}
    }
}

/// Marks every expression some `Emit` in `block` (recursively) covers.
fn mark_emitted(block: &naga::Block, covered: &mut [bool]) {
    for stmt in block.iter() {
        match *stmt {
            Statement::Emit(ref range) => {
                for h in range.clone() {
                    covered[h.index()] = true;
                }
            }
            Statement::Block(ref b) => mark_emitted(b, covered),
            Statement::If {
                ref accept,
                ref reject,
                ..
            } => {
                mark_emitted(accept, covered);
                mark_emitted(reject, covered);
            }
            Statement::Switch { ref cases, .. } => {
                for c in cases {
                    mark_emitted(&c.body, covered);
                }
            }
            Statement::Loop {
                ref body,
                ref continuing,
                ..
            } => {
                mark_emitted(body, covered);
                mark_emitted(continuing, covered);
            }
            _ => {}
        }
    }
}
