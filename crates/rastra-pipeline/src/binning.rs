//! Binning into screen tiles (T8 "Going wide during rasterization"; BRIEF "Work
//! distribution"): after setup, each triangle is appended to the bin of every tile its bounds
//! touch. Bins keep API order, so a tile can be processed on its own — by any worker, later —
//! without breaking the ordering rules depth testing and blending depend on.

use rastra_stats::Counters;

use crate::setup::PixelRect;

/// Edge length of a screen tile in pixels (llvmpipe's choice; re-measured by the
/// throughput issue).
pub const TILE_SIZE: u32 = 64;

/// Per-tile lists of triangle indices, in submission order.
pub struct Bins {
    pub tiles_x: u32,
    pub tiles_y: u32,
    pub width: u32,
    pub height: u32,
    pub bins: Vec<Vec<u32>>,
}

impl Bins {
    pub fn new(width: u32, height: u32) -> Bins {
        let tiles_x = width.div_ceil(TILE_SIZE);
        let tiles_y = height.div_ceil(TILE_SIZE);
        Bins {
            tiles_x,
            tiles_y,
            width,
            height,
            bins: vec![Vec::new(); (tiles_x * tiles_y) as usize],
        }
    }

    /// Empties every bin.
    pub fn clear(&mut self) {
        for bin in &mut self.bins {
            bin.clear();
        }
    }

    /// Appends triangle `index` to every tile overlapping `bounds`.
    pub fn insert(&mut self, index: u32, bounds: &PixelRect, counters: &mut Counters) {
        let tx0 = bounds.x0 / TILE_SIZE;
        let ty0 = bounds.y0 / TILE_SIZE;
        let tx1 = bounds.x1 / TILE_SIZE;
        let ty1 = bounds.y1 / TILE_SIZE;
        for ty in ty0..=ty1 {
            for tx in tx0..=tx1 {
                self.bins[(ty * self.tiles_x + tx) as usize].push(index);
                counters.tile_bin_entries += 1;
            }
        }
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
