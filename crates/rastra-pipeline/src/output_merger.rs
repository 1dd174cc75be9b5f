//! The output merger / ROP (T9 "Blend and late Z", Z "ROPs"): blends a shaded sample with the
//! colour already in the target and writes the channels the write mask allows, in the
//! target's format. Blending follows WebGPU §23.3.5 (blend factors and operations); for
//! normalized formats the source colour and the blend constant are clamped to [0, 1] first.
//! Linear 8-bit unorm targets blend in 8-bit fixed point (`fixed`), sRGB targets in
//! linear space, other formats in single precision.

mod fixed;

use fixed::{Over, blend_unorm8};

use rastra_texture::format::encode_unorm8 as unorm8;
use rastra_texture::format::encode_unorm8_x4 as unorm8_x4;
#[cfg(target_arch = "x86_64")]
use rastra_texture::format::{
    encode_unorm8_m128, linear_to_srgb8_avx2, srgb8_to_linear_avx2, unorm8_decode_avx2,
    unorm8_encode_avx2,
};
use rastra_texture::format::{
    linear_to_srgb8, linear_to_srgb8_x4, srgb_to_linear8, srgb8_decode_table,
};

use rastra_shader::WARP_LANES;

use crate::format::TextureFormat;
use crate::state::{BlendComponent, BlendFactor, BlendOperation, BlendState, ColorTargetState};

/// Whether the format is a linear 8-bit unorm one, blended in fixed point (`fixed`).
fn is_fixed8(format: TextureFormat) -> bool {
    use TextureFormat::*;
    matches!(format, R8Unorm | Rg8Unorm | Rgba8Unorm | Bgra8Unorm)
}

/// Whether the format's values are normalized to [0, 1] (so blend inputs are clamped).
fn is_normalized(format: TextureFormat) -> bool {
    use TextureFormat::*;
    matches!(
        format,
        R8Unorm | Rg8Unorm | Rgba8Unorm | Rgba8UnormSrgb | Bgra8Unorm | Bgra8UnormSrgb
    )
}

#[inline]
fn factor(
    f: BlendFactor,
    src: &[f32; 4],
    dst: &[f32; 4],
    constant: &[f32; 4],
    alpha: bool,
) -> [f32; 4] {
    let splat = |v: f32| [v; 4];
    match f {
        BlendFactor::Zero => splat(0.0),
        BlendFactor::One => splat(1.0),
        BlendFactor::Src => *src,
        BlendFactor::OneMinusSrc => src.map(|v| 1.0 - v),
        BlendFactor::SrcAlpha => splat(src[3]),
        BlendFactor::OneMinusSrcAlpha => splat(1.0 - src[3]),
        BlendFactor::Dst => *dst,
        BlendFactor::OneMinusDst => dst.map(|v| 1.0 - v),
        BlendFactor::DstAlpha => splat(dst[3]),
        BlendFactor::OneMinusDstAlpha => splat(1.0 - dst[3]),
        BlendFactor::SrcAlphaSaturated => {
            if alpha {
                splat(1.0)
            } else {
                splat(src[3].min(1.0 - dst[3]))
            }
        }
        BlendFactor::Constant => *constant,
        BlendFactor::OneMinusConstant => constant.map(|v| 1.0 - v),
    }
}

#[inline]
fn apply(
    c: &BlendComponent,
    src: &[f32; 4],
    dst: &[f32; 4],
    constant: &[f32; 4],
    alpha: bool,
    out: &mut [f32; 4],
) {
    let fs = factor(c.src_factor, src, dst, constant, alpha);
    let fd = factor(c.dst_factor, src, dst, constant, alpha);
    let range = if alpha { 3..4 } else { 0..3 };
    for i in range {
        out[i] = match c.operation {
            BlendOperation::Add => src[i] * fs[i] + dst[i] * fd[i],
            BlendOperation::Subtract => src[i] * fs[i] - dst[i] * fd[i],
            BlendOperation::ReverseSubtract => dst[i] * fd[i] - src[i] * fs[i],
            BlendOperation::Min => src[i].min(dst[i]),
            BlendOperation::Max => src[i].max(dst[i]),
        };
    }
}

/// Blend states with a short path: the "over" operators most blended draws use. Each
/// computes exactly the generic path's expressions in the same order (bit-identical).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlendPath {
    Generic,
    /// `BlendState::ALPHA_BLENDING`.
    Alpha,
    /// `BlendState::PREMULTIPLIED_ALPHA_BLENDING`.
    Premultiplied,
}

impl BlendPath {
    fn of(state: &Option<BlendState>) -> BlendPath {
        match state {
            Some(b) if *b == BlendState::ALPHA_BLENDING => BlendPath::Alpha,
            Some(b) if *b == BlendState::PREMULTIPLIED_ALPHA_BLENDING => BlendPath::Premultiplied,
            _ => BlendPath::Generic,
        }
    }
}

/// 8-bit unorm codes as floats (`code / 255`, the generic decode's arithmetic).
const UNORM8_TO_F32: [f32; 256] = {
    let mut table = [0.0; 256];
    let mut code = 0;
    while code < 256 {
        table[code] = code as f32 / 255.0;
        code += 1;
    }
    table
};

/// A quad's four colours, channel-major: `colors[channel][pixel]`, pixels in quad order
/// (the layout the shader cores' registers hold them in).
pub type QuadColors = [[f32; 4]; 4];

/// Blends `src` over `dst` (both linear RGBA).
pub fn blend(state: &BlendState, src: [f32; 4], dst: [f32; 4], constant: [f32; 4]) -> [f32; 4] {
    let mut out = [0.0; 4];
    apply(&state.color, &src, &dst, &constant, false, &mut out);
    apply(&state.alpha, &src, &dst, &constant, true, &mut out);
    out
}

/// One colour target's ROP, configured once per draw: the target state, the blend constant
/// (clamped for normalized formats) and whether writes are plain replacements.
#[derive(Clone, Copy, Debug)]
pub struct Rop {
    pub state: ColorTargetState,
    constant: [f32; 4],
    normalized: bool,
    /// No blending and every channel written: the encoded colour is simply stored.
    replace: bool,
    /// Bytes per sample of the target.
    pub size: usize,
    /// 8-bit RGBA/BGRA targets (linear or sRGB) take a short path around the generic
    /// texel codec.
    unorm8: Option<Unorm8Order>,
    /// The 8-bit target stores sRGB-encoded colour channels (alpha stays linear).
    srgb: bool,
    blend_path: BlendPath,
    /// A linear 8-bit unorm target: blended in fixed point ([`blend_unorm8`]).
    fixed8: bool,
    /// The blend constant's codes, for `fixed8` targets.
    constant8: [u8; 4],
    /// A linear 8-bit RGBA/BGRA target's "over" blend state, which the vector paths serve.
    over: Option<Over>,
}

/// Channel order of an 8-bit unorm RGBA-like target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unorm8Order {
    Rgba,
    Bgra,
}

