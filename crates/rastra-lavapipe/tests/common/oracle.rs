//! Coverage oracles: what a triangle should cover, computed independently of both renderers,
//! to tell which of the two is right when they disagree.
//!
//! - [`snapped_coverage`]: the Vulkan rule for triangles inside the viewport — vertices snapped
//!   to 1/256 pixel (round to nearest even), integer edge functions, samples exactly on an edge
//!   belong to the triangle when the edge is a top or left edge (framebuffer y down).
//! - [`ideal_covers`]: the unsnapped triangle in clip space (f64, homogeneous: clipped at
//!   w > 0, 0 ≤ z ≤ w), for clipped geometry; [`boundary_distance`] says how close a pixel
//!   centre is to that triangle's boundary, where snapping or clip-point rounding may decide.

/// Sub-pixel steps per pixel (8 bits, as rastra and lavapipe use).
const SUBPIXELS: f64 = 256.0;

/// Standard 4× sample positions (Vulkan / D3D), in pixels from the pixel's corner.
pub const SAMPLES_4: [(f64, f64); 4] = [
    (0.375, 0.125),
    (0.875, 0.375),
    (0.125, 0.625),
    (0.625, 0.875),
];
/// The single sample of a single-sampled pixel.
pub const SAMPLES_1: [(f64, f64); 1] = [(0.5, 0.5)];

/// Snaps an NDC position of a `size`-square viewport to 1/256-pixel window coordinates,
/// computing the viewport transform in f32 as a GPU does.
fn snap(p: [f32; 2], size: u32) -> [i64; 2] {
    let h = size as f32 / 2.0;
    let (x, y) = (p[0] * h + h, -p[1] * h + h);
    [x, y].map(|c| (c as f64 * SUBPIXELS).round_ties_even() as i64)
}

/// For each pixel (`size`×`size`, row-major), the mask of `samples` that a triangle (NDC,
/// w = 1, inside the viewport) covers.
pub fn snapped_coverage(tri: [[f32; 2]; 3], size: u32, samples: &[(f64, f64)]) -> Vec<u8> {
    let mut v = tri.map(|p| snap(p, size));
    let mut out = vec![0u8; (size * size) as usize];
    let area =
        (v[1][0] - v[0][0]) * (v[2][1] - v[0][1]) - (v[2][0] - v[0][0]) * (v[1][1] - v[0][1]);
    if area == 0 {
        return out;
    }
    if area < 0 {
        v.swap(1, 2);
    }
    // Pixel range of the bounding box, clamped to the target.
    let lo = |k: usize| {
        let m = v.iter().map(|p| p[k]).min().unwrap();
        (m as f64 / SUBPIXELS).floor().clamp(0.0, size as f64) as u32
    };
    let hi = |k: usize| {
        let m = v.iter().map(|p| p[k]).max().unwrap();
        (m as f64 / SUBPIXELS).ceil().clamp(0.0, size as f64) as u32
    };
    let (x0, y0) = (lo(0), lo(1));
    for py in y0..hi(1) {
        for px in x0..hi(0) {
            let mut mask = 0u8;
            for (s, &(sx, sy)) in samples.iter().enumerate() {
                let c = [
                    ((px as f64 + sx) * SUBPIXELS) as i64,
                    ((py as f64 + sy) * SUBPIXELS) as i64,
                ];
                let inside = (0..3).all(|i| {
                    let (a, b) = (v[i], v[(i + 1) % 3]);
                    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
                    let e = dx * (c[1] - a[1]) - dy * (c[0] - a[0]);
                    // Interior is e > 0; the inward normal is (-dy, dx): a left edge has the
                    // interior to its right (dy < 0), a top edge below it (dy = 0, dx > 0).
                    e > 0 || (e == 0 && (dy < 0 || (dy == 0 && dx > 0)))
                });
                if inside {
                    mask |= 1 << s;
                }
            }
            out[(py * size + px) as usize] = mask;
        }
    }
    out
}

/// The image flat-coloured triangles (NDC, w = 1, inside the viewport) should give when
/// drawn in order without blending or depth over `clear`, per the snapped rule, resolved
/// (the mean of the samples' colours, in 8-bit units).
pub fn snapped_image(
    tris: &[[[f32; 2]; 3]],
    colors: &[[u8; 4]],
    clear: [u8; 4],
    size: u32,
    samples: &[(f64, f64)],
) -> Vec<[f64; 4]> {
    let n = (size * size) as usize;
    let mut sample_colors = vec![clear; n * samples.len()];
    for (t, c) in tris.iter().zip(colors) {
        for (p, mask) in snapped_coverage(*t, size, samples).into_iter().enumerate() {
            for s in 0..samples.len() {
                if mask & (1 << s) != 0 {
                    sample_colors[p * samples.len() + s] = *c;
                }
            }
        }
    }
    sample_colors
        .chunks_exact(samples.len())
        .map(|cs| {
            let mut m = [0.0; 4];
            for c in cs {
                for k in 0..4 {
                    m[k] += c[k] as f64 / cs.len() as f64;
                }
            }
            m
        })
        .collect()
}

