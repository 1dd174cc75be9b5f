//! Hierarchical Z (T7 "Hierarchical Z/Stencil"): one conservative depth bound per 8×8-pixel
//! block of a depth surface, so the rasterizer can drop whole blocks of a triangle that
//! certainly fail the depth test before any sample is tested or shaded.
//!
//! For "less"-type tests the bound is the block's maximum stored depth; for "greater"-type
//! tests its minimum. Which one a surface keeps is set by the first depth-tested draw after a
//! clear; a draw testing in the other direction disables Hi-Z until the next clear, as
//! hardware does. Bounds are recomputed exactly from the stored depths at the end of each
//! draw that writes depth, tile by tile, and during a draw that tests and writes depth for
//! the blocks its triangles reached (every few dozen of a tile's triangles: `draw`); in
//! between they may be stale but stay conservative (a "less" draw only lowers depths, so an
//! old maximum is still an upper bound).
//! Hi-Z never changes an image: it only skips work whose result is already known.

use std::sync::Mutex;

use crate::binning::TILE_SIZE;
use crate::raster::BLOCK_SIZE;
use crate::state::CompareFunction;

/// Blocks per tile edge.
const BLOCKS: u32 = TILE_SIZE / BLOCK_SIZE;

/// What the bounds of a surface mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HiZMode {
    /// Freshly cleared: every bound equals the clear value, so either direction works.
    Cleared,
    /// Bounds are block maxima (for Less / LessEqual).
    Max,
    /// Bounds are block minima (for Greater / GreaterEqual).
    Min,
    /// Disabled until the next clear.
    Off,
}

/// The Hi-Z bounds of one depth surface, laid out tile by tile (each tile's 8×8 blocks are
/// contiguous, so tile workers own disjoint parts).
#[derive(Debug)]
pub struct HiZBuffer {
    pub mode: HiZMode,
    tiles: Vec<Mutex<Vec<f32>>>,
}

impl HiZBuffer {
    /// Bounds for a `width × height` surface whose depth is `clear` everywhere.
    pub fn new(width: u32, height: u32, clear: f32) -> HiZBuffer {
        let n = (width.div_ceil(TILE_SIZE) * height.div_ceil(TILE_SIZE)) as usize;
        HiZBuffer {
            mode: HiZMode::Cleared,
            tiles: (0..n)
                .map(|_| Mutex::new(vec![clear; (BLOCKS * BLOCKS) as usize]))
                .collect(),
        }
    }

    /// The surface was cleared to `z` (or discarded, `z` = 0).
    pub fn clear(&mut self, z: f32) {
        self.mode = HiZMode::Cleared;
        for t in &mut self.tiles {
            t.get_mut().unwrap_or_else(|e| e.into_inner()).fill(z);
        }
    }

    /// The surface was written some other way (copy, upload): bounds are unknown.
    pub fn invalidate(&mut self) {
        self.mode = HiZMode::Off;
    }

    /// Prepares the buffer for a draw with this depth test (`writes`: the draw may write
    /// depth); returns whether the draw may use Hi-Z to reject blocks.
    pub fn begin_draw(&mut self, compare: CompareFunction, writes: bool) -> bool {
        let wants = match compare {
            CompareFunction::Less | CompareFunction::LessEqual => Some(HiZMode::Max),
            CompareFunction::Greater | CompareFunction::GreaterEqual => Some(HiZMode::Min),
            _ => None,
        };
        match (self.mode, wants) {
            (HiZMode::Off, _) => false,
            (HiZMode::Cleared, Some(w)) => {
                self.mode = w;
                true
            }
            // Writes of a direction-less test: keep exact maxima from now on.
            (HiZMode::Cleared, None) => {
                if writes {
                    self.mode = HiZMode::Max;
                }
                false
            }
            (m, Some(w)) if m == w => true,
            (_, Some(_)) => {
                // The compare direction flipped: off until the next clear.
                self.mode = HiZMode::Off;
                false
            }
            (_, None) => false,
        }
    }

