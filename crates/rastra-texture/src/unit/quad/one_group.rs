//! The quad path's commonest quad (T4 steps 3–6, the [`super`] passes) in AVX2: at most two
//! probes a level, so each level's slots — probe k of lane l, slot 4k + l — are one group of
//! eight, one 256-bit vector per value. Its footprints, box, line grid, codes and line bits
//! stay in registers from the first pass to the filter, where the general passes keep them
//! in the slot arrays between loops; the filter takes two slots to a register and adds each
//! slot's sum to its lane's result as it is made. The same operations in the same order as
//! the general passes ([`short_axis`], [`LevelSlots::footprints`], [`LevelSlots::grid`],
//! [`LevelSlots::filter`], the lane sums), so the same accesses, statistics and bits.
//! A quad of one probe on two levels (trilinear, or an isotropic footprint) fills one group
//! with both levels, four slots each (`two_levels_avx2`): one footprint pass and one filter
//! loop for the quad instead of one a level. A quad of more probes takes the general
//! passes, its first (the footprints) in AVX2 here too (`footprints_avx2`).

use std::arch::x86_64::*;

use super::*;

/// A quad for the AVX2 passes: its levels (`count` of them) with their sizes, the lanes'
/// positions (per axis, lane by lane), the probes' axis and offsets along it (`row`, probe
/// by probe), the texel offset and address modes, the lanes that want results, the probes
/// and each level's weight per probe.
pub(super) struct OneGroup<'p, 't> {
    pub surfaces: &'p [Surface<'t>; 2],
    pub sizes: [[i32; 2]; 2],
    pub count: usize,
    pub c0: [[f32; 4]; 2],
    pub axis: [f32; 2],
    pub row: &'p [f32; TABLED_PROBES],
    pub offset: [i32; 2],
    pub modes: [AddressMode; 2],
    pub active: u8,
    pub n: usize,
    pub weights: [f32; 2],
}

/// One axis of eight slots' footprints: the two texels, the fraction and which slots are
/// the short case.
struct Axis {
    first: __m256i,
    second: __m256i,
    frac: __m256,
    taken: __m256i,
}

