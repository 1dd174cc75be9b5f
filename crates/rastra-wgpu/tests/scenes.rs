//! wgpu programs of the kinds real applications are made of — an indexed, textured, depth
//! tested cube; MSAA; instancing; render-to-texture; mipmap generation by render passes;
//! blending (every factor and operation); compute-driven particles; shadow mapping — each
//! run on rastra and on lavapipe in the same test and compared within the tolerance
//! recorded (with its reason) there.
//! Programs where the GPU decides the work are in `gpu_driven.rs`.

mod common;

use common::{
    FORMAT, assert_close, color_pass, depth_texture, on_both, pipeline, read_rgba8, render_target,
    shader,
};
use wgpu::util::DeviceExt;

/// Cube faces: 24 vertices (position, uv), 36 indices.
fn cube() -> (Vec<f32>, Vec<u16>) {
    let faces: [([f32; 3], [f32; 3], [f32; 3]); 6] = [
        ([1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]),
        ([-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
        ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]),
        ([0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
    ];
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    for (f, (n, u, v)) in faces.iter().enumerate() {
        for (su, sv) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            for k in 0..3 {
                vertices.push(n[k] + su * u[k] + sv * v[k]);
            }
            vertices.push((su + 1.0) / 2.0);
            vertices.push((1.0 - sv) / 2.0);
        }
        let b = (f * 4) as u16;
        indices.extend([b, b + 1, b + 2, b, b + 2, b + 3]);
    }
    (vertices, indices)
}

const CUBE: &str = r#"
struct Camera { angle: f32, aspect: f32, _pad: vec2<f32> }
@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var tex: texture_2d<f32>;
@group(0) @binding(2) var samp: sampler;

struct Out { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> }

fn transform(p: vec3<f32>, offset: vec3<f32>) -> vec4<f32> {
    let c = cos(camera.angle);
    let s = sin(camera.angle);
    var q = vec3(c * p.x + s * p.z, p.y, -s * p.x + c * p.z);
    q = vec3(q.x, 0.9 * q.y - 0.44 * q.z, 0.44 * q.y + 0.9 * q.z) + offset;
    let z = q.z + 4.0;
    return vec4(q.x * 1.8 / camera.aspect, q.y * 1.8, z * 1.02 - 0.2, z);
}

@vertex fn vs(@location(0) p: vec3<f32>, @location(1) uv: vec2<f32>) -> Out {
    return Out(transform(p, vec3(0.0)), uv);
}

@fragment fn fs(v: Out) -> @location(0) vec4<f32> {
    return textureSample(tex, samp, v.uv);
}
"#;

fn checker(side: u32) -> Vec<u8> {
    (0..side * side)
        .flat_map(|i| {
            let (x, y) = (i % side, i / side);
            if (x / 4 + y / 4) % 2 == 0 {
                [230, 200, 40, 255]
            } else {
                [(x * 8) as u8, 40, (y * 8) as u8, 255]
            }
        })
        .collect()
}

/// The canonical "textured cube": vertex and index buffers, a uniform buffer, a texture
/// uploaded with `write_texture`, a sampler, a depth buffer.
fn textured_cube(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u8> {
    let (w, h) = (128, 96);
    let (vertices, indices) = cube();
    let vb = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("cube vertices"),
        contents: bytemuck::cast_slice(&vertices),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let ib = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("cube indices"),
        contents: bytemuck::cast_slice(&indices),
        usage: wgpu::BufferUsages::INDEX,
    });
    let camera = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("camera"),
        size: 16,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(
        &camera,
        0,
        bytemuck::cast_slice(&[0.6f32, w as f32 / h as f32, 0.0, 0.0]),
    );
    let side = 32;
    let texture = device.create_texture_with_data(
        queue,
        &wgpu::TextureDescriptor {
            label: Some("checker"),
            size: wgpu::Extent3d {
                width: side,
                height: side,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8UnormSrgb,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        },
        wgpu::util::TextureDataOrder::LayerMajor,
        &checker(side),
    );
    let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
        mag_filter: wgpu::FilterMode::Linear,
        min_filter: wgpu::FilterMode::Linear,
        ..Default::default()
    });
    let module = shader(device, CUBE);
    let layout = [Some(wgpu::VertexBufferLayout {
        array_stride: 20,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x2],
    })];
    let depth_state = wgpu::DepthStencilState {
        format: wgpu::TextureFormat::Depth32Float,
        depth_write_enabled: Some(true),
        depth_compare: Some(wgpu::CompareFunction::Less),
        stencil: Default::default(),
        bias: Default::default(),
    };
    let pipe = pipeline(
        device,
        &module,
        &layout,
        &[Some(FORMAT.into())],
        Some(depth_state),
        1,
    );
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipe.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: camera.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(
                    &texture.create_view(&Default::default()),
                ),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Sampler(&sampler),
            },
        ],
    });
    let target = render_target(device, w, h, FORMAT, 1);
    let view = target.create_view(&Default::default());
    let depth = depth_texture(device, w, h, wgpu::TextureUsages::empty());
    let depth_view = depth.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(color_pass(&view, None, wgpu::Color::BLACK))],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            ..Default::default()
        });
        pass.set_pipeline(&pipe);
        pass.set_bind_group(0, &group, &[]);
        pass.set_vertex_buffer(0, vb.slice(..));
        pass.set_index_buffer(ib.slice(..), wgpu::IndexFormat::Uint16);
        pass.draw_indexed(0..36, 0, 0..1);
    }
    queue.submit([encoder.finish()]);
    read_rgba8(device, queue, &target)
}

