//! Scalar ALU semantics of rastra IR ops (T3 "Shader Unit internals": the ALU a warp issues to).
//!
//! Every op is defined exactly once, as a closure over raw 32-bit register values, in the
//! tables below. The tables generate the op enums plus two executors: [`UnOp::eval`] (one
//! value, used by the reference interpreter) and `eval_lanes` (one warp register, a tight loop
//! over [`WARP_LANES`] the compiler can vectorise, used by the warp interpreter). Both paths
//! therefore share arithmetic semantics by construction; differential tests check control flow
//! and register plumbing, direct-value tests check the semantics.
//!
//! Semantics follow WGSL and never trap: `x / 0 == x`, `x % 0 == 0`, `i32::MIN / -1 ==
//! i32::MIN`, shift amounts are masked to 5 bits, float→int conversions saturate (NaN → 0),
//! booleans are 0 or 1.

use crate::WARP_LANES;

#[inline(always)]
fn f(x: u32) -> f32 {
    f32::from_bits(x)
}
#[inline(always)]
fn fb(x: f32) -> u32 {
    x.to_bits()
}
#[inline(always)]
fn i(x: u32) -> i32 {
    x as i32
}
#[inline(always)]
fn bl(x: bool) -> u32 {
    x as u32
}

/// Converts an f32 to IEEE binary16 bits, rounding to nearest even; overflow gives infinity.
pub fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 0xff {
        // Inf or NaN (keep NaN quiet and non-zero).
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        // Subnormal half (or zero): shift the full mantissa including the implicit bit.
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let round = rem > mid || (rem == mid && (half & 1) == 1);
        return sign | (half as u16 + round as u16);
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    let round = rem > 0x1000 || (rem == 0x1000 && (half & 1) == 1);
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    sign | (half + round as u32) as u16
}

