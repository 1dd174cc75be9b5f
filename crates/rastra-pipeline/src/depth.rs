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
    /// the quad is addressed once.
    pub fn test_quad(
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
        if self.plain_f32 {
            return self.test_quad_f32(base, coverage, z, write);
        }
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
    #[inline]
    fn test_quad_f32(
        &mut self,
        base: usize,
        coverage: [u8; 4],
        z: &[[f32; 4]; 4],
        write: bool,
    ) -> [u8; 4] {
        // SAFETY: the quad belongs to the tile this worker owns (SharedSurface invariant).
        let texels = unsafe { self.data.texels_mut(base, 16) };
        let old: [f32; 4] = std::array::from_fn(|i| {
            f32::from_le_bytes(*texels[i * 4..].first_chunk().expect("a quad is 16 bytes"))
        });
        let [lo, hi] = self.range;
        let new: [f32; 4] = std::array::from_fn(|i| z[i][0].clamp(lo, hi));
        let cmp = self.compare;
        let pass: [u8; 4] =
            std::array::from_fn(|i| (coverage[i] & 1 != 0 && cmp.passes(new[i], old[i])) as u8);
        if write && pass != [0; 4] {
            for i in 0..4 {
                let v = if pass[i] != 0 { new[i] } else { old[i] };
                texels[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
            }
            self.wrote = true;
        }
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
