//! The depth unit (T7 "Early Z/Stencil", "Z/stencil writes: the full truth"): per-sample
//! depth test and write against the bound depth surface. The same unit serves the early
//! position (before shading) and the late one (after it); which one a draw uses is
//! [`DepthMode`](crate::link::DepthMode), chosen at pipeline link time. Every sample's depth
//! is clamped to the viewport's depth range before it is tested or stored (WebGPU; Vulkan
//! with depth clamping — without it, clipping already keeps depth in range).

use crate::format::TextureFormat;
use crate::memory::{SharedSurface, SurfaceLayout};
use crate::state::CompareFunction;

/// A depth surface and the test configured for the draw.
pub struct DepthUnit<'a> {
    pub format: TextureFormat,
    pub compare: CompareFunction,
    pub write_enabled: bool,
    pub data: &'a SharedSurface<'a>,
    pub layout: SurfaceLayout,
    pub samples: u32,
    /// The viewport's depth range, `[min, max]`.
    pub range: [f32; 2],
    /// Bytes per sample, fixed for the draw.
    size: usize,
    /// Whether this unit has written any depth since the flag was last taken (the back end
    /// refreshes a tile's Hi-Z bounds only then).
    pub wrote: bool,
    /// Depth32Float: stored as plain f32, no quantisation (the common case, kept off the
    /// generic texel codec).
    plain_f32: bool,
}

