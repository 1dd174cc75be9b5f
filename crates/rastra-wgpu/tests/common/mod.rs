//! The harness of the wgpu program suite: opens a wgpu device on rastra (through
//! `rastra_wgpu::instance()`) and one on lavapipe (wgpu's Vulkan backend), runs the same
//! program on both, and compares what comes back. The programs themselves are plain wgpu
//! code, written the way applications write it; `read_rgba8` and `read_buffer` are the
//! usual readback helpers (padded rows, `map_async`, `poll`).

#![allow(dead_code)]

use rastra_lavapipe::{Diff, Lavapipe, compare_rgba8};

/// A wgpu device on rastra with every feature rastra's adapter advertises.
pub fn rastra_device() -> (wgpu::Device, wgpu::Queue) {
    let instance = rastra_wgpu::instance();
    let adapter =
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .expect("rastra's adapter");
    assert_eq!(adapter.get_info().name, "rastra");
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("rastra-wgpu test"),
        required_features: adapter.features(),
        ..Default::default()
    }))
    .expect("a rastra device")
}

/// Runs `program` on rastra and, when lavapipe is installed, on lavapipe; returns both
/// results (lavapipe's None when it is missing, saying so).
pub fn on_both<T>(
    name: &str,
    program: impl Fn(&wgpu::Device, &wgpu::Queue) -> T,
) -> (T, Option<T>) {
    let (device, queue) = rastra_device();
    let on_rastra = program(&device, &queue);
    let on_lavapipe = match Lavapipe::new() {
        Ok(l) => {
            let (d, q) = l.wgpu();
            Some(program(d, q))
        }
        Err(why) => {
            eprintln!("{name}: lavapipe comparison skipped: {why}");
            None
        }
    };
    (on_rastra, on_lavapipe)
}

/// Compares two RGBA8 images of `width` columns; panics (saying where) when more than
/// `max_differing` pixels differ or any channel by more than `max_channel`.
pub fn assert_close(
    name: &str,
    rastra: &[u8],
    lavapipe: &[u8],
    width: u32,
    max_channel: u8,
    max_differing: usize,
) -> Diff {
    let d = compare_rgba8(rastra, lavapipe, width);
    eprintln!("{name}: rastra vs lavapipe: {d}");
    assert!(
        d.max_channel_diff <= max_channel && d.differing_pixels <= max_differing,
        "{name}: rastra and lavapipe differ beyond tolerance (max channel {max_channel}, \
         {max_differing} pixels): {d}"
    );
    d
}

/// Reads back a buffer through a MAP_READ staging copy.
pub fn read_buffer(device: &wgpu::Device, queue: &wgpu::Queue, buffer: &wgpu::Buffer) -> Vec<u8> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    queue.submit([encoder.finish()]);
    map_and_read(device, &staging)
}

/// Maps a MAP_READ buffer, waits, and copies its contents out.
pub fn map_and_read(device: &wgpu::Device, buffer: &wgpu::Buffer) -> Vec<u8> {
    let slice = buffer.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| tx.send(r).unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    rx.recv().unwrap().expect("map_async succeeded");
    let out = slice.get_mapped_range().expect("mapped").to_vec();
    buffer.unmap();
    out
}

/// Reads mip 0 of a 2D RGBA8 texture as tightly packed rows.
pub fn read_rgba8(device: &wgpu::Device, queue: &wgpu::Queue, texture: &wgpu::Texture) -> Vec<u8> {
    let (w, h) = (texture.width(), texture.height());
    let padded =
        (w * 4).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("texture readback"),
        size: (padded * h) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: None,
            },
        },
        texture.size(),
    );
    queue.submit([encoder.finish()]);
    let bytes = map_and_read(device, &buffer);
    bytes
        .chunks(padded as usize)
        .flat_map(|row| &row[..(w * 4) as usize])
        .copied()
        .collect()
}

/// A 2D render target with COPY_SRC usage.
pub fn render_target(
    device: &wgpu::Device,
    w: u32,
    h: u32,
    format: wgpu::TextureFormat,
    samples: u32,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some("target"),
        size: wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: samples,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: if samples == 1 {
            wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::TEXTURE_BINDING
        } else {
            wgpu::TextureUsages::RENDER_ATTACHMENT
        },
        view_formats: &[],
    })
}

/// Runs `f` inside a validation error scope and returns the error it produced, if any.
pub fn validation_error<T>(
    device: &wgpu::Device,
    f: impl FnOnce() -> T,
) -> (T, Option<wgpu::Error>) {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    let error = pollster::block_on(scope.pop());
    (value, error)
}

/// The colour format of the suite's render targets.
pub const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// A WGSL shader module.
pub fn shader(device: &wgpu::Device, source: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

/// A render pipeline with an automatic layout and the usual defaults.
pub fn pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    buffers: &[Option<wgpu::VertexBufferLayout<'_>>],
    targets: &[Option<wgpu::ColorTargetState>],
    depth: Option<wgpu::DepthStencilState>,
    samples: u32,
) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: None,
        layout: None,
        vertex: wgpu::VertexState {
            module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers,
        },
        primitive: wgpu::PrimitiveState {
            cull_mode: Some(wgpu::Face::Back),
            ..Default::default()
        },
        depth_stencil: depth,
        multisample: wgpu::MultisampleState {
            count: samples,
            ..Default::default()
        },
        fragment: if targets.is_empty() {
            None
        } else {
            Some(wgpu::FragmentState {
                module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets,
            })
        },
        multiview_mask: None,
        cache: None,
    })
}

/// A colour attachment cleared to `clear` and stored, resolved into `resolve` if given.
pub fn color_pass<'a>(
    view: &'a wgpu::TextureView,
    resolve: Option<&'a wgpu::TextureView>,
    clear: wgpu::Color,
) -> wgpu::RenderPassColorAttachment<'a> {
    wgpu::RenderPassColorAttachment {
        view,
        depth_slice: None,
        resolve_target: resolve,
        ops: wgpu::Operations {
            load: wgpu::LoadOp::Clear(clear),
            store: wgpu::StoreOp::Store,
        },
    }
}

/// A `w`×`h` Depth32Float attachment with the extra `usage`.
pub fn depth_texture(
    device: &wgpu::Device,
    w: u32,
    h: u32,
    usage: wgpu::TextureUsages,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some("depth"),
        size: wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Depth32Float,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | usage,
        view_formats: &[],
    })
}
