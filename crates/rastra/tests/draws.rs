//! Draws through the whole API with known pixel results: depth testing, blending, instancing
//! with base vertex and first instance, strips with restart, discard, MSAA resolve, indirect
//! draws, occlusion queries.

mod common;

use common::*;
use rastra::*;

const SHADER: &str = r#"
struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
}

@vertex
fn vs(@location(0) position: vec3<f32>, @location(1) color: vec4<f32>) -> VertexOut {
    return VertexOut(vec4<f32>(position, 1.0), color);
}

@fragment
fn fs(i: VertexOut) -> @location(0) vec4<f32> {
    return i.color;
}

@fragment
fn fs_discard_left(i: VertexOut) -> @location(0) vec4<f32> {
    if i.clip.x < 8.0 {
        discard;
    }
    return i.color;
}

struct Offset { @location(2) offset: vec2<f32> }

@vertex
fn vs_instanced(@location(0) position: vec3<f32>, @location(1) color: vec4<f32>, o: Offset) -> VertexOut {
    return VertexOut(vec4<f32>(position.xy + o.offset, position.z, 1.0), color);
}
"#;

fn layout() -> VertexBufferLayout {
    VertexBufferLayout {
        array_stride: 28,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![
            VertexAttribute {
                format: VertexFormat::Float32x3,
                offset: 0,
                shader_location: 0,
            },
            VertexAttribute {
                format: VertexFormat::Float32x4,
                offset: 12,
                shader_location: 1,
            },
        ],
    }
}

/// A quad (two triangles) covering NDC [x0, x1] × [y0, y1] at depth z.
fn quad(x0: f32, y0: f32, x1: f32, y1: f32, z: f32, c: [f32; 4]) -> Vec<f32> {
    let mut v = Vec::new();
    for (x, y) in [(x0, y0), (x1, y0), (x1, y1), (x0, y0), (x1, y1), (x0, y1)] {
        v.extend_from_slice(&[x, y, z]);
        v.extend_from_slice(&c);
    }
    v
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

struct Setup {
    device: Device,
    queue: Queue,
    module: ShaderModule,
}

impl Setup {
    fn new() -> Setup {
        Setup::with_hidden_surface_removal(true)
    }

    /// A device that removes hidden surfaces (the default) or shades every quad that passes
    /// early Z.
    fn with_hidden_surface_removal(on: bool) -> Setup {
        let (device, queue) = Device::new(&DeviceDescriptor {
            features: DeviceFeatures {
                hidden_surface_removal: on,
                ..Default::default()
            },
            ..Default::default()
        });
        let module = module(&device, SHADER).unwrap();
        Setup {
            device,
            queue,
            module,
        }
    }

    fn pipeline(
        &self,
        fs: &str,
        depth: Option<DepthStencilState>,
        blend: Option<BlendState>,
        samples: u32,
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
                primitive: PrimitiveState::default(),
                depth_stencil: depth,
                multisample: MultisampleState {
                    count: samples,
                    ..Default::default()
                },
                fragment: Some(FragmentState {
                    module: &self.module,
                    entry_point: Some(fs),
                    targets: &[Some(ColorTargetState {
                        format: TextureFormat::Rgba8Unorm,
                        blend,
                        write_mask: ColorWrites::ALL,
                    })],
                    constants: &[],
                }),
            })
            .unwrap()
    }

    /// One pass (colour cleared to black, depth to 1.0) with one draw of `pipeline` over
    /// `vertices` of `vb`, submitted.
    fn draw_with_depth(
        &self,
        pipeline: &RenderPipeline,
        vb: &Buffer,
        vertices: std::ops::Range<u32>,
        color: &TextureView,
        depth: &TextureView,
    ) {
        let mut encoder = self.device.create_command_encoder();
        {
            let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
                color_attachments: &clear_pass(color),
                depth_stencil_attachment: cleared_depth(depth),
                ..Default::default()
            });
            pass.set_pipeline(pipeline);
            pass.set_vertex_buffer(0, vb, 0, None);
            pass.draw(vertices, 0..1);
        }
        self.queue.submit([encoder.finish().unwrap()]).unwrap();
    }

    fn vertex_buffer(&self, v: &[f32]) -> Buffer {
        self.device
            .create_buffer_init(None, &bytes(v), BufferUsages::VERTEX)
            .unwrap()
    }
}

fn pixel(data: &[u8], w: u32, x: u32, y: u32) -> [u8; 4] {
    let at = ((y * w + x) * 4) as usize;
    data[at..at + 4].try_into().unwrap()
}

/// A depth attachment cleared to 1.0 and stored, no stencil.
fn cleared_depth(view: &TextureView) -> Option<RenderPassDepthStencilAttachment<'_>> {
    Some(RenderPassDepthStencilAttachment {
        view,
        depth_ops: Some(Operations {
            load: LoadOp::Clear(1.0),
            store: StoreOp::Store,
        }),
        stencil_ops: None,
    })
}

fn depth_less() -> DepthStencilState {
    DepthStencilState {
        format: TextureFormat::Depth32Float,
        depth_write_enabled: true,
        depth_compare: CompareFunction::Less,
        bias: DepthBias::default(),
    }
}

#[test]
fn depth_test_keeps_the_nearest_whatever_the_order() {
    let s = Setup::new();
    let p = s.pipeline("fs", Some(depth_less()), None, 1);
    let color = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 1);
    let depth = target(&s.device, 16, 16, TextureFormat::Depth32Float, 1);
    let (cv, dv) = (color.create_view(), depth.create_view());
    let mut v = quad(-1.0, -1.0, 1.0, 1.0, 0.3, [0.0, 1.0, 0.0, 1.0]); // near, green, drawn first
    v.extend(quad(-1.0, -1.0, 1.0, 1.0, 0.7, [1.0, 0.0, 0.0, 1.0])); // far, red
    v.extend(quad(-1.0, -1.0, 0.0, 1.0, 0.1, [0.0, 0.0, 1.0, 1.0])); // nearest, blue, left half
    let vb = s.vertex_buffer(&v);
    s.draw_with_depth(&p, &vb, 0..18, &cv, &dv);
    let img = s.queue.read_texture(&color).unwrap();
    assert_eq!(pixel(&img, 16, 12, 8), [0, 255, 0, 255]);
    assert_eq!(pixel(&img, 16, 3, 8), [0, 0, 255, 255]);
    let stats = s.queue.take_stats().total();
    assert_eq!(
        stats.early_z_killed, 256,
        "the far quad is rejected before shading"
    );
    // The green quad's left half is overwritten by the blue one drawn later: hidden-surface
    // removal leaves those 128 pixels unshaded.
    assert_eq!(stats.hidden_pixels_removed, 128);
    assert_eq!(stats.fragment_shader_invocations, 256 + 128 - 128);
}

#[test]
fn alpha_blending_in_unorm8() {
    let s = Setup::new();
    let p = s.pipeline("fs", None, Some(BlendState::ALPHA_BLENDING), 1);
    let color = target(&s.device, 8, 8, TextureFormat::Rgba8Unorm, 1);
    let cv = color.create_view();
    let vb = s.vertex_buffer(&quad(-1.0, -1.0, 1.0, 1.0, 0.5, [1.0, 0.0, 0.0, 0.5]));
    let mut encoder = s.device.create_command_encoder();
    {
        let attachments = [Some(RenderPassColorAttachment {
            view: &cv,
            resolve_target: None,
            ops: Operations {
                load: LoadOp::Clear(Color {
                    r: 0.0,
                    g: 0.0,
                    b: 1.0,
                    a: 1.0,
                }),
                store: StoreOp::Store,
            },
        })];
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &attachments,
            ..Default::default()
        });
        pass.set_pipeline(&p);
        pass.set_vertex_buffer(0, &vb, 0, None);
        pass.draw(0..6, 0..1);
    }
    s.queue.submit([encoder.finish().unwrap()]).unwrap();
    let img = s.queue.read_texture(&color).unwrap();
    // An 8-bit target blends in fixed point: the source alpha 0.5 is code 128 (127.5 to
    // even), so red 255·128/255 = 128 and blue 255·(255 − 128)/255 = 127; alpha (One,
    // OneMinusSrcAlpha): (128·255 + 255·127)/255 = 255.
    assert_eq!(pixel(&img, 8, 4, 4), [128, 0, 127, 255]);
}