impl Unorm8Order {
    /// Channel `c` is byte `bytes()[c]` of a texel.
    const fn bytes(self) -> [u32; 4] {
        match self {
            Unorm8Order::Rgba => [0, 1, 2, 3],
            Unorm8Order::Bgra => [2, 1, 0, 3],
        }
    }
}

impl Rop {
    /// Encodes a colour (not alpha) channel of an 8-bit target.
    #[inline(always)]
    fn encode8(&self, v: f32) -> u8 {
        if self.srgb {
            linear_to_srgb8(v)
        } else {
            unorm8(v)
        }
    }

    /// Decodes a colour (not alpha) channel byte `b` of an 8-bit target.
    #[inline(always)]
    fn decode8(&self, b: u8) -> f32 {
        if self.srgb {
            srgb_to_linear8(b)
        } else {
            UNORM8_TO_F32[b as usize]
        }
    }

    #[inline]
    fn encode(&self, c: [f32; 4], texel: &mut [u8]) {
        match self.unorm8 {
            Some(Unorm8Order::Rgba) => {
                for i in 0..3 {
                    texel[i] = self.encode8(c[i]);
                }
                texel[3] = unorm8(c[3]);
            }
            Some(Unorm8Order::Bgra) => {
                texel[0] = self.encode8(c[2]);
                texel[1] = self.encode8(c[1]);
                texel[2] = self.encode8(c[0]);
                texel[3] = unorm8(c[3]);
            }
            None => self.state.format.encode_color(c, texel),
        }
    }

    #[inline]
    fn decode(&self, texel: &[u8]) -> [f32; 4] {
        let n = |b: u8| self.decode8(b);
        let a = |b: u8| UNORM8_TO_F32[b as usize];
        match self.unorm8 {
            Some(Unorm8Order::Rgba) => [n(texel[0]), n(texel[1]), n(texel[2]), a(texel[3])],
            Some(Unorm8Order::Bgra) => [n(texel[2]), n(texel[1]), n(texel[0]), a(texel[3])],
            None => self.state.format.decode_color(texel),
        }
    }
}

impl Rop {
    pub fn new(state: ColorTargetState, constant: [f32; 4]) -> Rop {
        let normalized = is_normalized(state.format);
        let blend_path = BlendPath::of(&state.blend);
        let rgba8_linear = matches!(
            state.format,
            TextureFormat::Rgba8Unorm | TextureFormat::Bgra8Unorm
        );
        Rop {
            state,
            constant: if normalized {
                constant.map(|v| v.clamp(0.0, 1.0))
            } else {
                constant
            },
            normalized,
            replace: state.blend.is_none() && state.write_mask.0 & 0xf == 0xf,
            size: state.format.texel_size(),
            unorm8: match state.format {
                TextureFormat::Rgba8Unorm | TextureFormat::Rgba8UnormSrgb => {
                    Some(Unorm8Order::Rgba)
                }
                TextureFormat::Bgra8Unorm | TextureFormat::Bgra8UnormSrgb => {
                    Some(Unorm8Order::Bgra)
                }
                _ => None,
            },
            srgb: matches!(
                state.format,
                TextureFormat::Rgba8UnormSrgb | TextureFormat::Bgra8UnormSrgb
            ),
            blend_path,
            fixed8: is_fixed8(state.format),
            constant8: constant.map(unorm8),
            over: match blend_path {
                BlendPath::Alpha if rgba8_linear => Some(Over::Alpha),
                BlendPath::Premultiplied if rgba8_linear => Some(Over::Premultiplied),
                _ => None,
            },
        }
    }

    /// A `fixed8` texel's codes as RGBA (a channel the format lacks: 0, alpha 255 — its
    /// decoded value, 1).
    #[inline(always)]
    fn codes8(&self, texel: &[u8]) -> [u8; 4] {
        match self.state.format {
            TextureFormat::Rgba8Unorm => [texel[0], texel[1], texel[2], texel[3]],
            TextureFormat::Bgra8Unorm => [texel[2], texel[1], texel[0], texel[3]],
            TextureFormat::Rg8Unorm => [texel[0], texel[1], 0, 255],
            _ => [texel[0], 0, 0, 255],
        }
    }

    /// Stores RGBA codes in a `fixed8` texel (the format's channels).
    #[inline(always)]
    fn store8(&self, c: [u8; 4], texel: &mut [u8]) {
        match self.state.format {
            TextureFormat::Rgba8Unorm => texel[..4].copy_from_slice(&c),
            TextureFormat::Bgra8Unorm => texel[..4].copy_from_slice(&[c[2], c[1], c[0], c[3]]),
            TextureFormat::Rg8Unorm => texel[..2].copy_from_slice(&c[..2]),
            _ => texel[0] = c[0],
        }
    }

    /// Blends with the short path when the state has one.
    #[inline]
    fn blend(&self, state: &BlendState, src: [f32; 4], dst: [f32; 4]) -> [f32; 4] {
        match self.blend_path {
            BlendPath::Alpha => {
                let (a, inv) = (src[3], 1.0 - src[3]);
                [
                    src[0] * a + dst[0] * inv,
                    src[1] * a + dst[1] * inv,
                    src[2] * a + dst[2] * inv,
                    src[3] * 1.0 + dst[3] * inv,
                ]
            }
            BlendPath::Premultiplied => {
                let inv = 1.0 - src[3];
                [
                    src[0] * 1.0 + dst[0] * inv,
                    src[1] * 1.0 + dst[1] * inv,
                    src[2] * 1.0 + dst[2] * inv,
                    src[3] * 1.0 + dst[3] * inv,
                ]
            }
            BlendPath::Generic => blend(state, src, dst, self.constant),
        }
    }

    /// Whether a write replaces the stored texel whole (no blending, every channel written):
    /// nothing of what was there before survives it.
    pub fn replaces(&self) -> bool {
        self.replace
    }

    /// Writes a quad's shaded colours into its covered samples. `texels` holds the quad's
    /// four pixels, adjacent in pixel order (the surface layout keeps a quad together), each
    /// `samples` samples. Returns (samples written, samples blended). Inlined into the pixel
    /// pipe's per-target loop, which is compiled for the baseline and for AVX2.
    #[inline(always)]
    pub fn write_quad(
        &self,
        texels: &mut [u8],
        samples: usize,
        coverage: [u8; 4],
        colors: &QuadColors,
    ) -> (u64, u64) {
        if let Some(order) = self.unorm8
            && samples == 1
            && self.state.write_mask.0 & 0xf == 0xf
        {
            let quad: &mut [u8; 16] = (&mut texels[..16]).try_into().expect("a quad is 16 bytes");
            if self.srgb {
                return self.quad8_srgb(quad, order.bytes(), coverage, colors);
            }
            #[cfg(target_arch = "x86_64")]
            if self.state.blend.is_none() || self.over.is_some() {
                return self.quad8_linear_x86(quad, order, coverage, colors);
            }
        }
        let pixel = self.size * samples;
        let mut sum = (0, 0);
        for (i, texels) in texels.chunks_exact_mut(pixel).take(4).enumerate() {
            if coverage[i] != 0 {
                let color = [0, 1, 2, 3].map(|c| colors[c][i]);
                let (w, b) = self.write_pixel(texels, coverage[i], color);
                sum = (sum.0 + w, sum.1 + b);
            }
        }
        sum
    }

