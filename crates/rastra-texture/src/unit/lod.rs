//! The texture unit's level of detail (T4 step 2, Vulkan §16.6.7 "Scale Factor Operation"
//! and "LOD Operation"): a footprint's scale factors, anisotropy ratio, probe count and λ,
//! the sampler's LOD clamp and the levels λ picks.
//!
//! λ's logarithm is the unit's own ([`log2`]), not the C library's: the same function on
//! every CPU (the library picks among versions by CPU), and one that eight lanes compute at
//! once with the same bits ([`implicit_lods`], a run of quads sampled with implicit LOD, on
//! a CPU with AVX2). Computed in double precision, its error before the one rounding to
//! single is below about 10⁻⁶ of a single-precision ulp (the series' truncation and the
//! double-precision roundings), so it is the correctly rounded logarithm but for inputs
//! whose logarithm lies that close to a rounding boundary.

use super::*;

/// The footprint of gradients `gx` and `gy` (in the position's space) on a view whose base
/// level is `size0` texels (T4 step 2, Vulkan §16.6.7 "Scale Factor Operation" and "LOD
/// Operation"): log2 of the footprint each probe covers (ρmax / η, before bias and clamp,
/// η the ratio of anisotropy ρmax / ρmin clamped to the sampler's maximum — ∞ when ρmin is
/// 0 — and 1 without anisotropy), the probe count N = ⌈η⌉ and the major axis.
#[inline(always)]
pub(super) fn footprint_lod(
    gx: [f32; 3],
    gy: [f32; 3],
    size0: [u32; 3],
    sampler: &Sampler,
) -> (f32, u32, [f32; 3]) {
    let scale = [size0[0] as f32, size0[1] as f32, size0[2] as f32];
    let rx = len3(mul3(gx, scale));
    let ry = len3(mul3(gy, scale));
    let (rmax, rmin, axis) = if rx >= ry { (rx, ry, gx) } else { (ry, rx, gy) };
    let max_aniso = sampler.anisotropy() as f32;
    let eta = if max_aniso > 1.0 && rmax > 0.0 {
        let ratio = rmax / rmin; // ∞ when rmin is 0
        if ratio.is_nan() {
            1.0
        } else {
            // (`ratio.clamp(1.0, max_aniso)` written out, as in `clamp_lod`; neither is
            // NaN, and max_aniso ≥ 1.)
            if ratio < 1.0 {
                1.0
            } else if ratio > max_aniso {
                max_aniso
            } else {
                ratio
            }
        }
    } else {
        1.0
    };
    (log2(rmax / eta), eta.ceil() as u32, axis)
}

/// The view levels a lane with LOD `lambda` samples and their weights (T4 step 2: nearest
/// mip ⌈d + ½⌉ − 1, or the two levels either side of d blended by its fraction, d = λ
/// clamped to the view's levels, the fraction narrowed by an anisotropic sampler's
/// [`MipBlend`]); a second level of weight 0 is not sampled.
#[inline(always)]
pub(super) fn lane_levels(view: &TextureView, sampler: &Sampler, lambda: f32) -> [(u32, f32); 2] {
    let q = (view.mip_level_count - 1) as f32;
    // `v.clamp(0.0, q)` (NaN stays NaN), written out: `f32::clamp` was compiled as a call
    // of its own, for the baseline CPU.
    #[inline(always)]
    fn clamp(v: f32, q: f32) -> f32 {
        if v < 0.0 {
            0.0
        } else if v > q {
            q
        } else {
            v
        }
    }
    let dl = clamp(lambda, q);
    match sampler.desc().mipmap_filter {
        FilterMode::Nearest => {
            let l = clamp((dl + 0.5).ceil() - 1.0, q) as u32;
            [(l, 1.0), (l, 0.0)]
        }
        FilterMode::Linear => {
            let lo = floor_f32(dl);
            let upper = (lo + 1.0).min(q) as u32;
            let frac = sampler.mip_blend().weight(dl - lo);
            if frac == 1.0 {
                // The coarser level alone (only a narrowed blend gets here).
                return [(upper, 1.0), (upper, 0.0)];
            }
            [(lo as u32, 1.0 - frac), (upper, frac)]
        }
    }
}