/// Clears are fast clears: each 64×64 tile's clear is written before its first triangle or
/// at the pass end, once. A second pass loads both attachments and draws over everything
/// behind the first pass's quad and in front of the cleared depth, so every pixel shows
/// whether its colour and depth were cleared (the frame is 3×2 tiles, the last ones partial).
#[test]
fn fast_clears_reach_every_tile_once() {
    let s = Setup::new();
    let p = s.pipeline("fs", Some(depth_less()), None, 1);
    let (w, h) = (150, 70);
    let color = target(&s.device, w, h, TextureFormat::Rgba8Unorm, 1);
    let depth = target(&s.device, w, h, TextureFormat::Depth32Float, 1);
    let (cv, dv) = (color.create_view(), depth.create_view());
    // Pixels [0, 32) × [0, 32): inside tile 0 only.
    let (x1, y0) = (-1.0 + 64.0 / w as f32, 1.0 - 64.0 / h as f32);
    let red = s.vertex_buffer(&quad(-1.0, y0, x1, 1.0, 0.1, [1.0, 0.0, 0.0, 1.0]));
    let green = s.vertex_buffer(&quad(-1.0, -1.0, 1.0, 1.0, 0.2, [0.0, 1.0, 0.0, 1.0]));
    for (load, vb) in [(true, &red), (false, &green)] {
        let mut encoder = s.device.create_command_encoder();
        {
            let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
                color_attachments: &[Some(RenderPassColorAttachment {
                    view: &cv,
                    resolve_target: None,
                    ops: Operations {
                        load: if load {
                            LoadOp::Clear(Color {
                                r: 0.0,
                                g: 0.0,
                                b: 1.0,
                                a: 1.0,
                            })
                        } else {
                            LoadOp::Load
                        },
                        store: StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: Some(RenderPassDepthStencilAttachment {
                    view: &dv,
                    depth_ops: Some(Operations {
                        load: if load {
                            LoadOp::Clear(0.25)
                        } else {
                            LoadOp::Load
                        },
                        store: StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                ..Default::default()
            });
            pass.set_pipeline(&p);
            pass.set_vertex_buffer(0, vb, 0, None);
            pass.draw(0..6, 0..1);
        }
        s.queue.submit([encoder.finish().unwrap()]).unwrap();
        let stats = s.queue.take_stats();
        let tiles: Vec<u64> = stats
            .draws
            .iter()
            .map(|d| d.counters.fast_clear_tiles)
            .collect();
        if load {
            // The quad's tile before it, the five others at the pass end.
            assert_eq!(tiles, [1, 5], "{:?}", stats.draws);
        } else {
            assert_eq!(tiles, [0], "nothing to clear");
        }
    }
    let img = s.queue.read_texture(&color).unwrap();
    for y in 0..h {
        for x in 0..w {
            let expect = if x < 32 && y < 32 {
                [255, 0, 0, 255]
            } else {
                [0, 255, 0, 255]
            };
            assert_eq!(pixel(&img, w, x, y), expect, "pixel ({x}, {y})");
        }
    }
}

#[test]
fn discard_keeps_the_old_colour_and_depth() {
    let s = Setup::new();
    let p = s.pipeline("fs_discard_left", Some(depth_less()), None, 1);
    let color = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 1);
    let depth = target(&s.device, 16, 16, TextureFormat::Depth32Float, 1);
    let (cv, dv) = (color.create_view(), depth.create_view());
    let mut v = quad(-1.0, -1.0, 1.0, 1.0, 0.2, [1.0, 1.0, 1.0, 1.0]); // discarded on the left
    v.extend(quad(-1.0, -1.0, 1.0, 1.0, 0.5, [1.0, 0.0, 1.0, 1.0])); // behind: visible only where the first was discarded
    let vb = s.vertex_buffer(&v);
    s.draw_with_depth(&p, &vb, 0..12, &cv, &dv);
    let img = s.queue.read_texture(&color).unwrap();
    assert_eq!(pixel(&img, 16, 12, 3), [255, 255, 255, 255]);
    // Both quads discard on the left half, so the clear colour stays there.
    assert_eq!(pixel(&img, 16, 3, 3), [0, 0, 0, 255]);
    let stats = s.queue.take_stats().total();
    assert_eq!(stats.fragments_discarded, 256);
}

#[test]
fn occlusion_queries_count_the_samples_that_pass() {
    let s = Setup::new();
    let plain = s.pipeline("fs", Some(depth_less()), None, 1);
    let discarding = s.pipeline("fs_discard_left", Some(depth_less()), None, 1);
    let msaa = s.pipeline("fs", Some(depth_less()), None, 4);
    let color = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 1);
    let depth = target(&s.device, 16, 16, TextureFormat::Depth32Float, 1);
    let color4 = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 4);
    let depth4 = target(&s.device, 16, 16, TextureFormat::Depth32Float, 4);
    let mut v = quad(-1.0, -1.0, 1.0, 1.0, 0.3, [0.0, 1.0, 0.0, 1.0]); // 0..6: near, everywhere
    v.extend(quad(-1.0, -1.0, 1.0, 1.0, 0.7, [1.0, 0.0, 0.0, 1.0])); // 6..12: hidden behind it
    v.extend(quad(-1.0, -1.0, 0.0, 1.0, 0.1, [0.0, 0.0, 1.0, 1.0])); // 12..18: left half, nearer
    v.extend(quad(-1.0, -1.0, 1.0, 1.0, 0.05, [1.0, 1.0, 1.0, 1.0])); // 18..24: nearest, discards x < 8
    v.extend(quad(-1.0, -1.0, 0.0, 0.0, 0.5, [1.0, 1.0, 1.0, 1.0])); // 24..30: a quarter
    let vb = s.vertex_buffer(&v);
    let set = s
        .device
        .create_query_set(&QuerySetDescriptor {
            label: Some("occlusion"),
            ty: QueryType::Occlusion,
            count: 7,
        })
        .unwrap();
    let resolved = s
        .device
        .create_buffer(&BufferDescriptor {
            label: None,
            size: 256 + 7 * 8,
            usage: BufferUsages::QUERY_RESOLVE | BufferUsages::COPY_SRC,
        })
        .unwrap();
    let (cv, dv) = (color.create_view(), depth.create_view());
    let (cv4, dv4) = (color4.create_view(), depth4.create_view());
    let mut encoder = s.device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&cv),
            depth_stencil_attachment: cleared_depth(&dv),
            occlusion_query_set: Some(&set),
            ..Default::default()
        });
        pass.set_pipeline(&plain);
        pass.set_vertex_buffer(0, &vb, 0, None);
        for (query, vertices) in [(0, 0..6), (1, 6..12), (2, 12..18)] {
            pass.begin_occlusion_query(query);
            pass.draw(vertices, 0..1);
            pass.end_occlusion_query();
        }
        pass.set_pipeline(&discarding);
        pass.begin_occlusion_query(3);
        pass.draw(18..24, 0..1);
        pass.end_occlusion_query();
        // Two draws in one query add up; a draw outside any query counts nowhere.
        pass.set_pipeline(&plain);
        pass.draw(0..6, 0..1);
    }
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&cv4),
            depth_stencil_attachment: cleared_depth(&dv4),
            occlusion_query_set: Some(&set),
            ..Default::default()
        });
        pass.set_pipeline(&msaa);
        pass.set_vertex_buffer(0, &vb, 0, None);
        pass.begin_occlusion_query(4);
        pass.draw(24..30, 0..1);
        pass.draw(0..6, 0..1);
        pass.end_occlusion_query();
    }
    encoder.resolve_query_set(&set, 0..7, &resolved, 256);
    s.queue.submit([encoder.finish().unwrap()]).unwrap();
    let out = s
        .device
        .create_buffer(&BufferDescriptor {
            label: None,
            size: resolved.size(),
            usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
        })
        .unwrap();
    let mut encoder = s.device.create_command_encoder();
    encoder.copy_buffer_to_buffer(&resolved, 0, &out, 0, resolved.size());
    s.queue.submit([encoder.finish().unwrap()]).unwrap();
    let bytes = out.read().unwrap();
    let results: Vec<u64> = bytes[256..]
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // 256 pixels; the hidden quad none; the left half 128; the discarding quad is nearest
    // everywhere, but its discarded left half does not count; 4× MSAA: a quarter (64 pixels × 4
    // samples) plus the full quad, nearer everywhere (256 pixels × 4).
    assert_eq!(results, [256, 0, 128, 128, 64 * 4 + 256 * 4, 0, 0]);

    // Misuse: no set, out of range, nested, reused, left open, resolve usage/alignment.
    let misuse = |f: &dyn Fn(&mut RenderPass<'_>), with_set: bool| {
        let mut encoder = s.device.create_command_encoder();
        {
            let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
                color_attachments: &clear_pass(&cv),
                occlusion_query_set: with_set.then_some(&set),
                ..Default::default()
            });
            f(&mut pass);
        }
        encoder.finish().unwrap_err().to_string()
    };
    assert!(misuse(&|p| p.begin_occlusion_query(0), false).contains("without an occlusion"));
    assert!(misuse(&|p| p.begin_occlusion_query(7), true).contains("outside the 7-query set"));
    let nested = misuse(
        &|p| {
            p.begin_occlusion_query(0);
            p.begin_occlusion_query(1);
        },
        true,
    );
    assert!(nested.contains("while query 0 is active"), "{nested}");
    let reused = misuse(
        &|p| {
            p.begin_occlusion_query(2);
            p.end_occlusion_query();
            p.begin_occlusion_query(2);
        },
        true,
    );
    assert!(reused.contains("already used"), "{reused}");
    assert!(misuse(&|p| p.end_occlusion_query(), true).contains("without an active"));
    assert!(misuse(&|p| p.begin_occlusion_query(0), true).contains("ended while"));
    // Query types must fit their use; statistics queries nest neither with themselves nor
    // past the pass's end.
    assert!(
        misuse(&|p| p.begin_pipeline_statistics_query(&set, 0), true)
            .contains("another query type")
    );
    let stats = s
        .device
        .create_query_set(&QuerySetDescriptor {
            label: None,
            ty: QueryType::PipelineStatistics(PipelineStatistics::ALL),
            count: 2,
        })
        .unwrap();
    let nested = misuse(
        &|p| {
            p.begin_pipeline_statistics_query(&stats, 0);
            p.begin_pipeline_statistics_query(&stats, 1);
        },
        false,
    );
    assert!(nested.contains("while query 0 is active"), "{nested}");
    assert!(
        misuse(&|p| p.begin_pipeline_statistics_query(&stats, 1), false).contains("ended while")
    );
    let mut encoder = s.device.create_command_encoder();
    {
        let _pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&cv),
            occlusion_query_set: Some(&stats),
            ..Default::default()
        });
    }
    let err = encoder.finish().unwrap_err().to_string();
    assert!(err.contains("not of occlusion queries"), "{err}");
    let mut encoder = s.device.create_command_encoder();
    encoder.resolve_query_set(&set, 0..7, &resolved, 8);
    assert!(
        encoder
            .finish()
            .unwrap_err()
            .to_string()
            .contains("multiple of 256")
    );
    let mut encoder = s.device.create_command_encoder();
    encoder.resolve_query_set(&set, 0..1, &out, 0);
    assert!(
        encoder
            .finish()
            .unwrap_err()
            .to_string()
            .contains("QUERY_RESOLVE")
    );
}

