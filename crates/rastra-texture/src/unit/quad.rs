//! The texture unit's quad path (T4 steps 3–6 for a whole quad at once). The commonest
//! request — every lane filtering bilinearly on 2D levels (mipmapped or not, anisotropic or
//! not), no depth compare — is taken in three passes instead of lane by lane:
//!
//! 1. **Jobs.** Each lane that wants a result picks its levels and probe count
//!    ([`lane_levels`], the lane's [`LaneLod`]); each (lane, level) becomes a job whose
//!    probes take consecutive *slots*, and the job writes its lane's position, major axis,
//!    level size and probe offsets into its slots. Lanes share a level's set-up
//!    ([`TextureUnit::level_2d`], made once per distinct level and slice).
//! 2. **Footprints.** Every slot's bilinear footprint — its texel cache lines, its taps'
//!    places in them and four weights — is found eight slots at a time, the slots of all jobs packed together (a
//!    lane-level's few probes no longer fill a vector of their own).
//! 3. **Fetch and filter.** The jobs run in lane order, a job's probes in order, each a 2×2
//!    fetch through the texel cache and a weighted sum added to its lane's result.
//!
//! Everything is the per-lane path's arithmetic in the same order (the same bits — a NaN
//! where it gives a NaN, though not always the same NaN: which of two NaNs a sum keeps
//! depends on how the compiler orders its operands — and the same cache accesses in the
//! same order, so the same statistics; tested against it). A slot
//! whose footprint is not the short case ([`probe_axis`]: coordinates past 2²³, NaN, a
//! footprint leaving the level in a mode without a short form) sends the whole quad back
//! to the per-lane path before anything is fetched.

use super::*;

/// Slots one quad's probes can take: four lanes, two levels each, up to [`TABLED_PROBES`]
/// probes a level.
const SLOTS: usize = 4 * 2 * TABLED_PROBES;

/// Slot arrays' length: a job writes eight or [`TABLED_PROBES`] slots from its first,
/// whatever its probe count (the next job overwrites the rest), and the last group of eight
/// may reach past the slots in use.
const ROOM: usize = SLOTS + TABLED_PROBES;

/// Slots found together (one AVX2 vector of 32-bit values).
const GROUP: usize = 8;

/// Per-slot inputs and footprints of one quad, kept by the unit between requests (slots a
/// request does not reach keep an earlier request's values: they are computed and ignored).
#[derive(Debug)]
pub(super) struct QuadSlots {
    /// Position (u, v) of the slot's lane.
    c0: [[f32; ROOM]; 2],
    /// The lane's major axis (u, v); zero for a lane that takes one probe.
    axis: [[f32; ROOM]; 2],
    /// The probe's offset along the axis, in axis lengths.
    t: [f32; ROOM],
    /// Level width and height.
    size: [[i32; ROOM]; 2],
    /// Footprint, as the texel cache takes it ([`Lines2x2`]): the line columns of the left
    /// and right taps, the line rows of the top and bottom taps, the four taps' places.
    lx: [[u32; ROOM]; 2],
    ly: [[u32; ROOM]; 2],
    at: [[u32; ROOM]; 4],
    /// The four taps' weights, x fastest.
    w: [[f32; ROOM]; 4],
}

impl QuadSlots {
    pub(super) fn new() -> Box<QuadSlots> {
        Box::new(QuadSlots {
            c0: [[0.0; ROOM]; 2],
            axis: [[0.0; ROOM]; 2],
            t: [0.0; ROOM],
            size: [[1; ROOM]; 2],
            lx: [[0; ROOM]; 2],
            ly: [[0; ROOM]; 2],
            at: [[0; ROOM]; 4],
            w: [[0.0; ROOM]; 4],
        })
    }
}

