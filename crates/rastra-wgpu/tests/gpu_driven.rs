//! wgpu programs where the GPU decides the work, or replays recorded work: a culling compute
//! pass writing the arguments of indirect draws, occlusion queries, image processing through
//! storage textures, render bundles with dynamic offsets — each run on rastra and on
//! lavapipe in the same test and compared within the tolerance recorded (with its reason)
//! there.

mod common;

use common::{
    FORMAT, assert_close, color_pass, depth_texture, on_both, pipeline, read_rgba8, render_target,
    shader,
};
use wgpu::util::DeviceExt;

const CULLING: &str = r#"
struct Object { center: vec2<f32>, radius: f32, hue: f32 }
struct Args {
    index_count: u32,
    instance_count: atomic<u32>,
    first_index: u32,
    base_vertex: i32,
    first_instance: u32,
}
@group(0) @binding(0) var<storage, read> objects: array<Object>;
@group(0) @binding(1) var<storage, read_write> visible: array<Object>;
@group(0) @binding(2) var<storage, read_write> args: array<Args, 2>;

// Keeps the objects that touch the view square [-0.7, 0.7]², compacted; both draws (the
// quads and the markers on them) draw one instance per survivor.
@compute @workgroup_size(64)
fn cull(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= arrayLength(&objects) {
        return;
    }
    let o = objects[i];
    if any(abs(o.center) - o.radius > vec2(0.7)) {
        return;
    }
    let slot = atomicAdd(&args[0].instance_count, 1u);
    atomicAdd(&args[1].instance_count, 1u);
    visible[slot] = o;
}

struct Out { @builtin(position) pos: vec4<f32>, @location(0) color: vec3<f32> }

@vertex
fn vs(@location(0) corner: vec2<f32>, @location(1) center: vec2<f32>,
      @location(2) radius: f32, @location(3) hue: f32) -> Out {
    let c = vec3(hue, 1.0 - hue, 0.5 + 0.5 * sin(hue * 6.0));
    return Out(vec4(center + corner * radius, 0.0, 1.0), c);
}

@fragment
fn fs(v: Out) -> @location(0) vec4<f32> {
    return vec4(v.color, 1.0);
}
"#;

/// GPU-driven rendering: a compute pass culls 144 objects against the view and writes the
/// survivors and the instance counts of two indexed draws (quads, then a marker triangle
/// on each), which one `multi_draw_indexed_indirect` issues. The arguments are only known
/// on the GPU.
fn gpu_culling(device: &wgpu::Device, queue: &wgpu::Queue) -> (Vec<u8>, Vec<u8>) {
    let objects: Vec<f32> = (0..144)
        .flat_map(|i| {
            let (col, row) = ((i % 12) as f32, (i / 12) as f32);
            let center = [col * 0.18 - 0.99, row * 0.18 - 0.99];
            [
                center[0],
                center[1],
                0.05 + 0.02 * (i % 3) as f32,
                i as f32 / 143.0,
            ]
        })
        .collect();
    let storage = |label, contents: &[u8], usage| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    let objects = storage(
        "objects",
        bytemuck::cast_slice(&objects),
        wgpu::BufferUsages::STORAGE,
    );
    let visible = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("visible"),
        size: 144 * 16,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::VERTEX,
        mapped_at_creation: false,
    });
    // Quads: indices 0..6; markers: indices 6..9. Instance counts start at zero.
    let args: [u32; 10] = [6, 0, 0, 0, 0, 3, 0, 6, 0, 0];
    let args = storage(
        "args",
        bytemuck::cast_slice(&args),
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_SRC,
    );
    let corners: [f32; 14] = [
        -1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, 1.0, // the quad
        -0.5, -0.4, 0.5, -0.4, 0.0, 0.6, // the marker
    ];
    let corners = storage(
        "corners",
        bytemuck::cast_slice(&corners),
        wgpu::BufferUsages::VERTEX,
    );
    let indices: [u16; 10] = [0, 1, 2, 0, 2, 3, 4, 5, 6, 0];
    let indices = storage(
        "indices",
        bytemuck::cast_slice(&indices),
        wgpu::BufferUsages::INDEX,
    );
    let module = shader(device, CULLING);
    let cull = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("cull"),
        layout: None,
        module: &module,
        entry_point: Some("cull"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &cull.get_bind_group_layout(0),
        entries: &[&objects, &visible, &args]
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect::<Vec<_>>(),
    });
    let layouts = [
        Some(wgpu::VertexBufferLayout {
            array_stride: 8,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &wgpu::vertex_attr_array![0 => Float32x2],
        }),
        Some(wgpu::VertexBufferLayout {
            array_stride: 16,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes: &wgpu::vertex_attr_array![1 => Float32x2, 2 => Float32, 3 => Float32],
        }),
    ];
    let draw = pipeline(device, &module, &layouts, &[Some(FORMAT.into())], None, 1);
    let target = render_target(device, 96, 96, FORMAT, 1);
    let view = target.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&cull);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(3, 1, 1);
    }
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(color_pass(&view, None, wgpu::Color::BLACK))],
            ..Default::default()
        });
        pass.set_pipeline(&draw);
        pass.set_vertex_buffer(0, corners.slice(..));
        pass.set_vertex_buffer(1, visible.slice(..));
        pass.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint16);
        pass.multi_draw_indexed_indirect(&args, 0, 2);
    }
    queue.submit([encoder.finish()]);
    let image = read_rgba8(device, queue, &target);
    (image, common::read_buffer(device, queue, &args))
}

