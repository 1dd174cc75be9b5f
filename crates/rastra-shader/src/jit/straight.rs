//! Straight-line code in compiled shaders: a run's instructions as vector code, one 4-lane
//! chunk at a time, in segments between the instructions that need whole registers in
//! memory (native memory accesses) or the interpreter's code (callbacks).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    AbiParam, Endianness, InstBuilder, MemFlagsData, Signature, Value, types,
};

use super::{
    CHUNKS, Gen, MASK_TY, REG_BYTES, alu_dst, arith, exec_callback, float_cc, int_cc,
    is_float_arith, is_int_arith, liveness, reg_flags, unary_callback,
};
use crate::ir::{BinOp, Inst, Reg, TerOp, UnOp};

impl Gen<'_, '_> {
    /// A run: its natively emitted instructions in segments, each generated one 4-lane
    /// chunk at a time (a chunk's values then fit the machine's vector registers, where all
    /// 32 lanes of every live value would not); between segments, native memory accesses
    /// and the instructions the interpreter's code runs, on whole registers in memory.
    pub(super) fn run(&mut self, start: usize, len: usize) {
        let m = self.b.use_var(self.mask);
        let h = self.b.use_var(self.helpers);
        let effects = self.b.ins().band_not(m, h);
        let end = start + len;
        let mut index = start;
        self.cache.clear();
        while index < end {
            if self.is_native_memory(index) {
                self.memory(index, effects);
                self.write_back();
                index += 1;
                continue;
            }
            // The first chunk's pass finds where the segment ends (at an instruction it
            // cannot emit: `native` then emits nothing live).
            self.chunks = 0..1;
            let mut masks = None;
            let mut seg_end = index;
            while seg_end < end && !self.is_native_memory(seg_end) {
                if !self.native(&self.code.insts[seg_end], m, &mut masks) {
                    break;
                }
                seg_end += 1;
            }
            self.write_back_segment(index, seg_end);
            for j in 1..CHUNKS {
                self.chunks = j..j + 1;
                let mut masks = None;
                for k in index..seg_end {
                    let emitted = self.native(&self.code.insts[k], m, &mut masks);
                    debug_assert!(emitted, "a segment's instructions are all native");
                }
                self.write_back_segment(index, seg_end);
            }
            self.chunks = 0..CHUNKS;
            if seg_end < end && !self.is_native_memory(seg_end) {
                // The interpreter's code reads and writes the register file.
                self.callback(seg_end, m, effects);
                seg_end += 1;
            }
            index = seg_end;
        }
        self.chunks = 0..CHUNKS;
    }

    pub(super) fn callback(&mut self, index: usize, mask: Value, effects: Value) {
        // The interpreter's code reads operands from the register file and writes its
        // results there (ALU results in every lane).
        let inst = &self.code.insts[index];
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        liveness::inst_regs(inst, &mut |r, n| reads.push((r, n)), &mut |r, n| {
            writes.push((r, n))
        });
        for (r, n) in reads {
            for k in 0..n {
                self.materialize(Reg(r.0 + k));
            }
        }
        self.call_interpreter(index, mask, effects);
        for (r, n) in writes {
            for k in 0..n {
                let r = Reg(r.0 + k);
                if let Some(var) = self.scalar_var(r) {
                    let off = r.0 as i32 * REG_BYTES;
                    let v = self.b.ins().load(types::I32, reg_flags(), self.regs, off);
                    self.b.def_var(var, v);
                }
                if let Some(vars) = self.promoted_vars(r) {
                    for (j, var) in vars.into_iter().enumerate() {
                        let off = r.0 as i32 * REG_BYTES + 16 * j as i32;
                        let v = self.b.ins().load(types::I32X4, reg_flags(), self.regs, off);
                        self.b.def_var(var, v);
                    }
                }
            }
        }
    }

    fn call_interpreter(&mut self, index: usize, mask: Value, effects: Value) {
        #[cfg(target_arch = "x86_64")]
        if let Inst::Unary {
            op: op @ (UnOp::FSin | UnOp::FCos),
            dst,
            a,
        } = self.code.insts[index]
            && rastra_texture::cpu::wide()
        {
            // Sine and cosine straight to their AVX2 loop over the two registers.
            let f = match op {
                UnOp::FSin => crate::trig::sin_file_avx2 as *const (),
                _ => crate::trig::cos_file_avx2 as *const (),
            };
            let mut sig = Signature::new(self.b.func.signature.call_conv);
            sig.params.extend([AbiParam::new(self.ptr); 2]);
            let sig = self.b.import_signature(sig);
            let f = self.b.ins().iconst(self.ptr, f as usize as i64);
            let [src, out] = [a, dst].map(|r| {
                self.b
                    .ins()
                    .iadd_imm_s(self.regs, i64::from(r.0) * i64::from(REG_BYTES))
            });
            self.b.ins().call_indirect(sig, f, &[src, out]);
            return;
        }
        if matches!(self.code.insts[index], Inst::Unary { .. }) {
            // Its result does not depend on the masks (written in every lane).
            let mut sig = Signature::new(self.b.func.signature.call_conv);
            sig.params.push(AbiParam::new(self.ptr));
            sig.params.push(AbiParam::new(types::I32));
            let sig = self.b.import_signature(sig);
            let f = self
                .b
                .ins()
                .iconst(self.ptr, unary_callback as *const () as usize as i64);
            let i = self.b.ins().iconst(types::I32, index as i64);
            self.b.ins().call_indirect(sig, f, &[self.cx, i]);
            return;
        }
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        sig.params.push(AbiParam::new(self.ptr));
        sig.params.push(AbiParam::new(types::I32));
        sig.params.extend([AbiParam::new(MASK_TY); 2]);
        let sig = self.b.import_signature(sig);
        let f = self
            .b
            .ins()
            .iconst(self.ptr, exec_callback as *const () as usize as i64);
        let i = self.b.ins().iconst(types::I32, index as i64);
        self.b
            .ins()
            .call_indirect(sig, f, &[self.cx, i, mask, effects]);
    }