#[test]
fn textured_cube_matches_lavapipe() {
    let (rastra, lavapipe) = on_both("textured_cube", textured_cube);
    let lit = rastra.chunks(4).filter(|p| p[..3] != [0, 0, 0]).count();
    assert!(lit > 1500, "the cube covers {lit} pixels");
    if let Some(lavapipe) = lavapipe {
        // Bilinear weights are 8-bit on lavapipe: a few levels at texel edges.
        assert_close("textured_cube", &rastra, &lavapipe, 128, 6, 128 * 96);
    }
}

const INSTANCED: &str = r#"
struct Out { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> }

@vertex fn vs(@location(0) corner: vec2<f32>, @location(1) place: vec4<f32>, @location(2) color: vec4<f32>) -> Out {
    return Out(vec4(corner * place.z + place.xy, place.w, 1.0), color);
}

@fragment fn fs(v: Out) -> @location(0) vec4<f32> {
    return v.color;
}
"#;

/// Instancing (a per-instance vertex buffer), 4× MSAA with a resolve target, and alpha
/// blending over overlapping quads.
fn instanced_msaa(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u8> {
    let (w, h) = (80, 80);
    let corners: [f32; 12] = [
        -1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0,
    ];
    let mut instances = Vec::new();
    for i in 0..12 {
        let a = i as f32 * 0.52;
        instances.extend([0.55 * a.cos(), 0.55 * a.sin(), 0.18 + 0.02 * i as f32, 0.5]);
        instances.extend([
            (i % 3) as f32 / 2.0,
            ((i / 3) % 2) as f32,
            1.0 - i as f32 / 12.0,
            0.6,
        ]);
    }
    let corner_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("corners"),
        contents: bytemuck::cast_slice(&corners),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let instance_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("instances"),
        contents: bytemuck::cast_slice(&instances),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let module = shader(device, INSTANCED);
    let layouts = [
        Some(wgpu::VertexBufferLayout {
            array_stride: 8,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &wgpu::vertex_attr_array![0 => Float32x2],
        }),
        Some(wgpu::VertexBufferLayout {
            array_stride: 32,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes: &wgpu::vertex_attr_array![1 => Float32x4, 2 => Float32x4],
        }),
    ];
    let target_state = wgpu::ColorTargetState {
        format: FORMAT,
        blend: Some(wgpu::BlendState::ALPHA_BLENDING),
        write_mask: wgpu::ColorWrites::ALL,
    };
    let pipe = pipeline(device, &module, &layouts, &[Some(target_state)], None, 4);
    let msaa = render_target(device, w, h, FORMAT, 4);
    let resolved = render_target(device, w, h, FORMAT, 1);
    let msaa_view = msaa.create_view(&Default::default());
    let resolved_view = resolved.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(color_pass(
                &msaa_view,
                Some(&resolved_view),
                wgpu::Color::WHITE,
            ))],
            ..Default::default()
        });
        pass.set_pipeline(&pipe);
        pass.set_vertex_buffer(0, corner_buffer.slice(..));
        pass.set_vertex_buffer(1, instance_buffer.slice(..));
        pass.draw(0..6, 0..12);
    }
    queue.submit([encoder.finish()]);
    read_rgba8(device, queue, &resolved)
}

