//! `pow` for the shader ALU as a special-function unit computes it (T3 "Shader Unit
//! internals": transcendentals come from short range reductions and polynomials, not a
//! library call per lane): x^y = exp2(y · log2 x), which is also how WGSL states its
//! accuracy ("inherited from exp2(e2 * log2(e1))").
//!
//! log2 x: x = m·2^e with m ∈ [√½, √2), and log2 m from ln(1 + z), z = m − 1, by the
//! classic single-precision minimax polynomial of Moshier's Cephes library (`logf`,
//! evaluated by Estrin's scheme: short dependent chains), its
//! product with log2(e) split as z + z·(log2(e) − 1) so the leading terms lose nothing;
//! t = y · (e + log2 m) in double precision. exp2 t: t = n + f with n the nearest integer
//! and f ∈ [−½, ½], 2^f by Cephes' `exp2f` polynomial, and 2^n put in as two exact
//! power-of-two factors, or — for a subnormal result — the rounded mantissa built directly
//! (no arithmetic ever produces a subnormal: x86 handles those in slow microcode). Only IEEE additions,
//! multiplications, conversions and bit operations, no fused multiply-add and no branch:
//! every CPU and both compiled versions of the warp
//! loop (`rastra_texture::cpu`) give the same bits, and [`pow_lanes`] vectorises (eight
//! lanes per instruction with AVX2).
//!
//! The polynomials cover x ≥ 0 finite and y finite (x = +0 gives what IEEE `pow` gives:
//! +0 for y > 0, +∞ for y < 0, 1 for y = 0). Any other lane — x negative (−0 included),
//! infinite or NaN, y infinite or NaN — goes to the C library, whose results WGSL leaves
//! open there anyway. Accuracy (tested against f64 wherever the result is a normal number):
//! within 1 + |y| ulp of the exact power and within 2 + 2·|y · log2 x| (WGSL's exp2 alone
//! may be 3 + 2·|t| ulp off), within 1 ulp where |y · log2 x| ≤ 1; exactly 1 for y = 0 or
//! x = 1, and exact powers of two for x a power of two and y an integer.

use crate::WARP_LANES;

/// ln(1 + z) ≈ z − z²/2 + z³·P(z) on z ∈ [√½ − 1, √2 − 1] (Cephes `logf`), highest
/// power first.
const LOG_P: [f32; 9] = [
    7.037_683_6e-2,
    -1.151_461e-1,
    1.167_699_9e-1,
    -1.242_014_1e-1,
    1.424_932_3e-1,
    -1.666_805_8e-1,
    2.000_071_4e-1,
    -2.499_999_4e-1,
    3.333_333e-1,
];

/// log2(e) − 1.
const LOG2E_MINUS_1: f32 = 0.442_695_04;

/// 2^f ≈ 1 + f·P(f) on f ∈ [−½, ½] (Cephes `exp2f`), highest power first.
const EXP2_P: [f32; 6] = [
    1.535_336_2e-4,
    1.339_887_4e-3,
    9.618_437e-3,
    5.550_332_5e-2,
    2.402_264_8e-1,
    6.931_472e-1,
];

/// √½: mantissas in [½, 1) below it are doubled (one exponent less), so m ∈ [√½, √2).
const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// Added and removed to round |t| < 2⁵¹ to the nearest integer (ties to even): 1.5·2⁵².
const ROUNDER: f64 = 6_755_399_441_055_744.0;

/// Added to a value in [0, 2²³] to round it to an integer (ties to even), which is then the
/// sum's bits less 2²³'s.
const SUBNORMAL_ROUNDER: f32 = 8_388_608.0;

/// |y · log2 x| is clamped here: 2^±250 already overflows or underflows f32, and halves of
/// the integer part stay inside the normal exponents.
const T_LIMIT: f64 = 250.0;

/// Σ c[8 − k]·z^k (the coefficients highest power first, z² given) by Estrin's scheme:
/// pairs of terms, then pairs of pairs — a dependent chain of four multiply-adds instead of
/// Horner's nine (what limits a vector of lanes is that chain, not the operation count).
#[inline(always)]
fn estrin9(c: &[f32; 9], z: f32, z2: f32) -> f32 {
    let a = |k: usize| c[8 - k];
    let z4 = z2 * z2;
    let low = (a(0) + a(1) * z) + (a(2) + a(3) * z) * z2;
    let high = (a(4) + a(5) * z) + (a(6) + a(7) * z) * z2;
    (low + high * z4) + a(8) * (z4 * z4)
}

