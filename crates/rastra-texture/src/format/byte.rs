//! The 8-bit colour codecs the short paths use (texel-cache fills of RGBA8/BGRA8 texels,
//! the ROPs' quad paths): unorm and sRGB encode and decode, by table or in SIMD registers,
//! each giving exactly the bits of the generic rules in `format` (Vulkan §3.9 "Fixed-Point
//! Data Conversions"; sRGB per the Khronos data format specification's transfer function).

use super::*;

/// Float to 8-bit unorm (clamp to [0, 1], NaN → 0, round to nearest): the rule every 8-bit
/// unorm encode uses, exported for units with a short path for those formats (the ROPs).
#[inline]
pub fn encode_unorm8(x: f32) -> u8 {
    unorm(x, 255.0) as u8
}
/// [`encode_unorm8_x4`] on a vector register: four floats to four codes (one per 32-bit
/// lane), the same operations.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn encode_unorm8_m128(x: std::arch::x86_64::__m128) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86-64 baseline; no memory is touched.
    unsafe {
        // `maxps` returns its second operand when either is NaN: NaN → 0.
        let x = _mm_min_ps(_mm_max_ps(x, _mm_setzero_ps()), _mm_set1_ps(1.0));
        // `cvtps2dq` rounds to nearest even (the default rounding mode).
        _mm_cvtps_epi32(_mm_mul_ps(x, _mm_set1_ps(255.0)))
    }
}

/// [`encode_unorm8`] of four values at once (as 32-bit codes). On x86-64 it is SSE2 code
/// (part of the baseline), four lanes per instruction; elsewhere the scalar rule lane by
/// lane.
#[inline]
pub fn encode_unorm8_x4(v: [f32; 4]) -> [u32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86-64 baseline; the loads and stores are of local
        // arrays of the right size.
        unsafe {
            let mut out = [0u32; 4];
            _mm_storeu_si128(
                out.as_mut_ptr().cast(),
                encode_unorm8_m128(_mm_loadu_ps(v.as_ptr())),
            );
            out
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        v.map(|x| encode_unorm8(x) as u32)
    }
}

/// Lookup tables that make 8-bit sRGB conversion exact and cheap: the linear value of every
/// code, and the linear values where the rounded code changes.
struct SrgbTables {
    decode: [f32; 256],
    /// `thresholds[k]`: smallest linear value that encodes to code `k + 1` or more (the
    /// linear value of encoded `(k + 0.5) / 255`); `thresholds[255]` is ∞ (no code above
    /// 255). The buckets are built from them; encoding reads only the buckets (the tests
    /// check the buckets against them).
    #[cfg_attr(not(test), allow(dead_code))]
    thresholds: [f32; 256],
    /// Per bucket — the values whose bits start with `first_bucket + b` (`bits >>
    /// BUCKET_SHIFT`), for every value below 1 — the code of its smallest value (bits 17
    /// and up) and the low 16 bits of the threshold inside it, or 2¹⁶ when it holds none
    /// (bits 0–16). A bucket spans less than 1% of its values, and at most one threshold
    /// lies inside one (tested), so a value's code is the bucket's plus one if its low
    /// bits reach the threshold's (positive floats order as their bits).
    bucket: Vec<u32>,
    /// A bucket wholly below the first threshold: every smaller value shares its code (0),
    /// so the table starts there (some 1600 buckets, not 16256: it stays in the L1 cache).
    first_bucket: u32,
}

/// Low bits of an f32 dropped to pick its [`SrgbTables::bucket`].
const BUCKET_SHIFT: u32 = 16;

fn srgb_tables() -> &'static SrgbTables {
    static TABLES: std::sync::OnceLock<SrgbTables> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let to_linear = |e: f64| {
            if e <= 0.040_45 {
                e / 12.92
            } else {
                ((e + 0.055) / 1.055).powf(2.4)
            }
        };
        let thresholds: [f32; 256] = std::array::from_fn(|k| {
            if k < 255 {
                to_linear((k as f64 + 0.5) / 255.0) as f32
            } else {
                f32::INFINITY
            }
        });
        let buckets = 1.0f32.to_bits() >> BUCKET_SHIFT;
        let first_bucket = (thresholds[0].to_bits() >> BUCKET_SHIFT).saturating_sub(1);
        let bucket = (first_bucket..buckets)
            .map(|b| {
                let lowest = f32::from_bits(b << BUCKET_SHIFT);
                let code = thresholds.partition_point(|&t| t <= lowest);
                let next = thresholds[code].to_bits();
                let low = if next >> BUCKET_SHIFT == b {
                    next & 0xffff
                } else {
                    0x1_0000
                };
                (code as u32) << 17 | low
            })
            .collect();
        SrgbTables {
            decode: std::array::from_fn(|k| to_linear(k as f64 / 255.0) as f32),
            thresholds,
            bucket,
            first_bucket,
        }
    })
}

