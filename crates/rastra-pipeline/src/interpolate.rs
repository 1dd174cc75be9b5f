//! Attribute interpolation (T7 "Interpolated values", T8 "Attribute interpolation"): the
//! barycentric approach — the rasterizer's integer edge functions give screen-space
//! barycentrics, perspective correction divides them by each vertex's w, and every varying
//! is then a weighted sum of its three vertex values. Depth is interpolated linearly in
//! screen space (it was divided by w at projection).

use rastra_shader::Interpolation;

use crate::setup::{Fixed, SUBPIXEL_BITS, Triangle};

/// Barycentric weights at one point of a triangle.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Barycentrics {
    /// Screen-space (no-perspective) weights.
    pub linear: [f32; 3],
    /// Perspective-correct weights.
    pub perspective: [f32; 3],
    /// Interpolated 1 / w.
    pub inv_w: f32,
}

/// Screen-space weights at a snapped point, from the setup plane equations; they sum to 1.
#[inline]
pub fn linear_weights(tri: &Triangle, x: Fixed, y: Fixed) -> [f32; 3] {
    let p = &tri.planes;
    let dx = (x - p.origin[0]) as f32;
    let dy = (y - p.origin[1]) as f32;
    let l1 = p.weight1[0] * dx + p.weight1[1] * dy;
    let l2 = p.weight2[0] * dx + p.weight2[1] * dy;
    [1.0 - l1 - l2, l1, l2]
}

/// Depth at a snapped point: vertex 0's depth plus the depth plane's two multiply-adds.
#[inline]
pub fn depth_at(tri: &Triangle, x: Fixed, y: Fixed) -> f32 {
    let p = &tri.planes;
    let dx = (x - p.origin[0]) as f32;
    let dy = (y - p.origin[1]) as f32;
    tri.z[0] + p.z[0] * dx + p.z[1] * dy
}

/// All weights at a point given in pixels (e.g. a pixel centre, `px + 0.5`), as sub-pixel
/// fixed point.
#[inline]
pub fn barycentrics(tri: &Triangle, x: Fixed, y: Fixed) -> Barycentrics {
    let linear = linear_weights(tri, x, y);
    let q = [0, 1, 2].map(|k| linear[k] * tri.inv_w[k]);
    let inv_w = q[0] + q[1] + q[2];
    let r = 1.0 / inv_w;
    Barycentrics {
        linear,
        perspective: q.map(|v| v * r),
        inv_w,
    }
}

/// Interpolates one attribute word from the three vertex values (raw bits).
#[inline]
pub fn interpolate_word(mode: Interpolation, b: &Barycentrics, v: [u32; 3]) -> u32 {
    let w = match mode {
        Interpolation::Flat => return v[0],
        Interpolation::Perspective => &b.perspective,
        Interpolation::Linear => &b.linear,
    };
    let f = v.map(f32::from_bits);
    (w[0] * f[0] + w[1] * f[1] + w[2] * f[2]).to_bits()
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