/// The three passes for `q`: the four results, or `None` (nothing fetched, nothing
/// counted) when a used slot's footprint is not the short case.
///
/// # Safety
/// The CPU must have AVX2 and FMA ([`crate::cpu::wide`]).
#[target_feature(enable = "avx2,fma,popcnt,bmi1,bmi2,lzcnt")]
#[inline(never)]
pub(super) unsafe fn one_group_avx2<const FINITE: bool>(
    cache: &mut TexelCache,
    slots: &mut QuadSlots,
    q: &OneGroup,
) -> Option<[[f32; 4]; 4]> {
    let (n, count, active) = (q.n.clamp(1, 2), q.count.clamp(1, 2), q.active);
    if (n, count) == (1, 2) {
        // SAFETY: as this function's.
        if let Some(result) = unsafe { two_levels_avx2::<FINITE>(cache, slots, q) } {
            return result;
        }
    }
    let used = used_slots(active, 0, n);
    let on = slot_mask_vector(used);
    // Pass 1: every level's footprints before any fetch (a refused quad fetches nothing).
    let tk = group_offsets(q, 0);
    let mut axes: [[Option<Axis>; 2]; 2] = Default::default();
    let mut taken = on;
    for (j, level) in axes.iter_mut().enumerate().take(count) {
        for (a, out) in level.iter_mut().enumerate() {
            let axis = group_axis8::<false>(q, tk, [j, j], a);
            taken = _mm256_and_si256(taken, axis.taken);
            *out = Some(axis);
        }
    }
    // (A used slot not taken: its bit of `on` is set, of `taken` clear.)
    if _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_xor_si256(taken, on))) != 0 {
        return None;
    }
    cache.count_2x2_requests((active.count_ones() as usize * count * n) as u64);
    let staged = &mut slots.staged;
    size_staging(staged, cache.line_texels());
    // Passes 2 and 3, level by level: each slot's weighted sum of its four taps, two
    // slots to a register (slot 2p in the low half, 2p + 1 in the high: pair p holds lanes
    // 0 and 1 of a probe when p is even, 2 and 3 when odd), added to its lanes' sums as it
    // is made — in the per-lane path's order (level, then probe) for each lane.
    let single = count == 1 && n == 1;
    // (Pairs of slots of the level's probes.)
    let pairs = 2 * n;
    let mut sums = [_mm256_setzero_ps(); 2];
    let mut firsts = [_mm256_setzero_ps(); 2];
    for (j, axes) in axes.iter().enumerate().take(count) {
        let (Some(x), Some(y)) = (&axes[0], &axes[1]) else {
            continue;
        };
        let w = tap_weights(x, y);
        let weight = _mm256_set1_ps(q.weights[j]);
        let mut add = |p: usize, value: __m256| {
            if single {
                firsts[p] = value;
            } else {
                sums[p % 2] = _mm256_add_ps(sums[p % 2], _mm256_mul_ps(weight, value));
            }
        };
        let surface = &q.surfaces[j];
        // (The codes in the slots' memory: a local array was copied word by word.)
        let codes = &mut slots.levels[j].code;
        match grid8(x, y, on, surface, staged.len(), codes) {
            Some(grid) => {
                cache.access_grid(surface, &grid, staged);
                let base = staged.as_ptr();
                // Pair p's weighted sums.
                // SAFETY: `grid8` masks every code with the staging buffer's length (a
                // power of two) less one, times a texel's 16 bytes.
                let pair = |p: usize| unsafe { pair_sum::<FINITE>(base, codes, &w, p) };
                // (Loops of a fixed length, unrolled.)
                if n == 2 {
                    for p in 0..4 {
                        add(p, pair(p));
                    }
                } else {
                    for p in 0..2 {
                        add(p, pair(p));
                    }
                }
            }
            None => {
                // Past the grid: the general passes' slot-by-slot fetch, from the slots.
                let l = &mut slots.levels[j];
                let store = |out: &mut [u32; SLOTS], v: __m256i| {
                    // SAFETY: the slot arrays hold at least a group.
                    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) }
                };
                store(&mut l.tx[0], x.first);
                store(&mut l.tx[1], x.second);
                store(&mut l.ty[0], y.first);
                store(&mut l.ty[1], y.second);
                for (t, w) in w.iter().enumerate() {
                    // SAFETY: the slot arrays hold at least a group.
                    unsafe { _mm256_storeu_ps(l.w[t].as_mut_ptr(), *w) };
                }
                l.fetch_each::<FINITE>(cache, surface, n, active);
                for p in 0..pairs {
                    // SAFETY: slots 2p and 2p + 1, eight floats.
                    add(p, unsafe { _mm256_loadu_ps(l.v[2 * p..].as_ptr().cast()) });
                }
            }
        }
    }
    // Pair 0 holds lanes 0 and 1, pair 1 lanes 2 and 3 (one probe on one level is a
    // lane's whole result as it is, not 1 × it added to 0).
    Some(lane_results(if single { firsts } else { sums }, active))
}

/// The four lanes' results from a group's sums (pair 0's: lanes 0 and 1, pair 1's: lanes 2
/// and 3), zero for the lanes not in `active`.
#[target_feature(enable = "avx")]
#[inline]
fn lane_results(sums: [__m256; 2], active: u8) -> [[f32; 4]; 4] {
    let mut all = [[0.0f32; 4]; 4];
    // SAFETY: sixteen floats.
    unsafe {
        let all = all.as_mut_ptr().cast::<f32>();
        _mm256_storeu_ps(all, sums[0]);
        _mm256_storeu_ps(all.add(8), sums[1]);
    }
    let mut out = [[0.0f32; 4]; 4];
    for (lane, result) in out.iter_mut().enumerate() {
        if active >> lane & 1 != 0 {
            *result = all[lane];
        }
    }
    out
}