    /// The bounds of tile `t` (its 8×8 blocks, row-major).
    pub fn tile(&self, t: usize) -> std::sync::MutexGuard<'_, Vec<f32>> {
        self.tiles[t].lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether a block whose triangle depth is at least `zmin` (at most `zmax`) certainly fails
/// `compare` against a block bound, given the depth format's quantisation `q` (monotonic).
#[inline]
pub fn rejects(
    mode: HiZMode,
    compare: CompareFunction,
    bound: f32,
    zmin: f32,
    zmax: f32,
    q: impl Fn(f32) -> f32,
) -> bool {
    match (mode, compare) {
        (HiZMode::Max, CompareFunction::Less) => q(zmin) >= bound,
        (HiZMode::Max, CompareFunction::LessEqual) => q(zmin) > bound,
        (HiZMode::Min, CompareFunction::Greater) => q(zmax) <= bound,
        (HiZMode::Min, CompareFunction::GreaterEqual) => q(zmax) < bound,
        _ => false,
    }
}

/// Folds a run of stored Depth32Float values (little-endian `f32`s, `bytes.len()` a multiple
/// of 4) into `bound`: their maximum (`max` true) or minimum, NaNs ignored — `bound` itself
/// must not be NaN. The value is that of folding one depth at a time with `f32::max` /
/// `f32::min`; only which zero a mix of −0 and +0 gives may differ, and bounds are only ever
/// compared (−0 = +0). On x86-64 eight depths per step in two SSE2 accumulators (a serial
/// fold is one dependent compare-and-select chain per depth).
pub fn fold_depths(max: bool, bound: f32, bytes: &[u8]) -> f32 {
    debug_assert!(!bound.is_nan());
    let scalar = |b: f32, t: &[u8]| {
        t.chunks_exact(4)
            .map(|t| f32::from_le_bytes([t[0], t[1], t[2], t[3]]))
            .fold(b, |b, z| if max { b.max(z) } else { b.min(z) })
    };
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        if bytes.len() >= 128 && rastra_texture::cpu::wide() {
            // SAFETY: the CPU has AVX2 (`wide`).
            return unsafe { fold_depths_avx2(max, bound, bytes) };
        }
        let (runs, rest) = bytes.split_at(bytes.len() / 32 * 32);
        if runs.is_empty() {
            return scalar(bound, rest);
        }
        // `_mm_max_ps(z, acc)` is z > acc ? z : acc per lane, so a NaN z leaves acc (never
        // NaN) as it is — `f32::max`'s rule for a non-NaN accumulator; likewise min.
        // SAFETY (every SSE intrinsic below): SSE2 is part of the x86-64 baseline.
        let step = |z: __m128, acc: __m128| unsafe {
            if max {
                _mm_max_ps(z, acc)
            } else {
                _mm_min_ps(z, acc)
            }
        };
        let mut acc = [unsafe { _mm_set1_ps(bound) }; 2];
        for run in runs.chunks_exact(32) {
            // SAFETY: a 32-byte chunk holds two 16-byte loads (unaligned loads).
            let (z0, z1) = unsafe {
                (
                    _mm_loadu_ps(run.as_ptr().cast()),
                    _mm_loadu_ps(run.as_ptr().add(16).cast()),
                )
            };
            acc = [step(z0, acc[0]), step(z1, acc[1])];
        }
        let v = step(acc[0], acc[1]);
        let v = step(v, unsafe { _mm_movehl_ps(v, v) });
        let v = step(v, unsafe { _mm_shuffle_ps::<0b01>(v, v) });
        scalar(unsafe { _mm_cvtss_f32(v) }, rest)
    }
    #[cfg(not(target_arch = "x86_64"))]
    scalar(bound, bytes)
}

