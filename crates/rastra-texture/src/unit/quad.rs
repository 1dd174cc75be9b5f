//! The texture unit's quad path (T4 steps 3–6 for a whole quad at once). The commonest
//! request — every lane filtering bilinearly on 2D levels (mipmapped or not, anisotropic or
//! not), no depth compare — whose lanes agree on LOD, probe count, axis and layer is taken in
//! two passes instead of lane by lane. Implicit LOD gives a quad's lanes one LOD
//! ([`TextureUnit::setup`]'s coarse gradients), so its lanes disagree only through a per-lane
//! bias or layer, or explicit per-lane LODs and gradients; such quads take the per-lane path.
//!
//! 1. **Footprints.** For each level the quad samples (one, or two for trilinear), every
//!    *slot* — probe k of lane l, slot 4k + l — gets its bilinear footprint: its texel cache
//!    lines, its taps' places in them and four weights, eight slots (two probes of the four
//!    lanes) at a time.
//! 2. **Fetch and filter.** Lane by lane, level by level, probe by probe (the per-lane
//!    path's order of cache accesses), each slot a 2×2 fetch through the texel cache
//!    (the first line's way hint found in pass 1) and the weighted sum of its taps, kept
//!    per slot; then each lane's sum of its slots in the per-lane path's order, the four
//!    lanes' sums side by side (so no slot's fetch waits on another's addition).
//!
//! Everything is the per-lane path's arithmetic in the same order (the same bits — a NaN
//! where it gives a NaN, though not always the same NaN: which of two NaNs a sum keeps
//! depends on how the compiler orders its operands — and the same cache accesses in the
//! same order, so the same statistics; tested against it). A slot whose footprint is not
//! the short case ([`short_axis`]: coordinates past 2²³, NaN, a footprint leaving the level
//! in a mode without a short form) sends the whole quad back to the per-lane path before
//! anything is fetched.

use super::*;

/// Slots one level of a quad can take: four lanes, up to [`TABLED_PROBES`] probes each.
const SLOTS: usize = 4 * TABLED_PROBES;

/// Slots found together (one AVX2 vector of 32-bit values): two probes of the four lanes.
const GROUP: usize = 8;

/// Per-slot footprints of one quad, per level it samples, kept by the unit between requests
/// (slots a request does not reach keep an earlier request's values, never used).
#[derive(Debug)]
pub(super) struct QuadSlots {
    levels: [LevelSlots; 2],
}

/// One level's slot footprints, arrays per field, so the footprint pass stores eight
/// slots' values at once.
#[derive(Debug)]
struct LevelSlots {
    /// Footprints, as the texel cache takes them.
    f: FootprintSlots<SLOTS>,
    /// The four taps' weights, x fastest.
    w: [[f32; SLOTS]; 4],
    /// Each slot's filtered value, the weighted sum of its four taps (pass 2).
    v: [[f32; 4]; SLOTS],
}

