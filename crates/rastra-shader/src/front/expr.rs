//! Expression lowering: values, pointers (resolved at lowering time to a register range or a
//! buffer slot plus byte offset), robust dynamic indexing, buffer loads in WGSL host-shareable
//! layout, operators including matrix products, conversions, select and derivatives
//! (T3 shader units; T8 quads for derivatives).

use naga::{
    ArraySize, BinaryOperator as B, Expression, Handle, Literal, ScalarKind as SK, TypeInner,
    UnaryOperator,
};

use super::types::{self, Kind, unsupported};
use super::{Lowerer, MAX_WORKGROUP_BYTES, Place, Ptr, R, Scope, TySource, Value, internal};
use crate::ir::{BinOp, DerivAxis, Inst, Mem, Reg, TerOp, UnOp};

/// An index into a composite.
#[derive(Clone, Copy)]
enum Idx {
    Static(u32),
    Dyn(Handle<Expression>),
}

/// The shape of a composite being indexed.
enum Agg<'m> {
    Vector(u32),
    Matrix {
        columns: u32,
        rows: naga::VectorSize,
        scalar: naga::Scalar,
    },
    Array {
        elem: Handle<naga::Type>,
        count: Option<u32>,
        stride: u32,
    },
    Struct(&'m [naga::StructMember]),
}

impl<'m> Lowerer<'m> {
    pub(super) fn get(&self, scope: &Scope<'m>, h: Handle<Expression>) -> R<Value> {
        match scope.values[h.index()] {
            Value::Undef => internal("expression used before it was lowered"),
            ref v => Ok(v.clone()),
        }
    }

    /// The registers of a value expression.
    pub(super) fn regs(&self, scope: &Scope<'m>, h: Handle<Expression>) -> R<(Reg, u32)> {
        match self.get(scope, h)? {
            Value::Regs { first, words } => Ok((first, words)),
            Value::Opaque(what) => unsupported(what),
            _ => internal("pointer or handle used as a value"),
        }
    }

    /// The component registers of a value expression.
    pub(super) fn comps(&self, scope: &Scope<'m>, h: Handle<Expression>) -> R<Vec<Reg>> {
        let (first, words) = self.regs(scope, h)?;
        Ok((0..words).map(|k| first.offset(k)).collect())
    }

    pub(super) fn reg1(&self, scope: &Scope<'m>, h: Handle<Expression>) -> R<Reg> {
        Ok(self.regs(scope, h)?.0)
    }

    pub(super) fn ptr(&self, scope: &Scope<'m>, h: Handle<Expression>) -> R<Ptr> {
        match self.get(scope, h)? {
            Value::Ptr(p) => Ok(p),
            Value::Opaque(what) => unsupported(what),
            _ => internal("value used as a pointer"),
        }
    }

    fn global_ref(&mut self, scope: &mut Scope<'m>, init: Handle<Expression>) -> R<Value> {
        match scope.tys {
            TySource::Global => self.global_expr(scope, init),
            TySource::Func(_) => self.global_value(init),
        }
    }

