//! Attribute interpolation through the whole API, read back from a 32-bit float target so
//! that single-ulp differences show: an input all three vertices hold alike is that value
//! over the whole triangle, with zero derivatives, whatever the vertices' w; a varying one
//! is the perspective-correct blend of its vertex values.

mod common;

use common::*;
use rastra::*;

const SHADER: &str = r#"
struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
}

@vertex
fn vs(@location(0) position: vec4<f32>, @location(1) color: vec4<f32>) -> VertexOut {
    var out: VertexOut;
    out.clip = position;
    out.color = color;
    return out;
}

// The input's red and green, and the derivatives of its blue across and of its alpha down.
@fragment
fn fs(i: VertexOut) -> @location(0) vec4<f32> {
    return vec4<f32>(i.color.r, i.color.g, dpdx(i.color.b), dpdy(i.color.a));
}
"#;

const SIZE: u32 = 48;

/// Renders one triangle (clip-space positions with their w, a colour per vertex) and reads
/// the target back: per pixel, its four floats, or None where the clear colour (−1) stayed.
fn render(vertices: [([f32; 4], [f32; 4]); 3]) -> Vec<Option<[f32; 4]>> {
    let (device, queue) = device();
    let module = module(&device, SHADER).unwrap();
    let layout = position_color_layout();
    let format = TextureFormat::Rgba32Float;
    let pipeline = pipeline(&device, &module, &[layout], format).unwrap();
    let floats: Vec<f32> = vertices
        .iter()
        .flat_map(|(p, c)| p.iter().chain(c).copied())
        .collect();
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let buffer = device
        .create_buffer_init(None, &bytes, BufferUsages::VERTEX)
        .unwrap();
    let texture = target(&device, SIZE, SIZE, format, 1);
    let view = texture.create_view();
    let mut encoder = device.create_command_encoder();
    {
        let clear = Color {
            r: -1.0,
            g: -1.0,
            b: -1.0,
            a: -1.0,
        };
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            label: None,
            color_attachments: &clear_pass_to(&view, clear),
            depth_stencil_attachment: None,
            occlusion_query_set: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_vertex_buffer(0, &buffer, 0, None);
        pass.draw(0..3, 0..1);
    }
    queue.submit([encoder.finish().unwrap()]).unwrap();
    let data = queue.read_texture(&texture).unwrap();
    data.chunks_exact(16)
        .map(|p| {
            let v: [f32; 4] = std::array::from_fn(|k| {
                f32::from_le_bytes(p[4 * k..4 * k + 4].try_into().unwrap())
            });
            (v != [-1.0; 4]).then_some(v)
        })
        .collect()
}

/// Positions with different w per vertex (a perspective view of a triangle): the weights
/// at a pixel are then products and quotients, not exact fractions.
fn positions() -> [[f32; 4]; 3] {
    let at = |x: f32, y: f32, w: f32| [x * w, y * w, 0.5 * w, w];
    [
        at(-0.9, -0.8, 1.0),
        at(0.85, -0.6, 3.7),
        at(-0.2, 0.9, 0.45),
    ]
}

#[test]
fn an_input_the_vertices_share_is_that_value_everywhere_with_zero_derivatives() {
    // Values whose weighted sums would round: a third, a tenth, and so on.
    let c = [1.0 / 3.0, 0.1, 0.7, 0.9f32];
    let p = positions();
    let out = render([(p[0], c), (p[1], c), (p[2], c)]);
    let covered = out.iter().flatten().count();
    assert!(covered > 300, "the triangle covers {covered} pixels");
    for v in out.iter().flatten() {
        assert_eq!(
            v.map(f32::to_bits),
            [c[0], c[1], 0.0, 0.0].map(f32::to_bits),
            "{v:?}"
        );
    }
}

#[test]
fn a_varying_input_is_the_perspective_correct_blend() {
    let p = positions();
    let colors = [
        [1.0, 0.0, 0.0, 1.0f32],
        [0.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
    ];
    let out = render([(p[0], colors[0]), (p[1], colors[1]), (p[2], colors[2])]);
    let inv_w = p.map(|v| 1.0 / v[3] as f64);
    // Screen positions of the vertices (pixel units, y down).
    let screen = p.map(|v| {
        let (x, y) = ((v[0] / v[3]) as f64, (v[1] / v[3]) as f64);
        ((x + 1.0) * 0.5 * SIZE as f64, (1.0 - y) * 0.5 * SIZE as f64)
    });
    let area = |a: (f64, f64), b: (f64, f64), c: (f64, f64)| {
        (b.0 - a.0) * (c.1 - a.1) - (c.0 - a.0) * (b.1 - a.1)
    };
    let whole = area(screen[0], screen[1], screen[2]);
    let mut checked = 0;
    for (i, v) in out.iter().enumerate() {
        let Some(v) = v else { continue };
        let centre = (
            (i as u32 % SIZE) as f64 + 0.5,
            (i as u32 / SIZE) as f64 + 0.5,
        );
        let l = [
            area(centre, screen[1], screen[2]) / whole,
            area(screen[0], centre, screen[2]) / whole,
            area(screen[0], screen[1], centre) / whole,
        ];
        let w: Vec<f64> = (0..3).map(|k| l[k] * inv_w[k]).collect();
        let sum: f64 = w.iter().sum();
        // Red and green are vertex 0's and vertex 1's perspective-correct weights. (Alpha
        // is 1 at every vertex, but the triangle's other inputs vary, so it is weighted
        // like them and its derivative may be a rounding error off zero: not checked.)
        // (Within 10⁻³: vertices are snapped to 1/256 pixel before set-up.)
        for k in 0..2 {
            let want = w[k] / sum;
            assert!(
                (v[k] as f64 - want).abs() < 1e-3,
                "pixel {i}: {v:?}, weight {k} {want}"
            );
        }
        checked += 1;
    }
    assert!(checked > 300, "{checked} pixels checked");
}