/// x = 2^e · (1 + z) for x > 0 finite (subnormals included), with 1 + z ∈ [√½, √2), so
/// log2 x = e + log2(1 + z). Meaningless for other x.
#[inline(always)]
fn split(x: f32) -> (i32, f32) {
    // Subnormals scaled into the normal range first (exactly).
    let sub = x.to_bits() < 0x0080_0000;
    let x = if sub { x * 8_388_608.0 } else { x };
    let bits = x.to_bits();
    // x = m·2^e, m ∈ [½, 1).
    let e = (bits >> 23) as i32 - 126 - if sub { 23 } else { 0 };
    let m = f32::from_bits(bits & 0x007f_ffff | 0x3f00_0000);
    let low = m < SQRT_HALF;
    let e = if low { e - 1 } else { e };
    // Both exact: m + m − 1 for m ∈ [½, √½), m − 1 for m ∈ [√½, 1).
    (e, if low { (m + m) - 1.0 } else { m - 1.0 })
}

/// log2(1 + z) for z ∈ [√½ − 1, √2 − 1].
#[inline(always)]
fn log2_1p(z: f32) -> f32 {
    let zz = z * z;
    let r = z * (zz * estrin9(&LOG_P, z, zz)) - 0.5 * zz;
    // (r + z) · log2(e), the small products first.
    let t = r * LOG2E_MINUS_1 + z * LOG2E_MINUS_1;
    (t + r) + z
}

/// y · log2 x = n + f, n an integer and f ∈ [−½, ½], for x > 0 finite and y finite
/// (meaningless otherwise). t = y · (e + l) is formed in double precision, where e + l and
/// the product lose nothing, so the result's error does not grow with the exponent of x;
/// |t| is clamped to [`T_LIMIT`].
#[inline(always)]
fn exponent(e: i32, l: f32, y: f32) -> (i32, f32) {
    let t = (y as f64 * (e as f64 + l as f64)).clamp(-T_LIMIT, T_LIMIT);
    let r = t + ROUNDER;
    // r = 1.5·2⁵² + n exactly: n is in r's low bits.
    let n = r.to_bits() as u32 as i32;
    (n, (t - (r - ROUNDER)) as f32)
}

/// 2^(n + f) for |n| ≤ 250 and f ∈ [−½, ½]: v = 2^f by the polynomial, then scaled by
/// 2^n without ever making a subnormal or underflowing product (x86 takes a slow microcode
/// path for those, and small powers — a specular term's — are common). A normal result is
/// v · 2^h · 2^(n − h) (both factors normal, the first product exact, the second rounding
/// once; large n overflows to +∞); a subnormal one is built from its bits: the nearest
/// integer (ties to even) to v · 2^(n + 149), a normal number below 2²³, is the mantissa
/// of v · 2^n on the subnormal grid of 2^−149 — what rounding the exact product gives.
#[inline(always)]
fn exp2(n: i32, f: f32) -> f32 {
    // The polynomial by pairs of terms (Estrin's scheme): three independent short chains
    // instead of one of six multiply-adds.
    let c = |k: usize| EXP2_P[5 - k];
    let f2 = f * f;
    let p = ((c(0) + c(1) * f) + (c(2) + c(3) * f) * f2) + (c(4) + c(5) * f) * (f2 * f2);
    let v = 1.0 + f * p;
    let scale = |k: i32| f32::from_bits(((k + 127) as u32) << 23);
    // v ∈ [√½, √2]: v · 2^n is normal for n ≥ −125, and for n = −126 when v ≥ 1.
    let normal = n > -126 || (n == -126 && v >= 1.0);
    let na = if normal { n } else { 0 };
    let h = na >> 1;
    let big = (v * scale(h)) * scale(na - h);
    // Below 2^−160 everything rounds to 0.
    let w = v * scale(n.clamp(-160, -126) + 149);
    let tiny = f32::from_bits((w + SUBNORMAL_ROUNDER).to_bits() - SUBNORMAL_ROUNDER.to_bits());
    if normal { big } else { tiny }
}

