//! Pipeline rules checked through the API: per-fragment depth clamping with unclipped depth,
//! forced early depth tests, no-perspective varyings across the near plane, fractional
//! viewports, degenerate clip-space vertices.

mod common;

use common::*;
use rastra::*;

const SHADER: &str = r#"
struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) @interpolate(linear) ndc_x: f32,
}

@vertex
fn vs(@location(0) position: vec4<f32>) -> VertexOut {
    return VertexOut(position, position.x / position.w);
}

@fragment
fn fs_white() -> @location(0) vec4<f32> {
    return vec4<f32>(1.0);
}

@fragment @early_depth_test(force)
fn fs_forced_discard() -> @location(0) vec4<f32> {
    discard;
    return vec4<f32>(1.0);
}

// Red channel: 64 × |interpolated NDC x − NDC x of this pixel| (0 when linear on screen).
@fragment
fn fs_linear_error(i: VertexOut) -> @location(0) vec4<f32> {
    let ndc = i.clip.x / 32.0 * 2.0 - 1.0;
    return vec4<f32>(abs(i.ndc_x - ndc) * 64.0, 0.0, 0.0, 1.0);
}
"#;

fn layout() -> VertexBufferLayout {
    VertexBufferLayout {
        array_stride: 16,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![VertexAttribute {
            format: VertexFormat::Float32x4,
            offset: 0,
            shader_location: 0,
        }],
    }
}

struct Fixture {
    device: Device,
    queue: Queue,
    module: ShaderModule,
}

impl Fixture {
    fn new() -> Fixture {
        let (device, queue) = device();
        let module = module(&device, SHADER).unwrap();
        Fixture {
            device,
            queue,
            module,
        }
    }

    fn pipeline(
        &self,
        fs: &str,
        primitive: PrimitiveState,
        depth: Option<DepthStencilState>,
    ) -> RenderPipeline {
        self.device
            .create_render_pipeline(&RenderPipelineDescriptor {
                label: None,
                vertex: VertexState {
                    module: &self.module,
                    entry_point: Some("vs"),
                    buffers: &[layout()],
                    constants: &[],
                },
                primitive,
                depth_stencil: depth,
                multisample: MultisampleState::default(),
                fragment: Some(FragmentState {
                    module: &self.module,
                    entry_point: Some(fs),
                    targets: &[Some(color_target(TextureFormat::Rgba8Unorm))],
                    constants: &[],
                }),
            })
            .unwrap()
    }

