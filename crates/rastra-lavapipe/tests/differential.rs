//! Differential tests: the same [`Frame`] rendered on rastra and on lavapipe, compared pixel
//! for pixel. Coverage (fill rule, sub-pixel snapping, depth test) must be identical;
//! colour arithmetic that legitimately differs (f32 evaluation order, lavapipe's 8-bit
//! fixed-point blending, resolve rounding) is compared within a recorded tolerance whose
//! reason is stated where it is set. Clipped geometry is compared against an exact oracle
//! as well, because lavapipe's f32 clipper moves clipped edges by up to ~10^-3 px, which
//! flips the odd pixel centre lying that close to an edge (see
//! `clipping_matches_exact_coverage`).
//!
//! Each test skips, saying why, when lavapipe is not installed (CI installs it). On a
//! mismatch the two images and a difference mask are written to
//! `target/diff/<frame>-{rastra,lavapipe,difference}.png`.

mod common;

use common::oracle::{self, SAMPLES_1, SAMPLES_4};
use common::{Both, Rng, Shading, Vertex, check, check_frame, frame, lavapipe, ndc, pipeline};
use rastra::{
    BlendComponent, BlendFactor, BlendOperation, BlendState, BufferUsages, Color, IndexFormat,
    PrimitiveTopology, TextureFormat,
};
use rastra_lavapipe::{Lavapipe, compare_rgba8};
use rastra_scene::{BufferData, DrawKind, Frame};

// ---------------------------------------------------------------------------------------
// 1. Coverage
// ---------------------------------------------------------------------------------------

/// Random triangles in window pixels, inside the viewport (lavapipe clips geometry that
/// leaves it, which moves edges; that is `clipping_matches_exact_coverage`'s subject),
/// cycling through kinds that stress different parts of setup and rasterization.
fn random_triangles_px(rng: &mut Rng, count: usize, size: u32) -> Vec<[[f64; 2]; 3]> {
    let s = size as f64;
    let clamp = |p: [f64; 2]| p.map(|c| c.clamp(0.0, s));
    let mut tris = Vec::with_capacity(count);
    for i in 0..count {
        let c = [rng.range(0.0, s), rng.range(0.0, s)];
        let around = |rng: &mut Rng, r: f64| [c[0] + rng.range(-r, r), c[1] + rng.range(-r, r)];
        let tri = match i % 6 {
            // Large: anywhere.
            0 => [0; 3].map(|_| [rng.range(0.0, s), rng.range(0.0, s)]),
            // Medium and small.
            1 => [0; 3].map(|_| around(rng, 16.0)),
            2 => [0; 3].map(|_| around(rng, 3.0)),
            // Sub-pixel: most cover no sample, some exactly one.
            3 => [0; 3].map(|_| around(rng, 0.6)),
            // Sliver: long and thin (0.01 to 0.6 px wide), any direction.
            4 => {
                let a = rng.range(0.0, std::f64::consts::TAU);
                let len = rng.range(4.0, s);
                let (dx, dy) = (a.cos(), a.sin());
                let t = rng.range(0.0, 1.0);
                let w = rng.range(0.01, 0.6) * if rng.below(2) == 0 { 1.0 } else { -1.0 };
                [
                    c,
                    [c[0] + dx * len, c[1] + dy * len],
                    [c[0] + dx * len * t - dy * w, c[1] + dy * len * t + dx * w],
                ]
            }
            // On the half-pixel grid: edges (often axis-aligned) run exactly through pixel
            // centres, so the top-left rule decides those pixels.
            _ => {
                let base = [(c[0] * 2.0).round() / 2.0, (c[1] * 2.0).round() / 2.0];
                let mut p = [base; 3];
                for v in &mut p[1..] {
                    for (k, x) in v.iter_mut().enumerate() {
                        // Keep a vertex axis-aligned with the base a third of the time.
                        if rng.below(3) != 0 || k == 0 {
                            *x += (rng.below(25) as f64 - 12.0) / 2.0;
                        }
                    }
                }
                p
            }
        };
        tris.push(tri.map(clamp));
    }
    tris
}

/// Triangles with flat unique colours, as vertices (z = 0.5, w = 1), and their NDC corners.
fn flat_vertices(size: u32, tris: &[[[f64; 2]; 3]]) -> (Vec<Vertex>, Vec<[[f32; 2]; 3]>) {
    let ndc_tris: Vec<[[f32; 2]; 3]> = tris
        .iter()
        .map(|t| t.map(|p| ndc(size, p[0], p[1])))
        .collect();
    let vertices = ndc_tris
        .iter()
        .enumerate()
        .flat_map(|(i, t)| {
            t.map(|[x, y]| Vertex {
                pos: [x, y, 0.5, 1.0],
                color: common::unique_color(i),
            })
        })
        .collect();
    (vertices, ndc_tris)
}

