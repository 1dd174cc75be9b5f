//! Sine and cosine for the shader ALU (T3 "Shader Unit internals": GPUs evaluate
//! transcendentals in a special-function unit with a short range reduction and a
//! polynomial, not with a library call per lane).
//!
//! For |x| ≤ [`RANGE`] the argument is reduced by the nearest multiple of π/2, the
//! multiple's product with π/2 formed in three parts whose leading parts have so few
//! significant bits that their products are exact (Cody and Waite's method), and the
//! remainder r ∈ [−π/4, π/4] goes through short minimax polynomials for sin r and cos r (the
//! classic single-precision coefficients of Moshier's Cephes library); the quadrant picks
//! which one, and its sign. Only IEEE additions, multiplications and fused multiply-adds
//! are used (rounding to an integer included) — `f32::mul_add` is the exact sum rounded
//! once on every CPU, an instruction where the CPU has FMA and the C library's `fmaf`
//! elsewhere — so every CPU and both compiled versions of the warp loop
//! (`rastra_texture::cpu`) give the same bits, and [`sin_lanes`]/[`cos_lanes`] vectorise
//! (compiled shaders call them too). Fused, the sine of a reduced argument is ten
//! operations instead of seventeen. With AVX2 they are written out eight lanes a
//! step, and a step whose lanes all take the same polynomial (the quadrants all even, or all
//! odd: the usual case, arguments varying slowly from pixel to pixel) evaluates only that
//! one — the portable loop evaluates both and selects (tested equal, bit for bit).
//! Arguments outside the range, infinities and NaN go to the C library, lane by lane.
//!
//! Accuracy (tested against f64 over [−RANGE, RANGE]): absolute error below 2⁻²², within
//! 2 ulp wherever the result is not tiny; WGSL asks for an absolute error of 2⁻¹¹ on
//! [−π, π].

use crate::WARP_LANES;

/// Largest |x| the reduction handles (the products of the multiple of π/2 with the first
/// parts stay exact up to here).
const RANGE: f32 = 8192.0;

/// π/2 = P1 + P2 + P3; P1 has 8 significant bits and P2 12.
const P1: f32 = 1.570_312_5;
const P2: f32 = 4.837_513e-4;
const P3: f32 = 7.549_79e-8;

/// Added and removed to round a non-negative value below 2²² to the nearest integer (ties to
/// even): 1.5·2²³.
const ROUNDER: f32 = 12_582_912.0;

/// sin r ≈ r + r·z·(S1 + z·(S2 + z·S3)), z = r².
const S1: f32 = -1.666_665_5e-1;
const S2: f32 = 8.332_161e-3;
const S3: f32 = -1.951_529_6e-4;

/// cos r ≈ 1 − z/2 + z²·(C1 + z·(C2 + z·C3)).
const C1: f32 = 4.166_664_6e-2;
const C2: f32 = -1.388_731_6e-3;
const C3: f32 = 2.443_315_7e-5;

/// sin x for |x| ≤ [`RANGE`] when `phase` = 0, cos x when `phase` = 1. Both work on |x| (sin
/// is odd: the sign of x is put back, which keeps sin(−0) = −0; cos is even) and cos x =
/// sin(|x| + π/2) is one quadrant further. Branch-free; meaningless outside the range.
#[inline(always)]
fn reduced(x: f32, phase: u32) -> f32 {
    let ax = x.abs();
    // Round to nearest even by adding and removing 1.5·2²³ (exact for 0 ≤ t < 2²²; plain
    // arithmetic, where `round_ties_even` would need SSE4.1 or a library call).
    let t = ax.mul_add(std::f32::consts::FRAC_2_PI, ROUNDER);
    let j = t - ROUNDER;
    let r = (-j).mul_add(P3, (-j).mul_add(P2, (-j).mul_add(P1, ax)));
    let z = r * r;
    let sin = (r * z).mul_add(z.mul_add(z.mul_add(S3, S2), S1), r);
    let cos = (z * z).mul_add(z.mul_add(z.mul_add(C3, C2), C1), (-0.5f32).mul_add(z, 1.0));
    // In range 0 ≤ j ≤ 5216 and t = 1.5·2²³ + j exactly, so t's bits are 0x4b40_0000 + j,
    // whose low two bits (all the quadrant logic uses) are j's; read from the bits rather
    // than converted, the lane loops vectorise (a saturating float-to-integer conversion
    // does not). Outside the range the value is meaningless either way.
    let quadrant = t.to_bits().wrapping_add(phase);
    let v = if quadrant & 1 == 0 { sin } else { cos };
    let odd_sign = if phase == 0 {
        x.to_bits() & 0x8000_0000
    } else {
        0
    };
    f32::from_bits(v.to_bits() ^ ((quadrant & 2) << 30) ^ odd_sign)
}

