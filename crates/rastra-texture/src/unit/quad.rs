//! The texture unit's quad path (T4 steps 3–6 for a whole quad at once). The commonest
//! request — every lane filtering bilinearly on 2D levels (mipmapped or not, anisotropic or
//! not), no depth compare — whose lanes agree on LOD, probe count, axis and layer is taken in
//! passes over the whole quad instead of lane by lane. Implicit LOD gives a quad's lanes one
//! LOD ([`TextureUnit::setup`]'s coarse gradients), so its lanes disagree only through a
//! per-lane bias or layer, or explicit per-lane LODs and gradients; such quads take the
//! per-lane path. A run of quads with implicit LOD (a fragment shader's `textureSample`)
//! finds each quad's one LOD once, not lane by lane, and needs no agreement check but the
//! layer's ([`sample_implicit_run`]). On a CPU with AVX2, a quad of at most two probes a
//! level — one group of slots a level, the commonest quad — takes the three passes in one
//! function of its own that keeps each level's values in registers (`one_group`); other
//! quads find their footprints there too, eight slots to a vector.
//!
//! 1. **Footprints.** For each level the quad samples (one, or two for trilinear), every
//!    *slot* — probe k of lane l, slot 4k + l — gets its bilinear footprint: its two texel
//!    columns and rows and four weights, eight slots (two probes of the four lanes) at a
//!    time, and the level's box of texels around them all.
//! 2. **Tags and data.** Level by level, the quad's taps are coalesced into the distinct
//!    texel cache lines they touch, as a hardware texture unit's tag stage does for a quad:
//!    the lines inside the box form a grid of at most [`GRID_LINES`], each tap gets its
//!    line's place in the grid and its place in the line (its *code*), and each touched
//!    line is accessed once and read out, as it is accessed, to a staging buffer at its
//!    grid place ([`TexelCache::access_grid`]). A level whose box spans more lines (a wrap
//!    across a repeating level, a footprint spread wide) is fetched slot by slot instead,
//!    each footprint's lines accessed as the per-lane path accesses them.
//! 3. **Filter.** Each slot's four taps read from the staging buffer at their codes and
//!    weighted, kept per slot; then each lane's sum of its slots in the per-lane path's
//!    order, the four lanes' sums side by side.
//!
//! The values are the per-lane path's arithmetic in the same order (the same bits — a NaN
//! where it gives a NaN, though not always the same NaN: which of two NaNs a sum keeps
//! depends on how the compiler orders its operands; tested against it). The cache sees
//! fewer accesses: a line many taps of the quad share is accessed once, not once per
//! footprint. A slot whose footprint is not the short case ([`short_axis`]: coordinates
//! past 2²³, NaN, a footprint leaving the level in a mode without a short form) sends the
//! whole quad back to the per-lane path before anything is fetched.

use super::*;

#[cfg(target_arch = "x86_64")]
mod one_group;
#[cfg(target_arch = "x86_64")]
use one_group::OneGroup;

/// Slots one level of a quad can take: four lanes, up to [`TABLED_PROBES`] probes each.
const SLOTS: usize = 4 * TABLED_PROBES;

/// Slots found together (one AVX2 vector of 32-bit values): two probes of the four lanes.
const GROUP: usize = 8;

/// Per-slot footprints of one quad, per level it samples, kept by the unit between requests
/// (slots a request does not reach keep an earlier request's values, never used).
#[derive(Debug)]
pub(super) struct QuadSlots {
    levels: [LevelSlots; 2],
    /// The lines of the level being filtered, at their grid places
    /// ([`TexelCache::access_grid`]): [`GRID_LINES`] lines of the L1's size (a power of
    /// two), made by the first grid.
    staged: Vec<[u32; 4]>,
    /// The second level's lines when both levels of a quad of one probe share a group
    /// (the one-group pass's trilinear case), as `staged` holds the first's.
    staged_second: Vec<[u32; 4]>,
}

