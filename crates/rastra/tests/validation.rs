//! Bad input at the API boundary: clear errors, never panics.

mod common;

use common::*;
use rastra::*;

const POSITION_ONLY: &str = r#"
@vertex fn vs(@location(0) p: vec2<f32>) -> @builtin(position) vec4<f32> { return vec4(p, 0.0, 1.0); }
@fragment fn fs() -> @location(0) vec4<f32> { return vec4(1.0); }
"#;

#[test]
fn invalid_wgsl_reports_line_and_column() {
    let (device, _) = device();
    let err = module(
        &device,
        "@vertex fn vs() -> @builtin(position) vec4<f32> {\n  return vec4(1.0) +;\n}\n",
    )
    .unwrap_err();
    match err {
        Error::Shader(CompileError::Source { line, column, .. }) => {
            assert_eq!(line, 2);
            assert!(column > 1, "column {column}");
        }
        other => panic!("expected a source error, got {other:?}"),
    }
    let text = module(&device, "fn f( {").unwrap_err().to_string();
    assert!(text.starts_with("shader error: 1:"), "{text}");
}

#[test]
fn vertex_layout_not_matching_the_shader() {
    let (device, _) = device();
    let m = module(&device, POSITION_ONLY).unwrap();
    // No attribute for @location(0).
    let err = pipeline(&device, &m, &[], TextureFormat::Rgba8Unorm).unwrap_err();
    assert!(
        matches!(&err, Error::Validation(msg) if msg.contains("@location(0)")),
        "{err}"
    );
    // An integer attribute for a float input.
    let layout = VertexBufferLayout {
        array_stride: 8,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![VertexAttribute {
            format: VertexFormat::Uint32x2,
            offset: 0,
            shader_location: 0,
        }],
    };
    let err = pipeline(&device, &m, &[layout], TextureFormat::Rgba8Unorm).unwrap_err();
    assert!(
        matches!(&err, Error::Validation(msg) if msg.contains("Uint32x2")),
        "{err}"
    );
    // An attribute past the stride.
    let layout = VertexBufferLayout {
        array_stride: 4,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![VertexAttribute {
            format: VertexFormat::Float32x2,
            offset: 0,
            shader_location: 0,
        }],
    };
    assert!(matches!(
        pipeline(&device, &m, &[layout], TextureFormat::Rgba8Unorm),
        Err(Error::Validation(_))
    ));
}

#[test]
fn missing_bindings_and_buffers_are_validation_errors() {
    let (device, _) = device();
    let m = module(
        &device,
        r#"
struct U { color: vec4<f32> }
@group(0) @binding(0) var<uniform> u: U;
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> { return vec4(f32(i), 0.0, 0.0, 1.0); }
@fragment fn fs() -> @location(0) vec4<f32> { return u.color; }
"#,
    )
    .unwrap();
    let p = pipeline(&device, &m, &[], TextureFormat::Rgba8Unorm).unwrap();
    let t = target(&device, 4, 4, TextureFormat::Rgba8Unorm, 1);
    let view = t.create_view();

    // No bind group at all.
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&view),
            ..Default::default()
        });
        pass.set_pipeline(&p);
        pass.draw(0..3, 0..1);
    }
    let err = encoder.finish().unwrap_err();
    assert!(
        matches!(&err, Error::Validation(m) if m.contains("@group(0)")),
        "{err}"
    );

    // A bind group whose buffer is too small.
    let small = device
        .create_buffer_init(None, &[0; 8], BufferUsages::UNIFORM)
        .unwrap();
    let group = device
        .create_bind_group(&BindGroupDescriptor {
            label: None,
            entries: &[BindGroupEntry {
                binding: 0,
                resource: BindingResource::Buffer(BufferBinding {
                    buffer: &small,
                    offset: 0,
                    size: None,
                }),
            }],
        })
        .unwrap();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&view),
            ..Default::default()
        });
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &group);
        pass.draw(0..3, 0..1);
    }
    let err = encoder.finish().unwrap_err();
    assert!(
        matches!(&err, Error::Validation(m) if m.contains("16 bytes")),
        "{err}"
    );

    // A vertex buffer the pipeline needs but the pass never set.
    let m2 = module(&device, POSITION_ONLY).unwrap();
    let layout = VertexBufferLayout {
        array_stride: 8,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![VertexAttribute {
            format: VertexFormat::Float32x2,
            offset: 0,
            shader_location: 0,
        }],
    };
    let p2 = pipeline(&device, &m2, &[layout], TextureFormat::Rgba8Unorm).unwrap();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&view),
            ..Default::default()
        });
        pass.set_pipeline(&p2);
        pass.draw(0..3, 0..1);
    }
    assert!(matches!(encoder.finish(), Err(Error::Validation(m)) if m.contains("vertex buffer 0")));
}

