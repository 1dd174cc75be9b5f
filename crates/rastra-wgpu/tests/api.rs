//! wgpu API semantics on rastra: the adapter's honesty, WebGPU's error model (scopes,
//! invalid objects, no panics), buffer mapping (callbacks exactly once, mapped at creation,
//! write mappings, misuse), poll, the device-lost callback from the shader watchdog, and
//! rastra's report reachable from wgpu code.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{map_and_read, rastra_device, validation_error};
use wgpu::util::DeviceExt;

#[test]
fn the_adapter_advertises_only_what_rastra_does() {
    let instance = rastra_wgpu::instance();
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).unwrap();
    let info = adapter.get_info();
    assert_eq!(info.device_type, wgpu::DeviceType::Cpu);
    let features = adapter.features();
    assert!(features.contains(wgpu::Features::TEXTURE_COMPRESSION_BC));
    assert!(features.contains(wgpu::Features::INDIRECT_FIRST_INSTANCE));
    assert!(features.contains(wgpu::Features::PIPELINE_STATISTICS_QUERY));
    for missing in [
        wgpu::Features::TIMESTAMP_QUERY,
        wgpu::Features::IMMEDIATES,
        wgpu::Features::CLEAR_TEXTURE,
    ] {
        assert!(!features.contains(missing), "{missing:?} is advertised");
    }
    // Storage binding for WebGPU's storage formats (read-write only for r32 ones, no
    // atomics); rendering only where rastra's output merger writes the format.
    use wgpu::TextureFormatFeatureFlags as Flags;
    let f = adapter.get_texture_format_features(wgpu::TextureFormat::Rgba8Unorm);
    assert!(
        f.allowed_usages
            .contains(wgpu::TextureUsages::STORAGE_BINDING)
    );
    assert!(!f.flags.contains(Flags::STORAGE_READ_WRITE));
    let r32 = adapter.get_texture_format_features(wgpu::TextureFormat::R32Uint);
    assert!(r32.flags.contains(Flags::STORAGE_READ_WRITE));
    assert!(!r32.flags.contains(Flags::STORAGE_ATOMIC));
    let srgb = adapter.get_texture_format_features(wgpu::TextureFormat::Rgba8UnormSrgb);
    assert!(
        !srgb
            .allowed_usages
            .contains(wgpu::TextureUsages::STORAGE_BINDING)
    );
    assert!(
        f.allowed_usages
            .contains(wgpu::TextureUsages::RENDER_ATTACHMENT)
    );
    let r64 = adapter.get_texture_format_features(wgpu::TextureFormat::R64Uint);
    assert!(r64.allowed_usages.is_empty());
    // Asking for a feature rastra lacks fails the request, with the reason.
    let Err(err) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: wgpu::Features::TIMESTAMP_QUERY,
        ..Default::default()
    })) else {
        panic!("a device with TIMESTAMP_QUERY was granted");
    };
    assert!(err.to_string().contains("TIMESTAMP_QUERY"), "{err}");
}

#[test]
fn misuse_is_a_validation_error_in_the_innermost_scope() {
    let (device, queue) = rastra_device();
    // A shader that does not compile: the error names line and column, and the module's
    // compilation info has the location.
    let (module, e) = validation_error(&device, || {
        device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("broken"),
            source: wgpu::ShaderSource::Wgsl(
                "@vertex fn vs() -> @builtin(position) vec4<f32> {\n  return vec4(1.0) +;\n}"
                    .into(),
            ),
        })
    });
    let e = e.expect("a compile error");
    assert!(e.to_string().contains("broken"), "{e}");
    let info = pollster::block_on(module.get_compilation_info());
    assert_eq!(info.messages.len(), 1);
    assert_eq!(info.messages[0].location.map(|l| l.line_number), Some(2));

    // Nested scopes: the inner Validation scope takes the error, the outer sees nothing.
    let outer = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let inner = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bad usage"),
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::VERTEX,
        mapped_at_creation: false,
    });
    assert!(pollster::block_on(inner.pop()).is_some());
    assert!(pollster::block_on(outer.pop()).is_none());

    // Using the invalid buffer is reported again, at submission of the encoder's work.
    let (_, e) = validation_error(&device, || {
        let target = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 16,
            usage: wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&buffer, 0, &target, 0, 16);
        queue.submit([encoder.finish()]);
    });
    assert!(e.expect("an error").to_string().contains("invalid"));

    // An out-of-memory scope does not catch validation errors; they reach the handler.
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    device.on_uncaptured_error(Arc::new(move |e| sink.lock().unwrap().push(e.to_string())));
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    queue.write_buffer(&buffer, 0, &[0; 4]);
    assert!(pollster::block_on(oom.pop()).is_none());
    assert_eq!(seen.lock().unwrap().len(), 1, "{:?}", seen.lock().unwrap());
}