/// The instancing scene: a strip quad at base vertex 3 drawn with indices
/// `[0, 1, 2, 3, restart, 0, 0]`; instance 0 is junk and instances 1 and 2 move the quad.
struct Instanced {
    pipeline: RenderPipeline,
    vertices: Buffer,
    offsets: Buffer,
    indices: Buffer,
}

impl Instanced {
    fn new(s: &Setup) -> Instanced {
        let offsets = VertexBufferLayout {
            array_stride: 8,
            step_mode: VertexStepMode::Instance,
            attributes: vec![VertexAttribute {
                format: VertexFormat::Float32x2,
                offset: 0,
                shader_location: 2,
            }],
        };
        let pipeline = s
            .device
            .create_render_pipeline(&RenderPipelineDescriptor {
                label: None,
                vertex: VertexState {
                    module: &s.module,
                    entry_point: Some("vs_instanced"),
                    buffers: &[layout(), offsets],
                    constants: &[],
                },
                primitive: PrimitiveState {
                    topology: PrimitiveTopology::TriangleStrip,
                    ..Default::default()
                },
                depth_stencil: None,
                multisample: MultisampleState::default(),
                fragment: Some(FragmentState {
                    module: &s.module,
                    entry_point: Some("fs"),
                    targets: &[Some(color_target(TextureFormat::Rgba8Unorm))],
                    constants: &[],
                }),
            })
            .unwrap();
        // Vertices 0..3 are junk; the quad's four strip vertices start at 3 (base_vertex = 3).
        let mut v = vec![9.0; 3 * 7];
        for (x, y) in [(-1.0, -1.0), (-0.5, -1.0), (-1.0, -0.5), (-0.5, -0.5)] {
            v.extend_from_slice(&[x, y, 0.5, 1.0, 1.0, 0.0, 1.0]);
        }
        let indices: Vec<u8> = [0u16, 1, 2, 3, 0xffff, 0, 0]
            .iter()
            .flat_map(|i| i.to_le_bytes())
            .collect();
        Instanced {
            pipeline,
            vertices: s.vertex_buffer(&v),
            // Instance 0 is junk (first_instance = 1); instances 1 and 2 move the quad right
            // and up.
            offsets: s.vertex_buffer(&[5.0, 5.0, 1.0, 0.0, 0.0, 1.0]),
            indices: s
                .device
                .create_buffer_init(None, &indices, BufferUsages::INDEX)
                .unwrap(),
        }
    }

    /// Renders 16×16 with `draw` recording the draws; returns the lit pixels.
    fn render(&self, s: &Setup, draw: impl FnOnce(&mut RenderPass<'_>)) -> Vec<(u32, u32)> {
        let color = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 1);
        let cv = color.create_view();
        let mut encoder = s.device.create_command_encoder();
        {
            let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
                color_attachments: &clear_pass(&cv),
                ..Default::default()
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_vertex_buffer(0, &self.vertices, 0, None);
            pass.set_vertex_buffer(1, &self.offsets, 0, None);
            pass.set_index_buffer(&self.indices, IndexFormat::Uint16, 0, None);
            draw(&mut pass);
        }
        s.queue.submit([encoder.finish().unwrap()]).unwrap();
        let img = s.queue.read_texture(&color).unwrap();
        (0..16)
            .flat_map(|y| (0..16).map(move |x| (x, y)))
            .filter(|&(x, y)| pixel(&img, 16, x, y)[0] != 0)
            .collect()
    }
}

