//! Fixed-point blending of 8-bit unorm targets (linear `R8Unorm`, `Rg8Unorm`, `Rgba8Unorm`,
//! `Bgra8Unorm`), as ROPs do it (Z "ROPs": blend units work at the target's precision):
//! the shader's colour and the blend constant are converted to 8-bit codes first — the
//! conversion a write without blending makes — each blend factor is a code, and a
//! channel's result is the two products' sum (or difference), divided by 255 and rounded
//! once. Vulkan §28.1 asks for blending at a precision no lower than the destination's;
//! every product here is exact and the one rounding is to nearest. (sRGB targets blend in
//! linear space in floating point: their codes are not linear.)
//!
//! [`blend_unorm8`] is the definition; the quad path ([`quad_sse2`], the x86-64 baseline)
//! and the pair path ([`pair_avx2`], two quads at once) compute it for the "over" blend
//! states in 16-bit lanes, eight and sixteen channels per instruction — the same codes,
//! tested.

use crate::state::{BlendComponent, BlendFactor, BlendOperation, BlendState};

/// The largest sum of two products of codes that can round to a code: 255 · 255.
const TOP: u32 = 255 * 255;

/// `x / 255` rounded to nearest, for `x` ≤ 255 · 255. No quotient is a tie (255 is odd),
/// and the shifts are exact for the whole range (tested against the division).
#[inline(always)]
pub(crate) fn div255(x: u32) -> u32 {
    let t = x + 128;
    (t + (t >> 8)) >> 8
}

/// A blend factor's code per channel (WebGPU §23.3.5's factors, on codes: 1 is 255).
#[inline]
fn factor(f: BlendFactor, s: &[u8; 4], d: &[u8; 4], k: &[u8; 4], alpha: bool) -> [u32; 4] {
    let (s, d, k) = (s.map(u32::from), d.map(u32::from), k.map(u32::from));
    let splat = |v: u32| [v; 4];
    match f {
        BlendFactor::Zero => splat(0),
        BlendFactor::One => splat(255),
        BlendFactor::Src => s,
        BlendFactor::OneMinusSrc => s.map(|v| 255 - v),
        BlendFactor::SrcAlpha => splat(s[3]),
        BlendFactor::OneMinusSrcAlpha => splat(255 - s[3]),
        BlendFactor::Dst => d,
        BlendFactor::OneMinusDst => d.map(|v| 255 - v),
        BlendFactor::DstAlpha => splat(d[3]),
        BlendFactor::OneMinusDstAlpha => splat(255 - d[3]),
        BlendFactor::SrcAlphaSaturated if alpha => splat(255),
        BlendFactor::SrcAlphaSaturated => splat(s[3].min(255 - d[3])),
        BlendFactor::Constant => k,
        BlendFactor::OneMinusConstant => k.map(|v| 255 - v),
    }
}

/// One component (colour or alpha) of [`blend_unorm8`].
#[inline]
fn apply(
    c: &BlendComponent,
    s: &[u8; 4],
    d: &[u8; 4],
    k: &[u8; 4],
    alpha: bool,
    out: &mut [u8; 4],
) {
    let fs = factor(c.src_factor, s, d, k, alpha);
    let fd = factor(c.dst_factor, s, d, k, alpha);
    let range = if alpha { 3..4 } else { 0..3 };
    for i in range {
        let (ps, pd) = (s[i] as u32 * fs[i], d[i] as u32 * fd[i]);
        out[i] = match c.operation {
            BlendOperation::Add => div255((ps + pd).min(TOP)) as u8,
            BlendOperation::Subtract => div255(ps.saturating_sub(pd)) as u8,
            BlendOperation::ReverseSubtract => div255(pd.saturating_sub(ps)) as u8,
            BlendOperation::Min => s[i].min(d[i]),
            BlendOperation::Max => s[i].max(d[i]),
        };
    }
}

/// Blends source codes `src` with destination codes `dst` (RGBA; a target without alpha
/// reads 255 there) and constant codes `constant`: per channel, round((s · fs ± d · fd) /
/// 255), clamped to [0, 255]; min and max take no factors.
pub fn blend_unorm8(state: &BlendState, src: [u8; 4], dst: [u8; 4], constant: [u8; 4]) -> [u8; 4] {
    let mut out = [0; 4];
    apply(&state.color, &src, &dst, &constant, false, &mut out);
    apply(&state.alpha, &src, &dst, &constant, true, &mut out);
    out
}

/// The "over" blend states the vector paths serve: source factor alpha (`ALPHA_BLENDING`)
/// or one (`PREMULTIPLIED_ALPHA_BLENDING`) for the colour, one for alpha, and one minus
/// source alpha for the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Over {
    Alpha,
    Premultiplied,
}