/// [`one_group_avx2`] for a quad of one probe on two levels (a trilinear footprint): both
/// levels in one group of eight slots — lane l on the first level in slot l, on the second
/// in slot 4 + l — so one pass makes both levels' footprints and one filter loop both
/// levels' sums. Each level keeps its own line grid and staging buffer, its lines accessed
/// after the other level's grid is made and before any filtering: the same accesses in the
/// same order as level by level (filtering touches no cache state), the same operations for
/// every slot, the same sums in the same order (level, then lane pair). `None` when a
/// level's box spans more than [`GRID_LINES`] lines or the levels' lines differ in shape
/// (nothing fetched or counted: the level-by-level passes take the quad); else
/// [`one_group_avx2`]'s result.
///
/// # Safety
/// The CPU must have AVX2 and FMA ([`crate::cpu::wide`]).
#[target_feature(enable = "avx2,fma,popcnt,bmi1,bmi2,lzcnt")]
#[inline(never)]
unsafe fn two_levels_avx2<const FINITE: bool>(
    cache: &mut TexelCache,
    slots: &mut QuadSlots,
    q: &OneGroup,
) -> Option<Option<[[f32; 4]; 4]>> {
    let lanes = q.active as u32 & 0xf;
    let (first, second) = (slot_mask_vector(lanes), slot_mask_vector(lanes << 4));
    let on = _mm256_or_si256(first, second);
    // Every slot at probe 0's offset (a level's group would put probe 1's in slots 4–7).
    let tk = _mm256_set1_ps(q.row[0]);
    let (x, y) = (
        group_axis8::<true>(q, tk, [0, 1], 0),
        group_axis8::<true>(q, tk, [0, 1], 1),
    );
    let taken = _mm256_and_si256(on, _mm256_and_si256(x.taken, y.taken));
    if _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_xor_si256(taken, on))) != 0 {
        return Some(None);
    }
    for staged in [&mut slots.staged, &mut slots.staged_second] {
        size_staging(staged, cache.line_texels());
    }
    let (staged, staged_second) = (&mut slots.staged, &mut slots.staged_second);
    // (The codes of both levels are masked to one length: the buffers'.)
    debug_assert_eq!(staged.len(), staged_second.len());
    let codes = &mut slots.levels[0].code;
    let [grid0, grid1] = grid8_levels(&x, &y, on, q.surfaces, staged.len(), codes)?;
    cache.count_2x2_requests(2 * lanes.count_ones() as u64);
    cache.access_grid(&q.surfaces[0], &grid0, staged);
    cache.access_grid(&q.surfaces[1], &grid1, staged_second);
    let w = tap_weights(&x, &y);
    // Pairs 0 and 1: lanes 0–1 and 2–3 on the first level; 2 and 3 the same on the second.
    let mut sums = [_mm256_setzero_ps(); 2];
    for (p, base) in [
        staged.as_ptr(),
        staged.as_ptr(),
        staged_second.as_ptr(),
        staged_second.as_ptr(),
    ]
    .into_iter()
    .enumerate()
    {
        // SAFETY: `grid8_levels` masks every code of a level with its staging buffer's
        // length (a power of two) less one, times a texel's 16 bytes.
        let value = unsafe { pair_sum::<FINITE>(base, codes, &w, p) };
        let weight = _mm256_set1_ps(q.weights[p / 2]);
        sums[p % 2] = _mm256_add_ps(sums[p % 2], _mm256_mul_ps(weight, value));
    }
    Some(Some(lane_results(sums, q.active)))
}

/// The weighted sums of pair `p` of a group — slot 2p in the low half, 2p + 1 in the high —
/// each slot's four taps read from the staging buffer at `base` at their `codes` and
/// multiplied by their weights `w` (tap t of slot k: `codes[t][k]`, `w[t]` lane k), then
/// added tap by tap with `weighted_sum`'s operations (an 8-bit unorm source's from its first
/// term; others masking taps of weight zero).
///
/// # Safety
/// Every code of the pair's slots is a byte offset of a texel inside the buffer at `base`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn pair_sum<const FINITE: bool>(
    base: *const [u32; 4],
    codes: &[[u32; SLOTS]; 4],
    w: &[__m256; 4],
    p: usize,
) -> __m256 {
    // (Each tap's weights of the pair's two slots, four copies each.)
    let spread = _mm256_setr_epi32(
        2 * p as i32,
        2 * p as i32,
        2 * p as i32,
        2 * p as i32,
        2 * p as i32 + 1,
        2 * p as i32 + 1,
        2 * p as i32 + 1,
        2 * p as i32 + 1,
    );
    let mut sum = _mm256_setzero_ps();
    for (t, w) in w.iter().enumerate() {
        let [lo, hi] = [codes[t][2 * p], codes[t][2 * p + 1]];
        // SAFETY: the caller's promise.
        let texels = unsafe {
            _mm256_loadu2_m128(
                base.byte_add(hi as usize).cast(),
                base.byte_add(lo as usize).cast(),
            )
        };
        let wt = _mm256_permutevar8x32_ps(*w, spread);
        let term = _mm256_mul_ps(wt, texels);
        sum = if FINITE {
            if t == 0 {
                term
            } else {
                _mm256_add_ps(sum, term)
            }
        } else {
            let live = _mm256_cmp_ps::<_CMP_NEQ_UQ>(wt, _mm256_setzero_ps());
            _mm256_add_ps(sum, _mm256_and_ps(term, live))
        };
    }
    sum
}