/// Instances 1 and 2 of the instancing scene: NDC x ∈ [0, 0.5], y ∈ [−1, −0.5] → pixels x
/// 8..12, y 12..16, and NDC x ∈ [−1, −0.5], y ∈ [0, 0.5] → pixels x 0..4, y 4..8.
fn assert_two_instances(lit: &[(u32, u32)]) {
    assert_eq!(lit.len(), 32, "{lit:?}");
    assert!(
        lit.iter()
            .all(|&(x, y)| (8..12).contains(&x) && (12..16).contains(&y)
                || (0..4).contains(&x) && (4..8).contains(&y))
    );
}

#[test]
fn instancing_with_base_vertex_and_first_instance() {
    let s = Setup::new();
    let scene = Instanced::new(&s);
    let lit = scene.render(&s, |pass| pass.draw_indexed(0..7, 3, 1..3));
    assert_two_instances(&lit);
    let stats = s.queue.take_stats().total();
    assert_eq!(
        stats.input_assembly_primitives, 4,
        "two strips (restart cuts the third) × two instances"
    );
    assert_eq!(stats.vertex_shader_invocations, 2 * 4);
}

#[test]
fn indirect_draws_read_their_arguments_when_they_execute() {
    let s = Setup::new();
    let scene = Instanced::new(&s);
    let args = DrawIndexedIndirectArgs {
        index_count: 7,
        instance_count: 2,
        first_index: 0,
        base_vertex: 3,
        first_instance: 1,
    };
    let indirect = |a: &[u8]| {
        s.device
            .create_buffer_init(None, a, BufferUsages::INDIRECT | BufferUsages::COPY_DST)
            .unwrap()
    };
    // The buffer holds zeros when recorded; a copy earlier in the same submission writes
    // the real arguments, so the draw must read them when it runs.
    let real = s
        .device
        .create_buffer_init(None, &args.to_bytes(), BufferUsages::COPY_SRC)
        .unwrap();
    let buffer = indirect(&[0; 24]);
    let color = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 1);
    let cv = color.create_view();
    let mut encoder = s.device.create_command_encoder();
    encoder.copy_buffer_to_buffer(&real, 0, &buffer, 4, 20);
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&cv),
            ..Default::default()
        });
        pass.set_pipeline(&scene.pipeline);
        pass.set_vertex_buffer(0, &scene.vertices, 0, None);
        pass.set_vertex_buffer(1, &scene.offsets, 0, None);
        pass.set_index_buffer(&scene.indices, IndexFormat::Uint16, 0, None);
        pass.draw_indexed_indirect(&buffer, 4);
    }
    s.queue.submit([encoder.finish().unwrap()]).unwrap();
    let img = s.queue.read_texture(&color).unwrap();
    let lit: Vec<(u32, u32)> = (0..16)
        .flat_map(|y| (0..16).map(move |x| (x, y)))
        .filter(|&(x, y)| pixel(&img, 16, x, y)[0] != 0)
        .collect();
    assert_two_instances(&lit);
    let stats = s.queue.take_stats();
    assert!(stats.draws[0].label.contains("draw_indexed_indirect 7 × 2"));
    assert_eq!(stats.total().vertex_shader_invocations, 2 * 4);

    // Non-indexed: vertices 3..7 of the strip (the quad), instances 1 and 2.
    let plain = indirect(
        &DrawIndirectArgs {
            vertex_count: 4,
            instance_count: 2,
            first_vertex: 3,
            first_instance: 1,
        }
        .to_bytes(),
    );
    assert_two_instances(&scene.render(&s, |pass| pass.draw_indirect(&plain, 0)));
    s.queue.take_stats();

    // Arguments that read past the bound data skip the draw (WebGPU's indirect validation):
    // indices past the index buffer, instances past the instance buffer, vertices past the
    // vertex buffer.
    for bad in [
        // (The 14 bytes of indices are padded to 16: 8 indices are bound.)
        DrawIndexedIndirectArgs {
            index_count: 9,
            ..args
        }
        .to_bytes()
        .to_vec(),
        DrawIndexedIndirectArgs {
            instance_count: 3,
            ..args
        }
        .to_bytes()
        .to_vec(),
    ] {
        let b = indirect(&bad);
        assert!(
            scene
                .render(&s, |pass| pass.draw_indexed_indirect(&b, 0))
                .is_empty()
        );
        let stats = s.queue.take_stats();
        assert!(
            stats.draws[0].label.contains("skipped"),
            "{}",
            stats.draws[0].label
        );
        assert_eq!(stats.total().vertex_shader_invocations, 0);
    }
    let past_vertices = indirect(
        &DrawIndirectArgs {
            vertex_count: 5,
            instance_count: 1,
            first_vertex: 3,
            first_instance: 0,
        }
        .to_bytes(),
    );
    assert!(
        scene
            .render(&s, |pass| pass.draw_indirect(&past_vertices, 0))
            .is_empty()
    );

    // Recording errors: usage, alignment, room for the arguments.
    let mut encoder = s.device.create_command_encoder();
    {
        let color = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 1);
        let cv = color.create_view();
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&cv),
            ..Default::default()
        });
        pass.set_pipeline(&scene.pipeline);
        pass.set_vertex_buffer(0, &scene.vertices, 0, None);
        pass.set_vertex_buffer(1, &scene.offsets, 0, None);
        pass.draw_indirect(&plain, 4);
    }
    let err = encoder.finish().unwrap_err().to_string();
    assert!(err.contains("do not fit"), "{err}");
    let mut encoder = s.device.create_command_encoder();
    {
        let color = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 1);
        let cv = color.create_view();
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&cv),
            ..Default::default()
        });
        pass.set_pipeline(&scene.pipeline);
        pass.set_vertex_buffer(0, &scene.vertices, 0, None);
        pass.set_vertex_buffer(1, &scene.offsets, 0, None);
        pass.draw_indirect(&scene.vertices, 0);
    }
    let err = encoder.finish().unwrap_err().to_string();
    assert!(err.contains("INDIRECT usage"), "{err}");
}

#[test]
fn indirect_first_instance_is_a_device_feature() {
    let (device, queue) = Device::new(&DeviceDescriptor {
        features: DeviceFeatures {
            indirect_first_instance: false,
            ..Default::default()
        },
        ..Default::default()
    });
    let s = Setup {
        module: module(&device, SHADER).unwrap(),
        device,
        queue,
    };
    let scene = Instanced::new(&s);
    let args = DrawIndirectArgs {
        vertex_count: 4,
        instance_count: 2,
        first_vertex: 3,
        first_instance: 1,
    };
    let at = |a: DrawIndirectArgs| {
        s.device
            .create_buffer_init(None, &a.to_bytes(), BufferUsages::INDIRECT)
            .unwrap()
    };
    let b = at(args);
    assert!(
        scene
            .render(&s, |pass| pass.draw_indirect(&b, 0))
            .is_empty()
    );
    let stats = s.queue.take_stats();
    assert!(stats.draws[0].label.contains("indirect_first_instance"));
    // Starting at instance 0 still draws (instance 0 is the junk offset, off screen).
    let b = at(DrawIndirectArgs {
        first_instance: 0,
        instance_count: 1,
        ..args
    });
    scene.render(&s, |pass| pass.draw_indirect(&b, 0));
    assert_eq!(s.queue.take_stats().total().vertex_shader_invocations, 4);
}

