//! Differential tests: the same [`Frame`] rendered on rastra and on lavapipe, compared pixel
//! for pixel. Coverage (fill rule, sub-pixel snapping, clipping, depth test) must be
//! identical; colour arithmetic that legitimately differs between the two (f32 evaluation
//! order, lavapipe's 8-bit fixed-point blending, resolve rounding) is compared within a
//! recorded tolerance whose reason is stated where it is set.
//!
//! Each test skips, saying why, when lavapipe is not installed (CI installs it). On a
//! mismatch the two images (and a difference mask) are written to
//! `target/diff/<frame>-{rastra,lavapipe,difference}.png`.

use std::ops::Range;
use std::path::PathBuf;

use rastra::{
    BlendComponent, BlendFactor, BlendOperation, BlendState, BufferUsages, Color, ColorWrites,
    CompareFunction, DepthStencilState, IndexFormat, PrimitiveState, PrimitiveTopology,
    TextureFormat, VertexAttribute, VertexBufferLayout, VertexFormat, VertexStepMode,
};
use rastra_lavapipe::{Diff, Lavapipe, compare_rgba8};
use rastra_scene::{BufferData, DrawKind, DrawRecipe, Frame, PipelineRecipe};

// ---------------------------------------------------------------------------------------
// Frames
// ---------------------------------------------------------------------------------------

/// One module for every frame here: flat colours (coverage tests), perspective-correct
/// colours (interpolation tests) and pixel-position patterns (blending tests).
const SHADER: &str = r#"
struct FlatOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) @interpolate(flat) color: vec4<f32>,
}

@vertex fn vs_flat(@location(0) pos: vec4<f32>, @location(1) color: vec4<f32>) -> FlatOut {
    var o: FlatOut;
    o.pos = pos;
    o.color = color;
    return o;
}

@fragment fn fs_flat(v: FlatOut) -> @location(0) vec4<f32> {
    return v.color;
}

struct SmoothOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) color: vec4<f32>,
}

@vertex fn vs_smooth(@location(0) pos: vec4<f32>, @location(1) color: vec4<f32>) -> SmoothOut {
    var o: SmoothOut;
    o.pos = pos;
    o.color = color;
    return o;
}

@fragment fn fs_smooth(v: SmoothOut) -> @location(0) vec4<f32> {
    return v.color;
}

// Colours that depend only on the pixel, exact multiples of 1/255 so both renderers start
// blending from the same 8-bit values.
fn pattern(p: vec4<f32>, k: vec4<u32>, j: vec4<u32>) -> vec4<f32> {
    let x = u32(p.x);
    let y = u32(p.y);
    let v = (vec4<u32>(x) * k + vec4<u32>(y) * j) % vec4<u32>(256u);
    return vec4<f32>(v) / 255.0;
}

@fragment fn fs_source(v: SmoothOut) -> @location(0) vec4<f32> {
    return pattern(v.pos, vec4<u32>(37u, 13u, 71u, 23u), vec4<u32>(11u, 41u, 29u, 53u));
}

@fragment fn fs_destination(v: SmoothOut) -> @location(0) vec4<f32> {
    return pattern(v.pos, vec4<u32>(19u, 59u, 7u, 43u), vec4<u32>(67u, 5u, 47u, 17u));
}
"#;

/// A vertex: clip-space position and an 8-bit colour (fetched as `Unorm8x4`).
#[derive(Clone, Copy, Debug)]
struct Vertex {
    pos: [f32; 4],
    color: [u8; 4],
}

const VERTEX_STRIDE: u64 = 20;

fn vertex_bytes(vertices: &[Vertex]) -> Vec<u8> {
    let mut out = Vec::with_capacity(vertices.len() * VERTEX_STRIDE as usize);
    for v in vertices {
        out.extend(rastra_scene::f32_bytes(&v.pos));
        out.extend(v.color);
    }
    out
}