/// Pass 1 of the general passes for a quad of any number of probes (at most
/// [`TABLED_PROBES`]): [`LevelSlots::footprints`] for every group of every level, the
/// footprints and weights stored to the slot arrays and the used slots' texels added to
/// `boxes`. Returns whether a used slot's footprint is not the short case.
///
/// # Safety
/// The CPU must have AVX2 and FMA ([`crate::cpu::wide`]).
#[target_feature(enable = "avx2,fma")]
#[inline(never)]
pub(super) unsafe fn footprints_avx2(
    slots: &mut QuadSlots,
    q: &OneGroup,
    boxes: &mut [TexelBox; 2],
) -> bool {
    let (n, count) = (q.n.clamp(1, TABLED_PROBES), q.count.clamp(1, 2));
    let groups = (4 * n).div_ceil(GROUP);
    let mut refused = _mm256_setzero_si256();
    // (Indexed: the zipped iterators of levels and boxes kept more values on the stack.)
    #[allow(clippy::needless_range_loop)]
    for j in 0..count {
        let (l, bounds) = (&mut slots.levels[j], &mut boxes[j]);
        // SAFETY: eight words each.
        let load = |v: &[u32; GROUP]| unsafe { _mm256_loadu_si256(v.as_ptr().cast()) };
        let (mut lo_x, mut lo_y) = (load(&bounds.lo[0]), load(&bounds.lo[1]));
        let (mut hi_x, mut hi_y) = (load(&bounds.hi[0]), load(&bounds.hi[1]));
        for g in 0..groups {
            let base = g * GROUP;
            let on = slot_mask_vector(used_slots(q.active, base, n));
            let tk = group_offsets(q, g);
            let (x, y) = (
                group_axis8::<false>(q, tk, [j, j], 0),
                group_axis8::<false>(q, tk, [j, j], 1),
            );
            refused = _mm256_or_si256(
                refused,
                _mm256_andnot_si256(_mm256_and_si256(x.taken, y.taken), on),
            );
            (lo_x, hi_x) = widen_box(lo_x, hi_x, &x, on);
            (lo_y, hi_y) = widen_box(lo_y, hi_y, &y, on);
            let store = |out: &mut [u32; SLOTS], v: __m256i| {
                // SAFETY: eight words from a group's start inside the slot arrays.
                unsafe { _mm256_storeu_si256(out[base..base + GROUP].as_mut_ptr().cast(), v) }
            };
            store(&mut l.tx[0], x.first);
            store(&mut l.tx[1], x.second);
            store(&mut l.ty[0], y.first);
            store(&mut l.ty[1], y.second);
            for (t, w) in tap_weights(&x, &y).into_iter().enumerate() {
                // SAFETY: as above.
                unsafe { _mm256_storeu_ps(l.w[t][base..base + GROUP].as_mut_ptr(), w) };
            }
        }
        let store = |out: &mut [u32; GROUP], v: __m256i| {
            // SAFETY: eight words.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) }
        };
        store(&mut bounds.lo[0], lo_x);
        store(&mut bounds.lo[1], lo_y);
        store(&mut bounds.hi[0], hi_x);
        store(&mut bounds.hi[1], hi_y);
    }
    _mm256_movemask_ps(_mm256_castsi256_ps(refused)) != 0
}

/// The box `lo`..`hi` (one axis, slot by slot of a group) widened to the texels of `axis`
/// in the used slots (`on`).
#[target_feature(enable = "avx2")]
#[inline]
fn widen_box(lo: __m256i, hi: __m256i, axis: &Axis, on: __m256i) -> (__m256i, __m256i) {
    let (least, most) = slot_bounds(axis, on);
    (_mm256_min_epu32(lo, least), _mm256_max_epu32(hi, most))
}

