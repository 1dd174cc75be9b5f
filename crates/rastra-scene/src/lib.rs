//! Frame recipes: a frame described as plain data — one WGSL module, buffers, pipelines and
//! draws into one colour target (plus optional depth) — so the same frame can run on rastra
//! ([`Frame::render`]) and on a reference renderer (lavapipe, in `rastra-lavapipe`) and the two
//! can be compared pixel for pixel; [`compute`] does the same for compute jobs. The built-in
//! scene ([`builtin`]) and the benchmark workloads ([`workloads`]) are recipes.

use std::ops::Range;
use std::time::Instant;

use rastra::{
    BlendState, BufferUsages, Color, ColorWrites, DepthStencilState, Device, DeviceDescriptor,
    Error, FrameStats, IndexFormat, PrimitiveState, SamplerDescriptor, TextureDimension,
    TextureFormat, TextureViewDescriptor, VertexBufferLayout,
};

pub mod builtin;
pub mod compute;
pub mod lit;
pub mod math;
pub mod model;
pub mod workloads;

/// A buffer's initial contents and usage.
#[derive(Clone, Debug)]
pub struct BufferData {
    pub label: String,
    pub data: Vec<u8>,
    pub usage: BufferUsages,
}

/// A texture's initial contents and the view draws bind.
#[derive(Clone, Debug)]
pub struct TextureData {
    pub label: String,
    pub format: TextureFormat,
    pub dimension: TextureDimension,
    /// Width, height, depth or layers of mip level 0.
    pub size: [u32; 3],
    /// Every mip level's texels (or blocks) as tightly packed rows, all layers or slices.
    pub levels: Vec<Vec<u8>>,
    /// The view draws bind.
    pub view: TextureViewDescriptor,
}

impl TextureData {
    /// A 2D `Rgba8UnormSrgb` texture from `width × height` RGBA8 texels (rows top to bottom)
    /// with its full mip chain generated in linear space; its default view.
    pub fn srgb_with_mips(
        label: &str,
        width: u32,
        height: u32,
        rgba8: Vec<u8>,
    ) -> Result<TextureData, Error> {
        use rastra::mipmap;
        let format = TextureFormat::Rgba8UnormSrgb;
        let size = [width, height, 1];
        let dimension = TextureDimension::D2;
        let levels = mipmap::full_chain_levels(size, dimension);
        let levels = mipmap::generate(format, size, dimension, levels, rgba8)
            .map_err(|e| Error::Validation(format!("texture {label}: {e}")))?;
        Ok(TextureData {
            label: label.into(),
            format,
            dimension,
            size,
            levels,
            view: TextureViewDescriptor::default(),
        })
    }
}

/// What a binding of a draw holds: an index into the frame's buffers, textures or
/// samplers (buffers are bound whole).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    Buffer(usize),
    Texture(usize),
    Sampler(usize),
}

/// A render pipeline of the frame (all pipelines share the frame's shader module and
/// targets).
#[derive(Clone, Debug)]
pub struct PipelineRecipe {
    pub vs_entry: String,
    pub fs_entry: String,
    pub vertex_buffers: Vec<VertexBufferLayout>,
    pub primitive: PrimitiveState,
    /// Depth test for the frame's depth target (None = no depth testing).
    pub depth: Option<DepthStencilState>,
    pub blend: Option<BlendState>,
    pub write_mask: ColorWrites,
}

/// Which vertices a draw reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DrawKind {
    Vertices(Range<u32>),
    Indexed {
        indices: Range<u32>,
        base_vertex: i32,
    },
}

/// One draw: a pipeline, its bound buffers (indices into `Frame::buffers`) and a range.
#[derive(Clone, Debug)]
pub struct DrawRecipe {
    pub pipeline: usize,
    pub vertex_buffers: Vec<usize>,
    pub index_buffer: Option<(usize, IndexFormat)>,
    /// `@group(0) @binding(b)` → what is bound there.
    pub bindings: Vec<(u32, Resource)>,
    pub kind: DrawKind,
    pub instances: Range<u32>,
}

/// A whole frame: one render pass into a colour target (resolved when multisampled).
#[derive(Clone, Debug)]
pub struct Frame {
    pub name: String,
    pub width: u32,
    pub height: u32,
    /// 1 or 4.
    pub samples: u32,
    pub color_format: TextureFormat,
    pub depth_format: Option<TextureFormat>,
    pub clear_color: Color,
    pub clear_depth: f32,
    /// The blend constant set at the start of the pass.
    pub blend_constant: Color,
    pub shader: String,
    pub buffers: Vec<BufferData>,
    pub textures: Vec<TextureData>,
    pub samplers: Vec<SamplerDescriptor>,
    pub pipelines: Vec<PipelineRecipe>,
    pub draws: Vec<DrawRecipe>,
}