impl<'a> DepthUnit<'a> {
    pub fn new(
        format: TextureFormat,
        compare: CompareFunction,
        write_enabled: bool,
        data: &'a SharedSurface<'a>,
        layout: SurfaceLayout,
        samples: u32,
        range: [f32; 2],
    ) -> DepthUnit<'a> {
        DepthUnit {
            format,
            compare,
            write_enabled,
            data,
            layout,
            samples,
            range,
            size: format.texel_size(),
            wrote: false,
            plain_f32: format == TextureFormat::Depth32Float,
        }
    }

    /// Whether this unit is the commonest kind — single-sampled Depth32Float, compare
    /// `Less`, writes on — for which [`DepthUnit::test_quad_1x_plain_less`] stands in for
    /// [`DepthUnit::test_quad_1x`] with all of that known.
    pub fn is_plain_less(&self) -> bool {
        self.plain_f32
            && self.samples == 1
            && self.compare == CompareFunction::Less
            && self.write_enabled
    }

    /// [`DepthUnit::test_quad_1x`] with writing, on a unit [`DepthUnit::is_plain_less`]
    /// says is of the commonest kind: the same test, with no test of the kind.
    #[inline(always)]
    pub fn test_quad_1x_plain_less(
        &mut self,
        element: usize,
        coverage: [u8; 4],
        z: [f32; 4],
    ) -> [u8; 4] {
        debug_assert!(self.is_plain_less());
        let base = self.layout.element_offset(element);
        self.test_quad_f32(base, coverage, z, CompareFunction::Less, true)
    }

    #[inline]
    fn quantize(&self, z: f32) -> f32 {
        let z = z.clamp(self.range[0], self.range[1]);
        if self.plain_f32 {
            z
        } else {
            self.format.quantize_depth(z)
        }
    }

    #[inline]
    fn load(&self, texel: &[u8]) -> f32 {
        if self.plain_f32 {
            f32::from_le_bytes([texel[0], texel[1], texel[2], texel[3]])
        } else {
            self.format.decode_depth(texel)
        }
    }

    #[inline]
    fn store(&self, z: f32, texel: &mut [u8]) {
        if self.plain_f32 {
            texel[..4].copy_from_slice(&z.to_le_bytes());
        } else {
            self.format.encode_depth(z, texel);
        }
    }

    /// Tests the samples in `mask` of pixel (x, y) with depths `z[s]`; writes passing samples
    /// when `write` (and depth writes are enabled). Returns the passing samples.
    pub fn test(&mut self, x: u32, y: u32, mask: u8, z: &[f32; 4], write: bool) -> u8 {
        let size = self.size;
        let mut pass = 0u8;
        for s in 0..self.samples {
            if mask & (1 << s) == 0 {
                continue;
            }
            let at = self.layout.pixel(x, y) + s as usize * size;
            // SAFETY: the pixel belongs to the tile this worker owns (SharedSurface invariant).
            let texel = unsafe { self.data.texels_mut(at, size) };
            let new = self.quantize(z[s as usize]);
            if self.compare.passes(new, self.load(texel)) {
                pass |= 1 << s;
                if write && self.write_enabled {
                    self.store(new, texel);
                }
            }
        }
        self.wrote |= write && self.write_enabled && pass != 0;
        pass
    }

    /// [`DepthUnit::test`] for the four pixels of the quad at (x, y) (`coverage[i]` and
    /// `z[i]` are pixel `i`'s, pixel `i` at `(x + i % 2, y + i / 2)`). Single-sampled, a
    /// quad's four depth texels are adjacent (8×8 tiles in Morton order, quads aligned), so
    /// the quad is addressed once. The commonest surface (single-sampled Depth32Float) is
    /// tested inline; the rest out of line.
    #[inline]
    pub fn test_quad(
        &mut self,
        x: u32,
        y: u32,
        coverage: [u8; 4],
        z: &[[f32; 4]; 4],
        write: bool,
    ) -> [u8; 4] {
        if self.samples == 1 {
            let z = [z[0][0], z[1][0], z[2][0], z[3][0]];
            let element = self.layout.element(x, y);
            return self.test_quad_1x(x, y, element, coverage, z, write);
        }
        self.test_quad_general(x, y, coverage, z, write)
    }

    /// [`DepthUnit::test_quad`] of a quad with one sample per pixel, its four depths `z`
    /// given as values: the commonest quad reaches the test with its depths in registers
    /// (written into a sample array and read back, they would wait on the stores — a
    /// load spanning two stores is not forwarded from them). Inlined into the caller: as
    /// an argument of a call the four depths would go through memory again.
    /// `element` is the quad's top-left pixel's tiled place (`self.layout.element(x, y)`,
    /// found once for all of a quad's targets).
    #[inline(always)]
    pub fn test_quad_1x(
        &mut self,
        x: u32,
        y: u32,
        element: usize,
        coverage: [u8; 4],
        z: [f32; 4],
        write: bool,
    ) -> [u8; 4] {
        debug_assert_eq!(element, self.layout.element(x, y));
        if self.plain_f32 && self.samples == 1 {
            let base = self.layout.element_offset(element);
            let write = write && self.write_enabled;
            return self.test_quad_f32(base, coverage, z, self.compare, write);
        }
        let samples = z.map(|d| [d, 0.0, 0.0, 0.0]);
        self.test_quad_general(x, y, coverage, &samples, write)
    }

    /// [`DepthUnit::test_quad`] for every other surface.
    #[inline(never)]
    fn test_quad_general(
        &mut self,
        x: u32,
        y: u32,
        coverage: [u8; 4],
        z: &[[f32; 4]; 4],
        write: bool,
    ) -> [u8; 4] {
        if self.samples != 1 {
            return std::array::from_fn(|i| {
                let (px, py) = (x + (i as u32 & 1), y + (i as u32 >> 1));
                if coverage[i] == 0 {
                    0
                } else {
                    self.test(px, py, coverage[i], &z[i], write)
                }
            });
        }
        let size = self.size;
        let base = self.layout.pixel(x, y);
        let write = write && self.write_enabled;
        let mut pass = [0u8; 4];
        for i in 0..4 {
            if coverage[i] & 1 == 0 {
                continue;
            }
            // SAFETY: the quad belongs to the tile this worker owns (SharedSurface invariant).
            let texel = unsafe { self.data.texels_mut(base + i * size, size) };
            let new = self.quantize(z[i][0]);
            if self.compare.passes(new, self.load(texel)) {
                pass[i] = 1;
                if write {
                    self.store(new, texel);
                }
            }
        }
        self.wrote |= write && pass != [0; 4];
        pass
    }

    /// [`DepthUnit::test_quad`] on a single-sampled Depth32Float surface, the quad's 16
    /// bytes at `base`: the four tests side by side (no quantisation), the quad's texels
    /// read and written back as one block (failing and uncovered pixels keep their bits).
    #[inline(always)]
    fn test_quad_f32(
        &mut self,
        base: usize,
        coverage: [u8; 4],
        z: [f32; 4],
        compare: CompareFunction,
        write: bool,
    ) -> [u8; 4] {
        // SAFETY: the quad belongs to the tile this worker owns (SharedSurface invariant).
        let texels = unsafe { self.data.texels_mut(base, 16) };
        let texels: &mut [u8; 16] = texels.try_into().expect("a quad is 16 bytes");
        #[cfg(target_arch = "x86_64")]
        let pass = quad_f32_x86(texels, coverage, z, self.range, compare, write);
        #[cfg(not(target_arch = "x86_64"))]
        let pass = quad_f32(texels, coverage, z, self.range, compare, write);
        self.wrote |= write && pass != [0; 4];
        pass
    }

    /// Writes depth for the samples in `mask` without testing (the late write of samples that
    /// passed an early test).
    pub fn write(&mut self, x: u32, y: u32, mask: u8, z: &[f32; 4]) {
        if !self.write_enabled {
            return;
        }
        let size = self.size;
        for s in 0..self.samples {
            if mask & (1 << s) != 0 {
                let at = self.layout.pixel(x, y) + s as usize * size;
                let new = self.quantize(z[s as usize]);
                // SAFETY: the pixel belongs to the tile this worker owns.
                let texel = unsafe { self.data.texels_mut(at, size) };
                self.store(new, texel);
            }
        }
        self.wrote |= mask != 0;
    }
}