#[test]
fn instanced_msaa_blending_matches_lavapipe() {
    let (rastra, lavapipe) = on_both("instanced_msaa", instanced_msaa);
    if let Some(lavapipe) = lavapipe {
        // Blending in float vs lavapipe's 8-bit blend path, then a 4-sample average: a few
        // levels.
        assert_close("instanced_msaa", &rastra, &lavapipe, 80, 3, 80 * 80);
    }
}

const MIP_BLIT: &str = r#"
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var samp: sampler;

struct Out { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> }

@vertex fn vs(@builtin(vertex_index) i: u32) -> Out {
    // A screen-covering triangle, counter-clockwise (the pipelines cull back faces).
    let uv = vec2(f32(i & 2u), f32((i << 1u) & 2u));
    return Out(vec4(uv * vec2(2.0, -2.0) + vec2(-1.0, 1.0), 0.0, 1.0), uv);
}

@fragment fn fs(v: Out) -> @location(0) vec4<f32> {
    return textureSample(src, samp, v.uv);
}
"#;

/// Render-to-texture and mip generation by render passes: level 0 is drawn by a pass, each
/// further level by a pass sampling the level above through a one-level view, then the
/// whole chain is sampled at a minifying scale onto the screen.
fn mip_chain(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u8> {
    let side = 64;
    let levels = 7;
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("mipmapped"),
        size: wgpu::Extent3d {
            width: side,
            height: side,
            depth_or_array_layers: 1,
        },
        mip_level_count: levels,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
        view_formats: &[],
    });
    let level = |l: u32| {
        texture.create_view(&wgpu::TextureViewDescriptor {
            base_mip_level: l,
            mip_level_count: Some(1),
            ..Default::default()
        })
    };
    let triangle = shader(device, crate_triangle_source());
    let draw_pipe = pipeline(device, &triangle, &[], &[Some(FORMAT.into())], None, 1);
    let blit = shader(device, MIP_BLIT);
    let blit_pipe = pipeline(device, &blit, &[], &[Some(FORMAT.into())], None, 1);
    let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
        mag_filter: wgpu::FilterMode::Linear,
        min_filter: wgpu::FilterMode::Linear,
        mipmap_filter: wgpu::MipmapFilterMode::Linear,
        ..Default::default()
    });
    // The blit's bind group: a view to sample and the trilinear sampler.
    let sampling = |view: &wgpu::TextureView| {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &blit_pipe.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&sampler),
                },
            ],
        })
    };
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let view = level(0);
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(color_pass(&view, None, wgpu::Color::BLACK))],
            ..Default::default()
        });
        pass.set_pipeline(&draw_pipe);
        pass.draw(0..3, 0..1);
    }
    for l in 1..levels {
        let src = level(l - 1);
        let dst = level(l);
        let group = sampling(&src);
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(color_pass(&dst, None, wgpu::Color::BLACK))],
            ..Default::default()
        });
        pass.set_pipeline(&blit_pipe);
        pass.set_bind_group(0, &group, &[]);
        pass.draw(0..3, 0..1);
    }
    // Sample the whole chain onto a 24×24 screen (minified: LOD ≈ 1.4).
    let screen = render_target(device, 24, 24, FORMAT, 1);
    let screen_view = screen.create_view(&Default::default());
    let all = texture.create_view(&Default::default());
    let group = sampling(&all);
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(color_pass(&screen_view, None, wgpu::Color::BLACK))],
            ..Default::default()
        });
        pass.set_pipeline(&blit_pipe);
        pass.set_bind_group(0, &group, &[]);
        pass.draw(0..3, 0..1);
    }
    queue.submit([encoder.finish()]);
    read_rgba8(device, queue, &screen)
}

/// The hello-triangle shader (a full-colour triangle from the vertex index).
fn crate_triangle_source() -> &'static str {
    r#"