#[inline(always)]
fn in_range(x: f32) -> bool {
    x.abs() <= RANGE
}

/// sin x.
#[inline(always)]
pub(crate) fn sin(x: f32) -> f32 {
    if in_range(x) { reduced(x, 0) } else { x.sin() }
}

/// cos x.
#[inline(always)]
pub(crate) fn cos(x: f32) -> f32 {
    if in_range(x) { reduced(x, 1) } else { x.cos() }
}

/// [`sin`] (`phase` 0) or [`cos`] (`phase` 1) of every lane of a warp register (raw bits):
/// the polynomial on all lanes at once, then the library for the lanes out of range.
#[inline(always)]
fn lanes(a: &[u32; WARP_LANES], out: &mut [u32; WARP_LANES], phase: u32) {
    #[cfg(target_arch = "x86_64")]
    let outside = if rastra_texture::cpu::wide() {
        // SAFETY: `wide()` is true only when the CPU has AVX2.
        unsafe { reduced_lanes_avx2(a, out, phase) }
    } else {
        reduced_lanes(a, out, phase)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let outside = reduced_lanes(a, out, phase);
    if outside {
        for l in 0..WARP_LANES {
            let x = f32::from_bits(a[l]);
            if !in_range(x) {
                out[l] = if phase == 0 { x.sin() } else { x.cos() }.to_bits();
            }
        }
    }
}

/// [`reduced`] of every lane; whether some lane is out of range.
#[inline(always)]
fn reduced_lanes(a: &[u32; WARP_LANES], out: &mut [u32; WARP_LANES], phase: u32) -> bool {
    let mut outside = false;
    for l in 0..WARP_LANES {
        let x = f32::from_bits(a[l]);
        out[l] = reduced(x, phase).to_bits();
        outside |= !in_range(x);
    }
    outside
}

/// [`reduced_lanes`] written out for AVX2, eight lanes a step ([`reduced_step_avx2`]).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn reduced_lanes_avx2(
    a: &[u32; WARP_LANES],
    out: &mut [u32; WARP_LANES],
    phase: u32,
) -> bool {
    use std::arch::x86_64::*;
    let mut outside = _mm256_setzero_ps();
    let k = splats();
    for (x, o) in a.chunks_exact(8).zip(out.chunks_exact_mut(8)) {
        // SAFETY: eight lanes are 32 readable bytes.
        let bits = unsafe { _mm256_loadu_si256(x.as_ptr().cast()) };
        // SAFETY: AVX2 (this function's contract).
        let (v, out_of_range) = unsafe { reduced_step_avx2(bits, phase, k) };
        // SAFETY: eight lanes are 32 writable bytes.
        unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), v) };
        outside = _mm256_or_ps(outside, out_of_range);
    }
    _mm256_movemask_ps(outside) != 0
}