    /// Lowers expression `h` at the current position.
    pub(super) fn expr(&mut self, scope: &mut Scope<'m>, h: Handle<Expression>) -> R<Value> {
        let module = self.module;
        let exprs = scope.exprs;
        Ok(match exprs[h] {
            Expression::Literal(lit) => {
                let value = match lit {
                    Literal::F32(v) => v.to_bits(),
                    Literal::U32(v) => v,
                    Literal::I32(v) => v as u32,
                    Literal::Bool(v) => v as u32,
                    Literal::AbstractInt(_) | Literal::AbstractFloat(_) => {
                        return unsupported("abstract numeric literal");
                    }
                    _ => return unsupported("64-bit and 16-bit scalar types"),
                };
                let first = self.konst(value)?;
                Value::Regs { first, words: 1 }
            }
            Expression::Constant(c) => self.global_ref(scope, module.constants[c].init)?,
            Expression::Override(o) => match module.overrides[o].init {
                Some(init) => self.global_ref(scope, init)?,
                None => return unsupported("override without a default value"),
            },
            Expression::ZeroValue(ty) => {
                let words = types::words(module, &module.types[ty].inner)?;
                let first = self.alloc(words)?;
                for k in 0..words {
                    self.emit(Inst::Const {
                        dst: first.offset(k),
                        value: 0,
                    });
                }
                Value::Regs { first, words }
            }
            Expression::Compose { ref components, .. } => {
                let mut all = Vec::new();
                for &c in components {
                    all.extend(self.comps(scope, c)?);
                }
                let first = self.copy(&all)?;
                Value::Regs {
                    first,
                    words: all.len() as u32,
                }
            }
            Expression::Access { base, index } => self.access(scope, base, Idx::Dyn(index))?,
            Expression::AccessIndex { base, index } => {
                self.access(scope, base, Idx::Static(index))?
            }
            Expression::Splat { size, value } => {
                let v = self.reg1(scope, value)?;
                self.regs_value(&vec![v; size as usize])?
            }
            Expression::Swizzle {
                size,
                vector,
                pattern,
            } => {
                let (first, _) = self.regs(scope, vector)?;
                let picks: Vec<Reg> = pattern[..size as usize]
                    .iter()
                    .map(|&c| first.offset(c as u32))
                    .collect();
                self.regs_value(&picks)?
            }
            Expression::FunctionArgument(i) => scope.args[i as usize].clone(),
            Expression::GlobalVariable(g) => self.global_var(g)?,
            Expression::LocalVariable(l) => Value::Ptr(scope.locals[l.index()]),
            Expression::Load { pointer } => self.load(scope, h, pointer)?,
            Expression::ImageSample { .. }
            | Expression::ImageLoad { .. }
            | Expression::ImageQuery { .. } => match self.texture_expr(scope, h)? {
                Some(v) => v,
                None => return internal("texture expression"),
            },
            Expression::Unary { op, expr } => {
                let k = types::kind(self.ty(scope, expr))?;
                let op = match (op, k) {
                    (UnaryOperator::Negate, Kind::F) => UnOp::FNeg,
                    (UnaryOperator::Negate, _) => UnOp::INeg,
                    (UnaryOperator::LogicalNot, _) => UnOp::LNot,
                    (UnaryOperator::BitwiseNot, _) => UnOp::Not,
                };
                let a = self.comps(scope, expr)?;
                self.map_un(op, &a)?
            }
            Expression::Binary { op, left, right } => self.binary(scope, op, left, right)?,
            Expression::Select {
                condition,
                accept,
                reject,
            } => {
                let c = self.comps(scope, condition)?;
                let a = self.comps(scope, accept)?;
                let b = self.comps(scope, reject)?;
                self.map_ter(TerOp::Select, &c, &a, &b)?
            }
            Expression::Derivative { axis, ctrl, expr } => {
                self.uses_derivatives = true;
                let fine = ctrl == naga::DerivativeControl::Fine;
                let src = self.comps(scope, expr)?;
                let mut out = Vec::with_capacity(src.len());
                for &s in &src {
                    let d = |lw: &mut Self, axis| -> R<Reg> {
                        let dst = lw.alloc(1)?;
                        lw.emit(Inst::Derivative {
                            axis,
                            fine,
                            dst,
                            src: s,
                        });
                        Ok(dst)
                    };
                    out.push(match axis {
                        naga::DerivativeAxis::X => d(self, DerivAxis::X)?,
                        naga::DerivativeAxis::Y => d(self, DerivAxis::Y)?,
                        naga::DerivativeAxis::Width => {
                            let dx = d(self, DerivAxis::X)?;
                            let dy = d(self, DerivAxis::Y)?;
                            let ax = self.un(UnOp::FAbs, dx)?;
                            let ay = self.un(UnOp::FAbs, dy)?;
                            self.bin(BinOp::FAdd, ax, ay)?
                        }
                    });
                }
                self.regs_value(&out)?
            }
            Expression::Relational { fun, argument } => {
                let a = self.comps(scope, argument)?;
                match fun {
                    naga::RelationalFunction::All | naga::RelationalFunction::Any => {
                        let op = if fun == naga::RelationalFunction::All {
                            BinOp::And
                        } else {
                            BinOp::Or
                        };
                        let mut acc = a[0];
                        for &x in &a[1..] {
                            acc = self.bin(op, acc, x)?;
                        }
                        Value::Regs {
                            first: acc,
                            words: 1,
                        }
                    }
                    naga::RelationalFunction::IsNan => self.map_un(UnOp::FIsNan, &a)?,
                    naga::RelationalFunction::IsInf => self.map_un(UnOp::FIsInf, &a)?,
                }
            }
            Expression::Math {
                fun,
                arg,
                arg1,
                arg2,
                arg3,
            } => self.math(scope, fun, arg, arg1, arg2, arg3)?,
            Expression::As {
                expr,
                kind,
                convert,
            } => self.convert(scope, expr, kind, convert)?,
            Expression::ArrayLength(p) => {
                let ptr = self.ptr(scope, p)?;
                let TypeInner::Pointer { base, .. } = *self.ty(scope, p) else {
                    return internal("arrayLength of a non-pointer");
                };
                let TypeInner::Array { stride, .. } = module.types[base].inner else {
                    return internal("arrayLength of a non-array");
                };
                let (Place::Mem(Mem::Buffer(slot)), None) = (ptr.place, ptr.dynoff) else {
                    return internal("arrayLength of a non-buffer array");
                };
                let n = self.array_len(slot, ptr.off, stride)?;
                Value::Regs { first: n, words: 1 }
            }
            Expression::CallResult(_) => return internal("call result used before its call"),
            Expression::AtomicResult { .. } | Expression::WorkGroupUniformLoadResult { .. } => {
                return internal("statement result used before its statement");
            }
            Expression::RayQueryVertexPositions { .. }
            | Expression::RayQueryProceedResult
            | Expression::RayQueryGetIntersection { .. } => return unsupported("ray tracing"),
            Expression::SubgroupBallotResult | Expression::SubgroupOperationResult { .. } => {
                return internal("subgroup result used before its statement");
            }
            Expression::CooperativeLoad { .. } | Expression::CooperativeMultiplyAdd { .. } => {
                return unsupported("cooperative matrices");
            }
        })
    }

