//! Clipping and frustum culling (T5 "Viewport culling and clipping", "Guard-band clipping",
//! "Aside: Getting clipping right").
//!
//! Each vertex gets an out-code against the view frustum (`-w ≤ x, y ≤ w`, `0 ≤ z ≤ w`) and
//! against the guard band. A triangle whose vertices share an outside frustum plane is
//! rejected; a triangle inside the guard band and the near/far planes goes on unclipped (the
//! rasterizer's viewport scissor does the side clipping); only the rest is clipped
//! geometrically, against near, far and the guard-band planes.
//!
//! Clipper invariants, as T5 lists them:
//! - vertices inside every plane are passed on bit-exact (they are copied, never recomputed);
//! - an edge is always clipped from its inside vertex towards its outside vertex, so AB and BA
//!   give bit-identical intersections;
//! - planes are applied in one fixed order ([`PLANE_ORDER`]);
//! - the side planes clipped against are the guard-band planes, never the viewport's.

use rastra_shader::Interpolation;

use crate::state::Viewport;

/// Distance in pixels from the viewport centre to the guard-band edges. Snapped coordinates
/// then stay below 2^20 pixels (2^28 in 1/256 units), which keeps every edge-function product
/// of the rasterizer inside an `i64` with room to spare.
pub const GUARD_BAND_PIXELS: f32 = 524_288.0;

/// The clip planes, in the fixed order the clipper applies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plane {
    /// `z ≥ 0`
    Near,
    /// `z ≤ w`
    Far,
    /// `w ≥ W_MIN`: keeps the divide by w finite (with unclipped depth it is the only plane
    /// in front of the eye).
    PositiveW,
    /// `x ≥ -g·w` (guard band)
    Left,
    /// `x ≤ g·w`
    Right,
    /// `y ≥ -g·w`
    Bottom,
    /// `y ≤ g·w`
    Top,
}

/// The order planes are clipped in.
pub const PLANE_ORDER: [Plane; 7] = [
    Plane::Near,
    Plane::Far,
    Plane::PositiveW,
    Plane::Left,
    Plane::Right,
    Plane::Bottom,
    Plane::Top,
];

/// Smallest `w` kept when depth is unclipped.
const W_MIN: f32 = 1.0e-6;

// Out-code bits: frustum planes first (trivial reject), then the guard band.
const OUT_LEFT: u16 = 1 << 0;
const OUT_RIGHT: u16 = 1 << 1;
const OUT_BOTTOM: u16 = 1 << 2;
const OUT_TOP: u16 = 1 << 3;
const OUT_NEAR: u16 = 1 << 4;
const OUT_FAR: u16 = 1 << 5;
const OUT_GB_LEFT: u16 = 1 << 6;
const OUT_GB_RIGHT: u16 = 1 << 7;
const OUT_GB_BOTTOM: u16 = 1 << 8;
const OUT_GB_TOP: u16 = 1 << 9;
const OUT_W: u16 = 1 << 10;
/// A coordinate is NaN or infinite: the primitive is dropped whole.
const OUT_INVALID: u16 = 1 << 11;

/// Per-draw clipping configuration derived from the viewport.
#[derive(Clone, Copy, Debug)]
pub struct ClipSpace {
    /// Guard-band extent in NDC units, x and y.
    pub guard: [f32; 2],
    /// Depth clamp instead of near/far clipping.
    pub unclipped_depth: bool,
}

impl ClipSpace {
    pub fn new(viewport: &Viewport, unclipped_depth: bool) -> ClipSpace {
        ClipSpace {
            guard: [
                GUARD_BAND_PIXELS / (viewport.width * 0.5).max(1.0),
                GUARD_BAND_PIXELS / (viewport.height * 0.5).max(1.0),
            ],
            unclipped_depth,
        }
    }

    /// The out-code of a clip-space position.
    #[inline]
    pub fn outcode(&self, p: &[f32; 4]) -> u16 {
        let [x, y, z, w] = *p;
        if !(x.is_finite() && y.is_finite() && z.is_finite() && w.is_finite()) {
            return OUT_INVALID;
        }
        let [gx, gy] = self.guard;
        let mut code = 0;
        if x < -w {
            code |= OUT_LEFT;
        }
        if x > w {
            code |= OUT_RIGHT;
        }
        if y < -w {
            code |= OUT_BOTTOM;
        }
        if y > w {
            code |= OUT_TOP;
        }
        if !self.unclipped_depth {
            if z < 0.0 {
                code |= OUT_NEAR;
            }
            if z > w {
                code |= OUT_FAR;
            }
        }
        // Also with depth clipping: (0, 0, 0, 0) is inside every other plane.
        if w < W_MIN {
            code |= OUT_W;
        }
        if x < -gx * w {
            code |= OUT_GB_LEFT;
        }
        if x > gx * w {
            code |= OUT_GB_RIGHT;
        }
        if y < -gy * w {
            code |= OUT_GB_BOTTOM;
        }
        if y > gy * w {
            code |= OUT_GB_TOP;
        }
        code
    }