/// A pixel off an exact reference: (x, y, its value, the reference value).
type OffExact = (u32, u32, [u8; 4], [f64; 4]);

/// Compares an image with the snapped-rule oracle: (pixels off by more than `tolerance`,
/// first such pixel with its value and the oracle's).
fn against_oracle(
    image: &[u8],
    expected: &[[f64; 4]],
    size: u32,
    tolerance: f64,
) -> (usize, Option<OffExact>) {
    let mut count = 0;
    let mut first = None;
    for (i, (px, e)) in image.chunks_exact(4).zip(expected).enumerate() {
        if (0..4).any(|k| (px[k] as f64 - e[k]).abs() > tolerance) {
            count += 1;
            first.get_or_insert((i as u32 % size, i as u32 / size, px.try_into().unwrap(), *e));
        }
    }
    (count, first)
}

/// Random triangles on both renderers; also checks both against the snapped-rule oracle
/// and prints who agrees with it, so a failure says which side is wrong.
fn coverage_case(lp: &Lavapipe, name: &str, size: u32, count: usize, samples: u32, tolerance: u8) {
    let mut rng = Rng(0x5eed_0000 + size as u64 * 31 + samples as u64);
    let tris = random_triangles_px(&mut rng, count, size);
    let (vertices, ndc_tris) = flat_vertices(size, &tris);
    let mut f = frame(name, size, &vertices, pipeline(Shading::Flat));
    f.samples = samples;
    let both = common::render_both(lp, &f);

    let positions: &[(f64, f64)] = if samples == 4 { &SAMPLES_4 } else { &SAMPLES_1 };
    let colors: Vec<[u8; 4]> = (0..count).map(common::unique_color).collect();
    let expected = oracle::snapped_image(&ndc_tris, &colors, [0, 0, 0, 255], size, positions);
    // The oracle's resolve is the exact mean; rastra rounds it to nearest (±0.5), lavapipe
    // averages in 8-bit arithmetic (observed ±1).
    let (ours_slack, theirs_slack) = if samples == 1 { (0.0, 0.0) } else { (0.5, 1.0) };
    let (ours_off, ours_first) = against_oracle(&both.rastra, &expected, size, ours_slack);
    let (theirs_off, theirs_first) = against_oracle(&both.lavapipe, &expected, size, theirs_slack);
    eprintln!(
        "{name}: pixels off the snapped-rule oracle: rastra {ours_off} (first {ours_first:?}), \
         lavapipe {theirs_off} (first {theirs_first:?})"
    );
    check(&both, &f, tolerance, || {
        let Some((x, y, _, _)) = both.diff.first else {
            return String::new();
        };
        let mut s = format!(
            "oracle at ({x}, {y}): {:?}; triangles covering it:",
            expected[(y * size + x) as usize]
        );
        for (i, t) in ndc_tris.iter().enumerate() {
            if oracle::snapped_coverage(*t, size, positions)[(y * size + x) as usize] != 0 {
                s += &format!("\n  #{i} colour {:?} ndc {t:?}", colors[i]);
            }
        }
        s
    });
    assert_eq!(
        ours_off, 0,
        "{name}: rastra disagrees with the snapped-rule oracle"
    );
}

/// Random triangles of every size, flat colours, no blending: the last triangle covering a
/// pixel's centre colours it, so any fill-rule or snapping difference shows.
/// Observed: 0 differing pixels at 64×64 (300 triangles) and 256×256 (1200 triangles); both
/// renderers agree with the snapped-rule oracle everywhere.
#[test]
fn coverage_random_triangles_identical() {
    let Some(lp) = lavapipe() else { return };
    coverage_case(&lp, "coverage-64", 64, 300, 1, 0);
    coverage_case(&lp, "coverage-256", 256, 1200, 1, 0);
}