/// A decoder for the texels of one 8-bit unorm format (`R8Unorm` … `Bgra8UnormSrgb`):
/// everything [`TextureFormat::decode_bits`] works out per texel — channel count, order,
/// sRGB — decided once, so units decoding many texels (a texel-cache fill) index two
/// tables per channel. Gives exactly `decode_bits`'s values.
#[derive(Clone, Copy, Debug)]
pub struct Unorm8Decoder {
    n: usize,
    bgra: bool,
    srgb: bool,
    /// Colour channels' table (sRGB or linear), alpha's table (always linear).
    color: &'static [f32; 256],
    alpha: &'static [f32; 256],
}

/// `code / 255` for every 8-bit code: the unorm decode's own arithmetic, tabulated.
fn unorm8_table() -> &'static [f32; 256] {
    static TABLE: std::sync::OnceLock<[f32; 256]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| std::array::from_fn(|k| k as f32 / 255.0))
}

impl TextureFormat {
    /// Whether this is an 8-bit unorm format (`R8Unorm` … `Bgra8UnormSrgb`): the formats
    /// [`TextureFormat::unorm8_decoder`] serves, whose decoded values all lie in [0, 1].
    pub fn is_unorm8(self) -> bool {
        matches!(self.enc(), Enc::Plain { ch: Ch::Unorm8, .. })
    }

    /// The fast decoder of this format's texels, if it is an 8-bit unorm format.
    pub fn unorm8_decoder(self) -> Option<Unorm8Decoder> {
        match self.enc() {
            Enc::Plain {
                ch: Ch::Unorm8,
                n,
                bgra,
            } => Some(Unorm8Decoder {
                n,
                bgra,
                srgb: self.is_srgb(),
                color: if self.is_srgb() {
                    srgb8_decode_table()
                } else {
                    unorm8_table()
                },
                alpha: unorm8_table(),
            }),
            _ => None,
        }
    }
}

impl Unorm8Decoder {
    /// Whether texels are four bytes (RGBA or BGRA): what [`Unorm8Decoder::decode_pair_avx2`]
    /// takes.
    pub fn four_channels(&self) -> bool {
        self.n == 4
    }

    /// [`Unorm8Decoder::decode`] of two 4-byte texels, `t[..4]` and `t[4..]`, at once: the
    /// first texel's four values (f32 bits) in the low half of the register. Unorm channels
    /// through [`unorm8_decode_avx2`] (the table's values), sRGB colour channels from the
    /// decoder's table.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA, and the format must have four channels
    /// ([`Unorm8Decoder::four_channels`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub unsafe fn decode_pair_avx2(&self, t: &[u8; 8]) -> std::arch::x86_64::__m256 {
        use std::arch::x86_64::*;
        debug_assert!(self.four_channels());
        // SAFETY: an eight-byte load of an eight-byte array.
        let raw = unsafe { _mm_loadl_epi64(t.as_ptr().cast()) };
        // BGRA: bytes 0 and 2 of each texel trade places.
        let raw = if self.bgra {
            _mm_shuffle_epi8(
                raw,
                _mm_setr_epi8(2, 1, 0, 3, 6, 5, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            )
        } else {
            raw
        };
        let codes = _mm256_cvtepu8_epi32(raw);
        // SAFETY: AVX2 and FMA (this function's contract); codes are bytes.
        let linear = unsafe { unorm8_decode_avx2(codes) };
        if self.srgb {
            // The sRGB decode table (`srgb8_to_linear_avx2`'s), read with one gather.
            // SAFETY: codes are bytes, below the table's 256 entries.
            let colour = unsafe { _mm256_i32gather_ps::<4>(self.color.as_ptr(), codes) };
            // Alpha (lanes 3 and 7) stays linear.
            _mm256_blend_ps::<0b1000_1000>(colour, linear)
        } else {
            linear
        }
    }

    /// The texel at the start of `t` as register values (f32 bits): missing channels 0,
    /// missing alpha 1.
    #[inline]
    pub fn decode(&self, t: &[u8]) -> [u32; 4] {
        let mut out = [0; 4];
        self.decode_into(t, &mut out);
        out
    }

