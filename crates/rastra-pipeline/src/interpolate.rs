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

/// The points a warp's lanes are shaded at, with each lane's triangle's plane gradients,
/// one array per quantity (structure of arrays, so the loops over lanes compile to SIMD
/// instructions). Each lane computes what [`depth_at`] computes for its point, in the same
/// order, so both give identical bits.
#[derive(Clone, Copy, Debug, Default)]
pub struct WarpPoints {
    dx: [f32; WARP_LANES],
    dy: [f32; WARP_LANES],
    weight1: [[f32; WARP_LANES]; 2],
    weight2: [[f32; WARP_LANES]; 2],
    inv_w: [[f32; WARP_LANES]; 3],
    z0: [f32; WARP_LANES],
    dz: [[f32; WARP_LANES]; 2],
}

/// A warp's barycentric weights at its points, one array per weight: screen-space
/// (no-perspective) weights, perspective-correct weights, and the interpolated 1 / w.
#[derive(Clone, Copy, Debug)]
pub struct WarpWeights {
    pub linear: [[f32; WARP_LANES]; 3],
    pub perspective: [[f32; WARP_LANES]; 3],
    pub inv_w: [f32; WARP_LANES],
}

impl WarpPoints {
    /// Places `lane` at snapped point (x, y) of `tri`.
    #[inline]
    pub fn set(&mut self, lane: usize, tri: &Triangle, x: Fixed, y: Fixed) {
        let p = &tri.planes;
        self.dx[lane] = (x - p.origin[0]) as f32;
        self.dy[lane] = (y - p.origin[1]) as f32;
        for k in 0..2 {
            self.weight1[k][lane] = p.weight1[k];
            self.weight2[k][lane] = p.weight2[k];
            self.dz[k][lane] = p.z[k];
        }
        for k in 0..3 {
            self.inv_w[k][lane] = tri.inv_w[k];
        }
        self.z0[lane] = tri.z[0];
    }

    /// Every lane's weights (lanes never set give meaningless values).
    pub fn weights(&self) -> WarpWeights {
        let mut out = WarpWeights {
            linear: [[0.0; WARP_LANES]; 3],
            perspective: [[0.0; WARP_LANES]; 3],
            inv_w: [0.0; WARP_LANES],
        };
        for l in 0..WARP_LANES {
            let (dx, dy) = (self.dx[l], self.dy[l]);
            let l1 = self.weight1[0][l] * dx + self.weight1[1][l] * dy;
            let l2 = self.weight2[0][l] * dx + self.weight2[1][l] * dy;
            let linear = [1.0 - l1 - l2, l1, l2];
            let q = [0, 1, 2].map(|k| linear[k] * self.inv_w[k][l]);
            let inv_w = q[0] + q[1] + q[2];
            let r = 1.0 / inv_w;
            for k in 0..3 {
                out.linear[k][l] = linear[k];
                out.perspective[k][l] = q[k] * r;
            }
            out.inv_w[l] = inv_w;
        }
        out
    }

    /// Every lane's depth.
    pub fn depths(&self) -> [f32; WARP_LANES] {
        let mut z = [0.0; WARP_LANES];
        for (l, z) in z.iter_mut().enumerate() {
            *z = self.z0[l] + self.dz[0][l] * self.dx[l] + self.dz[1][l] * self.dy[l];
        }
        z
    }
}

/// Interpolates one attribute word on every lane from each lane's three vertex values
/// (raw bits).
#[inline]
pub fn interpolate_lanes(
    mode: Interpolation,
    w: &WarpWeights,
    v: &[[u32; WARP_LANES]; 3],
    out: &mut [u32; WARP_LANES],
) {
    let w = match mode {
        Interpolation::Flat => {
            *out = v[0];
            return;
        }
        Interpolation::Perspective => &w.perspective,
        Interpolation::Linear => &w.linear,
    };
    for l in 0..WARP_LANES {
        let f = [0, 1, 2].map(|k| f32::from_bits(v[k][l]));
        out[l] = (w[0][l] * f[0] + w[1][l] * f[1] + w[2][l] * f[2]).to_bits();
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