    /// [`Rop::write_quad`] for linear 8-bit targets with no blending or an "over" blend
    /// state, written with SSE2 intrinsics: the quad's four texels are one 128-bit
    /// register; each channel's four codes are made at once, blended in fixed point
    /// ([`fixed::quad_sse2`]), and the covered pixels are selected into the old texels with
    /// one mask (the uncovered ones are written back unchanged — the quad lies in the tile
    /// this worker owns). The same codes as `write_pixel`, tested.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn quad8_linear_x86(
        &self,
        texels: &mut [u8; 16],
        order: Unorm8Order,
        coverage: [u8; 4],
        colors: &QuadColors,
    ) -> (u64, u64) {
        use std::arch::x86_64::*;
        let cov = u32::from_le_bytes(coverage);
        let written = cov.count_ones() as u64;
        // The channel stored in byte k (the orders swap channels in pairs: their own
        // inverse).
        let channel = order.bytes();
        // SAFETY: SSE2 is part of the x86-64 baseline; every load and store is of an array
        // of exactly 16 bytes.
        unsafe {
            let src: [__m128i; 4] = std::array::from_fn(|k| {
                encode_unorm8_m128(_mm_loadu_ps(colors[channel[k] as usize].as_ptr()))
            });
            let old = _mm_loadu_si128(texels.as_ptr().cast());
            let over = if self.state.blend.is_some() {
                self.over
            } else {
                None
            };
            let packed = fixed::quad_sse2(src, old, over);
            // Pixel i is written when bit 0 of its coverage byte is set.
            let bits = _mm_set_epi32(1 << 24, 1 << 16, 1 << 8, 1);
            let select = _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32(cov as i32), bits), bits);
            let merged = _mm_or_si128(_mm_and_si128(select, packed), _mm_andnot_si128(select, old));
            _mm_storeu_si128(texels.as_mut_ptr().cast(), merged);
        }
        let blended = if self.state.blend.is_some() {
            written
        } else {
            0
        };
        (written, blended)
    }

    /// Whether [`Rop::write_quad_pairs_avx2`] serves this target at `samples` samples per
    /// pixel: a single-sampled 8-bit RGBA/BGRA target (linear or sRGB) with every channel
    /// written and no blending or an "over" blend, on x86-64.
    #[inline]
    pub fn has_pair_path(&self, samples: usize) -> bool {
        cfg!(target_arch = "x86_64")
            && samples == 1
            && self.unorm8.is_some()
            && self.state.write_mask.0 & 0xf == 0xf
            && (self.state.blend.is_none() || self.blend_path != BlendPath::Generic)
    }

    /// [`Rop::write_quad`] for pairs of quads, two at different positions at once, on a
    /// target [`Rop::has_pair_path`] serves: in pair `k`, quad `j` (0 or 1) has the texels
    /// at `base + pairs[k] + j` (in quads of 16 bytes) and the coverage `coverage[2k + j]`
    /// (`None`: every pixel covered — the texels are then written without being read when
    /// nothing is blended), its colours are lanes
    /// `first + 8k + 4j .. first + 8k + 4j + 4` of the shader's output registers `regs`
    /// (channel-major; channels the shader does not write are (0, 0, 0, 1)). On linear
    /// targets, `quad8_linear_x86`'s codes and fixed-point blend, sixteen 16-bit lanes per
    /// AVX2 instruction ([`fixed::pair_avx2`]); on sRGB targets the colour channels are
    /// decoded, blended and encoded as `quad8_srgb` does (the decode table, the bucketed
    /// encode), eight lanes at once, through gathers. Either gives the quad path's bits.
    /// `N` pairs in one call take the target's settings and constants once; the quads'
    /// addresses are made here, from `base` and the offsets (an array of addresses made by
    /// the caller would be stored pointer by pointer and read back here with wider loads,
    /// which wait for those stores to reach the cache). Returns (samples written, samples
    /// blended).
    ///
    /// # Safety
    /// The CPU must support AVX2, FMA and POPCNT (`rastra_texture::cpu::wide`). Every
    /// quad named addresses 16 bytes readable and writable for the call, which nothing else
    /// accesses meanwhile, and the quads are different bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,popcnt")]
    pub unsafe fn write_quad_pairs_avx2<const N: usize>(
        &self,
        base: *mut [u8; 16],
        pairs: &[usize; N],
        coverage: Option<&[[u8; 4]]>,
        regs: &[[u32; WARP_LANES]],
        first: usize,
    ) -> (u64, u64) {
        let quads = PairsAt {
            base,
            offsets: pairs.iter(),
        };
        // SAFETY: the caller's contract.
        unsafe { self.pairs_for_target(quads, N, coverage, regs, first) }
    }

    /// [`Rop::write_quad_pairs_avx2`] for a run of pairs given by address: pair `k`'s
    /// quads are `texels[k]`, written in order — a quad may reappear in a later pair (two
    /// triangles' quads at one position in a warp), which then blends over what the earlier
    /// pair wrote, as quad-by-quad writes would. One call for a warp's run of pairs takes
    /// the target's settings and constants once.
    ///
    /// # Safety
    /// The CPU must support AVX2, FMA and POPCNT (`rastra_texture::cpu::wide`). Every
    /// pointer addresses 16 bytes readable and writable for the call, which nothing else
    /// accesses meanwhile, and the two quads of a pair are different bytes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,popcnt")]
    pub unsafe fn write_quad_pair_run_avx2(
        &self,
        texels: &[[*mut [u8; 16]; 2]],
        coverage: &[[u8; 4]],
        regs: &[[u32; WARP_LANES]],
        first: usize,
    ) -> (u64, u64) {
        let (t, n) = (texels.iter().copied(), texels.len());
        // SAFETY: this function's contract.
        unsafe { self.pairs_for_target(t, n, Some(coverage), regs, first) }
    }

    /// The pairs' loop made for the target's kind, picked once per call (no test of the
    /// kind inside the loop), over `pairs` pairs of quad addresses: a fixed-size array (the
    /// loop then unrolled) or a run.
    ///
    /// # Safety
    /// As [`Rop::write_quad_pair_run_avx2`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,popcnt")]
    #[inline]
    unsafe fn pairs_for_target<I>(
        &self,
        texels: I,
        pairs: usize,
        coverage: Option<&[[u8; 4]]>,
        regs: &[[u32; WARP_LANES]],
        first: usize,
    ) -> (u64, u64)
    where
        I: IntoIterator<Item = [*mut [u8; 16]; 2]>,
    {
        let blend = self.state.blend.is_some();
        let alpha = self.blend_path == BlendPath::Alpha;
        let bgra = self.unorm8 == Some(Unorm8Order::Bgra);
        let (t, n, c, r, f) = (texels, pairs, coverage, regs, first);
        // SAFETY: this function's contract.
        unsafe {
            if bgra {
                self.pairs_for_order::<_, true>(t, n, c, r, f, blend, alpha)
            } else {
                self.pairs_for_order::<_, false>(t, n, c, r, f, blend, alpha)
            }
        }
    }

    /// [`Rop::pairs_for_target`] once the channel order is known (`BGRA`: blue in byte 0).
    ///
    /// # Safety
    /// As [`Rop::write_quad_pair_run_avx2`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,popcnt")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn pairs_for_order<I, const BGRA: bool>(
        &self,
        t: I,
        n: usize,
        c: Option<&[[u8; 4]]>,
        r: &[[u32; WARP_LANES]],
        f: usize,
        blend: bool,
        alpha: bool,
    ) -> (u64, u64)
    where
        I: IntoIterator<Item = [*mut [u8; 16]; 2]>,
    {
        // SAFETY: this function's contract.
        unsafe {
            match (self.srgb, blend, alpha) {
                (false, false, _) => self.quad_pairs::<_, false, false, false, BGRA>(t, n, c, r, f),
                (false, true, false) => {
                    self.quad_pairs::<_, false, true, false, BGRA>(t, n, c, r, f)
                }
                (false, true, true) => self.quad_pairs::<_, false, true, true, BGRA>(t, n, c, r, f),
                (true, false, _) => self.quad_pairs::<_, true, false, false, BGRA>(t, n, c, r, f),
                (true, true, false) => self.quad_pairs::<_, true, true, false, BGRA>(t, n, c, r, f),
                (true, true, true) => self.quad_pairs::<_, true, true, true, BGRA>(t, n, c, r, f),
            }
        }
    }

    /// The pairs' loop for a target that is sRGB when `SRGB`, blends when `BLEND` — by
    /// source alpha when `ALPHA`, else with a source factor of one — and stores blue in
    /// byte 0 when `BGRA` (the channels' shifts then constants).
    ///
    /// # Safety
    /// As [`Rop::write_quad_pair_run_avx2`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,popcnt")]
    unsafe fn quad_pairs<
        I,
        const SRGB: bool,
        const BLEND: bool,
        const ALPHA: bool,
        const BGRA: bool,
    >(
        &self,
        texels: I,
        pairs: usize,
        coverage: Option<&[[u8; 4]]>,
        regs: &[[u32; WARP_LANES]],
        first: usize,
    ) -> (u64, u64)
    where
        I: IntoIterator<Item = [*mut [u8; 16]; 2]>,
    {
        use std::arch::x86_64::*;
        debug_assert!(self.has_pair_path(1));
        debug_assert_eq!(
            (SRGB, BLEND, ALPHA && BLEND),
            (
                self.srgb,
                self.state.blend.is_some(),
                self.state.blend.is_some() && self.blend_path == BlendPath::Alpha
            )
        );
        if let Some(coverage) = coverage {
            assert!(coverage.len() >= 2 * pairs, "a coverage word per quad");
        }
        // Each channel's register, chosen once: a channel the shader does not write is read
        // from a register holding its constant, so the loop loads all four alike.
        static UNWRITTEN: [[u32; WARP_LANES]; 2] =
            [[0; WARP_LANES], [1.0f32.to_bits(); WARP_LANES]];
        let channels: [&[u32; WARP_LANES]; 4] =
            std::array::from_fn(|c| regs.get(c).unwrap_or(&UNWRITTEN[(c == 3) as usize]));
        // A linear target's channels by the byte they are stored in (the orders swap
        // channels in pairs: their own inverse).
        let byte = pair_bytes::<BGRA>();
        let by_byte: [&[u32; WARP_LANES]; 4] = byte.map(|c| channels[c as usize]);
        let over = match (BLEND, ALPHA) {
            (false, _) => None,
            (true, true) => Some(Over::Alpha),
            (true, false) => Some(Over::Premultiplied),
        };
        // Samples written (every one of them blended when `BLEND`).
        let mut written = 0;
        for (k, [t0, t1]) in texels.into_iter().enumerate() {
            let first = first + 8 * k;
            // The old texels, unless every pixel is written without blending.
            let old = if BLEND || coverage.is_some() {
                // SAFETY: each quad's texels are 16 readable bytes (the contract).
                unsafe {
                    _mm256_set_m128i(
                        _mm_loadu_si128(t1.cast_const().cast()),
                        _mm_loadu_si128(t0.cast_const().cast()),
                    )
                }
            } else {
                _mm256_setzero_si256()
            };
            // SAFETY: AVX2 and FMA (this function's target features).
            let bytes = unsafe {
                if SRGB {
                    // sRGB colour channels through the decode table and the bucketed
                    // encode, in single precision.
                    let out = pair_colour_srgb::<BLEND, ALPHA, BGRA>(&channels, first, old);
                    pair_pack::<BGRA>([
                        linear_to_srgb8_avx2(out[0]),
                        linear_to_srgb8_avx2(out[1]),
                        linear_to_srgb8_avx2(out[2]),
                        unorm8_encode_avx2(out[3]),
                    ])
                } else {
                    // Linear: codes, blended in fixed point.
                    let src = [
                        lanes8(by_byte[0], first),
                        lanes8(by_byte[1], first),
                        lanes8(by_byte[2], first),
                        lanes8(by_byte[3], first),
                    ];
                    fixed::pair_avx2(src, old, over)
                }
            };
            match coverage {
                Some(coverage) => {
                    // Pixel i of quad j is written when bit 0 of its coverage byte is set.
                    let cov = [coverage[2 * k], coverage[2 * k + 1]]
                        .map(|c| u32::from_le_bytes(c) as i32);
                    written +=
                        (cov[0] as u32).count_ones() as u64 + (cov[1] as u32).count_ones() as u64;
                    // SAFETY: each quad's texels are 16 writable bytes (the contract); AVX2.
                    unsafe { pair_merge_store(bytes, old, cov, [t0, t1]) };
                }
                None => {
                    written += 8;
                    // SAFETY: as above.
                    unsafe {
                        _mm_storeu_si128(t0.cast(), _mm256_castsi256_si128(bytes));
                        _mm_storeu_si128(t1.cast(), _mm256_extracti128_si256(bytes, 1));
                    }
                }
            }
        }
        (written, if BLEND { written } else { 0 })
    }

    /// The 8-bit quad path for sRGB targets. Each channel's four pixels go through decode,
    /// blend and encode as 4-wide arrays with no per-pixel branch or table lookup outside
    /// sRGB decoding, so the compiler emits SIMD code; every value is computed with exactly
    /// the per-pixel path's expressions (`code / 255` is the unorm decode table's own
    /// arithmetic).
    #[inline(always)]
    fn quad8_srgb(
        &self,
        texels: &mut [u8; 16],
        byte: [u32; 4],
        coverage: [u8; 4],
        colors: &QuadColors,
    ) -> (u64, u64) {
        let mut src = *colors;
        for channel in &mut src {
            for v in channel {
                *v = v.clamp(0.0, 1.0);
            }
        }
        let written = u32::from_le_bytes(coverage).count_ones() as u64;
        let words: [u32; 4] = std::array::from_fn(|i| {
            u32::from_le_bytes(*texels[i * 4..].first_chunk().unwrap_or(&[0; 4]))
        });
        let mut out = src;
        if let Some(state) = self.state.blend {
            let mut dst: QuadColors = [[0.0; 4]; 4];
            for (c, channel) in dst.iter_mut().enumerate() {
                let shift = 8 * byte[c];
                if c != 3 {
                    let table = srgb8_decode_table();
                    for (v, word) in channel.iter_mut().zip(words) {
                        *v = table[(word >> shift & 0xff) as usize];
                    }
                } else {
                    *channel = unorm8_channel_x4(words, shift);
                }
            }
            match self.blend_path {
                // out = src·fs + dst·(1 − source alpha), fs = source alpha for the colour
                // channels under `Alpha`, else 1 (the short paths of `Rop::blend`).
                BlendPath::Alpha | BlendPath::Premultiplied => {
                    let alpha = src[3];
                    let inv = alpha.map(|a| 1.0 - a);
                    for c in 0..4 {
                        let fs = if c != 3 && self.blend_path == BlendPath::Alpha {
                            alpha
                        } else {
                            [1.0; 4]
                        };
                        for i in 0..4 {
                            out[c][i] = src[c][i] * fs[i] + dst[c][i] * inv[i];
                        }
                    }
                }
                BlendPath::Generic => {
                    for i in 0..4 {
                        let color = self::blend(
                            &state,
                            [src[0][i], src[1][i], src[2][i], src[3][i]],
                            [dst[0][i], dst[1][i], dst[2][i], dst[3][i]],
                            self.constant,
                        );
                        for (c, v) in color.into_iter().enumerate() {
                            out[c][i] = v;
                        }
                    }
                }
            }
        }
        let mut packed = [0u32; 4];
        for (c, channel) in out.iter().enumerate() {
            let shift = 8 * byte[c];
            let codes = if c != 3 {
                linear_to_srgb8_x4(*channel)
            } else {
                unorm8_x4(*channel)
            };
            for (word, code) in packed.iter_mut().zip(codes) {
                *word |= code << shift;
            }
        }
        for (i, word) in packed.iter().enumerate() {
            if coverage[i] & 1 != 0 {
                texels[i * 4..i * 4 + 4].copy_from_slice(&word.to_le_bytes());
            }
        }
        let blended = if self.state.blend.is_some() {
            written
        } else {
            0
        };
        (written, blended)
    }

    /// Writes a pixel's shaded colour into its covered samples. `texels` holds the pixel's
    /// samples, adjacent (the surface layout invariant). Returns (samples written, samples
    /// blended).
    pub fn write_pixel(&self, texels: &mut [u8], coverage: u8, color: [f32; 4]) -> (u64, u64) {
        let size = self.size;
        let src = if self.normalized {
            color.map(|v| v.clamp(0.0, 1.0))
        } else {
            color
        };
        if self.state.write_mask.0 & 0xf == 0 {
            return (0, 0);
        }
        let written = coverage.count_ones() as u64;
        if self.replace {
            let mut encoded = [0u8; 16];
            self.encode(src, &mut encoded[..size]);
            for (s, texel) in texels.chunks_exact_mut(size).enumerate() {
                if coverage & (1 << s) != 0 {
                    texel.copy_from_slice(&encoded[..size]);
                }
            }
            return (written, 0);
        }
        let all_channels = self.state.write_mask.0 & 0xf == 0xf;
        if self.fixed8 {
            // The source's codes (the encode clamps), blended with the texel's.
            let src = color.map(unorm8);
            for (s, texel) in texels.chunks_exact_mut(size).enumerate() {
                if coverage & (1 << s) == 0 {
                    continue;
                }
                let dst = self.codes8(texel);
                let mut out = match &self.state.blend {
                    Some(b) => blend_unorm8(b, src, dst, self.constant8),
                    None => src,
                };
                for (i, v) in out.iter_mut().enumerate() {
                    if !self.state.write_mask.writes(i) {
                        *v = dst[i];
                    }
                }
                self.store8(out, texel);
            }
            let blended = if self.state.blend.is_some() {
                written
            } else {
                0
            };
            return (written, blended);
        }
        for (s, texel) in texels.chunks_exact_mut(size).enumerate() {
            if coverage & (1 << s) == 0 {
                continue;
            }
            let dst = self.decode(texel);
            let mut out = match &self.state.blend {
                Some(b) => self.blend(b, src, dst),
                None => src,
            };
            if !all_channels {
                for (i, v) in out.iter_mut().enumerate() {
                    if !self.state.write_mask.writes(i) {
                        *v = dst[i];
                    }
                }
            }
            self.encode(out, texel);
        }
        let blended = if self.state.blend.is_some() {
            written
        } else {
            0
        };
        (written, blended)
    }
}