/// An affine function of NDC position: `c + gx·x + gy·y`.
type Affine = [f64; 3];

fn eval(g: &Affine, p: [f64; 2]) -> f64 {
    g[0] + g[1] * p[0] + g[2] * p[1]
}

/// The functions of NDC position whose signs decide ideal coverage, each affine: the
/// barycentrics of the point's preimage on the triangle's plane, λ_i ∝ a_j·b_k − a_k·b_j
/// with a = x − p.x·w and b = y − p.y·w (the p.x·p.y terms cancel), then W = Σλ·w,
/// Z = Σλ·z and W − Z. A point is covered when W ≠ 0 and, with λ scaled so that W > 0,
/// λ ≥ 0 and 0 ≤ Z ≤ W (clipping at w > 0, near and far, without clipping anything).
fn constraints(tri: &[[f32; 4]; 3]) -> [Affine; 6] {
    let v = tri.map(|v| v.map(f64::from));
    let l: [Affine; 3] = std::array::from_fn(|i| {
        let (j, k) = ((i + 1) % 3, (i + 2) % 3);
        [
            v[j][0] * v[k][1] - v[k][0] * v[j][1],
            v[k][3] * v[j][1] - v[j][3] * v[k][1],
            v[k][0] * v[j][3] - v[j][0] * v[k][3],
        ]
    });
    let sum =
        |c: usize| -> Affine { std::array::from_fn(|t| (0..3).map(|i| l[i][t] * v[i][c]).sum()) };
    let (w, z) = (sum(3), sum(2));
    [l[0], l[1], l[2], z, std::array::from_fn(|t| w[t] - z[t]), w]
}

fn covers(g: &[Affine; 6], p: [f64; 2]) -> bool {
    let w = eval(&g[5], p);
    if w == 0.0 || !w.is_finite() {
        return false;
    }
    g[..5].iter().all(|g| eval(g, p) * w.signum() >= 0.0)
}

/// Whether the unsnapped clip-space triangle covers the point at NDC `p`.
pub fn ideal_covers(tri: &[[f32; 4]; 3], p: [f64; 2]) -> bool {
    covers(&constraints(tri), p)
}

/// NDC of the centre of pixel (x, y) of a `size`-square viewport.
pub fn pixel_ndc(size: u32, x: u32, y: u32) -> [f64; 2] {
    let s = size as f64;
    [
        (x as f64 + 0.5) / s * 2.0 - 1.0,
        1.0 - (y as f64 + 0.5) / s * 2.0,
    ]
}

/// Distance in pixels from pixel (x, y)'s centre to the nearest line on which the ideal
/// triangle's coverage changes (an edge, or the near, far or w = 0 cut): decisions that
/// close rest on sub-pixel precision (snapping, clip-point rounding). Lines whose crossing
/// at the nearest point changes nothing (an edge's extension past its vertex) are skipped;
/// `f64::INFINITY` when no line qualifies.
pub fn boundary_distance(tri: &[[f32; 4]; 3], size: u32, x: u32, y: u32) -> f64 {
    let g = constraints(tri);
    let p = pixel_ndc(size, x, y);
    let px_per_ndc = size as f64 / 2.0;
    let mut best = f64::INFINITY;
    for line in &g {
        let norm = line[1].hypot(line[2]);
        if norm == 0.0 || !norm.is_finite() {
            continue;
        }
        let d = eval(line, p) / norm;
        // The foot of the perpendicular, and a point a hair to either side of it.
        let n = [line[1] / norm, line[2] / norm];
        let foot = [p[0] - d * n[0], p[1] - d * n[1]];
        let h = 1e-7;
        let side = |s: f64| covers(&g, [foot[0] + s * h * n[0], foot[1] + s * h * n[1]]);
        if side(1.0) != side(-1.0) {
            best = best.min(d.abs() * px_per_ndc);
        }
    }
    best
}

/// The ideal image of flat-coloured triangles drawn in order without depth: for each pixel,
/// the index of the last triangle covering its centre.
pub fn ideal_top(tris: &[[[f32; 4]; 3]], size: u32) -> Vec<Option<usize>> {
    let mut out = vec![None; (size * size) as usize];
    for (i, t) in tris.iter().enumerate() {
        for y in 0..size {
            for x in 0..size {
                if ideal_covers(t, pixel_ndc(size, x, y)) {
                    out[(y * size + x) as usize] = Some(i);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_left_rule_on_a_square() {
        // Two triangles splitting the square [1, 3]² (4×4 target) along a diagonal that
        // passes through pixel centres: each centre belongs to exactly one.
        let p = |x: f32, y: f32| [x / 2.0 - 1.0, 1.0 - y / 2.0];
        let a = snapped_coverage([p(1.0, 1.0), p(3.0, 1.0), p(3.0, 3.0)], 4, &SAMPLES_1);
        let b = snapped_coverage([p(1.0, 1.0), p(3.0, 3.0), p(1.0, 3.0)], 4, &SAMPLES_1);
        let sum: Vec<u8> = a.iter().zip(&b).map(|(x, y)| x + y).collect(); // masks of 1 sample
        assert_eq!(sum, [0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    }
}
