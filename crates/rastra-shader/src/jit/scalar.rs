//! Uniform registers in compiled code (`uniform` finds them): each is one scalar variable
//! instead of four vector chunks in the register file — its ALU instructions are scalar
//! instructions, and it is written to the register file (every lane) only where the
//! interpreter's code, the pipeline or a barrier's resumption reads it.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Endianness, InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::Variable;

use super::{CHUNKS, Gen, REG_BYTES, arith, float_cc, int_cc, is_float_arith, reg_flags};
use crate::ir::{BinOp, Inst, Reg, TerOp, UnOp};

impl Gen<'_, '_> {
    /// The chunk variables of register `r`, if it is promoted.
    pub(super) fn promoted_vars(&self, r: Reg) -> Option<[Variable; CHUNKS]> {
        self.promoted.get(r.0 as usize).copied().flatten()
    }

    /// The scalar variable of register `r`, if it is uniform.
    pub(super) fn scalar_var(&self, r: Reg) -> Option<Variable> {
        self.scalars.get(r.0 as usize).copied().flatten()
    }

    /// The bits of `v` when the code generated so far defines it as an integer constant.
    pub(super) fn known_constant(&self, v: Value) -> Option<u32> {
        let dfg = &self.b.func.dfg;
        let inst = dfg.value_def(v).inst()?;
        match dfg.insts[inst] {
            cranelift_codegen::ir::InstructionData::UnaryImm {
                opcode: cranelift_codegen::ir::Opcode::Iconst,
                imm,
            } => Some(imm.bits() as u32),
            _ => None,
        }
    }

    /// The value register `r` is known to hold here, if the code fixes it: a constant of
    /// the whole program, or a uniform register the code generated so far sets to one.
    pub(super) fn constant_value(&mut self, r: Reg) -> Option<u32> {
        if let Some(bits) = self.uses.constant(r.0) {
            return Some(bits);
        }
        let var = self.scalar_var(r)?;
        let x = self.b.use_var(var);
        self.known_constant(x)
    }

    /// The one value of the uniform register `r`, as an i32.
    pub(super) fn scalar(&mut self, r: Reg) -> Value {
        if let Some(bits) = self.uses.constant(r.0) {
            return self.b.ins().iconst(types::I32, bits as i64);
        }
        let var = self.scalar_var(r).expect("a uniform register");
        self.b.use_var(var)
    }

    /// Writes uniform register `r`'s value to every lane of it in the register file, for
    /// code that reads the register file (the interpreter's, the pipeline, a resumption).
    pub(super) fn materialize(&mut self, r: Reg) {
        if let Some(vars) = self.promoted_vars(r) {
            // A promoted register's chunks, as they are.
            for (j, var) in vars.into_iter().enumerate() {
                let v = self.b.use_var(var);
                let off = r.0 as i32 * REG_BYTES + 16 * j as i32;
                self.b.ins().store(reg_flags(), v, self.regs, off);
            }
            return;
        }
        if self.scalar_var(r).is_none() {
            return;
        }
        let x = self.scalar(r);
        let v = self.b.ins().splat(types::I32X4, x);
        for j in 0..CHUNKS {
            let off = r.0 as i32 * REG_BYTES + 16 * j as i32;
            self.b.ins().store(reg_flags(), v, self.regs, off);
        }
    }

    /// Scalar code for an ALU instruction whose operands are all uniform: the result as
    /// an i32 (the register's bits), or `None` for instructions without a scalar form here
    /// (they are made as vector code on splatted operands).
    pub(super) fn scalar_alu(&mut self, inst: &Inst) -> Option<Value> {
        use types::{F32, I32};
        let flags = MemFlagsData::new().with_endianness(Endianness::Little);
        let bool_i32 = |g: &mut Self, c: Value| g.b.ins().uextend(I32, c);
        Some(match *inst {
            Inst::Const { value, .. } => self.b.ins().iconst(I32, value as i32 as i64),
            Inst::Mov { src, .. } => self.scalar(src),
            Inst::Unary { op, a, .. } => {
                let x = self.scalar(a);
                match op {
                    UnOp::Not => self.b.ins().bnot(x),
                    UnOp::INeg => self.b.ins().ineg(x),
                    UnOp::LNot => {
                        let c = self.b.ins().icmp_imm_s(IntCC::Equal, x, 0);
                        bool_i32(self, c)
                    }
                    UnOp::I2B => {
                        let c = self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
                        bool_i32(self, c)
                    }
                    UnOp::I2F => {
                        let f = self.b.ins().fcvt_from_sint(F32, x);
                        self.b.ins().bitcast(I32, flags, f)
                    }
                    UnOp::FNeg => self.b.ins().bxor_imm_s(x, i32::MIN as i64),
                    UnOp::FAbs => self.b.ins().band_imm_s(x, i32::MAX as i64),
                    _ => return None,
                }
            }
            Inst::Binary { op, a, b, .. } => {
                let (x, y) = (self.scalar(a), self.scalar(b));
                let as_f = |g: &mut Self, v: Value| g.b.ins().bitcast(F32, flags, v);
                if let Some(cc) = int_cc(op) {
                    let c = self.b.ins().icmp(cc, x, y);
                    bool_i32(self, c)
                } else if let Some(cc) = float_cc(op) {
                    let (fx, fy) = (as_f(self, x), as_f(self, y));
                    let c = self.b.ins().fcmp(cc, fx, fy);
                    bool_i32(self, c)
                } else if is_float_arith(op) {
                    let (fx, fy) = (as_f(self, x), as_f(self, y));
                    let r = arith(&mut self.b, op, fx, fy)?;
                    self.b.ins().bitcast(I32, flags, r)
                } else if let Some(r) = arith(&mut self.b, op, x, y) {
                    r
                } else {
                    let i = self.b.ins();
                    match op {
                        // Cranelift takes shift amounts modulo the width, as `alu` does.
                        BinOp::Shl => i.ishl(x, y),
                        BinOp::ShrS => i.sshr(x, y),
                        BinOp::ShrU => i.ushr(x, y),
                        BinOp::USubSat => {
                            let m = i.umax(x, y);
                            self.b.ins().isub(m, y)
                        }
                        // `alu`'s rules: x / 0 = x, x % 0 = 0 (the divisor made 1 first:
                        // a hardware division by zero traps).
                        BinOp::UDiv | BinOp::URem => {
                            let zero = i.icmp_imm_s(IntCC::Equal, y, 0);
                            let one = self.b.ins().iconst(I32, 1);
                            let safe = self.b.ins().select(zero, one, y);
                            if op == BinOp::UDiv {
                                let q = self.b.ins().udiv(x, safe);
                                self.b.ins().select(zero, x, q)
                            } else {
                                let r = self.b.ins().urem(x, safe);
                                let z = self.b.ins().iconst(I32, 0);
                                self.b.ins().select(zero, z, r)
                            }
                        }
                        _ => return None,
                    }
                }
            }
            Inst::Ternary {
                op: TerOp::Select,
                a,
                b,
                c,
                ..
            } => {
                let (x, y, z) = (self.scalar(a), self.scalar(b), self.scalar(c));
                self.b.ins().select(x, y, z)
            }
            _ => return None,
        })
    }
}