#[test]
fn sampling_the_level_a_pass_renders_into_is_rejected() {
    let (device, queue) = rastra_device();
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("chain"),
        size: wgpu::Extent3d {
            width: 8,
            height: 8,
            depth_or_array_layers: 1,
        },
        mip_level_count: 2,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
        view_formats: &[],
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(
            r#"
@group(0) @binding(0) var t: texture_2d<f32>;
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return vec4(f32(i & 1u) * 4.0 - 1.0, f32(i & 2u) * 2.0 - 1.0, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return textureLoad(t, vec2(0), 0); }
"#
            .into(),
        ),
    });
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: None,
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: None,
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: None,
            compilation_options: Default::default(),
            targets: &[Some(wgpu::TextureFormat::Rgba8Unorm.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let level0 = texture.create_view(&wgpu::TextureViewDescriptor {
        mip_level_count: Some(1),
        ..Default::default()
    });
    let whole = texture.create_view(&Default::default());
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::TextureView(&whole),
        }],
    });
    let (_, e) = validation_error(&device, || {
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &level0,
                    depth_slice: None,
                    resolve_target: None,
                    ops: Default::default(),
                })],
                ..Default::default()
            });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.draw(0..3, 0..1);
        }
        queue.submit([encoder.finish()]);
    });
    let e = e
        .expect("sampling the attached level is an error")
        .to_string();
    assert!(e.contains("renders into"), "{e}");
}

#[test]
fn mapping_follows_webgpu() {
    let (device, queue) = rastra_device();
    // Mapped at creation: writes land at unmap.
    let data = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("init"),
        contents: &[1, 2, 3, 4, 5, 6, 7, 8],
        usage: wgpu::BufferUsages::COPY_SRC,
    });
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read"),
        size: 8,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(&data, 0, &read, 0, 8);
    queue.submit([encoder.finish()]);

    // The callback runs exactly once, at poll, never inside map_async.
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    read.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        r.unwrap();
        c.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    device.poll(wgpu::PollType::Poll).unwrap();
    device.poll(wgpu::PollType::Poll).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        &*read.slice(..).get_mapped_range().unwrap(),
        &[1, 2, 3, 4, 5, 6, 7, 8]
    );

    // A mapped buffer cannot be used by a submission.
    let (_, e) = validation_error(&device, || {
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&data, 0, &read, 0, 8);
        queue.submit([encoder.finish()]);
    });
    assert!(e.expect("an error").to_string().contains("mapped"));
    read.unmap();

    // A write mapping reaches the buffer at unmap.
    let upload = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("upload"),
        size: 8,
        usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    upload
        .slice(..)
        .map_async(wgpu::MapMode::Write, |r| r.unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    upload
        .slice(..)
        .get_mapped_range_mut()
        .unwrap()
        .copy_from_slice(&[9, 9, 9, 9, 8, 8, 8, 8]);
    upload.unmap();
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(&upload, 0, &read, 0, 8);
    queue.submit([encoder.finish()]);
    assert_eq!(map_and_read(&device, &read), [9, 9, 9, 9, 8, 8, 8, 8]);

    // Unmapping before the map completes aborts it: the callback sees an error.
    let result = Arc::new(Mutex::new(None));
    let r = result.clone();
    read.slice(..).map_async(wgpu::MapMode::Read, move |x| {
        *r.lock().unwrap() = Some(x.is_ok())
    });
    read.unmap();
    device.poll(wgpu::PollType::Poll).unwrap();
    assert_eq!(*result.lock().unwrap(), Some(false));

    // Mapping for the wrong mode is a validation error and a failed callback.
    let (ok, e) = validation_error(&device, || {
        let ok = Arc::new(Mutex::new(None));
        let o = ok.clone();
        read.slice(..).map_async(wgpu::MapMode::Write, move |x| {
            *o.lock().unwrap() = Some(x.is_ok())
        });
        device.poll(wgpu::PollType::Poll).unwrap();
        *ok.lock().unwrap()
    });
    assert_eq!(ok, Some(false));
    assert!(e.is_some());
}

