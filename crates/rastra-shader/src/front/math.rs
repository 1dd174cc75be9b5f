//! WGSL builtin functions (naga `MathFunction`) lowered to scalar IR ops at lowering time:
//! component-wise functions map to one ALU op per component; geometric, matrix, bit-field and
//! packing builtins expand into short scalar sequences (T3 shader units: the ALU/SFU split).

use naga::{Expression, Handle, MathFunction as M};

use super::types::{self, Kind, unsupported};
use super::{Lowerer, R, Scope, Value};
use crate::ir::{BinOp, Reg, TerOp, UnOp};

/// The largest literal integer exponent `pow` multiplies out ([`Lowerer::integer_power`]):
/// at most six squarings and six products.
const MAX_POWER: u32 = 64;

impl<'m> Lowerer<'m> {
    pub(super) fn math(
        &mut self,
        scope: &mut Scope<'m>,
        fun: M,
        arg: Handle<Expression>,
        arg1: Option<Handle<Expression>>,
        arg2: Option<Handle<Expression>>,
        arg3: Option<Handle<Expression>>,
    ) -> R<Value> {
        let k = types::kind(self.ty(scope, arg))?;
        let a = self.comps(scope, arg)?;
        let opt = |h: Option<Handle<Expression>>| -> R<Vec<Reg>> {
            match h {
                Some(h) => self.comps(scope, h),
                None => Ok(Vec::new()),
            }
        };
        let b = opt(arg1)?;
        let c = opt(arg2)?;
        let d = opt(arg3)?;
        let pick = |f: BinOp, s: BinOp, u: BinOp| match k {
            Kind::F => f,
            Kind::S => s,
            _ => u,
        };
        let float_un = |op| -> Option<UnOp> { Some(op) };
        let un = match fun {
            M::Cos => float_un(UnOp::FCos),
            M::Cosh => float_un(UnOp::FCosh),
            M::Sin => float_un(UnOp::FSin),
            M::Sinh => float_un(UnOp::FSinh),
            M::Tan => float_un(UnOp::FTan),
            M::Tanh => float_un(UnOp::FTanh),
            M::Acos => float_un(UnOp::FAcos),
            M::Asin => float_un(UnOp::FAsin),
            M::Atan => float_un(UnOp::FAtan),
            M::Asinh => float_un(UnOp::FAsinh),
            M::Acosh => float_un(UnOp::FAcosh),
            M::Atanh => float_un(UnOp::FAtanh),
            M::Radians => float_un(UnOp::FRadians),
            M::Degrees => float_un(UnOp::FDegrees),
            M::Ceil => float_un(UnOp::FCeil),
            M::Floor => float_un(UnOp::FFloor),
            M::Round => float_un(UnOp::FRound),
            M::Fract => float_un(UnOp::FFract),
            M::Trunc => float_un(UnOp::FTrunc),
            M::Exp => float_un(UnOp::FExp),
            M::Exp2 => float_un(UnOp::FExp2),
            M::Log => float_un(UnOp::FLog),
            M::Log2 => float_un(UnOp::FLog2),
            M::Sqrt => float_un(UnOp::FSqrt),
            M::InverseSqrt => float_un(UnOp::FInvSqrt),
            M::Saturate => float_un(UnOp::FSaturate),
            M::QuantizeToF16 => float_un(UnOp::FQuantizeF16),
            M::CountTrailingZeros => Some(UnOp::Ctz),
            M::CountLeadingZeros => Some(UnOp::Clz),
            M::CountOneBits => Some(UnOp::CountOnes),
            M::ReverseBits => Some(UnOp::ReverseBits),
            M::FirstTrailingBit => Some(UnOp::FirstTrailingBit),
            M::FirstLeadingBit => Some(if k == Kind::S {
                UnOp::FirstLeadingBitS
            } else {
                UnOp::FirstLeadingBitU
            }),
            M::Sign => Some(if k == Kind::F {
                UnOp::FSign
            } else {
                UnOp::ISign
            }),
            M::Abs => match k {
                Kind::F => Some(UnOp::FAbs),
                Kind::S => Some(UnOp::IAbs),
                _ => return self.regs_value(&a),
            },
            _ => None,
        };
        if let Some(op) = un {
            return self.map_un(op, &a);
        }
        match fun {
            M::Min => self.map_bin(pick(BinOp::FMin, BinOp::SMin, BinOp::UMin), &a, &b),
            M::Max => self.map_bin(pick(BinOp::FMax, BinOp::SMax, BinOp::UMax), &a, &b),
            M::Clamp => {
                let op = match k {
                    Kind::F => TerOp::FClamp,
                    Kind::S => TerOp::SClamp,
                    _ => TerOp::UClamp,
                };
                self.map_ter(op, &a, &b, &c)
            }
            M::Atan2 => self.map_bin(BinOp::FAtan2, &a, &b),
            M::Pow => match arg1.and_then(|h| self.small_integer_exponent(scope, h)) {
                Some(n) => self.integer_power(&a, n),
                None => self.map_bin(BinOp::FPow, &a, &b),
            },
            M::Step => self.map_bin(BinOp::FStep, &a, &b),
            M::Ldexp => self.map_bin(BinOp::FLdexp, &a, &b),
            M::Fma => self.map_ter(TerOp::Fma, &a, &b, &c),
            M::Mix => self.map_ter(TerOp::Mix, &a, &b, &c),
            M::SmoothStep => self.map_ter(TerOp::SmoothStep, &a, &b, &c),
            M::Modf => {
                let mut out = Vec::with_capacity(2 * a.len());
                let mut whole = Vec::with_capacity(a.len());
                for &x in &a {
                    let w = self.un(UnOp::FTrunc, x)?;
                    out.push(self.bin(BinOp::FSub, x, w)?);
                    whole.push(w);
                }
                out.extend(whole);
                self.regs_value(&out)
            }
            M::Frexp => {
                let mut out = Vec::with_capacity(2 * a.len());
                for &x in &a {
                    out.push(self.un(UnOp::FFrexpMant, x)?);
                }
                for &x in &a {
                    out.push(self.un(UnOp::FFrexpExp, x)?);
                }
                self.regs_value(&out)
            }
            M::Dot => {
                let pairs: Vec<_> = a.iter().copied().zip(b.iter().copied()).collect();
                let r = self.sum_products(&pairs, k)?;
                self.regs_value(&[r])
            }
            M::Dot4I8Packed | M::Dot4U8Packed => {
                let op = if fun == M::Dot4I8Packed {
                    TerOp::ExtractBitsS
                } else {
                    TerOp::ExtractBitsU
                };
                let eight = self.konst(8)?;
                let mut pairs = Vec::with_capacity(4);
                for i in 0..4 {
                    let off = self.konst(8 * i)?;
                    let x = self.ter(op, a[0], off, eight)?;
                    let y = self.ter(op, b[0], off, eight)?;
                    pairs.push((x, y));
                }
                let r = self.sum_products(&pairs, Kind::S)?;
                self.regs_value(&[r])
            }
            M::Cross => {
                let mut out = Vec::with_capacity(3);
                for (i, j) in [(1, 2), (2, 0), (0, 1)] {
                    let p = self.bin(BinOp::FMul, a[i], b[j])?;
                    let q = self.bin(BinOp::FMul, a[j], b[i])?;
                    out.push(self.bin(BinOp::FSub, p, q)?);
                }
                self.regs_value(&out)
            }
            M::Length => {
                let r = self.length(&a)?;
                self.regs_value(&[r])
            }
            M::Distance => {
                let mut diff = Vec::with_capacity(a.len());
                for (&x, &y) in a.iter().zip(&b) {
                    diff.push(self.bin(BinOp::FSub, x, y)?);
                }
                let r = self.length(&diff)?;
                self.regs_value(&[r])
            }
            // A vector times the reciprocal of its length: one division instead of one per
            // component. WGSL inherits normalize's accuracy from e / length(e) (division:
            // 2.5 ulp); the reciprocal and the product are each rounded once, about 1 ulp.
            // A zero vector still gives NaNs (0 · ∞) and an infinite length zeros. A
            // scalar keeps the division: x / |x| is exactly ±1, x · (1 / |x|) not always.
            M::Normalize if a.len() > 1 => {
                let len = self.length(&a)?;
                let one = self.konst(1.0f32.to_bits())?;
                let inv = self.bin(BinOp::FDiv, one, len)?;
                self.map_bin(BinOp::FMul, &a, &[inv])
            }
            M::Normalize => {
                let len = self.length(&a)?;
                self.map_bin(BinOp::FDiv, &a, &[len])
            }
            M::FaceForward => {
                // faceForward(n, i, nref) = dot(nref, i) < 0 ? n : -n
                let pairs: Vec<_> = c.iter().copied().zip(b.iter().copied()).collect();
                let dt = self.sum_products(&pairs, Kind::F)?;
                let zero = self.konst(0)?;
                let neg = self.bin(BinOp::FLt, dt, zero)?;
                let Value::Regs { first, words } = self.map_un(UnOp::FNeg, &a)? else {
                    unreachable!("map_un returns registers")
                };
                let minus: Vec<Reg> = (0..words).map(|k| first.offset(k)).collect();
                self.map_ter(TerOp::Select, &[neg], &a, &minus)
            }
            M::Reflect => {
                // reflect(i, n) = i - 2·dot(n, i)·n
                let pairs: Vec<_> = b.iter().copied().zip(a.iter().copied()).collect();
                let dt = self.sum_products(&pairs, Kind::F)?;
                let two = self.konst(2.0f32.to_bits())?;
                let d2 = self.bin(BinOp::FMul, dt, two)?;
                let mut out = Vec::with_capacity(a.len());
                for (&i, &n) in a.iter().zip(&b) {
                    let p = self.bin(BinOp::FMul, d2, n)?;
                    out.push(self.bin(BinOp::FSub, i, p)?);
                }
                self.regs_value(&out)
            }
            M::Refract => {
                // k = 1 - eta²(1 - dot(n,i)²); k < 0 ? 0 : eta·i - (eta·dot(n,i) + sqrt(k))·n
                let eta = c[0];
                let pairs: Vec<_> = b.iter().copied().zip(a.iter().copied()).collect();
                let dt = self.sum_products(&pairs, Kind::F)?;
                let one = self.konst(1.0f32.to_bits())?;
                let zero = self.konst(0)?;
                let dd = self.bin(BinOp::FMul, dt, dt)?;
                let omd = self.bin(BinOp::FSub, one, dd)?;
                let ee = self.bin(BinOp::FMul, eta, eta)?;
                let t = self.bin(BinOp::FMul, ee, omd)?;
                let kk = self.bin(BinOp::FSub, one, t)?;
                let neg = self.bin(BinOp::FLt, kk, zero)?;
                let s = self.un(UnOp::FSqrt, kk)?;
                let ed = self.bin(BinOp::FMul, eta, dt)?;
                let f = self.bin(BinOp::FAdd, ed, s)?;
                let mut out = Vec::with_capacity(a.len());
                for (&i, &n) in a.iter().zip(&b) {
                    let ei = self.bin(BinOp::FMul, eta, i)?;
                    let fnn = self.bin(BinOp::FMul, f, n)?;
                    let r = self.bin(BinOp::FSub, ei, fnn)?;
                    out.push(self.ter(TerOp::Select, neg, zero, r)?);
                }
                self.regs_value(&out)
            }
            M::Transpose => {
                let naga::TypeInner::Matrix { columns, rows, .. } = *self.ty(scope, arg) else {
                    return unsupported("transpose of a non-matrix");
                };
                let (cols, rows) = (columns as usize, rows as usize);
                let mut out = Vec::with_capacity(cols * rows);
                for r in 0..rows {
                    for c in 0..cols {
                        out.push(a[c * rows + r]);
                    }
                }
                let first = self.copy(&out)?;
                Ok(Value::Regs {
                    first,
                    words: out.len() as u32,
                })
            }
            M::Determinant => {
                let n = (a.len() as f64).sqrt() as usize;
                let r = self.determinant(&a, n)?;
                self.regs_value(&[r])
            }
            M::ExtractBits => {
                let op = if k == Kind::S {
                    TerOp::ExtractBitsS
                } else {
                    TerOp::ExtractBitsU
                };
                self.map_ter(op, &a, &b, &c)
            }
            M::InsertBits => {
                // (e & !mask) | ((newbits << offset) & mask)
                let mask = self.bin(BinOp::BitfieldMask, c[0], d[0])?;
                let inv = self.un(UnOp::Not, mask)?;
                let mut out = Vec::with_capacity(a.len());
                for (&e, &nb) in a.iter().zip(&b) {
                    let keep = self.bin(BinOp::And, e, inv)?;
                    let sh = self.bin(BinOp::Shl, nb, c[0])?;
                    let ins = self.bin(BinOp::And, sh, mask)?;
                    out.push(self.bin(BinOp::Or, keep, ins)?);
                }
                self.regs_value(&out)
            }
            M::Pack4x8snorm => self.pack_norm(&a, -1.0, 127.0, 8, true),
            M::Pack4x8unorm => self.pack_norm(&a, 0.0, 255.0, 8, false),
            M::Pack2x16snorm => self.pack_norm(&a, -1.0, 32767.0, 16, true),
            M::Pack2x16unorm => self.pack_norm(&a, 0.0, 65535.0, 16, false),
            M::Pack2x16float => {
                let h: Vec<Reg> = a
                    .iter()
                    .map(|&x| self.un(UnOp::F32ToF16, x))
                    .collect::<R<_>>()?;
                self.pack_bits(&h, 16)
            }
            M::Pack4xI8 | M::Pack4xU8 => self.pack_bits(&a, 8),
            M::Pack4xI8Clamp => {
                let lo = self.konst(-128i32 as u32)?;
                let hi = self.konst(127)?;
                let Value::Regs { first, .. } = self.map_ter(TerOp::SClamp, &a, &[lo], &[hi])?
                else {
                    unreachable!("map_ter returns registers")
                };
                let cl: Vec<Reg> = (0..4).map(|k| first.offset(k)).collect();
                self.pack_bits(&cl, 8)
            }
            M::Pack4xU8Clamp => {
                let lo = self.konst(0)?;
                let hi = self.konst(255)?;
                let Value::Regs { first, .. } = self.map_ter(TerOp::UClamp, &a, &[lo], &[hi])?
                else {
                    unreachable!("map_ter returns registers")
                };
                let cl: Vec<Reg> = (0..4).map(|k| first.offset(k)).collect();
                self.pack_bits(&cl, 8)
            }
            M::Unpack4x8snorm => self.unpack(a[0], 4, 8, Some((127.0, true))),
            M::Unpack4x8unorm => self.unpack(a[0], 4, 8, Some((255.0, false))),
            M::Unpack2x16snorm => self.unpack(a[0], 2, 16, Some((32767.0, true))),
            M::Unpack2x16unorm => self.unpack(a[0], 2, 16, Some((65535.0, false))),
            M::Unpack2x16float => {
                let Value::Regs { first, .. } = self.unpack(a[0], 2, 16, None)? else {
                    unreachable!("unpack returns registers")
                };
                self.map_un(UnOp::F16ToF32, &[first, first.offset(1)])
            }
            M::Unpack4xI8 => self.unpack_int(a[0], true),
            M::Unpack4xU8 => self.unpack_int(a[0], false),
            M::Outer => unsupported("outerProduct"),
            M::Inverse => unsupported("matrix inverse"),
            _ => Err(crate::CompileError::Unsupported(format!("builtin {fun:?}"))),
        }
    }

