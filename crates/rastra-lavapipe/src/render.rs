//! A [`Frame`] executed on a wgpu device: the same resources, pipelines and render pass as
//! [`Frame::render`] builds on rastra, then a copy of the resolved colour target to a
//! buffer with 256-byte rows, mapped and repacked into tightly packed rows.
//!
//! Invariant: each run records the whole render pass (clear included), so every run
//! produces the same image and the last one is returned.

use std::collections::HashMap;
use std::time::Instant;

use rastra::IndexFormat;
use rastra_scene::{DrawKind, Frame, Resource, TextureData};
use wgpu::util::DeviceExt;

use crate::WgpuRendered;
use crate::convert;

/// Which wgpu pipeline a draw needs: its recipe, and for indexed strips the index format
/// (a wgpu pipeline fixes the strip's primitive-restart value).
type PipelineKey = (usize, Option<IndexFormat>);

/// Renders `frame` `runs` times (at least once); see [`crate::Lavapipe::render`].
pub fn render(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    frame: &Frame,
    runs: usize,
) -> Result<WgpuRendered, String> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let resources = Resources::new(device, queue, frame);
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(format!("creating resources: {e}"));
    }

    let mut times_ms = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let commands = resources.encode_pass(device, frame);
        let start = Instant::now();
        queue.submit([commands]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| format!("waiting for the render pass: {e}"))?;
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(format!("render pass: {e}"));
        }
    }

    let pixels = read_back(device, queue, frame, &resources.resolved)?;
    Ok(WgpuRendered { pixels, times_ms })
}

/// Everything a frame's render pass uses, created once for all runs.
struct Resources {
    buffers: Vec<wgpu::Buffer>,
    pipelines: HashMap<PipelineKey, wgpu::RenderPipeline>,
    /// One per draw (None when the draw binds nothing).
    bind_groups: Vec<Option<wgpu::BindGroup>>,
    /// The single-sampled colour target the image is read from.
    resolved: wgpu::Texture,
    resolved_view: wgpu::TextureView,
    msaa_view: Option<wgpu::TextureView>,
    depth_view: Option<wgpu::TextureView>,
}

/// Creates a frame texture, uploads every level, and makes its view.
fn create_texture(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    t: &TextureData,
) -> wgpu::TextureView {
    let format = convert::texture_format(t.format);
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some(&t.label),
        size: wgpu::Extent3d {
            width: t.size[0],
            height: t.size[1],
            depth_or_array_layers: t.size[2],
        },
        mip_level_count: t.levels.len().max(1) as u32,
        sample_count: 1,
        dimension: convert::texture_dimension(t.dimension),
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &t
            .view
            .format
            .map(convert::texture_format)
            .into_iter()
            .collect::<Vec<_>>(),
    });
    let (bw, bh) = t.format.block_dims();
    for (level, data) in t.levels.iter().enumerate() {
        let size = texture
            .size()
            .mip_level_size(level as u32, texture.dimension())
            .physical_size(format);
        queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &texture,
                mip_level: level as u32,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            data,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(size.width / bw * t.format.block_size() as u32),
                rows_per_image: Some(size.height / bh),
            },
            size,
        );
    }
    texture.create_view(&convert::texture_view(&t.view))
}

/// The wgpu pipeline key of a draw.
fn pipeline_key(frame: &Frame, draw: &rastra_scene::DrawRecipe) -> PipelineKey {
    let strip = convert::is_strip(frame.pipelines[draw.pipeline].primitive.topology);
    let strip_index = match (&draw.kind, draw.index_buffer) {
        (DrawKind::Indexed { .. }, Some((_, format))) if strip => Some(format),
        _ => None,
    };
    (draw.pipeline, strip_index)
}