    /// [`Unorm8Decoder::decode`] straight into `out`: the four values are put together in
    /// a vector register and stored at once (four 4-byte stores read back as wider words
    /// would stall the store buffer of whoever copies the texel next).
    #[inline(always)]
    pub fn decode_into(&self, t: &[u8], out: &mut [u32; 4]) {
        let c = |i: usize| self.color[t[i] as usize];
        let v = match self.n {
            4 => {
                let (r, b) = if self.bgra {
                    (c(2), c(0))
                } else {
                    (c(0), c(2))
                };
                [r, c(1), b, self.alpha[t[3] as usize]]
            }
            3 => [c(0), c(1), c(2), 1.0],
            2 => [c(0), c(1), 0.0, 1.0],
            _ => [c(0), 0.0, 0.0, 1.0],
        };
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            // SAFETY: SSE is part of the x86-64 baseline; `out` is 16 bytes.
            unsafe {
                _mm_storeu_ps(out.as_mut_ptr().cast(), _mm_setr_ps(v[0], v[1], v[2], v[3]));
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            *out = v.map(f32::to_bits);
        }
    }
}

/// 8-bit sRGB code to linear (the sRGB EOTF, exact to f32).
pub fn srgb_to_linear8(code: u8) -> f32 {
    srgb_tables().decode[code as usize]
}

/// [`srgb_to_linear8`] of every code, for units that decode many bytes at once.
pub fn srgb8_decode_table() -> &'static [f32; 256] {
    &srgb_tables().decode
}

/// Linear float to 8-bit sRGB with round-to-nearest in the encoded domain (NaN → 0).
#[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(x > 0)` is deliberate: NaN encodes to 0.
#[inline]
pub fn linear_to_srgb8(x: f32) -> u8 {
    srgb8_encode(srgb_tables(), x)
}

/// [`linear_to_srgb8`] of four values (as 32-bit codes), the tables looked up once.
#[inline]
pub fn linear_to_srgb8_x4(v: [f32; 4]) -> [u32; 4] {
    let t = srgb_tables();
    [
        srgb8_encode(t, v[0]) as u32,
        srgb8_encode(t, v[1]) as u32,
        srgb8_encode(t, v[2]) as u32,
        srgb8_encode(t, v[3]) as u32,
    ]
}

/// [`linear_to_srgb8`] of eight values at once (as 32-bit codes): the same bucket lookup,
/// the buckets read with one gather — NaN and values ≤ 0 encode to 0, values ≥ 1 to 255.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub unsafe fn linear_to_srgb8_avx2(x: std::arch::x86_64::__m256) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let t = srgb_tables();
    let bits = _mm256_castps_si256(x);
    // Ordered compares: false for NaN.
    let positive = _mm256_cmp_ps::<_CMP_GT_OQ>(x, _mm256_setzero_ps());
    let at_least_one = _mm256_cmp_ps::<_CMP_GE_OQ>(x, _mm256_set1_ps(1.0));
    let inside = _mm256_castps_si256(_mm256_andnot_ps(at_least_one, positive));
    // The bucket of a value in (0, 1); bucket 0 (a valid entry whose result is dropped)
    // for the others.
    let first = _mm256_set1_epi32(t.first_bucket as i32);
    let b = _mm256_srli_epi32::<16>(bits);
    let index = _mm256_and_si256(_mm256_sub_epi32(_mm256_max_epu32(b, first), first), inside);
    debug_assert_eq!(BUCKET_SHIFT, 16);
    // SAFETY: every index is below the table's length: a value below 1 has bits >> 16
    // below 1's, where the buckets end (`srgb_tables`), and the other lanes read entry 0.
    let e = unsafe { _mm256_i32gather_epi32::<4>(t.bucket.as_ptr().cast(), index) };
    let low = _mm256_and_si256(bits, _mm256_set1_epi32(0xffff));
    let threshold = _mm256_and_si256(e, _mm256_set1_epi32(0x1_ffff));
    // The bucket's code, plus one unless the threshold lies above the value (the compare
    // is −1 there).
    let above = _mm256_cmpgt_epi32(threshold, low);
    let code = _mm256_add_epi32(
        _mm256_srli_epi32::<17>(e),
        _mm256_add_epi32(_mm256_set1_epi32(1), above),
    );
    _mm256_or_si256(
        _mm256_and_si256(code, inside),
        _mm256_and_si256(_mm256_castps_si256(at_least_one), _mm256_set1_epi32(255)),
    )
}

