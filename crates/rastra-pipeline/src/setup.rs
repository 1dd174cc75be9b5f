//! Projection, viewport transform, sub-pixel snapping, culling and triangle setup (T5
//! "Projection and viewport transform", "Back-face and other triangle culling"; T6 "So what
//! does triangle setup do?").
//!
//! Coordinate spaces, in order: clip space (`[f32; 4]`, what the vertex shader writes) →
//! NDC (divide by w) → framebuffer space (pixels, y down, viewport applied) → snapped
//! framebuffer space ([`Fixed`], 8 fractional bits, D3D11/Vulkan's required sub-pixel
//! precision). Everything from snapping on is integer: edge functions are exact, so
//! rasterization is watertight.
//!
//! Edge functions: for an edge from vertex i to vertex j and a point p (all in 1/256 pixel
//! units), `E(p) = (Xj − Xi)(py − Yi) − (Yj − Yi)(px − Xi)`. Setup orders the vertices so the
//! doubled area `A` is positive; then p is inside when all three `E(p) ≥ 0`, ties broken by
//! the top-left rule: a sample exactly on an edge is inside only if the edge is a top edge
//! (horizontal, interior below) or a left edge (interior to the right). Edge `k` is the one
//! opposite vertex `k`, so `E_k(p) / A` is vertex k's screen-space barycentric coordinate.

use crate::format::TextureFormat;
use crate::raster::SamplePattern;
use crate::state::{CullMode, DepthBias, FrontFace, ScissorRect, Viewport};

/// Fractional bits of snapped coordinates.
pub const SUBPIXEL_BITS: u32 = 8;
/// One pixel in snapped units.
pub const SUBPIXEL_ONE: i64 = 1 << SUBPIXEL_BITS;

/// A snapped framebuffer coordinate: pixels × 256.
pub type Fixed = i64;

/// Snaps a framebuffer coordinate to the sub-pixel grid (round to nearest, ties to even).
/// In f64, adding and removing 1.5·2⁵² rounds any value below 2⁵¹ in magnitude to an
/// integer, ties to even (the sum lies where doubles are the integers); an f32 that large
/// is an integer already. The same values as `f32::round_ties_even`, which is a C library
/// call on the x86-64 baseline (no SSE4.1 `roundss`): 1% of small_triangles' time.
#[inline]
pub fn snap(v: f32) -> Fixed {
    const ROUNDER: f64 = 6_755_399_441_055_744.0;
    let t = (v * SUBPIXEL_ONE as f32) as f64;
    let rounded = if t.abs() < 2_251_799_813_685_248.0 {
        (t + ROUNDER) - ROUNDER
    } else {
        t
    };
    rounded as Fixed
}

/// A vertex after the perspective divide and the viewport transform
/// ([`SetupState::project`]): its snapped framebuffer position, its depth and 1 / w.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Projected {
    pub xy: [Fixed; 2],
    pub z: f32,
    pub inv_w: f32,
}

/// One edge function `E(x, y) = a·x + b·y + c` over snapped coordinates, with the fill-rule
/// bias kept apart so barycentrics stay exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub a: i64,
    pub b: i64,
    pub c: i64,
    /// 0 for top and left edges, −1 otherwise: a sample is inside when `E + bias ≥ 0`.
    pub bias: i64,
}

impl Edge {
    fn new(from: [Fixed; 2], to: [Fixed; 2]) -> Edge {
        let dx = to[0] - from[0];
        let dy = to[1] - from[1];
        let top_left = dy < 0 || (dy == 0 && dx > 0);
        Edge {
            a: -dy,
            b: dx,
            c: dy * from[0] - dx * from[1],
            bias: if top_left { 0 } else { -1 },
        }
    }

    /// The edge function at a snapped point (unbiased).
    #[inline]
    pub fn eval(&self, x: Fixed, y: Fixed) -> i64 {
        self.a * x + self.b * y + self.c
    }

    /// Whether a snapped point is inside this edge under the top-left rule.
    #[inline]
    pub fn inside(&self, x: Fixed, y: Fixed) -> bool {
        self.eval(x, y) + self.bias >= 0
    }
}

/// Inclusive pixel rectangle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelRect {
    pub x0: u32,
    pub y0: u32,
    pub x1: u32,
    pub y1: u32,
}

