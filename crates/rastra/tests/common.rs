//! Shared helpers for the API tests.
#![allow(dead_code)]

use rastra::*;

pub fn device() -> (Device, Queue) {
    Device::new(&DeviceDescriptor::default())
}

pub fn module(device: &Device, wgsl: &str) -> Result<ShaderModule, Error> {
    device.create_shader_module(&ShaderModuleDescriptor {
        label: None,
        source: ShaderSource::Wgsl(wgsl),
    })
}

pub fn target(device: &Device, w: u32, h: u32, format: TextureFormat, samples: u32) -> Texture {
    let mut usage = TextureUsages::RENDER_ATTACHMENT;
    if samples == 1 {
        usage = usage | TextureUsages::COPY_SRC;
    }
    device
        .create_texture(&TextureDescriptor {
            label: None,
            size: Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: samples,
            dimension: rastra::TextureDimension::D2,
            format,
            usage,
        })
        .unwrap()
}

pub fn color_target(format: TextureFormat) -> ColorTargetState {
    ColorTargetState {
        format,
        blend: None,
        write_mask: ColorWrites::ALL,
    }
}

pub fn pipeline(
    device: &Device,
    module: &ShaderModule,
    buffers: &[VertexBufferLayout],
    format: TextureFormat,
) -> Result<RenderPipeline, Error> {
    device.create_render_pipeline(&RenderPipelineDescriptor {
        label: None,
        vertex: VertexState {
            module,
            entry_point: None,
            buffers,
            constants: &[],
        },
        primitive: PrimitiveState::default(),
        depth_stencil: None,
        multisample: MultisampleState::default(),
        fragment: Some(FragmentState {
            module,
            entry_point: None,
            targets: &[Some(color_target(format))],
            constants: &[],
        }),
    })
}

pub fn clear_pass<'a>(view: &'a TextureView) -> [Option<RenderPassColorAttachment<'a>>; 1] {
    clear_pass_to(view, Color::BLACK)
}

/// One colour attachment cleared to `color` and stored.
pub fn clear_pass_to<'a>(
    view: &'a TextureView,
    color: Color,
) -> [Option<RenderPassColorAttachment<'a>>; 1] {
    [Some(RenderPassColorAttachment {
        view,
        resolve_target: None,
        ops: Operations {
            load: LoadOp::Clear(color),
            store: StoreOp::Store,
        },
    })]
}

/// Vertices of a clip-space position (`vec4`, location 0) and a colour (`vec4`, location 1).
pub fn position_color_layout() -> VertexBufferLayout {
    let attribute = |location: u32| VertexAttribute {
        format: VertexFormat::Float32x4,
        offset: 16 * location as u64,
        shader_location: location,
    };
    VertexBufferLayout {
        array_stride: 32,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![attribute(0), attribute(1)],
    }
}