/// The depth test of a single-sampled Depth32Float quad (its 16 bytes): pixel `i` with
/// coverage bit 0 of `coverage[i]` and depth `z[i]`, clamped to `range`, passes when
/// `compare` holds against the stored value; passing depths are written when `write`.
/// Returns each pixel's pass (0 or 1).
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
fn quad_f32(
    texels: &mut [u8; 16],
    coverage: [u8; 4],
    z: [f32; 4],
    [lo, hi]: [f32; 2],
    compare: CompareFunction,
    write: bool,
) -> [u8; 4] {
    let old: [f32; 4] = std::array::from_fn(|i| {
        f32::from_le_bytes(*texels[i * 4..].first_chunk().expect("a quad is 16 bytes"))
    });
    let new = z.map(|z| z.clamp(lo, hi));
    let pass: [u8; 4] =
        std::array::from_fn(|i| (coverage[i] & 1 != 0 && compare.passes(new[i], old[i])) as u8);
    if write {
        for i in 0..4 {
            if pass[i] != 0 {
                texels[i * 4..i * 4 + 4].copy_from_slice(&new[i].to_le_bytes());
            }
        }
    }
    pass
}

/// [`quad_f32`] in SSE2 (the same results, tested): the four depths clamped
/// (`minps`/`maxps` keep NaN and −0 as `f32::clamp` does), compared with the compare
/// function's own predicate (ordered compares false on NaN, `!=` true on it, as Rust's
/// operators are), the passing lanes merged into the old texels with one mask.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn quad_f32_x86(
    texels: &mut [u8; 16],
    coverage: [u8; 4],
    z: [f32; 4],
    [lo, hi]: [f32; 2],
    compare: CompareFunction,
    write: bool,
) -> [u8; 4] {
    use CompareFunction as C;
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86-64 baseline; the load and store are of the quad's
    // 16 bytes.
    let bits = unsafe {
        let old = _mm_loadu_ps(texels.as_ptr().cast());
        let new = _mm_loadu_ps(z.as_ptr());
        let new = _mm_min_ps(_mm_set1_ps(hi), _mm_max_ps(_mm_set1_ps(lo), new));
        let pass = match compare {
            C::Never => _mm_setzero_ps(),
            C::Less => _mm_cmplt_ps(new, old),
            C::Equal => _mm_cmpeq_ps(new, old),
            C::LessEqual => _mm_cmple_ps(new, old),
            C::Greater => _mm_cmpgt_ps(new, old),
            C::NotEqual => _mm_cmpneq_ps(new, old),
            C::GreaterEqual => _mm_cmpge_ps(new, old),
            C::Always => _mm_castsi128_ps(_mm_set1_epi32(-1)),
        };
        // Pixel i takes part when bit 0 of its coverage byte is set.
        let lane = _mm_set_epi32(1 << 24, 1 << 16, 1 << 8, 1);
        let cov = _mm_set1_epi32(u32::from_le_bytes(coverage) as i32);
        let covered = _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_and_si128(cov, lane), lane));
        let pass = _mm_and_ps(pass, covered);
        let bits = _mm_movemask_ps(pass) as u32;
        // Stored even when no sample passed (the same bytes back): a branch on the test's
        // outcome is mispredicted as often as the outcome changes.
        if write {
            let merged = _mm_or_ps(_mm_and_ps(pass, new), _mm_andnot_ps(pass, old));
            _mm_storeu_ps(texels.as_mut_ptr().cast(), merged);
        }
        bits
    };
    // Bit i of the four to bit 0 of byte i: the multiply adds the bits shifted by 0, 7, 14
    // and 21, so bit i lands on 8i from the i-th shift and nowhere else on a byte's bit 0
    // (no two shifted bits meet, so nothing carries).
    (bits.wrapping_mul(0x0020_4081) & 0x0101_0101).to_le_bytes()
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// The SSE2 quad test gives the scalar one's passes and written bits: every compare
    /// function, with and without writes, over depths and stored values that include NaN,
    /// ±0, ±∞, values outside the range, equal values, and every coverage pattern.
    #[test]
    fn sse2_quad_test_equals_the_scalar_one() {
        let values = [
            0.0,
            -0.0,
            0.25,
            0.5,
            0.75,
            1.0,
            -0.5,
            1.5,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::from_bits(1),
        ];
        let mut s = 0x1234_5678u32;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        for case in 0..40_000 {
            let r = next();
            let compare = CompareFunction::ALL[(r % 8) as usize];
            let write = r >> 3 & 1 != 0;
            let range = [[0.0, 1.0], [0.25, 0.75], [0.5, 0.5]][(r >> 4) as usize % 3];
            let coverage: [u8; 4] = std::array::from_fn(|i| (r >> (8 + 2 * i) & 3) as u8);
            let pick = |v: u32| values[(v % values.len() as u32) as usize];
            let z: [f32; 4] = std::array::from_fn(|_| pick(next()));
            let stored: [f32; 4] = std::array::from_fn(|_| pick(next()));
            let mut a = [0u8; 16];
            for (i, v) in stored.iter().enumerate() {
                a[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
            }
            let mut b = a;
            let pa = quad_f32(&mut a, coverage, z, range, compare, write);
            let pb = quad_f32_x86(&mut b, coverage, z, range, compare, write);
            assert_eq!(pa, pb, "case {case}: {compare:?} z {z:?} stored {stored:?}");
            assert_eq!(a, b, "case {case}: {compare:?} z {z:?} stored {stored:?}");
        }
    }
}