#[test]
fn msaa_resolve_averages_edge_samples() {
    let s = Setup::new();
    let p = s.pipeline("fs", None, None, 4);
    let ms = target(&s.device, 8, 8, TextureFormat::Rgba8Unorm, 4);
    let resolved = target(&s.device, 8, 8, TextureFormat::Rgba8Unorm, 1);
    let (mv, rv) = (ms.create_view(), resolved.create_view());
    // A triangle whose diagonal crosses pixel centres: edge pixels get 2 of 4 samples.
    let mut v = Vec::new();
    for (x, y) in [(-1.0, 1.0), (1.0, 1.0), (-1.0, -1.0)] {
        v.extend_from_slice(&[x, y, 0.5, 1.0, 1.0, 1.0, 1.0]);
    }
    let vb = s.vertex_buffer(&v);
    let mut encoder = s.device.create_command_encoder();
    {
        let attachments = [Some(RenderPassColorAttachment {
            view: &mv,
            resolve_target: Some(&rv),
            ops: Operations {
                load: LoadOp::Clear(Color::BLACK),
                store: StoreOp::Discard,
            },
        })];
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &attachments,
            ..Default::default()
        });
        pass.set_pipeline(&p);
        pass.set_vertex_buffer(0, &vb, 0, None);
        pass.draw(0..3, 0..1);
    }
    s.queue.submit([encoder.finish().unwrap()]).unwrap();
    let img = s.queue.read_texture(&resolved).unwrap();
    assert_eq!(pixel(&img, 8, 0, 0), [255, 255, 255, 255]);
    assert_eq!(pixel(&img, 8, 7, 7), [0, 0, 0, 255]);
    // On the diagonal x + y = 7 (pixel (7, 0)): samples with x + y < 8 relative sums → 2 of 4.
    assert_eq!(pixel(&img, 8, 7, 0), [128, 128, 128, 255]);
    let stats = s.queue.take_stats().total();
    assert_eq!(stats.pixels_resolved, 64);
}

#[test]
fn hierarchical_z_rejects_blocks_behind_earlier_draws_until_the_direction_flips() {
    let s = Setup::new();
    let less = s.pipeline("fs", Some(depth_less()), None, 1);
    let greater = s.pipeline(
        "fs",
        Some(DepthStencilState {
            depth_compare: CompareFunction::Greater,
            ..depth_less()
        }),
        None,
        1,
    );
    let color = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 1);
    let depth = target(&s.device, 16, 16, TextureFormat::Depth32Float, 1);
    let (cv, dv) = (color.create_view(), depth.create_view());
    let near = s.vertex_buffer(&quad(-1.0, -1.0, 1.0, 1.0, 0.3, [0.0, 1.0, 0.0, 1.0]));
    let far = s.vertex_buffer(&quad(-1.0, -1.0, 1.0, 1.0, 0.7, [1.0, 0.0, 0.0, 1.0]));
    let mut encoder = s.device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&cv),
            depth_stencil_attachment: cleared_depth(&dv),
            ..Default::default()
        });
        let mut draw = |p: &RenderPipeline, b: &Buffer| {
            pass.set_pipeline(p);
            pass.set_vertex_buffer(0, b, 0, None);
            pass.draw(0..6, 0..1);
        };
        draw(&less, &near); // writes 0.3 everywhere
        draw(&less, &far); // every 8×8 block rejected by Hi-Z
        draw(&greater, &near); // the flip: Hi-Z off until the next clear (0.3 > 0.3 fails)
        draw(&less, &far); // no Hi-Z any more: rejected sample by sample
    }
    s.queue.submit([encoder.finish().unwrap()]).unwrap();
    let stats = s.queue.take_stats();
    let d: Vec<&Counters> = stats.draws.iter().map(|d| &d.counters).collect();
    // Each of the quad's two triangles touches most of the four 8×8 blocks: all rejected.
    assert!(
        d[1].hiz_blocks_rejected >= 4,
        "{}",
        d[1].hiz_blocks_rejected
    );
    assert_eq!(
        (
            d[1].early_z_killed,
            d[1].quads_rasterized,
            d[1].fragment_shader_invocations
        ),
        (0, 0, 0)
    );
    assert_eq!((d[2].hiz_blocks_rejected, d[2].early_z_killed), (0, 256));
    assert_eq!((d[3].hiz_blocks_rejected, d[3].early_z_killed), (0, 256));
    let img = s.queue.read_texture(&color).unwrap();
    assert_eq!(pixel(&img, 16, 5, 5), [0, 255, 0, 255]);
}

/// Hi-Z bounds recomputed after a draw that wrote depth over only some blocks of a tile:
/// the written blocks reject a later draw behind them, the untouched ones (still at the
/// clear depth) do not — on a target whose tile is cut by its edges (20×12: whole 8×8 blocks
/// and partial ones).
#[test]
fn hierarchical_z_bounds_follow_the_blocks_a_draw_wrote() {
    let s = Setup::new();
    let less = s.pipeline("fs", Some(depth_less()), None, 1);
    let (w, h) = (20, 12);
    let color = target(&s.device, w, h, TextureFormat::Rgba8Unorm, 1);
    let depth = target(&s.device, w, h, TextureFormat::Depth32Float, 1);
    let (cv, dv) = (color.create_view(), depth.create_view());
    // Pixels 0..8 across (x from -1 to -1 + 2 · 8/20 = -0.2): the first column of blocks.
    let near = s.vertex_buffer(&quad(-1.0, -1.0, -0.2, 1.0, 0.3, [0.0, 1.0, 0.0, 1.0]));
    let far = s.vertex_buffer(&quad(-1.0, -1.0, 1.0, 1.0, 0.7, [1.0, 0.0, 0.0, 1.0]));
    let mut encoder = s.device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&cv),
            depth_stencil_attachment: cleared_depth(&dv),
            ..Default::default()
        });
        for b in [&near, &far] {
            pass.set_pipeline(&less);
            pass.set_vertex_buffer(0, b, 0, None);
            pass.draw(0..6, 0..1);
        }
    }
    s.queue.submit([encoder.finish().unwrap()]).unwrap();
    let stats = s.queue.take_stats();
    let far_draw = &stats.draws[1].counters;
    // The near draw covered blocks (0, 0) (whole) and (0, 8) (rows 8..12 only): every far
    // quad there is rejected before fine rasterization, none reaches early Z; the rest of
    // the target (12 × 12 pixels) is shaded.
    assert!(
        far_draw.hiz_blocks_rejected >= 2,
        "{}",
        far_draw.hiz_blocks_rejected
    );
    assert_eq!(far_draw.early_z_killed, 0);
    assert_eq!(far_draw.fragment_shader_invocations, 12 * 12);
    let img = s.queue.read_texture(&color).unwrap();
    for (x, y, want) in [
        (0, 0, [0, 255, 0, 255]),
        (7, 11, [0, 255, 0, 255]),
        (8, 0, [255, 0, 0, 255]),
        (19, 11, [255, 0, 0, 255]),
    ] {
        assert_eq!(pixel(&img, w, x, y), want, "pixel ({x}, {y})");
    }
}

/// Hi-Z bounds follow the depth a draw writes while it runs: in one draw, a near quad and
/// then forty far quads behind it over the whole 16×16 target. The far quads the draw
/// reaches before the tile's first refresh (after its 32nd triangle) are killed sample by
/// sample by early Z; every later one is rejected block by block, before fine rasterization.
/// The image is the near quad's either way.
#[test]
fn hierarchical_z_follows_the_depth_written_during_a_draw() {
    let s = Setup::new();
    let less = s.pipeline("fs", Some(depth_less()), None, 1);
    let color = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 1);
    let depth = target(&s.device, 16, 16, TextureFormat::Depth32Float, 1);
    let (cv, dv) = (color.create_view(), depth.create_view());
    let mut vertices = quad(-1.0, -1.0, 1.0, 1.0, 0.3, [0.0, 1.0, 0.0, 1.0]);
    for _ in 0..40 {
        vertices.extend(quad(-1.0, -1.0, 1.0, 1.0, 0.7, [1.0, 0.0, 0.0, 1.0]));
    }
    let vb = s.vertex_buffer(&vertices);
    s.draw_with_depth(&less, &vb, 0..vertices.len() as u32 / 7, &cv, &dv);
    let d = s.queue.take_stats().total();
    // Triangles 2..32 (fifteen far quads) are tested sample by sample: 15 × 256 killed.
    // Triangles 32..82 (twenty-five far quads) reach blocks whose bounds are the near
    // quad's depth: each triangle touches at least one of the four blocks, all rejected.
    assert_eq!(d.early_z_killed, 15 * 256);
    assert!(d.hiz_blocks_rejected >= 50, "{}", d.hiz_blocks_rejected);
    assert_eq!(d.fragment_shader_invocations, 256);
    // A whole-target quad is 72 quads of pixels: 64, and the 8 on its diagonal twice (both
    // triangles cover some of their pixels). Only the near one and the first fifteen far
    // ones are rasterized.
    assert_eq!(d.quads_rasterized, 16 * 72);
    let img = s.queue.read_texture(&color).unwrap();
    for (x, y) in [(0, 0), (15, 0), (7, 8), (15, 15)] {
        assert_eq!(pixel(&img, 16, x, y), [0, 255, 0, 255], "pixel ({x}, {y})");
    }
}