/// The floating-point constants of the AVX2 steps, eight copies each. The steps read them
/// through a reference the compiler cannot see into ([`splats`]), so at each use, mostly
/// as a memory operand of the instruction using it: as constants the compiler knows, with
/// too few vector registers to keep them all, it broadcast them from its constant pool
/// again in every step (six more instructions a step of the cosine).
#[cfg(target_arch = "x86_64")]
#[repr(C, align(32))]
struct Splats {
    frac_2_pi: [f32; 8],
    rounder: [f32; 8],
    p1: [f32; 8],
    p2: [f32; 8],
    p3: [f32; 8],
    s1: [f32; 8],
    s2: [f32; 8],
    s3: [f32; 8],
    c1: [f32; 8],
    c2: [f32; 8],
    c3: [f32; 8],
    half: [f32; 8],
    one: [f32; 8],
    range: [f32; 8],
}

#[cfg(target_arch = "x86_64")]
static SPLATS: Splats = Splats {
    frac_2_pi: [std::f32::consts::FRAC_2_PI; 8],
    rounder: [ROUNDER; 8],
    p1: [P1; 8],
    p2: [P2; 8],
    p3: [P3; 8],
    s1: [S1; 8],
    s2: [S2; 8],
    s3: [S3; 8],
    c1: [C1; 8],
    c2: [C2; 8],
    c3: [C3; 8],
    half: [0.5; 8],
    one: [1.0; 8],
    range: [RANGE; 8],
};

/// The constants, behind a reference the compiler cannot see into (taken once per call).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn splats() -> &'static Splats {
    std::hint::black_box(&SPLATS)
}

/// One of [`Splats`]' rows as a vector.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
fn splat(row: &[f32; 8]) -> std::arch::x86_64::__m256 {
    // SAFETY: eight readable floats.
    unsafe { std::arch::x86_64::_mm256_loadu_ps(row.as_ptr()) }
}

/// [`reduced`] of eight lanes (raw bits) in AVX2: the same IEEE operations in the same
/// order (so the same bits), but where the eight lanes' quadrants agree on odd or even —
/// most steps, arguments moving slowly across a pixel row — only the polynomial those
/// quadrants take is evaluated. Returns the results and the lanes out of range (not
/// |x| ≤ RANGE, NaN included), whose results are meaningless.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn reduced_step_avx2(
    bits: std::arch::x86_64::__m256i,
    phase: u32,
    k: &Splats,
) -> (std::arch::x86_64::__m256i, std::arch::x86_64::__m256) {
    use std::arch::x86_64::*;
    let ax = _mm256_castsi256_ps(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fff_ffff)));
    let t = _mm256_fmadd_ps(ax, splat(&k.frac_2_pi), splat(&k.rounder));
    let j = _mm256_sub_ps(t, splat(&k.rounder));
    // −j · P + r, one rounding each (`fnmadd`).
    let r = _mm256_fnmadd_ps(j, splat(&k.p1), ax);
    let r = _mm256_fnmadd_ps(j, splat(&k.p2), r);
    let r = _mm256_fnmadd_ps(j, splat(&k.p3), r);
    let z = _mm256_mul_ps(r, r);
    let quadrant = _mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(phase as i32));
    // Bit 0 of each quadrant in the sign bit: the lanes taking the cosine.
    let odd = _mm256_castsi256_ps(_mm256_slli_epi32::<31>(quadrant));
    // (Plain calls, not closures: a closure would be compiled without AVX2.)
    // SAFETY: AVX2 (this function's contract).
    let v = unsafe {
        match _mm256_movemask_ps(odd) {
            0 => sin_poly_avx2(r, z, k),
            0xff => cos_poly_avx2(z, k),
            _ => _mm256_blendv_ps(sin_poly_avx2(r, z, k), cos_poly_avx2(z, k), odd),
        }
    };
    let mut flip = _mm256_slli_epi32::<30>(_mm256_and_si256(quadrant, _mm256_set1_epi32(2)));
    if phase == 0 {
        let sign = _mm256_set1_epi32(0x8000_0000u32 as i32);
        flip = _mm256_xor_si256(flip, _mm256_and_si256(bits, sign));
    }
    let v = _mm256_xor_si256(_mm256_castps_si256(v), flip);
    (v, _mm256_cmp_ps::<_CMP_NLE_UQ>(ax, splat(&k.range)))
}