    /// The exponent of a `pow` when it is a literal integer from 2 to [`MAX_POWER`]
    /// (`pow(x, 32.0)`, a specular highlight's shininess): such a power is multiplied out.
    fn small_integer_exponent(&self, scope: &Scope<'m>, h: Handle<Expression>) -> Option<u32> {
        let Expression::Literal(naga::Literal::F32(y)) = scope.exprs[h] else {
            return None;
        };
        (y.fract() == 0.0 && (2.0..=MAX_POWER as f32).contains(&y)).then_some(y as u32)
    }

    /// x^n for each component of `x`, by repeated squaring (x², x⁴, …) and one product per
    /// further set bit of `n` — what shader compilers do with a constant integer exponent.
    /// Each product is rounded once, and an error in x^k grows n/k-fold on the way to x^n:
    /// within about (n − 1)/2 ulp of the exact power (exact for x a power of two), inside
    /// WGSL's bound for `pow` (inherited from exp2(y · log2 x)) and the special-function
    /// unit's own 1 + n ulp. For negative x it is the power itself, as C's `pow` gives it.
    fn integer_power(&mut self, x: &[Reg], n: u32) -> R<Value> {
        let mut out = Vec::with_capacity(x.len());
        for &x in x {
            let (mut square, mut acc) = (x, None);
            let mut rest = n;
            loop {
                if rest & 1 != 0 {
                    acc = Some(match acc {
                        None => square,
                        Some(a) => self.bin(BinOp::FMul, a, square)?,
                    });
                }
                rest >>= 1;
                if rest == 0 {
                    break;
                }
                square = self.bin(BinOp::FMul, square, square)?;
            }
            out.push(acc.expect("n ≥ 2 has a set bit"));
        }
        self.regs_value(&out)
    }