/// The quad pairs of [`Rop::write_quad_pairs_avx2`]: pair `k` is the quads `base +
/// offsets[k]` and the one after it.
#[cfg(target_arch = "x86_64")]
struct PairsAt<'a> {
    base: *mut [u8; 16],
    offsets: std::slice::Iter<'a, usize>,
}

#[cfg(target_arch = "x86_64")]
impl Iterator for PairsAt<'_> {
    type Item = [*mut [u8; 16]; 2];

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let &u = self.offsets.next()?;
        // The caller of `write_quad_pairs_avx2` vouches for these quads.
        Some([self.base.wrapping_add(u), self.base.wrapping_add(u + 1)])
    }
}

/// [`Unorm8Order::bytes`] of BGRA when `BGRA`, else of RGBA (a constant of the loop).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn pair_bytes<const BGRA: bool>() -> [i32; 4] {
    let order = if BGRA {
        Unorm8Order::Bgra
    } else {
        Unorm8Order::Rgba
    };
    order.bytes().map(|b| b as i32)
}

/// Lanes `first .. first + 8` of a register, as floats.
///
/// # Safety
/// The CPU must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn lanes8(reg: &[u32; WARP_LANES], first: usize) -> std::arch::x86_64::__m256 {
    let lanes: &[u32; 8] = reg[first..first + 8]
        .try_into()
        .expect("two quads are eight lanes");
    // SAFETY: an eight-lane array is 32 readable bytes.
    unsafe { std::arch::x86_64::_mm256_loadu_ps(lanes.as_ptr().cast()) }
}

