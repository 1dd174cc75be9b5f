//! End-to-end: a triangle through the whole API.

use rastra::*;

#[test]
fn hello_triangle() {
    let (device, queue) = Device::new(&DeviceDescriptor::default());
    let module = device
        .create_shader_module(&ShaderModuleDescriptor {
            label: None,
            source: ShaderSource::Wgsl(
                r#"
struct Out { @builtin(position) pos: vec4<f32>, @location(0) color: vec3<f32> }
@vertex fn vs(@builtin(vertex_index) i: u32) -> Out {
    var p = array<vec2<f32>, 3>(vec2(0.0, 0.8), vec2(-0.8, -0.8), vec2(0.8, -0.8));
    var c = array<vec3<f32>, 3>(vec3(1.0, 0.0, 0.0), vec3(0.0, 1.0, 0.0), vec3(0.0, 0.0, 1.0));
    var o: Out;
    o.pos = vec4(p[i], 0.0, 1.0);
    o.color = c[i];
    return o;
}
@fragment fn fs(@location(0) color: vec3<f32>) -> @location(0) vec4<f32> {
    return vec4(color, 1.0);
}
"#,
            ),
        })
        .unwrap();
    let pipeline = device
        .create_render_pipeline(&RenderPipelineDescriptor {
            label: None,
            vertex: VertexState {
                module: &module,
                entry_point: None,
                buffers: &[],
                constants: &[],
            },
            primitive: PrimitiveState::default(),
            depth_stencil: None,
            multisample: MultisampleState::default(),
            fragment: Some(FragmentState {
                module: &module,
                entry_point: None,
                targets: &[Some(ColorTargetState {
                    format: TextureFormat::Rgba8Unorm,
                    blend: None,
                    write_mask: ColorWrites::ALL,
                })],
                constants: &[],
            }),
        })
        .unwrap();
    let target = device
        .create_texture(&TextureDescriptor {
            label: None,
            size: Extent3d {
                width: 16,
                height: 16,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: rastra::TextureDimension::D2,
            format: TextureFormat::Rgba8Unorm,
            usage: TextureUsages::RENDER_ATTACHMENT | TextureUsages::COPY_SRC,
        })
        .unwrap();
    let view = target.create_view();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            label: None,
            color_attachments: &[Some(RenderPassColorAttachment {
                view: &view,
                resolve_target: None,
                ops: Operations {
                    load: LoadOp::Clear(Color::BLACK),
                    store: StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            occlusion_query_set: None,
        });
        pass.set_pipeline(&pipeline);
        pass.draw(0..3, 0..1);
    }
    queue.submit([encoder.finish().unwrap()]).unwrap();
    let pixels = queue.read_texture(&target).unwrap();
    let mut art = String::new();
    for y in 0..16 {
        for x in 0..16 {
            let p = &pixels[(y * 16 + x) * 4..][..4];
            art.push(if p[0] > 0 || p[1] > 0 || p[2] > 0 {
                '#'
            } else {
                '.'
            });
        }
        art.push('\n');
    }
    println!("{art}");
    let stats = queue.take_stats();
    println!("{}", stats.table());
    assert!(art.contains('#'));
}