#[test]
fn a_runaway_shader_loses_the_device_once() {
    let instance = rastra_wgpu::instance_with(rastra::DeviceDescriptor {
        shader_instruction_budget: 1 << 20,
        ..Default::default()
    });
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).unwrap();
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default())).unwrap();
    let lost = Arc::new(Mutex::new(Vec::new()));
    let l = lost.clone();
    device
        .set_device_lost_callback(move |reason, message| l.lock().unwrap().push((reason, message)));
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(
            r#"
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64) fn spin(@builtin(global_invocation_id) id: vec3<u32>) {
    var x = id.x;
    loop {
        x = x * 1664525u + 1013904223u;
        if (x == 7u) { break; }
    }
    out[id.x] = x;
}
"#
            .into(),
        ),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: None,
        compilation_options: Default::default(),
        cache: None,
    });
    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: out.as_entire_binding(),
        }],
    });
    for _ in 0..2 {
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        queue.submit([encoder.finish()]);
    }
    let lost = lost.lock().unwrap();
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0].0, wgpu::DeviceLostReason::Unknown);
    assert!(
        lost[0].1.contains("budget") || lost[0].1.contains("instruction"),
        "{}",
        lost[0].1
    );
}

#[test]
fn the_report_of_the_last_submission_is_reachable() {
    let (device, queue) = rastra_device();
    assert!(rastra_wgpu::last_report(&device).is_none());
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64,
        usage: wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.clear_buffer(&buffer, 0, None);
    queue.submit([encoder.finish()]);
    assert!(rastra_wgpu::last_report(&device).is_some());
}

/// Samples an indirect draw of a full-screen triangle covers on an 8×8 target, counted by
/// an occlusion query; `first_instance` is the argument the draw reads.
fn indirect_samples(device: &wgpu::Device, queue: &wgpu::Queue, first_instance: u32) -> u64 {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(
            r#"
            @vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
                return vec4(f32(i & 1u) * 4.0 - 1.0, f32(i >> 1u) * 4.0 - 1.0, 0.5, 1.0);
            }
            @fragment fn fs() -> @location(0) vec4<f32> { return vec4(1.0); }
            "#
            .into(),
        ),
    });
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: None,
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: None,
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: None,
            compilation_options: Default::default(),
            targets: &[Some(wgpu::TextureFormat::Rgba8Unorm.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let target = common::render_target(device, 8, 8, wgpu::TextureFormat::Rgba8Unorm, 1);
    let view = target.create_view(&Default::default());
    let args = wgpu::util::DrawIndirectArgs {
        vertex_count: 3,
        instance_count: 1,
        first_vertex: 0,
        first_instance,
    };
    let args = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("args"),
        contents: args.as_bytes(),
        usage: wgpu::BufferUsages::INDIRECT,
    });
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::Occlusion,
        count: 1,
    });
    let resolved = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 8,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: Default::default(),
            })],
            occlusion_query_set: Some(&queries),
            ..Default::default()
        });
        pass.set_pipeline(&pipeline);
        pass.begin_occlusion_query(0);
        pass.draw_indirect(&args, 0);
        pass.end_occlusion_query();
    }
    encoder.resolve_query_set(&queries, 0..1, &resolved, 0);
    queue.submit([encoder.finish()]);
    let bytes = common::read_buffer(device, queue, &resolved);
    u64::from_le_bytes(bytes[..8].try_into().unwrap())
}