#[test]
fn pass_and_pipeline_mismatch() {
    let (device, _) = device();
    let m = module(&device, POSITION_ONLY).unwrap();
    let layout = VertexBufferLayout {
        array_stride: 8,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![VertexAttribute {
            format: VertexFormat::Float32x2,
            offset: 0,
            shader_location: 0,
        }],
    };
    let p = pipeline(&device, &m, &[layout], TextureFormat::Bgra8Unorm).unwrap();
    let t = target(&device, 4, 4, TextureFormat::Rgba8Unorm, 1);
    let view = t.create_view();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&view),
            ..Default::default()
        });
        pass.set_pipeline(&p);
    }
    assert!(matches!(encoder.finish(), Err(Error::Validation(m)) if m.contains("Bgra8Unorm")));
    // Attachments of different sizes.
    let other = target(&device, 8, 4, TextureFormat::Rgba8Unorm, 1);
    let other_view = other.create_view();
    let mut encoder = device.create_command_encoder();
    let attachments = [
        clear_pass(&view)[0].clone(),
        clear_pass(&other_view)[0].clone(),
    ];
    drop(encoder.begin_render_pass(&RenderPassDescriptor {
        color_attachments: &attachments,
        ..Default::default()
    }));
    assert!(matches!(encoder.finish(), Err(Error::Validation(_))));
}

#[test]
fn buffer_and_texture_misuse() {
    let (device, queue) = device();
    let b = device
        .create_buffer(&BufferDescriptor {
            label: None,
            size: 16,
            usage: BufferUsages::VERTEX,
        })
        .unwrap();
    assert!(matches!(
        queue.write_buffer(&b, 0, &[0; 4]),
        Err(Error::Validation(_))
    ));
    assert!(matches!(b.read(), Err(Error::Validation(_))));
    assert!(matches!(
        device.create_buffer(&BufferDescriptor {
            label: None,
            size: 1 << 40,
            usage: BufferUsages::VERTEX
        }),
        Err(Error::OutOfMemory(_))
    ));
    let t = device.create_texture(&TextureDescriptor {
        label: None,
        size: Extent3d {
            width: 0,
            height: 4,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: rastra::TextureDimension::D2,
        format: TextureFormat::Rgba8Unorm,
        usage: TextureUsages::RENDER_ATTACHMENT,
    });
    assert!(matches!(t, Err(Error::Validation(_))));
    let ms = target(&device, 4, 4, TextureFormat::Rgba8Unorm, 4);
    assert!(matches!(queue.read_texture(&ms), Err(Error::Validation(_))));
}

#[test]
fn runaway_shader_loses_the_device() {
    let (device, queue) = Device::new(&DeviceDescriptor {
        shader_instruction_budget: 1 << 20,
        ..Default::default()
    });
    let m = module(
        &device,
        r#"
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    var x = 0u;
    loop { x = x + i; }
    return vec4(f32(x), 0.0, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4(1.0); }
"#,
    )
    .unwrap();
    let p = pipeline(&device, &m, &[], TextureFormat::Rgba8Unorm).unwrap();
    let t = target(&device, 4, 4, TextureFormat::Rgba8Unorm, 1);
    let view = t.create_view();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&view),
            ..Default::default()
        });
        pass.set_pipeline(&p);
        pass.draw(0..3, 0..1);
        // A draw of many front-end chunks, every one of them running away: the first
        // failure in chunk order is the one reported, whichever worker meets which first.
        pass.draw(0..3 * 1024 * 24, 0..1);
    }
    let err = queue.submit([encoder.finish().unwrap()]).unwrap_err();
    assert!(
        matches!(&err, Error::DeviceLost(m) if m.contains("budget")),
        "{err}"
    );
    assert!(device.lost_reason().is_some());
    assert!(matches!(
        device.create_command_encoder().finish().map(|_| ()),
        Ok(())
    ));
    assert!(matches!(
        module(&device, POSITION_ONLY),
        Err(Error::DeviceLost(_))
    ));
}