#[test]
fn gpu_driven_culling_matches_lavapipe() {
    let ((rastra, args), lavapipe) = on_both("gpu culling", gpu_culling);
    let args: &[u32] = bytemuck::cast_slice(&args);
    // What the cull keeps, counted on the CPU.
    let kept = (0..144)
        .filter(|&i| {
            let (col, row) = ((i % 12) as f32, (i / 12) as f32);
            let r = 0.05 + 0.02 * (i % 3) as f32;
            [col * 0.18 - 0.99, row * 0.18 - 0.99]
                .iter()
                .all(|c: &f32| c.abs() - r <= 0.7)
        })
        .count() as u32;
    assert_eq!(args, [6, kept, 0, 0, 0, 3, kept, 6, 0, 0]);
    let lit = rastra.chunks(4).filter(|p| p[..3] != [0, 0, 0]).count();
    assert!(lit > 1000, "the survivors cover {lit} pixels");
    if let Some((lavapipe, lavapipe_args)) = lavapipe {
        assert_eq!(bytemuck::cast_slice::<u8, u32>(&lavapipe_args), args);
        // Flat colours from the same arithmetic, objects apart: identical whatever order
        // the cull wrote the survivors in.
        assert_close("gpu culling", &rastra, &lavapipe, 96, 0, 0);
    }
}