    /// A value made of `regs`, copied into fresh consecutive registers unless they already are.
    pub(super) fn regs_value(&mut self, regs: &[Reg]) -> R<Value> {
        let contiguous = regs.windows(2).all(|w| w[1].0 == w[0].0 + 1);
        let first = if contiguous && !regs.is_empty() {
            regs[0]
        } else {
            self.copy(regs)?
        };
        Ok(Value::Regs {
            first,
            words: regs.len() as u32,
        })
    }

    /// Applies `op` per component.
    pub(super) fn map_un(&mut self, op: UnOp, a: &[Reg]) -> R<Value> {
        let first = self.alloc(a.len() as u32)?;
        for (k, &x) in a.iter().enumerate() {
            self.emit(Inst::Unary {
                op,
                dst: first.offset(k as u32),
                a: x,
            });
        }
        Ok(Value::Regs {
            first,
            words: a.len() as u32,
        })
    }

    /// Applies `op` per component; a one-component operand is broadcast.
    pub(super) fn map_bin(&mut self, op: BinOp, a: &[Reg], b: &[Reg]) -> R<Value> {
        let n = a.len().max(b.len());
        let first = self.alloc(n as u32)?;
        for k in 0..n {
            self.emit(Inst::Binary {
                op,
                dst: first.offset(k as u32),
                a: a[k.min(a.len() - 1)],
                b: b[k.min(b.len() - 1)],
            });
        }
        Ok(Value::Regs {
            first,
            words: n as u32,
        })
    }

    /// Applies `op` per component; one-component operands are broadcast.
    pub(super) fn map_ter(&mut self, op: TerOp, a: &[Reg], b: &[Reg], c: &[Reg]) -> R<Value> {
        let n = a.len().max(b.len()).max(c.len());
        let first = self.alloc(n as u32)?;
        for k in 0..n {
            self.emit(Inst::Ternary {
                op,
                dst: first.offset(k as u32),
                a: a[k.min(a.len() - 1)],
                b: b[k.min(b.len() - 1)],
                c: c[k.min(c.len() - 1)],
            });
        }
        Ok(Value::Regs {
            first,
            words: n as u32,
        })
    }