    /// Draws `draws` (pipeline, clip-space vertices) in one pass; returns colour and depth.
    fn render(
        &self,
        size: u32,
        viewport: Option<[f32; 4]>,
        draws: &[(&RenderPipeline, Vec<[f32; 4]>)],
    ) -> (Vec<u8>, Vec<f32>) {
        let color = target(&self.device, size, size, TextureFormat::Rgba8Unorm, 1);
        let depth = self
            .device
            .create_texture(&TextureDescriptor {
                label: None,
                size: Extent3d {
                    width: size,
                    height: size,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: rastra::TextureDimension::D2,
                format: TextureFormat::Depth32Float,
                usage: TextureUsages::RENDER_ATTACHMENT | TextureUsages::COPY_SRC,
            })
            .unwrap();
        let (cv, dv) = (color.create_view(), depth.create_view());
        let buffers: Vec<Buffer> = draws
            .iter()
            .map(|(_, v)| {
                let bytes: Vec<u8> = v.iter().flatten().flat_map(|f| f.to_le_bytes()).collect();
                self.device
                    .create_buffer_init(None, &bytes, BufferUsages::VERTEX)
                    .unwrap()
            })
            .collect();
        let mut encoder = self.device.create_command_encoder();
        {
            let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
                color_attachments: &clear_pass(&cv),
                depth_stencil_attachment: Some(RenderPassDepthStencilAttachment {
                    view: &dv,
                    depth_ops: Some(Operations {
                        load: LoadOp::Clear(1.0),
                        store: StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                ..Default::default()
            });
            if let Some([x, y, w, h]) = viewport {
                pass.set_viewport(x, y, w, h, 0.0, 1.0);
            }
            for ((p, v), b) in draws.iter().zip(&buffers) {
                pass.set_pipeline(p);
                pass.set_vertex_buffer(0, b, 0, None);
                pass.draw(0..v.len() as u32, 0..1);
            }
        }
        self.queue.submit([encoder.finish().unwrap()]).unwrap();
        let rgba = self.queue.read_texture(&color).unwrap();
        let z = self
            .queue
            .read_texture(&depth)
            .unwrap()
            .chunks(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        (rgba, z)
    }
}

fn depth(compare: CompareFunction) -> Option<DepthStencilState> {
    Some(DepthStencilState {
        format: TextureFormat::Depth32Float,
        depth_write_enabled: true,
        depth_compare: compare,
        bias: DepthBias::default(),
    })
}

/// The pass always has a depth attachment; these pipelines neither test nor write it.
fn ignore_depth() -> Option<DepthStencilState> {
    Some(DepthStencilState {
        format: TextureFormat::Depth32Float,
        depth_write_enabled: false,
        depth_compare: CompareFunction::Always,
        bias: DepthBias::default(),
    })
}

fn quad(z_left: f32, z_right: f32) -> Vec<[f32; 4]> {
    let (l, r) = ([-1.0, -1.0, z_left, 1.0], [1.0, -1.0, z_right, 1.0]);
    let (lt, rt) = ([-1.0, 1.0, z_left, 1.0], [1.0, 1.0, z_right, 1.0]);
    vec![l, r, rt, l, rt, lt]
}

#[test]
fn unclipped_depth_clamps_each_fragment() {
    let f = Fixture::new();
    let primitive = PrimitiveState {
        unclipped_depth: true,
        ..Default::default()
    };
    let p = f.pipeline("fs_white", primitive, depth(CompareFunction::Always));
    // Depth runs from −1 at the left edge to 2 at the right edge of a 16-pixel target.
    let (_, z) = f.render(16, None, &[(&p, quad(-1.0, 2.0))]);
    let row = &z[8 * 16..9 * 16];
    assert_eq!(row[0], 0.0, "clamped to the viewport's min depth");
    assert_eq!(row[15], 1.0, "clamped to the viewport's max depth");
    // Pixel 7's centre is at x = 7.5 / 16 of the way: depth −1 + 3 · 7.5 / 16 = 0.40625,
    // which per-vertex clamping (0 → 1 across) would have made 0.46875.
    assert!((row[7] - 0.40625).abs() < 1e-5, "{}", row[7]);
}

#[test]
fn forced_early_depth_writes_depth_even_when_the_shader_discards() {
    let f = Fixture::new();
    let forced = f.pipeline(
        "fs_forced_discard",
        PrimitiveState::default(),
        depth(CompareFunction::Less),
    );
    let white = f.pipeline(
        "fs_white",
        PrimitiveState::default(),
        depth(CompareFunction::Less),
    );
    let (rgba, z) = f.render(
        8,
        None,
        &[(&forced, quad(0.25, 0.25)), (&white, quad(0.5, 0.5))],
    );
    assert!(
        z.iter().all(|&d| d == 0.25),
        "the discarding draw still wrote its depth"
    );
    assert!(
        rgba.chunks(4).all(|p| p == [0, 0, 0, 255]),
        "and the quad behind it failed the test"
    );
}

#[test]
fn no_perspective_varyings_stay_linear_on_screen_across_the_near_plane() {
    let f = Fixture::new();
    let p = f.pipeline("fs_linear_error", PrimitiveState::default(), ignore_depth());
    // A triangle with one vertex behind the eye (z < 0 and w < 0): clipped at the near plane.
    let tri = vec![
        [-0.9, -0.9, 0.5, 1.0],
        [0.9, -0.9, 0.5, 1.0],
        [0.3, 2.0, -1.5, -0.5],
    ];
    let (rgba, _) = f.render(32, None, &[(&p, tri)]);
    let stats = f.queue.take_stats().total();
    assert_eq!(stats.primitives_clipped, 1);
    assert!(stats.fragment_shader_invocations > 100);
    let worst = rgba.chunks(4).map(|px| px[0]).max().unwrap();
    // Interpolating the clipped vertex's varying with the clip-space parameter instead of
    // the screen-space one puts it off by tens of units (red ≫ 8).
    assert!(
        worst <= 2,
        "no-perspective varying off by up to {worst}/255·64 NDC units"
    );
}

#[test]
fn fractional_viewport_edges_clip_samples() {
    let f = Fixture::new();
    let p = f.pipeline("fs_white", PrimitiveState::default(), ignore_depth());
    // Viewport [0.5, 7.5) × [0, 8): pixel 7's centre (7.5) lies on the excluded edge.
    let (rgba, _) = f.render(8, Some([0.5, 0.0, 7.0, 8.0]), &[(&p, quad(0.5, 0.5))]);
    let row: Vec<u8> = rgba[..8 * 4].chunks(4).map(|px| px[0]).collect();
    assert_eq!(row, [255, 255, 255, 255, 255, 255, 255, 0]);
}

#[test]
fn a_vertex_at_the_clip_space_origin_draws_no_garbage() {
    let f = Fixture::new();
    let p = f.pipeline("fs_white", PrimitiveState::default(), ignore_depth());
    let tri = vec![
        [0.0, 0.0, 0.0, 0.0],
        [1.0, -1.0, 0.5, 1.0],
        [1.0, 1.0, 0.5, 1.0],
    ];
    let (rgba, _) = f.render(8, None, &[(&p, tri)]);
    // Whatever is drawn lies in the right half, where the two proper vertices are.
    for (i, px) in rgba.chunks(4).enumerate() {
        if i % 8 < 4 {
            assert_eq!(px, [0, 0, 0, 255], "pixel {i}");
        }
    }
}