const OCCLUSION: &str = r#"
@vertex fn vs(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> {
    return vec4(p, 1.0);
}
"#;

/// Occlusion culling: a depth-only pass draws an occluder, then a pass with depth writes
/// off asks, one occlusion query per object, how many samples of each object's bounding
/// box would pass; the results are resolved into a buffer and read back.
fn occlusion_culling(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u64> {
    // Pixel edges of a 64×64 target sit at NDC multiples of 1/32.
    let rect = |x0: f32, y0: f32, x1: f32, y1: f32, z: f32| {
        [[x0, y0], [x1, y0], [x1, y1], [x0, y0], [x1, y1], [x0, y1]]
            .into_iter()
            .flat_map(move |[x, y]| [x, y, z])
    };
    let vertices: Vec<f32> = rect(-1.0, -1.0, 0.25, 1.0, 0.2) // the occluder
        .chain(rect(-0.75, -0.5, -0.25, 0.5, 0.5)) // behind it
        .chain(rect(0.5, -0.25, 0.75, 0.25, 0.5)) // in the open
        .chain(rect(0.0, 0.5, 0.5, 1.0, 0.5)) // half behind it
        .chain(rect(-1.0, -1.0, -0.5, -0.5, 0.1)) // in front of it
        .collect();
    let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("boxes"),
        contents: bytemuck::cast_slice(&vertices),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let module = shader(device, OCCLUSION);
    let layout = [Some(wgpu::VertexBufferLayout {
        array_stride: 12,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &wgpu::vertex_attr_array![0 => Float32x3],
    })];
    let depth_state = |write| wgpu::DepthStencilState {
        format: wgpu::TextureFormat::Depth32Float,
        depth_write_enabled: Some(write),
        depth_compare: Some(wgpu::CompareFunction::Less),
        stencil: Default::default(),
        bias: Default::default(),
    };
    let occluder = pipeline(device, &module, &layout, &[], Some(depth_state(true)), 1);
    let probe = pipeline(device, &module, &layout, &[], Some(depth_state(false)), 1);
    let depth = depth_texture(device, 64, 64, wgpu::TextureUsages::empty());
    let depth_view = depth.create_view(&Default::default());
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("visibility"),
        ty: wgpu::QueryType::Occlusion,
        count: 4,
    });
    let resolved = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("resolved"),
        size: 32,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    for pass_index in 0..2 {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: if pass_index == 0 {
                        wgpu::LoadOp::Clear(1.0)
                    } else {
                        wgpu::LoadOp::Load
                    },
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            occlusion_query_set: (pass_index == 1).then_some(&queries),
            ..Default::default()
        });
        pass.set_vertex_buffer(0, vertices.slice(..));
        if pass_index == 0 {
            pass.set_pipeline(&occluder);
            pass.draw(0..6, 0..1);
        } else {
            pass.set_pipeline(&probe);
            for object in 0..4u32 {
                pass.begin_occlusion_query(object);
                pass.draw(6 + object * 6..12 + object * 6, 0..1);
                pass.end_occlusion_query();
            }
        }
    }
    encoder.resolve_query_set(&queries, 0..4, &resolved, 0);
    queue.submit([encoder.finish()]);
    let bytes = common::read_buffer(device, queue, &resolved);
    bytemuck::cast_slice(&bytes).to_vec()
}

#[test]
fn occlusion_queries_match_lavapipe() {
    let (rastra, lavapipe) = on_both("occlusion", occlusion_culling);
    // Hidden; 8×16 pixels in the open; 8×16 of its 16×16 uncovered; 16×16 in front.
    assert_eq!(rastra, [0, 128, 128, 256]);
    if let Some(lavapipe) = lavapipe {
        assert_eq!(lavapipe, rastra, "lavapipe counts the same samples");
    }
}

const STORAGE: &str = r#"
@group(0) @binding(0) var canvas: texture_storage_2d<rgba8unorm, write>;
@group(0) @binding(1) var heights: texture_storage_2d<r32float, read_write>;

// Paints a procedural pattern and accumulates a height field in place.
@compute @workgroup_size(8, 8)
fn paint(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = textureDimensions(canvas);
    if any(id.xy >= size) {
        return;
    }
    let uv = vec2<f32>(id.xy) / vec2<f32>(size);
    let ring = fract(length(uv - 0.5) * 6.0);
    textureStore(canvas, id.xy, vec4(uv, ring, 1.0));
    let h = textureLoad(heights, id.xy).x;
    textureStore(heights, id.xy, vec4(h + ring * 0.5));
}

@group(0) @binding(0) var src: texture_storage_2d<rgba8unorm, read>;
@group(0) @binding(1) var dst: texture_storage_2d<rgba8unorm, write>;
@group(0) @binding(2) var field: texture_storage_2d<r32float, read>;

// A 3×3 box blur from one storage texture into another, shaded by the height field.
@compute @workgroup_size(8, 8)
fn blur(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = vec2<i32>(textureDimensions(src));
    let p = vec2<i32>(id.xy);
    var sum = vec4(0.0);
    for (var dy = -1; dy <= 1; dy++) {
        for (var dx = -1; dx <= 1; dx++) {
            sum += textureLoad(src, clamp(p + vec2(dx, dy), vec2(0), size - 1));
        }
    }
    let h = textureLoad(field, p).x;
    textureStore(dst, id.xy, vec4(sum.rgb / 9.0 * (0.5 + h * 0.5), 1.0));
}
"#;

