//! Attribute interpolation (T7 "Interpolated values", T8 "Attribute interpolation"): the
//! barycentric approach — the rasterizer's integer edge functions give screen-space
//! barycentrics, perspective correction divides them by each vertex's w, and every varying
//! is then a weighted sum of its three vertex values. Depth is interpolated linearly in
//! screen space (it was divided by w at projection).

use rastra_shader::{Interpolation, WARP_LANES};

use crate::setup::{Fixed, SUBPIXEL_BITS, Triangle};

/// Depth at a snapped point: vertex 0's depth plus the depth plane's two multiply-adds.
#[inline]
pub fn depth_at(tri: &Triangle, x: Fixed, y: Fixed) -> f32 {
    let p = &tri.planes;
    let dx = (x - p.origin[0]) as f32;
    let dy = (y - p.origin[1]) as f32;
    tri.z[0] + p.z[0] * dx + p.z[1] * dy
}

/// [`depth_at`] at the same sample offset `(ox, oy)` of the four pixels of the quad at
/// pixel (x, y) (pixel `i` at `(x + i % 2, y + i / 2)`): the same operations per pixel, so
/// the same bits, as four lanes.
#[inline]
pub fn depth_at_quad(tri: &Triangle, x: u32, y: u32, [ox, oy]: [Fixed; 2]) -> [f32; 4] {
    let p = &tri.planes;
    let one = 1 << SUBPIXEL_BITS;
    let dx0 = ((x as Fixed) << SUBPIXEL_BITS) + ox - p.origin[0];
    let dy0 = ((y as Fixed) << SUBPIXEL_BITS) + oy - p.origin[1];
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // Every pixel's offsets fit 32 bits (as `offset` checks), so the lanes' 32-bit sums
        // are those offsets, converted as `offset` converts them.
        debug_assert!(
            [dx0, dy0, dx0 + one, dy0 + one]
                .iter()
                .all(|&d| i32::try_from(d).is_ok())
        );
        // SAFETY: SSE2 is part of the x86-64 baseline; the store writes a four-float array.
        unsafe {
            let one = one as i32;
            let dx = _mm_add_epi32(_mm_set1_epi32(dx0 as i32), _mm_set_epi32(one, 0, one, 0));
            let dy = _mm_add_epi32(_mm_set1_epi32(dy0 as i32), _mm_set_epi32(one, one, 0, 0));
            let z = _mm_add_ps(
                _mm_add_ps(
                    _mm_set1_ps(tri.z[0]),
                    _mm_mul_ps(_mm_set1_ps(p.z[0]), _mm_cvtepi32_ps(dx)),
                ),
                _mm_mul_ps(_mm_set1_ps(p.z[1]), _mm_cvtepi32_ps(dy)),
            );
            let mut out = [0.0f32; 4];
            _mm_storeu_ps(out.as_mut_ptr(), z);
            out
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let dx = [dx0, dx0 + one, dx0, dx0 + one].map(|d| offset(d, 0));
        let dy = [dy0, dy0, dy0 + one, dy0 + one].map(|d| offset(d, 0));
        std::array::from_fn(|i| tri.z[0] + p.z[0] * dx[i] + p.z[1] * dy[i])
    }
}

/// Quads per warp.
const QUADS: usize = WARP_LANES / 4;

/// Rows of four quads (one row of quads of an 8×8 block) a whole pixel warp holds.
pub const ROWS_PER_WARP: usize = QUADS / 4;
const _: () = assert!(QUADS.is_multiple_of(4) && 4usize.is_multiple_of(ROWS_PER_WARP));

/// The points a warp's lanes are shaded at and the planes they are shaded with, one array
/// per value over the warp's lanes (structure of arrays: every loop over lanes compiles to
/// SIMD instructions, whether the quads share a triangle or not). A quad's four lanes share
/// a triangle, so [`WarpPoints::set_quad`] writes its constants four times. Each lane
/// computes what [`depth_at`] computes for its point, in the same order, so both give
/// identical bits.
#[derive(Clone, Copy, Debug)]
pub struct WarpPoints {
    /// Per quad, its triangle's origin (snapped), for [`WarpPoints::set_point`].
    origin: [[Fixed; 2]; QUADS],
    /// Each lane's offset from its triangle's origin.
    dx: [f32; WARP_LANES],
    dy: [f32; WARP_LANES],
    /// The planes of the triangle every quad of the warp shares, when they share one
    /// ([`WarpPoints::begin`]): then they are used as they are, and the per-lane copies
    /// below are not written.
    shared: Option<Planes>,
    /// The screen-space weight planes of vertices 1 and 2 (x and y slopes).
    weight1: [[f32; WARP_LANES]; 2],
    weight2: [[f32; WARP_LANES]; 2],
    /// Each vertex's 1 / w.
    inv_w: [[f32; WARP_LANES]; 3],
    /// The depth plane: vertex 0's depth and the x and y slopes.
    z0: [f32; WARP_LANES],
    dz: [[f32; WARP_LANES]; 2],
}