/// The sampler's LOD clamp; NaN takes lod_min. (Two compares and selects: `f32::clamp`,
/// with its check of the bounds — validated when the sampler is made, lod_min ≤ lod_max —
/// stayed a call of its own, once a quad; see also `lane_levels`.)
#[inline]
pub(super) fn clamp_lod(l: f32, sampler: &Sampler) -> f32 {
    let d = sampler.desc();
    let l = if l >= d.lod_min_clamp {
        l
    } else {
        d.lod_min_clamp
    };
    if l > d.lod_max_clamp {
        d.lod_max_clamp
    } else {
        l
    }
}
pub(super) fn sub3(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(super) fn mul3(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] * b[0], a[1] * b[1], a[2] * b[2]]
}

pub(super) fn len3(a: [f32; 3]) -> f32 {
    let l = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    if l.is_nan() { 0.0 } else { l }
}

/// Zeroes the components a view does not use.
pub(super) fn mask(a: [f32; 3], dims: usize) -> [f32; 3] {
    std::array::from_fn(|i| if i < dims { a[i] } else { 0.0 })
}

/// `2 / ln 2 / (2k + 1)` for k = 0…7: log2(m) = s · Σ LOG2_SERIES[k] · s²ᵏ with
/// s = (m − 1) / (m + 1) (the series of artanh, ln m = 2 artanh s), to the s¹⁵ term — for
/// m in [√½, √2], |s| ≤ 0.172, the terms left out are below 4 · 10⁻¹⁴ of the sum.
const LOG2_SERIES: [f64; 8] = {
    let k = 2.0 / std::f64::consts::LN_2;
    let mut t = [0.0; 8];
    let mut i = 0;
    while i < 8 {
        t[i] = k / (2 * i + 1) as f64;
        i += 1;
    }
    t
};

/// The mantissa bits of √2 as a float in [1, 2): mantissas above it are halved (and the
/// exponent raised), so the series' argument stays in [√½, √2].
const SQRT2_BITS: u32 = 0x3fb5_04f3;

/// log2(x): −∞ at ±0, NaN below 0 and at NaN, ∞ at ∞, exact at powers of two. x = m · 2ᵉ
/// with m in [√½, √2] (subnormals scaled into the normal range first), log2 x = e + log2 m,
/// the series in double precision and the sum rounded once to single. [`log2_x8`] computes
/// the same operations eight at a time.
pub(super) fn log2(x: f32) -> f32 {
    if x.is_nan() || x < 0.0 {
        return f32::NAN;
    }
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    if x == f32::INFINITY {
        return x;
    }
    // (× 2²³ is exact: it scales a subnormal into the normals.)
    let (bits, bias) = if x < f32::MIN_POSITIVE {
        ((x * 8_388_608.0).to_bits(), 127 + 23)
    } else {
        (x.to_bits(), 127)
    };
    let mut m = bits & 0x007f_ffff | 0x3f80_0000;
    let mut e = (bits >> 23) as i32 - bias;
    if m > SQRT2_BITS {
        // m / 2 (exact).
        m -= 0x0080_0000;
        e += 1;
    }
    let m = f32::from_bits(m) as f64;
    let s = (m - 1.0) / (m + 1.0);
    let z = s * s;
    let mut p = LOG2_SERIES[7];
    for c in LOG2_SERIES[..7].iter().rev() {
        p = p * z + c;
    }
    (e as f64 + s * p) as f32
}

