//! The texture unit's address stage (T4 steps 3–4; Vulkan §16.7 "Texel Coordinate Systems"
//! and wrapping operations): where a lane's anisotropic probes lie along its major axis, a
//! linear footprint's two texels and weights per axis, the address modes that bring a texel
//! coordinate into the level (or onto the border), and the exact floors they need. The
//! sampling pipeline in `unit` calls these per footprint; `probe_footprints` finds every
//! probe of a lane at once for the short cases.

use super::*;

/// Where a lane's anisotropic probes fall on a 2D level, found for all of them at once (see
/// [`probe_footprints`]): probe k's bilinear footprint has the columns `x[0][k]`, `x[1][k]`
/// (left, right), the rows `y[0][k]`, `y[1][k]` (top, bottom) and the fractions
/// (fx[k], fy[k]).
pub(super) struct ProbeFootprints<const S: usize> {
    pub(super) x: [[u32; S]; 2],
    pub(super) y: [[u32; S]; 2],
    pub(super) fx: [f32; S],
    pub(super) fy: [f32; S],
}

/// The footprints [`TextureUnit::bilinear_2d`] takes for the `n` probes at
/// `offset_flat(c0, axis, probe_offset(k, n))` on level `l`, when every one is
/// [`linear_axis`]'s short case on both axes — the coordinate below 2²³, and both texels
/// inside the level unless the axis repeats with a power-of-two size or clamps to its edge
/// (the two modes whose texel is one mask or one clamp away) — else `None` (the probes then
/// go one by one). The same operations as per probe, on fixed-length arrays of every tabled
/// probe slot, `S` of them (the compiler vectorises them; slots past `n` are computed and
/// ignored). Only for 2 ≤ `n` ≤ `S` ≤ [`TABLED_PROBES`] (a single probe sits at the position
/// itself, and its footprint alone is cheaper found on its own).
#[inline(always)]
pub(super) fn probe_footprints<const S: usize>(
    l: &Level2d,
    offset: [i32; 3],
    c0: [f32; 3],
    axis: [f32; 3],
    n: u32,
) -> Option<ProbeFootprints<S>> {
    let row = PROBE_OFFSETS
        .get(n as usize)
        .filter(|_| n >= 2 && n as usize <= S)?
        .first_chunk::<S>()?;
    let x = probe_axis(row, n, c0[0], axis[0], l.size[0], offset[0], l.modes[0])?;
    let y = probe_axis(row, n, c0[1], axis[1], l.size[1], offset[1], l.modes[1])?;
    Some(ProbeFootprints {
        x: x.0,
        y: y.0,
        fx: x.1,
        fy: y.1,
    })
}

/// One axis of [`probe_footprints`]: per probe slot, [`linear_axis`]'s two texels (addressed
/// with `mode`) and fraction for the coordinate `(c0 + row[k] · axis) · size`, or `None`
/// when a probe below `n` is not its short case.
#[inline(always)]
#[allow(clippy::type_complexity)]
pub(super) fn probe_axis<const S: usize>(
    row: &[f32; S],
    n: u32,
    c0: f32,
    axis: f32,
    size: u32,
    offset: i32,
    mode: AddressMode,
) -> Option<([[u32; S]; 2], [f32; S])> {
    // In 32-bit lanes: |floor| ≤ 2²³ and (below) |offset| ≤ 2²⁴ cannot overflow, and a level
    // has fewer than 2³¹ texels a side.
    if offset.unsigned_abs() > 1 << 24 || size > i32::MAX as u32 {
        return None;
    }
    let (repeats, clamps) = (
        mode == AddressMode::Repeat,
        mode == AddressMode::ClampToEdge,
    );
    let (mut texels, mut frac) = ([[0u32; S]; 2], [0.0f32; S]);
    let mut refused = false;
    for k in 0..S {
        let (taken, pair, f) = short_axis(c0 + row[k] * axis, size as i32, offset, repeats, clamps);
        refused |= !taken & ((k as u32) < n);
        [texels[0][k], texels[1][k]] = pair;
        frac[k] = f;
    }
    (!refused).then_some((texels, frac))
}