/// A quad of a linear 8-bit RGBA/BGRA target in SSE2 (the x86-64 baseline): `src` holds
/// the four pixels' codes of the channel stored in byte `k` of a texel as register `k`
/// (32-bit lanes, each a code); `old` the quad's 16 bytes. Returns the quad's new bytes
/// — the codes, blended over `old` by `over` when given — for every pixel (the caller
/// selects the covered ones). Channels go two to a register, 16-bit lanes: bytes 0 and 2,
/// then 1 and 3 (alpha in the second's high half).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn quad_sse2(
    src: [std::arch::x86_64::__m128i; 4],
    old: std::arch::x86_64::__m128i,
    over: Option<Over>,
) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86-64 baseline; no memory is touched.
    unsafe {
        // Codes are at most 255: the signed packing keeps them.
        let s02 = _mm_packs_epi32(src[0], src[2]);
        let s13 = _mm_packs_epi32(src[1], src[3]);
        let (r02, r13) = match over {
            None => (s02, s13),
            Some(over) => {
                let mask = _mm_set1_epi32(0xff);
                let byte0 = _mm_and_si128(old, mask);
                let byte1 = _mm_and_si128(_mm_srli_epi32::<8>(old), mask);
                let byte2 = _mm_and_si128(_mm_srli_epi32::<16>(old), mask);
                let byte3 = _mm_srli_epi32::<24>(old);
                let d02 = _mm_packs_epi32(byte0, byte2);
                let d13 = _mm_packs_epi32(byte1, byte3);
                let k255 = _mm_set1_epi16(255);
                let alpha = _mm_unpackhi_epi64(s13, s13);
                let inv = _mm_sub_epi16(k255, alpha);
                let (f02, f13) = match over {
                    Over::Alpha => (alpha, _mm_unpacklo_epi64(alpha, k255)),
                    Over::Premultiplied => (k255, k255),
                };
                (
                    div255_epi16(sum_sse2(s02, f02, d02, inv, over)),
                    div255_epi16(sum_sse2(s13, f13, d13, inv, over)),
                )
            }
        };
        // Bytes: codes of byte 0 (pixels 0–3), byte 2, byte 1, byte 3; interleaved twice
        // into pixel order.
        let x = _mm_packus_epi16(r02, r13);
        let y = _mm_unpacklo_epi8(x, _mm_srli_si128::<8>(x));
        _mm_unpacklo_epi16(y, _mm_srli_si128::<8>(y))
    }
}

/// A channel pair's blend sum, s · f + d · inv, clamped to 255² (eight 16-bit lanes).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn sum_sse2(
    s: std::arch::x86_64::__m128i,
    f: std::arch::x86_64::__m128i,
    d: std::arch::x86_64::__m128i,
    inv: std::arch::x86_64::__m128i,
    over: Over,
) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86-64 baseline.
    unsafe {
        let (ps, pd) = (_mm_mullo_epi16(s, f), _mm_mullo_epi16(d, inv));
        match over {
            // At most 255 · a + 255 · (255 − a).
            Over::Alpha => _mm_add_epi16(ps, pd),
            // Saturated, then min(·, 255²) (SSE2 has no unsigned 16-bit min): add the
            // headroom above 255² saturating, and take it back.
            Over::Premultiplied => {
                let room = _mm_set1_epi16((u16::MAX as u32 - TOP) as i16);
                _mm_subs_epu16(_mm_adds_epu16(_mm_adds_epu16(ps, pd), room), room)
            }
        }
    }
}

/// [`div255`] of eight 16-bit lanes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn div255_epi16(x: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86-64 baseline.
    unsafe {
        let t = _mm_add_epi16(x, _mm_set1_epi16(128));
        _mm_srli_epi16::<8>(_mm_add_epi16(t, _mm_srli_epi16::<8>(t)))
    }
}

/// Two quads of a linear 8-bit RGBA/BGRA target in AVX2, the pair path's
/// [`quad_sse2`]: `src[k]` holds the eight pixels' values (floats, unconverted) of the
/// channel stored in byte `k` — quad 0's four in the low half, quad 1's in the high half —
/// and `old` the two quads' bytes likewise. Returns their new bytes (every pixel).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) unsafe fn pair_avx2(
    src: [std::arch::x86_64::__m256; 4],
    old: std::arch::x86_64::__m256i,
    over: Option<Over>,
) -> std::arch::x86_64::__m256i {
    use rastra_texture::format::unorm8_encode_pack_avx2 as pack;
    use std::arch::x86_64::*;
    // SAFETY: AVX2 and FMA (this function's contract).
    let (s02, s13) = unsafe { (pack(src[0], src[2]), pack(src[1], src[3])) };
    let (r02, r13) = match over {
        None => (s02, s13),
        Some(over) => {
            // Each half's bytes gathered by byte place (0, 2, 1, 3), four pixels each, then
            // widened: the destination's codes in the sources' lanes.
            let x = _mm256_shuffle_epi8(
                old,
                _mm256_broadcastsi128_si256(_mm_setr_epi8(
                    0, 4, 8, 12, 2, 6, 10, 14, 1, 5, 9, 13, 3, 7, 11, 15,
                )),
            );
            let zero = _mm256_setzero_si256();
            let (d02, d13) = (_mm256_unpacklo_epi8(x, zero), _mm256_unpackhi_epi8(x, zero));
            let k255 = _mm256_set1_epi16(255);
            let alpha = _mm256_unpackhi_epi64(s13, s13);
            let inv = _mm256_sub_epi16(k255, alpha);
            let (f02, f13) = match over {
                Over::Alpha => (alpha, _mm256_blend_epi16::<0xf0>(alpha, k255)),
                Over::Premultiplied => (k255, k255),
            };
            // SAFETY: AVX2 (this function's contract).
            unsafe {
                (
                    div255_epi16x16(sum_avx2(s02, f02, d02, inv, over)),
                    div255_epi16x16(sum_avx2(s13, f13, d13, inv, over)),
                )
            }
        }
    };
    // Per half: codes of byte 0 (pixels 0–3), byte 2, byte 1, byte 3; into pixel order.
    let x = _mm256_packus_epi16(r02, r13);
    _mm256_shuffle_epi8(
        x,
        _mm256_broadcastsi128_si256(_mm_setr_epi8(
            0, 8, 4, 12, 1, 9, 5, 13, 2, 10, 6, 14, 3, 11, 7, 15,
        )),
    )
}