/// The probe offsets of group `g`'s eight slots: slot k's is probe 2g + k / 4's.
#[target_feature(enable = "avx2")]
#[inline]
fn group_offsets(q: &OneGroup, g: usize) -> __m256 {
    let probe = |k: usize| q.row[k.min(TABLED_PROBES - 1)];
    _mm256_set_m128(_mm_set1_ps(probe(2 * g + 1)), _mm_set1_ps(probe(2 * g)))
}

/// Axis `a` of a group's eight slots whose probe offsets are `tk` ([`group_offsets`]), slots
/// 0–3 on level `levels[0]` and 4–7 on `levels[1]` when `SPLIT`, else all on `levels[0]`
/// (a group of two probes): slot k's position is lane k % 4's.
#[target_feature(enable = "avx2")]
#[inline]
fn group_axis8<const SPLIT: bool>(q: &OneGroup, tk: __m256, levels: [usize; 2], a: usize) -> Axis {
    // SAFETY: four floats.
    let c = unsafe { _mm_loadu_ps(q.c0[a].as_ptr()) };
    let c = _mm256_set_m128(c, c);
    let x = _mm256_add_ps(c, _mm256_mul_ps(tk, _mm256_set1_ps(q.axis[a])));
    let size = |j: usize| q.sizes[j.min(1)][a];
    short_axis8::<SPLIT>(x, levels.map(size), q.offset[a], q.modes[a])
}

/// `LevelSlots::footprints`' weights of eight slots: (1 − f, f) per axis, x fastest.
#[target_feature(enable = "avx2")]
#[inline]
fn tap_weights(x: &Axis, y: &Axis) -> [__m256; 4] {
    let one = _mm256_set1_ps(1.0);
    let (wx0, wy0) = (_mm256_sub_ps(one, x.frac), _mm256_sub_ps(one, y.frac));
    [
        _mm256_mul_ps(wx0, wy0),
        _mm256_mul_ps(x.frac, wy0),
        _mm256_mul_ps(wx0, y.frac),
        _mm256_mul_ps(x.frac, y.frac),
    ]
}

/// `used` (bit k: slot k) as a vector of lane masks: all ones for a used slot.
#[target_feature(enable = "avx2")]
#[inline]
fn slot_mask_vector(used: u32) -> __m256i {
    let bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(used as i32), bits), bits)
}