/// Meshes whose triangles share edges, added with One/One blending: a pixel covered twice
/// would hold twice the value, one covered by no triangle would stay black. Both the
/// comparison with lavapipe and the value set ({0, v} only) must hold.
/// Observed: 0 differing pixels for the fan, the indexed grid and the restart strip.
#[test]
fn shared_edges_cover_each_pixel_once() {
    let Some(lp) = lavapipe() else { return };
    let size = 64;
    let v = 64u8;
    let add = BlendComponent {
        src_factor: BlendFactor::One,
        dst_factor: BlendFactor::One,
        operation: BlendOperation::Add,
    };
    let mut additive = pipeline(Shading::Flat);
    additive.blend = Some(BlendState {
        color: add,
        alpha: add,
    });
    let vertex = |x: f64, y: f64| {
        let [x, y] = ndc(size, x, y);
        Vertex {
            pos: [x, y, 0.5, 1.0],
            color: [0, v, v, v],
        }
    };
    let mut rng = Rng(0xfa2);

    // A fan around an off-grid centre, closing on its first outer vertex.
    let centre = vertex(31.37, 29.81);
    let n = 37;
    let ring: Vec<Vertex> = (0..n)
        .map(|i| {
            let a = i as f64 / n as f64 * std::f64::consts::TAU;
            let r = rng.range(20.0, 29.0);
            vertex(31.37 + r * a.cos(), 29.81 + r * a.sin())
        })
        .collect();
    let mut fan = Vec::new();
    for i in 0..n {
        fan.extend([centre, ring[i], ring[(i + 1) % n]]);
    }
    let mut fan_frame = frame("shared-fan", size, &fan, additive.clone());
    fan_frame.clear_color = Color::TRANSPARENT;

    // A jittered grid of quads, drawn indexed (u16) as a triangle list, mixing diagonals.
    let cells = 9;
    let step = 60.0 / cells as f64;
    let mut grid = Vec::new();
    for j in 0..=cells {
        for i in 0..=cells {
            let jitter = |rng: &mut Rng, k: usize| {
                if k == 0 || k == cells {
                    0.0
                } else {
                    rng.range(-0.35, 0.35) * step
                }
            };
            let x = 2.0 + i as f64 * step + jitter(&mut rng, i);
            let y = 2.0 + j as f64 * step + jitter(&mut rng, j);
            grid.push(vertex(x, y));
        }
    }
    let at = |i: usize, j: usize| (j * (cells + 1) + i) as u16;
    let mut list = Vec::new();
    for j in 0..cells {
        for i in 0..cells {
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            if (i + j) % 2 == 0 {
                list.extend([a, b, c, a, c, d]);
            } else {
                list.extend([a, b, d, b, c, d]);
            }
        }
    }
    let mut grid_frame = frame("shared-grid", size, &grid, additive);
    grid_frame.clear_color = Color::TRANSPARENT;
    grid_frame.buffers.push(BufferData {
        label: "indices".into(),
        data: list.iter().flat_map(|i| i.to_le_bytes()).collect(),
        usage: BufferUsages::INDEX,
    });
    grid_frame.draws[0].index_buffer = Some((1, IndexFormat::Uint16));
    grid_frame.draws[0].kind = DrawKind::Indexed {
        indices: 0..list.len() as u32,
        base_vertex: 0,
    };

    // The same grid as one u32 triangle strip per row, separated by primitive restarts.
    let mut strip = Vec::new();
    for j in 0..cells {
        for i in 0..=cells {
            strip.extend([at(i, j) as u32, at(i, j + 1) as u32]);
        }
        strip.push(u32::MAX);
    }
    let mut strip_frame = grid_frame.clone();
    strip_frame.name = "shared-strip".into();
    strip_frame.pipelines[0].primitive.topology = PrimitiveTopology::TriangleStrip;
    strip_frame.buffers[1].data = rastra_scene::u32_bytes(&strip);
    strip_frame.draws[0].index_buffer = Some((1, IndexFormat::Uint32));
    strip_frame.draws[0].kind = DrawKind::Indexed {
        indices: 0..strip.len() as u32,
        base_vertex: 0,
    };

    for f in [&fan_frame, &grid_frame, &strip_frame] {
        let Both { rastra: ours, .. } = check_frame(&lp, f, 0);
        let bad = ours
            .chunks_exact(4)
            .position(|p| (p[1] != 0 && p[1] != v) || p[1] != p[3]);
        assert_eq!(bad, None, "{}: a pixel covered more than once", f.name);
        let covered = ours.chunks_exact(4).filter(|p| p[1] == v).count();
        eprintln!("{}: {covered} pixels covered exactly once", f.name);
        assert!(covered > 1500, "{}: only {covered} pixels covered", f.name);
    }
}

// ---------------------------------------------------------------------------------------
// 2. MSAA
// ---------------------------------------------------------------------------------------

/// The random triangles at 4× MSAA, resolved. Tolerance 1 per channel: the resolve averages
/// four 8-bit samples and a renderer may round a .5 either way; one sample covered
/// differently changes a pixel by a quarter of two unrelated colours' difference, almost
/// always far above 1 (and the oracle comparison catches the rest). Observed: max diff 1
/// at 307 of 4096 pixels (64×64) and 1558 of 65536 (256×256); rastra within 0.5 of the
/// exact resolve of the snapped-rule oracle everywhere, lavapipe within 1.
#[test]
fn msaa4_coverage_matches_within_resolve_rounding() {
    let Some(lp) = lavapipe() else { return };
    coverage_case(&lp, "msaa4-64", 64, 300, 4, 1);
    coverage_case(&lp, "msaa4-256", 256, 1200, 4, 1);
}

// ---------------------------------------------------------------------------------------
// 3. Interpolation and depth
// ---------------------------------------------------------------------------------------

