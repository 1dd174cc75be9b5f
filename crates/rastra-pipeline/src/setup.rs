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
        }
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
        // A pixel's samples lie strictly inside it, so pixels outside [min, max] >> 8 can
        // hold no covered sample.
        let bx0 = (min_x >> SUBPIXEL_BITS).max(rect.x0 as i64);
        let by0 = (min_y >> SUBPIXEL_BITS).max(rect.y0 as i64);
        let bx1 = (max_x >> SUBPIXEL_BITS).min(rect.x1 as i64);
        let by1 = (max_y >> SUBPIXEL_BITS).min(rect.y1 as i64);
        if bx0 > bx1 || by0 > by1 {
            return Err(Culled::OutsideScissor);
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
}