struct Out { @builtin(position) pos: vec4<f32>, @location(0) color: vec3<f32> }
@vertex fn vs(@builtin(vertex_index) i: u32) -> Out {
    var p = array<vec2<f32>, 3>(vec2(-0.9, -0.8), vec2(0.9, -0.7), vec2(0.0, 0.9));
    var c = array<vec3<f32>, 3>(vec3(1.0, 0.0, 0.0), vec3(0.0, 1.0, 0.0), vec3(0.0, 0.0, 1.0));
    return Out(vec4(p[i], 0.0, 1.0), c[i]);
}
@fragment fn fs(v: Out) -> @location(0) vec4<f32> { return vec4(v.color, 1.0); }
"#
}

#[test]
fn mip_generation_by_render_passes_matches_lavapipe() {
    let (rastra, lavapipe) = on_both("mip_chain", mip_chain);
    let lit = rastra.chunks(4).filter(|p| p[..3] != [0, 0, 0]).count();
    assert!(
        lit > 200,
        "the filtered triangle reaches the screen ({lit} pixels)"
    );
    if let Some(lavapipe) = lavapipe {
        // Six rounds of 8-bit bilinear filtering on lavapipe against rastra's exact weights.
        assert_close("mip_chain", &rastra, &lavapipe, 24, 4, 24 * 24);
    }
}

const PARTICLES: &str = r#"
struct Particle { pos: vec2<f32>, vel: vec2<f32> }
@group(0) @binding(0) var<storage, read_write> particles: array<Particle>;

@compute @workgroup_size(64)
fn step(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&particles)) { return; }
    var p = particles[i];
    p.vel.y = p.vel.y - 0.05;
    p.pos = p.pos + p.vel * 0.5;
    if (p.pos.y < -0.9) { p.pos.y = -0.9; p.vel.y = -p.vel.y * 0.6; }
    particles[i] = p;
}

struct Out { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> }

@vertex fn vs(@location(0) corner: vec2<f32>, @location(1) pos: vec2<f32>, @location(2) vel: vec2<f32>) -> Out {
    let speed = clamp(length(vel) * 2.0, 0.0, 1.0);
    return Out(vec4(pos + corner * 0.03, 0.0, 1.0), vec4(speed, 0.4, 1.0 - speed, 1.0));
}

@fragment fn fs(v: Out) -> @location(0) vec4<f32> { return v.color; }
"#;

/// Particles: a compute pass moves them in a storage buffer, a render pass draws the same
/// buffer as per-instance vertex data, three frames in one submission.
fn particles(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u8> {
    let count = 256u32;
    let init: Vec<f32> = (0..count)
        .flat_map(|i| {
            let a = i as f32 * 0.61;
            [
                a.cos() * 0.7,
                a.sin() * 0.5,
                (a * 1.7).sin() * 0.1,
                0.1 + (a * 0.3).cos() * 0.05,
            ]
        })
        .collect();
    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("particles"),
        contents: bytemuck::cast_slice(&init),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::VERTEX,
    });
    let corners: [f32; 12] = [
        -1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0,
    ];
    let corner_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("corners"),
        contents: bytemuck::cast_slice(&corners),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let module = shader(device, PARTICLES);
    let compute = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("step"),
        layout: None,
        module: &module,
        entry_point: Some("step"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &compute.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: buffer.as_entire_binding(),
        }],
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
            attributes: &wgpu::vertex_attr_array![1 => Float32x2, 2 => Float32x2],
        }),
    ];
    let render = pipeline(device, &module, &layouts, &[Some(FORMAT.into())], None, 1);
    let target = render_target(device, 64, 64, FORMAT, 1);
    let view = target.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    for frame in 0..3 {
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&compute);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(count.div_ceil(64), 1, 1);
        }
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: if frame == 0 {
                        wgpu::LoadOp::Clear(wgpu::Color::BLACK)
                    } else {
                        wgpu::LoadOp::Load
                    },
                    store: wgpu::StoreOp::Store,
                },
            })],
            ..Default::default()
        });
        pass.set_pipeline(&render);
        pass.set_vertex_buffer(0, corner_buffer.slice(..));
        pass.set_vertex_buffer(1, buffer.slice(..));
        pass.draw(0..6, 0..count);
    }
    queue.submit([encoder.finish()]);
    read_rgba8(device, queue, &target)
}

