//! Rasterizer tests: ASCII coverage pictures on tiny framebuffers, the top-left fill rule,
//! sub-pixel snapping, and property tests for watertightness (T6; D3D11 §3.4.2 / Vulkan
//! §25.8 "Polygon rasterization").

use expect_test::{Expect, expect};
use proptest::prelude::*;
use rastra_pipeline::raster::{
    PATTERN_1X, PATTERN_4X, Rasterized, SamplePattern, pixel_coverage, rasterize,
};
use rastra_pipeline::setup::{Culled, PixelRect, SetupState, Triangle};
use rastra_pipeline::state::{CullMode, FrontFace, ScissorRect, Viewport};
use rastra_stats::Counters;

const W: u32 = 16;
const H: u32 = 16;

fn setup_state(w: u32, h: u32) -> SetupState {
    SetupState::new(
        Viewport::covering(w, h),
        ScissorRect::covering(w, h),
        w,
        h,
        CullMode::None,
        FrontFace::Ccw,
    )
}

/// Clip-space position of framebuffer point (x, y) (pixels, y down) with w = 1.
fn clip(x: f32, y: f32, w: u32, h: u32) -> [f32; 4] {
    [2.0 * x / w as f32 - 1.0, 1.0 - 2.0 * y / h as f32, 0.5, 1.0]
}

fn setup(tri: [(f32, f32); 3], w: u32, h: u32) -> Option<Triangle> {
    let p = tri.map(|(x, y)| clip(x, y, w, h));
    setup_state(w, h).setup([&p[0], &p[1], &p[2]], 0).ok()
}

/// Per-pixel coverage masks of a triangle on a w×h framebuffer.
fn coverage(tri: [(f32, f32); 3], w: u32, h: u32, pattern: &SamplePattern) -> Vec<u8> {
    let mut out = vec![0u8; (w * h) as usize];
    if let Some(t) = setup(tri, w, h) {
        let region = PixelRect {
            x0: 0,
            y0: 0,
            x1: w - 1,
            y1: h - 1,
        };
        rasterize(
            &t,
            &region,
            pattern,
            None,
            None,
            &mut Counters::default(),
            |r, _| {
                r.for_each_quad(pattern, |q| {
                    for i in 0..4u32 {
                        let (x, y) = (q.x + (i & 1), q.y + (i >> 1));
                        if q.coverage[i as usize] != 0 {
                            out[(y * w + x) as usize] = q.coverage[i as usize];
                        }
                    }
                })
            },
        );
    }
    out
}

fn picture(cov: &[u8], w: u32) -> String {
    let mut s = String::new();
    for row in cov.chunks(w as usize) {
        for &c in row {
            s.push(match c {
                0 => '.',
                1 => '#',
                m => char::from_digit(m.count_ones(), 10).unwrap(),
            });
        }
        s.push('\n');
    }
    s
}

fn check_coverage(tri: [(f32, f32); 3], expected: Expect) {
    expected.assert_eq(&picture(&coverage(tri, W, H, &PATTERN_1X), W));
}