/// One level's slot footprints, arrays per field, so the footprint pass stores eight
/// slots' values at once.
#[derive(Debug)]
struct LevelSlots {
    /// Each slot's two texel columns, left and right.
    tx: [[u32; SLOTS]; 2],
    /// Each slot's two texel rows, top and bottom.
    ty: [[u32; SLOTS]; 2],
    /// The four taps' weights, x fastest.
    w: [[f32; SLOTS]; 4],
    /// Each tap's code (pass 2): where the staging buffer holds it, as a byte offset — its
    /// line's grid index times the texels of a line, plus its place in the line (row offset
    /// plus column), times a texel's 16 bytes.
    code: [[u32; SLOTS]; 4],
    /// Each slot's filtered value, the weighted sum of its four taps (pass 3).
    v: [[f32; 4]; SLOTS],
}

/// The box of texels the used slots of a level touch: least and greatest column and row,
/// kept per slot of a group (so the groups' passes only compare side by side) and joined
/// by [`TexelBox::bounds`].
#[derive(Clone, Copy, Debug)]
struct TexelBox {
    lo: [[u32; GROUP]; 2],
    hi: [[u32; GROUP]; 2],
}

impl TexelBox {
    /// No texel.
    const EMPTY: TexelBox = TexelBox {
        lo: [[u32::MAX; GROUP]; 2],
        hi: [[0; GROUP]; 2],
    };

    /// The least and greatest column, then row.
    #[inline(always)]
    fn bounds(&self) -> ([u32; 2], [u32; 2]) {
        let lo = self.lo.map(|a| a.into_iter().fold(u32::MAX, u32::min));
        let hi = self.hi.map(|a| a.into_iter().fold(0, u32::max));
        (lo, hi)
    }
}

impl QuadSlots {
    pub(super) fn new() -> Box<QuadSlots> {
        let level = || LevelSlots {
            tx: [[0; SLOTS]; 2],
            ty: [[0; SLOTS]; 2],
            w: [[0.0; SLOTS]; 4],
            code: [[0; SLOTS]; 4],
            v: [[0.0; 4]; SLOTS],
        };
        Box::new(QuadSlots {
            levels: [level(), level()],
            staged: Vec::new(),
            staged_second: Vec::new(),
        })
    }
}

/// The levels a quad samples, set up ([`quad_levels`]): kept across a run's quads, which
/// mostly sample the same levels as the quad before them, so a run sets each pair of
/// levels up once rather than once a quad.
struct LevelSetup<'t> {
    /// The levels (both the first when one is sampled), how many are sampled, the slice.
    key: ([u32; 2], usize, u32),
    surfaces: [Surface<'t>; 2],
    /// The sampled levels' sizes as the address stage takes them; `None` when one is 2³¹
    /// texels or more (the quad path refuses such a level).
    sizes: Option<[[i32; 2]; 2]>,
}

/// Sizes a staging buffer for [`GRID_LINES`] lines of `line_texels` texels (made by the
/// first grid that needs it; the L1's line is fixed, so only then).
#[inline(always)]
fn size_staging(staged: &mut Vec<[u32; 4]>, line_texels: usize) {
    if staged.len() != GRID_LINES * line_texels {
        *staged = vec![[0; 4]; GRID_LINES * line_texels];
    }
}

/// Whether a request takes the quad path: bilinear on both filters (so every footprint is,
/// whatever a lane's LOD), a 2D or 2D-array view, no compare.
#[inline(always)]
pub(super) fn quad_path_applies(view: &TextureView, sampler: &Sampler, compare: bool) -> bool {
    let d = sampler.desc();
    !compare
        && !view.is_cube()
        && view_dims(view) == 2
        && d.mag_filter == FilterMode::Linear
        && d.min_filter == FilterMode::Linear
}