#[test]
fn compute_driven_particles_match_lavapipe() {
    let (rastra, lavapipe) = on_both("particles", particles);
    let lit = rastra.chunks(4).filter(|p| p[..3] != [0, 0, 0]).count();
    assert!(lit > 300, "particles cover {lit} pixels");
    if let Some(lavapipe) = lavapipe {
        // The same float arithmetic and flat colours on both: identical.
        assert_close("particles", &rastra, &lavapipe, 64, 0, 0);
    }
}

const SHADOW: &str = r#"
struct Light { view_proj: mat4x4<f32> }
@group(0) @binding(0) var<uniform> light: Light;
@group(0) @binding(1) var shadow: texture_depth_2d;
@group(0) @binding(2) var cmp: sampler_comparison;

// The scene: a floor quad and a floating square, positions in world space.
@vertex fn vs_depth(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> {
    return light.view_proj * vec4(p, 1.0);
}

struct Out { @builtin(position) pos: vec4<f32>, @location(0) world: vec3<f32> }

@vertex fn vs(@location(0) p: vec3<f32>) -> Out {
    // Camera: looking down the -y axis from above, slightly tilted.
    let c = vec3(p.x * 0.8, p.z * 0.8 + p.y * 0.3, 0.5 - p.y * 0.2);
    return Out(vec4(c, 1.0), p);
}

@fragment fn fs(v: Out) -> @location(0) vec4<f32> {
    let l = light.view_proj * vec4(v.world, 1.0);
    let uv = vec2(l.x * 0.5 + 0.5, 0.5 - l.y * 0.5);
    let lit = textureSampleCompare(shadow, cmp, uv, l.z - 0.01);
    return vec4(vec3(0.2 + 0.8 * lit) * vec3(0.9, 0.8, 0.6), 1.0);
}
"#;

/// Shadow mapping: a depth-only pass from the light into a Depth32Float texture, then the
/// scene sampled against it through a comparison sampler (PCF with linear filtering).
fn shadow_mapping(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u8> {
    let floor = [
        [-1.0f32, 0.0, -1.0],
        [1.0, 0.0, -1.0],
        [1.0, 0.0, 1.0],
        [-1.0, 0.0, 1.0],
    ];
    let square = [
        [-0.3f32, 0.5, -0.3],
        [0.3, 0.5, -0.3],
        [0.3, 0.5, 0.3],
        [-0.3, 0.5, 0.3],
    ];
    let mut vertices: Vec<f32> = Vec::new();
    let mut indices: Vec<u16> = Vec::new();
    for (q, quad) in [floor, square].iter().enumerate() {
        for v in quad {
            vertices.extend(v);
        }
        let b = (q * 4) as u16;
        // Both windings, so culling never hides a face from either viewpoint.
        indices.extend([
            b,
            b + 1,
            b + 2,
            b,
            b + 2,
            b + 3,
            b,
            b + 2,
            b + 1,
            b,
            b + 3,
            b + 2,
        ]);
    }
    let vb = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("scene"),
        contents: bytemuck::cast_slice(&vertices),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let ib = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("scene indices"),
        contents: bytemuck::cast_slice(&indices),
        usage: wgpu::BufferUsages::INDEX,
    });
    // Orthographic light looking straight down: x → x, z → y, depth from height.
    #[rustfmt::skip]
    let light: [f32; 16] = [
        1.0, 0.0, 0.0, 0.0,
        0.15, 0.0, -0.5, 0.0,
        0.0, -1.0, 0.0, 0.0,
        0.0, 0.0, 0.5, 1.0,
    ];
    let light_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("light"),
        contents: bytemuck::cast_slice(&light),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let module = shader(device, SHADOW);
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("shadow"),
        entries: &[
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Depth,
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 2,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Comparison),
                count: None,
            },
        ],
    });
    let light_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("light only"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let vertex_layout = [Some(wgpu::VertexBufferLayout {
        array_stride: 12,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &wgpu::vertex_attr_array![0 => Float32x3],
    })];
    let make = |layout: &wgpu::BindGroupLayout, vs: &str, fragment: bool| {
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(layout)],
            immediate_size: 0,
        });
        let targets = [Some(FORMAT.into())];
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(vs),
            layout: Some(&pl),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some(vs),
                compilation_options: Default::default(),
                buffers: &vertex_layout,
            },
            primitive: Default::default(),
            depth_stencil: Some(wgpu::DepthStencilState {
                format: wgpu::TextureFormat::Depth32Float,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: Default::default(),
            fragment: fragment.then(|| wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &targets,
            }),
            multiview_mask: None,
            cache: None,
        })
    };
    let depth_pipe = make(&light_layout, "vs_depth", false);
    let scene_pipe = make(&layout, "vs", true);
    let shadow_map = depth_texture(device, 64, 64, wgpu::TextureUsages::TEXTURE_BINDING);
    let shadow_view = shadow_map.create_view(&Default::default());
    let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
        mag_filter: wgpu::FilterMode::Linear,
        min_filter: wgpu::FilterMode::Linear,
        compare: Some(wgpu::CompareFunction::LessEqual),
        ..Default::default()
    });
    let light_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &light_layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: light_buffer.as_entire_binding(),
        }],
    });
    let scene_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: light_buffer.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(&shadow_view),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Sampler(&sampler),
            },
        ],
    });
    let target = render_target(device, 96, 96, FORMAT, 1);
    let view = target.create_view(&Default::default());
    let depth = depth_texture(device, 96, 96, wgpu::TextureUsages::empty());
    let depth_view = depth.create_view(&Default::default());
    let depth_ops = Some(wgpu::Operations {
        load: wgpu::LoadOp::Clear(1.0),
        store: wgpu::StoreOp::Store,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &shadow_view,
                depth_ops,
                stencil_ops: None,
            }),
            ..Default::default()
        });
        pass.set_pipeline(&depth_pipe);
        pass.set_bind_group(0, &light_group, &[]);
        pass.set_vertex_buffer(0, vb.slice(..));
        pass.set_index_buffer(ib.slice(..), wgpu::IndexFormat::Uint16);
        pass.draw_indexed(0..indices.len() as u32, 0, 0..1);
    }
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(color_pass(&view, None, wgpu::Color::BLACK))],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth_view,
                depth_ops,
                stencil_ops: None,
            }),
            ..Default::default()
        });
        pass.set_pipeline(&scene_pipe);
        pass.set_bind_group(0, &scene_group, &[]);
        pass.set_vertex_buffer(0, vb.slice(..));
        pass.set_index_buffer(ib.slice(..), wgpu::IndexFormat::Uint16);
        pass.draw_indexed(0..indices.len() as u32, 0, 0..1);
    }
    queue.submit([encoder.finish()]);
    read_rgba8(device, queue, &target)
}