/// [`log2`] of eight values, with the same operations lane by lane (the same bits).
///
/// # Safety
/// The CPU must have AVX2 ([`crate::cpu::wide`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn log2_x8(x: std::arch::x86_64::__m256) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    let bits = _mm256_castps_si256(x);
    // Subnormals (and zeros, which the blends below replace) scaled by 2²³.
    let tiny = _mm256_cmp_ps::<_CMP_LT_OQ>(x, _mm256_set1_ps(f32::MIN_POSITIVE));
    let scaled = _mm256_castps_si256(_mm256_mul_ps(x, _mm256_set1_ps(8_388_608.0)));
    let bits = _mm256_blendv_epi8(bits, scaled, _mm256_castps_si256(tiny));
    let bias = _mm256_blendv_epi8(
        _mm256_set1_epi32(127),
        _mm256_set1_epi32(127 + 23),
        _mm256_castps_si256(tiny),
    );
    let m = _mm256_or_si256(
        _mm256_and_si256(bits, _mm256_set1_epi32(0x007f_ffff)),
        _mm256_set1_epi32(0x3f80_0000),
    );
    let e = _mm256_sub_epi32(_mm256_srli_epi32::<23>(bits), bias);
    // (Mantissas are below 2³¹: a signed compare orders them.)
    let high = _mm256_cmpgt_epi32(m, _mm256_set1_epi32(SQRT2_BITS as i32));
    let m = _mm256_sub_epi32(m, _mm256_and_si256(high, _mm256_set1_epi32(0x0080_0000)));
    // (`high` is −1 where raised: subtracting it adds one.)
    let e = _mm256_sub_epi32(e, high);
    let m = _mm256_castsi256_ps(m);
    let half = |m: __m128, e: __m128i| {
        let m = _mm256_cvtps_pd(m);
        let one = _mm256_set1_pd(1.0);
        let s = _mm256_div_pd(_mm256_sub_pd(m, one), _mm256_add_pd(m, one));
        let z = _mm256_mul_pd(s, s);
        let mut p = _mm256_set1_pd(LOG2_SERIES[7]);
        for &c in LOG2_SERIES[..7].iter().rev() {
            p = _mm256_add_pd(_mm256_mul_pd(p, z), _mm256_set1_pd(c));
        }
        _mm256_cvtpd_ps(_mm256_add_pd(_mm256_cvtepi32_pd(e), _mm256_mul_pd(s, p)))
    };
    let low = half(_mm256_castps256_ps128(m), _mm256_castsi256_si128(e));
    let high = half(
        _mm256_extractf128_ps::<1>(m),
        _mm256_extracti128_si256::<1>(e),
    );
    let y = _mm256_set_m128(high, low);
    // The special values: NaN below 0 and at NaN, −∞ at ±0, ∞ at ∞.
    let nan = _mm256_cmp_ps::<_CMP_NGE_UQ>(x, _mm256_setzero_ps());
    let zero = _mm256_cmp_ps::<_CMP_EQ_OQ>(x, _mm256_setzero_ps());
    let inf = _mm256_cmp_ps::<_CMP_EQ_OQ>(x, _mm256_set1_ps(f32::INFINITY));
    let y = _mm256_blendv_ps(y, x, inf);
    let y = _mm256_blendv_ps(y, _mm256_set1_ps(f32::NEG_INFINITY), zero);
    _mm256_blendv_ps(y, _mm256_set1_ps(f32::NAN), nan)
}

/// The LOD of each quad of a run sampled with implicit LOD and no bias on a flat view
/// (`size0` its base level): [`footprint_lod`] of the quad's coarse gradients (lanes 1 − 0
/// and 2 − 0) and [`clamp_lod`] of it plus a bias of 0 — eight quads at once on a CPU with
/// AVX2, with the same bits.
pub(super) fn implicit_lods(
    quads: &[Quad],
    size0: [u32; 3],
    sampler: &Sampler,
    out: &mut [LaneLod],
) {
    let n = quads.len().min(out.len());
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::wide() {
        while done + 8 <= n {
            // SAFETY: `wide()` is true only when the CPU has AVX2.
            unsafe {
                implicit_lods_x8(
                    &quads[done..done + 8],
                    size0,
                    sampler,
                    &mut out[done..done + 8],
                )
            };
            done += 8;
        }
    }
    for (quad, lod) in quads[done..n].iter().zip(&mut out[done..n]) {
        *lod = implicit_lod(quad, size0, sampler);
    }
}

/// [`implicit_lods`] for one quad.
#[inline(always)]
pub(super) fn implicit_lod(quad: &Quad, size0: [u32; 3], sampler: &Sampler) -> LaneLod {
    let c = quad.coords;
    let gx = [c[1][0] - c[0][0], c[1][1] - c[0][1], 0.0];
    let gy = [c[2][0] - c[0][0], c[2][1] - c[0][1], 0.0];
    let (log, probes, axis) = footprint_lod(gx, gy, size0, sampler);
    LaneLod {
        lambda: clamp_lod(log + 0.0, sampler),
        probes,
        axis,
    }
}