/// [`Rop::write_quad_pairs_avx2`]'s colour for one pair of an sRGB target before its
/// encode: the source — lanes `first .. first + 8` of `channels`, clamped as `quad8_srgb`
/// does (NaN and −0 pass through) — blended over the pair's texels `old` when `BLEND`
/// (colour channels decoded to linear; source factor alpha when `ALPHA`, else one).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn pair_colour_srgb<const BLEND: bool, const ALPHA: bool, const BGRA: bool>(
    channels: &[&[u32; WARP_LANES]; 4],
    first: usize,
    old: std::arch::x86_64::__m256i,
) -> [std::arch::x86_64::__m256; 4] {
    use std::arch::x86_64::*;
    let (zero, one) = (_mm256_setzero_ps(), _mm256_set1_ps(1.0));
    let src: [__m256; 4] = std::array::from_fn(|c| {
        let lanes: &[u32; 8] = channels[c][first..first + 8]
            .try_into()
            .expect("two quads are eight lanes");
        // SAFETY: an eight-lane array is 32 readable bytes.
        let v = unsafe { _mm256_loadu_ps(lanes.as_ptr().cast()) };
        _mm256_min_ps(one, _mm256_max_ps(zero, v))
    });
    if !BLEND {
        return src;
    }
    let byte = pair_bytes::<BGRA>();
    let mask = _mm256_set1_epi32(0xff);
    let dst: [__m256; 4] = std::array::from_fn(|c| {
        let shift = _mm_cvtsi32_si128(8 * byte[c]);
        let codes = _mm256_and_si256(_mm256_srl_epi32(old, shift), mask);
        if c != 3 {
            // SAFETY: AVX2 (this function's target features); codes are bytes.
            unsafe { srgb8_to_linear_avx2(codes) }
        } else {
            // SAFETY: AVX2 and FMA (this function's target features).
            unsafe { unorm8_decode_avx2(codes) }
        }
    });
    let inv = _mm256_sub_ps(one, src[3]);
    let fs = if ALPHA { src[3] } else { one };
    std::array::from_fn(|c| {
        let fs = if c == 3 { one } else { fs };
        _mm256_add_ps(_mm256_mul_ps(src[c], fs), _mm256_mul_ps(dst[c], inv))
    })
}