#[test]
fn shadow_mapping_matches_lavapipe() {
    let (rastra, lavapipe) = on_both("shadow_mapping", shadow_mapping);
    // Both lit and shadowed floor pixels exist.
    let shades: std::collections::BTreeSet<u8> = rastra.chunks(4).map(|p| p[0]).collect();
    assert!(shades.len() > 3, "{shades:?}");
    if let Some(lavapipe) = lavapipe {
        // PCF weights: lavapipe filters comparison results with 8-bit weights (measured
        // max 1).
        assert_close("shadow_mapping", &rastra, &lavapipe, 96, 2, 96 * 96);
    }
}

const BLEND: &str = r#"
struct Out { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> }

// Cells: vertices 0..6 of a unit quad, placed by the instance's corner; the background:
// a full-screen gradient (instance data unused).
@vertex fn vs(@builtin(vertex_index) i: u32, @location(0) at: vec2<f32>,
              @location(1) color: vec4<f32>) -> Out {
    let corners = array(vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(1.0, 1.0),
                        vec2(0.0, 0.0), vec2(1.0, 1.0), vec2(0.0, 1.0));
    return Out(vec4(at + corners[i] * 0.25, 0.5, 1.0), color);
}

@vertex fn vs_background(@builtin(vertex_index) i: u32) -> Out {
    let p = vec2(f32(i & 1u) * 4.0 - 1.0, f32(i >> 1u) * 4.0 - 1.0);
    let uv = p * 0.5 + 0.5;
    return Out(vec4(p, 0.5, 1.0), vec4(uv.x, uv.y, 1.0 - uv.x, 0.25 + 0.5 * uv.y));
}

@fragment fn fs(v: Out) -> @location(0) vec4<f32> {
    return v.color;
}
"#;

