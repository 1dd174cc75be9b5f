//! Unsigned arithmetic the compiled code emits as vector code where x86 has no single
//! instruction for it, each exact (the interpreter's `alu` definitions, bit for bit):
//! saturating subtraction as `max(a, b) − b`; division and remainder by a divisor the
//! program fixes to a power of two (`liveness::RegUses::constant`, or a uniform register
//! just set to a constant) as a shift and a mask;
//! u32 → f32 conversion as two exact 16-bit halves added with one rounding; a buffer's byte
//! length from the binding table.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

use super::{BufferWords, CHUNKS, Cx, Gen, NATIVE_BUFFERS};
use crate::ir::{BinOp, Reg};

impl Gen<'_, '_> {
    /// `USubSat`, and `UDiv`/`URem` by a constant power of two, or `None` when `op` is
    /// neither (the interpreter's code runs it).
    pub(super) fn unsigned_binary(&mut self, op: BinOp, a: Reg, b: Reg) -> Option<[Value; CHUNKS]> {
        use types::I32X4;
        match op {
            BinOp::USubSat => {
                let (x, y) = (self.load(a, I32X4), self.load(b, I32X4));
                Some(std::array::from_fn(|j| {
                    let m = self.b.ins().umax(x[j], y[j]);
                    self.b.ins().isub(m, y[j])
                }))
            }
            BinOp::UDiv | BinOp::URem => {
                let d = self.constant_value(b).filter(|d| d.is_power_of_two())?;
                let x = self.load(a, I32X4);
                Some(if op == BinOp::UDiv {
                    x.map(|x| self.b.ins().ushr_imm_u(x, d.trailing_zeros() as i64))
                } else {
                    let low = self.splat(d - 1);
                    x.map(|x| self.b.ins().band(x, low))
                })
            }
            _ => None,
        }
    }

    /// `U2F`: the high and low 16 bits convert exactly, the high half is scaled exactly,
    /// and their sum is rounded once — to nearest, as `u32 as f32` rounds.
    pub(super) fn u32_to_f32(&mut self, a: Reg) -> [Value; CHUNKS] {
        let x = self.load(a, types::I32X4);
        let low_mask = self.splat(0xffff);
        let scale = self.fconst(65536.0);
        x.map(|x| {
            let hi = self.b.ins().ushr_imm_u(x, 16);
            let lo = self.b.ins().band(x, low_mask);
            let hi = self.b.ins().fcvt_from_sint(types::F32X4, hi);
            let lo = self.b.ins().fcvt_from_sint(types::F32X4, lo);
            let hi = self.b.ins().fmul(hi, scale);
            self.b.ins().fadd(hi, lo)
        })
    }

    /// `BufferLen` of binding `slot`: its words × 4, saturated to u32 (`None` for bindings
    /// beyond the table).
    pub(super) fn buffer_len(&mut self, slot: u32) -> Option<[Value; CHUNKS]> {
        if slot as usize >= NATIVE_BUFFERS {
            return None;
        }
        let at = std::mem::offset_of!(Cx, buffers)
            + slot as usize * std::mem::size_of::<BufferWords>()
            + std::mem::offset_of!(BufferWords, len);
        let words = self
            .b
            .ins()
            .load(self.ptr, MemFlagsData::trusted(), self.cx, at as i32);
        let bytes = self.b.ins().imul_imm_u(words, 4);
        let max = self.b.ins().iconst(self.ptr, u32::MAX as i64);
        let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, bytes, max);
        let bytes = self.b.ins().select(over, max, bytes);
        let bytes = self.b.ins().ireduce(types::I32, bytes);
        let v = self.b.ins().splat(types::I32X4, bytes);
        Some([v; CHUNKS])
    }
}