/// [`pair_pack`]'s shuffle, for RGBA (row 0) and BGRA (row 1): in each quad's 16 bytes,
/// pixel `i`'s byte for channel `c` ([`Unorm8Order::bytes`]) takes byte `4c + i` of the
/// narrowed codes (channel-major).
#[cfg(target_arch = "x86_64")]
static PAIR_PACK_ORDER: [[i8; 32]; 2] = {
    const fn order(order: Unorm8Order) -> [i8; 32] {
        let byte = order.bytes();
        let mut table = [0i8; 32];
        let mut i = 0;
        while i < 4 {
            let mut c = 0;
            while c < 4 {
                let at = 4 * i + byte[c] as usize;
                table[at] = (4 * c + i) as i8;
                table[16 + at] = (4 * c + i) as i8;
                c += 1;
            }
            i += 1;
        }
        table
    }
    [order(Unorm8Order::Rgba), order(Unorm8Order::Bgra)]
};

/// A pair's codes (channel-major, 32-bit lanes: each register a channel's eight pixels)
/// narrowed to bytes and moved to their pixels' channel bytes: the pair's new texels.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn pair_pack<const BGRA: bool>(
    codes: [std::arch::x86_64::__m256i; 4],
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    // The codes (each below 256) narrowed to bytes — per quad, channel by channel, four
    // pixels each — then moved to their pixels' channel bytes by one shuffle.
    let lo = _mm256_packus_epi32(codes[0], codes[1]);
    let hi = _mm256_packus_epi32(codes[2], codes[3]);
    let bytes = _mm256_packus_epi16(lo, hi);
    // SAFETY: the table rows are 32 readable bytes.
    let order = unsafe { _mm256_loadu_si256(PAIR_PACK_ORDER[BGRA as usize].as_ptr().cast()) };
    _mm256_shuffle_epi8(bytes, order)
}