/// The blend states the blending program draws, one cell each: every factor as the source
/// factor over `OneMinusSrcAlpha`, every factor as the destination factor under `One`, and
/// every operation.
fn blend_states() -> Vec<wgpu::BlendState> {
    use wgpu::{BlendComponent as C, BlendFactor as F, BlendOperation as O};
    let factors = [
        F::Zero,
        F::One,
        F::Src,
        F::OneMinusSrc,
        F::SrcAlpha,
        F::OneMinusSrcAlpha,
        F::Dst,
        F::OneMinusDst,
        F::DstAlpha,
        F::OneMinusDstAlpha,
        F::Constant,
        F::OneMinusConstant,
    ];
    let alpha = C {
        src_factor: F::One,
        dst_factor: F::OneMinusSrcAlpha,
        operation: O::Add,
    };
    let state = |src_factor, dst_factor, operation| wgpu::BlendState {
        color: C {
            src_factor,
            dst_factor,
            operation,
        },
        alpha,
    };
    let mut states: Vec<_> = factors
        .iter()
        .chain([&F::SrcAlphaSaturated])
        .map(|&f| state(f, F::OneMinusSrcAlpha, O::Add))
        .collect();
    states.extend(factors.iter().map(|&f| state(F::One, f, O::Add)));
    states
        .extend([O::Add, O::Subtract, O::ReverseSubtract].map(|op| state(F::SrcAlpha, F::One, op)));
    // Min and max take no factors (WebGPU requires One).
    states.extend([O::Min, O::Max].map(|op| state(F::One, F::One, op)));
    states
}

/// Blending: a gradient background, then one quad per blend state, each in its own 8×8
/// cell with its own colour, with a blend constant set.
fn blending(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u8> {
    let states = blend_states();
    let cells: Vec<f32> = (0..states.len())
        .flat_map(|i| {
            let (col, row) = ((i % 8) as f32, (i / 8) as f32);
            let k = i as f32 / states.len() as f32;
            [
                -1.0 + col * 0.25,
                -1.0 + row * 0.5,
                0.9 - 0.6 * k,
                0.2 + 0.7 * k,
                0.5 + 0.4 * (k * 7.0).sin(),
                0.3 + 0.6 * ((i * 5 % 7) as f32 / 6.0),
            ]
        })
        .collect();
    let cells = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("cells"),
        contents: bytemuck::cast_slice(&cells),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let module = shader(device, BLEND);
    let layout = [Some(wgpu::VertexBufferLayout {
        array_stride: 24,
        step_mode: wgpu::VertexStepMode::Instance,
        attributes: &wgpu::vertex_attr_array![0 => Float32x2, 1 => Float32x4],
    })];
    let make = |entry: &str, blend: Option<wgpu::BlendState>, buffers| {
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: None,
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                buffers,
            },
            primitive: Default::default(),
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: FORMAT,
                    blend,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        })
    };
    let background = make("vs_background", None, &[]);
    let cells_pipelines: Vec<_> = states
        .iter()
        .map(|s| make("vs", Some(*s), &layout))
        .collect();
    let target = render_target(device, 64, 64, FORMAT, 1);
    let view = target.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(color_pass(&view, None, wgpu::Color::BLACK))],
            ..Default::default()
        });
        pass.set_blend_constant(wgpu::Color {
            r: 0.25,
            g: 0.5,
            b: 0.75,
            a: 0.6,
        });
        pass.set_pipeline(&background);
        pass.draw(0..3, 0..1);
        pass.set_vertex_buffer(0, cells.slice(..));
        for (i, p) in cells_pipelines.iter().enumerate() {
            pass.set_pipeline(p);
            pass.draw(0..6, i as u32..i as u32 + 1);
        }
    }
    queue.submit([encoder.finish()]);
    read_rgba8(device, queue, &target)
}

#[test]
fn blending_modes_match_lavapipe() {
    let (rastra, lavapipe) = on_both("blending", blending);
    // Cells differ from one another: the blend states are not all doing the same thing.
    let cell = |i: usize| {
        let (x, y) = (i % 8 * 8 + 4, 63 - (i / 8 * 16 + 4));
        rastra[(y * 64 + x) * 4..(y * 64 + x) * 4 + 4].to_vec()
    };
    let distinct: std::collections::HashSet<Vec<u8>> =
        (0..blend_states().len()).map(cell).collect();
    assert!(
        distinct.len() > 20,
        "{} distinct cell colours",
        distinct.len()
    );
    if let Some(lavapipe) = lavapipe {
        // Both blend unorm8 in fixed point from the same source codes; rastra rounds each
        // channel's sum once, lavapipe each product: one step apart in places (measured:
        // 377 of 4096 pixels, all by 1).
        assert_close("blending", &rastra, &lavapipe, 64, 1, 64 * 64);
    }
}