/// One triangle's planes as [`WarpPoints`] uses them.
#[derive(Clone, Copy, Debug, Default)]
struct Planes {
    weight1: [f32; 2],
    weight2: [f32; 2],
    inv_w: [f32; 3],
    z0: f32,
    dz: [f32; 2],
}

impl Planes {
    fn of(tri: &Triangle) -> Planes {
        let p = &tri.planes;
        Planes {
            weight1: p.weight1,
            weight2: p.weight2,
            inv_w: tri.inv_w,
            z0: tri.z[0],
            dz: p.z,
        }
    }
}

/// A warp's barycentric weights at its points, one array per weight: screen-space
/// (no-perspective) weights, perspective-correct weights, and the interpolated 1 / w.
#[derive(Clone, Copy, Debug)]
pub struct WarpWeights {
    pub linear: [[f32; WARP_LANES]; 3],
    pub perspective: [[f32; WARP_LANES]; 3],
    pub inv_w: [f32; WARP_LANES],
}

impl Default for WarpPoints {
    fn default() -> Self {
        let lanes = [0.0; WARP_LANES];
        WarpPoints {
            origin: [[0; 2]; QUADS],
            dx: lanes,
            dy: lanes,
            shared: None,
            weight1: [lanes; 2],
            weight2: [lanes; 2],
            inv_w: [lanes; 3],
            z0: lanes,
            dz: [lanes; 2],
        }
    }
}

impl Default for WarpWeights {
    fn default() -> Self {
        let lanes = [0.0; WARP_LANES];
        WarpWeights {
            linear: [lanes; 3],
            perspective: [lanes; 3],
            inv_w: lanes,
        }
    }
}

/// `a − origin` as a float. Both are snapped coordinates inside the guard band
/// (`clip::GUARD_BAND_PIXELS` = 2¹⁹ pixels = 2²⁷ snapped units either side), so the
/// difference fits 32 bits and converting it from `i32` gives the same float as from `i64`
/// (and vectorises).
#[inline(always)]
fn offset(a: Fixed, origin: Fixed) -> f32 {
    let d = a - origin;
    debug_assert!(
        i32::try_from(d).is_ok(),
        "snapped offset {d} outside the guard band"
    );
    d as i32 as f32
}

impl WarpPoints {
    /// Starts a warp: `shared` is the triangle all its quads come from, if they all come
    /// from one (then [`WarpPoints::set_quad`] must be given that triangle every time).
    #[inline]
    pub fn begin(&mut self, shared: Option<&Triangle>) {
        self.shared = shared.map(Planes::of);
    }

    /// Gives quad `q` the triangle `tri` and places its four lanes at the centres of its
    /// pixels, the quad at pixel (x, y) (lane `i` is pixel `(x + i % 2, y + i / 2)`).
    /// Inlined into the warp flush, compiled for AVX2 with it.
    #[inline(always)]
    pub fn set_quad(&mut self, q: usize, tri: &Triangle, x: u32, y: u32) {
        let p = &tri.planes;
        let lanes = q * 4..q * 4 + 4;
        self.origin[q] = p.origin;
        let (cx, cy) = pixel_center(x, y);
        let one = 1 << SUBPIXEL_BITS;
        let (ox, oy) = (cx - p.origin[0], cy - p.origin[1]);
        for i in 0..4 {
            self.dx[q * 4 + i] = offset(ox + (i as Fixed & 1) * one, 0);
            self.dy[q * 4 + i] = offset(oy + (i as Fixed >> 1) * one, 0);
        }
        if self.shared.is_some() {
            return;
        }
        for k in 0..2 {
            self.weight1[k][lanes.clone()].fill(p.weight1[k]);
            self.weight2[k][lanes.clone()].fill(p.weight2[k]);
            self.dz[k][lanes.clone()].fill(p.z[k]);
        }
        for k in 0..3 {
            self.inv_w[k][lanes.clone()].fill(tri.inv_w[k]);
        }
        self.z0[lanes].fill(tri.z[0]);
    }