/// The quad path: the four results, or `None` (before any texel is fetched) when the lanes
/// disagree or some footprint is not the short case. Only for requests
/// [`quad_path_applies`] to, with `lods` from [`TextureUnit::lods_of`]; `FINITE` as
/// [`weighted_sum`]'s. (Inlined into the sampling function: measured as a function of its
/// own, compiled for the baseline and for AVX2, it ran 0.2% more instructions on
/// textured_cubes.)
#[inline(always)]
pub(super) fn sample_quad<const FINITE: bool>(
    unit: &mut TextureUnit,
    view: &TextureView,
    sampler: &Sampler,
    quad: &Quad,
    at: &QuadAt,
) -> Option<[[f32; 4]; 4]> {
    // (Out of the unit while the quad is set up: level set-up needs the unit too.)
    let mut slots = unit.quad_slots.take().unwrap_or_else(QuadSlots::new);
    let out = quad_passes::<FINITE>(unit, &mut slots, view, sampler, quad, at);
    unit.quad_slots = Some(slots);
    out
}

/// [`sample_quad`]'s passes, with the unit's slots: the lanes' agreement, then
/// [`quad_levels`].
#[inline(always)]
fn quad_passes<const FINITE: bool>(
    unit: &mut TextureUnit,
    slots: &mut QuadSlots,
    view: &TextureView,
    sampler: &Sampler,
    quad: &Quad,
    at: &QuadAt,
) -> Option<[[f32; 4]; 4]> {
    let lods = at.lods;
    let active = quad.lanes & 0xf;
    if active == 0 {
        return None;
    }
    // Whether the lanes that want results agree with the first.
    let first = active.trailing_zeros() as usize;
    let lod = lods[first];
    let slice = lane_slice(view, quad.array_index[first]);
    let key = |d: &LaneLod| (d.lambda.to_bits(), d.probes, d.axis.map(f32::to_bits));
    for (lane, d) in lods.iter().enumerate() {
        if active >> lane & 1 != 0
            && (key(d) != key(&lod) || lane_slice(view, quad.array_index[lane]) != slice)
        {
            return None;
        }
    }
    quad_levels::<FINITE>(
        unit, slots, view, sampler, quad, at.src, at.source, lod, slice, &mut None,
    )
}

/// A run of quads sampled with implicit LOD and no depth reference, on a view and sampler
/// [`quad_path_applies`] to ([`TextureUnit::sample_run`]'s commonest request: a
/// `textureSample` in a fragment shader): each quad's one LOD (its coarse gradients give
/// every lane the same, [`flat_implicit_lods`] without a bias) found once, not per lane,
/// and the quad taken by [`quad_levels`] — or, when it refuses, by the lanes one by one
/// with that LOD. The same results as quad by quad through [`sample_quad_or_lanes`].
#[inline(always)]
pub(super) fn sample_implicit_run<const FINITE: bool>(
    unit: &mut TextureUnit,
    view: &TextureView,
    sampler: &Sampler,
    src: &Source,
    source: &Cell<Option<u32>>,
    quads: &[Quad],
    out: &mut [[[f32; 4]; 4]],
) {
    let size0 = view.level_size(0);
    // (A 2D view's lanes all read its base layer.)
    let flat = view.dimension == TextureViewDimension::D2;
    let mut slots = unit.quad_slots.take().unwrap_or_else(QuadSlots::new);
    let mut setup = None;
    // The quads' LODs, a chunk of quads at a time, before their passes.
    const CHUNK: usize = 16;
    let mut lods = [LaneLod::UNSAMPLED; CHUNK];
    for (k, (quad, result)) in quads.iter().zip(out.iter_mut()).enumerate() {
        if k % CHUNK == 0 {
            implicit_lods(
                &quads[k..quads.len().min(k + CHUNK)],
                size0,
                sampler,
                &mut lods,
            );
        }
        let active = quad.lanes & 0xf;
        if active == 0 {
            *result = [[0.0; 4]; 4];
            continue;
        }
        let lod = lods[k % CHUNK];
        let first = active.trailing_zeros() as usize;
        let slice = lane_slice(view, quad.array_index[first]);
        let agree = flat
            || (0..4)
                .all(|l| active >> l & 1 == 0 || lane_slice(view, quad.array_index[l]) == slice);
        if agree
            && let Some(v) = quad_levels::<FINITE>(
                unit, &mut slots, view, sampler, quad, src, source, lod, slice, &mut setup,
            )
        {
            *result = v;
            continue;
        }
        // Refused: lane by lane, the lanes that want results with the quad's LOD.
        let mut lods = [LaneLod::UNSAMPLED; 4];
        for (l, d) in lods.iter_mut().enumerate() {
            if active >> l & 1 != 0 {
                *d = lod;
            }
        }
        let at = QuadAt {
            src,
            source,
            pos: None,
            lods: &lods,
        };
        *result = sample_lanes::<FINITE>(unit, view, sampler, quad, &at, None);
    }
    unit.quad_slots = Some(slots);
}