#[test]
fn small_triangle() {
    check_coverage(
        [(5.0, 2.0), (2.0, 8.0), (11.0, 8.0)],
        expect![[r#"
            ................
            ................
            ................
            ....##..........
            ....###.........
            ...#####........
            ...######.......
            ..########......
            ................
            ................
            ................
            ................
            ................
            ................
            ................
            ................
        "#]],
    );
}

#[test]
fn winding_does_not_change_coverage() {
    let a = coverage([(1.3, 1.1), (13.7, 4.2), (6.1, 14.9)], W, H, &PATTERN_1X);
    let b = coverage([(1.3, 1.1), (6.1, 14.9), (13.7, 4.2)], W, H, &PATTERN_1X);
    assert_eq!(a, b);
    assert!(a.iter().any(|&c| c != 0));
}

/// Pixel centres exactly on an edge: top and left edges include them, bottom and right
/// edges do not (the top-left rule).
#[test]
fn top_left_rule_on_an_axis_aligned_square() {
    // Square from (2, 2) to (6, 6): the edges pass through pixel boundaries, not centres...
    let square = |x0: f32, y0: f32, x1: f32, y1: f32| {
        let mut a = coverage([(x0, y0), (x1, y0), (x1, y1)], W, H, &PATTERN_1X);
        let b = coverage([(x0, y0), (x1, y1), (x0, y1)], W, H, &PATTERN_1X);
        for (p, q) in a.iter_mut().zip(&b) {
            *p += q;
        }
        a
    };
    // ...so shift by half a pixel to put every centre of the border exactly on an edge.
    let cov = square(2.5, 2.5, 6.5, 6.5);
    expect![[r#"
        ................
        ................
        ..####..........
        ..####..........
        ..####..........
        ..####..........
        ................
        ................
        ................
        ................
        ................
        ................
        ................
        ................
        ................
        ................
    "#]]
    .assert_eq(&picture(&cov, W));
    assert!(
        cov.iter().all(|&c| c <= 1),
        "the shared diagonal is covered once"
    );
}

#[test]
fn sub_pixel_snapping_makes_slivers_degenerate() {
    // Vertices 1/1024 px apart in y snap onto the same 1/256 grid line: zero area.
    assert!(setup([(1.0, 4.0), (12.0, 4.0 + 1.0 / 1024.0), (6.0, 4.0)], W, H).is_none());
    // 1/256 apart is representable and survives setup.
    assert!(setup([(1.0, 4.0), (12.0, 4.0 + 1.0 / 256.0), (6.0, 4.0)], W, H).is_some());
}

#[test]
fn msaa_4x_counts_samples() {
    let cov = coverage([(0.0, 0.0), (16.0, 0.0), (0.0, 16.0)], W, H, &PATTERN_4X);
    // Pixels on the diagonal are partly covered.
    assert!(cov.iter().any(|&c| c != 0 && c != 0xf));
    expect![[r#"
        4444444444444442
        444444444444442.
        44444444444442..
        4444444444442...
        444444444442....
        44444444442.....
        4444444442......
        444444442.......
        44444442........
        4444442.........
        444442..........
        44442...........
        4442............
        442.............
        42..............
        2...............
    "#]]
    .assert_eq(&picture(&cov, W));
}

/// Blocks the triangle covers entirely (every sample) come out whole, the others as quads;
/// together they are the per-pixel coverage (the property tests below check that for any
/// triangle), and the quad count is the same either way.
#[test]
fn fully_covered_blocks_come_out_whole() {
    let (w, h) = (40, 24);
    // A right triangle over the top-left of the target: the blocks well inside its
    // hypotenuse are covered, the ones it crosses are not.
    let t = setup([(0.0, 0.0), (40.0, 0.0), (0.0, 24.0)], w, h).expect("a triangle");
    let region = PixelRect {
        x0: 0,
        y0: 0,
        x1: w - 1,
        y1: h - 1,
    };
    for pattern in [PATTERN_1X, PATTERN_4X] {
        let mut blocks = Vec::new();
        let mut quads = 0;
        let mut counters = Counters::default();
        rasterize(
            &t,
            &region,
            &pattern,
            None,
            None,
            &mut counters,
            |r, _| match r {
                Rasterized::Block { x, y } => blocks.push((x, y)),
                Rasterized::Quads(q) => quads += q.len() as u64,
            },
        );
        assert_eq!(blocks, [(0, 0), (8, 0), (16, 0), (0, 8)], "{pattern:?}");
        for &(bx, by) in &blocks {
            for y in by..by + 8 {
                for x in bx..bx + 8 {
                    assert_eq!(pixel_coverage(&t, x, y, &pattern), pattern.full_mask());
                }
            }
        }
        assert_eq!(counters.quads_rasterized, quads + 16 * blocks.len() as u64);
        // A region cutting a block, or a fractional viewport, sends its quads one by one.
        let cut = PixelRect {
            x0: 0,
            y0: 0,
            x1: 6,
            y1: 23,
        };
        let viewport = [0, 0, (w as i64) << 8, (h as i64) << 8];
        for (region, viewport) in [(&cut, None), (&region, Some(&viewport))] {
            rasterize(
                &t,
                region,
                &pattern,
                viewport,
                None,
                &mut counters,
                |r, _| {
                    assert!(matches!(r, Rasterized::Quads(_)), "{r:?}");
                },
            );
        }
    }
}

#[test]
fn grid_mesh_covers_every_pixel_exactly_once() {
    // A jittered 5×5 vertex grid spanning past the framebuffer, split into triangles.
    let n = 5;
    let mut verts = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let jitter = |k: usize| ((k * 7919) % 13) as f32 / 13.0 - 0.5;
            let x = -2.0
                + i as f32 * 5.0
                + if i % (n - 1) == 0 {
                    0.0
                } else {
                    jitter(i + j * n) * 2.3
                };
            let y = -2.0
                + j as f32 * 5.0
                + if j % (n - 1) == 0 {
                    0.0
                } else {
                    jitter(3 * i + j) * 2.1
                };
            verts.push((x, y));
        }
    }
    let mut count = vec![0u8; (W * H) as usize];
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let a = verts[j * n + i];
            let b = verts[j * n + i + 1];
            let c = verts[(j + 1) * n + i];
            let d = verts[(j + 1) * n + i + 1];
            for tri in [[a, b, d], [a, d, c]] {
                for (k, &m) in coverage(tri, W, H, &PATTERN_1X).iter().enumerate() {
                    count[k] += (m != 0) as u8;
                }
            }
        }
    }
    assert!(count.iter().all(|&c| c == 1), "{}", picture(&count, W));
}

fn point() -> impl Strategy<Value = (f32, f32)> {
    (-4.0f32..20.0, -4.0f32..20.0)
}

/// A triangle inside pixel (2, 2) that misses its centre but holds the 4× pattern's first
/// sample, (0.375, 0.125): dropped at set-up for one sample a pixel (its bounding box holds
/// no pixel centre), kept for four, and then covering that one sample.
#[test]
fn triangles_holding_no_sample_position_are_dropped() {
    let tri = [(2.0, 2.0), (2.45, 2.0), (2.45, 2.45)];
    let p = tri.map(|(x, y)| clip(x, y, W, H));
    let state = |pattern: &SamplePattern| setup_state(W, H).with_samples(pattern);
    assert_eq!(
        state(&PATTERN_1X).setup([&p[0], &p[1], &p[2]], 0).err(),
        Some(Culled::NoSample)
    );
    let t = state(&PATTERN_4X)
        .setup([&p[0], &p[1], &p[2]], 0)
        .expect("kept at 4×");
    assert_eq!(
        t.bounds,
        PixelRect {
            x0: 2,
            y0: 2,
            x1: 2,
            y1: 2
        }
    );
    assert_eq!(pixel_coverage(&t, 2, 2, &PATTERN_4X), 0b0001);
}

/// Small triangles (a few pixels or less) anywhere on a 16×16 target.
fn small_tri() -> impl Strategy<Value = [(f32, f32); 3]> {
    (
        (-1.0f32..17.0, -1.0f32..17.0),
        (-2.0f32..2.0, -2.0f32..2.0),
        (-2.0f32..2.0, -2.0f32..2.0),
    )
        .prop_map(|(a, d, e)| [a, (a.0 + d.0, a.1 + d.1), (a.0 + e.0, a.1 + e.1)])
}

proptest! {
    /// Bounding triangles by their pattern's sample positions loses no covered sample: a
    /// triangle set up with the pattern rasterizes to the same coverage as without it
    /// (samples anywhere in a pixel), and one it drops for holding no sample position
    /// covers no sample at all.
    #[test]
    fn sample_bounds_keep_every_covered_sample(tri in small_tri()) {
        let (w, h) = (W, H);
        let p = tri.map(|(x, y)| clip(x, y, w, h));
        let loose = setup_state(w, h).setup([&p[0], &p[1], &p[2]], 0);
        for pattern in [PATTERN_1X, PATTERN_4X] {
            let tight = setup_state(w, h).with_samples(&pattern).setup([&p[0], &p[1], &p[2]], 0);
            let Ok(loose) = &loose else {
                prop_assert!(tight.is_err());
                continue;
            };
            let mut want = vec![0u8; (w * h) as usize];
            let b = loose.bounds;
            for y in b.y0..=b.y1 {
                for x in b.x0..=b.x1 {
                    want[(y * w + x) as usize] = pixel_coverage(loose, x, y, &pattern);
                }
            }
            match tight {
                Err(Culled::NoSample) => prop_assert!(want.iter().all(|&c| c == 0)),
                Err(e) => prop_assert!(false, "loose set-up kept it, tight dropped it: {:?}", e),
                Ok(t) => {
                    let region = PixelRect { x0: 0, y0: 0, x1: w - 1, y1: h - 1 };
                    let mut got = vec![0u8; (w * h) as usize];
                    rasterize(&t, &region, &pattern, None, None, &mut Counters::default(), |r, _| {
                        r.for_each_quad(&pattern, |q| {
                            for i in 0..4u32 {
                                got[((q.y + (i >> 1)) * w + q.x + (i & 1)) as usize] =
                                    q.coverage[i as usize];
                            }
                        })
                    });
                    prop_assert_eq!(got, want);
                }
            }
        }
    }
}

proptest! {
    /// Whatever path the rasterizer takes for a block (whole, partial), every pixel's
    /// coverage is the per-pixel edge test's, inside tiles and odd regions too.
    #[test]
    fn block_paths_equal_the_per_pixel_test(a in point(), b in point(), c in point(), scale in 1.0f32..8.0) {
        let big = |p: (f32, f32)| (p.0 * scale, p.1 * scale);
        let (w, h) = (160, 160);
        for pattern in [PATTERN_1X, PATTERN_4X] {
            let Some(t) = setup([big(a), big(b), big(c)], w, h) else { continue };
            for region in [
                PixelRect { x0: 0, y0: 0, x1: w - 1, y1: h - 1 },
                PixelRect { x0: 64, y0: 0, x1: 127, y1: 63 },
                PixelRect { x0: 10, y0: 22, x1: 57, y1: 101 },
            ] {
                let mut got = vec![0u8; (w * h) as usize];
                rasterize(&t, &region, &pattern, None, None, &mut Counters::default(), |r, _| {
                    r.for_each_quad(&pattern, |q| {
                        for i in 0..4u32 {
                            got[((q.y + (i >> 1)) * w + q.x + (i & 1)) as usize] = q.coverage[i as usize];
                        }
                    })
                });
                for y in region.y0..=region.y1 {
                    for x in region.x0..=region.x1 {
                        let want = pixel_coverage(&t, x, y, &pattern);
                        prop_assert_eq!(got[(y * w + x) as usize], want, "pixel ({}, {})", x, y);
                    }
                }
            }
        }
    }

    /// The same for triangles reaching far into the guard band (one vertex on screen, two
    /// up to 200 000 pixels away): edge values and steps too large for 32-bit lanes take
    /// the 64-bit walk, and both walks agree with the per-pixel test.
    #[test]
    fn huge_triangles_equal_the_per_pixel_test(
        a in point(),
        b in (-200_000.0f32..200_000.0, -200_000.0f32..200_000.0),
        c in (-200_000.0f32..200_000.0, -200_000.0f32..200_000.0),
    ) {
        let (w, h) = (96, 96);
        for pattern in [PATTERN_1X, PATTERN_4X] {
            let Some(t) = setup([a, b, c], w, h) else { continue };
            let region = PixelRect { x0: 0, y0: 0, x1: w - 1, y1: h - 1 };
            let mut got = vec![0u8; (w * h) as usize];
            rasterize(&t, &region, &pattern, None, None, &mut Counters::default(), |r, _| {
                r.for_each_quad(&pattern, |q| {
                    for i in 0..4u32 {
                        got[((q.y + (i >> 1)) * w + q.x + (i & 1)) as usize] = q.coverage[i as usize];
                    }
                })
            });
            for y in 0..h {
                for x in 0..w {
                    let want = pixel_coverage(&t, x, y, &pattern);
                    prop_assert_eq!(got[(y * w + x) as usize], want, "pixel ({}, {})", x, y);
                }
            }
        }
    }

    /// Two triangles sharing an edge never cover a sample twice, and a convex quad is
    /// covered identically whichever diagonal splits it.
    #[test]
    fn shared_edges_are_watertight(a in point(), b in point(), c in point(), d in point()) {
        // Order the four points as a convex quad if they form one.
        let pts = [a, b, c, d];
        let cx = pts.iter().map(|p| p.0).sum::<f32>() / 4.0;
        let cy = pts.iter().map(|p| p.1).sum::<f32>() / 4.0;
        let mut sorted = pts;
        sorted.sort_by(|p, q| (p.1 - cy).atan2(p.0 - cx).total_cmp(&(q.1 - cy).atan2(q.0 - cx)));
        let [p0, p1, p2, p3] = sorted;
        let cross = |o: (f32, f32), u: (f32, f32), v: (f32, f32)| (u.0 - o.0) * (v.1 - o.1) - (u.1 - o.1) * (v.0 - o.0);
        let turns = [cross(p0, p1, p2), cross(p1, p2, p3), cross(p2, p3, p0), cross(p3, p0, p1)];
        prop_assume!(turns.iter().all(|&t| t > 1.0));
        for pattern in [PATTERN_1X, PATTERN_4X] {
            let split = |t1: [(f32, f32); 3], t2: [(f32, f32); 3]| {
                let x = coverage(t1, W, H, &pattern);
                let y = coverage(t2, W, H, &pattern);
                let overlap = x.iter().zip(&y).any(|(m, n)| m & n != 0);
                let union: Vec<u8> = x.iter().zip(&y).map(|(m, n)| m | n).collect();
                (overlap, union)
            };
            let (o1, u1) = split([p0, p1, p2], [p0, p2, p3]);
            let (o2, u2) = split([p1, p2, p3], [p1, p3, p0]);
            prop_assert!(!o1 && !o2, "a sample was covered twice");
            prop_assert_eq!(u1, u2);
        }
    }
}