/// [`srgb_to_linear8`] of eight codes (32-bit lanes, each below 256) at once: the decode
/// table read with one gather.
///
/// # Safety
/// The CPU must support AVX2, and every lane must be below 256.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub unsafe fn srgb8_to_linear_avx2(codes: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    // SAFETY: the caller keeps every index below the table's 256 entries.
    unsafe { _mm256_i32gather_ps::<4>(srgb_tables().decode.as_ptr(), codes) }
}

/// 1/255 as the sum of two floats: the rounded reciprocal and what it misses, rounded.
#[cfg(target_arch = "x86_64")]
const RECIPROCAL_255: (f32, f32) = {
    let hi = 1.0f32 / 255.0;
    (hi, (1.0f64 / 255.0 - hi as f64) as f32)
};

/// `code / 255` (the unorm8 decode, exactly rounded: [`Unorm8Decoder`]'s table) of eight
/// codes (32-bit lanes, each below 256) without a division: c · hi + c · lo with the
/// reciprocal split in two (`RECIPROCAL_255`), the small product rounded and the sum by one
/// fused multiply-add — one multiply and one fused multiply-add. The result equals the
/// division for every code (`reciprocal_unorm8_decode_is_the_division` checks all 256).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub unsafe fn unorm8_decode_avx2(codes: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    let c = _mm256_cvtepi32_ps(codes);
    let (hi, lo) = RECIPROCAL_255;
    _mm256_fmadd_ps(c, _mm256_set1_ps(hi), _mm256_mul_ps(c, _mm256_set1_ps(lo)))
}

/// [`encode_unorm8`] of eight values (codes in 32-bit lanes): the clamp (NaN → 0), the
/// product by 255 and `cvtps2dq`'s rounding to nearest even — the rule's operations, so its
/// bits.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub unsafe fn unorm8_encode_avx2(x: std::arch::x86_64::__m256) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    // `max` returns its second operand for NaN: 0.
    let x = _mm256_min_ps(_mm256_max_ps(x, _mm256_setzero_ps()), _mm256_set1_ps(1.0));
    _mm256_cvtps_epi32(_mm256_mul_ps(x, _mm256_set1_ps(255.0)))
}

/// [`encode_unorm8`] of two registers of eight values, as sixteen 16-bit codes: in each
/// 128-bit half, the four codes of `a`'s lanes there, then `b`'s (`packus_epi32`'s order).
/// The clamp below comes from the packing: NaN, −∞ and products past `i32`'s range
/// convert to `i32::MIN`, and every negative value saturates to 0. So only the clamp to 1
/// is made (NaN kept, `minps` returning its second operand), then the product by 255 and
/// the rounding to nearest even — the rule's codes.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub unsafe fn unorm8_encode_pack_avx2(
    a: std::arch::x86_64::__m256,
    b: std::arch::x86_64::__m256,
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    // (No closure: one would be compiled without this function's target features.)
    let (one, k) = (_mm256_set1_ps(1.0), _mm256_set1_ps(255.0));
    let a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_min_ps(one, a), k));
    let b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_min_ps(one, b), k));
    _mm256_packus_epi32(a, b)
}