/// The quad path for a quad whose lanes that want results (`quad.lanes`, at least one)
/// share `lod` and `slice`, from `src` (its cache index memoised in `source`): the four
/// results, or `None` (before any texel is fetched) when a footprint is not the short case
/// or the probes are more than the slots hold. `setup` holds the levels of the run's
/// previous quad (of this view and source), set up again only when this quad's differ.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn quad_levels<'t, const FINITE: bool>(
    unit: &mut TextureUnit,
    slots: &mut QuadSlots,
    view: &TextureView,
    sampler: &Sampler,
    quad: &Quad,
    src: &Source<'t>,
    source: &Cell<Option<u32>>,
    lod: LaneLod,
    slice: u32,
    setup: &mut Option<LevelSetup<'t>>,
) -> Option<[[f32; 4]; 4]> {
    let active = quad.lanes & 0xf;
    if quad.offset[..2].iter().any(|o| o.unsigned_abs() > 1 << 24) {
        return None;
    }
    let mut c0 = [[0.0f32; 4]; 2];
    for (lane, c) in quad.coords.iter().enumerate() {
        [c0[0][lane], c0[1][lane]] = [c[0], c[1]];
    }
    let n = lod.probes.max(1) as usize;
    if n > TABLED_PROBES {
        return None;
    }
    let levels = lane_levels(view, sampler, lod.lambda);
    let count = if levels[1].1 == 0.0 { 1 } else { 2 };
    // One probe sits at the position itself: zero offset along a zero axis gives the
    // position's own footprint (c0 + 0 differs from c0 only for −0, which scales to the same
    // texel coordinate).
    let (axis, row) = if n == 1 {
        ([0.0; 2], &PROBE_OFFSETS[0])
    } else {
        ([lod.axis[0], lod.axis[1]], &PROBE_OFFSETS[n])
    };
    // Pass 1: each level's set-up and its slots' footprints.
    // (A level the quad does not sample takes the first's place, unused.)
    let key = ([levels[0].0, levels[count - 1].0], count, slice);
    if setup.as_ref().is_none_or(|s| s.key != key) {
        let first_level = unit.surface_2d(src, view, levels[0].0, slice, source);
        let second_level = if count == 2 {
            unit.surface_2d(src, view, levels[1].0, slice, source)
        } else {
            first_level
        };
        // The sampled levels' sizes as the address stage takes them (below 2³¹).
        let mut sizes = Some([[0i32; 2]; 2]);
        for (j, size) in [first_level.1, second_level.1][..count].iter().enumerate() {
            if size.iter().any(|&s| s > i32::MAX as u32) {
                sizes = None;
            } else if let Some(sizes) = &mut sizes {
                sizes[j] = size.map(|s| s as i32);
            }
        }
        *setup = Some(LevelSetup {
            key,
            surfaces: [first_level.0, second_level.0],
            sizes,
        });
    }
    let Some(LevelSetup {
        surfaces,
        sizes: Some(sizes),
        ..
    }) = setup.as_ref()
    else {
        return None;
    };
    let sizes = *sizes;
    let d = sampler.desc();
    let modes = [d.address_mode_u, d.address_mode_v];
    let offset = [quad.offset[0], quad.offset[1]];
    // Every probe of a level has the same weight.
    let weights = levels.map(|(_, w)| w / n as f32);
    #[cfg(target_arch = "x86_64")]
    let wide = crate::cpu::wide();
    #[cfg(not(target_arch = "x86_64"))]
    let wide = false;
    #[cfg(target_arch = "x86_64")]
    let q = OneGroup {
        surfaces,
        sizes,
        count,
        c0,
        axis,
        row,
        offset,
        modes,
        active,
        n,
        weights,
    };
    #[cfg(target_arch = "x86_64")]
    if wide && n <= 2 {
        // One group of slots a level: the commonest quad, in one pass of its own.
        // SAFETY: `wide()` is true only when the CPU has AVX2 and FMA.
        return unsafe { one_group::one_group_avx2::<FINITE>(&mut unit.cache, slots, &q) };
    }
    // The texels each level's footprints touch, for the general passes (made past the
    // one-group pass, which needs none: 256 bytes a quad to fill otherwise).
    let mut boxes = [TexelBox::EMPTY; 2];
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: as above.
        if unsafe { one_group::footprints_avx2(slots, &q, &mut boxes) } {
            return None;
        }
    }
    if !wide {
        let mut refused = false;
        for (j, &size) in sizes[..count].iter().enumerate() {
            for g in 0..(4 * n).div_ceil(GROUP) {
                let base = g * GROUP;
                let t = [row[2 * g], row[2 * g + 1]];
                let used = used_slots(active, base, n);
                refused |= slots.levels[j].footprints(
                    base,
                    &c0,
                    axis,
                    t,
                    size,
                    offset,
                    modes,
                    used,
                    &mut boxes[j],
                );
            }
        }
        if refused {
            return None;
        }
    }
    // Passes 2 and 3: tags, fetch and filter.
    let cache = &mut unit.cache;
    cache.count_2x2_requests((active.count_ones() as usize * count * n) as u64);
    let mut pass = Pass2 {
        surfaces,
        boxes: &boxes,
        slots,
        weights,
        count,
        n,
        active,
    };
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: `wide()` is true only when the CPU has AVX2 and FMA.
        return Some(unsafe { fetch_and_filter_wide::<FINITE>(cache, &mut pass) });
    }
    Some(fetch_and_filter_base::<FINITE>(cache, &mut pass))
}