#[test]
fn uploaded_depth_is_tested_exactly_not_assumed_cleared() {
    // A depth texture written by an upload (never cleared) and then loaded by a pass: its
    // Hi-Z bounds must not assume the zeros a fresh texture starts with.
    let s = Setup::new();
    let depth_state = DepthStencilState {
        format: TextureFormat::Depth16Unorm,
        ..depth_less()
    };
    let p = s.pipeline("fs", Some(depth_state), None, 1);
    let color = target(&s.device, 16, 16, TextureFormat::Rgba8Unorm, 1);
    let depth = s
        .device
        .create_texture(&TextureDescriptor {
            label: None,
            size: Extent3d {
                width: 16,
                height: 16,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: TextureDimension::D2,
            // The one depth format WebGPU lets a buffer or upload write.
            format: TextureFormat::Depth16Unorm,
            usage: TextureUsages::RENDER_ATTACHMENT | TextureUsages::COPY_DST,
        })
        .unwrap();
    // 32768 / 65535 ≈ 0.5.
    let stored: Vec<u8> = (0..256).flat_map(|_| 32768u16.to_le_bytes()).collect();
    s.queue.write_texture(&depth, &stored).unwrap();
    let (cv, dv) = (color.create_view(), depth.create_view());
    let near = s.vertex_buffer(&quad(-1.0, -1.0, 1.0, 1.0, 0.25, [0.0, 1.0, 0.0, 1.0]));
    let far = s.vertex_buffer(&quad(-1.0, -1.0, 0.0, 1.0, 0.75, [1.0, 0.0, 0.0, 1.0]));
    let mut encoder = s.device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&cv),
            depth_stencil_attachment: Some(RenderPassDepthStencilAttachment {
                view: &dv,
                depth_ops: Some(Operations {
                    load: LoadOp::Load,
                    store: StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            ..Default::default()
        });
        pass.set_pipeline(&p);
        pass.set_vertex_buffer(0, &far, 0, None);
        pass.draw(0..6, 0..1);
        pass.set_vertex_buffer(0, &near, 0, None);
        pass.draw(0..6, 0..1);
    }
    s.queue.submit([encoder.finish().unwrap()]).unwrap();
    let data = s.queue.read_texture(&color).unwrap();
    // 0.75 fails against the stored 0.5; 0.25 passes everywhere.
    for (x, y) in [(2, 8), (12, 8)] {
        assert_eq!(pixel(&data, 16, x, y), [0, 255, 0, 255], "({x}, {y})");
    }
}

/// A pass's draws run as one batch (front ends first, then each tile walks the draws in
/// order): the image and every draw's statistics equal those of the same draws run one
/// pass each (batches of one) — across depth writes, Hi-Z rejection and a compare-direction
/// flip, blending, discard, viewport and scissor changes, on a target of several tiles.
/// Batching draws changes no pixel and, with every quad that passes early Z shaded, no
/// statistic. (With hidden-surface removal a batch's later opaque draws also spare the
/// earlier ones' hidden pixels from shading: fewer invocations than draws run one by one.)
#[test]
fn a_batch_of_draws_equals_the_draws_one_by_one() {
    let s = Setup::with_hidden_surface_removal(false);
    let less = s.pipeline("fs", Some(depth_less()), None, 1);
    let blend = s.pipeline(
        "fs",
        Some(depth_less()),
        Some(BlendState::ALPHA_BLENDING),
        1,
    );
    let greater = s.pipeline(
        "fs",
        Some(DepthStencilState {
            depth_compare: CompareFunction::Greater,
            ..depth_less()
        }),
        None,
        1,
    );
    let discard = s.pipeline("fs_discard_left", Some(depth_less()), None, 1);
    let (w, h) = (150, 90);
    let draws: Vec<(&RenderPipeline, Buffer)> = vec![
        (
            &less,
            s.vertex_buffer(&quad(-1.0, -1.0, 1.0, 1.0, 0.6, [0.9, 0.2, 0.1, 1.0])),
        ),
        (
            &blend,
            s.vertex_buffer(&quad(-0.8, -0.9, 0.5, 0.7, 0.4, [0.1, 0.8, 0.3, 0.5])),
        ),
        (
            &less,
            s.vertex_buffer(&quad(-0.3, -0.5, 0.9, 0.9, 0.8, [0.2, 0.2, 0.9, 1.0])),
        ),
        (
            &less,
            s.vertex_buffer(&quad(-0.6, -0.2, 0.7, 0.95, 0.3, [0.7, 0.7, 0.1, 1.0])),
        ),
        (
            &greater,
            s.vertex_buffer(&quad(-1.0, -1.0, 0.2, 0.3, 0.9, [0.3, 0.9, 0.9, 1.0])),
        ),
        (
            &blend,
            s.vertex_buffer(&quad(0.0, -1.0, 1.0, 0.0, 0.1, [1.0, 1.0, 1.0, 0.3])),
        ),
        (
            &discard,
            s.vertex_buffer(&quad(-1.0, -1.0, 1.0, 1.0, 0.05, [0.5, 0.1, 0.6, 1.0])),
        ),
    ];
    let render = |one_pass_each: bool| {
        let color = target(&s.device, w, h, TextureFormat::Rgba8Unorm, 1);
        let depth = target(&s.device, w, h, TextureFormat::Depth32Float, 1);
        let (cv, dv) = (color.create_view(), depth.create_view());
        let mut encoder = s.device.create_command_encoder();
        let passes = if one_pass_each { draws.len() } else { 1 };
        for k in 0..passes {
            let load = |first: bool| {
                if first {
                    LoadOp::Clear(1.0)
                } else {
                    LoadOp::Load
                }
            };
            let mut colors = clear_pass(&cv);
            if k > 0 {
                colors[0].as_mut().unwrap().ops.load = LoadOp::Load;
            }
            let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
                color_attachments: &colors,
                depth_stencil_attachment: Some(RenderPassDepthStencilAttachment {
                    view: &dv,
                    depth_ops: Some(Operations {
                        load: load(k == 0),
                        store: StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                ..Default::default()
            });
            let mine = if one_pass_each {
                k..k + 1
            } else {
                0..draws.len()
            };
            for i in mine {
                let (p, b) = &draws[i];
                // Draw 3 with a smaller viewport, draw 5 with a scissor rectangle.
                if i == 3 {
                    pass.set_viewport(10.0, 5.0, 120.0, 70.0, 0.0, 1.0);
                } else {
                    pass.set_viewport(0.0, 0.0, w as f32, h as f32, 0.0, 1.0);
                }
                if i == 5 {
                    pass.set_scissor_rect(20, 10, 100, 60);
                } else {
                    pass.set_scissor_rect(0, 0, w, h);
                }
                pass.set_pipeline(p);
                pass.set_vertex_buffer(0, b, 0, None);
                pass.draw(0..6, 0..1);
            }
        }
        s.queue.submit([encoder.finish().unwrap()]).unwrap();
        let stats = s.queue.take_stats();
        let counters: Vec<Counters> = stats.draws.into_iter().map(|d| d.counters).collect();
        (s.queue.read_texture(&color).unwrap(), counters)
    };
    let (batched, batched_stats) = render(false);
    let (alone, alone_stats) = render(true);
    assert_eq!(batched_stats.len(), draws.len());
    for (i, (b, a)) in batched_stats.iter().zip(&alone_stats).enumerate() {
        assert_eq!(b, a, "draw {i}'s statistics");
    }
    assert!(
        batched_stats[2].hiz_blocks_rejected > 0,
        "Hi-Z is exercised"
    );
    assert!(batched == alone, "the images differ");
}

/// Whole 8×8 blocks drawn with no depth test are shaded row by row straight from the block
/// (the pixel pipe's short path); with a depth test that always passes and writes they take
/// the quad-by-quad path. Both must give the same image and the same shading statistics —
/// positions, perspective-correct varyings, front facing, discard, blending — on a target
/// whose blocks are partly whole and partly cut by the triangles' edges.
#[test]
fn block_rows_shade_as_the_quads_one_by_one() {
    const ROWS: &str = r#"
struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
}

@vertex
fn vs(@location(0) position: vec4<f32>, @location(1) color: vec4<f32>) -> VertexOut {
    return VertexOut(position, color);
}

@fragment
fn fs(i: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let p = vec2<u32>(i.clip.xy);
    if (p.x * 3u + p.y * 5u) % 11u == 0u {
        discard;
    }
    let f = select(0.25, 0.75, front);
    return vec4<f32>(fract(i.clip.x / 7.0) * i.color.r, fract(i.clip.y / 5.0), i.clip.z * f, i.color.a);
}
"#;
    let (device, queue) = device();
    let module = module(&device, ROWS).unwrap();
    let layout = position_color_layout();
    let pipeline = |depth: Option<DepthStencilState>| {
        device
            .create_render_pipeline(&RenderPipelineDescriptor {
                label: None,
                vertex: VertexState {
                    module: &module,
                    entry_point: Some("vs"),
                    buffers: std::slice::from_ref(&layout),
                    constants: &[],
                },
                primitive: PrimitiveState::default(),
                depth_stencil: depth,
                multisample: MultisampleState::default(),
                fragment: Some(FragmentState {
                    module: &module,
                    entry_point: Some("fs"),
                    targets: &[Some(ColorTargetState {
                        format: TextureFormat::Rgba8Unorm,
                        blend: Some(BlendState::ALPHA_BLENDING),
                        write_mask: ColorWrites::ALL,
                    })],
                    constants: &[],
                }),
            })
            .unwrap()
    };
    // A test that always passes and writes nothing is no depth test at all; writing
    // makes it one.
    let rows = pipeline(Some(DepthStencilState {
        depth_compare: CompareFunction::Always,
        depth_write_enabled: false,
        ..depth_less()
    }));
    let quads = pipeline(Some(DepthStencilState {
        depth_compare: CompareFunction::Always,
        ..depth_less()
    }));
    // Two big triangles with different w per vertex (perspective-correct colours), one
    // of them facing away, and a small one.
    #[rustfmt::skip]
    let v: Vec<f32> = vec![
        -1.0, -1.0, 0.2, 1.0,   0.9, 0.1, 0.3, 0.8,
         3.0, -3.0, 0.6, 3.0,   0.2, 0.7, 0.4, 0.6,
        -2.0,  2.0, 0.4, 2.0,   0.5, 0.5, 0.9, 0.7,
        -0.9, -0.9, 0.5, 1.0,   0.1, 0.9, 0.2, 0.5,
         0.8,  0.9, 0.5, 1.0,   0.9, 0.2, 0.6, 0.5,
         0.7, -0.8, 0.5, 1.0,   0.4, 0.4, 0.1, 0.5,
        -0.3, -0.2, 0.1, 1.0,   1.0, 1.0, 1.0, 0.9,
        -0.1, -0.25, 0.1, 1.0,  1.0, 1.0, 1.0, 0.9,
        -0.2,  0.1, 0.1, 1.0,   1.0, 1.0, 1.0, 0.9,
    ];
    let vb = device
        .create_buffer_init(None, &bytes(&v), BufferUsages::VERTEX)
        .unwrap();
    let (w, h) = (72, 40);
    let render_with = |p: &RenderPipeline, vb: &Buffer, vertices: u32| {
        let color = target(&device, w, h, TextureFormat::Rgba8Unorm, 1);
        let depth = target(&device, w, h, TextureFormat::Depth32Float, 1);
        let (cv, dv) = (color.create_view(), depth.create_view());
        let mut encoder = device.create_command_encoder();
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
            pass.set_pipeline(p);
            pass.set_vertex_buffer(0, vb, 0, None);
            pass.draw(0..vertices, 0..1);
        }
        queue.submit([encoder.finish().unwrap()]).unwrap();
        let c = queue.take_stats().total();
        let shading = [
            c.quads_rasterized,
            c.coarse_blocks_full,
            c.pixel_warps,
            c.pixel_instructions,
            c.helper_lanes,
            c.fragment_shader_invocations,
            c.fragments_discarded,
            c.issued_lane_slots,
            c.active_lane_slots,
            c.samples_written,
            c.samples_blended,
        ];
        (queue.read_texture(&color).unwrap(), shading)
    };
    let render = |p: &RenderPipeline| render_with(p, &vb, 9);
    let (by_rows, rows_stats) = render(&rows);
    let (by_quads, quads_stats) = render(&quads);
    assert!(rows_stats[1] > 0, "whole blocks: {rows_stats:?}");
    assert!(rows_stats[6] > 0, "discards: {rows_stats:?}");
    assert_eq!(rows_stats, quads_stats);
    assert!(by_rows == by_quads, "the images differ");

    // Constant triangles — one colour per triangle: a whole block's warp finds its inputs
    // in the registers when the last warp was a whole block of the same colour. Triangles
    // over the whole target in colours a, b, a; a small one in b, whose partly covered
    // blocks' quads are shaded together with the next triangle's quads in those blocks;
    // and a again over the whole target. Only the images must agree: the short path shades
    // whole blocks ahead of pending quads, so the warps are packed differently.
    let (a, b) = ([0.6, 0.3, 0.2, 0.4], [0.2, 0.8, 0.5, 0.3f32]);
    let big = [[-2.0, -2.0], [5.0, -2.0], [-2.0, 5.0f32]];
    let small = [[-0.3, -0.3], [0.35, -0.2], [0.1, 0.4f32]];
    let mut layers = Vec::new();
    for (corners, c) in [(big, a), (big, b), (big, a), (small, b), (big, a)] {
        for [x, y] in corners {
            layers.extend_from_slice(&[x, y, 0.3, 1.0]);
            layers.extend_from_slice(&c);
        }
    }
    let vb = device
        .create_buffer_init(None, &bytes(&layers), BufferUsages::VERTEX)
        .unwrap();
    let (by_rows, rows_stats) = render_with(&rows, &vb, 15);
    let (by_quads, _) = render_with(&quads, &vb, 15);
    assert!(rows_stats[1] > 0, "whole blocks: {rows_stats:?}");
    assert!(by_rows == by_quads, "the layers' images differ");
}

/// Hidden-surface removal changes no pixel and no occlusion-query result, only how much is
/// shaded: every pixel it leaves out is one an immediate-mode run shades and a later opaque
/// quad overwrites. Draws of several kinds take turns in one batch — opaque ones that hold
/// their quads (less, less-equal and greater compares), blending and discarding ones that
/// must see the held quads' colours first — over a target of several tiles, and one tile
/// holds more quads than the hold limit.
#[test]
fn hidden_surface_removal_changes_no_pixel() {
    let (w, h) = (150, 90);
    let render = |on: bool| {
        let s = Setup::with_hidden_surface_removal(on);
        let with = |compare: CompareFunction| DepthStencilState {
            depth_compare: compare,
            ..depth_less()
        };
        let less = s.pipeline("fs", Some(depth_less()), None, 1);
        let less_equal = s.pipeline("fs", Some(with(CompareFunction::LessEqual)), None, 1);
        let greater = s.pipeline("fs", Some(with(CompareFunction::Greater)), None, 1);
        let blend = s.pipeline(
            "fs",
            Some(depth_less()),
            Some(BlendState::ALPHA_BLENDING),
            1,
        );
        let discard = s.pipeline("fs_discard_left", Some(depth_less()), None, 1);
        // Twenty whole-target layers, each nearer than the last (every quad passes early Z:
        // a tile's 1,024 quads twenty times over the hold limit's 16,384), then overlapping
        // rectangles of every kind.
        let mut layers = Vec::new();
        for i in 0..20 {
            let c = i as f32 / 20.0;
            layers.extend(quad(
                -1.0,
                -1.0,
                1.0,
                1.0,
                0.95 - 0.01 * i as f32,
                [c, 1.0 - c, 0.5, 1.0],
            ));
        }
        // (Pipeline, rectangle x0 y0 x1 y1, depth, colour.)
        let rects: [(&RenderPipeline, [f32; 4], f32, [f32; 4]); 8] = [
            (&less, [-0.8, -0.9, 0.5, 0.7], 0.6, [0.1, 0.8, 0.3, 1.0]),
            (
                &less_equal,
                [-0.3, -0.5, 0.9, 0.9],
                0.6,
                [0.2, 0.2, 0.9, 1.0],
            ),
            (&blend, [-0.6, -0.2, 0.7, 0.95], 0.5, [0.7, 0.7, 0.1, 0.5]),
            (&less, [-1.0, -1.0, 0.2, 0.3], 0.4, [0.3, 0.9, 0.9, 1.0]),
            (&greater, [-0.5, -0.5, 0.5, 0.5], 0.45, [1.0, 1.0, 1.0, 1.0]),
            (&less, [-0.9, -0.1, 0.9, 0.4], 0.2, [0.9, 0.1, 0.1, 1.0]),
            (&discard, [-1.0, -1.0, 1.0, 1.0], 0.1, [0.5, 0.1, 0.6, 1.0]),
            (&less, [0.0, -1.0, 1.0, 0.0], 0.05, [0.6, 0.6, 0.6, 1.0]),
        ];
        let draws: Vec<(&RenderPipeline, Buffer)> = std::iter::once((&less, layers))
            .chain(
                rects
                    .iter()
                    .map(|&(p, [x0, y0, x1, y1], z, c)| (p, quad(x0, y0, x1, y1, z, c))),
            )
            .map(|(p, v)| (p, s.vertex_buffer(&v)))
            .collect();
        // One occlusion query over all the draws (they stay one batch).
        let set = s
            .device
            .create_query_set(&QuerySetDescriptor {
                label: None,
                ty: QueryType::Occlusion,
                count: 1,
            })
            .unwrap();
        let resolved = s
            .device
            .create_buffer(&BufferDescriptor {
                label: None,
                size: 8,
                usage: BufferUsages::QUERY_RESOLVE | BufferUsages::COPY_SRC,
            })
            .unwrap();
        let out = s
            .device
            .create_buffer(&BufferDescriptor {
                label: None,
                size: 8,
                usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
            })
            .unwrap();
        let color = target(&s.device, w, h, TextureFormat::Rgba8Unorm, 1);
        let depth = target(&s.device, w, h, TextureFormat::Depth32Float, 1);
        let (cv, dv) = (color.create_view(), depth.create_view());
        let mut encoder = s.device.create_command_encoder();
        {
            let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
                color_attachments: &clear_pass(&cv),
                depth_stencil_attachment: cleared_depth(&dv),
                occlusion_query_set: Some(&set),
                ..Default::default()
            });
            pass.begin_occlusion_query(0);
            for (p, b) in &draws {
                pass.set_pipeline(p);
                pass.set_vertex_buffer(0, b, 0, None);
                pass.draw(0..b.size() as u32 / 28, 0..1);
            }
            pass.end_occlusion_query();
        }
        encoder.resolve_query_set(&set, 0..1, &resolved, 0);
        encoder.copy_buffer_to_buffer(&resolved, 0, &out, 0, 8);
        s.queue.submit([encoder.finish().unwrap()]).unwrap();
        let queries = out.read().unwrap();
        let stats = s.queue.take_stats().total();
        (s.queue.read_texture(&color).unwrap(), queries, stats)
    };
    let (image, queries, with) = render(true);
    let (image_off, queries_off, without) = render(false);
    assert!(image == image_off, "the images differ");
    assert_eq!(queries, queries_off, "occlusion queries");
    assert_eq!(
        (without.hidden_quads_removed, without.hidden_pixels_removed),
        (0, 0)
    );
    assert!(with.hidden_quads_removed > 20_000, "{with:?}");
    assert_eq!(
        with.fragment_shader_invocations + with.hidden_pixels_removed,
        without.fragment_shader_invocations,
        "every pixel left out is one shaded without the removal"
    );
    assert_eq!(
        with.samples_written + with.hidden_pixels_removed,
        without.samples_written
    );
    assert_eq!(with.early_z_killed, without.early_z_killed);
    assert_eq!(with.depth_samples_written, without.depth_samples_written);
}