/// A pair path channel pair's blend sum, s · f + d · inv, clamped to 255² (sixteen
/// 16-bit lanes; [`quad_sse2`]'s sums).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn sum_avx2(
    s: std::arch::x86_64::__m256i,
    f: std::arch::x86_64::__m256i,
    d: std::arch::x86_64::__m256i,
    inv: std::arch::x86_64::__m256i,
    over: Over,
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let (ps, pd) = (_mm256_mullo_epi16(s, f), _mm256_mullo_epi16(d, inv));
    match over {
        // At most 255 · a + 255 · (255 − a).
        Over::Alpha => _mm256_add_epi16(ps, pd),
        Over::Premultiplied => {
            _mm256_min_epu16(_mm256_adds_epu16(ps, pd), _mm256_set1_epi16(TOP as i16))
        }
    }
}

/// [`div255`] of sixteen 16-bit lanes.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn div255_epi16x16(x: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let t = _mm256_add_epi16(x, _mm256_set1_epi16(128));
    _mm256_srli_epi16::<8>(_mm256_add_epi16(t, _mm256_srli_epi16::<8>(t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `div255` is the rounded division over its whole range.
    #[test]
    fn div255_rounds_the_division() {
        for x in 0..=TOP {
            assert_eq!(div255(x), (x as f64 / 255.0).round() as u32, "{x}");
        }
    }

    /// Every operation and factor: the result is the exact rational value rounded to
    /// nearest and clamped (min and max: the codes themselves).
    #[test]
    fn fixed_blend_is_the_rounded_exact_value() {
        use BlendFactor::*;
        use BlendOperation::*;
        let factors = [
            Zero,
            One,
            Src,
            OneMinusSrc,
            SrcAlpha,
            OneMinusSrcAlpha,
            Dst,
            OneMinusDst,
            DstAlpha,
            OneMinusDstAlpha,
            SrcAlphaSaturated,
            Constant,
            OneMinusConstant,
        ];
        let mut x = 0x1357_9bdfu32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for operation in [Add, Subtract, ReverseSubtract, Min, Max] {
            for &src_factor in &factors {
                for &dst_factor in &factors {
                    let component = BlendComponent {
                        src_factor,
                        dst_factor,
                        operation,
                    };
                    let state = BlendState {
                        color: component,
                        alpha: component,
                    };
                    for _ in 0..40 {
                        let s = next().to_le_bytes();
                        let d = next().to_le_bytes();
                        let k = next().to_le_bytes();
                        let got = blend_unorm8(&state, s, d, k);
                        let unit = |v: u8| v as f64 / 255.0;
                        let f = |f: BlendFactor, i: usize| -> f64 {
                            let alpha = i == 3;
                            match f {
                                Zero => 0.0,
                                One => 1.0,
                                Src => unit(s[i]),
                                OneMinusSrc => 1.0 - unit(s[i]),
                                SrcAlpha => unit(s[3]),
                                OneMinusSrcAlpha => 1.0 - unit(s[3]),
                                Dst => unit(d[i]),
                                OneMinusDst => 1.0 - unit(d[i]),
                                DstAlpha => unit(d[3]),
                                OneMinusDstAlpha => 1.0 - unit(d[3]),
                                SrcAlphaSaturated if alpha => 1.0,
                                SrcAlphaSaturated => unit(s[3]).min(1.0 - unit(d[3])),
                                Constant => unit(k[i]),
                                OneMinusConstant => 1.0 - unit(k[i]),
                            }
                        };
                        for i in 0..4 {
                            let (ps, pd) =
                                (unit(s[i]) * f(src_factor, i), unit(d[i]) * f(dst_factor, i));
                            let want = match operation {
                                Add => ps + pd,
                                Subtract => ps - pd,
                                ReverseSubtract => pd - ps,
                                Min => unit(s[i].min(d[i])),
                                Max => unit(s[i].max(d[i])),
                            };
                            let want = (want.clamp(0.0, 1.0) * 255.0).round() as u8;
                            assert_eq!(got[i], want, "{state:?} {s:?} {d:?} {k:?} channel {i}");
                        }
                    }
                }
            }
        }
    }
}