#[test]
fn first_instance_of_indirect_draws_needs_the_feature() {
    let (device, queue) = rastra_device();
    assert!(
        device
            .features()
            .contains(wgpu::Features::INDIRECT_FIRST_INSTANCE)
    );
    assert_eq!(indirect_samples(&device, &queue, 0), 64);
    assert_eq!(indirect_samples(&device, &queue, 1), 64);
    // Without the feature, WebGPU skips an indirect draw whose first instance is not 0.
    let instance = rastra_wgpu::instance();
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).unwrap();
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default())).unwrap();
    assert_eq!(indirect_samples(&device, &queue, 0), 64);
    assert_eq!(indirect_samples(&device, &queue, 1), 0);
    // Misuse of queries and indirect buffers is reported by finish.
    let (_, error) = validation_error(&device, || {
        let mut encoder = device.create_command_encoder(&Default::default());
        let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: None,
            ty: wgpu::QueryType::Occlusion,
            count: 2,
        });
        let target = common::render_target(&device, 8, 8, wgpu::TextureFormat::Rgba8Unorm, 1);
        let view = target.create_view(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: Default::default(),
                })],
                occlusion_query_set: Some(&queries),
                ..Default::default()
            });
            pass.begin_occlusion_query(0);
        }
        encoder.finish()
    });
    let error = error.expect("an open query is an error").to_string();
    assert!(error.contains("occlusion query 0 was active"), "{error}");
}

#[test]
fn destroyed_textures_are_refused_at_submission() {
    let (device, queue) = rastra_device();
    let texture = |label| {
        device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d {
                width: 4,
                height: 4,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        })
    };
    // Recorded while alive, destroyed before submission: a render target and a copy source.
    let target = texture("target");
    let view = target.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: &view,
            depth_slice: None,
            resolve_target: None,
            ops: Default::default(),
        })],
        ..Default::default()
    });
    let rendered = encoder.finish();
    let source = texture("source");
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256 * 4,
        usage: wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        source.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &staging,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(256),
                rows_per_image: None,
            },
        },
        source.size(),
    );
    let copied = encoder.finish();
    target.destroy();
    source.destroy();
    for (cb, label) in [(rendered, "target"), (copied, "source")] {
        let (_, error) = validation_error(&device, || queue.submit([cb]));
        let error = error.expect("a destroyed texture is refused").to_string();
        assert!(
            error.contains(&format!("texture '{label}' was destroyed")),
            "{error}"
        );
    }
}

#[test]
fn bind_group_layouts_must_match_the_pipeline_layout() {
    let (device, _queue) = rastra_device();
    let uniform = |binding| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let layout = |entries: &[wgpu::BindGroupLayoutEntry]| {
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: None,
            entries,
        })
    };
    let one = layout(&[uniform(0)]);
    let same = layout(&[uniform(0)]);
    let two = layout(&[uniform(0), uniform(1)]);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 16,
        usage: wgpu::BufferUsages::UNIFORM,
        mapped_at_creation: false,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(
            "@group(0) @binding(0) var<uniform> u: vec4<f32>;
             @compute @workgroup_size(1) fn main() { _ = u; }"
                .into(),
        ),
    });
    let pipeline = |l: &wgpu::BindGroupLayout| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: Some(
                &device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: None,
                    bind_group_layouts: &[Some(l)],
                    immediate_size: 0,
                }),
            ),
            module: &module,
            entry_point: None,
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &one,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: buffer.as_entire_binding(),
        }],
    });
    let dispatch = |p: &wgpu::ComputePipeline| {
        validation_error(&device, || {
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(p);
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
            encoder.finish()
        })
        .1
    };
    // A layout with the same entries is compatible; one with other entries is not, even
    // though the shader only uses what the group has.
    assert!(dispatch(&pipeline(&one)).is_none());
    assert!(dispatch(&pipeline(&same)).is_none());
    let error = dispatch(&pipeline(&two))
        .expect("incompatible layouts")
        .to_string();
    assert!(
        error.contains("does not match the pipeline's layout"),
        "{error}"
    );
}