    /// [`WarpPoints::set_quad`] for the quads of a warp's rows of a block, all of `tri`
    /// (the warp's shared triangle): quad `q` at pixel (x + 2 (q mod 4), y + 2 ⌊q / 4⌋) —
    /// [`ROWS_PER_WARP`] rows of four quads. The same offsets, computed for the whole warp
    /// at once.
    #[inline]
    pub fn set_rows(&mut self, tri: &Triangle, x: u32, y: u32) {
        let p = &tri.planes;
        self.origin = [p.origin; QUADS];
        let (cx, cy) = pixel_center(x, y);
        let one = 1 << SUBPIXEL_BITS;
        let (ox, oy) = (cx - p.origin[0], cy - p.origin[1]);
        for l in 0..WARP_LANES {
            let (q, i) = ((l / 4) as Fixed, (l % 4) as Fixed);
            self.dx[l] = offset(ox + (2 * (q % 4) + (i & 1)) * one, 0);
            self.dy[l] = offset(oy + (2 * (q / 4) + (i >> 1)) * one, 0);
        }
    }

    /// Moves `lane` to the snapped point (x, y) of its quad's triangle.
    #[inline]
    pub fn set_point(&mut self, lane: usize, x: Fixed, y: Fixed) {
        let origin = self.origin[lane / 4];
        self.dx[lane] = offset(x, origin[0]);
        self.dy[lane] = offset(y, origin[1]);
    }

    /// Every lane's weights (lanes of quads never set give meaningless values).
    pub fn weights(&self) -> WarpWeights {
        let mut out = WarpWeights::default();
        self.weights_into(&mut out, true);
        out
    }

    /// [`WarpPoints::weights`] into `out`, every lane overwritten — the screen-space
    /// (`linear`) weights only when `linear` is set: a program with no `linear`-interpolated
    /// input never reads them, and storing them was a third of the stores here.
    pub fn weights_into(&self, out: &mut WarpWeights, linear: bool) {
        match &self.shared {
            Some(planes) => shared_weights_for_cpu(self, planes, out, linear),
            None => weights_for_cpu(self, out, linear),
        }
    }

    /// Every lane's depth. Inlined into its callers (compiled for the baseline and AVX2):
    /// a separately compiled baseline copy would store the result in 16-byte pieces that
    /// the AVX2 caller then reads in 32-byte ones, each such load waiting for both stores
    /// to reach the cache (store forwarding fails).
    #[inline(always)]
    pub fn depths(&self) -> [f32; WARP_LANES] {
        let mut z = [0.0; WARP_LANES];
        match &self.shared {
            Some(t) => {
                for (l, z) in z.iter_mut().enumerate() {
                    *z = t.z0 + t.dz[0] * self.dx[l] + t.dz[1] * self.dy[l];
                }
            }
            None => {
                for (l, z) in z.iter_mut().enumerate() {
                    *z = self.z0[l] + self.dz[0][l] * self.dx[l] + self.dz[1][l] * self.dy[l];
                }
            }
        }
        z
    }
}

rastra_texture::multiversion! {
/// [`WarpPoints::weights`]' lane loop, compiled for the baseline and for AVX2 (the same
/// bits: separate multiplies and adds, an exact division).
fn weights_for_cpu(p: &WarpPoints, out: &mut WarpWeights, linear: bool) {
    let lane = |l: usize| {
        let w1 = [p.weight1[0][l], p.weight1[1][l]];
        let w2 = [p.weight2[0][l], p.weight2[1][l]];
        let inv_w = [p.inv_w[0][l], p.inv_w[1][l], p.inv_w[2][l]];
        (w1, w2, inv_w)
    };
    if linear {
        for l in 0..WARP_LANES {
            let (w1, w2, inv_w) = lane(l);
            lane_weights::<true>(p.dx[l], p.dy[l], w1, w2, inv_w, l, out);
        }
    } else {
        for l in 0..WARP_LANES {
            let (w1, w2, inv_w) = lane(l);
            lane_weights::<false>(p.dx[l], p.dy[l], w1, w2, inv_w, l, out);
        }
    }
}
}