/// [`linear_axis`]'s short case for normalised coordinate `c` on an axis of `size` texels
/// (below 2³¹) with texel offset `offset` (|offset| ≤ 2²⁴): whether it applies — the texel
/// coordinate below 2²³, and both texels inside the axis unless it repeats with a
/// power-of-two size (`repeats`: the mode is repeat) or clamps to its edge (`clamps`) — and
/// the two texels and the fraction. Without branches, so loops over probe slots vectorise;
/// where the case does not apply the texels and fraction are meaningless.
#[inline(always)]
pub(super) fn short_axis(
    c: f32,
    size: i32,
    offset: i32,
    repeats: bool,
    clamps: bool,
) -> (bool, [u32; 2], f32) {
    let last = size - 1;
    // `address` without its branches for the modes that have a short form: repeat on a
    // power-of-two axis is the coordinate's low bits (two's complement: `rem_euclid`),
    // clamp-to-edge a clamp; the other modes take only texels already inside the level.
    let wraps = repeats & ((size & last) == 0);
    let bits = if wraps { last } else { -1 };
    let (lo, hi) = if clamps {
        (0, last)
    } else {
        (i32::MIN, i32::MAX)
    };
    let any = wraps | clamps;
    let u = c * size as f32 - 0.5;
    let fast = u.abs() < 8_388_608.0;
    // (Zero where the short case does not hold: the conversion below needs a value in
    // range.)
    let u = if fast { u } else { 0.0 };
    // As `linear_axis`: the floor from the truncation, the fraction from the floor.
    // SAFETY: |u| < 2²³: its truncation fits i32.
    let t = unsafe { u.to_int_unchecked::<i32>() };
    let tf = t as f32;
    let down = (tf > u) as i32;
    let fl = (tf - down as f32).copysign(u);
    let i0 = t - down + offset;
    let taken = fast & (any | ((i0 >= 0) & (i0 < last)));
    let texels = [
        (i0 & bits).max(lo).min(hi) as u32,
        ((i0 + 1) & bits).max(lo).min(hi) as u32,
    ];
    (taken, texels, u - fl)
}

/// One axis of a linear footprint: texel coordinate `u` (already scaled by the level size
/// `n`) gives the two texels either side of the sample point, addressed with `mode`, and
/// their weights.
#[inline(always)]
pub(super) fn linear_axis(
    u: f32,
    n: u32,
    offset: i32,
    mode: AddressMode,
) -> [(Option<u32>, f32); 2] {
    let u = u - 0.5;
    if u.abs() < 8_388_608.0 {
        // What the general path below computes, with the floor taken once: below 2²³ the
        // truncation is exact (`floor_f32`, `floor_i64`), the fraction finite, and two
        // texels inside the axis are their own address in every mode.
        // SAFETY: |u| < 2²³ (so u is not NaN): its truncation fits i32.
        let t = unsafe { u.to_int_unchecked::<i32>() };
        let tf = t as f32;
        // Truncation rounded a negative non-integer up: step down one (without a branch;
        // `copysign` gives −0 for u = −0 as the floor does, and changes nothing else).
        let down = (tf > u) as i32;
        let (i, fl) = (t - down, (tf - down as f32).copysign(u));
        let frac = u - fl;
        let i0 = i as i64 + offset as i64;
        if i0 >= 0 && i0 + 1 < n as i64 {
            return [(Some(i0 as u32), 1.0 - frac), (Some(i0 as u32 + 1), frac)];
        }
        return [
            (address(i0, n, mode), 1.0 - frac),
            (address(i0 + 1, n, mode), frac),
        ];
    }
    let fl = floor_f32(u);
    let frac = if (u - fl).is_finite() { u - fl } else { 0.0 };
    let i0 = sat_add(floor_i64(u), offset);
    [
        (address(i0, n, mode), 1.0 - frac),
        (address(i0 + 1, n, mode), frac),
    ]
}