/// The slots of the group of eight from `base` that are in use, bit i for slot `base + i`:
/// the lanes that want results (`active`), probes below `n`.
#[inline(always)]
fn used_slots(active: u8, base: usize, n: usize) -> u32 {
    let probes = [base / 4, base / 4 + 1];
    let lanes = active as u32 & 0xf;
    (lanes | lanes << 4) & if probes[1] < n { 0xff } else { 0x0f }
}

/// `used` (bit k: slot k of a group) as lane masks: all ones for a used slot, zero else.
#[inline(always)]
fn slot_masks(used: u32) -> [u32; GROUP] {
    std::array::from_fn(|k| 0u32.wrapping_sub(used >> k & 1))
}

/// What passes 2 and 3 of [`quad_passes`] work on: the quad's levels (`count` of them),
/// their texel boxes and slots, each level's weight per probe, the probes per level and
/// the lanes that want results.
struct Pass2<'p, 't> {
    surfaces: &'p [Surface<'t>; 2],
    boxes: &'p [TexelBox; 2],
    slots: &'p mut QuadSlots,
    weights: [f32; 2],
    count: usize,
    n: usize,
    active: u8,
}

/// Passes 2 and 3 of [`quad_passes`], compiled for AVX2 and FMA (the same bits as the
/// baseline's: IEEE multiplies and adds).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,popcnt,bmi1,bmi2,lzcnt")]
#[inline(never)]
fn fetch_and_filter_wide<const FINITE: bool>(
    cache: &mut TexelCache,
    p: &mut Pass2,
) -> [[f32; 4]; 4] {
    fetch_and_filter::<FINITE>(cache, p)
}

/// Passes 2 and 3 of [`quad_passes`] for the baseline CPU.
#[inline(never)]
fn fetch_and_filter_base<const FINITE: bool>(
    cache: &mut TexelCache,
    p: &mut Pass2,
) -> [[f32; 4]; 4] {
    fetch_and_filter::<FINITE>(cache, p)
}