/// [`implicit_lods`] for eight quads: [`implicit_lod`]'s operations lane by lane.
///
/// # Safety
/// The CPU must have AVX2 ([`crate::cpu::wide`]); `quads` and `out` hold eight each.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
pub(super) unsafe fn implicit_lods_x8(
    quads: &[Quad],
    size0: [u32; 3],
    sampler: &Sampler,
    out: &mut [LaneLod],
) {
    use std::arch::x86_64::*;
    let (quads, out) = (&quads[..8], &mut out[..8]);
    // Component `a` of lane `lane`'s coordinates, quad by quad.
    let coord = |lane: usize, a: usize| {
        let v: [f32; 8] = std::array::from_fn(|k| quads[k].coords[lane][a]);
        // SAFETY: eight floats.
        unsafe { _mm256_loadu_ps(v.as_ptr()) }
    };
    let (x0, y0) = (coord(0, 0), coord(0, 1));
    let gx = [
        _mm256_sub_ps(coord(1, 0), x0),
        _mm256_sub_ps(coord(1, 1), y0),
    ];
    let gy = [
        _mm256_sub_ps(coord(2, 0), x0),
        _mm256_sub_ps(coord(2, 1), y0),
    ];
    // `len3(mul3(g, scale))`; the third component is 0 · depth, a zero, whose square
    // added leaves the sum as it is (a sum of squares is never −0).
    let scale = [
        _mm256_set1_ps(size0[0] as f32),
        _mm256_set1_ps(size0[1] as f32),
    ];
    let len = |g: &[__m256; 2]| {
        let a = [_mm256_mul_ps(g[0], scale[0]), _mm256_mul_ps(g[1], scale[1])];
        let l = _mm256_sqrt_ps(_mm256_add_ps(
            _mm256_mul_ps(a[0], a[0]),
            _mm256_mul_ps(a[1], a[1]),
        ));
        _mm256_andnot_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(l, l), l)
    };
    let (rx, ry) = (len(&gx), len(&gy));
    let x_major = _mm256_cmp_ps::<_CMP_GE_OQ>(rx, ry);
    let rmax = _mm256_blendv_ps(ry, rx, x_major);
    let rmin = _mm256_blendv_ps(rx, ry, x_major);
    let axis = [
        _mm256_blendv_ps(gy[0], gx[0], x_major),
        _mm256_blendv_ps(gy[1], gx[1], x_major),
    ];
    let one = _mm256_set1_ps(1.0);
    let max_aniso = sampler.anisotropy() as f32;
    let eta = if max_aniso > 1.0 {
        let ratio = _mm256_div_ps(rmax, rmin);
        let max = _mm256_set1_ps(max_aniso);
        let r = _mm256_blendv_ps(ratio, one, _mm256_cmp_ps::<_CMP_LT_OQ>(ratio, one));
        let r = _mm256_blendv_ps(r, max, _mm256_cmp_ps::<_CMP_GT_OQ>(ratio, max));
        // 1 where the ratio is NaN or the major axis is not above 0.
        let keep = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_ORD_Q>(ratio, ratio),
            _mm256_cmp_ps::<_CMP_GT_OQ>(rmax, _mm256_setzero_ps()),
        );
        _mm256_blendv_ps(one, r, keep)
    } else {
        one
    };
    // SAFETY: AVX2 (this function's target feature).
    let log = unsafe { log2_x8(_mm256_div_ps(rmax, eta)) };
    let probes = _mm256_cvttps_epi32(_mm256_round_ps::<
        { _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC },
    >(eta));
    // `clamp_lod(log + 0.0)`: below the minimum (or NaN) the minimum, then above the
    // maximum the maximum.
    let d = sampler.desc();
    let (lo, hi) = (
        _mm256_set1_ps(d.lod_min_clamp),
        _mm256_set1_ps(d.lod_max_clamp),
    );
    let l = _mm256_add_ps(log, _mm256_setzero_ps());
    let l = _mm256_blendv_ps(lo, l, _mm256_cmp_ps::<_CMP_GE_OQ>(l, lo));
    let l = _mm256_blendv_ps(l, hi, _mm256_cmp_ps::<_CMP_GT_OQ>(l, hi));
    let (mut lambda, mut count, mut ax, mut ay) =
        ([0.0f32; 8], [0u32; 8], [0.0f32; 8], [0.0f32; 8]);
    // SAFETY: eight values each.
    unsafe {
        _mm256_storeu_ps(lambda.as_mut_ptr(), l);
        _mm256_storeu_si256(count.as_mut_ptr().cast(), probes);
        _mm256_storeu_ps(ax.as_mut_ptr(), axis[0]);
        _mm256_storeu_ps(ay.as_mut_ptr(), axis[1]);
    }
    for (k, lod) in out.iter_mut().enumerate() {
        *lod = LaneLod {
            lambda: lambda[k],
            probes: count[k],
            axis: [ax[k], ay[k], 0.0],
        };
    }
}