/// Converts IEEE binary16 bits to f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = if exp == 0 {
        if man == 0 {
            sign
        } else {
            // Subnormal: value = man * 2^-24.
            let v = man as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
    } else if exp == 0x1f {
        sign | 0x7f80_0000 | (man << 13)
    } else {
        sign | ((exp + 127 - 15) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

fn fsign(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

fn frexp_parts(x: f32) -> (f32, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (x, bias) = if x.abs() < f32::MIN_POSITIVE {
        (x * 16_777_216.0, 24)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 126;
    let mant = f32::from_bits((bits & 0x807f_ffff) | (126 << 23));
    (mant, exp - bias)
}

fn ldexp(x: f32, e: i32) -> f32 {
    let mut x = x;
    let mut e = e.clamp(-400, 400);
    while e > 127 {
        x *= f32::from_bits(0x7f00_0000); // 2^127
        e -= 127;
    }
    while e < -126 {
        x *= f32::from_bits(0x0080_0000); // 2^-126
        e += 126;
    }
    x * f32::from_bits(((e + 127) as u32) << 23)
}

fn sdiv(a: i32, b: i32) -> i32 {
    if b == 0 { a } else { a.wrapping_div(b) }
}
fn srem(a: i32, b: i32) -> i32 {
    if b == 0 { 0 } else { a.wrapping_rem(b) }
}

fn first_leading_bit_s(x: i32) -> u32 {
    let v = if x < 0 { !x } else { x } as u32;
    if v == 0 {
        u32::MAX
    } else {
        31 - v.leading_zeros()
    }
}
fn first_leading_bit_u(v: u32) -> u32 {
    if v == 0 {
        u32::MAX
    } else {
        31 - v.leading_zeros()
    }
}

fn extract_bits(e: u32, offset: u32, count: u32, signed: bool) -> u32 {
    let o = offset.min(32);
    let c = count.min(32 - o);
    if c == 0 {
        return 0;
    }
    let shifted = ((e as u64) >> o) as u32;
    if c == 32 {
        return shifted;
    }
    let mask = (1u32 << c) - 1;
    let v = shifted & mask;
    if signed && (v >> (c - 1)) & 1 == 1 {
        v | !mask
    } else {
        v
    }
}

/// The mask WGSL `insertBits(e, newbits, offset, count)` replaces.
fn bitfield_mask(offset: u32, count: u32) -> u32 {
    let o = offset.min(32);
    let c = count.min(32 - o);
    if c == 0 {
        0
    } else {
        (((1u64 << c) - 1) << o) as u32
    }
}

fn smoothstep(lo: f32, hi: f32, x: f32) -> f32 {
    let t = ((x - lo) / (hi - lo)).clamp(0.0, 1.0);
    let t = if t.is_nan() { 0.0 } else { t };
    t * t * (3.0 - 2.0 * t)
}

/// The body of `eval_lanes` for one op: its own lane function when the table gives one
/// (`Op => scalar => lanes`, which must compute the scalar closure's bits on every lane),
/// else the scalar closure in a loop over the lanes.
macro_rules! lanes_of {
    ($f:expr; $out:ident, $l:ident, $largs:tt, $lcall:tt) => {{
        let op = $f;
        for $l in 0..WARP_LANES {
            $out[$l] = op $largs;
        }
    }};
    ($f:expr, $lanes:expr; $out:ident, $l:ident, $largs:tt, $lcall:tt) => {
        ($lanes) $lcall
    };
}

macro_rules! op_table {
    ($enum:ident, $me:tt, $out:ident, $sig:tt, $args:tt, $lsig:tt, $l:ident, $largs:tt,
     $lcall:tt,
     { $( $(#[doc = $doc:literal])* $name:ident => $f:expr $(=> $lanes:expr)?, )* }) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $enum {
            $( $(#[doc = $doc])* $name, )*
        }

        impl $enum {
            /// Applies the op to one lane's values.
            #[allow(clippy::redundant_closure_call)]
            pub fn eval $sig -> u32 {
                match $me {
                    $( $enum::$name => ($f) $args, )*
                }
            }

            /// Applies the op to all lanes of a warp register (inactive lanes included: ops
            /// are pure and never trap). Always inlined, so the warp interpreter's AVX2
            /// version (`rastra_texture::cpu`) compiles the lane loops for AVX2 too.
            #[inline(always)]
            #[allow(clippy::redundant_closure_call)]
            pub fn eval_lanes $lsig {
                match $me {
                    $( $enum::$name => lanes_of!($f $(, $lanes)?; $out, $l, $largs, $lcall), )*
                }
            }
        }
    };
}

op_table!(UnOp, self, out, (self, a: u32), (a),
    (self, a: &[u32; WARP_LANES], out: &mut [u32; WARP_LANES]), l, (a[l]), (a, out), {
    /// f32 negation.
    FNeg => |a: u32| fb(-f(a)),
    FAbs => |a: u32| fb(f(a).abs()),
    FFloor => |a: u32| fb(f(a).floor()),
    FCeil => |a: u32| fb(f(a).ceil()),
    /// Round half to even.
    FRound => |a: u32| fb(f(a).round_ties_even()),
    FTrunc => |a: u32| fb(f(a).trunc()),
    /// `x - floor(x)`.
    FFract => |a: u32| fb(f(a) - f(a).floor()),
    FSqrt => |a: u32| fb(f(a).sqrt()),
    FInvSqrt => |a: u32| fb(1.0 / f(a).sqrt()),
    FExp => |a: u32| fb(f(a).exp()),
    FExp2 => |a: u32| fb(f(a).exp2()),
    FLog => |a: u32| fb(f(a).ln()),
    FLog2 => |a: u32| fb(f(a).log2()),
    /// Range reduction and polynomials (`trig`), the C library beyond |x| = 8192.
    FSin => |a: u32| fb(crate::trig::sin(f(a))) => crate::trig::sin_lanes,
    FCos => |a: u32| fb(crate::trig::cos(f(a))) => crate::trig::cos_lanes,
    FTan => |a: u32| fb(f(a).tan()),
    FAsin => |a: u32| fb(f(a).asin()),
    FAcos => |a: u32| fb(f(a).acos()),
    FAtan => |a: u32| fb(f(a).atan()),
    FSinh => |a: u32| fb(f(a).sinh()),
    FCosh => |a: u32| fb(f(a).cosh()),
    FTanh => |a: u32| fb(f(a).tanh()),
    /// Evaluated in f64: f32's `asinh`/`acosh` overflow for large inputs.
    FAsinh => |a: u32| fb((f(a) as f64).asinh() as f32),
    FAcosh => |a: u32| fb((f(a) as f64).acosh() as f32),
    FAtanh => |a: u32| fb(f(a).atanh()),
    FRadians => |a: u32| fb(f(a) * (std::f32::consts::PI / 180.0)),
    FDegrees => |a: u32| fb(f(a) * (180.0 / std::f32::consts::PI)),
    /// -1, 0 or 1 (0 for ±0 and NaN).
    FSign => |a: u32| fb(fsign(f(a))),
    FSaturate => |a: u32| fb(f(a).clamp(0.0, 1.0).max(0.0)),
    /// Round to the nearest f16 and back.
    FQuantizeF16 => |a: u32| fb(f16_to_f32(f32_to_f16(f(a)))),
    /// f32 → binary16 bits in the low half.
    F32ToF16 => |a: u32| f32_to_f16(f(a)) as u32,
    /// Low 16 bits as binary16 → f32.
    F16ToF32 => |a: u32| fb(f16_to_f32(a as u16)),
    /// Mantissa part of `frexp` (in ±[0.5, 1)).
    FFrexpMant => |a: u32| fb(frexp_parts(f(a)).0),
    /// Exponent part of `frexp`.
    FFrexpExp => |a: u32| frexp_parts(f(a)).1 as u32,
    FIsNan => |a: u32| bl(f(a).is_nan()),
    FIsInf => |a: u32| bl(f(a).is_infinite()),
    /// f32 → i32 toward zero, NaN → 0; out-of-range values clamp to the nearest integer f32
    /// can represent (WGSL: [−2^31, 2^31 − 128]).
    F2I => |a: u32| (f(a).clamp(-2_147_483_648.0, 2_147_483_520.0) as i32) as u32,
    /// f32 → u32 toward zero, NaN → 0; out-of-range values clamp to [0, 2^32 − 256].
    F2U => |a: u32| f(a).clamp(0.0, 4_294_967_040.0) as u32,
    I2F => |a: u32| fb(i(a) as f32),
    U2F => |a: u32| fb(a as f32),
    /// bool → f32 (0.0 or 1.0).
    B2F => |a: u32| fb(if a != 0 { 1.0 } else { 0.0 }),
    /// f32 → bool (`x != 0`, NaN is true).
    F2B => |a: u32| bl(f(a) != 0.0),
    /// i32/u32 → bool.
    I2B => |a: u32| bl(a != 0),
    /// Wrapping two's-complement negation.
    INeg => |a: u32| i(a).wrapping_neg() as u32,
    IAbs => |a: u32| i(a).wrapping_abs() as u32,
    ISign => |a: u32| i(a).signum() as u32,
    Not => |a: u32| !a,
    /// Boolean not of a 0/1 value.
    LNot => |a: u32| bl(a == 0),
    CountOnes => |a: u32| a.count_ones(),
    ReverseBits => |a: u32| a.reverse_bits(),
    Clz => |a: u32| a.leading_zeros(),
    Ctz => |a: u32| a.trailing_zeros(),
    FirstLeadingBitS => |a: u32| first_leading_bit_s(i(a)),
    FirstLeadingBitU => |a: u32| first_leading_bit_u(a),
    FirstTrailingBit => |a: u32| if a == 0 { u32::MAX } else { a.trailing_zeros() },
});

op_table!(BinOp, self, out, (self, a: u32, b: u32), (a, b),
    (self, a: &[u32; WARP_LANES], b: &[u32; WARP_LANES], out: &mut [u32; WARP_LANES]), l, (a[l], b[l]), (a, b, out), {
    FAdd => |a: u32, b: u32| fb(f(a) + f(b)),
    FSub => |a: u32, b: u32| fb(f(a) - f(b)),
    FMul => |a: u32, b: u32| fb(f(a) * f(b)),
    FDiv => |a: u32, b: u32| fb(f(a) / f(b)),
    /// Truncated remainder (sign of the dividend).
    FRem => |a: u32, b: u32| fb(f(a) % f(b)),
    /// `min`: b when b < a or a is NaN, else a (so a NaN operand gives the other, and
    /// equal operands — ±0 — give a: what `f32::min` does on x86-64, made explicit so the
    /// compiled code can do the same).
    FMin => |a: u32, b: u32| if f(b) < f(a) || f(a).is_nan() { b } else { a },
    /// `max`: b when b > a or a is NaN, else a (as `FMin`).
    FMax => |a: u32, b: u32| if f(b) > f(a) || f(a).is_nan() { b } else { a },
    /// exp2(b · log2 a) as the special-function unit computes it (`pow`), the C library
    /// outside its domain.
    FPow => |a: u32, b: u32| fb(crate::pow::pow(f(a), f(b))) => crate::pow::pow_lanes,
    /// `atan2(y = a, x = b)`.
    FAtan2 => |a: u32, b: u32| fb(f(a).atan2(f(b))),
    /// `step(edge = a, x = b)`.
    FStep => |a: u32, b: u32| fb(if f(b) >= f(a) { 1.0 } else { 0.0 }),
    /// `ldexp(a, b as i32)`.
    FLdexp => |a: u32, b: u32| fb(ldexp(f(a), i(b))),
    FEq => |a: u32, b: u32| bl(f(a) == f(b)),
    FNe => |a: u32, b: u32| bl(f(a) != f(b)),
    FLt => |a: u32, b: u32| bl(f(a) < f(b)),
    FLe => |a: u32, b: u32| bl(f(a) <= f(b)),
    FGt => |a: u32, b: u32| bl(f(a) > f(b)),
    FGe => |a: u32, b: u32| bl(f(a) >= f(b)),
    IAdd => |a: u32, b: u32| a.wrapping_add(b),
    ISub => |a: u32, b: u32| a.wrapping_sub(b),
    IMul => |a: u32, b: u32| a.wrapping_mul(b),
    /// Signed division: `x / 0 == x`, `MIN / -1 == MIN`.
    SDiv => |a: u32, b: u32| sdiv(i(a), i(b)) as u32,
    UDiv => |a: u32, b: u32| a.checked_div(b).unwrap_or(a),
    /// Signed remainder: `x % 0 == 0`.
    SRem => |a: u32, b: u32| srem(i(a), i(b)) as u32,
    URem => |a: u32, b: u32| a.checked_rem(b).unwrap_or(0),
    SMin => |a: u32, b: u32| i(a).min(i(b)) as u32,
    SMax => |a: u32, b: u32| i(a).max(i(b)) as u32,
    UMin => |a: u32, b: u32| a.min(b),
    UMax => |a: u32, b: u32| a.max(b),
    /// Saturating unsigned subtraction.
    USubSat => |a: u32, b: u32| a.saturating_sub(b),
    And => |a: u32, b: u32| a & b,
    Or => |a: u32, b: u32| a | b,
    Xor => |a: u32, b: u32| a ^ b,
    /// Shift amount masked to 5 bits.
    Shl => |a: u32, b: u32| a << (b & 31),
    ShrS => |a: u32, b: u32| (i(a) >> (b & 31)) as u32,
    ShrU => |a: u32, b: u32| a >> (b & 31),
    IEq => |a: u32, b: u32| bl(a == b),
    INe => |a: u32, b: u32| bl(a != b),
    SLt => |a: u32, b: u32| bl(i(a) < i(b)),
    SLe => |a: u32, b: u32| bl(i(a) <= i(b)),
    SGt => |a: u32, b: u32| bl(i(a) > i(b)),
    SGe => |a: u32, b: u32| bl(i(a) >= i(b)),
    ULt => |a: u32, b: u32| bl(a < b),
    ULe => |a: u32, b: u32| bl(a <= b),
    UGt => |a: u32, b: u32| bl(a > b),
    UGe => |a: u32, b: u32| bl(a >= b),
    /// Mask of `count = b` bits at `offset = a`, both clamped as in WGSL `insertBits`.
    BitfieldMask => |a: u32, b: u32| bitfield_mask(a, b),
});

op_table!(TerOp, self, out, (self, a: u32, b: u32, c: u32), (a, b, c),
    (self, a: &[u32; WARP_LANES], b: &[u32; WARP_LANES], c: &[u32; WARP_LANES], out: &mut [u32; WARP_LANES]), l, (a[l], b[l], c[l]), (a, b, c, out), {
    /// `a != 0 ? b : c`.
    Select => |a: u32, b: u32, c: u32| if a != 0 { b } else { c },
    Fma => |a: u32, b: u32, c: u32| fb(f(a).mul_add(f(b), f(c))),
    /// `min(max(a, b), c)`.
    FClamp => |a: u32, b: u32, c: u32| fb(f(a).max(f(b)).min(f(c))),
    SClamp => |a: u32, b: u32, c: u32| i(a).max(i(b)).min(i(c)) as u32,
    UClamp => |a: u32, b: u32, c: u32| a.max(b).min(c),
    /// `a * (1 - c) + b * c`.
    Mix => |a: u32, b: u32, c: u32| fb(f(a) * (1.0 - f(c)) + f(b) * f(c)),
    /// `smoothstep(low = a, high = b, x = c)`.
    SmoothStep => |a: u32, b: u32, c: u32| fb(smoothstep(f(a), f(b), f(c))),
    /// `extractBits(e = a, offset = b, count = c)` sign-extending.
    ExtractBitsS => |a: u32, b: u32, c: u32| extract_bits(a, b, c, true),
    ExtractBitsU => |a: u32, b: u32, c: u32| extract_bits(a, b, c, false),
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trip() {
        for x in [0.0f32, -0.0, 1.0, -2.5, 65504.0, 1e-7, 6.1e-5, 0.1] {
            let h = f32_to_f16(x);
            let back = f16_to_f32(h);
            assert!((back - x).abs() <= x.abs() * 1e-3 + 6e-8, "{x} -> {back}");
        }
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
        assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
    }

    #[test]
    fn integer_edges() {
        assert_eq!(BinOp::SDiv.eval(i32::MIN as u32, u32::MAX), i32::MIN as u32);
        assert_eq!(BinOp::SDiv.eval(7, 0), 7);
        assert_eq!(BinOp::SRem.eval(7, 0), 0);
        assert_eq!(BinOp::SRem.eval(i32::MIN as u32, u32::MAX), 0);
        assert_eq!(BinOp::Shl.eval(1, 33), 2);
        assert_eq!(UnOp::F2I.eval(f32::NAN.to_bits()), 0);
        assert_eq!(UnOp::F2I.eval(1e20f32.to_bits()), 2_147_483_520);
        assert_eq!(UnOp::F2I.eval((-1e20f32).to_bits()), i32::MIN as u32);
        assert_eq!(UnOp::F2U.eval(1e20f32.to_bits()), 4_294_967_040);
        assert_eq!(UnOp::F2U.eval(3e9f32.to_bits()), 3_000_000_000);
        assert_eq!(UnOp::F2U.eval((-5.0f32).to_bits()), 0);
        assert_eq!(TerOp::ExtractBitsS.eval(0xf0, 4, 4), u32::MAX);
        assert_eq!(TerOp::ExtractBitsU.eval(0xf0, 4, 4), 0xf);
        assert_eq!(BinOp::BitfieldMask.eval(4, 8), 0xff0);
        assert_eq!(BinOp::BitfieldMask.eval(0, 32), u32::MAX);
        assert_eq!(UnOp::FirstLeadingBitS.eval(u32::MAX), u32::MAX);
        assert_eq!(UnOp::FirstLeadingBitS.eval(-2i32 as u32), 0);
    }

    #[test]
    fn frexp_ldexp() {
        let (m, e) = frexp_parts(8.0);
        assert_eq!((m, e), (0.5, 4));
        assert_eq!(ldexp(0.5, 4), 8.0);
        assert_eq!(ldexp(1.0, 200), f32::INFINITY);
        let tiny = f32::from_bits(1);
        let (m, e) = frexp_parts(tiny);
        assert_eq!(ldexp(m, e), tiny);
    }
}