/// A rendered frame: the colour target's bytes (tightly packed rows, in `color_format`).
#[derive(Clone, Debug)]
pub struct Rendered {
    pub pixels: Vec<u8>,
    pub stats: FrameStats,
    /// Wall-clock milliseconds of each timed submission.
    pub times_ms: Vec<f64>,
}

impl Rendered {
    /// Median of the timed submissions.
    pub fn median_ms(&self) -> f64 {
        median(&self.times_ms)
    }
}

/// Median of a list of timings (0 when empty).
pub fn median(times: &[f64]) -> f64 {
    if times.is_empty() {
        return 0.0;
    }
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

impl Frame {
    /// Renders the frame on a new rastra device `runs` times (at least once), timing each
    /// submission; returns the last image and the statistics of the last run.
    pub fn render(&self, device_desc: &DeviceDescriptor, runs: usize) -> Result<Rendered, Error> {
        let (device, queue) = Device::new(device_desc);
        self.render_on(&device, &queue, runs)
    }

    /// [`Frame::render`] on an existing device: the frame's resources are made on it, used
    /// and dropped, the device (its workers, their memory, its front-end buffers) kept —
    /// what a program rendering frame after frame on one device has.
    pub fn render_on(
        &self,
        device: &Device,
        queue: &rastra::Queue,
        runs: usize,
    ) -> Result<Rendered, Error> {
        let module = device.create_shader_module(&rastra::ShaderModuleDescriptor {
            label: Some(&self.name),
            source: rastra::ShaderSource::Wgsl(&self.shader),
        })?;
        let buffers = self
            .buffers
            .iter()
            .map(|b| device.create_buffer_init(Some(&b.label), &b.data, b.usage))
            .collect::<Result<Vec<_>, _>>()?;
        let textures = self
            .textures
            .iter()
            .map(|t| upload_texture(device, queue, t))
            .collect::<Result<Vec<_>, _>>()?;
        let samplers = self
            .samplers
            .iter()
            .map(|s| device.create_sampler(s))
            .collect::<Result<Vec<_>, _>>()?;
        let pipelines = self
            .pipelines
            .iter()
            .map(|p| {
                device.create_render_pipeline(&rastra::RenderPipelineDescriptor {
                    label: None,
                    vertex: rastra::VertexState {
                        module: &module,
                        entry_point: Some(&p.vs_entry),
                        buffers: &p.vertex_buffers,
                        constants: &[],
                    },
                    primitive: p.primitive,
                    depth_stencil: p.depth,
                    multisample: rastra::MultisampleState {
                        count: self.samples,
                        ..Default::default()
                    },
                    fragment: Some(rastra::FragmentState {
                        module: &module,
                        entry_point: Some(&p.fs_entry),
                        targets: &[Some(rastra::ColorTargetState {
                            format: self.color_format,
                            blend: p.blend,
                            write_mask: p.write_mask,
                        })],
                        constants: &[],
                    }),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let bind_groups = self
            .draws
            .iter()
            .map(|d| {
                let entries: Vec<rastra::BindGroupEntry<'_>> = d
                    .bindings
                    .iter()
                    .map(|&(binding, r)| rastra::BindGroupEntry {
                        binding,
                        resource: match r {
                            Resource::Buffer(b) => {
                                rastra::BindingResource::Buffer(rastra::BufferBinding {
                                    buffer: &buffers[b],
                                    offset: 0,
                                    size: None,
                                })
                            }
                            Resource::Texture(t) => {
                                rastra::BindingResource::TextureView(&textures[t])
                            }
                            Resource::Sampler(s) => rastra::BindingResource::Sampler(&samplers[s]),
                        },
                    })
                    .collect();
                if entries.is_empty() {
                    Ok(None)
                } else {
                    device
                        .create_bind_group(&rastra::BindGroupDescriptor {
                            label: None,
                            entries: &entries,
                        })
                        .map(Some)
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let size = rastra::Extent3d {
            width: self.width,
            height: self.height,
            depth_or_array_layers: 1,
        };
        let texture = |format, samples, usage| {
            device.create_texture(&rastra::TextureDescriptor {
                label: None,
                size,
                mip_level_count: 1,
                sample_count: samples,
                dimension: rastra::TextureDimension::D2,
                format,
                usage,
            })
        };
        let attach = rastra::TextureUsages::RENDER_ATTACHMENT;
        let copy = rastra::TextureUsages::COPY_SRC;
        let resolved = texture(self.color_format, 1, attach | copy)?;
        let msaa = if self.samples > 1 {
            Some(texture(self.color_format, self.samples, attach)?)
        } else {
            None
        };
        let depth = match self.depth_format {
            Some(f) => Some(texture(f, self.samples, attach)?),
            None => None,
        };
        let resolved_view = resolved.create_view();
        let msaa_view = msaa.as_ref().map(|t| t.create_view());
        let depth_view = depth.as_ref().map(|t| t.create_view());
        let mut times = Vec::new();
        for _ in 0..runs.max(1) {
            queue.take_stats();
            let mut encoder = device.create_command_encoder();
            {
                let (view, resolve_target) = match &msaa_view {
                    Some(v) => (v, Some(&resolved_view)),
                    None => (&resolved_view, None),
                };
                let mut pass = encoder.begin_render_pass(&rastra::RenderPassDescriptor {
                    label: Some(&self.name),
                    color_attachments: &[Some(rastra::RenderPassColorAttachment {
                        view,
                        resolve_target,
                        ops: rastra::Operations {
                            load: rastra::LoadOp::Clear(self.clear_color),
                            store: rastra::StoreOp::Store,
                        },
                    })],
                    depth_stencil_attachment: depth_view.as_ref().map(|v| {
                        rastra::RenderPassDepthStencilAttachment {
                            view: v,
                            depth_ops: Some(rastra::Operations {
                                load: rastra::LoadOp::Clear(self.clear_depth),
                                store: rastra::StoreOp::Store,
                            }),
                            stencil_ops: None,
                        }
                    }),
                    occlusion_query_set: None,
                });
                pass.set_blend_constant(self.blend_constant);
                for (d, group) in self.draws.iter().zip(&bind_groups) {
                    pass.set_pipeline(&pipelines[d.pipeline]);
                    if let Some(g) = group {
                        pass.set_bind_group(0, g);
                    }
                    for (slot, &b) in d.vertex_buffers.iter().enumerate() {
                        pass.set_vertex_buffer(slot as u32, &buffers[b], 0, None);
                    }
                    if let Some((b, format)) = d.index_buffer {
                        pass.set_index_buffer(&buffers[b], format, 0, None);
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
            let commands = encoder.finish()?;
            let start = Instant::now();
            queue.submit([commands])?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        Ok(Rendered {
            pixels: queue.read_texture(&resolved)?,
            stats: queue.take_stats(),
            times_ms: times,
        })
    }

    /// Triangles the frame's draws submit (list topology: count / 3 per instance).
    pub fn triangle_count(&self) -> u64 {
        self.draws
            .iter()
            .map(|d| {
                let n = match &d.kind {
                    DrawKind::Vertices(v) => v.len(),
                    DrawKind::Indexed { indices, .. } => indices.len(),
                } as u64;
                n / 3 * d.instances.len() as u64
            })
            .sum()
    }
}

/// Creates a frame texture on rastra, uploads every level, and makes its view.
fn upload_texture(
    device: &Device,
    queue: &rastra::Queue,
    t: &TextureData,
) -> Result<rastra::TextureView, Error> {
    let texture = device.create_texture(&rastra::TextureDescriptor {
        label: Some(&t.label),
        size: rastra::Extent3d {
            width: t.size[0],
            height: t.size[1],
            depth_or_array_layers: t.size[2],
        },
        mip_level_count: t.levels.len().max(1) as u32,
        sample_count: 1,
        dimension: t.dimension,
        format: t.format,
        usage: rastra::TextureUsages::TEXTURE_BINDING | rastra::TextureUsages::COPY_DST,
    })?;
    for (level, data) in t.levels.iter().enumerate() {
        let [w, h, d] = texture.mip_size(level as u32);
        let (bw, bh) = t.format.block_dims();
        // A level's physical size is whole blocks.
        let (pw, ph) = (w.div_ceil(bw) * bw, h.div_ceil(bh) * bh);
        queue.write_texture_region(
            &rastra::TexelCopyTextureInfo {
                texture: &texture,
                mip_level: level as u32,
                origin: [0; 3],
                aspect: rastra::TextureAspect::All,
            },
            data,
            rastra::TexelCopyBufferLayout::packed(t.format, [pw, ph, d]),
            rastra::Extent3d {
                width: pw,
                height: ph,
                depth_or_array_layers: d,
            },
        )?;
    }
    texture.create_view_with(&t.view)
}

/// Packs `f32`s as little-endian bytes.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Packs `u32`s as little-endian bytes.
pub fn u32_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