/// The result for x and y given v = exp2(y · log2 x): the cases the polynomials do not
/// give as IEEE `pow` does — y = 0 (1), x = +0 (+0 for y > 0, +∞ for y < 0).
#[inline(always)]
fn finish(x: f32, y: f32, v: f32) -> f32 {
    let zero = if y > 0.0 { 0.0 } else { f32::INFINITY };
    let v = if x.to_bits() == 0 { zero } else { v };
    if y == 0.0 { 1.0 } else { v }
}

/// x^y where [`in_domain`] holds; meaningless elsewhere. Branch-free.
#[inline(always)]
fn reduced(x: f32, y: f32) -> f32 {
    let (e, z) = split(x);
    let (n, f) = exponent(e, log2_1p(z), y);
    finish(x, y, exp2(n, f))
}

/// x ≥ 0 finite (−0 excluded) and y finite.
#[inline(always)]
fn in_domain(x: f32, y: f32) -> bool {
    x.to_bits() < 0x7f80_0000 && y.abs() < f32::INFINITY
}

/// x^y.
#[inline(always)]
pub(crate) fn pow(x: f32, y: f32) -> f32 {
    if in_domain(x, y) {
        reduced(x, y)
    } else {
        x.powf(y)
    }
}

/// [`pow`] of every lane of two warp registers (raw bits): the polynomials on all lanes at
/// once, then the library for the lanes outside their domain. [`reduced`]'s steps run one
/// at a time over the whole warp (the same operations on each lane, so the same bits).
#[inline(always)]
pub(crate) fn pow_lanes(a: &[u32; WARP_LANES], b: &[u32; WARP_LANES], out: &mut [u32; WARP_LANES]) {
    let x: [f32; WARP_LANES] = a.map(f32::from_bits);
    let y: [f32; WARP_LANES] = b.map(f32::from_bits);
    // Each step over all lanes before the next, kept apart by an optimisation barrier: the
    // compiler would otherwise merge the loops and lay each vector's whole dependent chain
    // after the previous one's, more than the processor can overlap (a warp took 111 ns
    // that way, 76–80 ns with the steps apart, against 150 ns for the C library's powf
    // lane by lane, on the development machine).
    let mut e = [0i32; WARP_LANES];
    let mut z = [0f32; WARP_LANES];
    for k in 0..WARP_LANES {
        (e[k], z[k]) = split(x[k]);
    }
    std::hint::black_box((&mut e, &mut z));
    let mut l = [0f32; WARP_LANES];
    for k in 0..WARP_LANES {
        l[k] = log2_1p(z[k]);
    }
    std::hint::black_box(&mut l);
    let mut n = [0i32; WARP_LANES];
    let mut f = [0f32; WARP_LANES];
    for k in 0..WARP_LANES {
        (n[k], f[k]) = exponent(e[k], l[k], y[k]);
    }
    std::hint::black_box((&mut n, &mut f));
    let mut outside = false;
    for k in 0..WARP_LANES {
        out[k] = finish(x[k], y[k], exp2(n[k], f[k])).to_bits();
        outside |= !in_domain(x[k], y[k]);
    }
    if outside {
        for k in 0..WARP_LANES {
            if !in_domain(x[k], y[k]) {
                out[k] = x[k].powf(y[k]).to_bits();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in representable floats between two positive finite values.
    fn ulps(a: f32, b: f32) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    #[test]
    fn within_the_inherited_bound_wherever_the_result_is_normal() {
        // The bound: 2 + 2·|t| ulp, t = y · log2 x (WGSL's exp2 allows 3 + 2·|t|).
        let mut worst = 0f64;
        let mut near = 0;
        let mut checked = 0;
        // x over 10⁻⁴⁰ (subnormal) … 2¹²⁸ and y over ±64 in uneven steps.
        let mut x = 1e-40f32;
        while x < f32::MAX / 1.37 {
            for k in -640..=640 {
                let y = k as f32 * 0.1003;
                let exact = (x as f64).powf(y as f64);
                if !(f32::MIN_POSITIVE as f64..=f32::MAX as f64).contains(&exact) {
                    continue;
                }
                let got = pow(x, y);
                let t = (y as f64 * (x as f64).log2()).abs();
                let u = ulps(got, exact as f32);
                assert!(
                    u as f64 <= 2.0 + 2.0 * t,
                    "pow({x:e}, {y}) = {got:e}, exact {exact:e}: {u} ulp (t = {t})"
                );
                worst = worst.max(u as f64 / (2.0 + 2.0 * t));
                if t <= 1.0 {
                    near = near.max(u);
                }
                // (t in double precision: the error follows y, not the exponent of x.)
                assert!(
                    u as f64 <= 1.0 + y.abs() as f64,
                    "pow({x:e}, {y}) = {got:e}, exact {exact:e}: {u} ulp"
                );
                checked += 1;
            }
            x *= 1.37;
        }
        // (Measured: at most 1 ulp for |t| ≤ 1, 10 ulp at worst (|y| ≤ 64), 0.48 of the
        // inherited bound and 0.91 of 1 + |y|.)
        assert!(near <= 1, "{near} ulp with |t| ≤ 1");
        assert!(checked > 50_000 && worst > 0.0, "{checked} checked");
    }

    #[test]
    fn exact_where_the_answer_is_simple() {
        for x in [0.0f32, 1e-42, 0.3, 1.0, 7.5, 1e30] {
            assert_eq!(pow(x, 0.0), 1.0, "pow({x}, 0)");
            assert_eq!(pow(x, -0.0), 1.0, "pow({x}, -0)");
        }
        for y in [-3.5f32, -1.0, 0.25, 1.0, 32.0, 1e20] {
            assert_eq!(pow(1.0, y), 1.0, "pow(1, {y})");
        }
        for (k, n) in [(1, 3), (2, -2), (-3, 5), (10, 12), (-40, 3)] {
            let x = 2f32.powi(k);
            assert_eq!(pow(x, n as f32), 2f32.powi(k * n), "pow(2^{k}, {n})");
        }
        assert_eq!(pow(4.0, 0.5), 2.0);
    }

    #[test]
    fn zero_overflow_underflow_and_the_library_cases() {
        assert_eq!(pow(0.0, 32.0).to_bits(), 0);
        assert_eq!(pow(0.0, 0.5).to_bits(), 0);
        assert_eq!(pow(0.0, -2.0), f32::INFINITY);
        assert_eq!(pow(10.0, 50.0), f32::INFINITY);
        assert_eq!(pow(10.0, -50.0), 0.0);
        assert_eq!(pow(1e-20, 1e30), 0.0);
        assert_eq!(pow(3.0, 1e30), f32::INFINITY);
        // Subnormal results: built from their rounded mantissa, never from a subnormal
        // product; exact for exact powers of two, else as close as normal ones.
        assert_eq!(pow(0.5, 140.0), 2f32.powi(-140));
        assert_eq!(pow(0.5, 149.0).to_bits(), 1);
        assert_eq!(pow(0.5, 151.0).to_bits(), 0);
        for k in 0..4000 {
            let (x, y) = (0.3 + k as f32 * 1.7e-4, 80.0 + (k % 7) as f32 * 0.37);
            let exact = (x as f64).powf(y as f64) as f32;
            let got = pow(x, y);
            assert!(
                ulps(got, exact) <= 1 + y as u64,
                "pow({x}, {y}) = {got:e} vs {exact:e}"
            );
        }
        // Outside the polynomials' domain: the C library's answers.
        for (x, y) in [
            (-2.0f32, 3.0f32),
            (-2.0, 0.5),
            (-0.0, 3.0),
            (-0.0, -1.0),
            (f32::INFINITY, 2.0),
            (f32::NAN, 1.0),
            (2.0, f32::INFINITY),
            (0.5, f32::NEG_INFINITY),
            (2.0, f32::NAN),
        ] {
            assert_eq!(pow(x, y).to_bits(), x.powf(y).to_bits(), "pow({x}, {y})");
        }
    }

    #[test]
    fn lanes_match_one_lane_at_a_time() {
        let xs: [f32; 8] = [0.0, 0.37, 1.0, 2.5, -1.5, f32::NAN, 1e-40, 3e7];
        let ys: [f32; 4] = [32.0, -0.5, 0.0, f32::INFINITY];
        let a: [u32; WARP_LANES] = std::array::from_fn(|l| xs[l % 8].to_bits());
        let b: [u32; WARP_LANES] = std::array::from_fn(|l| ys[l / 8 % 4].to_bits());
        let mut out = [0; WARP_LANES];
        pow_lanes(&a, &b, &mut out);
        for l in 0..WARP_LANES {
            let want = pow(f32::from_bits(a[l]), f32::from_bits(b[l]));
            assert_eq!(out[l], want.to_bits(), "lane {l}");
        }
    }
}