    /// Emits `inst` as vector code if it is one of the instructions lowered natively.
    fn native(&mut self, inst: &Inst, mask: Value, masks: &mut Option<[Value; CHUNKS]>) -> bool {
        use types::{F32X4, I32X4};
        if let Some(dst) = alu_dst(inst)
            && let Some(var) = self.scalar_var(dst)
            && !matches!(inst, Inst::Store { .. })
        {
            // A uniform result: made once, in the first chunk's pass (the value is the
            // same in every lane), by scalar code where there is some.
            if !self.chunks.contains(&0) {
                return true;
            }
            if let Some(x) = self.scalar_alu(inst) {
                self.b.def_var(var, x);
                return true;
            }
        }
        match *inst {
            Inst::Const { dst, value } => {
                let v = self.splat(value);
                self.store(dst, [v; CHUNKS]);
            }
            Inst::Mov { dst, src } => {
                let v = self.load(src, I32X4);
                self.store(dst, v);
            }
            Inst::Store { dst, src } if self.scalar_var(dst).is_some() => {
                // Uniform control: the active lanes are every lane that can read it.
                if self.chunks.contains(&0) {
                    let x = self.scalar(src);
                    let var = self.scalar_var(dst).expect("checked");
                    self.b.def_var(var, x);
                }
            }
            Inst::Store { dst, src } if self.uniform.uniform_control(self.pc) => {
                // Every lane of the starting mask is active: the others are never read.
                let s = self.load(src, I32X4);
                self.store(dst, s);
            }
            Inst::Store { dst, src } => {
                let lm = *masks.get_or_insert_with(|| self.lane_masks(mask));
                let s = self.load(src, I32X4);
                let d = self.load(dst, I32X4);
                let v = std::array::from_fn(|j| self.b.ins().bitselect(lm[j], s[j], d[j]));
                self.store(dst, v);
            }
            Inst::Unary { op, dst, a } => {
                let one_bits = self.splat(1);
                let v = match op {
                    UnOp::FNeg => self.load(a, F32X4).map(|x| self.b.ins().fneg(x)),
                    UnOp::FAbs => self.load(a, F32X4).map(|x| self.b.ins().fabs(x)),
                    UnOp::FSqrt => self.load(a, F32X4).map(|x| self.b.ins().sqrt(x)),
                    UnOp::FFloor if self.native.round => {
                        self.load(a, F32X4).map(|x| self.b.ins().floor(x))
                    }
                    UnOp::FCeil if self.native.round => {
                        self.load(a, F32X4).map(|x| self.b.ins().ceil(x))
                    }
                    UnOp::FTrunc if self.native.round => {
                        self.load(a, F32X4).map(|x| self.b.ins().trunc(x))
                    }
                    UnOp::FRound if self.native.round => {
                        self.load(a, F32X4).map(|x| self.b.ins().nearest(x))
                    }
                    // x − floor(x), each rounded.
                    UnOp::FFract if self.native.round => self.load(a, F32X4).map(|x| {
                        let f = self.b.ins().floor(x);
                        self.b.ins().fsub(x, f)
                    }),
                    UnOp::Not => self.load(a, I32X4).map(|x| self.b.ins().bnot(x)),
                    UnOp::INeg => self.load(a, I32X4).map(|x| self.b.ins().ineg(x)),
                    UnOp::I2F => self
                        .load(a, I32X4)
                        .map(|x| self.b.ins().fcvt_from_sint(F32X4, x)),
                    UnOp::U2F => self.u32_to_f32(a),
                    UnOp::LNot => self.load(a, I32X4).map(|x| {
                        let z = self.vcmp0(IntCC::Equal, x);
                        self.b.ins().band(z, one_bits)
                    }),
                    UnOp::I2B => self.load(a, I32X4).map(|x| {
                        let z = self.vcmp0(IntCC::NotEqual, x);
                        self.b.ins().band(z, one_bits)
                    }),
                    UnOp::B2F => {
                        let one_f = self.splat(1.0f32.to_bits());
                        self.load(a, I32X4).map(|x| {
                            let z = self.vcmp0(IntCC::NotEqual, x);
                            self.b.ins().band(z, one_f)
                        })
                    }
                    _ => return false,
                };
                self.store(dst, v);
            }
            Inst::Binary { op, dst, a, b } => {
                let v: [Value; CHUNKS] = if let Some(cc) = float_cc(op) {
                    let (x, y) = (self.load(a, F32X4), self.load(b, F32X4));
                    let one = self.splat(1);
                    std::array::from_fn(|j| {
                        let c = self.b.ins().fcmp(cc, x[j], y[j]);
                        self.b.ins().band(c, one)
                    })
                } else if let Some(cc) = int_cc(op) {
                    let (x, y) = (self.load(a, I32X4), self.load(b, I32X4));
                    let one = self.splat(1);
                    std::array::from_fn(|j| {
                        let c = self.b.ins().icmp(cc, x[j], y[j]);
                        self.b.ins().band(c, one)
                    })
                } else if matches!(op, BinOp::FMin | BinOp::FMax) {
                    // b where b < a (min) or b > a (max), or where a is NaN; else a — the
                    // interpreter's definition, bit for bit.
                    let (x, y) = (self.load(a, F32X4), self.load(b, F32X4));
                    let cc = if op == BinOp::FMin {
                        FloatCC::LessThan
                    } else {
                        FloatCC::GreaterThan
                    };
                    std::array::from_fn(|j| {
                        let take = self.b.ins().fcmp(cc, y[j], x[j]);
                        let nan = self.b.ins().fcmp(FloatCC::Unordered, x[j], x[j]);
                        let take = self.b.ins().bor(take, nan);
                        let flags = MemFlagsData::new().with_endianness(Endianness::Little);
                        let xi = self.b.ins().bitcast(I32X4, flags, x[j]);
                        let yi = self.b.ins().bitcast(I32X4, flags, y[j]);
                        self.b.ins().bitselect(take, yi, xi)
                    })
                } else if op == BinOp::FStep {
                    // `x >= edge`: b >= a.
                    let (e, x) = (self.load(a, F32X4), self.load(b, F32X4));
                    let one = self.splat(1.0f32.to_bits());
                    std::array::from_fn(|j| {
                        let c = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, x[j], e[j]);
                        self.b.ins().band(c, one)
                    })
                } else {
                    let float = is_float_arith(op);
                    if !float && !is_int_arith(op) {
                        let Some(v) = self.unsigned_binary(op, a, b) else {
                            return false;
                        };
                        self.store(dst, v);
                        return true;
                    }
                    let ty = if float { F32X4 } else { I32X4 };
                    let (x, y) = (self.load(a, ty), self.load(b, ty));
                    std::array::from_fn(|j| {
                        arith(&mut self.b, op, x[j], y[j]).expect("an arithmetic operation")
                    })
                };
                self.store(dst, v);
            }
            Inst::BufferLen { dst, slot } => {
                let Some(v) = self.buffer_len(slot) else {
                    return false;
                };
                self.store(dst, v);
            }
            Inst::Ternary { op, dst, a, b, c } => {
                let v: [Value; CHUNKS] = match op {
                    TerOp::Select => {
                        let (x, y, z) = (
                            self.load(a, I32X4),
                            self.load(b, I32X4),
                            self.load(c, I32X4),
                        );
                        std::array::from_fn(|j| {
                            let on = self.vcmp0(IntCC::NotEqual, x[j]);
                            self.b.ins().bitselect(on, y[j], z[j])
                        })
                    }
                    TerOp::Fma if self.native.fma => {
                        let (x, y, z) = (
                            self.load(a, F32X4),
                            self.load(b, F32X4),
                            self.load(c, F32X4),
                        );
                        std::array::from_fn(|j| self.b.ins().fma(x[j], y[j], z[j]))
                    }
                    TerOp::Mix => {
                        // a * (1 - c) + b * c, rounded after each operation.
                        let (x, y, t) = (
                            self.load(a, F32X4),
                            self.load(b, F32X4),
                            self.load(c, F32X4),
                        );
                        let one = self.b.ins().f32const(1.0);
                        let one = self.b.ins().splat(F32X4, one);
                        std::array::from_fn(|j| {
                            let i = self.b.ins();
                            let s = i.fsub(one, t[j]);
                            let p = self.b.ins().fmul(x[j], s);
                            let q = self.b.ins().fmul(y[j], t[j]);
                            self.b.ins().fadd(p, q)
                        })
                    }
                    TerOp::SClamp | TerOp::UClamp => {
                        let (x, lo, hi) = (
                            self.load(a, I32X4),
                            self.load(b, I32X4),
                            self.load(c, I32X4),
                        );
                        let signed = op == TerOp::SClamp;
                        std::array::from_fn(|j| {
                            if signed {
                                let m = self.b.ins().smax(x[j], lo[j]);
                                self.b.ins().smin(m, hi[j])
                            } else {
                                let m = self.b.ins().umax(x[j], lo[j]);
                                self.b.ins().umin(m, hi[j])
                            }
                        })
                    }
                    _ => return false,
                };
                self.store(dst, v);
            }
            _ => return false,
        }
        true
    }
}