/// [`fold_depths`] thirty-two depths a step, in four 256-bit accumulators (the same rule
/// per lane: `vmaxps(z, acc)` keeps the accumulator where z is NaN); a rest of fewer goes to
/// the SSE2 fold. A whole 8×8 block of one-sample depths is two steps.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_depths_avx2(max: bool, bound: f32, bytes: &[u8]) -> f32 {
    use std::arch::x86_64::*;
    let step = |z: __m256, acc: __m256| {
        if max {
            _mm256_max_ps(z, acc)
        } else {
            _mm256_min_ps(z, acc)
        }
    };
    let (runs, rest) = bytes.split_at(bytes.len() / 128 * 128);
    let mut acc = [_mm256_set1_ps(bound); 4];
    for run in runs.chunks_exact(128) {
        for (k, acc) in acc.iter_mut().enumerate() {
            // SAFETY: a 128-byte chunk holds four 32-byte loads (unaligned loads).
            *acc = step(
                unsafe { _mm256_loadu_ps(run.as_ptr().add(32 * k).cast()) },
                *acc,
            );
        }
    }
    let v = step(step(acc[0], acc[1]), step(acc[2], acc[3]));
    let fold4 = |a: __m128, b: __m128| {
        if max {
            _mm_max_ps(a, b)
        } else {
            _mm_min_ps(a, b)
        }
    };
    let v = fold4(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let v = fold4(v, _mm_movehl_ps(v, v));
    let v = fold4(v, _mm_shuffle_ps::<0b01>(v, v));
    let b = _mm_cvtss_f32(v);
    if rest.is_empty() {
        b
    } else {
        fold_depths(max, b, rest)
    }
}

/// Index of the block containing pixel (x, y) inside its tile's bounds.
#[inline]
pub fn block_index(x: u32, y: u32) -> usize {
    (((y % TILE_SIZE) / BLOCK_SIZE) * BLOCKS + (x % TILE_SIZE) / BLOCK_SIZE) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn direction_flip_disables_until_clear() {
        let mut h = HiZBuffer::new(100, 70, 1.0);
        assert!(h.begin_draw(CompareFunction::Less, true));
        assert!(h.begin_draw(CompareFunction::LessEqual, true));
        assert!(!h.begin_draw(CompareFunction::Always, true));
        assert!(!h.begin_draw(CompareFunction::Greater, false));
        assert!(
            !h.begin_draw(CompareFunction::Less, true),
            "off until the next clear"
        );
        h.clear(0.0);
        assert!(h.begin_draw(CompareFunction::Greater, true));
        assert_eq!(h.tile(3).len(), 64);
    }

    #[test]
    fn rejection_is_conservative() {
        let id = |z: f32| z;
        assert!(rejects(
            HiZMode::Max,
            CompareFunction::Less,
            0.5,
            0.5,
            0.9,
            id
        ));
        assert!(!rejects(
            HiZMode::Max,
            CompareFunction::LessEqual,
            0.5,
            0.5,
            0.9,
            id
        ));
        assert!(!rejects(
            HiZMode::Max,
            CompareFunction::Less,
            0.5,
            0.49,
            0.9,
            id
        ));
        assert!(rejects(
            HiZMode::Min,
            CompareFunction::Greater,
            0.5,
            0.1,
            0.5,
            id
        ));
        assert!(!rejects(
            HiZMode::Cleared,
            CompareFunction::Less,
            0.0,
            0.5,
            0.5,
            id
        ));
    }

    proptest! {
        #[test]
        fn depth_runs_fold_as_one_depth_at_a_time(
            depths in prop::collection::vec(
                prop_oneof![
                    prop::sample::select(vec![
                        0.0f32, -0.0, 1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-40,
                    ]),
                    any::<u32>().prop_map(f32::from_bits),
                    0.0f32..=1.0,
                ],
                0..80,
            ),
            max in any::<bool>(),
            init in prop_oneof![Just(None), (0.0f32..=1.0).prop_map(Some)],
        ) {
            // The fold's own start (−∞ for maxima, +∞ for minima) or an old bound.
            let init = init.unwrap_or(if max { f32::NEG_INFINITY } else { f32::INFINITY });
            let bytes: Vec<u8> = depths.iter().flat_map(|z| z.to_le_bytes()).collect();
            let one_by_one = depths
                .iter()
                .fold(init, |b, &z| if max { b.max(z) } else { b.min(z) });
            let folded = fold_depths(max, init, &bytes);
            prop_assert!(!folded.is_nan());
            prop_assert_eq!(folded, one_by_one);
        }
    }
}