/// Passes 2 and 3 of [`quad_passes`]: level by level, the lines the slots touch accessed
/// and each slot's weighted sum of its taps kept; then each lane's result, the sum of its
/// slots' values times their level's weight in the per-lane path's order (level, then
/// probe).
#[inline(always)]
fn fetch_and_filter<const FINITE: bool>(cache: &mut TexelCache, p: &mut Pass2) -> [[f32; 4]; 4] {
    // (Probes are at most `TABLED_PROBES`: slots stay inside the arrays.)
    let n = p.n.min(TABLED_PROBES);
    let count = p.count.min(2);
    let staged = &mut p.slots.staged;
    size_staging(staged, cache.line_texels());
    for j in 0..count {
        let (surface, l) = (&p.surfaces[j], &mut p.slots.levels[j]);
        if let Some(grid) = l.grid(&p.boxes[j], surface, n, p.active, staged.len()) {
            cache.access_grid(surface, &grid, staged);
            l.filter::<FINITE>(staged, n, p.active);
        } else {
            l.fetch_each::<FINITE>(cache, surface, n, p.active);
        }
    }
    let mut out = [[0.0f32; 4]; 4];
    if count == 1 && n == 1 {
        // Its one probe on its one level is a lane's whole result: the per-lane path
        // returns that footprint as it is, not 1 × it added to 0.
        for (lane, result) in out.iter_mut().enumerate() {
            if p.active >> lane & 1 != 0 {
                *result = p.slots.levels[0].v[lane];
            }
        }
        return out;
    }
    // Each lane's sum, in the per-lane path's order (level, then probe), the four lanes'
    // chains of additions side by side. (Slots of lanes not active hold an earlier
    // request's values or zeros: their sums are not kept.)
    let mut acc = [[0.0f32; 4]; 4];
    for j in 0..count {
        let (weight, l) = (p.weights[j], &p.slots.levels[j]);
        for k in 0..n {
            let v = &l.v[4 * k..4 * k + 4];
            for lane in 0..4 {
                for c in 0..4 {
                    acc[lane][c] += weight * v[lane][c];
                }
            }
        }
    }
    for (lane, result) in out.iter_mut().enumerate() {
        if p.active >> lane & 1 != 0 {
            *result = acc[lane];
        }
    }
    out
}