    fn distance(&self, plane: Plane, p: &[f32; 4]) -> f32 {
        let [x, y, z, w] = *p;
        let [gx, gy] = self.guard;
        match plane {
            Plane::Near => z,
            Plane::Far => w - z,
            Plane::PositiveW => w - W_MIN,
            Plane::Left => x + gx * w,
            Plane::Right => gx * w - x,
            Plane::Bottom => y + gy * w,
            Plane::Top => gy * w - y,
        }
    }

    fn plane_bit(plane: Plane) -> u16 {
        match plane {
            Plane::Near => OUT_NEAR,
            Plane::Far => OUT_FAR,
            Plane::PositiveW => OUT_W,
            Plane::Left => OUT_GB_LEFT,
            Plane::Right => OUT_GB_RIGHT,
            Plane::Bottom => OUT_GB_BOTTOM,
            Plane::Top => OUT_GB_TOP,
        }
    }
}

/// What the clip stage decided for one triangle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClipDecision {
    /// Entirely outside one frustum plane.
    Reject,
    /// Inside the guard band and depth range: pass on unchanged.
    Accept,
    /// Must be clipped geometrically.
    Clip,
}

/// Trivial accept/reject from the three out-codes. A primitive with a non-finite vertex
/// position is rejected.
#[inline]
pub fn classify(codes: [u16; 3]) -> ClipDecision {
    if (codes[0] | codes[1] | codes[2]) & OUT_INVALID != 0 {
        return ClipDecision::Reject;
    }
    const FRUSTUM: u16 = OUT_LEFT | OUT_RIGHT | OUT_BOTTOM | OUT_TOP | OUT_NEAR | OUT_FAR | OUT_W;
    const MUST_CLIP: u16 =
        OUT_NEAR | OUT_FAR | OUT_W | OUT_GB_LEFT | OUT_GB_RIGHT | OUT_GB_BOTTOM | OUT_GB_TOP;
    if codes[0] & codes[1] & codes[2] & FRUSTUM != 0 {
        ClipDecision::Reject
    } else if (codes[0] | codes[1] | codes[2]) & MUST_CLIP == 0 {
        ClipDecision::Accept
    } else {
        ClipDecision::Clip
    }
}

/// A polygon being clipped: positions plus `words` attribute words per vertex.
#[derive(Clone, Debug, Default)]
pub struct Polygon {
    pub positions: Vec<[f32; 4]>,
    pub attrs: Vec<u32>,
    pub words: usize,
}

impl Polygon {
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    fn clear(&mut self, words: usize) {
        self.positions.clear();
        self.attrs.clear();
        self.words = words;
    }

    fn push_copy(&mut self, from: &Polygon, i: usize) {
        self.positions.push(from.positions[i]);
        let w = from.words;
        self.attrs
            .extend_from_slice(&from.attrs[i * w..(i + 1) * w]);
    }

    /// Pushes the point `t` of the way (in clip space) from vertex `inside` to vertex
    /// `outside` of `from`. Perspective-interpolated words use `t`; no-perspective words use
    /// the matching screen-space parameter `t·w_out / w_new`, so they stay linear on screen
    /// (Vulkan §"Primitive Clipping"); flat words are copied from `inside` (the clipper later
    /// replaces them with the provoking vertex's values anyway).
    fn push_intersection(
        &mut self,
        from: &Polygon,
        inside: usize,
        outside: usize,
        t: f32,
        modes: &[Interpolation],
    ) {
        let a = from.positions[inside];
        let b = from.positions[outside];
        let p: [f32; 4] = std::array::from_fn(|k| a[k] + t * (b[k] - a[k]));
        self.positions.push(p);
        let screen_t = if p[3] != 0.0 { t * b[3] / p[3] } else { t };
        let w = from.words;
        for (k, mode) in modes.iter().enumerate() {
            let va = from.attrs[inside * w + k];
            let vb = from.attrs[outside * w + k];
            let t = match mode {
                Interpolation::Flat => {
                    self.attrs.push(va);
                    continue;
                }
                Interpolation::Perspective => t,
                Interpolation::Linear => screen_t,
            };
            let (fa, fb) = (f32::from_bits(va), f32::from_bits(vb));
            self.attrs.push((fa + t * (fb - fa)).to_bits());
        }
    }
}

/// Scratch space for clipping, reused across triangles.
#[derive(Default)]
pub struct Clipper {
    a: Polygon,
    b: Polygon,
}