    fn global_var(&mut self, g: Handle<naga::GlobalVariable>) -> R<Value> {
        let gv = &self.module.global_variables[g];
        match gv.space {
            naga::AddressSpace::Private => {
                if let Some(p) = self.privates.get(&g) {
                    return Ok(Value::Ptr(*p));
                }
                let len = types::words(self.module, &self.module.types[gv.ty].inner)?;
                let base = self.alloc(len)?;
                let init = match gv.init {
                    Some(init) => match self.global_value(init)? {
                        Value::Regs { first, .. } => Some(first),
                        _ => return internal("private initialiser"),
                    },
                    None => None,
                };
                let code = (0..len)
                    .map(|k| {
                        crate::ir::Node::Inst(match init {
                            Some(src) => Inst::Mov {
                                dst: base.offset(k),
                                src: src.offset(k),
                            },
                            None => Inst::Const {
                                dst: base.offset(k),
                                value: 0,
                            },
                        })
                    })
                    .collect::<Vec<_>>();
                self.global_code.extend(code);
                let p = Ptr {
                    place: Place::Regs { base, len },
                    off: 0,
                    dynoff: None,
                };
                self.privates.insert(g, p);
                Ok(Value::Ptr(p))
            }
            naga::AddressSpace::Uniform | naga::AddressSpace::Storage { .. } => {
                match self.slots.iter().position(|(h, _)| *h == g) {
                    Some(slot) => Ok(Value::Ptr(Ptr {
                        place: Place::Mem(Mem::Buffer(slot as u32)),
                        off: 0,
                        dynoff: None,
                    })),
                    None => internal("buffer global not in the binding list"),
                }
            }
            naga::AddressSpace::Handle => {
                if let Some(slot) = self.textures.iter().position(|(h, _)| *h == g) {
                    return Ok(Value::Texture(slot as u32));
                }
                if let Some(slot) = self.samplers.iter().position(|(h, _)| *h == g) {
                    return Ok(Value::Sampler(slot as u32));
                }
                if let Some(slot) = self.images.iter().position(|(h, _)| *h == g) {
                    return Ok(Value::Image(slot as u32));
                }
                Ok(Value::Opaque(match self.module.types[gv.ty].inner {
                    TypeInner::Image {
                        class: naga::ImageClass::External,
                        ..
                    } => "external textures",
                    _ => "binding arrays of textures or samplers",
                }))
            }
            naga::AddressSpace::WorkGroup => {
                let base = match self.workgroup_vars.get(&g) {
                    Some(&b) => b,
                    None => {
                        let words = types::words(self.module, &self.module.types[gv.ty].inner)?;
                        let b = self.workgroup_bytes;
                        self.workgroup_bytes = words
                            .checked_mul(4)
                            .and_then(|n| b.checked_add(n))
                            .filter(|&t| t <= MAX_WORKGROUP_BYTES)
                            .map_or_else(
                                || unsupported("more than 1 MiB of workgroup memory"),
                                Ok,
                            )?;
                        self.workgroup_vars.insert(g, b);
                        b
                    }
                };
                Ok(Value::Ptr(Ptr {
                    place: Place::Mem(Mem::Workgroup),
                    off: base,
                    dynoff: None,
                }))
            }
            naga::AddressSpace::Immediate => unsupported("immediate data"),
            _ => unsupported("mesh/task/ray payload variables"),
        }
    }

    /// Element count of the runtime-sized array at byte `off` of buffer `slot`.
    fn array_len(&mut self, slot: u32, off: u32, stride: u32) -> R<Reg> {
        let len = self.alloc(1)?;
        self.emit(Inst::BufferLen { dst: len, slot });
        let o = self.konst(off)?;
        let rem = self.bin(BinOp::USubSat, len, o)?;
        let s = self.konst(stride.max(1))?;
        self.bin(BinOp::UDiv, rem, s)
    }