/// [`reduced`]'s sine polynomial of eight remainders `r` (`z` = r²).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn sin_poly_avx2(
    r: std::arch::x86_64::__m256,
    z: std::arch::x86_64::__m256,
    k: &Splats,
) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    let p = _mm256_fmadd_ps(z, splat(&k.s3), splat(&k.s2));
    let p = _mm256_fmadd_ps(z, p, splat(&k.s1));
    _mm256_fmadd_ps(_mm256_mul_ps(r, z), p, r)
}

/// [`reduced`]'s cosine polynomial of eight squared remainders `z`.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn cos_poly_avx2(z: std::arch::x86_64::__m256, k: &Splats) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    let p = _mm256_fmadd_ps(z, splat(&k.c3), splat(&k.c2));
    let p = _mm256_fmadd_ps(z, p, splat(&k.c1));
    let head = _mm256_fnmadd_ps(splat(&k.half), z, splat(&k.one));
    _mm256_fmadd_ps(_mm256_mul_ps(z, z), p, head)
}

/// [`sin`] (`phase` 0) or [`cos`] (`phase` 1) of register `a` of a warp's register file
/// into register `dst` (the same register or another). With AVX2 it reads the argument
/// straight from the file, each eight lanes as two 16-byte loads — the compiled code that
/// wrote it a moment ago stored 16 bytes at a time, and a wider load of two such stores
/// still in flight waits for them to reach the cache — and writes each step's lanes after
/// reading them, so no copy of the argument is made; a lane out of range takes the
/// library's value in its step.
#[inline(always)]
fn lanes_in_file(regs: &mut [[u32; WARP_LANES]], a: usize, dst: usize, phase: u32) {
    #[cfg(target_arch = "x86_64")]
    if rastra_texture::cpu::wide() {
        assert!(a < regs.len() && dst < regs.len(), "registers of the file");
        let base = regs.as_mut_ptr();
        // SAFETY: `wide()` is true only when the CPU has AVX2 and FMA; both registers are inside
        // the file (asserted), and nothing else accesses it during the call.
        unsafe { reduced_file_avx2(base.add(a).cast(), base.add(dst).cast(), phase) };
        return;
    }
    let x = regs[a];
    lanes(&x, &mut regs[dst], phase)
}

/// [`lanes_in_file`]'s AVX2 loop over a register's `WARP_LANES` lanes at `src` into `dst`
/// (which may be `src`).
///
/// # Safety
/// The CPU must support AVX2 and FMA; `src` and `dst` address `WARP_LANES` lanes each, readable and
/// writable respectively, which are either the same or disjoint, and which nothing else
/// accesses during the call.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn reduced_file_avx2(src: *const u32, dst: *mut u32, phase: u32) {
    use std::arch::x86_64::*;
    let k = splats();
    for step in (0..WARP_LANES).step_by(8) {
        // SAFETY: lanes `step .. step + 8` are inside both registers (the contract); this
        // step's lanes are read before they are written.
        unsafe {
            let at = src.add(step);
            let bits = _mm256_set_m128i(
                _mm_loadu_si128(at.add(4).cast()),
                _mm_loadu_si128(at.cast()),
            );
            let (v, outside) = reduced_step_avx2(bits, phase, k);
            let out = dst.add(step);
            _mm256_storeu_si256(out.cast(), v);
            let outside = _mm256_movemask_ps(outside);
            if outside != 0 {
                library_lanes(bits, outside, out, phase);
            }
        }
    }
}

/// Sine of the warp register at `src` into the one at `dst`, for compiled code to call
/// directly (no instruction to decode, no feature test: the compiler calls it only where
/// [`rastra_texture::cpu::wide`] holds).
///
/// # Safety
/// As [`reduced_file_avx2`]'s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe extern "C" fn sin_file_avx2(src: *const u32, dst: *mut u32) {
    // SAFETY: the caller's promise.
    unsafe { reduced_file_avx2(src, dst, 0) }
}