/// A triangle ready for rasterization: the per-triangle constants T6 and T7 list.
#[derive(Clone, Debug)]
pub struct Triangle {
    /// Edge `k` is opposite vertex `k`.
    pub edges: [Edge; 3],
    /// Doubled area in snapped units², always positive.
    pub area: i64,
    /// Pixels that may hold covered samples, already clipped to viewport, scissor and
    /// framebuffer.
    pub bounds: PixelRect,
    /// Framebuffer depth of each vertex (viewport depth range applied).
    pub z: [f32; 3],
    /// 1 / clip w of each vertex, for perspective-correct interpolation.
    pub inv_w: [f32; 3],
    pub front_facing: bool,
    /// Every attribute word is the same finite number at the three vertices, so every
    /// interpolated input is constant over the triangle and needs no weights
    /// (`interpolate::constant_word`). Set when the triangle's attributes are stored.
    pub constant_attrs: bool,
    /// Screen-space plane equations of the barycentric weights of vertices 1 and 2 and of
    /// depth, relative to vertex 0 (T7: "interpolating Z boils down to two multiply-adds").
    pub planes: Planes,
    /// API-order index of each of the triangle's vertices (setup may swap 1 and 2 to make
    /// the area positive; vertex 0, the provoking vertex, never moves).
    pub vertex_order: [u8; 3],
    /// Index of the first of this triangle's three vertices' attribute blocks in the draw's
    /// attribute arena (`3 × varying_words` words, vertex order matching `z` and `inv_w`).
    pub attrs: u32,
}

/// Plane equations over snapped coordinates, relative to vertex 0: a quantity `q` at
/// `(x, y)` is `q0 + dq[0]·(x − origin.x) + dq[1]·(y − origin.y)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Planes {
    pub origin: [Fixed; 2],
    /// Gradients of the barycentric weights of vertices 1 and 2 (per snapped unit).
    pub weight1: [f32; 2],
    pub weight2: [f32; 2],
    /// Gradient of depth.
    pub z: [f32; 2],
}

impl Planes {
    fn new(edges: &[Edge; 3], area: i64, origin: [Fixed; 2], z: &[f32; 3]) -> Planes {
        let inv = 1.0 / area as f64;
        let w1 = [edges[1].a as f64 * inv, edges[1].b as f64 * inv];
        let w2 = [edges[2].a as f64 * inv, edges[2].b as f64 * inv];
        let dz1 = (z[1] - z[0]) as f64;
        let dz2 = (z[2] - z[0]) as f64;
        Planes {
            origin,
            weight1: w1.map(|v| v as f32),
            weight2: w2.map(|v| v as f32),
            z: [
                (dz1 * w1[0] + dz2 * w2[0]) as f32,
                (dz1 * w1[1] + dz2 * w2[1]) as f32,
            ],
        }
    }
}

/// Why setup dropped a triangle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Culled {
    ZeroArea,
    BackFace,
    OutsideScissor,
    /// Its bounding box (inside the scissor) holds no sample position.
    NoSample,
}

/// Per-draw setup configuration.
#[derive(Clone, Copy, Debug)]
pub struct SetupState {
    pub viewport: Viewport,
    /// Pixels the draw may touch: viewport ∩ scissor ∩ framebuffer, inclusive.
    pub clip_rect: Option<PixelRect>,
    /// The snapped viewport rectangle `[x0, y0, x1, y1]` when an edge is not on a pixel
    /// boundary (the rasterizer then tests samples against it).
    pub viewport_bounds: Option<[Fixed; 4]>,
    pub cull_mode: CullMode,
    pub front_face: FrontFace,
    /// Depth bias and the depth format it is measured in, when the pipeline biases depth.
    pub depth_bias: Option<(DepthBias, TextureFormat)>,
    /// Per axis, the least and greatest offset of a sample inside its pixel (1/256 pixel):
    /// a pixel can have a covered sample only where one of these offsets falls inside the
    /// triangle's snapped bounding box. 0 and 255 (the default) assume samples anywhere.
    pub sample_reach: [[Fixed; 2]; 2],
}

