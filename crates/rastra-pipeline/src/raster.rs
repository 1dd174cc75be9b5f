//! Rasterization (T6 "A better way", "What we need around here is more hierarchy"; Z
//! "scan conversion"): a tile the triangle covers whole is given as whole blocks at once
//! (the tile level); otherwise a coarse pass over 8×8-pixel blocks rejects blocks outside any
//! edge and spots blocks entirely inside all three, then a fine pass evaluates each sample of
//! each 2×2 quad. Output: quads with a per-pixel sample-coverage mask, in raster order within the
//! tile, which is the order the pixel pipeline must preserve.
//!
//! Sample positions are the standard ones (Vulkan §25.4 "Multisampling" standard sample
//! locations; D3D11 the same): one sample at the pixel centre for 1×, and for 4×
//! (0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875).

use rastra_stats::Counters;

use crate::setup::{Fixed, PixelRect, SUBPIXEL_BITS, SUBPIXEL_ONE, Triangle};

/// Edge length of a coarse block in pixels.
pub const BLOCK_SIZE: u32 = 8;

/// Sample positions inside a pixel, in 1/256 pixel units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplePattern {
    pub count: u32,
    pub offsets: [[Fixed; 2]; 4],
}

pub const PATTERN_1X: SamplePattern = SamplePattern {
    count: 1,
    offsets: [[128, 128], [0, 0], [0, 0], [0, 0]],
};

pub const PATTERN_4X: SamplePattern = SamplePattern {
    count: 4,
    offsets: [[96, 32], [224, 96], [32, 160], [160, 224]],
};

impl SamplePattern {
    pub fn for_count(count: u32) -> SamplePattern {
        if count == 4 { PATTERN_4X } else { PATTERN_1X }
    }

    /// Mask with every sample set.
    pub fn full_mask(&self) -> u8 {
        ((1u32 << self.count) - 1) as u8
    }
}

/// A 2×2 pixel quad with the samples the triangle covers. Pixel `i` is at
/// `(x + (i & 1), y + (i >> 1))`; `x` and `y` are even.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quad {
    pub x: u32,
    pub y: u32,
    pub coverage: [u8; 4],
}

impl Quad {
    /// The quad at (0, 0) with nothing covered: a placeholder in arrays of quads.
    pub const NONE: Quad = Quad {
        x: 0,
        y: 0,
        coverage: [0; 4],
    };

    /// True when no sample of any pixel is covered.
    pub fn is_empty(&self) -> bool {
        self.coverage == [0; 4]
    }
}

/// What the rasterizer hands the pixel pipeline: the quads of a partly covered block with
/// any covered sample, with their coverage (row by row from the top, each row from the
/// left; one hand-over per block, so the pixel pipeline takes them in one call), or a
/// whole 8×8 block of which the triangle covers every sample — the coarse level's
/// "inside" verdict passed on, so the block's sixteen quads need no per-quad work here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rasterized<'q> {
    /// At least one quad, at most a block's sixteen.
    Quads(&'q [Quad]),
    /// The block whose top-left pixel is (x, y).
    Block { x: u32, y: u32 },
}

impl Rasterized<'_> {
    /// Calls `f` for each quad, in the order the pixel pipeline takes them: a block's
    /// quads row by row from the top, each row from the left (the order the fine level
    /// emits a block's quads in).
    pub fn for_each_quad(self, pattern: &SamplePattern, mut f: impl FnMut(Quad)) {
        match self {
            Rasterized::Quads(quads) => quads.iter().for_each(|&q| f(q)),
            Rasterized::Block { x, y } => {
                let full = pattern.full_mask();
                for k in 0..BLOCK_QUADS as u32 {
                    f(Quad {
                        x: x + 2 * (k % 4),
                        y: y + 2 * (k / 4),
                        coverage: [full; 4],
                    });
                }
            }
        }
    }
}

/// The bits of a block mask (`row · 8 + column`) at even rows and columns: the top-left
/// pixels of the block's quads.
const QUAD_CORNERS: u64 = 0x0055_0055_0055_0055;

/// Quads in a block.
pub const BLOCK_QUADS: usize = (BLOCK_SIZE * BLOCK_SIZE / 4) as usize;