    fn length(&mut self, v: &[Reg]) -> R<Reg> {
        if v.len() == 1 {
            return self.un(UnOp::FAbs, v[0]);
        }
        let pairs: Vec<_> = v.iter().map(|&x| (x, x)).collect();
        let s = self.sum_products(&pairs, Kind::F)?;
        self.un(UnOp::FSqrt, s)
    }

    /// Determinant of the `n×n` column-major matrix in `m`, by cofactor expansion along the
    /// first column.
    fn determinant(&mut self, m: &[Reg], n: usize) -> R<Reg> {
        if n == 1 {
            return Ok(m[0]);
        }
        let mut acc: Option<Reg> = None;
        for r in 0..n {
            let mut minor = Vec::with_capacity((n - 1) * (n - 1));
            for c in 1..n {
                for rr in (0..n).filter(|&rr| rr != r) {
                    minor.push(m[c * n + rr]);
                }
            }
            let sub = self.determinant(&minor, n - 1)?;
            let term = self.bin(BinOp::FMul, m[r], sub)?;
            acc = Some(match acc {
                None => term,
                Some(a) if r % 2 == 1 => self.bin(BinOp::FSub, a, term)?,
                Some(a) => self.bin(BinOp::FAdd, a, term)?,
            });
        }
        Ok(acc.unwrap_or(m[0]))
    }