impl SetupState {
    pub fn new(
        viewport: Viewport,
        scissor: ScissorRect,
        width: u32,
        height: u32,
        cull_mode: CullMode,
        front_face: FrontFace,
    ) -> SetupState {
        let vx0 = viewport.x.floor().max(0.0) as u32;
        let vy0 = viewport.y.floor().max(0.0) as u32;
        let vx1 = ((viewport.x + viewport.width).ceil().max(0.0) as u32).min(width);
        let vy1 = ((viewport.y + viewport.height).ceil().max(0.0) as u32).min(height);
        let x0 = vx0.max(scissor.x);
        let y0 = vy0.max(scissor.y);
        let x1 = vx1.min(scissor.x.saturating_add(scissor.width)).min(width);
        let y1 = vy1
            .min(scissor.y.saturating_add(scissor.height))
            .min(height);
        let clip_rect = (x0 < x1 && y0 < y1).then(|| PixelRect {
            x0,
            y0,
            x1: x1 - 1,
            y1: y1 - 1,
        });
        let edges = [
            viewport.x,
            viewport.y,
            viewport.x + viewport.width,
            viewport.y + viewport.height,
        ];
        let viewport_bounds = edges
            .iter()
            .any(|e| e.fract() != 0.0)
            .then(|| edges.map(snap));
        SetupState {
            viewport,
            clip_rect,
            viewport_bounds,
            cull_mode,
            front_face,
            depth_bias: None,
            sample_reach: [[0, SUBPIXEL_ONE - 1]; 2],
        }
    }

    /// Bounds triangles by where `pattern`'s samples lie in a pixel, so a triangle whose
    /// bounding box holds no sample position is dropped at setup (the small-primitive
    /// culling of AMD's NGG shader culling in Mesa, `ac_nir_cull`; T6: a tiny triangle
    /// that covers nothing otherwise still costs set-up and a coarse and a fine step).
    pub fn with_samples(mut self, pattern: &SamplePattern) -> SetupState {
        let offsets = &pattern.offsets[..pattern.count as usize];
        self.sample_reach = [0, 1].map(|axis| {
            let along = offsets.iter().map(|o| o[axis]);
            [
                along.clone().min().unwrap_or(0),
                along.max().unwrap_or(SUBPIXEL_ONE - 1),
            ]
        });
        self
    }

    /// Biases every triangle's depth (a pipeline with depth bias, drawing into `format`).
    pub fn with_depth_bias(mut self, bias: DepthBias, format: TextureFormat) -> SetupState {
        self.depth_bias = bias.is_enabled().then_some((bias, format));
        self
    }

    /// One vertex through the perspective divide and the viewport transform, its position
    /// snapped: what every triangle using the vertex starts from, so a vertex batch does it
    /// once per vertex ([`crate::vertex::ShadedBatch::projected`]) rather than once per
    /// triangle.
    #[inline]
    pub fn project(&self, clip: &[f32; 4]) -> Projected {
        let vp = &self.viewport;
        let [x, y, zc, w] = *clip;
        let iw = 1.0 / w;
        let (nx, ny, nz) = (x * iw, y * iw, zc * iw);
        let fx = vp.x + (nx + 1.0) * 0.5 * vp.width;
        let fy = vp.y + (1.0 - ny) * 0.5 * vp.height;
        // Depth clamping (unclipped depth) happens per sample in the depth unit.
        let fz = vp.min_depth + nz * (vp.max_depth - vp.min_depth);
        Projected {
            xy: [snap(fx), snap(fy)],
            z: fz,
            inv_w: iw,
        }
    }

    /// [`SetupState::project`] of every position of a vertex batch, in order, into `out`
    /// (cleared first). On x86-64 with AVX2, four vertices at a time: the same f32
    /// operations in the same order (no fused multiply-add), so the same bits, and the
    /// snap's f64 rounding with its integer taken from the rounded double's bits. A group
    /// with a coordinate the rounding does not cover (2⁵¹ sub-pixels and beyond, or NaN)
    /// is projected vertex by vertex.
    pub fn project_all(&self, positions: &[[f32; 4]], out: &mut Vec<Projected>) {
        out.clear();
        out.reserve(positions.len());
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut rest = positions;
        #[cfg(target_arch = "x86_64")]
        if rastra_texture::cpu::wide() {
            let groups = positions.chunks_exact(4);
            rest = groups.remainder();
            for group in groups {
                let group: &[[f32; 4]; 4] = group.try_into().expect("four positions");
                // SAFETY: `wide()` is true only when the CPU has AVX2.
                match unsafe { self.project4_avx2(group) } {
                    Some(four) => out.extend_from_slice(&four),
                    None => out.extend(group.iter().map(|p| self.project(p))),
                }
            }
        }
        out.extend(rest.iter().map(|p| self.project(p)));
    }