/// Rasterizes `tri` inside `region` (a tile, inclusive pixel bounds), calling `emit` for
/// every quad with at least one covered sample — or once for a whole block, when the
/// triangle covers every sample of a block inside the region and `viewport` is not given. `hiz`, when given, is the hierarchical Z
/// test run between the coarse and the fine level: it gets a block's top-left pixel and
/// returns false when the block certainly fails the depth test. `viewport` (snapped `[x0, y0, x1, y1]`) is
/// given when the viewport has fractional edges: samples outside `[x0, x1) × [y0, y1)` are
/// then dropped, as clipping to the view volume would have dropped them (whole-pixel
/// viewports are handled by the region alone).
pub fn rasterize(
    tri: &Triangle,
    region: &PixelRect,
    pattern: &SamplePattern,
    viewport: Option<&[Fixed; 4]>,
    hiz: Option<&dyn Fn(u32, u32) -> bool>,
    counters: &mut Counters,
    emit: impl FnMut(Rasterized<'_>, &mut Counters),
) {
    rasterize_with(tri, region, pattern, viewport, hiz, counters, emit);
}

/// [`rasterize`] with the hierarchical Z test of any type: a closure given as itself is
/// compiled into the block loop, with no call per block.
#[inline]
pub fn rasterize_with<H: Fn(u32, u32) -> bool + ?Sized>(
    tri: &Triangle,
    region: &PixelRect,
    pattern: &SamplePattern,
    viewport: Option<&[Fixed; 4]>,
    hiz: Option<&H>,
    counters: &mut Counters,
    emit: impl FnMut(Rasterized<'_>, &mut Counters),
) {
    // One sample per pixel, the usual pattern, as a constant: its loops over samples go.
    if pattern.count == 1 {
        rasterize_samples::<H, true>(tri, region, pattern, viewport, hiz, true, counters, emit);
    } else {
        rasterize_samples::<H, false>(tri, region, pattern, viewport, hiz, true, counters, emit);
    }
}

/// [`rasterize_with`] for a pattern of one sample when `ONE_SAMPLE` (as a constant), any
/// pattern otherwise; `tile_level` false walks every block even of a region the triangle
/// covers whole (tests compare the two).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn rasterize_samples<H: Fn(u32, u32) -> bool + ?Sized, const ONE_SAMPLE: bool>(
    tri: &Triangle,
    region: &PixelRect,
    pattern: &SamplePattern,
    viewport: Option<&[Fixed; 4]>,
    hiz: Option<&H>,
    tile_level: bool,
    counters: &mut Counters,
    mut emit: impl FnMut(Rasterized<'_>, &mut Counters),
) {
    debug_assert!(!ONE_SAMPLE || pattern.count == 1);
    let samples = if ONE_SAMPLE {
        1
    } else {
        pattern.count as usize
    };
    let b = &tri.bounds;
    let x0 = region.x0.max(b.x0);
    let y0 = region.y0.max(b.y0);
    let x1 = region.x1.min(b.x1);
    let y1 = region.y1.min(b.y1);
    if x0 > x1 || y0 > y1 {
        return;
    }
    // The tile level: a region inside the triangle's bounds may be covered whole (a
    // cheap test first, so the small triangles' call stays short).
    if tile_level
        && viewport.is_none()
        && (b.x0 <= region.x0) & (b.y0 <= region.y0) & (b.x1 >= region.x1) & (b.y1 >= region.y1)
        && whole_region(tri, region, hiz, counters, &mut emit)
    {
        return;
    }
    let block_y0 = y0 / BLOCK_SIZE * BLOCK_SIZE;
    let block_x0 = x0 / BLOCK_SIZE * BLOCK_SIZE;
    let steps = FineSteps::new(tri);
    let mut by = block_y0;
    while by <= y1 {
        let mut bx = block_x0;
        let mut row = BlockRow::new(tri, bx, by);
        while bx <= x1 {
            counters.coarse_blocks_tested += 1;
            // Blocks to the next one tested: past a run one edge rejects, or the row's end.
            let mut step = 1;
            match row.coverage() {
                BlockCoverage::Outside => match row.outside_run() {
                    // (A run past the row's last block ends the row, before stepping so far
                    // that guard-band edges' values could overflow.)
                    Some(run) if run <= (x1 - bx) / BLOCK_SIZE => step = run,
                    _ => break,
                },
                _ if hiz.is_some_and(|test| !test(bx, by)) => counters.hiz_blocks_rejected += 1,
                coverage => {
                    let whole = coverage == BlockCoverage::Inside;
                    if whole {
                        counters.coarse_blocks_full += 1;
                    }
                    // Rows of quads of this block inside the clipped bounds.
                    let qy0 = by.max(y0) & !1;
                    let qy1 = (by + BLOCK_SIZE - 1).min(y1);
                    // Per sample, the block's pixels inside the triangle and the clipped
                    // bounds: bit `row · 8 + column`.
                    let masks = if whole {
                        [u64::MAX; 4]
                    } else {
                        let rows = qy0 - by..qy1 + 1 - by;
                        block_coverage(tri, &steps, bx, by, rows, pattern, samples, row.min)
                    };
                    let bounds = bounds_mask(bx, by, [x0, y0, x1, y1]);
                    if whole && bounds == u64::MAX && viewport.is_none() {
                        counters.quads_rasterized += BLOCK_QUADS as u64;
                        emit(Rasterized::Block { x: bx, y: by }, counters);
                        bx += BLOCK_SIZE;
                        row.advance(1);
                        continue;
                    }
                    let masks = masks.map(|m| m & bounds);
                    // The quads with any covered sample, found from the masks at once: bit
                    // `row · 8 + column` of `occupied` for the quad whose top-left pixel is
                    // there (even rows and columns), visited in raster order.
                    let any = masks.iter().take(samples).fold(0, |a, m| a | m);
                    let mut occupied =
                        (any | any >> 1 | any >> BLOCK_SIZE | any >> (BLOCK_SIZE + 1))
                            & QUAD_CORNERS;
                    let mut quads = [Quad::NONE; BLOCK_QUADS];
                    let mut n = 0;
                    if samples == 1 && viewport.is_none() {
                        // One sample per pixel and no viewport test: the loop below with
                        // its per-sample and per-pixel steps gone. A quad is occupied when
                        // one of its pixels' bits is set in the one mask, so its coverage
                        // word is never zero. (`n` stays below BLOCK_QUADS — one quad per
                        // bit of QUAD_CORNERS — so the modulo only spares a bounds test.)
                        let m = masks[0];
                        while occupied != 0 {
                            let bit = occupied.trailing_zeros();
                            occupied &= occupied - 1;
                            quads[n % BLOCK_QUADS] = Quad {
                                x: bx + bit % BLOCK_SIZE,
                                y: by + bit / BLOCK_SIZE,
                                coverage: quad_bits_to_bytes(m >> bit).to_le_bytes(),
                            };
                            n += 1;
                        }
                    }
                    while occupied != 0 {
                        let bit = occupied.trailing_zeros();
                        occupied &= occupied - 1;
                        let (qx, qy) = (bx + bit % BLOCK_SIZE, by + bit / BLOCK_SIZE);
                        // The quad's two rows of two pixels are bits `bit, bit + 1` and
                        // `bit + 8, bit + 9` of each sample's mask; pixel i's samples go to
                        // byte i of the coverage word.
                        let mut word = 0u32;
                        for (s, m) in masks.iter().take(samples).enumerate() {
                            word |= quad_bits_to_bytes(m >> bit) << s;
                        }
                        let mut quad = Quad {
                            x: qx,
                            y: qy,
                            coverage: word.to_le_bytes(),
                        };
                        if let Some(bounds) = viewport {
                            for i in 0..4u32 {
                                let (px, py) = (qx + (i & 1), qy + (i >> 1));
                                quad.coverage[i as usize] &=
                                    viewport_coverage(bounds, px, py, pattern);
                            }
                        }
                        quads[n] = quad;
                        n += !quad.is_empty() as usize;
                    }
                    if n > 0 {
                        counters.quads_rasterized += n as u64;
                        emit(Rasterized::Quads(&quads[..n]), counters);
                    }
                }
            }
            bx += step * BLOCK_SIZE;
            row.advance(step);
        }
        by += BLOCK_SIZE;
    }
}

/// When `tri` covers every block of `region` (inside its bounds) whole ([`covers_whole`]),
/// gives the blocks as the block loop of [`rasterize_samples`] would — each counted as
/// tested, its Hi-Z test run, counted whole and emitted, row by row, left to right — and
/// returns true; otherwise does nothing and returns false. Out of line, so the block loop's
/// code does not carry it.
#[inline(never)]
fn whole_region<H: Fn(u32, u32) -> bool + ?Sized>(
    tri: &Triangle,
    region: &PixelRect,
    hiz: Option<&H>,
    counters: &mut Counters,
    emit: &mut impl FnMut(Rasterized<'_>, &mut Counters),
) -> bool {
    if !covers_whole(tri, region) {
        return false;
    }
    let mut by = region.y0;
    while by <= region.y1 {
        let mut bx = region.x0;
        while bx <= region.x1 {
            counters.coarse_blocks_tested += 1;
            if hiz.is_some_and(|test| !test(bx, by)) {
                counters.hiz_blocks_rejected += 1;
            } else {
                counters.coarse_blocks_full += 1;
                counters.quads_rasterized += BLOCK_QUADS as u64;
                emit(Rasterized::Block { x: bx, y: by }, counters);
            }
            bx += BLOCK_SIZE;
        }
        by += BLOCK_SIZE;
    }
    true
}

/// Whether `tri` covers every block of `region`, a region inside its bounds, whole: the
/// region is made of whole blocks (its sides multiples of the block's, as a tile's are, the
/// screen's last row and column of tiles included when the target's size is a multiple of
/// 8), and every edge's least value over it — at the corner its steps lower, the region's
/// corners being blocks' corners — is inside. A block's least value is then no less, so
/// [`BlockRow::coverage`] would call each block inside (the tile level of the hierarchy:
/// T6 "What we need around here is more hierarchy").
#[inline]
fn covers_whole(tri: &Triangle, region: &PixelRect) -> bool {
    let PixelRect { x0, y0, x1, y1 } = *region;
    let aligned =
        |lo: u32, hi: u32| lo.is_multiple_of(BLOCK_SIZE) && (hi + 1).is_multiple_of(BLOCK_SIZE);
    if !aligned(x0, x1) || !aligned(y0, y1) || x1 < x0 || y1 < y0 {
        return false;
    }
    let (lo_x, lo_y) = (x0 as Fixed * SUBPIXEL_ONE, y0 as Fixed * SUBPIXEL_ONE);
    let (w, h) = (
        (x1 + 1 - x0) as Fixed * SUBPIXEL_ONE,
        (y1 + 1 - y0) as Fixed * SUBPIXEL_ONE,
    );
    tri.edges
        .iter()
        .all(|e| e.eval(lo_x, lo_y) + e.bias + (e.a * w).min(0) + (e.b * h).min(0) >= 0)
}

/// The quad whose top-left pixel is bit 0 of `m` (a block's mask shifted down to it): its
/// pixels' bits 0, 1, 8 and 9 as bit 0 of bytes 0–3. The four bits gathered into bits 0–3,
/// then spread by one multiply: it adds copies shifted by 0, 7, 14 and 21, so bit i lands on
/// bit 8i from the i-th copy only, and no two copies' bits meet (nothing carries).
#[inline(always)]
fn quad_bits_to_bytes(m: u64) -> u32 {
    let m = m as u32;
    let four = (m & 3) | (m >> (BLOCK_SIZE - 2) & 0xc);
    four.wrapping_mul(0x0020_4081) & 0x0101_0101
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockCoverage {
    Outside,
    Partial,
    Inside,
}

impl BlockCoverage {
    /// The verdict of a block some edge rejects (`outside`) or every edge accepts whole
    /// (`inside`).
    #[inline]
    fn of(outside: bool, inside: bool) -> BlockCoverage {
        if outside {
            BlockCoverage::Outside
        } else if inside {
            BlockCoverage::Inside
        } else {
            BlockCoverage::Partial
        }
    }
}

/// The coarse test along a row of blocks. The edge functions are linear, so each one's
/// extremes over a block are at the corners the signs of `a` and `b` pick, and one block to
/// the right adds `a · 8 px` to both: per edge, its biased largest and smallest value over
/// the current block, stepped exactly (integers) from block to block. A block costs
/// additions and compares, and a run of blocks an edge rejects — left of the triangle, or
/// right of it for an edge that falls to the right — is stepped over whole: a thin or
/// diagonal triangle's bounding box holds mostly such blocks.
struct BlockRow {
    max: [i64; 3],
    min: [i64; 3],
    step: [i64; 3],
}

impl BlockRow {
    /// The row of blocks whose first block's top-left pixel is (bx, by).
    #[inline]
    fn new(tri: &Triangle, bx: u32, by: u32) -> BlockRow {
        let lo_x = bx as Fixed * SUBPIXEL_ONE;
        let lo_y = by as Fixed * SUBPIXEL_ONE;
        let side = BLOCK_SIZE as Fixed * SUBPIXEL_ONE;
        let e = &tri.edges;
        // Edge `i`, biased, at the block's top-left corner; a block's width to the right
        // adds `a · side`, its height down `b · side`, so the largest value is at the corner
        // those steps raise and the smallest where they lower it (integers: exact).
        let top_left: [i64; 3] = std::array::from_fn(|i| e[i].eval(lo_x, lo_y) + e[i].bias);
        let (dx, dy): ([i64; 3], [i64; 3]) = (
            std::array::from_fn(|i| e[i].a * side),
            std::array::from_fn(|i| e[i].b * side),
        );
        BlockRow {
            max: std::array::from_fn(|i| top_left[i] + dx[i].max(0) + dy[i].max(0)),
            min: std::array::from_fn(|i| top_left[i] + dx[i].min(0) + dy[i].min(0)),
            step: dx,
        }
    }

    /// The current block's coverage: outside when an edge's largest value is negative,
    /// inside when every edge's smallest value is not (the verdicts combined without a
    /// branch per edge: which edge rejects a small triangle's block is unpredictable).
    #[inline]
    fn coverage(&self) -> BlockCoverage {
        let outside = (self.max[0] < 0) | (self.max[1] < 0) | (self.max[2] < 0);
        let inside = (self.min[0] >= 0) & (self.min[1] >= 0) & (self.min[2] >= 0);
        BlockCoverage::of(outside, inside)
    }

    /// For an outside block: how many blocks on lies the first one that no edge rejecting
    /// this one still rejects (every block before it is outside too), or `None` when no
    /// later block of the row can be inside — a rejecting edge does not rise to the right.
    #[inline]
    fn outside_run(&self) -> Option<u32> {
        let mut run = 1;
        for i in 0..3 {
            if self.max[i] < 0 {
                if self.step[i] <= 0 {
                    return None;
                }
                // The fewest steps k with max + k · step ≥ 0 (capped far beyond any row).
                let k = (-self.max[i] + self.step[i] - 1) / self.step[i];
                run = run.max(k.min(1 << 24) as u32);
            }
        }
        Some(run)
    }

    /// Moves `blocks` blocks to the right.
    #[inline]
    fn advance(&mut self, blocks: u32) {
        for i in 0..3 {
            let d = self.step[i] * blocks as i64;
            self.max[i] += d;
            self.min[i] += d;
        }
    }
}

/// Coarse test of the block whose top-left pixel is (bx, by), on its own: what
/// [`BlockRow`] computes along a row.
#[cfg(test)]
fn classify_block(tri: &Triangle, bx: u32, by: u32) -> BlockCoverage {
    let lo_x = bx as Fixed * SUBPIXEL_ONE;
    let lo_y = by as Fixed * SUBPIXEL_ONE;
    let hi_x = lo_x + BLOCK_SIZE as Fixed * SUBPIXEL_ONE;
    let hi_y = lo_y + BLOCK_SIZE as Fixed * SUBPIXEL_ONE;
    // All three edges evaluated, the verdicts combined without a branch per edge (which
    // edge rejects a small triangle's block is unpredictable).
    let (mut outside, mut inside) = (false, true);
    for e in &tri.edges {
        let max = e.eval(
            if e.a > 0 { hi_x } else { lo_x },
            if e.b > 0 { hi_y } else { lo_y },
        );
        let min = e.eval(
            if e.a > 0 { lo_x } else { hi_x },
            if e.b > 0 { lo_y } else { hi_y },
        );
        outside |= max + e.bias < 0;
        inside &= min + e.bias >= 0;
    }
    BlockCoverage::of(outside, inside)
}

/// The pixels of the block at (bx, by) inside the inclusive pixel bounds `[x0, y0, x1, y1]`:
/// bit `row · 8 + column`.
#[inline]
fn bounds_mask(bx: u32, by: u32, [x0, y0, x1, y1]: [u32; 4]) -> u64 {
    // Columns (or rows) lo..hi of the block inside lo..=hi, clamped to it.
    let span = |lo: u32, hi: u32, base: u32| {
        let lo = lo.saturating_sub(base).min(BLOCK_SIZE);
        let hi = (hi + 1).saturating_sub(base).min(BLOCK_SIZE);
        (lo, hi.max(lo))
    };
    let (c0, c1) = span(x0, x1, bx);
    let (r0, r1) = span(y0, y1, by);
    let cols = ((1u64 << (c1 - c0)) - 1) << c0;
    // The columns in every row (a byte each, no carries), then the rows kept.
    (cols * 0x0101_0101_0101_0101) & row_span_mask(r0, r1)
}

/// Fine rasterization of one 8×8 block: for each sample of the pattern, the mask of the
/// block's pixels whose sample is inside all three edges (bit `row · 8 + column`). Each
/// edge is evaluated once at the block's first sample and then stepped — by `a` per pixel
/// across and `b` per pixel down, in 1/256-pixel units — which is exact integer arithmetic,
/// so every sample gets the value [`pixel_coverage`] computes directly.
/// Only `rows` (of 0..8) are evaluated; the others stay 0. For a large triangle, whose
/// edges' values over a block leave 32-bit lanes, an edge whose `least` value over the
/// block (the coarse test's, biased) is not negative accepts the whole block and is not
/// walked: its signs are all inside, so only the edges crossing the block are, and when
/// those fit 32 bits the AVX2 test takes them. `samples` is the pattern's sample count.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn block_coverage(
    tri: &Triangle,
    steps: &FineSteps,
    bx: u32,
    by: u32,
    rows: std::ops::Range<u32>,
    pattern: &SamplePattern,
    samples: usize,
    least: [i64; 3],
) -> [u64; 4] {
    let mut masks = [0u64; 4];
    let base_x = (bx as Fixed) << SUBPIXEL_BITS;
    let base_y = (by as Fixed) << SUBPIXEL_BITS;
    // The evaluated rows' bits.
    let rows_mask = row_span_mask(rows.start, rows.end);
    for (mask, &[ox, oy]) in masks.iter_mut().zip(&pattern.offsets).take(samples) {
        #[cfg(target_arch = "x86_64")]
        if steps.wide {
            // Every edge in 32-bit lanes (see below): the three at once, eight columns a
            // row per AVX2 instruction.
            let mut short = std::array::from_fn::<_, 3, _>(|i| {
                let e = &tri.edges[i];
                let corner = e.eval(base_x + ox, base_y + oy) + e.bias;
                let reach = corner.abs() + steps.spread[i];
                (reach <= i32::MAX as Fixed).then_some(corner as i32)
            });
            if let [Some(c0), Some(c1), Some(c2)] = short {
                // SAFETY: `wide()` is true only when the CPU has AVX2.
                *mask = unsafe { block_signs3_avx2([c0, c1, c2], &steps.columns, steps.down) }
                    & rows_mask;
                continue;
            }
            // A large triangle's: its edges accepting the whole block stand in as a
            // constant inside value (zero everywhere).
            let (mut columns, mut down) = (steps.columns, steps.down);
            for (i, least) in least.into_iter().enumerate() {
                if least >= 0 {
                    (short[i], columns[i], down[i]) = (Some(0), [0; 8], 0);
                }
            }
            if let [Some(c0), Some(c1), Some(c2)] = short {
                // SAFETY: `wide()` is true only when the CPU has AVX2.
                *mask = unsafe { block_signs3_avx2([c0, c1, c2], &columns, down) } & rows_mask;
                continue;
            }
        }
        let mut inside = u64::MAX;
        for (i, e) in tri.edges.iter().enumerate() {
            let [step_x, step_y] = steps.step[i];
            // The edge at the block's first sample (row 0, column 0).
            let corner = e.eval(base_x + ox, base_y + oy) + e.bias;
            // Every value over the block is within `reach` of zero: when that stays inside
            // i32, the whole block is evaluated in 32-bit lanes (the same values, so the
            // same signs) — the usual case, small triangles near their edges; x86's
            // baseline has no 64-bit vector compare.
            let reach = corner.abs() + steps.spread[i];
            let edge = if reach <= i32::MAX as Fixed {
                block_signs(corner as i32, step_x as i32, step_y as i32) & rows_mask
            } else if least[i] >= 0 {
                rows_mask
            } else {
                let mut row = corner + rows.start as Fixed * step_y;
                let mut edge = 0u64;
                for r in rows.start as u64..rows.end as u64 {
                    let mut bits = 0u64;
                    for c in 0..BLOCK_SIZE as i64 {
                        bits |= ((row + c * step_x >= 0) as u64) << c;
                    }
                    edge |= bits << (r * BLOCK_SIZE as u64);
                    row += step_y;
                }
                edge
            };
            inside &= edge;
        }
        *mask = inside;
    }
    masks
}

/// What [`block_coverage`] needs of a triangle besides a block's position, made once per
/// triangle: per edge its step one pixel across and one down (1/256-pixel units) and the
/// most its value changes over a block (seven of each), and whether the CPU takes the
/// three-edge AVX2 test.
struct FineSteps {
    step: [[Fixed; 2]; 3],
    spread: [Fixed; 3],
    wide: bool,
    /// For the AVX2 test: per edge its change from column 0 to each column of a row
    /// (`column · step_x`, in 32-bit lanes, wrapping: exact whenever the test uses them,
    /// since it runs only when every value over the block fits i32).
    columns: [[i32; 8]; 3],
    /// Per edge its step down a row in 32-bit lanes (likewise exact whenever used).
    down: [i32; 3],
}

impl FineSteps {
    #[inline]
    fn new(tri: &Triangle) -> FineSteps {
        let step = tri
            .edges
            .each_ref()
            .map(|e| [e.a * SUBPIXEL_ONE, e.b * SUBPIXEL_ONE]);
        FineSteps {
            step,
            spread: step.map(|[x, y]| 7 * x.abs() + 7 * y.abs()),
            wide: cfg!(target_arch = "x86_64") && rastra_texture::cpu::wide(),
            columns: step.map(|[x, _]| std::array::from_fn(|c| (x as i32).wrapping_mul(c as i32))),
            down: step.map(|[_, y]| y as i32),
        }
    }
}

/// [`block_signs`] of three edges ANDed — bit `row · 8 + column` set when every edge
/// `[corner, step_x, step_y]` is ≥ 0 there — with AVX2: a row's eight columns per vector,
/// the three edges' values ORed (the OR of two's complement values is negative exactly
/// when one of them is), four rows narrowed with saturation (which keeps signs) to 32 bytes
/// whose sign bits are one `movemask`. Every value must fit i32 (the caller checks).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn block_signs3_avx2(corners: [i32; 3], columns: &[[i32; 8]; 3], down: [i32; 3]) -> u64 {
    use std::arch::x86_64::*;
    // Each edge's row 0 (its corner plus each column's change, made once per triangle:
    // a multiply here was ten cycles' latency at the head of every block's chain), and its
    // step down a row.
    let mut rows: [__m256i; 3] = std::array::from_fn(|i| {
        // SAFETY: `columns[i]` is 32 bytes (unaligned load).
        let across = unsafe { _mm256_loadu_si256(columns[i].as_ptr().cast()) };
        _mm256_add_epi32(_mm256_set1_epi32(corners[i]), across)
    });
    let down = down.map(|step_y| _mm256_set1_epi32(step_y));
    // After the two packs a 128-bit half holds four rows' columns 0–3 (low half) or 4–7
    // (high half), one 32-bit group per row: this puts each row's groups together in order.
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    let mut negative = 0u64;
    for quarter in 0..2 {
        let row: [__m256i; 4] = std::array::from_fn(|_| {
            let any = _mm256_or_si256(_mm256_or_si256(rows[0], rows[1]), rows[2]);
            // (The additions past row 7 may wrap; their results are never used.)
            for (r, d) in rows.iter_mut().zip(&down) {
                *r = _mm256_add_epi32(*r, *d);
            }
            any
        });
        let bytes = _mm256_packs_epi16(
            _mm256_packs_epi32(row[0], row[1]),
            _mm256_packs_epi32(row[2], row[3]),
        );
        let bytes = _mm256_permutevar8x32_epi32(bytes, order);
        negative |= (_mm256_movemask_epi8(bytes) as u32 as u64) << (32 * quarter);
    }
    !negative
}

/// Rows `start..end` (of 0..8) of a block mask.
#[inline(always)]
fn row_span_mask(start: u32, end: u32) -> u64 {
    let below = |rows: u32| {
        if rows >= BLOCK_SIZE {
            u64::MAX
        } else {
            (1u64 << (rows * BLOCK_SIZE)) - 1
        }
    };
    below(end) & !below(start)
}

/// The signs of an edge over an 8×8 block, in 32-bit lanes: bit `row · 8 + column` set
/// when `corner + column · step_x + row · step_y ≥ 0`. Every such value must fit i32 (the
/// caller checks). On x86-64 (SSE2, the baseline) two rows are four vectors of four
/// columns, narrowed with saturation (which keeps signs) to sixteen bytes whose sign bits
/// are one `movemask`: sixteen pixels' verdicts per compare-free step.
#[inline(always)]
fn block_signs(corner: i32, step_x: i32, step_y: i32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86-64 baseline; no memory is touched.
        unsafe {
            let sx = step_x;
            let mut lo = _mm_add_epi32(
                _mm_set1_epi32(corner),
                _mm_setr_epi32(0, sx, 2 * sx, 3 * sx),
            );
            let mut hi = _mm_add_epi32(lo, _mm_set1_epi32(4 * sx));
            let dy = _mm_set1_epi32(step_y);
            let mut negative = 0u64;
            for pair in 0..4 {
                // (The additions past row 7 may wrap; their results are never used.)
                let first = _mm_packs_epi32(lo, hi);
                lo = _mm_add_epi32(lo, dy);
                hi = _mm_add_epi32(hi, dy);
                let second = _mm_packs_epi32(lo, hi);
                lo = _mm_add_epi32(lo, dy);
                hi = _mm_add_epi32(hi, dy);
                let bytes = _mm_packs_epi16(first, second);
                negative |= (_mm_movemask_epi8(bytes) as u32 as u64) << (16 * pair);
            }
            !negative
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut bits = 0u64;
        for r in 0..BLOCK_SIZE as i64 {
            for c in 0..BLOCK_SIZE as i64 {
                let v = corner as i64 + c * step_x as i64 + r * step_y as i64;
                bits |= ((v >= 0) as u64) << (r * BLOCK_SIZE as i64 + c);
            }
        }
        bits
    }
}

/// Samples of pixel (px, py) inside the snapped viewport rectangle `[x0, x1) × [y0, y1)`.
#[inline]
fn viewport_coverage(bounds: &[Fixed; 4], px: u32, py: u32, pattern: &SamplePattern) -> u8 {
    let base_x = (px as Fixed) << SUBPIXEL_BITS;
    let base_y = (py as Fixed) << SUBPIXEL_BITS;
    let mut mask = 0u8;
    for s in 0..pattern.count as usize {
        let x = base_x + pattern.offsets[s][0];
        let y = base_y + pattern.offsets[s][1];
        if x >= bounds[0] && x < bounds[2] && y >= bounds[1] && y < bounds[3] {
            mask |= 1 << s;
        }
    }
    mask
}

/// Sample-coverage mask of one pixel.
#[inline]
pub fn pixel_coverage(tri: &Triangle, px: u32, py: u32, pattern: &SamplePattern) -> u8 {
    let base_x = (px as Fixed) << SUBPIXEL_BITS;
    let base_y = (py as Fixed) << SUBPIXEL_BITS;
    let mut mask = 0u8;
    for s in 0..pattern.count as usize {
        let x = base_x + pattern.offsets[s][0];
        let y = base_y + pattern.offsets[s][1];
        if tri.edges.iter().all(|e| e.inside(x, y)) {
            mask |= 1 << s;
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{setup_state, unit_values};

    /// A quad's coverage bytes from a block mask: pixel i (x + i mod 2, y + i / 2) in bit 0 of
    /// byte i, for every pattern of its four bits at every quad position, whatever the
    /// other bits of the mask.
    #[test]
    fn quad_bits_reach_their_pixel_bytes() {
        for bit in (0..64).filter(|b| b % 2 == 0 && b / 8 % 2 == 0) {
            for four in 0..16u64 {
                for rest in [0u64, u64::MAX] {
                    let corners = [bit, bit + 1, bit + 8, bit + 9];
                    let mut m = rest;
                    for (i, &c) in corners.iter().enumerate() {
                        m = (m & !(1 << c)) | (four >> i & 1) << c;
                    }
                    let want = u32::from_le_bytes(std::array::from_fn(|i| (four >> i & 1) as u8));
                    assert_eq!(
                        quad_bits_to_bytes(m >> bit),
                        want,
                        "bit {bit}, pixels {four:04b}"
                    );
                }
            }
        }
    }

    /// The three-edge AVX2 block test equals the per-pixel sign test of every edge, for
    /// values spread over i32 and at its ends (each value of the block fits, as the
    /// rasterizer ensures before using it).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn three_edge_block_signs_equal_the_pixel_test() {
        if !rastra_texture::cpu::wide() {
            return;
        }
        let mut s = 0x2545_f491u32;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        let mut edge = |k: u32| -> [i32; 3] {
            // Steps small to huge; the corner chosen so every value of the block fits.
            let scale = [1u32 << 4, 1 << 12, 1 << 20, 1 << 27][k as usize % 4];
            let step = |v: u32| ((v % (2 * scale)) as i64 - scale as i64) as i32;
            let (sx, sy) = (step(next()), step(next()));
            let reach = 7 * sx.unsigned_abs() as i64 + 7 * sy.unsigned_abs() as i64;
            let room = i32::MAX as i64 - reach;
            let corner = match next() % 3 {
                0 => room,
                1 => -room,
                _ => (next() as i64 % (2 * room + 1)) - room,
            };
            [corner as i32, sx, sy]
        };
        for i in 0..20_000u32 {
            let edges = [edge(i), edge(i / 4), edge(i / 16)];
            let mut want = 0u64;
            for r in 0..8i64 {
                for c in 0..8i64 {
                    let inside = edges.iter().all(|&[corner, sx, sy]| {
                        corner as i64 + c * sx as i64 + r * sy as i64 >= 0
                    });
                    want |= (inside as u64) << (r * 8 + c);
                }
            }
            let columns =
                edges.map(|[_, sx, _]| std::array::from_fn(|c| sx.wrapping_mul(c as i32)));
            let down = edges.map(|[_, _, sy]| sy);
            // SAFETY: `wide()` said the CPU has AVX2.
            let got = unsafe { block_signs3_avx2(edges.map(|[c, _, _]| c), &columns, down) };
            assert_eq!(got, want, "case {i}: {edges:?}");
        }
    }

    /// A region a triangle covers whole is given as the block loop gives it — the same
    /// blocks in the same order, the same counts, the same Hi-Z tests — for random large
    /// triangles over tiles, the screen's edge tiles and regions not made of whole blocks
    /// (which the tile level leaves to the block loop), both patterns.
    #[test]
    fn tile_level_equals_the_block_loop() {
        let (w, h) = (200, 136);
        let setup = setup_state(w, h);
        let mut next = unit_values(0x2545_f491);
        let regions = [
            PixelRect {
                x0: 0,
                y0: 0,
                x1: 63,
                y1: 63,
            },
            PixelRect {
                x0: 64,
                y0: 64,
                x1: 127,
                y1: 127,
            },
            PixelRect {
                x0: 192,
                y0: 128,
                x1: 199,
                y1: 135,
            },
            PixelRect {
                x0: 8,
                y0: 16,
                x1: 47,
                y1: 23,
            },
            PixelRect {
                x0: 3,
                y0: 0,
                x1: 63,
                y1: 63,
            },
            PixelRect {
                x0: 0,
                y0: 0,
                x1: 63,
                y1: 60,
            },
        ];
        let mut whole = 0;
        for _ in 0..400 {
            // Large triangles, most reaching past the target.
            let p: [[f32; 4]; 3] = std::array::from_fn(|_| {
                let (x, y) = (next() * 1200.0 - 500.0, next() * 1200.0 - 500.0);
                [2.0 * x / w as f32 - 1.0, 1.0 - 2.0 * y / h as f32, 0.5, 1.0]
            });
            let Ok(tri) = setup.setup([&p[0], &p[1], &p[2]], 0) else {
                continue;
            };
            // Hi-Z that rejects a pseudo-random third of the blocks.
            let hiz = |bx: u32, by: u32| !(bx / 8 * 7 + by / 8 * 3).is_multiple_of(3);
            for pattern in [PATTERN_1X, PATTERN_4X] {
                for region in &regions {
                    let run = |tile_level: bool| {
                        let mut counters = Counters::default();
                        let mut out = Vec::new();
                        rasterize_samples::<_, false>(
                            &tri,
                            region,
                            &pattern,
                            None,
                            Some(&hiz),
                            tile_level,
                            &mut counters,
                            |r, _| out.push(format!("{r:?}")),
                        );
                        (out, counters)
                    };
                    let (got, want) = (run(true), run(false));
                    assert_eq!(got.0, want.0, "{region:?} {pattern:?}");
                    assert_eq!(got.1, want.1, "{region:?} {pattern:?}");
                    let b = tri.bounds;
                    let inside = b.x0 <= region.x0
                        && b.y0 <= region.y0
                        && b.x1 >= region.x1
                        && b.y1 >= region.y1;
                    whole += (inside && covers_whole(&tri, region)) as usize;
                }
            }
        }
        assert!(whole > 50, "only {whole} regions covered whole");
    }

    /// Along every row of blocks of random triangles' bounding boxes, [`BlockRow`] gives
    /// each block [`classify_block`]'s verdict, and every block a run steps over — to the
    /// next tested one or past the row's end — is outside.
    #[test]
    fn block_rows_equal_the_block_test() {
        let (w, h) = (512u32, 512u32);
        let setup = setup_state(w, h);
        let mut next = unit_values(0x9e37_79b9);
        let (mut tested, mut skipped) = (0, 0);
        for t in 0..2000 {
            // Thin slivers, small and large triangles, some beyond the screen.
            let spread = [4.0, 40.0, 700.0][t % 3];
            let (cx, cy) = (next() * 600.0 - 40.0, next() * 600.0 - 40.0);
            let p: [[f32; 4]; 3] = std::array::from_fn(|_| {
                let x = cx + (next() - 0.5) * spread;
                let y = cy + (next() - 0.5) * spread * if t % 5 == 0 { 0.05 } else { 1.0 };
                [2.0 * x / w as f32 - 1.0, 1.0 - 2.0 * y / h as f32, 0.5, 1.0]
            });
            let Ok(tri) = setup.setup([&p[0], &p[1], &p[2]], 0) else {
                continue;
            };
            let b = tri.bounds;
            let first = b.x0 / BLOCK_SIZE * BLOCK_SIZE;
            let mut by = b.y0 / BLOCK_SIZE * BLOCK_SIZE;
            while by <= b.y1 {
                let mut row = BlockRow::new(&tri, first, by);
                let mut bx = first;
                while bx <= b.x1 {
                    let got = row.coverage();
                    assert_eq!(got, classify_block(&tri, bx, by), "block ({bx}, {by})");
                    tested += 1;
                    let step = match got {
                        BlockCoverage::Outside => row.outside_run(),
                        _ => Some(1),
                    };
                    let end = step.map_or(b.x1 + 1, |s| bx + s * BLOCK_SIZE);
                    let mut x = bx + BLOCK_SIZE;
                    while x < end.min(b.x1 + 1) {
                        assert_eq!(classify_block(&tri, x, by), BlockCoverage::Outside);
                        skipped += 1;
                        x += BLOCK_SIZE;
                    }
                    let Some(step) = step else { break };
                    bx += step * BLOCK_SIZE;
                    row.advance(step);
                }
                by += BLOCK_SIZE;
            }
        }
        assert!(
            tested > 10_000 && skipped > 10_000,
            "{tested} tested, {skipped} skipped"
        );
    }

    /// Wedges reaching to the guard band's edge (half a million pixels away, the largest
    /// edge steps there are), rasterized in a tile: runs stop at the row's end rather than
    /// step edge values out of range, and coverage is the per-pixel test's.
    #[test]
    fn guard_band_slivers_in_a_tile() {
        let (w, h) = (256u32, 256u32);
        let setup = setup_state(w, h);
        let far = 524_000.0;
        let clip = |x: f32, y: f32| [2.0 * x / w as f32 - 1.0, 1.0 - 2.0 * y / h as f32, 0.5, 1.0];
        let region = PixelRect {
            x0: 64,
            y0: 64,
            x1: 127,
            y1: 127,
        };
        let mut rasterized = 0;
        for (a, b, c) in [
            ((70.0, 70.0), (far, 90.0), (far, 60_000.0)),
            ((120.0, 66.0), (-far, 100.0), (-far, 30_000.0)),
            ((100.0, 64.5), (far, far), (-far, far)),
            ((-far, 80.0), (far, 81.5), (far, 30_000.0)),
        ] {
            let p = [clip(a.0, a.1), clip(b.0, b.1), clip(c.0, c.1)];
            let Ok(tri) = setup.setup([&p[0], &p[1], &p[2]], 0) else {
                continue;
            };
            let mut got = vec![0u8; (w * h) as usize];
            let mut counters = Counters::default();
            rasterize(
                &tri,
                &region,
                &PATTERN_1X,
                None,
                None,
                &mut counters,
                |r, _| {
                    r.for_each_quad(&PATTERN_1X, |q| {
                        for i in 0..4u32 {
                            got[((q.y + (i >> 1)) * w + q.x + (i & 1)) as usize] =
                                q.coverage[i as usize];
                        }
                    })
                },
            );
            for y in region.y0..=region.y1 {
                for x in region.x0..=region.x1 {
                    let want = pixel_coverage(&tri, x, y, &PATTERN_1X);
                    assert_eq!(got[(y * w + x) as usize], want, "pixel ({x}, {y})");
                }
            }
            rasterized += (counters.quads_rasterized > 0) as u32;
        }
        assert_eq!(rasterized, 4, "wedges that reached the tile");
    }
}
