//! wgpu programs written for this project, each run on rastra (through
//! `rastra_wgpu::instance()`) and on lavapipe (wgpu's Vulkan backend) in the same test,
//! results compared within the tolerance recorded with each test. The program code is
//! ordinary wgpu code and knows nothing about which adapter it runs on.

mod common;

use common::{assert_close, on_both, read_buffer, read_rgba8, render_target};
use wgpu::util::DeviceExt;

const TRIANGLE: &str = r#"
struct Out {
    @builtin(position) pos: vec4<f32>,
    @location(0) color: vec3<f32>,
}

@vertex fn vs(@builtin(vertex_index) i: u32) -> Out {
    var p = array<vec2<f32>, 3>(vec2(-0.8, -0.7), vec2(0.8, -0.6), vec2(0.1, 0.85));
    var c = array<vec3<f32>, 3>(vec3(1.0, 0.1, 0.1), vec3(0.1, 1.0, 0.1), vec3(0.1, 0.1, 1.0));
    var o: Out;
    o.pos = vec4(p[i], 0.0, 1.0);
    o.color = c[i];
    return o;
}

@fragment fn fs(v: Out) -> @location(0) vec4<f32> {
    return vec4(v.color, 1.0);
}
"#;

/// The classic first program: one triangle, colours from the vertex index, no buffers.
fn hello_triangle(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u8> {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("triangle"),
        source: wgpu::ShaderSource::Wgsl(TRIANGLE.into()),
    });
    let format = wgpu::TextureFormat::Rgba8UnormSrgb;
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("triangle"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: wgpu::PrimitiveState::default(),
        depth_stencil: None,
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let target = render_target(device, 96, 64, format, 1);
    let view = target.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("triangle"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: 0.1,
                        g: 0.2,
                        b: 0.3,
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            ..Default::default()
        });
        pass.set_pipeline(&pipeline);
        pass.draw(0..3, 0..1);
    }
    queue.submit([encoder.finish()]);
    read_rgba8(device, queue, &target)
}

#[test]
fn hello_triangle_matches_lavapipe() {
    let (rastra, lavapipe) = on_both("hello_triangle", hello_triangle);
    // Clear colour in a corner, a lit pixel inside the triangle.
    assert_eq!(&rastra[..4], &[89, 124, 149, 255]);
    let centre = (32 * 96 + 48) * 4;
    assert!(rastra[centre..centre + 3].iter().any(|&c| c > 100));
    if let Some(lavapipe) = lavapipe {
        // Same coverage rules; colours interpolate to within sRGB-encode rounding.
        assert_close("hello_triangle", &rastra, &lavapipe, 96, 1, 96 * 64);
    }
    let (device, _) = common::rastra_device();
    assert!(rastra_wgpu::last_report(&device).is_none());
}

const SCAN: &str = r#"
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;

var<workgroup> tile: array<u32, 256>;

// Inclusive prefix sum of each 256-element block (Hillis-Steele in workgroup memory), and
// the block's total into `sums`.
@compute @workgroup_size(256)
fn scan(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) g: vec3<u32>) {
    let i = g.x * 256u + l;
    tile[l] = data[i];
    workgroupBarrier();
    for (var step = 1u; step < 256u; step = step * 2u) {
        var v = 0u;
        if (l >= step) {
            v = tile[l - step];
        }
        workgroupBarrier();
        tile[l] = tile[l] + v;
        workgroupBarrier();
    }
    data[i] = tile[l];
    if (l == 255u) {
        sums[g.x] = tile[255];
    }
}
"#;

/// A compute program: block-wise prefix sums and block totals of 4096 numbers, with an
/// automatic layout, a buffer created initialised, and a readback.
fn prefix_sums(device: &wgpu::Device, queue: &wgpu::Queue) -> (Vec<u32>, Vec<u32>) {
    let input: Vec<u32> = (0..4096u32)
        .map(|i| i.wrapping_mul(2654435761) >> 24)
        .collect();
    let data = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("data"),
        contents: bytemuck::cast_slice(&input),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    });
    let sums = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("sums"),
        size: 16 * 4,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("scan"),
        source: wgpu::ShaderSource::Wgsl(SCAN.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("scan"),
        layout: None,
        module: &module,
        entry_point: Some("scan"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("scan"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: data.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: sums.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(16, 1, 1);
    }
    queue.submit([encoder.finish()]);
    let words = |b: Vec<u8>| bytemuck::cast_slice::<u8, u32>(&b).to_vec();
    (
        words(read_buffer(device, queue, &data)),
        words(read_buffer(device, queue, &sums)),
    )
}

#[test]
fn prefix_sums_match_lavapipe_and_the_cpu() {
    let ((scanned, sums), lavapipe) = on_both("prefix_sums", prefix_sums);
    let input: Vec<u32> = (0..4096u32)
        .map(|i| i.wrapping_mul(2654435761) >> 24)
        .collect();
    for (block, chunk) in input.chunks(256).enumerate() {
        let mut acc = 0;
        for (j, v) in chunk.iter().enumerate() {
            acc += v;
            assert_eq!(scanned[block * 256 + j], acc, "block {block} element {j}");
        }
        assert_eq!(sums[block], acc);
    }
    if let Some((l_scanned, l_sums)) = lavapipe {
        assert_eq!(scanned, l_scanned);
        assert_eq!(sums, l_sums);
    }
}
