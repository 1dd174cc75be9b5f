//! `sin` and `cos` in compiled code: the shader cores' special-function unit (`crate::trig`)
//! written out as vector instructions — its range reduction and polynomials with the same
//! IEEE operations in the same order, so the same bits as the interpreter; when any lane is
//! outside its range, the instruction is run by the interpreter's code instead.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{Endianness, InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::Variable;

use super::{CHUNKS, Gen, REG_BYTES, reg_flags};
use crate::ir::Reg;

impl Gen<'_, '_> {
    /// `sin` (`phase` 0) or `cos` (`phase` 1) of register `a` into `dst`, as `trig`
    /// computes them: its range reduction and polynomials written out with the same IEEE
    /// operations in the same order (no fused multiply-add), so the same bits. Lanes beyond
    /// its range (or NaN) need the C library: when there are any, the instruction is run by
    /// the interpreter's code instead (it gives every lane its value).
    pub(super) fn trig(
        &mut self,
        index: usize,
        dst: Reg,
        a: Reg,
        phase: u32,
        mask: Value,
        effects: Value,
    ) {
        use crate::trig::{C1, C2, C3, P1, P2, P3, RANGE, ROUNDER, S1, S2, S3};
        use std::f32::consts::FRAC_2_PI;
        use types::{F32X4, I32X4};
        let x = self.load(a, F32X4);
        let flags = MemFlagsData::new().with_endianness(Endianness::Little);
        let mut out = [x[0]; CHUNKS];
        let mut outside = [x[0]; CHUNKS];
        for j in 0..CHUNKS {
            // Constants are made where they are used: constant-pool operands the vector
            // instructions read directly, not sixteen registers held across the chunks.
            macro_rules! k {
                ($v:expr) => {
                    self.fconst($v)
                };
            }
            macro_rules! ins {
                () => {
                    self.b.ins()
                };
            }
            let ax = ins!().fabs(x[j]);
            let c = k!(FRAC_2_PI);
            let t = ins!().fmul(ax, c);
            let c = k!(ROUNDER);
            let t = ins!().fadd(t, c);
            let c = k!(ROUNDER);
            let q = ins!().fsub(t, c);
            let mut r = ax;
            for part in [P1, P2, P3] {
                let c = k!(part);
                let m = ins!().fmul(q, c);
                r = ins!().fsub(r, m);
            }
            let z = ins!().fmul(r, r);
            // sin r = r + r·z·(S1 + z·(S2 + z·S3))
            let c = k!(S3);
            let p = ins!().fmul(z, c);
            let c = k!(S2);
            let p = ins!().fadd(c, p);
            let p = ins!().fmul(z, p);
            let c = k!(S1);
            let p = ins!().fadd(c, p);
            let rz = ins!().fmul(r, z);
            let p = ins!().fmul(rz, p);
            let sin = ins!().fadd(r, p);
            // cos r = (1 − 0.5·z) + z·z·(C1 + z·(C2 + z·C3))
            let c = k!(0.5);
            let hz = ins!().fmul(c, z);
            let c = k!(1.0);
            let lead = ins!().fsub(c, hz);
            let c = k!(C3);
            let p = ins!().fmul(z, c);
            let c = k!(C2);
            let p = ins!().fadd(c, p);
            let p = ins!().fmul(z, p);
            let c = k!(C1);
            let p = ins!().fadd(c, p);
            let zz = ins!().fmul(z, z);
            let p = ins!().fmul(zz, p);
            let cos = ins!().fadd(lead, p);
            // `j as u32` (`q` here) read from `t` instead of converted: in range,
            // t = 1.5·2²³ + j exactly, so t's bits are 0x4b40_0000 + j, whose low two bits
            // (all the quadrant logic below uses) are j's. (Out of range the value is
            // meaningless either way: those lanes are replaced.)
            let quadrant = ins!().bitcast(I32X4, flags, t);
            let c = self.splat(phase);
            let quadrant = ins!().iadd(quadrant, c);
            let c = self.splat(1);
            let odd = ins!().band(quadrant, c);
            let odd = ins!().icmp(IntCC::Equal, odd, c);
            let sin = ins!().bitcast(I32X4, flags, sin);
            let cos = ins!().bitcast(I32X4, flags, cos);
            let v = ins!().bitselect(odd, cos, sin);
            let c = self.splat(2);
            let flip = ins!().band(quadrant, c);
            let flip = ins!().ishl_imm_u(flip, 30);
            let mut bits = ins!().bxor(v, flip);
            if phase == 0 {
                let xb = ins!().bitcast(I32X4, flags, x[j]);
                let c = self.splat(0x8000_0000);
                let xs = ins!().band(xb, c);
                bits = ins!().bxor(bits, xs);
            }
            out[j] = bits;
            let c = k!(RANGE);
            outside[j] = ins!().fcmp(FloatCC::UnorderedOrGreaterThan, ax, c);
        }
        let outside = self.gather(outside);
        let vars: [Variable; CHUNKS] = std::array::from_fn(|_| self.b.declare_var(I32X4));
        for (var, v) in vars.iter().zip(out) {
            self.b.def_var(*var, v);
        }
        let (slow, merge) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(outside, slow, &[], merge, &[]);
        self.b.seal_block(slow);
        self.b.switch_to_block(slow);
        self.store_dirty();
        self.callback(index, mask, effects);
        for (j, var) in vars.iter().enumerate() {
            let off = dst.0 as i32 * REG_BYTES + 16 * j as i32;
            let v = self.b.ins().load(I32X4, reg_flags(), self.regs, off);
            self.b.def_var(*var, v);
        }
        self.b.ins().jump(merge, &[]);
        self.b.seal_block(merge);
        self.b.switch_to_block(merge);
        let v = vars.map(|var| self.b.use_var(var));
        self.store(dst, v);
    }
}