/// One lane's weights at offset (dx, dy) from planes `w1`, `w2` and the vertices' 1 / w,
/// into lane `l` of `out` (separate multiplies and adds, an exact division); the linear
/// weights only if `LINEAR`.
#[inline(always)]
fn lane_weights<const LINEAR: bool>(
    dx: f32,
    dy: f32,
    w1: [f32; 2],
    w2: [f32; 2],
    inv_w: [f32; 3],
    l: usize,
    out: &mut WarpWeights,
) {
    let l1 = w1[0] * dx + w1[1] * dy;
    let l2 = w2[0] * dx + w2[1] * dy;
    let linear = [1.0 - l1 - l2, l1, l2];
    let w = [0, 1, 2].map(|k| linear[k] * inv_w[k]);
    let sum = w[0] + w[1] + w[2];
    let r = 1.0 / sum;
    for k in 0..3 {
        if LINEAR {
            out.linear[k][l] = linear[k];
        }
        out.perspective[k][l] = w[k] * r;
    }
    out.inv_w[l] = sum;
}

rastra_texture::multiversion! {
/// [`weights_for_cpu`] for a warp whose quads share one triangle, `t`: the same
/// operations per lane, with the planes as scalars.
fn shared_weights_for_cpu(p: &WarpPoints, t: &Planes, out: &mut WarpWeights, linear: bool) {
    if linear {
        for l in 0..WARP_LANES {
            lane_weights::<true>(p.dx[l], p.dy[l], t.weight1, t.weight2, t.inv_w, l, out);
        }
    } else {
        for l in 0..WARP_LANES {
            lane_weights::<false>(p.dx[l], p.dy[l], t.weight1, t.weight2, t.inv_w, l, out);
        }
    }
}
}

/// The value of an attribute word a triangle's three vertices hold alike (`v`, raw bits),
/// when it is a finite number. A triangle all of whose attribute words are such values
/// (`Triangle::constant_attrs`) has every interpolated input equal to its vertices' value
/// over its whole plane, exactly — what interpolation gives every lane then, helper lanes
/// far outside the triangle included, without weighting (three weights that sum to one in
/// exact arithmetic need not once rounded, and a helper lane's perspective weights can be
/// infinite).
#[inline(always)]
pub fn constant_word(v: [u32; 3]) -> Option<u32> {
    (v[0] == v[1] && v[0] == v[2] && f32::from_bits(v[0]).is_finite()).then_some(v[0])
}

/// The weights `mode` interpolates with, or `None` for flat (the provoking vertex's value).
#[inline(always)]
fn mode_weights(mode: Interpolation, w: &WarpWeights) -> Option<&[[f32; WARP_LANES]; 3]> {
    match mode {
        Interpolation::Flat => None,
        Interpolation::Perspective => Some(&w.perspective),
        Interpolation::Linear => Some(&w.linear),
    }
}

/// Lane `l`'s interpolated value (raw bits) of vertex values `f` with weights `w`.
#[inline(always)]
fn lane_value(w: &[[f32; WARP_LANES]; 3], f: [f32; 3], l: usize) -> u32 {
    (w[0][l] * f[0] + w[1][l] * f[1] + w[2][l] * f[2]).to_bits()
}

/// [`interpolate_quads`] on the first `lanes` lanes (whole quads) at once, for a warp whose
/// quads share one triangle (whose vertices hold `v`): the same operations per lane.
#[inline(always)]
pub fn interpolate_lanes(
    mode: Interpolation,
    w: &WarpWeights,
    lanes: usize,
    v: [u32; 3],
    out: &mut [u32; WARP_LANES],
) {
    debug_assert!(lanes.is_multiple_of(4), "whole quads");
    match mode_weights(mode, w) {
        // A full warp: a loop of known length (straight vector code).
        Some(w) if lanes == WARP_LANES => {
            let f = v.map(f32::from_bits);
            for (l, o) in out.iter_mut().enumerate() {
                *o = lane_value(w, f, l);
            }
        }
        _ => interpolate_quads(mode, w, 0..lanes / 4, v, out),
    }
}