    /// [`SetupState::project`] of four vertices in SSE/AVX2 lanes, or `None` when a
    /// coordinate lies outside what the snap's rounding covers.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn project4_avx2(&self, clip: &[[f32; 4]; 4]) -> Option<[Projected; 4]> {
        use std::arch::x86_64::*;
        let vp = &self.viewport;
        // SAFETY: each position is four readable floats.
        let rows = clip.each_ref().map(|p| unsafe { _mm_loadu_ps(p.as_ptr()) });
        // Transposed: x, y, z and w of the four vertices.
        let (t0, t1) = (
            _mm_unpacklo_ps(rows[0], rows[1]),
            _mm_unpacklo_ps(rows[2], rows[3]),
        );
        let (t2, t3) = (
            _mm_unpackhi_ps(rows[0], rows[1]),
            _mm_unpackhi_ps(rows[2], rows[3]),
        );
        let (x, y) = (_mm_movelh_ps(t0, t1), _mm_movehl_ps(t1, t0));
        let (zc, w) = (_mm_movelh_ps(t2, t3), _mm_movehl_ps(t3, t2));
        let splat = _mm_set1_ps;
        let iw = _mm_div_ps(splat(1.0), w);
        let (nx, ny, nz) = (_mm_mul_ps(x, iw), _mm_mul_ps(y, iw), _mm_mul_ps(zc, iw));
        // `project`'s expressions, left to right.
        let half = splat(0.5);
        let fx = _mm_add_ps(
            splat(vp.x),
            _mm_mul_ps(
                _mm_mul_ps(_mm_add_ps(nx, splat(1.0)), half),
                splat(vp.width),
            ),
        );
        let fy = _mm_add_ps(
            splat(vp.y),
            _mm_mul_ps(
                _mm_mul_ps(_mm_sub_ps(splat(1.0), ny), half),
                splat(vp.height),
            ),
        );
        let fz = _mm_add_ps(
            splat(vp.min_depth),
            _mm_mul_ps(nz, splat(vp.max_depth - vp.min_depth)),
        );
        // `snap`: t = (v · 256) as f64, rounded by adding and removing 1.5·2⁵² where
        // |t| < 2⁵¹; the sum's bits less the constant's are then the rounded integer (the
        // sum lies in [2⁵², 2⁵³), where doubles are the integers and their bits step by
        // one).
        const ROUNDER: f64 = 6_755_399_441_055_744.0;
        let snap = |v: __m128| -> Option<__m256i> {
            let t = _mm256_cvtps_pd(_mm_mul_ps(v, splat(SUBPIXEL_ONE as f32)));
            let magnitude = _mm256_andnot_pd(_mm256_set1_pd(-0.0), t);
            let covered =
                _mm256_cmp_pd::<_CMP_LT_OQ>(magnitude, _mm256_set1_pd(2_251_799_813_685_248.0));
            if _mm256_movemask_pd(covered) != 0xf {
                return None;
            }
            let sum = _mm256_castpd_si256(_mm256_add_pd(t, _mm256_set1_pd(ROUNDER)));
            Some(_mm256_sub_epi64(
                sum,
                _mm256_set1_epi64x(ROUNDER.to_bits() as i64),
            ))
        };
        let (sx, sy) = (snap(fx)?, snap(fy)?);
        let mut xs = [0i64; 4];
        let mut ys = [0i64; 4];
        let mut zs = [0f32; 4];
        let mut ws = [0f32; 4];
        // SAFETY: four 64-bit or 32-bit lanes into arrays of four.
        unsafe {
            _mm256_storeu_si256(xs.as_mut_ptr().cast(), sx);
            _mm256_storeu_si256(ys.as_mut_ptr().cast(), sy);
            _mm_storeu_ps(zs.as_mut_ptr(), fz);
            _mm_storeu_ps(ws.as_mut_ptr(), iw);
        }
        Some(std::array::from_fn(|i| Projected {
            xy: [xs[i], ys[i]],
            z: zs[i],
            inv_w: ws[i],
        }))
    }

    /// Projects, snaps, culls and sets up one triangle. `attrs` is stored as given.
    pub fn setup(&self, clip: [&[f32; 4]; 3], attrs: u32) -> Result<Triangle, Culled> {
        let projected = clip.map(|c| self.project(c));
        self.setup_projected(projected.each_ref(), attrs)
    }

    /// [`SetupState::setup`] of a triangle whose vertices are projected already.
    /// The vertices come by reference: an array of them built by value and passed on was
    /// copied with loads wider than the stores that built it, which the CPU cannot forward
    /// (a stall at every triangle: `perf` put 2.5% of the model's one-thread samples on
    /// the one load after the copy).
    pub fn setup_projected(&self, v: [&Projected; 3], attrs: u32) -> Result<Triangle, Culled> {
        let fixed = v.map(|v| v.xy);
        let z = v.map(|v| v.z);
        let inv_w = v.map(|v| v.inv_w);
        let [p0, p1, p2] = fixed;
        let area = (p1[0] - p0[0]) * (p2[1] - p0[1]) - (p2[0] - p0[0]) * (p1[1] - p0[1]);
        if area == 0 {
            return Err(Culled::ZeroArea);
        }
        // Framebuffer y points down, so a counter-clockwise triangle (as seen with y up, the
        // way WebGPU/Vulkan define winding) has a negative area here.
        let front_facing = match self.front_face {
            FrontFace::Ccw => area < 0,
            FrontFace::Cw => area > 0,
        };
        match (self.cull_mode, front_facing) {
            (CullMode::Back, false) | (CullMode::Front, true) => return Err(Culled::BackFace),
            _ => {}
        }
        // Orient positively by swapping vertices 1 and 2 (vertex 0, the provoking vertex,
        // stays first). `order` says where each original vertex went.
        let order: [u8; 3] = if area > 0 { [0, 1, 2] } else { [0, 2, 1] };
        let p = order.map(|k| fixed[k as usize]);
        let area = area.abs();
        let edges = [
            Edge::new(p[1], p[2]),
            Edge::new(p[2], p[0]),
            Edge::new(p[0], p[1]),
        ];
        let Some(rect) = self.clip_rect else {
            return Err(Culled::OutsideScissor);
        };
        let min_x = p.iter().map(|v| v[0]).min().unwrap();
        let max_x = p.iter().map(|v| v[0]).max().unwrap();
        let min_y = p.iter().map(|v| v[1]).min().unwrap();
        let max_y = p.iter().map(|v| v[1]).max().unwrap();
        // A pixel's samples lie inside it, so pixels outside [min, max] >> 8 can hold no
        // covered sample.
        let (x0, y0) = (rect.x0 as i64, rect.y0 as i64);
        let (x1, y1) = (rect.x1 as i64, rect.y1 as i64);
        if (max_x >> SUBPIXEL_BITS) < x0
            || (min_x >> SUBPIXEL_BITS) > x1
            || (max_y >> SUBPIXEL_BITS) < y0
            || (min_y >> SUBPIXEL_BITS) > y1
        {
            return Err(Culled::OutsideScissor);
        }
        // Nor can a pixel none of whose sample offsets falls inside [min, max]: pixel x's
        // samples reach x · 256 + [lo, hi], so x runs from ⌈(min − hi) / 256⌉ to
        // ⌊(max − lo) / 256⌋ (an arithmetic shift floors).
        let [[lo_x, hi_x], [lo_y, hi_y]] = self.sample_reach;
        let one = SUBPIXEL_ONE - 1;
        let bx0 = ((min_x - hi_x + one) >> SUBPIXEL_BITS).max(x0);
        let by0 = ((min_y - hi_y + one) >> SUBPIXEL_BITS).max(y0);
        let bx1 = ((max_x - lo_x) >> SUBPIXEL_BITS).min(x1);
        let by1 = ((max_y - lo_y) >> SUBPIXEL_BITS).min(y1);
        if bx0 > bx1 || by0 > by1 {
            return Err(Culled::NoSample);
        }
        let mut z = order.map(|k| z[k as usize]);
        let mut planes = Planes::new(&edges, area, p[0], &z);
        if let Some((bias, format)) = self.depth_bias {
            // The plane's gradient is per sub-pixel unit; the bias wants it per pixel. A
            // constant offset moves the whole plane, so the vertex depths carry it.
            let unit = (1 << SUBPIXEL_BITS) as f32;
            let slope = planes.z[0].abs().max(planes.z[1].abs()) * unit;
            let max_z = z.iter().fold(0f32, |m, v| m.max(v.abs()));
            let o = bias.offset(format, slope, max_z);
            z = z.map(|v| v + o);
            planes = Planes::new(&edges, area, p[0], &z);
        }
        Ok(Triangle {
            planes,
            edges,
            area,
            bounds: PixelRect {
                x0: bx0 as u32,
                y0: by0 as u32,
                x1: bx1 as u32,
                y1: by1 as u32,
            },
            z,
            inv_w: order.map(|k| inv_w[k as usize]),
            front_facing,
            constant_attrs: false,
            vertex_order: order,
            attrs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `snap` rounds exactly as `round_ties_even`: at every half-unit tie and its
    /// neighbours over small and large magnitudes, at the power-of-two boundaries where
    /// floats stop having fractions, and at infinities and NaN.
    #[test]
    fn snap_rounds_ties_to_even() {
        let reference = |v: f32| (v * SUBPIXEL_ONE as f32).round_ties_even() as Fixed;
        let mut values = vec![
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
        ];
        for k in -2000i32..2000 {
            let tie = (k as f32 + 0.5) / SUBPIXEL_ONE as f32;
            let bits = tie.to_bits();
            values.extend([tie, f32::from_bits(bits + 1), f32::from_bits(bits - 1)]);
        }
        for e in 0..40 {
            let p = 2f32.powi(e) / SUBPIXEL_ONE as f32;
            for m in [-1.5f32, -1.0, -0.75, 0.75, 1.0, 1.25, 1.5, 1.75] {
                let v = p * m;
                let bits = v.to_bits();
                values.extend([v, f32::from_bits(bits + 1), f32::from_bits(bits - 1)]);
            }
        }
        for v in values {
            assert_eq!(snap(v), reference(v), "{v:e}");
        }
    }

    /// A batch's projection four vertices at a time gives `project`'s bits, vertex by
    /// vertex: over random positions (near and far from the viewport, w of either sign,
    /// w near zero), over coordinates at and past the snap's range (2⁵¹ sub-pixels), and
    /// infinities and NaN mixed into groups of otherwise ordinary vertices, under a
    /// fractional viewport with a depth range, for lengths that leave a remainder.
    #[test]
    fn batch_projection_equals_vertex_by_vertex() {
        let viewport = Viewport {
            x: 3.25,
            y: -7.5,
            width: 1913.75,
            height: 1071.5,
            min_depth: 0.125,
            max_depth: 0.875,
        };
        let setup = SetupState::new(
            viewport,
            ScissorRect::covering(1920, 1080),
            1920,
            1080,
            CullMode::None,
            FrontFace::Ccw,
        );
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let specials = [
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-30,
            -1e-30,
            0.0,
            -0.0,
            // Past the snap's range once divided by a small w.
            1e13,
            -1e13,
            f32::MAX,
        ];
        let mut positions = Vec::new();
        for k in 0..4001 {
            let mut unit = || (next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
            let w = match k % 5 {
                0 => unit() * 1e-6,
                1 => -1.0 - unit().abs() * 10.0,
                _ => 0.01 + unit().abs() * 100.0,
            };
            let mut p = [unit() * 3.0 * w, unit() * 3.0 * w, unit() * w, w];
            if k % 7 == 3 {
                let r = next() as usize;
                p[r % 4] = specials[(r >> 8) % specials.len()];
            }
            positions.push(p);
        }
        let mut batch = Vec::new();
        for len in [0, 1, 3, 4, 5, 64, positions.len()] {
            setup.project_all(&positions[..len], &mut batch);
            assert_eq!(batch.len(), len);
            for (p, got) in positions.iter().zip(&batch) {
                let want = setup.project(p);
                let bits = |v: &Projected| (v.xy, v.z.to_bits(), v.inv_w.to_bits());
                assert_eq!(bits(got), bits(&want), "{p:?}");
            }
        }
    }
}
