//! Helpers of the differential tests: the shader and vertex layout every test frame uses,
//! frame construction, a seeded generator, rendering one frame on both renderers and
//! comparing (with images written on failure), and exact coverage oracles ([`oracle`]).

pub mod oracle;

use std::ops::Range;
use std::path::PathBuf;

use rastra::{
    BufferUsages, Color, ColorWrites, CompareFunction, DepthStencilState, PrimitiveState,
    TextureFormat, VertexAttribute, VertexBufferLayout, VertexFormat, VertexStepMode,
};
use rastra_lavapipe::{Diff, Lavapipe, compare_rgba8};
use rastra_scene::{BufferData, DrawKind, DrawRecipe, Frame, PipelineRecipe};

/// One module for every frame: flat colours (coverage tests), perspective-correct colours
/// (interpolation tests) and pixel-position patterns (blending tests).
pub const SHADER: &str = r#"
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

// A colour that depends only on the pixel, an exact multiple of 1/255 per channel, so both
// renderers start blending from the same 8-bit values.
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
pub struct Vertex {
    pub pos: [f32; 4],
    pub color: [u8; 4],
}

pub const VERTEX_STRIDE: u64 = 20;

pub fn vertex_bytes(vertices: &[Vertex]) -> Vec<u8> {
    let mut out = Vec::with_capacity(vertices.len() * VERTEX_STRIDE as usize);
    for v in vertices {
        out.extend(rastra_scene::f32_bytes(&v.pos));
        out.extend(v.color);
    }
    out
}

pub fn vertex_layout() -> VertexBufferLayout {
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

/// Which entry points a pipeline uses.
#[derive(Clone, Copy, Debug)]
pub enum Shading {
    /// Flat colour from the provoking vertex.
    Flat,
    /// Perspective-correct colour.
    Smooth,
    /// `fs_source` / `fs_destination`: colour from the pixel position.
    Source,
    Destination,
}

pub fn pipeline(shading: Shading) -> PipelineRecipe {
    let (vs, fs) = match shading {
        Shading::Flat => ("vs_flat", "fs_flat"),
        Shading::Smooth => ("vs_smooth", "fs_smooth"),
        Shading::Source => ("vs_smooth", "fs_source"),
        Shading::Destination => ("vs_smooth", "fs_destination"),
    };
    PipelineRecipe {
        vs_entry: vs.into(),
        fs_entry: fs.into(),
        vertex_buffers: vec![vertex_layout()],
        primitive: PrimitiveState::default(),
        depth: None,
        blend: None,
        write_mask: ColorWrites::ALL,
    }
}

pub fn depth_less() -> Option<DepthStencilState> {
    Some(DepthStencilState {
        format: TextureFormat::Depth32Float,
        depth_write_enabled: true,
        depth_compare: CompareFunction::Less,
        bias: rastra::DepthBias::default(),
    })
}

pub fn draw(pipeline: usize, vertices: Range<u32>) -> DrawRecipe {
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
pub fn frame(name: &str, size: u32, vertices: &[Vertex], pipeline: PipelineRecipe) -> Frame {
    Frame {
        name: name.into(),
        width: size,
        height: size,
        samples: 1,
        color_format: TextureFormat::Rgba8Unorm,
        depth_format: None,
        clear_color: Color::BLACK,
        clear_depth: 1.0,
        blend_constant: Color::TRANSPARENT,
        shader: SHADER.into(),
        buffers: vec![BufferData {
            label: "vertices".into(),
            data: vertex_bytes(vertices),
            usage: BufferUsages::VERTEX,
        }],
        textures: Vec::new(),
        samplers: Vec::new(),
        pipelines: vec![pipeline],
        draws: vec![draw(0, 0..vertices.len() as u32)],
    }
}

/// Window pixel coordinates (y down) of a `size`-pixel-square target → NDC (y up).
pub fn ndc(size: u32, x: f64, y: f64) -> [f32; 2] {
    let s = size as f64;
    [(x / s * 2.0 - 1.0) as f32, (1.0 - y / s * 2.0) as f32]
}

/// xorshift64*: deterministic, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (self.next() >> 11) as f64 / (1u64 << 53) as f64 * (hi - lo)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn byte(&mut self) -> u8 {
        (self.next() >> 56) as u8
    }
}

/// A distinct, opaque colour for triangle `i`.
pub fn unique_color(i: usize) -> [u8; 4] {
    let h = (i as u32 + 1).wrapping_mul(0x9e37_79b9);
    [
        (h >> 24) as u8,
        (h >> 16) as u8,
        (i as u8).wrapping_mul(53),
        255,
    ]
}

/// lavapipe, or None after saying why the test is skipped.
pub fn lavapipe() -> Option<Lavapipe> {
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

/// Writes both images and a difference mask (white where any channel differs) to
/// `target/diff/<frame>-{rastra,lavapipe,difference}.png`.
pub fn write_images(frame: &Frame, rastra: &[u8], lavapipe: &[u8]) {
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

/// Both renderings of a frame and their difference (rastra is `a` in the `Diff`).
pub struct Both {
    pub rastra: Vec<u8>,
    pub lavapipe: Vec<u8>,
    pub diff: Diff,
}

pub fn render_both(lp: &Lavapipe, frame: &Frame) -> Both {
    let rastra = frame
        .render(&Default::default(), 1)
        .unwrap_or_else(|e| panic!("rastra, frame {:?}: {e}", frame.name))
        .pixels;
    let lavapipe = lp.render(frame, 1).unwrap_or_else(|e| panic!("{e}")).pixels;
    let diff = compare_rgba8(&rastra, &lavapipe, frame.width);
    Both {
        rastra,
        lavapipe,
        diff,
    }
}

/// Asserts the images differ by at most `tolerance` per channel (0: identical); on failure
/// writes the images and adds `explain` to the message.
pub fn check(both: &Both, frame: &Frame, tolerance: u8, explain: impl FnOnce() -> String) {
    let diff = both.diff;
    eprintln!("{}: {diff}", frame.name);
    if diff.max_channel_diff > tolerance {
        write_images(frame, &both.rastra, &both.lavapipe);
        panic!(
            "{}: rastra vs lavapipe: {diff} (tolerance {tolerance}; rastra first)\n{}",
            frame.name,
            explain()
        );
    }
}

/// Renders `frame` on both and checks it within `tolerance`.
pub fn check_frame(lp: &Lavapipe, frame: &Frame, tolerance: u8) -> Both {
    let both = render_both(lp, frame);
    check(&both, frame, tolerance, String::new);
    both
}
