//! Scratch exploration (to be deleted).
use rastra::*;
use rastra_lavapipe::*;
use rastra_scene::*;

const SHADER: &str = r#"
struct FlatOut { @builtin(position) pos: vec4<f32>, @location(0) @interpolate(flat) color: vec4<f32> }
@vertex fn vs_flat(@location(0) pos: vec4<f32>, @location(1) color: vec4<f32>) -> FlatOut {
    var o: FlatOut; o.pos = pos; o.color = color; return o;
}
@fragment fn fs_flat(v: FlatOut) -> @location(0) vec4<f32> { return v.color; }
"#;

fn frame(size: u32, samples: u32, verts: &[[f32; 4]]) -> Frame {
    let mut data = Vec::new();
    for v in verts { data.extend(f32_bytes(v)); data.extend([255u8, 255, 255, 255]); }
    Frame {
        name: "scratch".into(), width: size, height: size, samples,
        color_format: TextureFormat::Rgba8Unorm, depth_format: None, clear_color: Color::BLACK, clear_depth: 1.0,
        shader: SHADER.into(),
        buffers: vec![BufferData { label: "v".into(), data, usage: BufferUsages::VERTEX }],
        pipelines: vec![PipelineRecipe { vs_entry: "vs_flat".into(), fs_entry: "fs_flat".into(),
            vertex_buffers: vec![VertexBufferLayout { array_stride: 20, step_mode: VertexStepMode::Vertex, attributes: vec![
                VertexAttribute { format: VertexFormat::Float32x4, offset: 0, shader_location: 0 },
                VertexAttribute { format: VertexFormat::Unorm8x4, offset: 16, shader_location: 1 }] }],
            primitive: PrimitiveState::default(), depth: None, blend: None, write_mask: ColorWrites::ALL }],
        draws: vec![DrawRecipe { pipeline: 0, vertex_buffers: vec![0], index_buffer: None, bindings: vec![], kind: DrawKind::Vertices(0..verts.len() as u32), instances: 0..1 }],
    }
}

fn snap(ndc: [f32; 2], size: u32) -> [i64; 2] {
    let h = size as f32 / 2.0;
    let xw = ndc[0] * h + h;
    let yw = -ndc[1] * h + h;
    [(xw as f64 * 256.0).round_ties_even() as i64, (yw as f64 * 256.0).round_ties_even() as i64]
}

const S4: [(f64, f64); 4] = [(0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875)];

fn oracle(t: [[f32; 2]; 3], size: u32, samples: &[(f64, f64)]) -> Vec<u32> {
    let mut v = t.map(|p| snap(p, size));
    let area = (v[1][0] - v[0][0]) * (v[2][1] - v[0][1]) - (v[2][0] - v[0][0]) * (v[1][1] - v[0][1]);
    let mut out = vec![0; (size * size) as usize];
    if area == 0 { return out; }
    if area < 0 { v.swap(1, 2); }
    for py in 0..size { for px in 0..size {
        let mut n = 0;
        for &(sx, sy) in samples {
            let (cx, cy) = ((px as f64 + sx) * 256.0, (py as f64 + sy) * 256.0);
            let (cx, cy) = (cx as i64, cy as i64);
            let mut inside = true;
            for i in 0..3 {
                let a = v[i]; let b = v[(i + 1) % 3];
                let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
                let e = dx * (cy - a[1]) - dy * (cx - a[0]);
                let incl = dy < 0 || (dy == 0 && dx > 0);
                if !(e > 0 || (e == 0 && incl)) { inside = false; }
            }
            if inside { n += 1; }
        }
        out[(py * size + px) as usize] = n;
    }}
    out
}

struct Rng(u64);
impl Rng { fn next(&mut self) -> u64 { self.0 ^= self.0 >> 12; self.0 ^= self.0 << 25; self.0 ^= self.0 >> 27; self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) }
  fn f(&mut self, lo: f64, hi: f64) -> f64 { lo + (self.next() >> 11) as f64 / (1u64 << 53) as f64 * (hi - lo) } }

#[test]
fn scratch() {
    let lp = Lavapipe::new().unwrap();
    let samples: u32 = std::env::var("SAMPLES").map(|s| s.parse().unwrap()).unwrap_or(1);
    let grid: bool = std::env::var("GRID").is_ok();
    let size = 32;
    let mut rng = Rng(77);
    let (mut bad_r, mut bad_l) = (0, 0);
    for k in 0..60 {
        let c = [rng.f(4.0, 28.0), rng.f(4.0, 28.0)];
        let r = [1.0, 3.0, 10.0][k % 3];
        let t: [[f32; 2]; 3] = [0; 3].map(|_| {
            let mut x = (c[0] + rng.f(-r, r)).clamp(0.0, 32.0);
            let mut y = (c[1] + rng.f(-r, r)).clamp(0.0, 32.0);
            if grid { x = (x * 4.0).round() / 4.0; y = (y * 4.0).round() / 4.0; }
            [(x / 16.0 - 1.0) as f32, (1.0 - y / 16.0) as f32]
        });
        let verts: Vec<[f32; 4]> = t.iter().map(|p| [p[0], p[1], 0.5, 1.0]).collect();
        let f = frame(size, samples, &verts);
        let a = f.render(&Default::default(), 1).unwrap().pixels;
        let b = lp.render(&f, 1).unwrap().pixels;
        let sp: Vec<(f64, f64)> = if samples == 4 { S4.to_vec() } else { vec![(0.5, 0.5)] };
        let o = oracle(t, size, &sp);
        for i in 0..(size * size) as usize {
            let expect = o[i];
            let from = |v: u8| ((v as u32 * samples) as f64 / 255.0).round() as u32;
            let (ra, la) = (from(a[4 * i]), from(b[4 * i]));
            if ra != expect || la != expect {
                eprintln!("tri {k} {t:?} pixel ({}, {}): oracle {expect}, rastra {} ({}), lavapipe {} ({})", i as u32 % size, i as u32 / size, ra, a[4*i], la, b[4*i]);
                if ra != expect { bad_r += 1 } if la != expect { bad_l += 1 }
            }
        }
    }
    eprintln!("samples {samples}: rastra off oracle {bad_r}, lavapipe off oracle {bad_l}");
}