/// A vertex at window position (x, y) of a `size` target with clip w `w` (so the same
/// screen position, but perspective weights 1/w) and NDC depth `z`.
fn perspective_vertex(size: u32, x: f64, y: f64, z: f64, w: f64, color: [u8; 4]) -> Vertex {
    let [nx, ny] = ndc(size, x, y);
    let (nx, ny) = (nx as f64, ny as f64);
    Vertex {
        pos: [(nx * w) as f32, (ny * w) as f32, (z * w) as f32, w as f32],
        color,
    }
}

/// Smooth colours across a triangle whose vertices have w = 0.5, 2.5, 6, and across a quad
/// receding from w = 0.6 to w = 5. Tolerance 2 per channel: both interpolate perspective-
/// correctly in f32 but set up and evaluate the barycentric planes in different orders,
/// which moves a value across an 8-bit rounding boundary at a few pixels. Observed: max
/// diff 1 (triangle 5 pixels, quad 99 of 65536). Affine (non-perspective) interpolation of
/// the same frames differs by 124 to 141 (checked below), so a missing perspective divide
/// fails.
#[test]
fn perspective_interpolation_within_tolerance() {
    let Some(lp) = lavapipe() else { return };
    let size = 256;
    let v = |x, y, w, color| perspective_vertex(size, x, y, 0.5, w, color);
    let triangle = vec![
        v(8.0, 248.0, 0.5, [255, 0, 0, 255]),
        v(250.0, 180.0, 2.5, [0, 255, 0, 255]),
        v(100.0, 6.0, 6.0, [0, 0, 255, 255]),
    ];
    let (a, b, c, d) = (
        v(8.0, 248.0, 0.6, [255, 255, 0, 255]),
        v(248.0, 248.0, 0.6, [0, 255, 255, 128]),
        v(248.0, 8.0, 5.0, [255, 0, 255, 0]),
        v(8.0, 8.0, 5.0, [40, 90, 200, 255]),
    );
    let quad = vec![a, b, c, a, c, d];
    for (name, vertices) in [
        ("perspective-triangle", triangle),
        ("perspective-quad", quad),
    ] {
        let f = frame(name, size, &vertices, pipeline(Shading::Smooth));
        let both = check_frame(&lp, &f, 2);
        // The same frame with w = 1 everywhere (affine interpolation) must be far off.
        let affine: Vec<Vertex> = vertices
            .iter()
            .map(|v| {
                let w = v.pos[3];
                Vertex {
                    pos: [v.pos[0] / w, v.pos[1] / w, v.pos[2] / w, 1.0],
                    color: v.color,
                }
            })
            .collect();
        let affine = lp
            .render(&frame(name, size, &affine, pipeline(Shading::Smooth)), 1)
            .expect("lavapipe")
            .pixels;
        let gap = compare_rgba8(&both.lavapipe, &affine, size).max_channel_diff;
        eprintln!("{name}: perspective vs affine on lavapipe: max channel diff {gap}");
        assert!(
            gap > 40,
            "{name}: the frame does not tell perspective from affine"
        );
    }
}