#[test]
fn unsupported_features_say_so() {
    let (device, _) = device();
    let m = module(&device, POSITION_ONLY).unwrap();
    let layout = VertexBufferLayout {
        array_stride: 8,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![VertexAttribute {
            format: VertexFormat::Float32x2,
            offset: 0,
            shader_location: 0,
        }],
    };
    let err = device
        .create_render_pipeline(&RenderPipelineDescriptor {
            label: None,
            vertex: VertexState {
                module: &m,
                entry_point: None,
                buffers: &[layout],
                constants: &[],
            },
            primitive: PrimitiveState {
                topology: PrimitiveTopology::LineList,
                ..Default::default()
            },
            depth_stencil: None,
            multisample: MultisampleState::default(),
            fragment: Some(FragmentState {
                module: &m,
                entry_point: None,
                targets: &[Some(color_target(TextureFormat::Rgba8Unorm))],
                constants: &[],
            }),
        })
        .unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("LineList")),
        "{err}"
    );
}

#[test]
fn overflowing_ranges_and_layouts_are_validation_errors() {
    let (device, _) = device();
    let buffer = device
        .create_buffer(&BufferDescriptor {
            label: None,
            size: 512,
            usage: BufferUsages::UNIFORM,
        })
        .unwrap();
    let group = device.create_bind_group(&BindGroupDescriptor {
        label: None,
        entries: &[BindGroupEntry {
            binding: 0,
            resource: BindingResource::Buffer(BufferBinding {
                buffer: &buffer,
                offset: 256,
                size: Some(u64::MAX),
            }),
        }],
    });
    assert!(matches!(group, Err(Error::Validation(_))), "{group:?}");

    let m = module(&device, POSITION_ONLY).unwrap();
    let bad_layouts = [
        (u64::MAX - 7, 16, 0), // offset overflowing the element
        (0, 4096, 0),          // stride over the limit
        (0, 10, 0),            // stride not a multiple of 4
        (2, 16, 0),            // misaligned offset
        (0, 16, 16),           // shader location over the limit
    ];
    for (offset, stride, location) in bad_layouts {
        let layout = VertexBufferLayout {
            array_stride: stride,
            step_mode: VertexStepMode::Vertex,
            attributes: vec![
                VertexAttribute {
                    format: VertexFormat::Float32x2,
                    offset: 0,
                    shader_location: 0,
                },
                VertexAttribute {
                    format: VertexFormat::Float32x2,
                    offset,
                    shader_location: location.max(1),
                },
            ],
        };
        let result = pipeline(&device, &m, &[layout], TextureFormat::Rgba8Unorm);
        assert!(
            matches!(result, Err(Error::Validation(_))),
            "offset {offset} stride {stride} location {location}"
        );
    }
    let duplicate = VertexBufferLayout {
        array_stride: 16,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![
            VertexAttribute {
                format: VertexFormat::Float32x2,
                offset: 0,
                shader_location: 0,
            },
            VertexAttribute {
                format: VertexFormat::Float32x2,
                offset: 8,
                shader_location: 0,
            },
        ],
    };
    assert!(
        matches!(pipeline(&device, &m, &[duplicate], TextureFormat::Rgba8Unorm), Err(Error::Validation(m)) if m.contains("two attributes"))
    );

    let t = device
        .create_texture(&TextureDescriptor {
            label: None,
            size: Extent3d {
                width: 4,
                height: 4,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: rastra::TextureDimension::D2,
            format: TextureFormat::Rgba8Unorm,
            usage: TextureUsages::COPY_SRC,
        })
        .unwrap();
    let dst = device
        .create_buffer(&BufferDescriptor {
            label: None,
            size: 2048,
            usage: BufferUsages::COPY_DST,
        })
        .unwrap();
    let mut encoder = device.create_command_encoder();
    encoder.copy_texture_to_buffer(&t, &dst, u64::MAX - 3, 256);
    assert!(matches!(encoder.finish(), Err(Error::Validation(_))));
}

#[test]
fn exponential_inlining_is_refused() {
    let (device, _) = device();
    let mut src = String::from("fn f0() -> f32 { return 1.0; }\n");
    for i in 1..20 {
        src += &format!(
            "fn f{i}() -> f32 {{ return f{p}() + f{p}(); }}\n",
            p = i - 1
        );
    }
    src += "@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4(f19()); }\n";
    src += "@fragment fn fs() -> @location(0) vec4<f32> { return vec4(1.0); }\n";
    let m = module(&device, &src).unwrap();
    let err = pipeline(&device, &m, &[], TextureFormat::Rgba8Unorm).unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("inlined")),
        "{err}"
    );
}