impl Clipper {
    /// Clips a triangle against every plane its out-codes cross, in [`PLANE_ORDER`].
    /// `modes[k]` is how attribute word `k` is interpolated; in the result flat words all hold
    /// the first (provoking) vertex's values. Returns the clipped polygon (possibly empty),
    /// whose vertex 0 is a fan centre.
    pub fn clip(
        &mut self,
        space: &ClipSpace,
        positions: [&[f32; 4]; 3],
        attrs: [&[u32]; 3],
        codes: [u16; 3],
        modes: &[Interpolation],
    ) -> &Polygon {
        let words = modes.len();
        self.a.clear(words);
        for k in 0..3 {
            self.a.positions.push(*positions[k]);
            self.a.attrs.extend_from_slice(attrs[k]);
        }
        let crossed = codes[0] | codes[1] | codes[2];
        for plane in PLANE_ORDER {
            if crossed & ClipSpace::plane_bit(plane) == 0 || self.a.is_empty() {
                continue;
            }
            self.b.clear(words);
            let n = self.a.len();
            for i in 0..n {
                let j = (i + 1) % n;
                let di = space.distance(plane, &self.a.positions[i]);
                let dj = space.distance(plane, &self.a.positions[j]);
                let i_in = di >= 0.0;
                let j_in = dj >= 0.0;
                if i_in {
                    self.b.push_copy(&self.a, i);
                }
                if i_in != j_in {
                    // Always from the inside vertex towards the outside one.
                    let (inside, outside, d_in, d_out) =
                        if i_in { (i, j, di, dj) } else { (j, i, dj, di) };
                    let t = d_in / (d_in - d_out);
                    self.b.push_intersection(&self.a, inside, outside, t, modes);
                }
            }
            std::mem::swap(&mut self.a, &mut self.b);
        }
        // Flat attributes come from the original provoking vertex.
        for v in 0..self.a.len() {
            for k in 0..words {
                if modes[k] == Interpolation::Flat {
                    self.a.attrs[v * words + k] = attrs[0][k];
                }
            }
        }
        &self.a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn space() -> ClipSpace {
        ClipSpace::new(&Viewport::covering(64, 64), false)
    }

    #[test]
    fn classify_rejects_accepts_and_clips() {
        let s = space();
        let inside = [0.0, 0.0, 0.5, 1.0];
        let left = [-2.0, 0.0, 0.5, 1.0];
        let behind = [0.0, 0.0, -1.0, 1.0];
        let codes = |v: [[f32; 4]; 3]| v.map(|p| s.outcode(&p));
        assert_eq!(classify(codes([left, left, left])), ClipDecision::Reject);
        assert_eq!(
            classify(codes([inside, left, inside])),
            ClipDecision::Accept
        );
        assert_eq!(
            classify(codes([inside, behind, inside])),
            ClipDecision::Clip
        );
    }

    fn clip_tri(s: &ClipSpace, tri: [[f32; 4]; 3]) -> Vec<[f32; 4]> {
        let codes = tri.map(|p| s.outcode(&p));
        let mut c = Clipper::default();
        let attrs: [&[u32]; 3] = [&[], &[], &[]];
        c.clip(s, [&tri[0], &tri[1], &tri[2]], attrs, codes, &[])
            .positions
            .clone()
    }

    fn coord() -> impl Strategy<Value = f32> {
        -3.0f32..3.0
    }

    fn vertex() -> impl Strategy<Value = [f32; 4]> {
        (coord(), coord(), coord(), 0.2f32..3.0).prop_map(|(x, y, z, w)| [x, y, z, w])
    }

    proptest! {
        /// Vertices inside every plane come out bit-exact, and every output vertex is inside.
        #[test]
        fn inside_vertices_preserved_bit_exact(a in vertex(), b in vertex(), c in vertex()) {
            let s = space();
            let tri = [a, b, c];
            let out = clip_tri(&s, tri);
            for v in &tri {
                if s.outcode(v) & (OUT_NEAR | OUT_FAR) == 0 {
                    prop_assert!(out.iter().any(|o| o.map(f32::to_bits) == v.map(f32::to_bits)));
                }
            }
            for o in &out {
                prop_assert!(o[2] >= -1e-5 * o[3].abs() && o[2] <= o[3] * (1.0 + 1e-5));
            }
        }

        /// Clipping edge AB gives the same vertices as clipping BA.
        #[test]
        fn edge_direction_does_not_matter(a in vertex(), b in vertex(), c in vertex()) {
            let s = space();
            let mut fwd: Vec<_> = clip_tri(&s, [a, b, c]).iter().map(|v| v.map(f32::to_bits)).collect();
            let mut rev: Vec<_> = clip_tri(&s, [a, c, b]).iter().map(|v| v.map(f32::to_bits)).collect();
            fwd.sort();
            rev.sort();
            prop_assert_eq!(fwd, rev);
        }
    }
}