/// A runaway fragment shader in a draw whose quads are held for hidden-surface removal
/// (shaded only when its tiles are done) loses the device like any other, over a target of
/// many tiles and on every worker; the device then reports itself lost.
#[test]
fn runaway_held_fragment_shader_loses_the_device() {
    let (device, queue) = Device::new(&DeviceDescriptor {
        shader_instruction_budget: 1 << 22,
        ..Default::default()
    });
    let looping = format!(
        "{SHADER}\n{}",
        r#"
@fragment
fn fs_loop(i: VertexOut) -> @location(0) vec4<f32> {
    var x = i.color;
    loop { x = x * 0.5 + vec4(0.25); }
    return x;
}
"#
    );
    let module = module(&device, &looping).unwrap();
    let s = Setup {
        device,
        queue,
        module,
    };
    let p = s.pipeline("fs_loop", Some(depth_less()), None, 1);
    let (w, h) = (300, 200);
    let color = target(&s.device, w, h, TextureFormat::Rgba8Unorm, 1);
    let depth = target(&s.device, w, h, TextureFormat::Depth32Float, 1);
    let (cv, dv) = (color.create_view(), depth.create_view());
    let mut v = quad(-1.0, -1.0, 1.0, 1.0, 0.5, [0.2, 0.4, 0.6, 1.0]);
    v.extend(quad(-1.0, -1.0, 0.0, 1.0, 0.3, [0.9, 0.1, 0.1, 1.0]));
    let vb = s.vertex_buffer(&v);
    let mut encoder = s.device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&cv),
            depth_stencil_attachment: cleared_depth(&dv),
            ..Default::default()
        });
        pass.set_pipeline(&p);
        pass.set_vertex_buffer(0, &vb, 0, None);
        pass.draw(0..12, 0..1);
    }
    let err = s.queue.submit([encoder.finish().unwrap()]).unwrap_err();
    assert!(
        matches!(&err, Error::DeviceLost(m) if m.contains("budget")),
        "{err}"
    );
    assert!(s.device.lost_reason().is_some());
}