/// WebGPU's depth/stencil rules for buffer copies and uploads: depth16unorm both ways,
/// depth32float only out of the texture, depth24plus never; combined formats name an aspect.
#[test]
fn depth_buffer_copies_follow_webgpu() {
    let (device, queue) = device();
    let texture = |format| {
        device
            .create_texture(&TextureDescriptor {
                label: None,
                size: Extent3d {
                    width: 4,
                    height: 4,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: TextureDimension::D2,
                format,
                usage: TextureUsages::COPY_DST | TextureUsages::COPY_SRC,
            })
            .unwrap()
    };
    assert!(
        queue
            .write_texture(&texture(TextureFormat::Depth16Unorm), &[0; 32])
            .is_ok()
    );
    for format in [
        TextureFormat::Depth32Float,
        TextureFormat::Depth24Plus,
        TextureFormat::Depth24PlusStencil8,
    ] {
        let t = texture(format);
        let size = 16 * format.block_size();
        match queue.write_texture(&t, &vec![0; size]) {
            Err(Error::Validation(m)) => assert!(m.contains(&format!("{format:?}")), "{m}"),
            other => panic!("{format:?}: {other:?}"),
        }
    }
    // Out of the texture: depth32float yes, depth24plus no.
    let buffer = device
        .create_buffer(&BufferDescriptor {
            label: None,
            size: 1024,
            usage: BufferUsages::COPY_DST,
        })
        .unwrap();
    // Combined formats: one aspect per copy (stencil both ways, depth32float's depth out).
    for (format, aspect, ok) in [
        (TextureFormat::Depth32Float, TextureAspect::All, true),
        (TextureFormat::Depth24Plus, TextureAspect::All, false),
        (
            TextureFormat::Depth24PlusStencil8,
            TextureAspect::All,
            false,
        ),
        (
            TextureFormat::Depth24PlusStencil8,
            TextureAspect::StencilOnly,
            true,
        ),
        (
            TextureFormat::Depth24PlusStencil8,
            TextureAspect::DepthOnly,
            false,
        ),
        (
            TextureFormat::Depth32FloatStencil8,
            TextureAspect::DepthOnly,
            true,
        ),
        (
            TextureFormat::Depth32FloatStencil8,
            TextureAspect::StencilOnly,
            true,
        ),
    ] {
        let t = texture(format);
        let mut encoder = device.create_command_encoder();
        encoder.copy_texture_to_buffer_region(
            &TexelCopyTextureInfo {
                aspect,
                ..TexelCopyTextureInfo::whole(&t)
            },
            &buffer,
            TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(256),
                rows_per_image: None,
            },
            Extent3d {
                width: 4,
                height: 4,
                depth_or_array_layers: 1,
            },
        );
        assert_eq!(encoder.finish().is_ok(), ok, "{format:?} {aspect:?}");
    }
}