/// [`short_axis`] for eight texel coordinates `x` (normalised) on an axis of `sizes[0]`
/// texels in slots 0–3 and `sizes[1]` in slots 4–7 when `SPLIT` (two levels of one group),
/// else of `sizes[0]` in all (a group of one level), with texel offset `offset` and address
/// mode `mode`: the same operations lane by lane.
#[target_feature(enable = "avx2")]
#[inline]
fn short_axis8<const SPLIT: bool>(
    x: __m256,
    sizes: [i32; 2],
    offset: i32,
    mode: AddressMode,
) -> Axis {
    // (One size: the halves' values are one value, and each vector a broadcast.)
    let sizes = if SPLIT { sizes } else { [sizes[0]; 2] };
    let (repeats, clamps) = (
        mode == AddressMode::Repeat,
        mode == AddressMode::ClampToEdge,
    );
    // Per half: the last texel, whether coordinates wrap by a mask, the clamp's bounds.
    let last = sizes.map(|size| size - 1);
    let wraps = sizes.map(|size| repeats & ((size & (size - 1)) == 0));
    let halves = |v: [i32; 2]| {
        if SPLIT {
            _mm256_set_m128i(_mm_set1_epi32(v[1]), _mm_set1_epi32(v[0]))
        } else {
            _mm256_set1_epi32(v[0])
        }
    };
    let bits = halves([0, 1].map(|h| if wraps[h] { last[h] } else { -1 }));
    let (lo, hi) = if clamps {
        (_mm256_setzero_si256(), halves(last))
    } else {
        (_mm256_set1_epi32(i32::MIN), _mm256_set1_epi32(i32::MAX))
    };
    let any = wraps.map(|w| w | clamps);
    let sign = _mm256_set1_ps(-0.0);
    let size = if SPLIT {
        _mm256_set_m128(_mm_set1_ps(sizes[1] as f32), _mm_set1_ps(sizes[0] as f32))
    } else {
        _mm256_set1_ps(sizes[0] as f32)
    };
    let u = _mm256_sub_ps(_mm256_mul_ps(x, size), _mm256_set1_ps(0.5));
    // |u| < 2²³ (false for NaN); elsewhere u is taken as 0, so the conversion is in range.
    let fast = _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_andnot_ps(sign, u), _mm256_set1_ps(8_388_608.0));
    let u = _mm256_and_ps(u, fast);
    let t = _mm256_cvttps_epi32(u);
    let tf = _mm256_cvtepi32_ps(t);
    // `down` as a mask (all ones where the truncation rounded up).
    let down = _mm256_cmp_ps::<_CMP_GT_OQ>(tf, u);
    let fl = _mm256_sub_ps(tf, _mm256_and_ps(down, _mm256_set1_ps(1.0)));
    let fl = _mm256_or_ps(_mm256_andnot_ps(sign, fl), _mm256_and_ps(sign, u));
    let i0 = _mm256_add_epi32(
        _mm256_add_epi32(t, _mm256_castps_si256(down)),
        _mm256_set1_epi32(offset),
    );
    let fast = _mm256_castps_si256(fast);
    // 0 ≤ i0 < last, where neither a wrap nor a clamp keeps the texels inside.
    let inside = || {
        _mm256_andnot_si256(
            _mm256_cmpgt_epi32(_mm256_setzero_si256(), i0),
            _mm256_cmpgt_epi32(halves(last), i0),
        )
    };
    let taken = if any[0] & any[1] {
        fast
    } else if !(any[0] | any[1]) {
        _mm256_and_si256(fast, inside())
    } else {
        let kept = halves(any.map(|a| if a { -1 } else { 0 }));
        _mm256_and_si256(fast, _mm256_or_si256(inside(), kept))
    };
    let texel = |i: __m256i| _mm256_min_epi32(_mm256_max_epi32(_mm256_and_si256(i, bits), lo), hi);
    Axis {
        first: texel(i0),
        second: texel(_mm256_add_epi32(i0, _mm256_set1_epi32(1))),
        frac: _mm256_sub_ps(u, fl),
        taken,
    }
}

/// [`LevelSlots::grid`] for one group: the level's line grid on `surface` around the used
/// slots' (`on`) texels with the lines their taps touch marked, and each tap's code (tap t
/// of slot k to `codes[t][k]`); `None` when the box spans more than [`GRID_LINES`] lines.
#[target_feature(enable = "avx2")]
#[inline]
fn grid8(
    x: &Axis,
    y: &Axis,
    on: __m256i,
    surface: &Surface,
    staged: usize,
    codes: &mut [[u32; SLOTS]; 4],
) -> Option<LineGrid> {
    let [sx, sy] = surface.line_shifts();
    // The box: the used slots' least and greatest texels per axis.
    let least = |a: &Axis| reduce::<false>(slot_bounds(a, on).0);
    let most = |a: &Axis| reduce::<true>(slot_bounds(a, on).1);
    let (x0, y0) = (least(x) >> sx, least(y) >> sy);
    let (w, h) = (
        (most(x) >> sx).wrapping_sub(x0).wrapping_add(1),
        (most(y) >> sy).wrapping_sub(y0).wrapping_add(1),
    );
    if w == 0 || h == 0 || w as u64 * h as u64 > GRID_LINES as u64 {
        return None;
    }
    let [x0v, y0v, wv] = [x0, y0, w].map(|v| _mm256_set1_epi32(v as i32));
    let (lo, hi) = codes_and_marks(x, y, on, [sx, sy], [x0v, y0v, wv], staged, codes);
    let m = _mm_or_si128(lo, hi);
    let mask = (_mm_cvtsi128_si64(m) | _mm_extract_epi64::<1>(m)) as u64;
    Some(LineGrid { x0, y0, w, h, mask })
}