/// Interpolates one attribute word on the lanes of quads `quads` (quad `q` is lanes
/// `4q .. 4q + 4`), whose triangle's three vertices hold `v` (raw bits): a run of a warp's
/// quads from one triangle, its values read once for the run. (A triangle whose attributes
/// are all constant, [`constant_word`], is not interpolated: its inputs are its vertices'
/// values.)
#[inline(always)]
pub fn interpolate_quads(
    mode: Interpolation,
    w: &WarpWeights,
    quads: std::ops::Range<usize>,
    v: [u32; 3],
    out: &mut [u32; WARP_LANES],
) {
    let lanes = quads.start * 4..quads.end * 4;
    let Some(w) = mode_weights(mode, w) else {
        out[lanes].fill(v[0]);
        return;
    };
    let f = v.map(f32::from_bits);
    // Eight lanes (two quads) at a time, then a last quad: blocks of known length, so
    // straight vector code (a loop over the run's lanes one by one was not vectorised).
    #[inline(always)]
    fn block<const N: usize>(w: &[[f32; WARP_LANES]; 3], f: [f32; 3], at: usize, out: &mut [u32]) {
        let out: &mut [u32; N] = (&mut out[at..at + N]).try_into().expect("N lanes");
        // The weights' lanes as arrays of N too, so the lanes need no bounds test each (with
        // one per lane, the eight lanes were compiled as two four-lane halves), and
        // `lane_value`'s sum one term at a time over all N lanes, in its order (one loop
        // over the whole expression was not vectorised at all).
        let w: [&[f32; N]; 3] = w
            .each_ref()
            .map(|w| (&w[at..at + N]).try_into().expect("N lanes"));
        let mut sum = [0.0f32; N];
        for (s, w) in sum.iter_mut().zip(w[0]) {
            *s = w * f[0];
        }
        for (s, w) in sum.iter_mut().zip(w[1]) {
            *s += w * f[1];
        }
        for (s, w) in sum.iter_mut().zip(w[2]) {
            *s += w * f[2];
        }
        for (o, s) in out.iter_mut().zip(sum) {
            *o = s.to_bits();
        }
    }
    let mut at = lanes.start;
    while at + 8 <= lanes.end {
        block::<8>(w, f, at, out);
        at += 8;
    }
    if at < lanes.end {
        block::<4>(w, f, at, out);
    }
}

/// Pixel-centre position of pixel (px, py) in snapped units.
#[inline]
pub fn pixel_center(px: u32, py: u32) -> (Fixed, Fixed) {
    let half = 1 << (SUBPIXEL_BITS - 1);
    (
        ((px as Fixed) << SUBPIXEL_BITS) + half,
        ((py as Fixed) << SUBPIXEL_BITS) + half,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quad's four depths at once are bit for bit each pixel's [`depth_at`], for planes of
    /// every slope and quads anywhere in the guard band.
    #[test]
    fn quad_depths_equal_pixel_depths() {
        use crate::test_support::{setup_state, unit_values};
        let (w, h) = (1024u32, 1024u32);
        let setup = setup_state(w, h);
        let mut next = unit_values(0x6a09_e667);
        let mut checked = 0;
        for t in 0..300 {
            let p: [[f32; 4]; 3] = std::array::from_fn(|_| {
                let cw = if t % 2 == 0 { 1.0 } else { 0.2 + next() * 8.0 };
                let xy = [next() * 2.4 - 1.2, next() * 2.4 - 1.2];
                [xy[0] * cw, xy[1] * cw, next() * cw, cw]
            });
            let Ok(tri) = setup.setup([&p[0], &p[1], &p[2]], 0) else {
                continue;
            };
            for _ in 0..50 {
                let (x, y) = ((next() * 1022.0) as u32 & !1, (next() * 1022.0) as u32 & !1);
                let o = [(next() * 256.0) as Fixed, (next() * 256.0) as Fixed];
                let got = depth_at_quad(&tri, x, y, o).map(f32::to_bits);
                let want: [u32; 4] = std::array::from_fn(|i| {
                    let (px, py) = ((x + i as u32 % 2) as Fixed, (y + i as u32 / 2) as Fixed);
                    let at = |v: Fixed, o: Fixed| (v << SUBPIXEL_BITS) + o;
                    depth_at(&tri, at(px, o[0]), at(py, o[1])).to_bits()
                });
                assert_eq!(got, want, "triangle {t}, quad ({x}, {y}), offset {o:?}");
                checked += 1;
            }
        }
        assert!(checked > 5000);
    }

    #[test]
    fn only_finite_words_the_three_vertices_share_are_constant() {
        let b = f32::to_bits;
        assert_eq!(constant_word([b(0.1); 3]), Some(b(0.1)));
        assert_eq!(constant_word([b(-0.0); 3]), Some(b(-0.0)));
        // −0 and +0 are equal numbers but different words: interpolated.
        assert_eq!(constant_word([b(0.0), b(-0.0), b(0.0)]), None);
        assert_eq!(constant_word([b(0.1), b(0.1), b(0.2)]), None);
        for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert_eq!(constant_word([b(v); 3]), None, "{v}");
        }
    }
}