const BIAS: &str = r#"
// A quad sloped in depth across x (0.2 at the left edge, 0.7 at the right), placed in
// one of three horizontal bands.
@vertex fn vs(@builtin(vertex_index) i: u32, @builtin(instance_index) band: u32)
    -> @builtin(position) vec4<f32> {
    let c = array(vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(1.0, 1.0),
                  vec2(0.0, 0.0), vec2(1.0, 1.0), vec2(0.0, 1.0));
    let y0 = -1.0 + f32(band) * 2.0 / 3.0;
    return vec4(c[i].x * 2.0 - 1.0, y0 + c[i].y * 2.0 / 3.0, 0.2 + 0.5 * c[i].x, 1.0);
}
"#;

/// Depth bias: three bands of a depth-sloped quad, each with its own bias (constant only,
/// slope only, both with a clamp), written to a Depth32Float target that is read back.
fn depth_bias(device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<f32> {
    let module = shader(device, BIAS);
    let biases = [
        wgpu::DepthBiasState {
            constant: 1000,
            slope_scale: 0.0,
            clamp: 0.0,
        },
        wgpu::DepthBiasState {
            constant: 0,
            slope_scale: 4.0,
            clamp: 0.0,
        },
        wgpu::DepthBiasState {
            constant: -3000,
            slope_scale: -4.0,
            clamp: -0.0002,
        },
    ];
    let pipelines: Vec<_> = biases
        .iter()
        .map(|bias| {
            let state = wgpu::DepthStencilState {
                format: wgpu::TextureFormat::Depth32Float,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Always),
                stencil: Default::default(),
                bias: *bias,
            };
            pipeline(device, &module, &[], &[], Some(state), 1)
        })
        .collect();
    let (w, h) = (64u32, 48u32);
    let depth = depth_texture(device, w, h, wgpu::TextureUsages::COPY_SRC);
    let view = depth.create_view(&Default::default());
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256 * h as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            ..Default::default()
        });
        for (band, p) in pipelines.iter().enumerate() {
            pass.set_pipeline(p);
            pass.draw(0..6, band as u32..band as u32 + 1);
        }
    }
    encoder.copy_texture_to_buffer(
        depth.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(256),
                rows_per_image: None,
            },
        },
        depth.size(),
    );
    queue.submit([encoder.finish()]);
    let bytes = common::map_and_read(device, &readback);
    bytes
        .chunks(256)
        .flat_map(|row| bytemuck::cast_slice::<u8, f32>(&row[..4 * w as usize]).to_vec())
        .collect()
}

#[test]
fn depth_bias_matches_lavapipe() {
    let (rastra, lavapipe) = on_both("depth bias", depth_bias);
    // Unbiased depth at pixel x: 0.2 + 0.5 · (x + 0.5) / 64; the slope is 0.5 / 64 per
    // pixel. Band 0 (bottom rows): +1000 units at exponent −1 (z < 1): +1000 · 2⁻²⁴.
    let unbiased = |x: usize| 0.2 + 0.5 * (x as f32 + 0.5) / 64.0;
    let at = |x: usize, y: usize| rastra[y * 64 + x];
    let r = 2f32.powi(-24);
    assert!((at(40, 47) - (unbiased(40) + 1000.0 * r)).abs() < 1e-6);
    // Band 1: + 4 × slope.
    assert!((at(40, 24) - (unbiased(40) + 4.0 * 0.5 / 64.0)).abs() < 1e-6);
    // Band 2: the negative sum clamped at −0.0002.
    assert!((at(40, 2) - (unbiased(40) - 0.0002)).abs() < 1e-6);
    if let Some(lavapipe) = lavapipe {
        let worst = rastra
            .iter()
            .zip(&lavapipe)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        eprintln!("depth bias: rastra vs lavapipe: largest depth difference {worst:e}");
        // Same formula; interpolation order differs by float rounding only.
        assert!(worst < 1e-6, "depth bias differs from lavapipe by {worst}");
    }
}