#[test]
fn pipeline_statistics_queries_sum_the_work_between_begin_and_end() {
    let (device, queue) = rastra_device();
    let set = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::PipelineStatistics(wgpu::PipelineStatisticsTypes::all()),
        count: 2,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(
            r#"
            @vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
                // Two triangles covering the left half of the target.
                let p = array(vec2(-1.0, -1.0), vec2(0.0, -1.0), vec2(0.0, 1.0),
                              vec2(-1.0, -1.0), vec2(0.0, 1.0), vec2(-1.0, 1.0));
                return vec4(p[i], 0.5, 1.0);
            }
            @fragment fn fs() -> @location(0) vec4<f32> { return vec4(1.0); }
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64) fn cs(@builtin(global_invocation_id) id: vec3<u32>) {
                out[id.x] = id.x;
            }
            "#
            .into(),
        ),
    });
    let render = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: None,
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::TextureFormat::Rgba8Unorm.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let compute = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("cs"),
        compilation_options: Default::default(),
        cache: None,
    });
    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 4 * 128,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &compute.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: out.as_entire_binding(),
        }],
    });
    let target = common::render_target(&device, 16, 16, wgpu::TextureFormat::Rgba8Unorm, 1);
    let view = target.create_view(&Default::default());
    let resolved = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 2 * 5 * 8,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: Default::default(),
            })],
            ..Default::default()
        });
        pass.set_pipeline(&render);
        pass.begin_pipeline_statistics_query(&set, 0);
        pass.draw(0..6, 0..2);
        pass.end_pipeline_statistics_query();
        pass.draw(0..6, 0..1); // outside the query
    }
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&compute);
        pass.set_bind_group(0, &group, &[]);
        pass.begin_pipeline_statistics_query(&set, 1);
        pass.dispatch_workgroups(2, 1, 1);
        pass.end_pipeline_statistics_query();
    }
    encoder.resolve_query_set(&set, 0..2, &resolved, 0);
    queue.submit([encoder.finish()]);
    let bytes = common::read_buffer(&device, &queue, &resolved);
    let values: Vec<u64> = bytemuck::cast_slice(&bytes).to_vec();
    // Per query, in bit order: vertex invocations, clipper in, clipper out, fragment
    // invocations, compute invocations. Two instances of two triangles over 8×16 pixels.
    assert_eq!(&values[..5], &[12, 4, 4, 256, 0]);
    assert_eq!(&values[5..], &[0, 0, 0, 0, 128]);
}

#[test]
fn out_of_range_pass_arguments_are_errors_not_crashes() {
    let (device, _queue) = rastra_device();
    let target = common::render_target(&device, 8, 8, wgpu::TextureFormat::Rgba8Unorm, 1);
    let view = target.create_view(&Default::default());
    let args = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64,
        usage: wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::UNIFORM,
        mapped_at_creation: false,
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[],
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[],
    });
    let record = |f: &dyn Fn(&mut wgpu::RenderPass<'_>)| {
        let (_, error) = validation_error(&device, || {
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &view,
                        depth_slice: None,
                        resolve_target: None,
                        ops: Default::default(),
                    })],
                    ..Default::default()
                });
                f(&mut pass);
            }
            encoder.finish()
        });
        error.expect("an error").to_string()
    };
    // Four billion draws of arguments that cannot fit: refused before anything is recorded.
    let e = record(&|p| p.multi_draw_indirect(&args, 0, u32::MAX));
    assert!(e.contains("do not fit"), "{e}");
    let e = record(&|p| p.multi_draw_indexed_indirect(&args, u64::MAX - 4, 2));
    assert!(e.contains("do not fit"), "{e}");
    let e = record(&|p| p.set_bind_group(u32::MAX, &group, &[]));
    assert!(e.contains("the limit is 4"), "{e}");
}