/// [`linear_to_srgb8`] given the tables.
#[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(x > 0)` is deliberate: NaN encodes to 0.
#[inline(always)]
fn srgb8_encode(t: &SrgbTables, x: f32) -> u8 {
    if !(x > 0.0) {
        return 0;
    }
    if x >= 1.0 {
        // Every threshold is below 1.
        return 255;
    }
    // The bucket's first code, plus one if x reaches the one threshold a bucket can hold
    // (`srgb_buckets_hold_at_most_one_threshold`): the count of thresholds ≤ x, as a
    // search of the whole table gives it, with one table load and no loop or branch.
    // Values below the first bucket share its entry, which holds no threshold.
    let bits = x.to_bits();
    let e = t.bucket[(bits >> BUCKET_SHIFT).saturating_sub(t.first_bucket) as usize];
    ((e >> 17) + ((bits & 0xffff) >= (e & 0x1_ffff)) as u32) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The division-free unorm8 decode equals `code / 255` for every code.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn reciprocal_unorm8_decode_is_the_division() {
        if !crate::cpu::wide() {
            return;
        }
        use std::arch::x86_64::*;
        for code in 0..256i32 {
            let mut got = [0f32; 8];
            // SAFETY: `wide()` said the CPU has AVX2 and FMA; eight lanes stored.
            unsafe {
                let v = super::unorm8_decode_avx2(_mm256_set1_epi32(code));
                _mm256_storeu_ps(got.as_mut_ptr(), v);
            }
            let want = code as f32 / 255.0;
            assert_eq!(got.map(f32::to_bits), [want.to_bits(); 8], "code {code}");
        }
    }

    /// The 8-bit encodes (one value, four at once) equal the generic unorm rule: at NaN,
    /// infinities, every code's rounding boundary ± 2 ulps, and a sweep of [-0.5, 1.5].
    #[test]
    fn unorm8_encode_equals_the_generic_rule() {
        let mut xs = vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, 1.0];
        for code in 0..256 {
            let edge = (code as f32 + 0.5) / 255.0;
            let bits = edge.to_bits() as i64;
            xs.extend((bits - 2..=bits + 2).map(|b| f32::from_bits(b as u32)));
        }
        xs.extend((0..1_000_000).map(|i| i as f32 / 500_000.0 - 0.5));
        for x in &xs {
            assert_eq!(encode_unorm8(*x), unorm(*x, 255.0) as u8, "{x:e}");
        }
        for four in xs.chunks_exact(4) {
            let four: [f32; 4] = four.try_into().expect("four values");
            assert_eq!(
                encode_unorm8_x4(four),
                four.map(|x| unorm(x, 255.0)),
                "{four:?}"
            );
        }
    }

    /// The eight-lane encodes (one register; two packed to 16-bit codes) equal the generic
    /// rule: NaN, infinities, signed zeros, values outside [0, 1] and past `i32`'s range
    /// once scaled, every code's rounding boundary ± 64 ulps, and every 61st float of
    /// [0, 1].
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn eight_lane_unorm8_encode_equals_the_generic_rule() {
        if !crate::cpu::wide() {
            return;
        }
        use std::arch::x86_64::*;
        let mut xs = vec![
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            1.0,
            -1e-30,
            1.5,
            1e30,
            -1e30,
            -0.002,
            -0.0019,
            f32::from_bits(1),
        ];
        for code in 0..256 {
            let edge = (code as f32 + 0.5) / 255.0;
            let bits = edge.to_bits() as i64;
            xs.extend((bits - 64..=bits + 64).map(|b| f32::from_bits(b as u32)));
        }
        xs.extend((0..=1.0f32.to_bits()).step_by(61).map(f32::from_bits));
        for sixteen in xs.chunks(16) {
            let mut lanes = [0.0f32; 16];
            lanes[..sixteen.len()].copy_from_slice(sixteen);
            let want = lanes.map(|x| unorm(x, 255.0) as i32);
            let mut got = [0i32; 16];
            let mut packed = [0u16; 16];
            // SAFETY: `wide()` said the CPU has AVX2; eight or sixteen lanes loaded and
            // stored.
            unsafe {
                let (a, b) = (
                    _mm256_loadu_ps(lanes.as_ptr()),
                    _mm256_loadu_ps(lanes[8..].as_ptr()),
                );
                _mm256_storeu_si256(got.as_mut_ptr().cast(), unorm8_encode_avx2(a));
                _mm256_storeu_si256(got[8..].as_mut_ptr().cast(), unorm8_encode_avx2(b));
                _mm256_storeu_si256(packed.as_mut_ptr().cast(), unorm8_encode_pack_avx2(a, b));
            }
            assert_eq!(got, want, "{sixteen:?}");
            // packus order: per 128-bit half, a's four lanes then b's.
            let order = [0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15];
            let unpacked = order.map(|i| want[i] as u16);
            assert_eq!(packed, unpacked, "{sixteen:?}");
        }
    }

    /// What makes the bucketed encode loop-free: no bucket below 1 holds two thresholds.
    #[test]
    fn srgb_buckets_hold_at_most_one_threshold() {
        let t = srgb_tables();
        for pair in t.thresholds[..255].windows(2) {
            assert_ne!(
                pair[0].to_bits() >> BUCKET_SHIFT,
                pair[1].to_bits() >> BUCKET_SHIFT,
                "thresholds {pair:?} share a bucket"
            );
        }
    }

    /// The bucketed sRGB encode counts the thresholds ≤ x exactly like a full search, at
    /// every threshold, its neighbours and a sweep of the range.
    #[test]
    fn srgb_encode_equals_the_threshold_search() {
        let t = srgb_tables();
        let search = |x: f32| {
            if x > 0.0 {
                t.thresholds[..255].partition_point(|&t| t <= x) as u8
            } else {
                0
            }
        };
        let mut xs: Vec<f32> = vec![0.0, -0.0, -1.0, 1.0, 1.5, f32::NAN, f32::INFINITY];
        xs.push(f32::MIN_POSITIVE);
        xs.push(f32::from_bits(1));
        for &th in &t.thresholds[..255] {
            for d in -3i32..=3 {
                xs.push(f32::from_bits((th.to_bits() as i32 + d) as u32));
            }
        }
        xs.extend((0..=200_000).map(|i| i as f32 / 200_000.0));
        xs.extend(
            (0..(1.0f32.to_bits() >> BUCKET_SHIFT)).map(|b| f32::from_bits(b << BUCKET_SHIFT)),
        );
        for x in &xs {
            let x = *x;
            assert_eq!(linear_to_srgb8(x), search(x), "x = {x:e}");
            assert_eq!(
                linear_to_srgb8_x4([x; 4]),
                [search(x) as u32; 4],
                "x = {x:e}"
            );
        }
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::wide() {
            use std::arch::x86_64::*;
            // Eight different values per call, every lane position seeing every value.
            for k in 0..xs.len() {
                let lanes: [f32; 8] = std::array::from_fn(|i| xs[(k + i * 37) % xs.len()]);
                let mut got = [0u32; 8];
                // SAFETY: `wide()` said the CPU has AVX2; the arrays are eight lanes.
                unsafe {
                    let codes = linear_to_srgb8_avx2(_mm256_loadu_ps(lanes.as_ptr()));
                    _mm256_storeu_si256(got.as_mut_ptr().cast(), codes);
                }
                assert_eq!(got, lanes.map(|x| search(x) as u32), "{lanes:?}");
            }
            for code in 0..256u32 {
                let mut got = [0f32; 8];
                // SAFETY: as above; the codes are below 256.
                unsafe {
                    let v = srgb8_to_linear_avx2(_mm256_set1_epi32(code as i32));
                    _mm256_storeu_ps(got.as_mut_ptr(), v);
                }
                assert_eq!(
                    got.map(f32::to_bits),
                    [srgb_to_linear8(code as u8).to_bits(); 8]
                );
            }
        }
    }
}