/// One lane's probes on one level.
#[derive(Clone, Copy, Default)]
struct Job {
    /// Index into the quad's level table.
    level: u8,
    first: u8,
    probes: u8,
    /// Every probe's weight: the level's weight over the probe count.
    weight: f32,
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

/// The quad path: the four results, or `None` (before any texel is fetched) when some
/// footprint is not the short case. Only for requests [`quad_path_applies`] to, with
/// `pos` and `lods` from [`TextureUnit::setup`]; `FINITE` as [`weighted_sum`]'s. (Inlined
/// into the sampling function: measured as a function of its own, compiled for the
/// baseline and for AVX2, it ran 0.2% more instructions on textured_cubes.)
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn sample_quad<const FINITE: bool>(
    unit: &mut TextureUnit,
    src: &Source,
    view: &TextureView,
    sampler: &Sampler,
    quad: &Quad,
    pos: &[Pos; 4],
    lods: &[LaneLod; 4],
) -> Option<[[f32; 4]; 4]> {
    if quad.offset[..2].iter().any(|o| o.unsigned_abs() > 1 << 24) {
        return None;
    }
    // (Out of the unit while the quad is set up: level set-up needs the unit too.)
    let mut slots = unit.quad_slots.take().unwrap_or_else(QuadSlots::new);
    let out = quad_passes::<FINITE>(unit, &mut slots, src, view, sampler, quad, pos, lods);
    unit.quad_slots = Some(slots);
    out
}

/// [`sample_quad`]'s three passes, with the unit's slots.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn quad_passes<const FINITE: bool>(
    unit: &mut TextureUnit,
    slots: &mut QuadSlots,
    src: &Source,
    view: &TextureView,
    sampler: &Sampler,
    quad: &Quad,
    pos: &[Pos; 4],
    lods: &[LaneLod; 4],
) -> Option<[[f32; 4]; 4]> {
    let offset = [quad.offset[0], quad.offset[1]];
    // Pass 1: jobs, their levels and their slots' inputs.
    let source = Cell::new(None);
    let mut keys = [(u32::MAX, u32::MAX); 8];
    let mut made_levels: [Option<(Surface, [u32; 2])>; 8] = [None; 8];
    let mut made = 0usize;
    let mut jobs = [Job::default(); 8];
    // Per lane: its jobs' range, and whether its one job of one probe is its whole result
    // (the per-lane path returns that footprint as it is, not 1 × it added to 0).
    let mut lane_jobs = [(0u8, 0u8, false); 4];
    let (mut njobs, mut first) = (0usize, 0usize);
    for lane in 0..4 {
        if quad.lanes >> lane & 1 == 0 {
            continue;
        }
        let Pos::Flat(c0) = pos[lane] else {
            return None;
        };
        let lod = lods[lane];
        let n = lod.probes.max(1) as usize;
        if n > TABLED_PROBES {
            return None;
        }
        let slice = lane_slice(view, quad.array_index[lane]);
        let levels = lane_levels(view, sampler, lod.lambda);
        let count = if levels[1].1 == 0.0 { 1 } else { 2 };
        lane_jobs[lane] = (njobs as u8, (njobs + count) as u8, count == 1 && n == 1);
        // One probe sits at the position itself: zero offset along a zero axis gives the
        // position's own footprint (c0 + 0 differs from c0 only for −0, which scales to
        // the same texel coordinate).
        let (axis, row) = if n == 1 {
            ([0.0; 2], &PROBE_OFFSETS[0])
        } else {
            ([lod.axis[0], lod.axis[1]], &PROBE_OFFSETS[n])
        };
        for &(level, lw) in &levels[..count] {
            let key = (level, slice);
            let index = match keys[..made].iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    let l = unit.level_2d(src, view, sampler, level, slice, &source);
                    if l.size.iter().any(|&s| s > i32::MAX as u32) {
                        return None;
                    }
                    keys[made] = key;
                    made_levels[made] = Some((l.surface, l.size));
                    made += 1;
                    made - 1
                }
            };
            let (_, size) = made_levels[index].expect("made above");
            // (Most lanes take at most eight probes: half the stores.)
            if n <= GROUP {
                slots.write_job::<GROUP>(first, c0, axis, row, size);
            } else {
                slots.write_job::<TABLED_PROBES>(first, c0, axis, row, size);
            }
            jobs[njobs] = Job {
                level: index as u8,
                first: first as u8,
                probes: n as u8,
                weight: lw / n as f32,
            };
            njobs += 1;
            first += n;
        }
    }
    let total = first;
    // Pass 2: every slot's footprint, eight at a time.
    let modes = [sampler.desc().address_mode_u, sampler.desc().address_mode_v];
    // (One texture: every level's lines have the same shape.)
    let shifts = made_levels[0].map_or([0; 2], |(s, _)| s.line_shifts());
    let mut refused = false;
    for g in 0..total.div_ceil(GROUP) {
        refused |= slots.footprints(g * GROUP, total, offset, modes, shifts);
    }
    if refused {
        return None;
    }
    // Pass 3: fetch and filter, lane by lane, job by job, probe by probe.
    let cache = &mut unit.cache;
    let mut out = [[0.0f32; 4]; 4];
    for (lane, &(from, to, whole)) in lane_jobs.iter().enumerate() {
        let mut acc = [0.0f32; 4];
        for job in &jobs[from as usize..to as usize] {
            let (surface, _) = made_levels[job.level as usize]
                .as_ref()
                .expect("made with its job");
            let r = job.first as usize..job.first as usize + job.probes as usize;
            let (lx, ly) = (
                [0, 1].map(|i| &slots.lx[i][r.clone()]),
                [0, 1].map(|i| &slots.ly[i][r.clone()]),
            );
            let at = [0, 1, 2, 3].map(|k| &slots.at[k][r.clone()]);
            let w = [0, 1, 2, 3].map(|k| &slots.w[k][r.clone()]);
            cache.count_2x2_requests(r.len() as u64);
            for s in 0..r.len() {
                let lines = Lines2x2 {
                    lx: [lx[0][s], lx[1][s]],
                    ly: [ly[0][s], ly[1][s]],
                    at: [at[0][s], at[1][s], at[2][s], at[3][s]],
                };
                let vals = cache.fetch_lines_2x2_uncounted(surface, &lines);
                let v = weighted_sum::<FINITE>([w[0][s], w[1][s], w[2][s], w[3][s]], &vals);
                if whole {
                    acc = v;
                } else {
                    for c in 0..4 {
                        acc[c] += job.weight * v[c];
                    }
                }
            }
        }
        out[lane] = acc;
    }
    Some(out)
}