impl QuadSlots {
    pub(super) fn new() -> Box<QuadSlots> {
        let level = || LevelSlots {
            f: FootprintSlots::ZERO,
            w: [[0.0; SLOTS]; 4],
            v: [[0.0; 4]; SLOTS],
        };
        Box::new(QuadSlots {
            levels: [level(), level()],
        })
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
    if quad.offset[..2].iter().any(|o| o.unsigned_abs() > 1 << 24) {
        return None;
    }
    // (Out of the unit while the quad is set up: level set-up needs the unit too.)
    let mut slots = unit.quad_slots.take().unwrap_or_else(QuadSlots::new);
    let out = quad_passes::<FINITE>(unit, &mut slots, view, sampler, quad, at);
    unit.quad_slots = Some(slots);
    out
}

/// [`sample_quad`]'s two passes, with the unit's slots.
#[inline(always)]
fn quad_passes<const FINITE: bool>(
    unit: &mut TextureUnit,
    slots: &mut QuadSlots,
    view: &TextureView,
    sampler: &Sampler,
    quad: &Quad,
    at: &QuadAt,
) -> Option<[[f32; 4]; 4]> {
    let (src, lods) = (at.src, at.lods);
    let active = quad.lanes & 0xf;
    if active == 0 {
        return None;
    }
    // The lanes' positions (a 2D view's: the coordinates, `positions`), and whether the
    // lanes that want results agree with the first.
    let first = active.trailing_zeros() as usize;
    let lod = lods[first];
    let slice = lane_slice(view, quad.array_index[first]);
    let key = |d: &LaneLod| (d.lambda.to_bits(), d.probes, d.axis.map(f32::to_bits));
    let mut c0 = [[0.0f32; 4]; 2];
    for lane in 0..4 {
        let c = quad.coords[lane];
        [c0[0][lane], c0[1][lane]] = [c[0], c[1]];
        if active >> lane & 1 != 0
            && (key(&lods[lane]) != key(&lod) || lane_slice(view, quad.array_index[lane]) != slice)
        {
            return None;
        }
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
    let first_level = unit.surface_2d(src, view, levels[0].0, slice, at.source);
    let second_level = if count == 2 {
        unit.surface_2d(src, view, levels[1].0, slice, at.source)
    } else {
        first_level
    };
    let surfaces = [first_level.0, second_level.0];
    let sizes = [first_level.1, second_level.1];
    let d = sampler.desc();
    let modes = [d.address_mode_u, d.address_mode_v];
    let offset = [quad.offset[0], quad.offset[1]];
    let mut refused = false;
    for (j, (surface, size)) in surfaces[..count].iter().zip(sizes).enumerate() {
        if size.iter().any(|&s| s > i32::MAX as u32) {
            return None;
        }
        let size = size.map(|s| s as i32);
        for base in (0..4 * n).step_by(GROUP) {
            let probes = [base / 4, base / 4 + 1];
            // The slots in use: the lanes that want results, probes below n.
            let used =
                (active as u32 | (active as u32) << 4) & if probes[1] < n { 0xff } else { 0x0f };
            let t = [row[probes[0]], row[probes[1]]];
            refused |=
                slots.levels[j].footprints(base, &c0, axis, t, size, offset, modes, surface, used);
        }
    }
    if refused {
        return None;
    }
    // Pass 2: fetch and filter, lane by lane, level by level, probe by probe.
    let cache = &mut unit.cache;
    cache.count_2x2_requests((active.count_ones() as usize * count * n) as u64);
    // Every probe of a level has the same weight.
    let weights = levels.map(|(_, w)| w / n as f32);
    let mut pass = Pass2 {
        surfaces: &surfaces,
        slots,
        weights,
        count,
        n,
        active,
    };
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::wide() {
        // SAFETY: `wide()` is true only when the CPU has AVX2 and FMA.
        return Some(unsafe { fetch_and_filter_wide::<FINITE>(cache, &mut pass) });
    }
    Some(fetch_and_filter_base::<FINITE>(cache, &mut pass))
}

/// What pass 2 of [`quad_passes`] works on: the quad's levels (`count` of them) and their
/// slots, each level's weight per probe, the probes per level and the lanes that want
/// results.
struct Pass2<'p, 't> {
    surfaces: &'p [Surface<'t>; 2],
    slots: &'p mut QuadSlots,
    weights: [f32; 2],
    count: usize,
    n: usize,
    active: u8,
}

/// Pass 2 of [`quad_passes`], compiled for AVX2 and FMA (the same bits as the baseline's:
/// IEEE multiplies and adds). A function of its own, so its loop keeps the texel cache's
/// run state in registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,popcnt,bmi1,bmi2,lzcnt")]
#[inline(never)]
fn fetch_and_filter_wide<const FINITE: bool>(
    cache: &mut TexelCache,
    p: &mut Pass2,
) -> [[f32; 4]; 4] {
    fetch_and_filter::<FINITE>(cache, p)
}

/// Pass 2 of [`quad_passes`] for the baseline CPU.
#[inline(never)]
fn fetch_and_filter_base<const FINITE: bool>(
    cache: &mut TexelCache,
    p: &mut Pass2,
) -> [[f32; 4]; 4] {
    fetch_and_filter::<FINITE>(cache, p)
}

/// Pass 2 of [`quad_passes`]: lane by lane, level by level, probe by probe, each slot a
/// 2×2 fetch through the texel cache and the weighted sum of its taps, kept; then each
/// lane's result, the sum of its slots' values times their level's weight in the same
/// order.
#[inline(always)]
fn fetch_and_filter<const FINITE: bool>(cache: &mut TexelCache, p: &mut Pass2) -> [[f32; 4]; 4] {
    let mut run = cache.run();
    let mut out = [[0.0f32; 4]; 4];
    // (Probes are at most `TABLED_PROBES`: slots stay inside the arrays.)
    let n = p.n.min(TABLED_PROBES);
    let count = p.count.min(2);
    if count == 1 && n == 1 {
        // Its one probe on its one level is a lane's whole result: the per-lane path
        // returns that footprint as it is, not 1 × it added to 0.
        let (surface, l) = (&p.surfaces[0], &p.slots.levels[0]);
        for (lane, result) in out.iter_mut().enumerate() {
            if p.active >> lane & 1 != 0 {
                let vals = run.fetch_slot(surface, &l.f, lane);
                let w = [l.w[0][lane], l.w[1][lane], l.w[2][lane], l.w[3][lane]];
                *result = weighted_sum::<FINITE>(w, &vals);
            }
        }
        return out;
    }
    // Fetches in the cache's order (lane by lane, then level, then probe), each slot's
    // value kept: no slot waits for another.
    for lane in 0..4 {
        if p.active >> lane & 1 == 0 {
            continue;
        }
        for j in 0..count {
            let (surface, l) = (&p.surfaces[j], &mut p.slots.levels[j]);
            // The lane's slots: its own of each probe's four.
            for k in 0..n {
                // (Masked: the compiler sees the slot inside the arrays, 4n ≤ `SLOTS`.)
                let s = (4 * k + lane) & (SLOTS - 1);
                let vals = run.fetch_slot(surface, &l.f, s);
                l.v[s] =
                    weighted_sum::<FINITE>([l.w[0][s], l.w[1][s], l.w[2][s], l.w[3][s]], &vals);
            }
        }
    }
    drop(run);
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
    /// lanes 0–3 each) on `surface`, a level of `size` texels:
    /// lane l's probe at `c0[..][l] + t · axis`, `t` per probe. Returns whether a slot in
    /// `used` (bit i: slot `base + i`) is not the short case.
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
        surface: &Surface,
        used: u32,
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
        // `Surface::footprint_2x2` per slot.
        let [sx, sy] = surface.line_shifts();
        let (mx, my) = ((1u32 << sx) - 1, (1u32 << sy) - 1);
        let [tx, ty] = &texels;
        for k in 0..GROUP {
            let i = base + k;
            let px = [tx[0][k] & mx, tx[1][k] & mx];
            let py = [(ty[0][k] & my) << sx, (ty[1][k] & my) << sx];
            self.f.lx[0][i] = tx[0][k] >> sx;
            self.f.lx[1][i] = tx[1][k] >> sx;
            self.f.ly[0][i] = ty[0][k] >> sy;
            self.f.ly[1][i] = ty[1][k] >> sy;
            self.f.at[0][i] = py[0] + px[0];
            self.f.at[1][i] = py[0] + px[1];
            self.f.at[2][i] = py[1] + px[0];
            self.f.at[3][i] = py[1] + px[1];
        }
        // `TextureUnit::probes_2d`'s weights: (1 − f, f) per axis, x fastest.
        for (k, (&fx, &fy)) in frac[0].iter().zip(&frac[1]).enumerate() {
            let (wx, wy) = ([1.0 - fx, fx], [1.0 - fy, fy]);
            self.w[0][base + k] = wx[0] * wy[0];
            self.w[1][base + k] = wx[1] * wy[0];
            self.w[2][base + k] = wx[0] * wy[1];
            self.w[3][base + k] = wx[1] * wy[1];
        }
        // The first tap's way-hint slot, in a loop of its own (vectorised).
        let hash = surface.hint_hash();
        for k in 0..GROUP {
            let i = base + k;
            self.f.hint[i] = hint_slot(self.f.lx[0][i], self.f.ly[0][i], hash) as u32;
        }
        refused & used != 0
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