#[cfg(test)]
mod unorm8_decoder_tests {
    use super::*;

    /// The fast decoder gives `decode_bits`'s values for every 8-bit unorm format, on every
    /// code of every channel.
    #[test]
    fn matches_decode_bits() {
        let mut formats = 0;
        for format in TextureFormat::all() {
            let Some(d) = format.unorm8_decoder() else {
                continue;
            };
            formats += 1;
            for code in 0..=255u8 {
                let bytes = [code, code.wrapping_mul(7), code ^ 0x5a, 255 - code];
                assert_eq!(
                    d.decode(&bytes),
                    format.decode_bits(TextureAspect::All, &bytes),
                    "{format:?} code {code}"
                );
            }
        }
        assert!(formats >= 6, "only {formats} 8-bit unorm formats");
    }

    /// Two texels at once give what two calls of the per-texel decoder give, for every
    /// four-channel 8-bit unorm format (RGBA and BGRA, linear and sRGB), every code in
    /// every channel of both texels.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn pairs_match_the_per_texel_decoder() {
        if !crate::cpu::wide() {
            return;
        }
        let mut formats = 0;
        for format in TextureFormat::all() {
            let Some(d) = format.unorm8_decoder().filter(|d| d.four_channels()) else {
                continue;
            };
            formats += 1;
            for code in 0..=255u8 {
                let t = [
                    code,
                    code.wrapping_mul(7),
                    code ^ 0x5a,
                    255 - code,
                    code.wrapping_add(85),
                    code.wrapping_mul(13),
                    !code,
                    code.rotate_left(3),
                ];
                let mut got = [[0u32; 4]; 2];
                // SAFETY: `wide()` said the CPU has AVX2 and FMA; four-channel format; a
                // 32-byte store into two four-word texels.
                unsafe {
                    let v = d.decode_pair_avx2(&t);
                    std::arch::x86_64::_mm256_storeu_ps(got.as_mut_ptr().cast(), v);
                }
                let want = [d.decode(&t[..4]), d.decode(&t[4..])];
                assert_eq!(got, want, "{format:?} code {code}");
            }
        }
        assert!(
            formats >= 4,
            "only {formats} four-channel 8-bit unorm formats"
        );
    }
}
