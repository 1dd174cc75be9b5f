//! Binning into screen tiles (T8 "Going wide during rasterization"; BRIEF "Work
//! distribution"; OpenSWR's per-chunk binning): after setup, each triangle is recorded in
//! the bin of every tile its bounds touch. Each front-end chunk bins its own triangles, on
//! whichever worker set them up; a tile's work is then the concatenation of its bins over the
//! chunks, in chunk order — API order — so a tile can be processed on its own, by any worker,
//! without breaking the ordering rules depth testing and blending depend on.

use rastra_stats::Counters;

use crate::setup::PixelRect;

/// Edge length of a screen tile in pixels (llvmpipe's choice; re-measured by the
/// throughput issue).
pub const TILE_SIZE: u32 = 64;

/// The framebuffer's grid of screen tiles, numbered row by row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileGrid {
    pub tiles_x: u32,
    pub tiles_y: u32,
    pub width: u32,
    pub height: u32,
}

impl TileGrid {
    pub fn new(width: u32, height: u32) -> TileGrid {
        TileGrid {
            tiles_x: width.div_ceil(TILE_SIZE),
            tiles_y: height.div_ceil(TILE_SIZE),
            width,
            height,
        }
    }

    /// Number of tiles.
    pub fn count(&self) -> usize {
        (self.tiles_x * self.tiles_y) as usize
    }

    /// Pixel rectangle of tile `t`, clipped to the framebuffer.
    pub fn tile_rect(&self, t: usize) -> PixelRect {
        let tx = t as u32 % self.tiles_x;
        let ty = t as u32 / self.tiles_x;
        PixelRect {
            x0: tx * TILE_SIZE,
            y0: ty * TILE_SIZE,
            x1: ((tx + 1) * TILE_SIZE).min(self.width) - 1,
            y1: ((ty + 1) * TILE_SIZE).min(self.height) - 1,
        }
    }
}

/// One chunk's bins: `(tile, triangle)` entries in the order they were recorded —
/// triangle by triangle, the chunk's submission order. [`TileLists::new`] gathers them per
/// tile with a stable counting sort, which keeps that order within each tile, so the chunk
/// never sorts its own entries.
#[derive(Clone, Debug, Default)]
pub struct ChunkBins {
    /// `tile << 32 | triangle`.
    entries: Vec<u64>,
}

impl ChunkBins {
    /// Empties the bins (keeping the allocation).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Makes room for `n` more entries.
    pub fn reserve(&mut self, n: usize) {
        self.entries.reserve(n);
    }

    /// Records chunk-local triangle `index` in every tile overlapping `bounds`. Triangles
    /// must be inserted in increasing index order.
    pub fn insert(
        &mut self,
        grid: &TileGrid,
        index: u32,
        bounds: &PixelRect,
        counters: &mut Counters,
    ) {
        debug_assert!(
            self.entries.last().is_none_or(|&e| e as u32 <= index),
            "triangles are binned in index order"
        );
        let tx0 = bounds.x0 / TILE_SIZE;
        let ty0 = bounds.y0 / TILE_SIZE;
        let tx1 = bounds.x1 / TILE_SIZE;
        let ty1 = bounds.y1 / TILE_SIZE;
        for ty in ty0..=ty1 {
            for tx in tx0..=tx1 {
                let tile = (ty * grid.tiles_x + tx) as u64;
                self.entries.push(tile << 32 | index as u64);
                counters.tile_bin_entries += 1;
            }
        }
    }

    /// Every `(tile, triangle)` entry, in the order recorded (triangle order).
    pub fn entries(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.entries.iter().map(|&e| ((e >> 32) as usize, e as u32))
    }
}

/// Every tile's work in one draw's back-end pass: the bins of all chunks gathered per tile
/// (a counting sort), each tile's `(chunk, triangle)` list in chunk order and, within a
/// chunk, triangle order — API order. A tile's worker then walks one contiguous list
/// instead of looking its bin up in every chunk.
#[derive(Clone, Debug, Default)]
pub struct TileLists {
    /// `starts[t]..starts[t + 1]` is tile `t`'s range of `entries`.
    starts: Vec<u32>,
    entries: Vec<(u32, u32)>,
}

impl TileLists {
    pub fn new(tiles: usize, chunks: &[&ChunkBins]) -> TileLists {
        let mut starts = vec![0u32; tiles + 1];
        for bins in chunks {
            for (t, _) in bins.entries() {
                starts[t + 1] += 1;
            }
        }
        for t in 0..tiles {
            starts[t + 1] += starts[t];
        }
        let mut next = starts.clone();
        let mut entries = vec![(0, 0); starts[tiles] as usize];
        // Chunks in order, each chunk's entries in triangle order: every tile's list comes
        // out in API order (the placement is stable).
        for (c, bins) in chunks.iter().enumerate() {
            for (t, index) in bins.entries() {
                entries[next[t] as usize] = (c as u32, index);
                next[t] += 1;
            }
        }
        TileLists { starts, entries }
    }

    /// Tile `t`'s `(chunk, triangle)` entries, in API order.
    pub fn tile(&self, t: usize) -> &[(u32, u32)] {
        &self.entries[self.starts[t] as usize..self.starts[t + 1] as usize]
    }

    /// The tiles with work, in order.
    pub fn used(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.starts.len() - 1).filter(|&t| self.starts[t + 1] > self.starts[t])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_keep_submission_order_per_tile() {
        let grid = TileGrid::new(200, 100);
        assert_eq!((grid.tiles_x, grid.tiles_y, grid.count()), (4, 2, 8));
        let mut bins = ChunkBins::default();
        bins.clear();
        let mut c = Counters::default();
        // Triangle 0 spans tiles 0, 1, 4, 5; triangle 1 only tile 5; triangle 2 tiles 1, 5.
        let rect = |x0, y0, x1, y1| PixelRect { x0, y0, x1, y1 };
        bins.insert(&grid, 0, &rect(10, 10, 70, 70), &mut c);
        bins.insert(&grid, 1, &rect(65, 65, 80, 80), &mut c);
        bins.insert(&grid, 2, &rect(100, 10, 100, 99), &mut c);
        assert_eq!(c.tile_bin_entries, 7);
        // A second chunk: its triangle 0 covers tiles 0 and 1 and comes after the first
        // chunk's triangles in every tile.
        let mut later = ChunkBins::default();
        later.clear();
        later.insert(&grid, 0, &rect(0, 0, 70, 10), &mut c);
        let lists = TileLists::new(grid.count(), &[&bins, &later]);
        let tile = |t| lists.tile(t).to_vec();
        assert_eq!(tile(0), vec![(0, 0), (1, 0)]);
        assert_eq!(tile(1), vec![(0, 0), (0, 2), (1, 0)]);
        assert_eq!(tile(4), vec![(0, 0)]);
        assert_eq!(tile(5), vec![(0, 0), (0, 1), (0, 2)]);
        assert_eq!(tile(2), vec![]);
        assert_eq!(tile(7), vec![]);
        assert_eq!(lists.used().collect::<Vec<_>>(), vec![0, 1, 4, 5]);
        assert_eq!(grid.tile_rect(7), rect(192, 64, 199, 99));
    }
}