/// Storage textures: one compute pass writes an image (write-only) and updates a height
/// field in place twice (read-write r32float), a second blurs the image from one storage
/// texture into another (read-only storage textures), and the result is copied back.
fn storage_textures(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u8> {
    let texture = |format, usage| {
        device.create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: 40,
                height: 24,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::STORAGE_BINDING | usage,
            view_formats: &[],
        })
    };
    let canvas = texture(FORMAT, wgpu::TextureUsages::empty());
    let heights = texture(wgpu::TextureFormat::R32Float, wgpu::TextureUsages::empty());
    let blurred = texture(FORMAT, wgpu::TextureUsages::COPY_SRC);
    let module = shader(device, STORAGE);
    let compute = |entry| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let (paint, blur) = (compute("paint"), compute("blur"));
    let views = |textures: &[&wgpu::Texture]| -> Vec<wgpu::TextureView> {
        textures
            .iter()
            .map(|t| t.create_view(&Default::default()))
            .collect()
    };
    let group = |pipeline: &wgpu::ComputePipeline, views: &[wgpu::TextureView]| {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &views
                .iter()
                .enumerate()
                .map(|(i, v)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: wgpu::BindingResource::TextureView(v),
                })
                .collect::<Vec<_>>(),
        })
    };
    let paint_group = group(&paint, &views(&[&canvas, &heights]));
    let blur_group = group(&blur, &views(&[&canvas, &blurred, &heights]));
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&paint);
        pass.set_bind_group(0, &paint_group, &[]);
        pass.dispatch_workgroups(5, 3, 1);
        pass.dispatch_workgroups(5, 3, 1);
        pass.set_pipeline(&blur);
        pass.set_bind_group(0, &blur_group, &[]);
        pass.dispatch_workgroups(5, 3, 1);
    }
    queue.submit([encoder.finish()]);
    read_rgba8(device, queue, &blurred)
}

#[test]
fn storage_textures_match_lavapipe() {
    let (rastra, lavapipe) = on_both("storage textures", storage_textures);
    let lit = rastra.chunks(4).filter(|p| p[..3] != [0, 0, 0]).count();
    assert!(lit > 900, "the blurred image covers {lit} pixels");
    if let Some(lavapipe) = lavapipe {
        // Two unorm8 quantisations (the canvas, then the blur) after length/fract: one
        // step apart where a value lands within an ulp of a rounding boundary (measured: 65
        // of 960 pixels, all by 1, while rastra rounded the exact product; none since it
        // rounds the single-precision product to even, as lavapipe does).
        assert_close("storage textures", &rastra, &lavapipe, 40, 1, 80);
    }
}

const BUNDLES: &str = r#"
struct Placement { offset: vec2<f32>, scale: f32, _pad: f32, color: vec4<f32> }
@group(0) @binding(0) var<uniform> place: Placement;

struct Out { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> }

@vertex fn vs(@location(0) p: vec2<f32>) -> Out {
    return Out(vec4(p * place.scale + place.offset, 0.0, 1.0), place.color);
}

@fragment fn fs(v: Out) -> @location(0) vec4<f32> {
    return v.color;
}
"#;