/// A pair's new texels `packed` written where `cov` (each quad's coverage word) has a
/// pixel's bit 0 set; the other texels keep their bytes `old`.
///
/// # Safety
/// The CPU must support AVX2; each pointer addresses 16 writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn pair_merge_store(
    packed: std::arch::x86_64::__m256i,
    old: std::arch::x86_64::__m256i,
    cov: [i32; 2],
    [t0, t1]: [*mut [u8; 16]; 2],
) {
    use std::arch::x86_64::*;
    let bits = _mm256_set_epi32(1 << 24, 1 << 16, 1 << 8, 1, 1 << 24, 1 << 16, 1 << 8, 1);
    let words = _mm256_set_epi32(
        cov[1], cov[1], cov[1], cov[1], cov[0], cov[0], cov[0], cov[0],
    );
    let select = _mm256_cmpeq_epi32(_mm256_and_si256(words, bits), bits);
    let merged = _mm256_blendv_epi8(old, packed, select);
    // SAFETY: each quad's texels are 16 writable bytes (this function's contract).
    unsafe {
        _mm_storeu_si128(t0.cast(), _mm256_castsi256_si128(merged));
        _mm_storeu_si128(t1.cast(), _mm256_extracti128_si256(merged, 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_blending() {
        let out = blend(
            &BlendState::ALPHA_BLENDING,
            [1.0, 0.0, 0.0, 0.25],
            [0.0, 0.0, 1.0, 1.0],
            [0.0; 4],
        );
        assert_eq!(out, [0.25, 0.0, 0.75, 0.25 + 0.75]);
    }

    /// The 8-bit short path encodes and decodes exactly like the formats' own codec.
    #[test]
    fn byte_codecs_equal_the_format_codec() {
        for format in [
            TextureFormat::Rgba8Unorm,
            TextureFormat::Bgra8Unorm,
            TextureFormat::Rgba8UnormSrgb,
            TextureFormat::Bgra8UnormSrgb,
        ] {
            let rop = Rop::new(
                ColorTargetState {
                    format,
                    blend: None,
                    write_mask: crate::state::ColorWrites::ALL,
                },
                [0.0; 4],
            );
            assert!(rop.unorm8.is_some());
            for b in 0..=255u8 {
                let texel = [b, b.wrapping_add(85), b.wrapping_mul(3), 255 - b];
                let got = rop.decode(&texel).map(f32::to_bits);
                let want = format.decode_color(&texel).map(f32::to_bits);
                assert_eq!(got, want, "{format:?} decode {texel:?}");
            }
            for i in 0..=20_000u32 {
                let v = i as f32 / 20_000.0 * 1.1 - 0.05;
                let c = [v, 1.0 - v, v * v, v * 0.5];
                let (mut got, mut want) = ([0u8; 4], [0u8; 4]);
                rop.encode(c, &mut got);
                format.encode_color(c, &mut want);
                assert_eq!(got, want, "{format:?} encode {c:?}");
            }
        }
    }

    /// The short paths compute what the generic blend does, bit for bit, and the decode
    /// table what the division does.
    #[test]
    fn short_paths_equal_the_generic_path() {
        for (i, v) in UNORM8_TO_F32.iter().enumerate() {
            assert_eq!(v.to_bits(), (i as f32 / 255.0).to_bits());
        }
        let mut x = 0x1234_5678u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 8) as f32 / (1u32 << 24) as f32
        };
        for state in [
            BlendState::ALPHA_BLENDING,
            BlendState::PREMULTIPLIED_ALPHA_BLENDING,
        ] {
            let rop = Rop::new(
                ColorTargetState {
                    format: TextureFormat::Rgba8UnormSrgb,
                    blend: Some(state),
                    write_mask: crate::state::ColorWrites::ALL,
                },
                [0.0; 4],
            );
            assert_ne!(rop.blend_path, BlendPath::Generic);
            for _ in 0..10_000 {
                let src = [next(), next(), next(), next()];
                let dst = [next(), next(), next(), next()];
                let fast = rop.blend(&state, src, dst);
                let generic = blend(&state, src, dst, [0.0; 4]);
                assert_eq!(
                    fast.map(f32::to_bits),
                    generic.map(f32::to_bits),
                    "{src:?} {dst:?}"
                );
            }
        }
    }

    /// The quad path writes what four calls of the pixel path write, bit for bit, for the
    /// blend states with a short path, a generic one and none, in both channel orders.
    #[test]
    fn quad_path_equals_pixel_path() {
        let mut x = 0x9e37_79b9u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let additive = BlendState {
            color: BlendComponent {
                src_factor: BlendFactor::OneMinusDst,
                dst_factor: BlendFactor::Constant,
                operation: BlendOperation::ReverseSubtract,
            },
            alpha: BlendComponent {
                src_factor: BlendFactor::SrcAlphaSaturated,
                dst_factor: BlendFactor::One,
                operation: BlendOperation::Add,
            },
        };
        for format in [
            TextureFormat::Rgba8Unorm,
            TextureFormat::Bgra8Unorm,
            TextureFormat::Rgba8UnormSrgb,
            TextureFormat::Bgra8UnormSrgb,
        ] {
            for blend in [
                None,
                Some(BlendState::ALPHA_BLENDING),
                Some(BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                Some(additive),
            ] {
                let rop = Rop::new(
                    ColorTargetState {
                        format,
                        blend,
                        write_mask: crate::state::ColorWrites::ALL,
                    },
                    [0.25, 0.5, 0.75, 1.0],
                );
                for _ in 0..2_000 {
                    let mut texels = [0u8; 16];
                    texels.iter_mut().for_each(|t| *t = next() as u8);
                    // Colours slightly outside [0, 1] (clamped), and the odd NaN;
                    // channel-major.
                    let mut colors: QuadColors = [[0.0f32; 4]; 4];
                    for v in colors.iter_mut().flatten() {
                        let r = next();
                        *v = if r % 97 == 0 {
                            f32::NAN
                        } else {
                            (r >> 8) as f32 / (1u32 << 24) as f32 * 1.2 - 0.1
                        };
                    }
                    let coverage = [0, 1, 2, 3].map(|_| (next() & 1) as u8);
                    let mut quad = texels;
                    let got = rop.write_quad(&mut quad, 1, coverage, &colors);
                    let mut pixels = texels;
                    let mut want = (0, 0);
                    for i in 0..4 {
                        if coverage[i] != 0 {
                            let (w, b) = rop.write_pixel(
                                &mut pixels[i * 4..i * 4 + 4],
                                coverage[i],
                                [0, 1, 2, 3].map(|c| colors[c][i]),
                            );
                            want = (want.0 + w, want.1 + b);
                        }
                    }
                    assert_eq!(quad, pixels, "{format:?} {blend:?} {colors:?}");
                    assert_eq!(got, want);
                }
            }
        }
    }

    /// The two-quad AVX2 path writes what two calls of the quad path write, bit for bit,
    /// for the states it serves in both channel orders (linear and sRGB), with colours from
    /// registers holding one to four channels — white over white among them (the largest
    /// fixed-point sums), and values past `i32`'s range once scaled.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn quad_pair_path_equals_quad_path() {
        if !rastra_texture::cpu::wide() {
            return;
        }
        let mut x = 0x2545_f491u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for format in [
            TextureFormat::Rgba8Unorm,
            TextureFormat::Bgra8Unorm,
            TextureFormat::Rgba8UnormSrgb,
            TextureFormat::Bgra8UnormSrgb,
        ] {
            for blend in [
                None,
                Some(BlendState::ALPHA_BLENDING),
                Some(BlendState::PREMULTIPLIED_ALPHA_BLENDING),
            ] {
                let rop = Rop::new(
                    ColorTargetState {
                        format,
                        blend,
                        write_mask: crate::state::ColorWrites::ALL,
                    },
                    [0.0; 4],
                );
                assert!(rop.has_pair_path(1));
                for round in 0..4_000 {
                    let channels = 1 + round % 4;
                    // Colours slightly outside [0, 1], the odd NaN, infinity or huge value,
                    // and many exact ones (an "over" blend of ones over ones makes the
                    // largest sums), in a warp's registers.
                    let mut regs = vec![[0u32; WARP_LANES]; channels];
                    for v in regs.iter_mut().flatten() {
                        let r = next();
                        *v = if r % 97 == 0 {
                            f32::NAN.to_bits()
                        } else if r % 89 == 0 {
                            [f32::INFINITY, f32::NEG_INFINITY, 3e9, -3e9][r as usize / 89 % 4]
                                .to_bits()
                        } else if r % 5 == 0 {
                            1.0f32.to_bits()
                        } else {
                            ((r >> 8) as f32 / (1u32 << 24) as f32 * 1.2 - 0.1).to_bits()
                        };
                    }
                    // Now and then a value at a code's rounding edge (give or take an ulp).
                    if round % 4 == 0 {
                        let edge = (next() % 255) as f32 + 0.5;
                        let bits = (edge / 255.0).to_bits() + next() % 3 - 1;
                        let lane = 4 + next() as usize % 24;
                        regs[next() as usize % channels][lane] = bits;
                    }
                    // Three pairs in one call (quads 1–6 of the warp).
                    let mut texels = [[0u8; 16]; 6];
                    texels.iter_mut().flatten().for_each(|t| *t = next() as u8);
                    if round % 3 == 0 {
                        texels = [[255; 16]; 6];
                    }
                    let coverage = [0; 6].map(|_| [0, 1, 2, 3].map(|_| (next() & 1) as u8));
                    let (mut pairs, mut quads) = (texels, texels);
                    let at = pairs.as_mut_ptr();
                    // SAFETY: `wide()` said the CPU has AVX2; the pairs name six different
                    // quads of `pairs`, which nothing else uses during the call.
                    let got = unsafe {
                        rop.write_quad_pairs_avx2(at, &[0, 2, 4], Some(&coverage), &regs, 4)
                    };
                    let mut want = (0, 0);
                    for k in 0..6 {
                        let mut colors: QuadColors = [[0.0; 4], [0.0; 4], [0.0; 4], [1.0; 4]];
                        for (c, reg) in regs.iter().enumerate() {
                            colors[c] = std::array::from_fn(|i| f32::from_bits(reg[4 + 4 * k + i]));
                        }
                        let (w, b) = rop.write_quad(&mut quads[k], 1, coverage[k], &colors);
                        want = (want.0 + w, want.1 + b);
                    }
                    assert_eq!(pairs, quads, "{format:?} {blend:?} {regs:?} {coverage:?}");
                    assert_eq!(got, want);
                    // Every pixel covered, said by no coverage at all.
                    let (mut pairs, mut quads) = (texels, texels);
                    let at = pairs.as_mut_ptr();
                    // SAFETY: as above.
                    let got = unsafe { rop.write_quad_pairs_avx2(at, &[0, 2, 4], None, &regs, 4) };
                    let mut want = (0, 0);
                    for k in 0..6 {
                        let mut colors: QuadColors = [[0.0; 4], [0.0; 4], [0.0; 4], [1.0; 4]];
                        for (c, reg) in regs.iter().enumerate() {
                            colors[c] = std::array::from_fn(|i| f32::from_bits(reg[4 + 4 * k + i]));
                        }
                        let (w, b) = rop.write_quad(&mut quads[k], 1, [1; 4], &colors);
                        want = (want.0 + w, want.1 + b);
                    }
                    assert_eq!(pairs, quads, "{format:?} {blend:?} {regs:?}, all covered");
                    assert_eq!(got, want);
                    // A run by address in which quads repeat across pairs: each pair
                    // writes after the pairs before it, as quad-by-quad writes in that
                    // order do.
                    let (mut run, mut seq) = (texels, texels);
                    let base = run.as_mut_ptr();
                    let order = [0, 1, 1, 2, 3, 0];
                    let ptrs = [[0, 1], [2, 3], [4, 5]].map(|[i, j]| {
                        // SAFETY: indices of `run`'s four quads.
                        unsafe { [base.add(order[i]), base.add(order[j])] }
                    });
                    // SAFETY: `wide()` said the CPU has AVX2; the pointers address `run`,
                    // which nothing else uses during the call, two different quads a pair.
                    let got = unsafe { rop.write_quad_pair_run_avx2(&ptrs, &coverage, &regs, 4) };
                    let mut want = (0, 0);
                    for (k, &i) in order.iter().enumerate() {
                        let mut colors: QuadColors = [[0.0; 4], [0.0; 4], [0.0; 4], [1.0; 4]];
                        for (c, reg) in regs.iter().enumerate() {
                            colors[c] = std::array::from_fn(|l| f32::from_bits(reg[4 + 4 * k + l]));
                        }
                        let (w, b) = rop.write_quad(&mut seq[i], 1, coverage[k], &colors);
                        want = (want.0 + w, want.1 + b);
                    }
                    assert_eq!(run, seq, "{format:?} {blend:?} {regs:?} {coverage:?}");
                    assert_eq!(got, want);
                }
            }
        }
    }

    #[test]
    fn min_max_ignore_factors() {
        let state = BlendState {
            color: BlendComponent {
                src_factor: BlendFactor::Zero,
                dst_factor: BlendFactor::Zero,
                operation: BlendOperation::Max,
            },
            alpha: BlendComponent {
                src_factor: BlendFactor::Zero,
                dst_factor: BlendFactor::Zero,
                operation: BlendOperation::Min,
            },
        };
        assert_eq!(
            blend(&state, [0.2, 0.8, 0.5, 0.3], [0.4, 0.1, 0.5, 0.9], [0.0; 4]),
            [0.4, 0.8, 0.5, 0.3]
        );
    }

    #[test]
    fn write_mask_keeps_destination_channels() {
        let target = ColorTargetState {
            format: TextureFormat::Rgba8Unorm,
            blend: None,
            write_mask: crate::state::ColorWrites::RED | crate::state::ColorWrites::ALPHA,
        };
        let mut texel = [10u8, 20, 30, 40];
        let rop = Rop::new(target, [0.0; 4]);
        assert_eq!(rop.write_pixel(&mut texel, 1, [1.0, 1.0, 1.0, 1.0]), (1, 0));
        assert_eq!(texel, [255, 20, 30, 255]);
    }

    #[test]
    fn only_covered_samples_are_written() {
        let target = ColorTargetState {
            format: TextureFormat::R8Unorm,
            blend: Some(BlendState::ALPHA_BLENDING),
            write_mask: crate::state::ColorWrites::ALL,
        };
        let mut texels = [0u8, 0, 0, 0];
        let rop = Rop::new(target, [0.0; 4]);
        assert_eq!(
            rop.write_pixel(&mut texels, 0b0101, [2.0, 0.0, 0.0, 0.5]),
            (2, 2)
        );
        // The source is clamped to 1 before blending: 1·0.5 + 0·0.5.
        assert_eq!(texels, [128, 0, 128, 0]);
    }
}

/// Byte `shift / 8` of each of four texel words as a unorm value, `code / 255` — the
/// unorm decode's own division, four lanes at a time (written with SSE2 intrinsics on
/// x86-64: the compiler left the per-lane conversions scalar).
#[inline(always)]
fn unorm8_channel_x4(words: [u32; 4], shift: u32) -> [f32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86-64 baseline; loads and stores are of local
        // arrays of the right size.
        unsafe {
            let w = _mm_loadu_si128(words.as_ptr().cast());
            let codes = _mm_and_si128(
                _mm_srl_epi32(w, _mm_cvtsi32_si128(shift as i32)),
                _mm_set1_epi32(0xff),
            );
            let v = _mm_div_ps(_mm_cvtepi32_ps(codes), _mm_set1_ps(255.0));
            let mut out = [0.0f32; 4];
            _mm_storeu_ps(out.as_mut_ptr(), v);
            out
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        words.map(|w| (w >> shift & 0xff) as f32 / 255.0)
    }
}

#[cfg(test)]
mod unorm8_tests {
    #[test]
    fn vector_decode_is_the_division() {
        for code in 0..=255u32 {
            let words = [code, code << 8, code << 16, code << 24];
            for (byte, shift) in [0u32, 8, 16, 24].into_iter().enumerate() {
                let v = super::unorm8_channel_x4(words, shift);
                let want = (code as f32 / 255.0).to_bits();
                assert_eq!(v[byte].to_bits(), want, "code {code} byte {byte}");
            }
        }
    }
}