    /// `Σ (x_i & mask(bits)) << (bits·i)`.
    fn pack_bits(&mut self, x: &[Reg], bits: u32) -> R<Value> {
        let mask = self.konst(if bits == 32 {
            u32::MAX
        } else {
            (1 << bits) - 1
        })?;
        let mut acc: Option<Reg> = None;
        for (i, &v) in x.iter().enumerate() {
            let m = self.bin(BinOp::And, v, mask)?;
            let sh = self.konst(bits * i as u32)?;
            let s = self.bin(BinOp::Shl, m, sh)?;
            acc = Some(match acc {
                None => s,
                Some(a) => self.bin(BinOp::Or, a, s)?,
            });
        }
        let r = acc.unwrap_or(mask);
        self.regs_value(&[r])
    }

    /// WGSL packNxMsnorm/unorm: `⌊0.5 + clamp(x, lo, 1) · scale⌋` per component, packed.
    fn pack_norm(&mut self, x: &[Reg], lo: f32, scale: f32, bits: u32, signed: bool) -> R<Value> {
        let lo = self.konst(lo.to_bits())?;
        let hi = self.konst(1.0f32.to_bits())?;
        let sc = self.konst(scale.to_bits())?;
        let half = self.konst(0.5f32.to_bits())?;
        let mut q = Vec::with_capacity(x.len());
        for &v in x {
            let c = self.ter(TerOp::FClamp, v, lo, hi)?;
            let s = self.bin(BinOp::FMul, c, sc)?;
            let h = self.bin(BinOp::FAdd, s, half)?;
            let r = self.un(UnOp::FFloor, h)?;
            q.push(self.un(if signed { UnOp::F2I } else { UnOp::F2U }, r)?);
        }
        self.pack_bits(&q, bits)
    }