impl Resources {
    fn new(device: &wgpu::Device, queue: &wgpu::Queue, frame: &Frame) -> Resources {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&frame.name),
            source: wgpu::ShaderSource::Wgsl(frame.shader.as_str().into()),
        });
        let buffers = frame
            .buffers
            .iter()
            .map(|b| {
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(&b.label),
                    contents: &b.data,
                    usage: convert::buffer_usages(b.usage),
                })
            })
            .collect::<Vec<_>>();

        let textures: Vec<wgpu::TextureView> = frame
            .textures
            .iter()
            .map(|t| create_texture(device, queue, t))
            .collect();
        let samplers: Vec<wgpu::Sampler> = frame
            .samplers
            .iter()
            .map(|s| device.create_sampler(&convert::sampler(s)))
            .collect();

        let mut pipelines = HashMap::new();
        for draw in &frame.draws {
            let key = pipeline_key(frame, draw);
            pipelines
                .entry(key)
                .or_insert_with(|| create_pipeline(device, &module, frame, key));
        }

        let bind_groups = frame
            .draws
            .iter()
            .map(|d| {
                if d.bindings.is_empty() {
                    return None;
                }
                let layout = pipelines[&pipeline_key(frame, d)].get_bind_group_layout(0);
                let entries: Vec<wgpu::BindGroupEntry<'_>> = d
                    .bindings
                    .iter()
                    .map(|&(binding, r)| wgpu::BindGroupEntry {
                        binding,
                        resource: match r {
                            Resource::Buffer(b) => buffers[b].as_entire_binding(),
                            Resource::Texture(t) => {
                                wgpu::BindingResource::TextureView(&textures[t])
                            }
                            Resource::Sampler(s) => wgpu::BindingResource::Sampler(&samplers[s]),
                        },
                    })
                    .collect();
                Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &layout,
                    entries: &entries,
                }))
            })
            .collect();

        let texture = |format, samples, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: None,
                size: extent(frame),
                mip_level_count: 1,
                sample_count: samples,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let color_format = convert::texture_format(frame.color_format);
        let attach = wgpu::TextureUsages::RENDER_ATTACHMENT;
        let resolved = texture(color_format, 1, attach | wgpu::TextureUsages::COPY_SRC);
        let msaa = (frame.samples > 1).then(|| texture(color_format, frame.samples, attach));
        let depth = frame
            .depth_format
            .map(|f| texture(convert::texture_format(f), frame.samples, attach));
        let view = |t: &wgpu::Texture| t.create_view(&wgpu::TextureViewDescriptor::default());
        Resources {
            buffers,
            pipelines,
            bind_groups,
            resolved_view: view(&resolved),
            resolved,
            msaa_view: msaa.as_ref().map(view),
            depth_view: depth.as_ref().map(view),
        }
    }

    /// Records one run: the render pass with every draw of the frame.
    fn encode_pass(&self, device: &wgpu::Device, frame: &Frame) -> wgpu::CommandBuffer {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        {
            let (view, resolve_target) = match &self.msaa_view {
                Some(v) => (v, Some(&self.resolved_view)),
                None => (&self.resolved_view, None),
            };
            let has_stencil = frame.depth_format.is_some_and(|f| f.has_stencil());
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some(&frame.name),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(convert::color(frame.clear_color)),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: self.depth_view.as_ref().map(|v| {
                    wgpu::RenderPassDepthStencilAttachment {
                        view: v,
                        depth_ops: Some(wgpu::Operations {
                            load: wgpu::LoadOp::Clear(frame.clear_depth),
                            store: wgpu::StoreOp::Store,
                        }),
                        stencil_ops: has_stencil.then_some(wgpu::Operations {
                            load: wgpu::LoadOp::Clear(0),
                            store: wgpu::StoreOp::Store,
                        }),
                    }
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_blend_constant(convert::color(frame.blend_constant));
            for (d, group) in frame.draws.iter().zip(&self.bind_groups) {
                pass.set_pipeline(&self.pipelines[&pipeline_key(frame, d)]);
                if let Some(g) = group {
                    pass.set_bind_group(0, g, &[]);
                }
                for (slot, &b) in d.vertex_buffers.iter().enumerate() {
                    pass.set_vertex_buffer(slot as u32, self.buffers[b].slice(..));
                }
                if let Some((b, format)) = d.index_buffer {
                    pass.set_index_buffer(self.buffers[b].slice(..), convert::index_format(format));
                }
                match &d.kind {
                    DrawKind::Vertices(v) => pass.draw(v.clone(), d.instances.clone()),
                    DrawKind::Indexed {
                        indices,
                        base_vertex,
                    } => pass.draw_indexed(indices.clone(), *base_vertex, d.instances.clone()),
                }
            }
        }
        encoder.finish()
    }
}

fn extent(frame: &Frame) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width: frame.width,
        height: frame.height,
        depth_or_array_layers: 1,
    }
}