/// Overlapping triangles with per-vertex colours and w, each at its own constant depth
/// (distinct, at least 1/80 apart), depth-tested with Less. The depth test decides the same
/// way on both; colours are within the interpolation tolerance of 2 (see above). Observed:
/// max diff 1 at 112 of 16384 pixels.
#[test]
fn depth_tested_smooth_scene_within_tolerance() {
    let Some(lp) = lavapipe() else { return };
    let size = 128;
    let n = 64;
    let mut rng = Rng(0xde9);
    // Distinct depths in a shuffled order, so later triangles are sometimes behind.
    let mut depths: Vec<f64> = (0..n).map(|k| (k as f64 + 8.0) / 80.0).collect();
    for i in (1..n).rev() {
        depths.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut vertices = Vec::new();
    for z in depths {
        let c = [rng.range(0.0, 128.0), rng.range(0.0, 128.0)];
        for _ in 0..3 {
            let x = (c[0] + rng.range(-40.0, 40.0)).clamp(0.0, 128.0);
            let y = (c[1] + rng.range(-40.0, 40.0)).clamp(0.0, 128.0);
            let color = [rng.byte(), rng.byte(), rng.byte(), 255];
            vertices.push(perspective_vertex(
                size,
                x,
                y,
                z,
                rng.range(0.5, 4.0),
                color,
            ));
        }
    }
    let mut p = pipeline(Shading::Smooth);
    p.depth = common::depth_less();
    let mut f = frame("depth-smooth", size, &vertices, p);
    f.depth_format = Some(TextureFormat::Depth32Float);
    check_frame(&lp, &f, 2);
}

/// Flat-coloured triangles at depths 0.25, 0.5 or 0.75 (so many ties, which Less rejects),
/// depth-tested: the surviving triangle per pixel must be the same on both — identical
/// images. Observed: 0 differing pixels.
#[test]
fn depth_test_coverage_identical() {
    let Some(lp) = lavapipe() else { return };
    let size = 64;
    let mut rng = Rng(0xd0);
    let tris = random_triangles_px(&mut rng, 300, size);
    let (mut vertices, _) = flat_vertices(size, &tris);
    for t in vertices.chunks_mut(3) {
        let z = [0.25, 0.5, 0.75][rng.below(3) as usize];
        for v in t {
            v.pos[2] = z;
        }
    }
    let mut p = pipeline(Shading::Flat);
    p.depth = common::depth_less();
    let mut f = frame("depth-flat", size, &vertices, p);
    f.depth_format = Some(TextureFormat::Depth32Float);
    check_frame(&lp, &f, 0);
}

// ---------------------------------------------------------------------------------------
// 4. Blending
// ---------------------------------------------------------------------------------------

const FACTORS: [BlendFactor; 13] = [
    BlendFactor::Zero,
    BlendFactor::One,
    BlendFactor::Src,
    BlendFactor::OneMinusSrc,
    BlendFactor::SrcAlpha,
    BlendFactor::OneMinusSrcAlpha,
    BlendFactor::Dst,
    BlendFactor::OneMinusDst,
    BlendFactor::DstAlpha,
    BlendFactor::OneMinusDstAlpha,
    BlendFactor::SrcAlphaSaturated,
    BlendFactor::Constant,
    BlendFactor::OneMinusConstant,
];

/// Every blend state the test draws: each (src, dst) factor pair under Add, Subtract and
/// ReverseSubtract for colour (alpha uses the pair shifted by 5 and 7, so alpha meets every
/// factor too), then Min and Max (whose factors WebGPU fixes to One).
fn blend_states() -> Vec<BlendState> {
    let mut out = Vec::new();
    for op in [
        BlendOperation::Add,
        BlendOperation::Subtract,
        BlendOperation::ReverseSubtract,
    ] {
        for s in 0..FACTORS.len() {
            for d in 0..FACTORS.len() {
                out.push(BlendState {
                    color: BlendComponent {
                        src_factor: FACTORS[s],
                        dst_factor: FACTORS[d],
                        operation: op,
                    },
                    alpha: BlendComponent {
                        src_factor: FACTORS[(s + 5) % FACTORS.len()],
                        dst_factor: FACTORS[(d + 7) % FACTORS.len()],
                        operation: op,
                    },
                });
            }
        }
    }
    for op in [BlendOperation::Min, BlendOperation::Max] {
        let c = BlendComponent {
            src_factor: BlendFactor::One,
            dst_factor: BlendFactor::One,
            operation: op,
        };
        out.push(BlendState { color: c, alpha: c });
    }
    out
}

/// A frame with a pixel-pattern background and one 4×4 cell per blend state, whose source
/// is another pixel pattern; 32 cells per row.
fn blend_frame(name: &str, format: TextureFormat) -> (Frame, Vec<BlendState>) {
    let states = blend_states();
    let (cell, per_row) = (4u32, 32u32);
    let (w, h) = (
        cell * per_row,
        cell * (states.len() as u32).div_ceil(per_row),
    );
    let corner = |x: u32, y: u32| {
        let p = [
            x as f64 / w as f64 * 2.0 - 1.0,
            1.0 - y as f64 / h as f64 * 2.0,
        ];
        Vertex {
            pos: [p[0] as f32, p[1] as f32, 0.5, 1.0],
            color: [0; 4],
        }
    };
    let quad = |x0: u32, y0: u32, x1: u32, y1: u32| {
        let (a, b, c, d) = (
            corner(x0, y0),
            corner(x1, y0),
            corner(x1, y1),
            corner(x0, y1),
        );
        [a, b, c, a, c, d]
    };
    let mut vertices = quad(0, 0, w, h).to_vec();
    let mut f = frame(name, w, &[], pipeline(Shading::Destination));
    f.height = h;
    f.color_format = format;
    for (i, state) in states.iter().enumerate() {
        let (x, y) = (i as u32 % per_row * cell, i as u32 / per_row * cell);
        vertices.extend(quad(x, y, x + cell, y + cell));
        let mut p = pipeline(Shading::Source);
        p.blend = Some(*state);
        f.pipelines.push(p);
        f.draws
            .push(common::draw(i + 1, 6 * (i as u32 + 1)..6 * (i as u32 + 2)));
    }
    f.buffers[0].data = common::vertex_bytes(&vertices);
    f.draws[0] = common::draw(0, 0..6);
    (f, states)
}

/// The pattern `fs_source` / `fs_destination` output at pixel (x, y): (x·k + y·j) mod 256, /255.
fn pattern(x: u32, y: u32, k: [u32; 4], j: [u32; 4]) -> [f64; 4] {
    std::array::from_fn(|c| ((x * k[c] + y * j[c]) % 256) as f64 / 255.0)
}

/// The sRGB transfer function (IEC 61966-2-1), linear → encoded, in f64.
fn srgb_encode(x: f64) -> f64 {
    if x <= 0.003_130_8 {
        x * 12.92
    } else {
        1.055 * x.powf(1.0 / 2.4) - 0.055
    }
}

/// The exact result of blending, in f64: the value a renderer should round to 8 bits
/// (sRGB-encoded for sRGB targets), before that rounding, in 8-bit units.
fn reference_blend(
    state: &BlendState,
    format: TextureFormat,
    src: [f64; 4],
    dst8: &[u8],
    constant: [f64; 4],
) -> [f64; 4] {
    let dst = format.decode_color(dst8).map(f64::from);
    let factor = |f: BlendFactor, c: usize| match f {
        BlendFactor::Zero => 0.0,
        BlendFactor::One => 1.0,
        BlendFactor::Src => src[c],
        BlendFactor::OneMinusSrc => 1.0 - src[c],
        BlendFactor::SrcAlpha => src[3],
        BlendFactor::OneMinusSrcAlpha => 1.0 - src[3],
        BlendFactor::Dst => dst[c],
        BlendFactor::OneMinusDst => 1.0 - dst[c],
        BlendFactor::DstAlpha => dst[3],
        BlendFactor::OneMinusDstAlpha => 1.0 - dst[3],
        BlendFactor::SrcAlphaSaturated if c == 3 => 1.0,
        BlendFactor::SrcAlphaSaturated => src[3].min(1.0 - dst[3]),
        BlendFactor::Constant => constant[c],
        BlendFactor::OneMinusConstant => 1.0 - constant[c],
    };
    std::array::from_fn(|c| {
        let b = if c == 3 { state.alpha } else { state.color };
        let (s, d) = (
            src[c] * factor(b.src_factor, c),
            dst[c] * factor(b.dst_factor, c),
        );
        let v = match b.operation {
            BlendOperation::Add => s + d,
            BlendOperation::Subtract => s - d,
            BlendOperation::ReverseSubtract => d - s,
            BlendOperation::Min => src[c].min(dst[c]),
            BlendOperation::Max => src[c].max(dst[c]),
        }
        .clamp(0.0, 1.0);
        let encoded = if c < 3 && format.is_srgb() {
            srgb_encode(v)
        } else {
            v
        };
        encoded * 255.0
    })
}

/// How far each renderer's blended cells are from the exact result (8-bit units), and the
/// worst cell of each.
fn blend_errors(
    f: &Frame,
    states: &[BlendState],
    constant: Color,
    image: &[u8],
) -> (f64, Option<OffExact>) {
    let constant = [constant.r, constant.g, constant.b, constant.a];
    let (mut worst, mut at) = (0.0, None);
    for (i, px) in image.chunks_exact(4).enumerate() {
        let (x, y) = (i as u32 % f.width, i as u32 / f.width);
        let Some(state) = states.get((y / 4 * 32 + x / 4) as usize) else {
            continue;
        };
        let src = pattern(x, y, [37, 13, 71, 23], [11, 41, 29, 53]);
        let mut dst8 = [0u8; 4];
        let dst = pattern(x, y, [19, 59, 7, 43], [67, 5, 47, 17]).map(|v| v as f32);
        f.color_format.encode_color(dst, &mut dst8);
        let exact = reference_blend(state, f.color_format, src, &dst8, constant);
        let err = (0..4)
            .map(|c| (px[c] as f64 - exact[c]).abs())
            .fold(0.0, f64::max);
        if err > worst {
            (worst, at) = (err, Some((x, y, px.try_into().unwrap(), exact)));
        }
    }
    (worst, at)
}

/// Every blend factor × operation with a blend constant, on Rgba8Unorm and Rgba8UnormSrgb,
/// checked against the exact (f64) blend as well as against lavapipe.
///
/// rastra blends in f32 from the stored 8-bit destination and rounds once, so it must be
/// within 0.5 (+ f32 noise) of the exact value everywhere. lavapipe blends 8-bit unorm
/// targets in 8-bit fixed point (observed: within 1.0 of exact, so at most 1 apart from
/// rastra), and sRGB targets through an 8-bit linear intermediate, which sRGB encoding then
/// stretches near black (one linear step there is up to 13 sRGB steps): observed within
/// 15.4 of exact, 15 apart from rastra. The rastra-vs-lavapipe tolerances are those
/// observations; the exact check is what pins rastra down.
#[test]
fn blending_every_factor_and_operation() {
    let Some(lp) = lavapipe() else { return };
    let constant = Color {
        r: 51.0 / 255.0,
        g: 153.0 / 255.0,
        b: 230.0 / 255.0,
        a: 102.0 / 255.0,
    };
    for (name, format, tolerance) in [
        ("blend-unorm", TextureFormat::Rgba8Unorm, 1),
        ("blend-srgb", TextureFormat::Rgba8UnormSrgb, 15),
    ] {
        let (mut f, states) = blend_frame(name, format);
        f.blend_constant = constant;
        let ours = f
            .render(&Default::default(), 1)
            .expect("rastra renders")
            .pixels;
        let theirs = lp.render(&f, 1).unwrap_or_else(|e| panic!("{e}")).pixels;
        let (our_err, our_worst) = blend_errors(&f, &states, constant, &ours);
        let (their_err, their_worst) = blend_errors(&f, &states, constant, &theirs);
        let cell = |w: Option<OffExact>| {
            w.map(|(x, y, px, exact)| {
                let state = states[(y / 4 * 32 + x / 4) as usize];
                format!("({x}, {y}) {px:?} exact {exact:.2?} {state:?}")
            })
        };
        eprintln!(
            "{name}: off the exact blend by at most: rastra {our_err:.3}, lavapipe {their_err:.3}\n  \
             rastra worst {:?}\n  lavapipe worst {:?}",
            cell(our_worst),
            cell(their_worst)
        );
        let diff = compare_rgba8(&ours, &theirs, f.width);
        let both = Both {
            rastra: ours,
            lavapipe: theirs,
            diff,
        };
        check(&both, &f, tolerance, String::new);
        assert!(
            our_err <= 0.5 + 1e-3,
            "{name}: rastra is {our_err} off the exact blend at {:?}",
            cell(our_worst)
        );
    }
}

// ---------------------------------------------------------------------------------------
// 5. Clipping
// ---------------------------------------------------------------------------------------

/// Distance in pixels from pixel (x, y)'s centre to the nearest boundary of any of `tris`.
fn boundary_distance(tris: &[[[f32; 4]; 3]], size: u32, x: u32, y: u32) -> f64 {
    tris.iter()
        .map(|t| oracle::boundary_distance(t, size, x, y))
        .fold(f64::INFINITY, f64::min)
}

/// One clipping case: flat-coloured clip-space triangles drawn in order. rastra must match
/// the ideal (unsnapped, exactly clipped) image except within `rastra_eps` pixels of an
/// edge; rastra and lavapipe may differ only within `lavapipe_eps` of an edge.
fn clip_case(
    lp: &Lavapipe,
    name: &str,
    tris: &[[[f32; 4]; 3]],
    rastra_eps: f64,
    lavapipe_eps: f64,
) {
    let size = 64;
    let vertices: Vec<Vertex> = tris
        .iter()
        .enumerate()
        .flat_map(|(i, t)| {
            t.map(|pos| Vertex {
                pos,
                color: common::unique_color(i),
            })
        })
        .collect();
    let f = frame(name, size, &vertices, pipeline(Shading::Flat));
    let both = common::render_both(lp, &f);
    let ideal = oracle::ideal_top(tris, size);
    let color = |top: Option<usize>| top.map_or([0, 0, 0, 255], common::unique_color);

    let mut ours_off = Vec::new();
    let mut pair_off = Vec::new();
    for (i, (a, b)) in both
        .rastra
        .chunks_exact(4)
        .zip(both.lavapipe.chunks_exact(4))
        .enumerate()
    {
        let (x, y) = (i as u32 % size, i as u32 / size);
        if a != color(ideal[i]) {
            ours_off.push((x, y, boundary_distance(tris, size, x, y)));
        }
        if a != b {
            pair_off.push((x, y, boundary_distance(tris, size, x, y)));
        }
    }
    let max = |v: &[(u32, u32, f64)]| v.iter().map(|p| p.2).fold(0.0, f64::max);
    let covered = ideal.iter().filter(|t| t.is_some()).count();
    let visible = ideal
        .iter()
        .flatten()
        .collect::<std::collections::HashSet<_>>()
        .len();
    eprintln!(
        "{name}: {covered} pixels covered, {visible} triangles visible; {}; rastra off the \
         ideal image at {} pixels (farthest {:.5} px from an edge); rastra vs lavapipe \
         differences at most {:.5} px from an edge",
        both.diff,
        ours_off.len(),
        max(&ours_off),
        max(&pair_off)
    );
    let explain = |what: &str, v: &[(u32, u32, f64)], eps: f64| {
        let &(x, y, d) = v.iter().find(|p| p.2 > eps).unwrap();
        let i = (y * size + x) as usize;
        let covering: Vec<String> = tris
            .iter()
            .enumerate()
            .filter(|(_, t)| oracle::ideal_covers(t, oracle::pixel_ndc(size, x, y)))
            .map(|(k, t)| format!("#{k} {t:?}"))
            .collect();
        common::write_images(&f, &both.rastra, &both.lavapipe);
        format!(
            "{name}: {what} at pixel ({x}, {y}), {d:.5} px from any edge (allowed {eps}): rastra {:?}, \
             lavapipe {:?}, ideal {:?} (triangle {:?}); ideal triangles covering it: {covering:?}",
            &both.rastra[4 * i..4 * i + 4],
            &both.lavapipe[4 * i..4 * i + 4],
            color(ideal[i]),
            ideal[i]
        )
    };
    assert!(
        max(&ours_off) <= rastra_eps,
        "{}",
        explain("rastra differs from the ideal image", &ours_off, rastra_eps)
    );
    assert!(
        max(&pair_off) <= lavapipe_eps,
        "{}",
        explain("rastra differs from lavapipe", &pair_off, lavapipe_eps)
    );
}

/// Triangles crossing the viewport's sides, the near and far planes, reaching far beyond
/// rastra's guard band (2^19 px) and having vertices behind the eye (w < 0).
///
/// lavapipe clips geometrically (in f32) whenever its guard band is off — always with a
/// depth buffer or MSAA, and as observed with Mesa 22.3 also in plain frames like these —
/// which moves clipped edges by up to about 10^-3 px: too little to matter, enough to flip
/// a pixel centre that lies that close to an edge (one sliver reaching 31 px past the left
/// edge covered a centre 0.00003 px outside the snapped triangle). So instead of identity:
/// rastra must match the exact clipped image except within 1/256 px of an edge (its
/// snapping), and may differ from lavapipe only there too. A missing or wrong clip plane,
/// or mishandled w < 0, changes pixels far from any edge.
#[test]
fn clipping_matches_exact_coverage() {
    let Some(lp) = lavapipe() else { return };
    let mut rng = Rng(0xc11f);
    let on_screen = |rng: &mut Rng, w: f64, z: f64| -> [f32; 4] {
        let (x, y) = (rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
        [(x * w) as f32, (y * w) as f32, (z * w) as f32, w as f32]
    };
    let eps = 1.0 / 256.0;

    // Partly off screen (up to half a viewport past each side).
    let sides: Vec<[[f32; 4]; 3]> = (0..200)
        .map(|_| {
            let c = [rng.range(-1.5, 1.5), rng.range(-1.5, 1.5)];
            let r = [0.05, 0.3, 1.0][rng.below(3) as usize];
            [0; 3].map(|_| {
                [
                    (c[0] + rng.range(-r, r)) as f32,
                    (c[1] + rng.range(-r, r)) as f32,
                    0.5,
                    1.0,
                ]
            })
        })
        .collect();
    // Depth from -1.5 to 2.5 (NDC) with w from 0.5 to 3: cut by near and far.
    let near_far: Vec<[[f32; 4]; 3]> = (0..60)
        .map(|_| {
            [0; 3].map(|_| {
                let (w, z) = (rng.range(0.5, 3.0), rng.range(-1.5, 2.5));
                on_screen(&mut rng, w, z)
            })
        })
        .collect();
    // Narrow wedges reaching 10^3 to 10^6 NDC units away (3·10^4 to 3·10^7 px: inside and
    // far beyond rastra's guard band): one far vertex and a short on-screen base, or two
    // far vertices a small angle apart.
    let far_out: Vec<[[f32; 4]; 3]> = (0..60)
        .map(|i| {
            let a = rng.range(0.0, std::f64::consts::TAU);
            let d = 10f64.powf(rng.range(3.0, 6.0));
            let far = |a: f64| [(a.cos() * d) as f32, (a.sin() * d) as f32, 0.5, 1.0];
            let p = on_screen(&mut rng, 1.0, 0.5);
            if i % 2 == 0 {
                let q = [
                    p[0] + rng.range(-0.3, 0.3) as f32,
                    p[1] + rng.range(-0.3, 0.3) as f32,
                    0.5,
                    1.0,
                ];
                [p, q, far(a)]
            } else {
                let spread = 10f64.powf(rng.range(-4.0, -1.0)) / d.log10();
                [p, far(a), far(a + spread)]
            }
        })
        .collect();
    // One or two vertices behind the eye (w from -3 to -0.1).
    let behind: Vec<[[f32; 4]; 3]> = (0..60)
        .map(|i| {
            let mut t = [0; 3].map(|_| {
                let (w, z) = (rng.range(0.5, 3.0), rng.range(0.1, 0.9));
                on_screen(&mut rng, w, z)
            });
            for v in t.iter_mut().take(1 + i % 2) {
                let w = rng.range(-3.0, -0.1);
                *v = [
                    (rng.range(-2.0, 2.0) * w) as f32,
                    (rng.range(-2.0, 2.0) * w) as f32,
                    (rng.range(-1.0, 1.0) * w) as f32,
                    w as f32,
                ];
            }
            t
        })
        .collect();

    // Observed (rastra off the ideal / rastra vs lavapipe, farthest from an edge, px):
    // sides 0.00091 / 0.00044, near-far 0.00129 / 0, far-out 0.00124 / 0.00121,
    // behind 0 / 0.
    clip_case(&lp, "clip-sides", &sides, eps, eps);
    clip_case(&lp, "clip-near-far", &near_far, eps, eps);
    clip_case(&lp, "clip-far-out", &far_out, eps, eps);
    clip_case(&lp, "clip-behind", &behind, eps, eps);
}
