//! Hidden-surface removal over a screen tile, between early Z and pixel shading (T7's depth
//! story carried one step further, as the tile-based GPUs do it: PowerVR's deferred
//! hidden-surface removal, Mali's "forward pixel kill").
//!
//! Early Z throws away what is hidden by what came *before*; a quad that passes it may still
//! be covered by a quad that comes *after*. Where a later quad will overwrite everything an
//! earlier one would write, the earlier one's shading is wasted work. A tile-based GPU can
//! see that coming, because a tile's whole stream of primitives passes through the early
//! depth test before it needs any pixel shaded.
//!
//! rastra does it this way. The quads of *opaque* draws (see [`PixelPipe::holds`]: depth
//! tested and written before shading, every colour target replaced whole, a fragment
//! program with no effect but its outputs and no discard) are not shaded when they pass
//! early Z: they are held, in API order, and each pixel (with MSAA, each sample) they pass
//! is marked in this module's [`TileOwners`] as owned by the quad, which overwrites the mark
//! left by any earlier quad. When the tile's draws are done, or before anything that must
//! see their colours (a draw of another kind), the held quads are released in order: a
//! sample still owned by its quad is shaded and written as before, a sample whose mark a
//! later quad took is not (that later quad passed the depth test there and writes every
//! channel of every target after it), a pixel with no sample left runs as a helper lane, as
//! for any uncovered pixel, and a quad with none left is not shaded at all.
//!
//! Images are what immediate shading gives, bit for bit: only writes that a later write
//! replaces whole are dropped. What changes are the shading statistics — fewer fragment
//! shader invocations, warps and colour writes, as on the GPUs that do this — and the new
//! `hidden_quads_removed` / `hidden_pixels_removed` counters say how much.
//!
//! [`PixelPipe::holds`]: crate::pixel::PixelPipe::holds

use rastra_texture::morton8;

use crate::binning::TILE_SIZE;
use crate::raster::BLOCK_SIZE;

/// Pixels in a screen tile.
pub const TILE_PIXELS: usize = (TILE_SIZE * TILE_SIZE) as usize;

/// The most samples per pixel a held quad has (4× MSAA).
pub const MAX_SAMPLES: usize = 4;

/// Per pixel of the tile at hand, the number of the held quad that last passed the early
/// depth test there, laid out block by block (8×8 blocks in raster order, Morton order
/// inside a block) so that a quad's four pixels are four consecutive words. With several
/// samples per pixel ownership is per sample: pixel `p`'s sample `s` is word
/// `p · samples + s` (the one-sample layout scaled), a quad's words still consecutive.
///
/// Numbers restart at 0 whenever the held quads are released ([`TileOwners::restart`]): a
/// held quad's pixels are marked when it is held, so a mark left from an earlier tile or an
/// earlier release is always overwritten before anything compares against it.
pub struct TileOwners {
    owner: Box<[u32; TILE_PIXELS * MAX_SAMPLES]>,
    next: u32,
}

impl Default for TileOwners {
    fn default() -> Self {
        TileOwners {
            owner: Box::new([0; TILE_PIXELS * MAX_SAMPLES]),
            next: 0,
        }
    }
}

impl TileOwners {
    /// Where the words of the 8×8 block holding pixel (x, y) start (any tile: only the
    /// position inside its tile matters).
    #[inline(always)]
    pub fn block_base(x: u32, y: u32) -> usize {
        let blocks = TILE_SIZE / BLOCK_SIZE;
        let block = ((y % TILE_SIZE) / BLOCK_SIZE) * blocks + (x % TILE_SIZE) / BLOCK_SIZE;
        (block * BLOCK_SIZE * BLOCK_SIZE) as usize
    }

    /// Where quad (x, y)'s four pixels start (x and y even): its block's base plus its
    /// Morton place in the block (the low six bits of the quad's tiled element).
    #[inline(always)]
    pub fn place(x: u32, y: u32) -> usize {
        Self::block_base(x, y) + (morton8(x, y) & 0x3c) as usize
    }

    /// A number for the next held quad.
    #[inline(always)]
    pub fn take_number(&mut self) -> u32 {
        let n = self.next;
        self.next += 1;
        n
    }

    /// Marks the samples of the quad at `place` whose bits are set in `pass` (pixel `i`'s
    /// samples in byte `i`, `samples` of them, at most [`MAX_SAMPLES`]) as owned by quad
    /// `number`.
    #[inline(always)]
    pub fn mark_samples(&mut self, place: usize, number: u32, pass: u32, samples: usize) {
        debug_assert!(samples <= MAX_SAMPLES);
        let words = &mut self.owner[place * samples..(place + 4) * samples];
        for (k, w) in words.iter_mut().enumerate() {
            let (i, s) = (k / samples, k % samples);
            if pass >> (8 * i + s) & 1 != 0 {
                *w = number;
            }
        }
    }

