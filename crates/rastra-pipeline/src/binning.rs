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

/// One chunk's bins. Binning records `(tile, triangle)` entries triangle by triangle — the
/// chunk's submission order; [`ChunkBins::sort`] then groups them by tile with a stable
/// counting sort, on the worker that set the chunk up, so each tile's triangles stay in that
/// order. A tile's work in a run of chunks is then its range in each chunk, chunk after chunk
/// ([`gather_tile`], on the tile's worker): nothing is merged on one thread between the front
/// end and the back end.
#[derive(Clone, Debug, Default)]
pub struct ChunkBins {
    /// `tile << 32 | triangle`, as recorded.
    entries: Vec<u64>,
    /// After `sort`: tile `t`'s triangles are `sorted[starts[t]..starts[t + 1]]`.
    starts: Vec<u32>,
    sorted: Vec<u32>,
    /// After `sort`: bit `t % 64` of word `t / 64` set when tile `t` has a triangle.
    used: Vec<u64>,
}

impl ChunkBins {
    /// Empties the bins (keeping the allocations).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.starts.clear();
        self.sorted.clear();
        self.used.clear();
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

    /// Groups the recorded entries by tile, for a grid of `tiles` tiles (a stable counting
    /// sort: within a tile, recording order).
    pub fn sort(&mut self, tiles: usize) {
        let ChunkBins {
            entries,
            starts,
            sorted,
            used,
        } = self;
        starts.clear();
        starts.resize(tiles + 1, 0);
        used.clear();
        used.resize(tiles.div_ceil(64), 0);
        for &e in entries.iter() {
            let t = (e >> 32) as usize;
            starts[t + 1] += 1;
            used[t / 64] |= 1 << (t % 64);
        }
        for t in 0..tiles {
            starts[t + 1] += starts[t];
        }
        sorted.clear();
        sorted.resize(entries.len(), 0);
        // Each entry goes to its tile's next free place, `starts[t]` advancing as the
        // cursor; afterwards `starts[t]` is where tile t + 1 begins, so shifting the table by
        // one place restores the beginnings.
        for &e in entries.iter() {
            let t = (e >> 32) as usize;
            sorted[starts[t] as usize] = e as u32;
            starts[t] += 1;
        }
        starts.copy_within(0..tiles, 1);
        starts[0] = 0;
    }

    /// Tile `t`'s triangles (chunk-local indices) in recording order; empty for a tile
    /// outside the grid the bins were sorted for. Only after [`ChunkBins::sort`].
    pub fn tile(&self, t: usize) -> &[u32] {
        match (self.starts.get(t), self.starts.get(t + 1)) {
            (Some(&a), Some(&b)) => &self.sorted[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The tiles with triangles, as a bit set (bit `t % 64` of word `t / 64`). Only after
    /// [`ChunkBins::sort`].
    pub fn used(&self) -> &[u64] {
        &self.used
    }
}

/// Tile `t`'s work in a run of chunks: each chunk's triangles in the tile, chunk after chunk —
/// API order — appended to `out` as `(chunk, triangle)` pairs (the chunk's place in the run,
/// its local triangle index).
pub fn gather_tile<'b>(
    chunks: impl IntoIterator<Item = &'b ChunkBins>,
    t: usize,
    out: &mut Vec<(u32, u32)>,
) {
    for (c, bins) in chunks.into_iter().enumerate() {
        out.extend(bins.tile(t).iter().map(|&index| (c as u32, index)));
    }
}

/// Adds the tiles `bins` has triangles in to the bit set `used` (as [`ChunkBins::used`]).
pub fn mark_used(used: &mut [u64], bins: &ChunkBins) {
    for (word, bits) in used.iter_mut().zip(bins.used()) {
        *word |= bits;
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
        for b in [&mut bins, &mut later] {
            b.sort(grid.count());
        }
        let tile = |t| {
            let mut list = Vec::new();
            gather_tile([&bins, &later], t, &mut list);
            list
        };
        assert_eq!(tile(0), vec![(0, 0), (1, 0)]);
        assert_eq!(tile(1), vec![(0, 0), (0, 2), (1, 0)]);
        assert_eq!(tile(4), vec![(0, 0)]);
        assert_eq!(tile(5), vec![(0, 0), (0, 1), (0, 2)]);
        assert_eq!(tile(2), vec![]);
        assert_eq!(tile(7), vec![]);
        let mut used = vec![0; 1];
        mark_used(&mut used, &bins);
        assert_eq!(used, vec![0b11_0011]);
        mark_used(&mut used, &later);
        assert_eq!(used, vec![0b11_0011]);
        assert_eq!(grid.tile_rect(7), rect(192, 64, 199, 99));
    }
}