/// [`sin_file_avx2`] for cosine.
///
/// # Safety
/// As [`reduced_file_avx2`]'s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe extern "C" fn cos_file_avx2(src: *const u32, dst: *mut u32) {
    // SAFETY: the caller's promise.
    unsafe { reduced_file_avx2(src, dst, 1) }
}

/// The library's sine or cosine for the lanes of `bits` flagged in `outside`, written over
/// the step's results at `out`: arguments out of the reduction's range (rare).
///
/// # Safety
/// The CPU must support AVX; `out` addresses eight writable lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[cold]
#[inline(never)]
unsafe fn library_lanes(bits: std::arch::x86_64::__m256i, outside: i32, out: *mut u32, phase: u32) {
    let mut x = [0u32; 8];
    // SAFETY: eight lanes are 32 writable bytes; `out` addresses eight lanes (the contract).
    unsafe { std::arch::x86_64::_mm256_storeu_si256(x.as_mut_ptr().cast(), bits) };
    for (l, &b) in x.iter().enumerate() {
        if outside & (1 << l) != 0 {
            let x = f32::from_bits(b);
            let v = if phase == 0 { x.sin() } else { x.cos() };
            // SAFETY: as above.
            unsafe { out.add(l).write(v.to_bits()) };
        }
    }
}

/// [`sin`] of register `a` into register `dst` of a warp's register file.
#[inline(always)]
pub(crate) fn sin_in_file(regs: &mut [[u32; WARP_LANES]], a: usize, dst: usize) {
    lanes_in_file(regs, a, dst, 0)
}

/// [`cos`] of register `a` into register `dst` of a warp's register file.
#[inline(always)]
pub(crate) fn cos_in_file(regs: &mut [[u32; WARP_LANES]], a: usize, dst: usize) {
    lanes_in_file(regs, a, dst, 1)
}

/// [`sin`] of every lane.
#[inline(always)]
pub(crate) fn sin_lanes(a: &[u32; WARP_LANES], out: &mut [u32; WARP_LANES]) {
    lanes(a, out, 0)
}