    /// The bits of `pass` (pixel `i`'s samples in byte `i`, `samples` of them) whose sample
    /// quad `number` at `place` still owns ([`TileOwners::mark_samples`]).
    #[inline(always)]
    pub fn samples_still_owned(&self, place: usize, number: u32, pass: u32, samples: usize) -> u32 {
        debug_assert!(samples <= MAX_SAMPLES);
        let words = &self.owner[place * samples..(place + 4) * samples];
        let mut keep = 0u32;
        for (k, &w) in words.iter().enumerate() {
            let (i, s) = (k / samples, k % samples);
            keep |= ((w == number) as u32) << (8 * i + s);
        }
        pass & keep
    }

    /// The 64 words of the block whose words start at `base` ([`TileOwners::block_base`]),
    /// for a caller that marks one-sample quads with vector stores (the same effect as
    /// [`TileOwners::mark_samples`]), taking numbers with [`TileOwners::numbers`].
    #[inline(always)]
    pub fn block_mut(&mut self, base: usize) -> &mut [u32; 64] {
        (&mut self.owner[base..base + 64])
            .try_into()
            .expect("a block's words")
    }

    /// The next number to give, for a caller that gives numbers itself; it stores the next
    /// one after those it gave.
    #[inline(always)]
    pub fn numbers(&mut self) -> &mut u32 {
        &mut self.next
    }

    /// The bytes of `pass` (pixel `i` in byte `i`) whose pixel quad `number` at `place`
    /// still owns: what it alone will write.
    #[inline(always)]
    pub fn still_owned(&self, place: usize, number: u32, pass: u32) -> u32 {
        // (A quad's place is a multiple of four below TILE_PIXELS: the mask changes nothing
        // and shows the four words in bounds.)
        let place = place & (TILE_PIXELS - 4);
        let words: &[u32; 4] = (&self.owner[place..place + 4])
            .try_into()
            .expect("a quad's words");
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            // SAFETY: SSE2 is part of x86-64; the load reads the four words borrowed above.
            let same = unsafe {
                let w = _mm_loadu_si128(words.as_ptr().cast());
                _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(
                    w,
                    _mm_set1_epi32(number as i32),
                ))) as u32
            };
            // Bit i to bit 0 of byte i, then all ones in the bytes kept.
            pass & ((same.wrapping_mul(0x0020_4081) & 0x0101_0101) * 0xff)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut keep = 0u32;
            for (i, &w) in words.iter().enumerate() {
                keep |= ((w == number) as u32 * 0xff) << (8 * i);
            }
            pass & keep
        }
    }

    /// How many quads were numbered since the last [`TileOwners::restart`]: the quads the
    /// tile's pipes hold.
    #[inline(always)]
    pub fn held(&self) -> usize {
        self.next as usize
    }

    /// Starts numbering again (the held quads were all released).
    #[inline(always)]
    pub fn restart(&mut self) {
        self.next = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_the_tiles_pixels_once_each() {
        let mut seen = vec![false; TILE_PIXELS];
        for y in (0..TILE_SIZE).step_by(2) {
            for x in (0..TILE_SIZE).step_by(2) {
                let p = TileOwners::place(x + 3 * TILE_SIZE, y + TILE_SIZE);
                assert_eq!(
                    p,
                    TileOwners::place(x, y),
                    "only the place in the tile counts"
                );
                for s in &mut seen[p..p + 4] {
                    assert!(!*s, "quad ({x}, {y}) overlaps another");
                    *s = true;
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn a_later_quad_takes_only_the_pixels_it_passed() {
        let mut owners = TileOwners::default();
        let at = TileOwners::place(10, 20);
        let first = owners.take_number();
        owners.mark_samples(at, first, 0x0101_0101, 1);
        let second = owners.take_number();
        owners.mark_samples(at, second, 0x0001_0001, 1); // pixels 0 and 2
        assert_eq!(owners.still_owned(at, first, 0x0101_0101), 0x0100_0100);
        assert_eq!(owners.still_owned(at, second, 0x0001_0001), 0x0001_0001);
        owners.restart();
        assert_eq!(owners.take_number(), 0);
    }

    #[test]
    fn with_four_samples_ownership_is_per_sample() {
        let mut owners = TileOwners::default();
        let at = TileOwners::place(62, 6);
        owners.mark_samples(at, 7, 0x0f0f_0f0f, 4);
        // A later quad passes samples 0 and 1 of pixel 0 and every sample of pixel 3.
        owners.mark_samples(at, 8, 0x0f00_0003, 4);
        assert_eq!(
            owners.samples_still_owned(at, 7, 0x0f0f_0f0f, 4),
            0x000f_0f0c
        );
        assert_eq!(
            owners.samples_still_owned(at, 8, 0x0f00_0003, 4),
            0x0f00_0003
        );
        // The last quad of the tile's last place stays inside the words.
        let last = TileOwners::place(TILE_SIZE - 2, TILE_SIZE - 2);
        owners.mark_samples(last, 9, 0x0808_0808, 4);
        assert_eq!(
            owners.samples_still_owned(last, 9, 0x0f0f_0f0f, 4),
            0x0808_0808
        );
    }
}