    /// Splits `x` into `n` fields of `bits`; with `norm = Some((scale, signed))` converts each
    /// to a normalised float, else returns the raw unsigned fields.
    fn unpack(&mut self, x: Reg, n: u32, bits: u32, norm: Option<(f32, bool)>) -> R<Value> {
        let width = self.konst(bits)?;
        let signed = norm.is_some_and(|(_, s)| s);
        let op = if signed {
            TerOp::ExtractBitsS
        } else {
            TerOp::ExtractBitsU
        };
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n {
            let off = self.konst(bits * i)?;
            let field = self.ter(op, x, off, width)?;
            out.push(match norm {
                None => field,
                Some((scale, signed)) => {
                    let f = self.un(if signed { UnOp::I2F } else { UnOp::U2F }, field)?;
                    let s = self.konst(scale.to_bits())?;
                    let q = self.bin(BinOp::FDiv, f, s)?;
                    if signed {
                        let m1 = self.konst((-1.0f32).to_bits())?;
                        self.bin(BinOp::FMax, q, m1)?
                    } else {
                        q
                    }
                }
            });
        }
        self.regs_value(&out)
    }

    fn unpack_int(&mut self, x: Reg, signed: bool) -> R<Value> {
        let width = self.konst(8)?;
        let op = if signed {
            TerOp::ExtractBitsS
        } else {
            TerOp::ExtractBitsU
        };
        let mut out = Vec::with_capacity(4);
        for i in 0..4 {
            let off = self.konst(8 * i)?;
            out.push(self.ter(op, x, off, width)?);
        }
        self.regs_value(&out)
    }
}