/// Applies an address mode to integer texel coordinate `i` of an axis of `n` texels;
/// `None` is a border texel.
pub(super) fn address(i: i64, n: u32, mode: AddressMode) -> Option<u32> {
    let n = n.max(1) as i64;
    // `i mod m` (non-negative); nearly every coordinate is already in range, and a 64-bit
    // remainder is a long division.
    let wrap = |m: i64| {
        if (0..m).contains(&i) {
            i
        } else {
            i.rem_euclid(m)
        }
    };
    Some(match mode {
        AddressMode::Repeat => wrap(n),
        AddressMode::MirrorRepeat => {
            let t = wrap(2 * n);
            if t < n { t } else { 2 * n - 1 - t }
        }
        AddressMode::ClampToEdge => i.clamp(0, n - 1),
        AddressMode::ClampToBorder => {
            if i < 0 || i >= n {
                return None;
            }
            i
        }
    } as u32)
}

/// ⌊x⌋ as an integer, saturating (NaN → 0), kept far from i64 overflow. Computed from the
/// truncation (one conversion instruction; `f32::floor` is a library call on the x86-64
/// baseline): an f32 with a fraction is below 2²³ in magnitude, so its truncation is exact
/// and one less than the floor when the value is negative; larger values are integers.
pub(super) fn floor_i64(x: f32) -> i64 {
    let t = x as i64;
    let t = if (t as f32) > x {
        t.saturating_sub(1)
    } else {
        t
    };
    t.clamp(-(1 << 40), 1 << 40)
}

/// `x.floor()`, bit for bit (−0 stays −0, NaN and infinities pass through), without the
/// library call `f32::floor` is on the x86-64 baseline: below 2²³ in magnitude through the
/// truncation to an integer, above it every f32 is already an integer.
#[inline]
pub(super) fn floor_f32(x: f32) -> f32 {
    if x.abs() < 8_388_608.0 {
        let t = x as i32 as f32;
        if t > x { t - 1.0 } else { t.copysign(x) }
    } else {
        x.floor()
    }
}

pub(super) fn sat_add(a: i64, b: i32) -> i64 {
    a + b as i64
}

/// Most anisotropic probes [`PROBE_OFFSETS`] holds (WebGPU's largest anisotropy clamp).
pub(super) const TABLED_PROBES: usize = 16;

/// `PROBE_OFFSETS[n][k]`: where probe `k` of `n` lies along the anisotropy axis, in axis
/// lengths — `(k + 0.5) / n − 0.5`, evaluated once (IEEE arithmetic, the same bits as at
/// run time) so that no probe waits for a division.
pub(super) const PROBE_OFFSETS: [[f32; TABLED_PROBES]; TABLED_PROBES + 1] = {
    let mut table = [[0.0; TABLED_PROBES]; TABLED_PROBES + 1];
    let mut n = 1;
    while n <= TABLED_PROBES {
        let mut k = 0;
        while k < n {
            table[n][k] = (k as f32 + 0.5) / n as f32 - 0.5;
            k += 1;
        }
        n += 1;
    }
    table
};

/// `(k + 0.5) / n − 0.5` for probe `k` of `n` (from the table when it holds `n`).
#[inline(always)]
pub(super) fn probe_offset(k: u32, n: u32) -> f32 {
    match PROBE_OFFSETS.get(n as usize) {
        Some(row) => row[k as usize],
        None => (k as f32 + 0.5) / n as f32 - 0.5,
    }
}

/// Moves a position by `t` × `axis` (in its own coordinate space). Cube probes stay on
/// their face (clamped to it); the taps of a clamped probe can still cross the seam.
pub(super) fn offset_pos(pos: Pos, axis: [f32; 3], t: f32) -> Pos {
    match pos {
        Pos::Flat(c) => Pos::Flat(offset_flat(c, axis, t)),
        Pos::Cube { face, s, t: tt } => Pos::Cube {
            face,
            s: (s + t * axis[0]).clamp(0.0, 1.0),
            t: (tt + t * axis[1]).clamp(0.0, 1.0),
        },
    }
}

/// [`offset_pos`] of a flat position.
#[inline(always)]
pub(super) fn offset_flat(c: [f32; 3], axis: [f32; 3], t: f32) -> [f32; 3] {
    [c[0] + t * axis[0], c[1] + t * axis[1], c[2] + t * axis[2]]
}