/// Render bundles replayed in a pass, with dynamic uniform offsets choosing each draw's
/// placement: one bundle draws two quads non-indexed, another an indexed one, and after
/// `execute_bundles` (which clears the pass's state) the pass sets its state again for a
/// direct draw.
fn render_bundles(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u8> {
    let placements: Vec<u8> = [
        ([-0.5f32, -0.5], 0.3, [1.0f32, 0.2, 0.2, 1.0]),
        ([0.5, -0.5], 0.25, [0.2, 1.0, 0.2, 1.0]),
        ([0.5, 0.5], 0.35, [0.2, 0.2, 1.0, 1.0]),
        ([-0.5, 0.5], 0.2, [1.0, 1.0, 0.2, 1.0]),
    ]
    .iter()
    .flat_map(|(offset, scale, color)| {
        let mut entry = [0u8; 256];
        let words: Vec<f32> = offset
            .iter()
            .chain(&[*scale, 0.0])
            .chain(color.iter())
            .copied()
            .collect();
        entry[..32].copy_from_slice(bytemuck::cast_slice(&words));
        entry
    })
    .collect();
    let init = |label, contents: &[u8], usage| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    let uniforms = init("placements", &placements, wgpu::BufferUsages::UNIFORM);
    let quad: [f32; 12] = [
        -1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0,
    ];
    let vertices = init(
        "quad",
        bytemuck::cast_slice(&quad),
        wgpu::BufferUsages::VERTEX,
    );
    let indices = init(
        "indices",
        bytemuck::cast_slice(&[0u16, 1, 2, 3, 4, 5]),
        wgpu::BufferUsages::INDEX,
    );
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: wgpu::BufferSize::new(32),
            },
            count: None,
        }],
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &uniforms,
                offset: 0,
                size: wgpu::BufferSize::new(32),
            }),
        }],
    });
    let module = shader(device, BUNDLES);
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: None,
        layout: Some(
            &device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            }),
        ),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[Some(wgpu::VertexBufferLayout {
                array_stride: 8,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x2],
            })],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(FORMAT.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let bundle = |indexed: bool, offsets: &[u32]| {
        let mut b = device.create_render_bundle_encoder(&wgpu::RenderBundleEncoderDescriptor {
            label: None,
            color_formats: &[Some(FORMAT)],
            depth_stencil: None,
            sample_count: 1,
            multiview: None,
        });
        b.set_pipeline(&pipeline);
        b.set_vertex_buffer(0, vertices.slice(..));
        if indexed {
            b.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint16);
        }
        for &o in offsets {
            b.set_bind_group(0, &group, &[o]);
            if indexed {
                b.draw_indexed(0..6, 0, 0..1);
            } else {
                b.draw(0..6, 0..1);
            }
        }
        b.finish(&Default::default())
    };
    let bundles = [bundle(false, &[0, 256]), bundle(true, &[512])];
    let target = render_target(device, 64, 64, FORMAT, 1);
    let view = target.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(color_pass(&view, None, wgpu::Color::BLACK))],
            ..Default::default()
        });
        pass.execute_bundles(bundles.iter());
        pass.set_pipeline(&pipeline);
        pass.set_vertex_buffer(0, vertices.slice(..));
        pass.set_bind_group(0, &group, &[768]);
        pass.draw(0..6, 0..1);
    }
    queue.submit([encoder.finish()]);
    read_rgba8(device, queue, &target)
}

#[test]
fn render_bundles_with_dynamic_offsets_match_lavapipe() {
    let (rastra, lavapipe) = on_both("render bundles", render_bundles);
    let at = |x: usize, y: usize| &rastra[(y * 64 + x) * 4..(y * 64 + x) * 4 + 3];
    // Each quadrant's centre has its placement's colour (y grows downwards).
    assert_eq!(at(16, 48), [255, 51, 51]);
    assert_eq!(at(48, 48), [51, 255, 51]);
    assert_eq!(at(48, 16), [51, 51, 255]);
    assert_eq!(at(16, 16), [255, 255, 51]);
    if let Some(lavapipe) = lavapipe {
        // Flat colours, quads on pixel-centre-free edges: identical.
        assert_close("render bundles", &rastra, &lavapipe, 64, 0, 0);
    }
    // execute_bundles clears the pass's pipeline: a draw after it must set one again.
    let (device, _) = common::rastra_device();
    let target = render_target(&device, 8, 8, FORMAT, 1);
    let view = target.create_view(&Default::default());
    let module = shader(&device, BUNDLES);
    let layout = wgpu::VertexBufferLayout {
        array_stride: 8,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &wgpu::vertex_attr_array![0 => Float32x2],
    };
    let set_before = pipeline(
        &device,
        &module,
        &[Some(layout)],
        &[Some(FORMAT.into())],
        None,
        1,
    );
    let (_, error) = common::validation_error(&device, || {
        // The bundle's own pipeline does not outlive it either.
        let mut encoder =
            device.create_render_bundle_encoder(&wgpu::RenderBundleEncoderDescriptor {
                label: None,
                color_formats: &[Some(FORMAT)],
                depth_stencil: None,
                sample_count: 1,
                multiview: None,
            });
        encoder.set_pipeline(&set_before);
        let bundle = encoder.finish(&Default::default());
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                color_attachments: &[Some(color_pass(&view, None, wgpu::Color::BLACK))],
                ..Default::default()
            });
            pass.set_pipeline(&set_before);
            pass.execute_bundles([&bundle]);
            pass.draw(0..3, 0..1);
        }
        encoder.finish()
    });
    let error = error.expect("a draw without a pipeline").to_string();
    assert!(error.contains("without a pipeline"), "{error}");
}