/// The wgpu render pipeline for one recipe (and strip index format).
fn create_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    frame: &Frame,
    (recipe, strip_index): PipelineKey,
) -> wgpu::RenderPipeline {
    let p = &frame.pipelines[recipe];
    let attributes: Vec<Vec<wgpu::VertexAttribute>> = p
        .vertex_buffers
        .iter()
        .map(|l| l.attributes.iter().map(convert::vertex_attribute).collect())
        .collect();
    let layouts: Vec<Option<wgpu::VertexBufferLayout<'_>>> = p
        .vertex_buffers
        .iter()
        .zip(&attributes)
        .map(|(l, attributes)| {
            Some(wgpu::VertexBufferLayout {
                array_stride: l.array_stride,
                step_mode: convert::step_mode(l.step_mode),
                attributes,
            })
        })
        .collect();
    // wgpu requires a pipeline drawn into a pass with a depth attachment to name its format;
    // a recipe without a depth test then neither tests nor writes.
    let depth_stencil = match (&p.depth, frame.depth_format) {
        (Some(d), _) => Some(convert::depth_stencil_state(d)),
        (None, Some(format)) => Some(wgpu::DepthStencilState {
            format: convert::texture_format(format),
            depth_write_enabled: Some(false),
            depth_compare: Some(wgpu::CompareFunction::Always),
            stencil: wgpu::StencilState::default(),
            bias: wgpu::DepthBiasState::default(),
        }),
        (None, None) => None,
    };
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: None,
        layout: None,
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(&p.vs_entry),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            buffers: &layouts,
        },
        primitive: convert::primitive_state(p.primitive, strip_index),
        depth_stencil,
        multisample: wgpu::MultisampleState {
            count: frame.samples,
            mask: !0,
            alpha_to_coverage_enabled: false,
        },
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some(&p.fs_entry),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format: convert::texture_format(frame.color_format),
                blend: p.blend.map(convert::blend_state),
                write_mask: convert::color_writes(p.write_mask),
            })],
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// Copies `texture` into a buffer (rows padded to 256 bytes), maps it and returns tightly
/// packed rows.
fn read_back(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    frame: &Frame,
    texture: &wgpu::Texture,
) -> Result<Vec<u8>, String> {
    let row = frame.width as usize * frame.color_format.texel_size();
    let padded = row.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as usize);
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: (padded * frame.height as usize) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded as u32),
                rows_per_image: Some(frame.height),
            },
        },
        extent(frame),
    );
    queue.submit([encoder.finish()]);
    let (tx, rx) = std::sync::mpsc::channel();
    buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| format!("waiting for the readback: {e}"))?;
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(format!("readback: {e}"));
    }
    rx.recv()
        .map_err(|_| "readback: map callback never ran".to_string())?
        .map_err(|e| format!("readback: mapping failed: {e}"))?;
    let pixels = {
        let view = buffer
            .slice(..)
            .get_mapped_range()
            .map_err(|e| format!("readback: {e}"))?;
        view.chunks_exact(padded)
            .flat_map(|r| &r[..row])
            .copied()
            .collect()
    };
    buffer.unmap();
    Ok(pixels)
}