/// [`grid8`] for a group of two levels ([`two_levels_avx2`]): the first level's grid on
/// `surfaces[0]` around slots 0–3 of `on`, the second's on `surfaces[1]` around slots 4–7,
/// each tap's code in its level's grid (both levels' staging buffers `staged` texels);
/// `None` when either box spans more than [`GRID_LINES`] lines.
#[target_feature(enable = "avx2")]
#[inline]
fn grid8_levels(
    x: &Axis,
    y: &Axis,
    on: __m256i,
    surfaces: &[Surface; 2],
    staged: usize,
    codes: &mut [[u32; SLOTS]; 4],
) -> Option<[LineGrid; 2]> {
    // (A texture's levels share the line shape.)
    let [sx, sy] = surfaces[0].line_shifts();
    if surfaces[1].line_shifts() != [sx, sy] {
        return None;
    }
    // Each half's least and greatest texel per axis, in every slot of the half.
    let least = |a: &Axis| reduce_halves::<false>(slot_bounds(a, on).0);
    let most = |a: &Axis| reduce_halves::<true>(slot_bounds(a, on).1);
    let (shift_x, shift_y) = (_mm_cvtsi32_si128(sx as i32), _mm_cvtsi32_si128(sy as i32));
    let one = _mm256_set1_epi32(1);
    let (x0v, y0v) = (
        _mm256_srl_epi32(least(x), shift_x),
        _mm256_srl_epi32(least(y), shift_y),
    );
    let wv = _mm256_add_epi32(
        _mm256_sub_epi32(_mm256_srl_epi32(most(x), shift_x), x0v),
        one,
    );
    let hv = _mm256_add_epi32(
        _mm256_sub_epi32(_mm256_srl_epi32(most(y), shift_y), y0v),
        one,
    );
    let half = |v: __m256i| {
        [
            _mm256_extract_epi32::<0>(v) as u32,
            _mm256_extract_epi32::<4>(v) as u32,
        ]
    };
    let ([x0, y0], [w, h]) = ([half(x0v), half(y0v)], [half(wv), half(hv)]);
    for l in 0..2 {
        if w[l] == 0 || h[l] == 0 || w[l] as u64 * h[l] as u64 > GRID_LINES as u64 {
            return None;
        }
    }
    let (lo, hi) = codes_and_marks(x, y, on, [sx, sy], [x0v, y0v, wv], staged, codes);
    let mask = |m: __m128i| (_mm_cvtsi128_si64(m) | _mm_extract_epi64::<1>(m)) as u64;
    let [m0, m1] = [mask(lo), mask(hi)];
    Some([0, 1].map(|l| LineGrid {
        x0: x0[l],
        y0: y0[l],
        w: w[l],
        h: h[l],
        mask: [m0, m1][l],
    }))
}

/// Each slot's least and greatest texel on axis `a`, the slots not `on` out of the way:
/// the least as `u32::MAX`, the greatest as 0.
#[target_feature(enable = "avx2")]
#[inline]
fn slot_bounds(a: &Axis, on: __m256i) -> (__m256i, __m256i) {
    let off = _mm256_xor_si256(on, _mm256_set1_epi32(-1));
    (
        _mm256_min_epu32(
            _mm256_or_si256(a.first, off),
            _mm256_or_si256(a.second, off),
        ),
        _mm256_max_epu32(
            _mm256_and_si256(a.first, on),
            _mm256_and_si256(a.second, on),
        ),
    )
}