    fn agg(&self, inner: &'m TypeInner) -> R<Agg<'m>> {
        Ok(match *inner {
            TypeInner::Vector { size, .. } => Agg::Vector(size as u32),
            TypeInner::ValuePointer { size: Some(n), .. } => Agg::Vector(n as u32),
            TypeInner::Matrix {
                columns,
                rows,
                scalar,
            } => Agg::Matrix {
                columns: columns as u32,
                rows,
                scalar,
            },
            TypeInner::Array { base, size, stride } => Agg::Array {
                elem: base,
                count: match size {
                    ArraySize::Constant(n) => Some(n.get()),
                    ArraySize::Dynamic => None,
                    ArraySize::Pending(_) => return unsupported("override-sized arrays"),
                },
                stride,
            },
            TypeInner::Struct { ref members, .. } => Agg::Struct(members),
            TypeInner::Pointer { base, .. } => return self.agg(&self.module.types[base].inner),
            TypeInner::BindingArray { .. } => return unsupported("binding arrays"),
            _ => return internal("indexing a non-composite"),
        })
    }

    /// Clamps a dynamic index into `0..count` (robust access) and scales it by `scale`.
    fn scaled_index(&mut self, idx: Reg, count: Reg, scale: u32) -> R<Reg> {
        let one = self.konst(1)?;
        let last = self.bin(BinOp::USubSat, count, one)?;
        let clamped = self.bin(BinOp::UMin, idx, last)?;
        if scale == 1 {
            return Ok(clamped);
        }
        let s = self.konst(scale)?;
        self.bin(BinOp::IMul, clamped, s)
    }

    fn access(&mut self, scope: &mut Scope<'m>, base: Handle<Expression>, idx: Idx) -> R<Value> {
        let module = self.module;
        let agg = self.agg(self.ty(scope, base))?;
        match self.get(scope, base)? {
            Value::Ptr(p) => {
                // Units: registers for variables in registers, bytes in memory. Buffers use
                // naga's host-shareable layout; workgroup memory packs one word per scalar
                // in register order (4 bytes per register).
                let (host, unit) = match p.place {
                    Place::Regs { .. } => (false, 1),
                    Place::Mem(Mem::Workgroup) => (false, 4),
                    Place::Mem(Mem::Buffer(_)) => (true, 4),
                };
                let (elem, count) = match agg {
                    Agg::Vector(n) => (unit, Some(n)),
                    Agg::Matrix {
                        columns,
                        rows,
                        scalar,
                    } => (
                        if host {
                            types::column_stride(rows, scalar)
                        } else {
                            rows as u32 * unit
                        },
                        Some(columns),
                    ),
                    Agg::Array {
                        elem,
                        count,
                        stride,
                    } => (
                        if host {
                            stride
                        } else {
                            types::words(module, &module.types[elem].inner)? * unit
                        },
                        count,
                    ),
                    Agg::Struct(members) => {
                        let Idx::Static(i) = idx else {
                            return internal("dynamic struct index");
                        };
                        let off = if host {
                            members[i as usize].offset
                        } else {
                            types::member_word_offset(module, members, i as usize)? * unit
                        };
                        return Ok(Value::Ptr(Ptr {
                            off: p.off + off,
                            ..p
                        }));
                    }
                };
                match idx {
                    Idx::Static(i) => Ok(Value::Ptr(Ptr {
                        off: p.off + i * elem,
                        ..p
                    })),
                    Idx::Dyn(ih) => {
                        let i = self.reg1(scope, ih)?;
                        let count = match (count, p.place) {
                            (Some(n), _) => self.konst(n)?,
                            (None, Place::Mem(Mem::Buffer(slot))) if p.dynoff.is_none() => {
                                self.array_len(slot, p.off, elem)?
                            }
                            _ => return unsupported("runtime-sized array outside a buffer"),
                        };
                        let d = self.scaled_index(i, count, elem)?;
                        let dynoff = match p.dynoff {
                            Some(old) => self.bin(BinOp::IAdd, old, d)?,
                            None => d,
                        };
                        Ok(Value::Ptr(Ptr {
                            dynoff: Some(dynoff),
                            ..p
                        }))
                    }
                }
            }
            Value::Regs { first, words } => {
                let (elem, count) = match agg {
                    Agg::Vector(n) => (1, n),
                    Agg::Matrix { columns, rows, .. } => (rows as u32, columns),
                    Agg::Array { elem, count, .. } => (
                        types::words(module, &module.types[elem].inner)?,
                        count.unwrap_or(1),
                    ),
                    Agg::Struct(members) => {
                        let Idx::Static(i) = idx else {
                            return internal("dynamic struct index");
                        };
                        let off = types::member_word_offset(module, members, i as usize)?;
                        let w = types::words(module, &module.types[members[i as usize].ty].inner)?;
                        return Ok(Value::Regs {
                            first: first.offset(off),
                            words: w,
                        });
                    }
                };
                match idx {
                    Idx::Static(i) => Ok(Value::Regs {
                        first: first.offset(i * elem),
                        words: elem,
                    }),
                    Idx::Dyn(ih) => {
                        let i = self.reg1(scope, ih)?;
                        let c = self.konst(count)?;
                        let index = self.scaled_index(i, c, elem)?;
                        let dst = self.alloc(elem)?;
                        for k in 0..elem {
                            self.emit(Inst::LoadIndexed {
                                dst: dst.offset(k),
                                base: first,
                                len: words,
                                index,
                                add: k,
                            });
                        }
                        Ok(Value::Regs {
                            first: dst,
                            words: elem,
                        })
                    }
                }
            }
            Value::Opaque(what) => unsupported(what),
            Value::Texture(_) | Value::Sampler(_) | Value::Image(_) => {
                internal("indexing a texture or sampler")
            }
            Value::Undef => internal("indexing an undefined value"),
        }
    }

    pub(super) fn load(
        &mut self,
        scope: &mut Scope<'m>,
        h: Handle<Expression>,
        pointer: Handle<Expression>,
    ) -> R<Value> {
        let p = self.ptr(scope, pointer)?;
        let ty = self.ty(scope, h);
        let words = types::words(self.module, ty)?;
        let dst = self.alloc(words)?;
        match p.place {
            Place::Regs { base, len } => {
                for k in 0..words {
                    let inst = match p.dynoff {
                        None => Inst::Mov {
                            dst: dst.offset(k),
                            src: base.offset((p.off + k).min(len - 1)),
                        },
                        Some(index) => Inst::LoadIndexed {
                            dst: dst.offset(k),
                            base,
                            len,
                            index,
                            add: p.off + k,
                        },
                    };
                    self.emit(inst);
                }
            }
            Place::Mem(mem) => {
                let mut leaves = std::mem::take(&mut self.scratch);
                leaves.clear();
                let r = self.mem_leaves(mem, ty, &mut leaves);
                if r.is_ok() && leaves.len() as u32 != words {
                    return internal("memory layout does not match register layout");
                }
                for (k, &leaf) in leaves.iter().enumerate() {
                    self.emit(Inst::Load {
                        dst: dst.offset(k as u32),
                        mem,
                        offset: p.dynoff,
                        add: p.off + leaf,
                    });
                }
                self.scratch = leaves;
                r?;
            }
        }
        Ok(Value::Regs { first: dst, words })
    }

    /// Byte offsets, in register order, of every scalar of a value of type `ty` in `mem`.
    pub(super) fn mem_leaves(&self, mem: Mem, ty: &TypeInner, out: &mut Vec<u32>) -> R<()> {
        match mem {
            Mem::Buffer(_) => types::buffer_leaves(self.module, ty, 0, out),
            Mem::Workgroup => {
                let words = types::words(self.module, ty)?;
                out.extend((0..words).map(|k| 4 * k));
                Ok(())
            }
        }
    }

    fn binary(
        &mut self,
        scope: &mut Scope<'m>,
        op: B,
        left: Handle<Expression>,
        right: Handle<Expression>,
    ) -> R<Value> {
        let lt = self.ty(scope, left);
        let rt = self.ty(scope, right);
        let l = self.comps(scope, left)?;
        let r = self.comps(scope, right)?;
        if op == B::Multiply {
            match (lt, rt) {
                (TypeInner::Matrix { columns, rows, .. }, TypeInner::Vector { .. }) => {
                    // (C×R) · vecC → vecR
                    let (c, rr) = (*columns as usize, *rows as usize);
                    let mut out = Vec::with_capacity(rr);
                    for row in 0..rr {
                        let pairs: Vec<_> = (0..c).map(|k| (l[k * rr + row], r[k])).collect();
                        out.push(self.sum_products(&pairs, Kind::F)?);
                    }
                    return self.regs_value(&out);
                }
                (TypeInner::Vector { .. }, TypeInner::Matrix { columns, rows, .. }) => {
                    // vecR · (C×R) → vecC
                    let (c, rr) = (*columns as usize, *rows as usize);
                    let mut out = Vec::with_capacity(c);
                    for col in 0..c {
                        let pairs: Vec<_> = (0..rr).map(|k| (l[k], r[col * rr + k])).collect();
                        out.push(self.sum_products(&pairs, Kind::F)?);
                    }
                    return self.regs_value(&out);
                }
                (
                    TypeInner::Matrix {
                        columns: kc, rows, ..
                    },
                    TypeInner::Matrix { columns, .. },
                ) => {
                    // (K×R) · (C×K) → (C×R)
                    let (k, rr, c) = (*kc as usize, *rows as usize, *columns as usize);
                    let mut out = Vec::with_capacity(c * rr);
                    for col in 0..c {
                        for row in 0..rr {
                            let pairs: Vec<_> =
                                (0..k).map(|i| (l[i * rr + row], r[col * k + i])).collect();
                            out.push(self.sum_products(&pairs, Kind::F)?);
                        }
                    }
                    return self.regs_value(&out);
                }
                _ => {}
            }
        }
        let k = types::kind(lt)?;
        let f = k == Kind::F;
        let pick = |fo: BinOp, so: BinOp, uo: BinOp| match k {
            Kind::F => fo,
            Kind::S => so,
            Kind::U | Kind::B => uo,
        };
        let bop = match op {
            B::Add => {
                if f {
                    BinOp::FAdd
                } else {
                    BinOp::IAdd
                }
            }
            B::Subtract => {
                if f {
                    BinOp::FSub
                } else {
                    BinOp::ISub
                }
            }
            B::Multiply => {
                if f {
                    BinOp::FMul
                } else {
                    BinOp::IMul
                }
            }
            B::Divide => pick(BinOp::FDiv, BinOp::SDiv, BinOp::UDiv),
            B::Modulo => pick(BinOp::FRem, BinOp::SRem, BinOp::URem),
            B::Equal => {
                if f {
                    BinOp::FEq
                } else {
                    BinOp::IEq
                }
            }
            B::NotEqual => {
                if f {
                    BinOp::FNe
                } else {
                    BinOp::INe
                }
            }
            B::Less => pick(BinOp::FLt, BinOp::SLt, BinOp::ULt),
            B::LessEqual => pick(BinOp::FLe, BinOp::SLe, BinOp::ULe),
            B::Greater => pick(BinOp::FGt, BinOp::SGt, BinOp::UGt),
            B::GreaterEqual => pick(BinOp::FGe, BinOp::SGe, BinOp::UGe),
            B::And | B::LogicalAnd => BinOp::And,
            B::InclusiveOr | B::LogicalOr => BinOp::Or,
            B::ExclusiveOr => BinOp::Xor,
            B::ShiftLeft => BinOp::Shl,
            B::ShiftRight => pick(BinOp::ShrU, BinOp::ShrS, BinOp::ShrU),
        };
        self.map_bin(bop, &l, &r)
    }

    /// `Σ a·b` over the pairs, left to right (f32 or wrapping integer).
    pub(super) fn sum_products(&mut self, pairs: &[(Reg, Reg)], k: Kind) -> R<Reg> {
        let (mul, add) = if k == Kind::F {
            (BinOp::FMul, BinOp::FAdd)
        } else {
            (BinOp::IMul, BinOp::IAdd)
        };
        let mut acc = self.bin(mul, pairs[0].0, pairs[0].1)?;
        for &(a, b) in &pairs[1..] {
            let p = self.bin(mul, a, b)?;
            acc = self.bin(add, acc, p)?;
        }
        Ok(acc)
    }

    fn convert(
        &mut self,
        scope: &mut Scope<'m>,
        expr: Handle<Expression>,
        to: SK,
        convert: Option<u8>,
    ) -> R<Value> {
        let v = self.get(scope, expr)?;
        let from = types::kind(self.ty(scope, expr))?;
        let Some(width) = convert else {
            // Bitcast: same bits, same registers.
            return Ok(v);
        };
        let op = match (from, to, width) {
            (Kind::F, SK::Sint, 4) => Some(UnOp::F2I),
            (Kind::F, SK::Uint, 4) => Some(UnOp::F2U),
            (Kind::S, SK::Float, 4) => Some(UnOp::I2F),
            (Kind::U, SK::Float, 4) => Some(UnOp::U2F),
            (Kind::B, SK::Float, 4) => Some(UnOp::B2F),
            (Kind::F, SK::Bool, _) => Some(UnOp::F2B),
            (Kind::S | Kind::U, SK::Bool, _) => Some(UnOp::I2B),
            (Kind::F, SK::Float, 4)
            | (Kind::S | Kind::U | Kind::B, SK::Sint | SK::Uint, 4)
            | (Kind::B, SK::Bool, _) => None,
            _ => return unsupported("64-bit and 16-bit scalar types"),
        };
        match op {
            None => Ok(v),
            Some(op) => {
                let a = self.comps(scope, expr)?;
                self.map_un(op, &a)
            }
        }
    }
}
