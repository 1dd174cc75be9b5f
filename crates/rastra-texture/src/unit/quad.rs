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
//! 2. **Fetch and filter.** Lane by lane, level by level, probe by probe, each slot a 2×2
//!    fetch through the texel cache and a weighted sum added to its lane's result.
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
/// (slots a request does not reach keep an earlier request's values, never read). Arrays per
/// field, so the footprint pass stores eight slots' values at once.
#[derive(Debug)]
pub(super) struct QuadSlots {
    /// Footprint, as the texel cache takes it ([`Lines2x2`]): the line columns of the left
    /// and right taps, the line rows of the top and bottom taps, the four taps' places.
    lx: [[[u32; SLOTS]; 2]; 2],
    ly: [[[u32; SLOTS]; 2]; 2],
    at: [[[u32; SLOTS]; 4]; 2],
    /// The four taps' weights, x fastest.
    w: [[[f32; SLOTS]; 4]; 2],
}

impl QuadSlots {
    pub(super) fn new() -> Box<QuadSlots> {
        Box::new(QuadSlots {
            lx: [[[0; SLOTS]; 2]; 2],
            ly: [[[0; SLOTS]; 2]; 2],
            at: [[[0; SLOTS]; 4]; 2],
            w: [[[0.0; SLOTS]; 4]; 2],
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
        let shifts = surface.line_shifts();
        for base in (0..4 * n).step_by(GROUP) {
            let probes = [base / 4, base / 4 + 1];
            // The slots in use: the lanes that want results, probes below n.
            let used =
                (active as u32 | (active as u32) << 4) & if probes[1] < n { 0xff } else { 0x0f };
            let t = [row[probes[0]], row[probes[1]]];
            refused |= slots.footprints(j, base, &c0, axis, t, size, offset, modes, shifts, used);
        }
    }
    if refused {
        return None;
    }
    // Pass 2: fetch and filter, lane by lane, level by level, probe by probe.
    let cache = &mut unit.cache;
    cache.count_2x2_requests((active.count_ones() as usize * count * n) as u64);
    // (Its one probe on its one level is a lane's whole result: the per-lane path returns
    // that footprint as it is, not 1 × it added to 0.)
    let whole = count == 1 && n == 1;
    // Every probe of a level has the same weight.
    let weights = levels.map(|(_, w)| w / n as f32);
    let mut run = cache.run();
    let mut out = [[0.0f32; 4]; 4];
    for (lane, result) in out.iter_mut().enumerate() {
        if active >> lane & 1 == 0 {
            continue;
        }
        let mut acc = [0.0f32; 4];
        for (j, (surface, &weight)) in surfaces[..count].iter().zip(&weights).enumerate() {
            let (lx, ly, at, w) = (&slots.lx[j], &slots.ly[j], &slots.at[j], &slots.w[j]);
            // The lane's slots: its own of each probe's four.
            for k in 0..n {
                let s = 4 * k + lane;
                let lines = Lines2x2 {
                    lx: [lx[0][s], lx[1][s]],
                    ly: [ly[0][s], ly[1][s]],
                    at: [at[0][s], at[1][s], at[2][s], at[3][s]],
                };
                let vals = run.fetch(surface, &lines);
                let v = weighted_sum::<FINITE>([w[0][s], w[1][s], w[2][s], w[3][s]], &vals);
                if whole {
                    acc = v;
                } else {
                    for c in 0..4 {
                        acc[c] += weight * v[c];
                    }
                }
            }
        }
        *result = acc;
    }
    // (The run gives its clock and counts back to the cache.)
    drop(run);
    Some(out)
}

impl QuadSlots {
    /// The footprints of level `j`'s eight slots from `base` (probes `base / 4` and the next,
    /// lanes 0–3 each) on a level of `size` texels whose lines have sides `1 << shifts`:
    /// lane l's probe at `c0[..][l] + t · axis`, `t` per probe. Returns whether a slot in
    /// `used` (bit i: slot `base + i`) is not the short case.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn footprints(
        &mut self,
        j: usize,
        base: usize,
        c0: &[[f32; 4]; 2],
        axis: [f32; 2],
        t: [f32; 2],
        size: [i32; 2],
        offset: [i32; 2],
        modes: [AddressMode; 2],
        shifts: [u32; 2],
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
        let [sx, sy] = shifts;
        let (mx, my) = ((1u32 << sx) - 1, (1u32 << sy) - 1);
        let [tx, ty] = &texels;
        for k in 0..GROUP {
            let i = base + k;
            let px = [tx[0][k] & mx, tx[1][k] & mx];
            let py = [(ty[0][k] & my) << sx, (ty[1][k] & my) << sx];
            self.lx[j][0][i] = tx[0][k] >> sx;
            self.lx[j][1][i] = tx[1][k] >> sx;
            self.ly[j][0][i] = ty[0][k] >> sy;
            self.ly[j][1][i] = ty[1][k] >> sy;
            self.at[j][0][i] = py[0] + px[0];
            self.at[j][1][i] = py[0] + px[1];
            self.at[j][2][i] = py[1] + px[0];
            self.at[j][3][i] = py[1] + px[1];
        }
        // `TextureUnit::probes_2d`'s weights: (1 − f, f) per axis, x fastest.
        for (k, (&fx, &fy)) in frac[0].iter().zip(&frac[1]).enumerate() {
            let (wx, wy) = ([1.0 - fx, fx], [1.0 - fy, fy]);
            self.w[j][0][base + k] = wx[0] * wy[0];
            self.w[j][1][base + k] = wx[1] * wy[0];
            self.w[j][2][base + k] = wx[0] * wy[1];
            self.w[j][3][base + k] = wx[1] * wy[1];
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