impl LevelSlots {
    /// The footprints of the level's eight slots from `base` (probes `base / 4` and the next,
    /// lanes 0–3 each), on a level of `size` texels: lane l's probe at
    /// `c0[..][l] + t · axis`, `t` per probe; the texels of the slots in `used` (bit i: slot
    /// `base + i`) added to `bounds`. Returns whether a slot in `used` is not the short
    /// case.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn footprints(
        &mut self,
        base: usize,
        c0: &[[f32; 4]; 2],
        axis: [f32; 2],
        t: [f32; 2],
        size: [i32; 2],
        offset: [i32; 2],
        modes: [AddressMode; 2],
        used: u32,
        bounds: &mut TexelBox,
    ) -> bool {
        let mut frac = [[0.0f32; GROUP]; 2];
        // Per axis: the two texel columns (rows).
        let mut texels = [[[0u32; GROUP]; 2]; 2];
        let mut refused = 0u32;
        for a in 0..2 {
            let c: [f32; GROUP] = std::array::from_fn(|k| c0[a][k % 4]);
            let tk: [f32; GROUP] = std::array::from_fn(|k| t[k / 4]);
            refused |= group_axis(
                &c,
                axis[a],
                &tk,
                size[a],
                offset[a],
                modes[a],
                &mut texels[a],
                &mut frac[a],
            );
        }
        let [tx, ty] = &texels;
        self.tx[0][base..base + GROUP].copy_from_slice(&tx[0]);
        self.tx[1][base..base + GROUP].copy_from_slice(&tx[1]);
        self.ty[0][base..base + GROUP].copy_from_slice(&ty[0]);
        self.ty[1][base..base + GROUP].copy_from_slice(&ty[1]);
        // The box: the used slots' least and greatest texels per axis (others leave it).
        let on = slot_masks(used);
        for (a, [first, second]) in texels.iter().enumerate() {
            let (lo, hi) = (bounds.lo[a], bounds.hi[a]);
            bounds.lo[a] =
                std::array::from_fn(|k| lo[k].min(first[k] | !on[k]).min(second[k] | !on[k]));
            bounds.hi[a] =
                std::array::from_fn(|k| hi[k].max(first[k] & on[k]).max(second[k] & on[k]));
        }
        // `TextureUnit::probes_2d`'s weights: (1 − f, f) per axis, x fastest.
        for (k, (&fx, &fy)) in frac[0].iter().zip(&frac[1]).enumerate() {
            let (wx, wy) = ([1.0 - fx, fx], [1.0 - fy, fy]);
            self.w[0][base + k] = wx[0] * wy[0];
            self.w[1][base + k] = wx[1] * wy[0];
            self.w[2][base + k] = wx[0] * wy[1];
            self.w[3][base + k] = wx[1] * wy[1];
        }
        refused & used != 0
    }

    /// The level's line grid on `surface` — the lines inside `bounds`, those the used slots
    /// (`n` probes of the `active` lanes) touch marked — with each tap's place in it
    /// (`code`); `None` when the box spans more lines than a grid holds.
    #[inline(always)]
    fn grid(
        &mut self,
        bounds: &TexelBox,
        surface: &Surface,
        n: usize,
        active: u8,
        staged: usize,
    ) -> Option<LineGrid> {
        let [sx, sy] = surface.line_shifts();
        // (Codes as byte offsets into the staging buffer, `staged` texels, a power of two:
        // masked, every one stays inside it.)
        assert!(staged.is_power_of_two() && staged <= 1 << 27);
        let bytes = (staged as u32 - 1) << 4;
        let (lo, hi) = bounds.bounds();
        let (x0, y0) = (lo[0] >> sx, lo[1] >> sy);
        // (The box holds a used slot's texels: lo ≤ hi.)
        let (w, h) = (
            (hi[0] >> sx).wrapping_sub(x0).wrapping_add(1),
            (hi[1] >> sy).wrapping_sub(y0).wrapping_add(1),
        );
        if w == 0 || h == 0 || w as u64 * h as u64 > GRID_LINES as u64 {
            return None;
        }
        let (mx, my) = ((1u32 << sx) - 1, (1u32 << sy) - 1);
        let shift = sx + sy;
        // Per slot of a group, the bits of the lines its taps touch, gathered over the
        // groups and joined once.
        let mut marks = [0u64; GROUP];
        for g in 0..(4 * n).div_ceil(GROUP) {
            let base = g * GROUP;
            let used = used_slots(active, base, n);
            let group =
                |a: &[u32; SLOTS]| -> [u32; GROUP] { a[base..base + GROUP].try_into().unwrap() };
            let (x0s, x1s, y0s, y1s) = (
                group(&self.tx[0]),
                group(&self.tx[1]),
                group(&self.ty[0]),
                group(&self.ty[1]),
            );
            // (A used slot's grid indices are below `GRID_LINES`; the others' codes are
            // zero and mark nothing.)
            let mut codes = [[0u32; GROUP]; 4];
            let mut lines = [[0u32; GROUP]; 4];
            let on = slot_masks(used);
            for k in 0..GROUP {
                let on = on[k];
                let column = [
                    (x0s[k] >> sx).wrapping_sub(x0),
                    (x1s[k] >> sx).wrapping_sub(x0),
                ];
                let row = [
                    (y0s[k] >> sy).wrapping_sub(y0).wrapping_mul(w),
                    (y1s[k] >> sy).wrapping_sub(y0).wrapping_mul(w),
                ];
                let (px, py) = (
                    [x0s[k] & mx, x1s[k] & mx],
                    [(y0s[k] & my) << sx, (y1s[k] & my) << sx],
                );
                let g = [
                    row[0].wrapping_add(column[0]),
                    row[0].wrapping_add(column[1]),
                    row[1].wrapping_add(column[0]),
                    row[1].wrapping_add(column[1]),
                ];
                codes[0][k] = (g[0] << shift | (py[0] + px[0])) << 4 & bytes & on;
                codes[1][k] = (g[1] << shift | (py[0] + px[1])) << 4 & bytes & on;
                codes[2][k] = (g[2] << shift | (py[1] + px[0])) << 4 & bytes & on;
                codes[3][k] = (g[3] << shift | (py[1] + px[1])) << 4 & bytes & on;
                for t in 0..4 {
                    lines[t][k] = g[t] & 63;
                }
            }
            // (In a loop of its own: 64-bit lanes, four to a vector where the loop above
            // has eight.)
            for k in 0..GROUP {
                let bit = (on[k] & 1) as u64;
                marks[k] |= bit << lines[0][k]
                    | bit << lines[1][k]
                    | bit << lines[2][k]
                    | bit << lines[3][k];
            }
            for (code, c) in self.code.iter_mut().zip(&codes) {
                code[base..base + GROUP].copy_from_slice(c);
            }
        }
        let mask = marks.into_iter().fold(0, |m, b| m | b);
        Some(LineGrid { x0, y0, w, h, mask })
    }

    /// Pass 3 for a level whose lines were accessed and staged
    /// ([`TexelCache::access_grid`]): each used slot's taps read from `staged` at their
    /// codes and weighted.
    #[inline(always)]
    fn filter<const FINITE: bool>(&mut self, staged: &[[u32; 4]], n: usize, active: u8) {
        let base = staged.as_ptr();
        for lane in 0..4 {
            if active >> lane & 1 == 0 {
                continue;
            }
            for k in 0..n {
                let s = (4 * k + lane) & (SLOTS - 1);
                // SAFETY: codes are byte offsets of texels inside a staging buffer of
                // `staged.len()` texels: `grid` masks every code it makes with that length
                // (a power of two) less one, and made this level's for this buffer; the
                // slots' earlier codes were made the same way, or are zero.
                let tap = |t: usize| unsafe { *base.byte_add(self.code[t][s] as usize) };
                let vals = [tap(0), tap(1), tap(2), tap(3)];
                let w = [self.w[0][s], self.w[1][s], self.w[2][s], self.w[3][s]];
                self.v[s] = weighted_sum::<FINITE>(w, &vals);
            }
        }
    }

    /// Passes 2 and 3 for a level that cannot take a grid: the used slots one by one, in
    /// the per-lane path's order (lane, then probe), each footprint's lines accessed
    /// (`FetchRun::fetch`) and its taps weighted.
    #[inline(never)]
    fn fetch_each<const FINITE: bool>(
        &mut self,
        cache: &mut TexelCache,
        surface: &Surface,
        n: usize,
        active: u8,
    ) {
        let mut run = cache.run();
        for lane in 0..4 {
            if active >> lane & 1 == 0 {
                continue;
            }
            for k in 0..n {
                let s = (4 * k + lane) & (SLOTS - 1);
                let f = surface.footprint_2x2(
                    [self.tx[0][s], self.tx[1][s]],
                    [self.ty[0][s], self.ty[1][s]],
                );
                let vals = run.fetch(surface, &f);
                let w = [self.w[0][s], self.w[1][s], self.w[2][s], self.w[3][s]];
                self.v[s] = weighted_sum::<FINITE>(w, &vals);
            }
        }
    }
}

/// [`probe_axis`] for eight slots: [`short_axis`] of `c[k] + t[k] · axis` per slot, the
/// texels and fractions written to `texels` and `frac`; bit k set where slot k is not the
/// short case.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn group_axis(
    c: &[f32; GROUP],
    axis: f32,
    t: &[f32; GROUP],
    size: i32,
    offset: i32,
    mode: AddressMode,
    texels: &mut [[u32; GROUP]; 2],
    frac: &mut [f32; GROUP],
) -> u32 {
    let (repeats, clamps) = (
        mode == AddressMode::Repeat,
        mode == AddressMode::ClampToEdge,
    );
    let mut refused = 0u32;
    for k in 0..GROUP {
        let (taken, pair, f) = short_axis(c[k] + t[k] * axis, size, offset, repeats, clamps);
        refused |= (!taken as u32) << k;
        [texels[0][k], texels[1][k]] = pair;
        frac[k] = f;
    }
    refused
}