impl QuadSlots {
    /// Writes a job's inputs into `W` slots from `first` (at least its probes): its lane's
    /// position `c0` and axis, the level's size, and the probe offsets `row`.
    #[inline(always)]
    fn write_job<const W: usize>(
        &mut self,
        first: usize,
        c0: [f32; 3],
        axis: [f32; 2],
        row: &[f32; TABLED_PROBES],
        size: [u32; 2],
    ) {
        let r = first..first + W;
        for a in 0..2 {
            self.c0[a][r.clone()].fill(c0[a]);
            self.axis[a][r.clone()].fill(axis[a]);
            self.size[a][r.clone()].fill(size[a] as i32);
        }
        self.t[r].copy_from_slice(&row[..W]);
    }

    /// The footprints of the eight slots from `base` (of which those below `total` are in
    /// use), on lines of sides `1 << shifts`: whether one in use is not the short case.
    #[inline(always)]
    fn footprints(
        &mut self,
        base: usize,
        total: usize,
        offset: [i32; 2],
        modes: [AddressMode; 2],
        shifts: [u32; 2],
    ) -> bool {
        let g = base..base + GROUP;
        let t: &[f32; GROUP] = self.t[g.clone()].try_into().expect("a group");
        let mut frac = [[0.0f32; GROUP]; 2];
        // Per axis: the two texel columns (rows).
        let mut texels = [[[0u32; GROUP]; 2]; 2];
        let mut refused = false;
        for a in 0..2 {
            let c0: &[f32; GROUP] = self.c0[a][g.clone()].try_into().expect("a group");
            let axis: &[f32; GROUP] = self.axis[a][g.clone()].try_into().expect("a group");
            let size: &[i32; GROUP] = self.size[a][g.clone()].try_into().expect("a group");
            refused |= group_axis(
                c0,
                axis,
                t,
                size,
                offset[a],
                modes[a],
                total.saturating_sub(base),
                &mut texels[a],
                &mut frac[a],
            );
        }
        // `Surface::footprint_2x2` per slot.
        let [sx, sy] = shifts;
        let (mx, my) = ((1u32 << sx) - 1, (1u32 << sy) - 1);
        let [tx, ty] = &texels;
        for k in 0..GROUP {
            let px = [tx[0][k] & mx, tx[1][k] & mx];
            let py = [(ty[0][k] & my) << sx, (ty[1][k] & my) << sx];
            self.lx[0][base + k] = tx[0][k] >> sx;
            self.lx[1][base + k] = tx[1][k] >> sx;
            self.ly[0][base + k] = ty[0][k] >> sy;
            self.ly[1][base + k] = ty[1][k] >> sy;
            self.at[0][base + k] = py[0] + px[0];
            self.at[1][base + k] = py[0] + px[1];
            self.at[2][base + k] = py[1] + px[0];
            self.at[3][base + k] = py[1] + px[1];
        }
        // `TextureUnit::probes_2d`'s weights: (1 − f, f) per axis, x fastest.
        for (k, (&fx, &fy)) in frac[0].iter().zip(&frac[1]).enumerate() {
            let (wx, wy) = ([1.0 - fx, fx], [1.0 - fy, fy]);
            self.w[0][base + k] = wx[0] * wy[0];
            self.w[1][base + k] = wx[1] * wy[0];
            self.w[2][base + k] = wx[0] * wy[1];
            self.w[3][base + k] = wx[1] * wy[1];
        }
        refused
    }
}

/// [`probe_axis`] for eight slots whose probes may lie on different levels (each slot its
/// own size, position and axis): [`short_axis`] per slot, the texels and fractions
/// written to `texels` and `frac`; whether a slot below `used` is not the short case.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn group_axis(
    c0: &[f32; GROUP],
    axis: &[f32; GROUP],
    t: &[f32; GROUP],
    size: &[i32; GROUP],
    offset: i32,
    mode: AddressMode,
    used: usize,
    texels: &mut [[u32; GROUP]; 2],
    frac: &mut [f32; GROUP],
) -> bool {
    let (repeats, clamps) = (
        mode == AddressMode::Repeat,
        mode == AddressMode::ClampToEdge,
    );
    let mut refused = false;
    for k in 0..GROUP {
        let (taken, pair, f) = short_axis(c0[k] + t[k] * axis[k], size[k], offset, repeats, clamps);
        refused |= !taken & (k < used);
        [texels[0][k], texels[1][k]] = pair;
        frac[k] = f;
    }
    refused
}