fn vertex_layout() -> VertexBufferLayout {
    VertexBufferLayout {
        array_stride: VERTEX_STRIDE,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![
            VertexAttribute {
                format: VertexFormat::Float32x4,
                offset: 0,
                shader_location: 0,
            },
            VertexAttribute {
                format: VertexFormat::Unorm8x4,
                offset: 16,
                shader_location: 1,
            },
        ],
    }
}

/// Interpolation of the colour varying.
#[derive(Clone, Copy)]
enum Shading {
    Flat,
    Smooth,
}

fn pipeline(shading: Shading, blend: Option<BlendState>) -> PipelineRecipe {
    let (vs, fs) = match shading {
        Shading::Flat => ("vs_flat", "fs_flat"),
        Shading::Smooth => ("vs_smooth", "fs_smooth"),
    };
    PipelineRecipe {
        vs_entry: vs.into(),
        fs_entry: fs.into(),
        vertex_buffers: vec![vertex_layout()],
        primitive: PrimitiveState::default(),
        depth: None,
        blend,
        write_mask: ColorWrites::ALL,
    }
}

fn depth_less() -> Option<DepthStencilState> {
    Some(DepthStencilState {
        format: TextureFormat::Depth32Float,
        depth_write_enabled: true,
        depth_compare: CompareFunction::Less,
    })
}

fn draw(pipeline: usize, vertices: Range<u32>) -> DrawRecipe {
    DrawRecipe {
        pipeline,
        vertex_buffers: vec![0],
        index_buffer: None,
        bindings: vec![],
        kind: DrawKind::Vertices(vertices),
        instances: 0..1,
    }
}

/// A `size`×`size` Rgba8Unorm frame drawing `vertices` as one triangle list with `pipeline`
/// over opaque black; tests adjust the fields they need.
fn frame(name: &str, size: u32, vertices: &[Vertex], pipeline: PipelineRecipe) -> Frame {
    Frame {
        name: name.into(),
        width: size,
        height: size,
        samples: 1,
        color_format: TextureFormat::Rgba8Unorm,
        depth_format: None,
        clear_color: Color::BLACK,
        clear_depth: 1.0,
        shader: SHADER.into(),
        buffers: vec![BufferData {
            label: "vertices".into(),
            data: vertex_bytes(vertices),
            usage: BufferUsages::VERTEX,
        }],
        pipelines: vec![pipeline],
        draws: vec![draw(0, 0..vertices.len() as u32)],
    }
}

/// Window pixel coordinates (y down) of a `size`-pixel-square target → NDC (y up).
fn ndc(size: u32, x: f64, y: f64) -> [f32; 2] {
    let s = size as f64;
    [(x / s * 2.0 - 1.0) as f32, (1.0 - y / s * 2.0) as f32]
}

// ---------------------------------------------------------------------------------------
// Random geometry
// ---------------------------------------------------------------------------------------

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [lo, hi).
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (self.next() >> 11) as f64 / (1u64 << 53) as f64 * (hi - lo)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A distinct, opaque colour for triangle `i` (channels far apart for neighbouring `i`).
fn unique_color(i: usize) -> [u8; 4] {
    let h = (i as u32 + 1).wrapping_mul(0x9e37_79b9);
    [
        (h >> 24) as u8,
        (h >> 16) as u8,
        (i as u8).wrapping_mul(53),
        255,
    ]
}

/// Random triangles in window pixels, cycling through kinds that stress different parts of
/// setup and rasterization.
fn random_triangles_px(rng: &mut Rng, count: usize, size: u32) -> Vec<[[f64; 2]; 3]> {
    let s = size as f64;
    let mut tris = Vec::with_capacity(count);
    for i in 0..count {
        let c = [rng.range(-2.0, s + 2.0), rng.range(-2.0, s + 2.0)];
        let around = |rng: &mut Rng, r: f64| [c[0] + rng.range(-r, r), c[1] + rng.range(-r, r)];
        let tri = match i % 6 {
            // Large: anywhere, partly off screen.
            0 => [0; 3].map(|_| [rng.range(-0.2 * s, 1.2 * s), rng.range(-0.2 * s, 1.2 * s)]),
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
                        // Keep one vertex axis-aligned with the base half the time.
                        if rng.below(3) != 0 || k == 0 {
                            *x += (rng.below(25) as f64 - 12.0) / 2.0;
                        }
                    }
                }
                p
            }
        };
        tris.push(tri);
    }
    tris
}