/// [`cos`] of every lane.
#[inline(always)]
pub(crate) fn cos_lanes(a: &[u32; WARP_LANES], out: &mut [u32; WARP_LANES]) {
    lanes(a, out, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in representable floats between two finite values of the same sign.
    fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

    fn check(x: f32, worst: &mut (f64, u32)) {
        for (got, want) in [(sin(x), (x as f64).sin()), (cos(x), (x as f64).cos())] {
            let err = (got as f64 - want).abs();
            assert!(err < 2f64.powi(-22), "x = {x:e}: {got:e} vs {want:e}");
            worst.0 = worst.0.max(err);
            if want.abs() > 1e-3 {
                let u = ulps(got, want as f32);
                assert!(u <= 2, "x = {x:e}: {got:e} vs {want:e}, {u} ulp");
                worst.1 = worst.1.max(u);
            }
        }
    }

    #[test]
    fn accurate_over_the_range() {
        let mut worst = (0.0, 0);
        // Dense near zero and over a few periods, then spread over the whole range.
        for i in -200_000..=200_000 {
            check(i as f32 * 1e-4, &mut worst);
        }
        let mut s = 0x1234_5678u32;
        for _ in 0..1_000_000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let x = (s >> 8) as f32 / (1u32 << 24) as f32 * 2.0 * RANGE - RANGE;
            check(x, &mut worst);
        }
        // Near multiples of π/2, where the reduction cancels most.
        for k in -5215i32..=5215 {
            let x = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
            for d in -3i32..=3 {
                let x = f32::from_bits((x.to_bits() as i32 + d) as u32);
                if x.is_finite() && in_range(x) {
                    check(x, &mut worst);
                }
            }
        }
        assert!(worst.0 < 2f64.powi(-22) && worst.1 <= 2, "{worst:?}");
    }

    #[test]
    fn signs_edges_and_outside_values() {
        assert_eq!(sin(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(sin(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(cos(0.0), 1.0);
        for x in [RANGE, -RANGE] {
            assert!((sin(x) as f64 - (x as f64).sin()).abs() < 1e-6);
        }
        for x in [
            RANGE * 2.0,
            -1e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ] {
            assert_eq!(sin(x).to_bits(), x.sin().to_bits());
            assert_eq!(cos(x).to_bits(), x.cos().to_bits());
        }
    }

    /// The AVX2 lanes give [`reduced`]'s bits and the same out-of-range verdict, on steps of
    /// eight whose quadrants agree (even, odd) and disagree, signed zeros, values near the
    /// range's end and outside it, NaN and infinities.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_lanes_equal_the_portable_lanes() {
        if !rastra_texture::cpu::wide() {
            return;
        }
        let mut s = 0x9e37_79b9u32;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        let specials = [
            0.0,
            -0.0,
            RANGE,
            -RANGE,
            f32::from_bits(RANGE.to_bits() + 1),
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e-40,
        ];
        for round in 0..20_000u32 {
            let base = (next() >> 8) as f32 / (1u32 << 24) as f32 * 2.0 * RANGE - RANGE;
            // Slowly moving arguments (quadrants agree in most steps), or scattered ones.
            let spread = [1e-3, 0.05, 3.0, 2000.0][round as usize % 4];
            let mut xs: [f32; WARP_LANES] = std::array::from_fn(|l| {
                base + spread * ((next() >> 8) as f32 / (1u32 << 24) as f32) * l as f32
            });
            if round % 7 == 0 {
                xs[next() as usize % WARP_LANES] = specials[next() as usize % specials.len()];
            }
            let a = xs.map(f32::to_bits);
            for phase in [0, 1] {
                let (mut wide, mut portable) = ([0; WARP_LANES], [0; WARP_LANES]);
                // SAFETY: `wide()` said the CPU has AVX2 and FMA.
                let outside = unsafe { reduced_lanes_avx2(&a, &mut wide, phase) };
                assert_eq!(outside, reduced_lanes(&a, &mut portable, phase), "{xs:?}");
                for l in 0..WARP_LANES {
                    if in_range(xs[l]) {
                        assert_eq!(wide[l], portable[l], "x = {:e}, phase {phase}", xs[l]);
                    }
                }
            }
        }
    }

    /// Sine and cosine from one register of a file into another or into itself equal the
    /// lane function, out-of-range lanes included.
    #[test]
    fn in_file_lanes_equal_the_lane_function() {
        let xs: [f32; WARP_LANES] = std::array::from_fn(|l| match l {
            3 => f32::NAN,
            7 => 1e9,
            11 => -RANGE * 1.5,
            40 => f32::NEG_INFINITY,
            _ => (l as f32 - 20.0) * 0.77,
        });
        let a = xs.map(f32::to_bits);
        for phase in [0, 1] {
            let mut want = [0; WARP_LANES];
            lanes(&a, &mut want, phase);
            let mut regs = vec![a, [0; WARP_LANES], a];
            lanes_in_file(&mut regs, 0, 1, phase);
            lanes_in_file(&mut regs, 2, 2, phase);
            assert_eq!(regs[0], a);
            assert_eq!(regs[1], want, "phase {phase}");
            assert_eq!(regs[2], want, "phase {phase}, in place");
        }
    }

    #[test]
    fn lanes_equal_the_scalar_function() {
        let xs: [f32; WARP_LANES] = std::array::from_fn(|l| match l {
            3 => f32::NAN,
            7 => 1e9,
            11 => -RANGE * 1.5,
            _ => (l as f32 - 8.0) * 0.77,
        });
        let a = xs.map(f32::to_bits);
        let (mut s, mut c) = ([0; WARP_LANES], [0; WARP_LANES]);
        sin_lanes(&a, &mut s);
        cos_lanes(&a, &mut c);
        for l in 0..WARP_LANES {
            assert_eq!(s[l], sin(xs[l]).to_bits(), "lane {l}");
            assert_eq!(c[l], cos(xs[l]).to_bits(), "lane {l}");
        }
    }
}