/// The taps' codes and line bits of a group whose slots' grids (one per slot: per slot
/// `x0`, `y0`, `w` — the grid's first line column and row and its width in lines) hold
/// their footprints, on lines of `shifts` sides: each used (`on`) slot's tap t's code to
/// `codes[t][k]` (its grid index times a line's texels plus its place in the line, times
/// a texel's 16 bytes, masked to `staged` texels, a power of two; 0 for a slot not used),
/// and the used slots' taps' grid indices as bits of 1 — slots 0–3's ORed into the first
/// vector (two 64-bit masks), 4–7's into the second.
#[target_feature(enable = "avx2")]
#[inline]
fn codes_and_marks(
    x: &Axis,
    y: &Axis,
    on: __m256i,
    [sx, sy]: [u32; 2],
    [x0, y0, w]: [__m256i; 3],
    staged: usize,
    codes: &mut [[u32; SLOTS]; 4],
) -> (__m128i, __m128i) {
    assert!(staged.is_power_of_two() && staged <= 1 << 27);
    let bytes = (staged as u32 - 1) << 4;
    let (shift_x, shift_y) = (_mm_cvtsi32_si128(sx as i32), _mm_cvtsi32_si128(sy as i32));
    let (mx, my) = (
        _mm256_set1_epi32(((1u32 << sx) - 1) as i32),
        _mm256_set1_epi32(((1u32 << sy) - 1) as i32),
    );
    let column = |t: __m256i| _mm256_sub_epi32(_mm256_srl_epi32(t, shift_x), x0);
    let row =
        |t: __m256i| _mm256_mullo_epi32(_mm256_sub_epi32(_mm256_srl_epi32(t, shift_y), y0), w);
    let (c0, c1) = (column(x.first), column(x.second));
    let (r0, r1) = (row(y.first), row(y.second));
    let (px0, px1) = (
        _mm256_and_si256(x.first, mx),
        _mm256_and_si256(x.second, mx),
    );
    let (py0, py1) = (
        _mm256_sll_epi32(_mm256_and_si256(y.first, my), shift_x),
        _mm256_sll_epi32(_mm256_and_si256(y.second, my), shift_x),
    );
    // Taps x fastest: (r0, c0), (r0, c1), (r1, c0), (r1, c1).
    let g = [
        _mm256_add_epi32(r0, c0),
        _mm256_add_epi32(r0, c1),
        _mm256_add_epi32(r1, c0),
        _mm256_add_epi32(r1, c1),
    ];
    let places = [
        _mm256_add_epi32(py0, px0),
        _mm256_add_epi32(py0, px1),
        _mm256_add_epi32(py1, px0),
        _mm256_add_epi32(py1, px1),
    ];
    let shift = _mm_cvtsi32_si128((sx + sy) as i32);
    let keep = _mm256_and_si256(_mm256_set1_epi32(bytes as i32), on);
    // The lines' bits, four slots to a 64-bit vector: a used slot's taps' grid indices
    // (below 64) as shifts of 1.
    let (one, sixty_three) = (_mm256_set1_epi64x(1), _mm256_set1_epi32(63));
    let (on_lo, on_hi) = (
        _mm256_cvtepi32_epi64(_mm256_castsi256_si128(on)),
        _mm256_cvtepi32_epi64(_mm256_extracti128_si256::<1>(on)),
    );
    let (mut marks_lo, mut marks_hi) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for t in 0..4 {
        let code =
            _mm256_slli_epi32::<4>(_mm256_or_si256(_mm256_sll_epi32(g[t], shift), places[t]));
        // SAFETY: `codes[t]` holds at least eight words.
        unsafe { _mm256_storeu_si256(codes[t].as_mut_ptr().cast(), _mm256_and_si256(code, keep)) };
        let line = _mm256_and_si256(g[t], sixty_three);
        let lo = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(line)));
        let hi = _mm256_sllv_epi64(
            one,
            _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(line)),
        );
        marks_lo = _mm256_or_si256(marks_lo, _mm256_and_si256(lo, on_lo));
        marks_hi = _mm256_or_si256(marks_hi, _mm256_and_si256(hi, on_hi));
    }
    let fold =
        |m: __m256i| _mm_or_si128(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
    (fold(marks_lo), fold(marks_hi))
}

/// The least (`MAX` false) or greatest (`MAX` true) of each half's four unsigned words, in
/// every word of the half.
#[target_feature(enable = "avx2")]
#[inline]
fn reduce_halves<const MAX: bool>(v: __m256i) -> __m256i {
    let pick = |a, b| {
        if MAX {
            _mm256_max_epu32(a, b)
        } else {
            _mm256_min_epu32(a, b)
        }
    };
    let m = pick(v, _mm256_shuffle_epi32::<0b01_00_11_10>(v));
    pick(m, _mm256_shuffle_epi32::<0b10_11_00_01>(m))
}

/// The least (`MAX` false) or greatest (`MAX` true) of eight unsigned words.
#[target_feature(enable = "avx2")]
#[inline]
fn reduce<const MAX: bool>(v: __m256i) -> u32 {
    let pick = |a, b| {
        if MAX {
            _mm_max_epu32(a, b)
        } else {
            _mm_min_epu32(a, b)
        }
    };
    let m = pick(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
    let m = pick(m, _mm_shuffle_epi32::<0b01_00_11_10>(m));
    let m = pick(m, _mm_shuffle_epi32::<0b10_11_00_01>(m));
    _mm_cvtsi128_si32(m) as u32
}