/// Triangles with flat unique colours, as vertices (z = 0.5, w = 1).
fn flat_vertices(size: u32, tris: &[[[f64; 2]; 3]]) -> Vec<Vertex> {
    let mut out = Vec::with_capacity(tris.len() * 3);
    for (i, t) in tris.iter().enumerate() {
        for p in t {
            let [x, y] = ndc(size, p[0], p[1]);
            out.push(Vertex {
                pos: [x, y, 0.5, 1.0],
                color: unique_color(i),
            });
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------

fn lavapipe() -> Option<Lavapipe> {
    match Lavapipe::new() {
        Ok(lp) => Some(lp),
        Err(why) => {
            eprintln!("skipping: {why}");
            None
        }
    }
}

fn diff_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("diff")
}

/// Writes both images and a difference mask (white where any channel differs) for a
/// failing comparison.
fn write_images(frame: &Frame, rastra: &[u8], lavapipe: &[u8]) {
    let dir = diff_dir();
    let _ = std::fs::create_dir_all(&dir);
    let save = |suffix: &str, pixels: Vec<u8>| {
        let path = dir.join(format!("{}-{suffix}.png", frame.name));
        match image::RgbaImage::from_raw(frame.width, frame.height, pixels) {
            Some(img) => match img.save(&path) {
                Ok(()) => eprintln!("wrote {}", path.display()),
                Err(e) => eprintln!("could not write {}: {e}", path.display()),
            },
            None => eprintln!("{suffix} image has the wrong size"),
        }
    };
    save("rastra", rastra.to_vec());
    save("lavapipe", lavapipe.to_vec());
    let mask = rastra
        .chunks_exact(4)
        .zip(lavapipe.chunks_exact(4))
        .flat_map(|(a, b)| if a == b { [0, 0, 0, 255] } else { [255; 4] })
        .collect();
    save("difference", mask);
}

/// Renders `frame` on both and compares; the rastra image comes first in the `Diff`.
fn render_both(lp: &Lavapipe, frame: &Frame) -> (Diff, Vec<u8>, Vec<u8>) {
    let ours = frame
        .render(&Default::default(), 1)
        .unwrap_or_else(|e| panic!("rastra, frame {:?}: {e}", frame.name))
        .pixels;
    let reference = lp.render(frame, 1).unwrap_or_else(|e| panic!("{e}")).pixels;
    let diff = compare_rgba8(&ours, &reference, frame.width);
    (diff, ours, reference)
}

/// Asserts the images differ by at most `tolerance` per channel (0: identical).
fn check(diff: Diff, frame: &Frame, ours: &[u8], reference: &[u8], tolerance: u8) {
    eprintln!("{}: {diff}", frame.name);
    if diff.max_channel_diff > tolerance {
        write_images(frame, ours, reference);
        panic!(
            "{}: rastra vs lavapipe: {diff} (tolerance {tolerance}); rastra first",
            frame.name
        );
    }
}

fn check_frame(lp: &Lavapipe, frame: &Frame, tolerance: u8) -> Diff {
    let (diff, ours, reference) = render_both(lp, frame);
    check(diff, frame, &ours, &reference, tolerance);
    diff
}

/// When a coverage test fails, names the triangles drawn over the first differing pixel
/// (in draw order), so the failure can be reproduced with one triangle.
fn explain_coverage(size: u32, tris: &[[[f64; 2]; 3]], diff: &Diff) -> String {
    let Some((x, y, ours, reference)) = diff.first else {
        return String::new();
    };
    let mut s =
        format!("pixel ({x}, {y}): rastra {ours:?}, lavapipe {reference:?}; triangles near it:");
    let (cx, cy) = (x as f64 + 0.5, y as f64 + 0.5);
    for (i, t) in tris.iter().enumerate() {
        let min = |k: usize| t.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min);
        let max = |k: usize| t.iter().map(|p| p[k]).fold(f64::NEG_INFINITY, f64::max);
        if min(0) <= cx + 1.0 && max(0) >= cx - 1.0 && min(1) <= cy + 1.0 && max(1) >= cy - 1.0 {
            let ndc: Vec<[f32; 2]> = t.iter().map(|p| ndc(size, p[0], p[1])).collect();
            s += &format!("\n  #{i} colour {:?} px {t:?} ndc {ndc:?}", unique_color(i));
        }
    }
    let _ = size;
    s
}

// ---------------------------------------------------------------------------------------
// 1. Coverage
// ---------------------------------------------------------------------------------------

fn coverage_case(lp: &Lavapipe, name: &str, size: u32, count: usize, samples: u32, tolerance: u8) {
    let mut rng = Rng(0x5eed_0000 + size as u64 * 31 + samples as u64);
    let tris = random_triangles_px(&mut rng, count, size);
    let mut f = frame(
        name,
        size,
        &flat_vertices(size, &tris),
        pipeline(Shading::Flat, None),
    );
    f.samples = samples;
    let (diff, ours, reference) = render_both(lp, &f);
    if diff.max_channel_diff > tolerance {
        eprintln!("{}", explain_coverage(size, &tris, &diff));
    }
    check(diff, &f, &ours, &reference, tolerance);
}

/// Random triangles of every size, flat colours, no blending: the last triangle covering a
/// pixel's centre colours it, so any fill-rule or snapping difference shows.
/// Observed: 0 differing pixels at 64×64 (300 triangles) and 256×256 (1200 triangles).
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
    let add = Some(BlendState {
        color: BlendComponent {
            src_factor: BlendFactor::One,
            dst_factor: BlendFactor::One,
            operation: BlendOperation::Add,
        },
        alpha: BlendComponent {
            src_factor: BlendFactor::One,
            dst_factor: BlendFactor::One,
            operation: BlendOperation::Add,
        },
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
    let mut fan_frame = frame("shared-fan", size, &fan, pipeline(Shading::Flat, add));
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
    let mut grid_frame = frame("shared-grid", size, &grid, pipeline(Shading::Flat, add));
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
        let (diff, ours, reference) = render_both(&lp, f);
        check(diff, f, &ours, &reference, 0);
        let bad = ours
            .chunks_exact(4)
            .position(|p| p[1] != 0 && p[1] != v || p[1] != p[3]);
        assert_eq!(bad, None, "{}: a pixel covered more than once", f.name);
        let covered = ours.chunks_exact(4).filter(|p| p[1] == v).count();
        eprintln!("{}: {covered} pixels covered once", f.name);
        assert!(covered > 1500, "{}: only {covered} pixels covered", f.name);
    }
}

// ---------------------------------------------------------------------------------------
// 2. MSAA
// ---------------------------------------------------------------------------------------

/// The random triangles at 4× MSAA, resolved. Tolerance 1 per channel: the resolve averages
/// four 8-bit samples and the two round that average differently; a single sample covered
/// differently changes a pixel by a quarter of the colour difference, far above 1.
/// Observed: see the figures printed (recorded in the report).
#[test]
fn msaa4_coverage_matches_within_resolve_rounding() {
    let Some(lp) = lavapipe() else { return };
    coverage_case(&lp, "msaa4-64", 64, 300, 4, 1);
    coverage_case(&lp, "msaa4-256", 256, 1200, 4, 1);
}
