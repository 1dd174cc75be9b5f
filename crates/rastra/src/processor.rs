//! The command processor (T2 "the command processor", ATTILA's command processor unit):
//! executes a command buffer's commands in order — render pass begin (load operations),
//! state changes, draws and pass end (multisample resolve, store operations) — and records
//! per-draw statistics. A pass's draws wait in a queue, each with the state it was recorded
//! under, and run together (`rastra_pipeline::draw_batch` with the bound memory) when a
//! command needs their results: several draws in flight, as a GPU's front end keeps
//! feeding draws while earlier ones are still in the pixel pipes (OpenSWR's draw contexts).

use std::sync::{MutexGuard, RwLockReadGuard, RwLockWriteGuard};

use rastra_pipeline::hiz::HiZBuffer;

use rastra_pipeline::memory::{
    ClearTexel, FastClear, SurfaceLayout, clear_color, clear_depth_stencil, resolve,
};
use rastra_pipeline::state::{Color, ScissorRect, Viewport};
use rastra_pipeline::{
    BufferSlice, ChunkPool, ColorTarget, DepthTarget, DrawCall, DrawOutput, Framebuffer,
    StageResources, Workers,
};
use rastra_shader::TextureBinding;
use rastra_stats::{Counters, DrawStats, FrameStats};
use rastra_texture::{ImageLayout, L2Cache, StorageImage};

use crate::binding::{BindGroup, Bound};
use crate::command::{
    BufferRange, Command, DrawIndexedIndirectArgs, DrawIndirectArgs, LoadOp, StoreOp, element_limit,
};
use crate::compute::ComputePipeline;
use crate::device::DeviceFeatures;
use crate::pipeline::{MAX_BIND_GROUPS, RenderPipeline};
use crate::query::QuerySet;
use crate::resource::Buffer;
use crate::texture::{Texture, TextureView};
use crate::{IndexFormat, VertexStepMode};

/// A texture's memory locked for writing (a render attachment).
type Memory<'g> = RwLockWriteGuard<'g, rastra_texture::Texture>;

/// The depth attachment as a pass holds it: format, memory, where the attached subresource
/// lies, and the Hi-Z bounds (all subresources locked; `hiz_index` is the attached one).
struct DepthAttachmentGuards<'g> {
    format: crate::TextureFormat,
    memory: Memory<'g>,
    layout: SurfaceLayout,
    hiz: MutexGuard<'g, Vec<Option<HiZBuffer>>>,
    hiz_index: usize,
}

/// Locks an attachment view's texture and finds its subresource.
fn attach(view: &TextureView) -> (Memory<'_>, SurfaceLayout) {
    let memory = view.texture().write_lock();
    let layout = memory
        .surface(view.base_mip_level(), view.base_array_layer())
        .expect("attachment views are validated single 2D subresources");
    (memory, layout)
}

/// State of the render pass being executed.
struct Pass<'g> {
    label: String,
    draws: usize,
    width: u32,
    height: u32,
    samples: u32,
    colors: Vec<Option<(Memory<'g>, SurfaceLayout)>>,
    color_formats: Vec<Option<crate::TextureFormat>>,
    depth: Option<DepthAttachmentGuards<'g>>,
    /// What the next draw runs with.
    state: DrawState,
    /// The active occlusion query: its set, index and the samples counted so far.
    query: Option<(QuerySet, u32, u64)>,
    /// The active pipeline-statistics query: its set, index and the sums so far.
    statistics: Option<Statistics>,
    /// Draws recorded but not yet run: they run together as one batch (several draws in
    /// flight) when a command needs their results, or when the queue is full.
    queue: Vec<QueuedDraw>,
    /// The pass's clear load operations, as a fast clear whose tiles the draws' back end
    /// and the pass end write.
    fast_clear: Option<FastClear>,
    /// Whether the draws' back end removes hidden surfaces
    /// ([`DeviceFeatures::hidden_surface_removal`]).
    remove_hidden: bool,
}

/// The state a render pass's draws run with, set by its state commands.
#[derive(Clone)]
struct DrawState {
    pipeline: Option<RenderPipeline>,
    bind_groups: [Option<BindGroup>; MAX_BIND_GROUPS as usize],
    vertex_buffers: Vec<Option<BufferRange>>,
    index: Option<(BufferRange, IndexFormat)>,
    viewport: Viewport,
    scissor: ScissorRect,
    blend_constant: Color,
}

impl DrawState {
    /// The pipeline, which validation guarantees a draw has.
    fn pipeline(&self) -> &RenderPipeline {
        self.pipeline.as_ref().expect("validated at record time")
    }
}

/// A draw waiting in the pass's queue, with the state it was recorded under.
struct QueuedDraw {
    label: String,
    state: DrawState,
    range: rastra_pipeline::DrawRange,
    instances: std::ops::Range<u32>,
}

/// Most draws a pass queues before running them.
const MAX_QUEUED_DRAWS: usize = 1024;

/// An active pipeline-statistics query and the counters of the work since it began.
struct Statistics {
    set: QuerySet,
    index: u32,
    sum: Counters,
}

impl Statistics {
    fn end(self) {
        if let crate::query::QueryType::PipelineStatistics(types) = self.set.ty() {
            self.set.write(self.index, &types.values(&self.sum));
        }
    }
}

/// Executes `commands`; returns the reason when the device is lost.
pub(crate) fn execute(
    commands: &[Command],
    features: &DeviceFeatures,
    workers: &Workers,
    l2: &mut L2Cache,
    chunks: &mut ChunkPool,
    budget: &mut u64,
    stats: &mut FrameStats,
) -> Result<(), String> {
    let mut pass: Option<Pass<'_>> = None;
    let mut compute: Option<ComputeState> = None;
    for (i, command) in commands.iter().enumerate() {
        // Queued draws run before any command that could see or change their results
        // (state changes only affect later draws: each queued draw keeps its own state).
        let state_only = matches!(
            command,
            Command::SetPipeline(_)
                | Command::SetBindGroup(..)
                | Command::SetVertexBuffer(..)
                | Command::SetIndexBuffer(..)
                | Command::SetViewport(_)
                | Command::SetScissor(_)
                | Command::SetBlendConstant(_)
                | Command::Draw { .. }
        );
        if !state_only && let Some(p) = pass.as_mut() {
            run_queued(p, workers, l2, chunks, budget, stats)?;
        }
        match command {
            Command::BeginRenderPass {
                label,
                colors,
                depth,
                width,
                height,
                samples,
            } => {
                let mut guards = Vec::new();
                let mut formats = Vec::new();
                // Clears become fast clears: written tile by tile as the pass reaches them.
                let mut color_clears = Vec::new();
                for c in colors {
                    match c {
                        Some(c) => {
                            let (g, layout) = attach(&c.view);
                            let format = c.view.texture().format();
                            color_clears.push(match c.ops.load {
                                LoadOp::Clear(color) => Some(ClearTexel::color(format, color)),
                                LoadOp::Load => None,
                            });
                            formats.push(Some(format));
                            guards.push(Some((g, layout)));
                        }
                        None => {
                            color_clears.push(None);
                            formats.push(None);
                            guards.push(None);
                        }
                    }
                }
                let mut depth_clear = None;
                let depth = depth.as_ref().map(|d| {
                    let t = d.view.texture();
                    let format = t.format();
                    let (mut g, layout) = attach(&d.view);
                    let z = match d.depth_ops.map(|o| o.load) {
                        Some(LoadOp::Clear(z)) => Some(z),
                        _ => None,
                    };
                    let s = match d.stencil_ops.map(|o| o.load) {
                        Some(LoadOp::Clear(s)) => Some(s as u8),
                        _ => None,
                    };
                    if z.is_some() || s.is_some() {
                        // A clear of part of each texel (depth or stencil only) keeps the
                        // other part: written now.
                        depth_clear = ClearTexel::depth_stencil(format, z, s);
                        if depth_clear.is_none() {
                            clear_depth_stencil(format, g.bytes_mut(), &layout, z, s);
                        }
                    }
                    let mut hiz = t.hiz_lock();
                    let hiz_index =
                        t.subresource(d.view.base_mip_level(), d.view.base_array_layer());
                    // Textures start zeroed, so bounds created now start "cleared to 0".
                    let h = hiz[hiz_index]
                        .get_or_insert_with(|| HiZBuffer::new(layout.width, layout.height, 0.0));
                    if let Some(z) = z {
                        h.clear(format.quantize_depth(z));
                    }
                    DepthAttachmentGuards {
                        format,
                        memory: g,
                        layout,
                        hiz,
                        hiz_index,
                    }
                });
                let fast_clear = FastClear::new(*width, *height, color_clears, depth_clear);
                pass = Some(Pass {
                    fast_clear,
                    remove_hidden: features.hidden_surface_removal,
                    label: if label.is_empty() {
                        format!("pass {i}")
                    } else {
                        label.clone()
                    },
                    draws: 0,
                    width: *width,
                    height: *height,
                    samples: *samples,
                    colors: guards,
                    color_formats: formats,
                    depth,
                    state: DrawState {
                        pipeline: None,
                        bind_groups: Default::default(),
                        vertex_buffers: Vec::new(),
                        index: None,
                        viewport: Viewport::covering(*width, *height),
                        scissor: ScissorRect::covering(*width, *height),
                        blend_constant: Color::TRANSPARENT,
                    },
                    query: None,
                    statistics: None,
                    queue: Vec::new(),
                });
            }
            Command::SetPipeline(p) => pass_mut(&mut pass).state.pipeline = Some(p.clone()),
            Command::SetBindGroup(index, group) => {
                let groups = match compute.as_mut() {
                    Some(c) => &mut c.bind_groups,
                    None => &mut pass_mut(&mut pass).state.bind_groups,
                };
                groups[*index as usize] = Some(group.clone());
            }
            Command::BeginComputePass { label } => {
                compute = Some(ComputeState {
                    label: if label.is_empty() {
                        format!("compute pass {i}")
                    } else {
                        label.clone()
                    },
                    dispatches: 0,
                    pipeline: None,
                    bind_groups: Default::default(),
                    statistics: None,
                });
            }
            Command::SetComputePipeline(p) => compute_mut(&mut compute).pipeline = Some(p.clone()),
            Command::Dispatch(counts) => {
                run_dispatch(
                    compute_mut(&mut compute),
                    *counts,
                    workers,
                    l2,
                    budget,
                    stats,
                )?;
            }
            Command::DispatchIndirect { buffer, offset } => {
                let mut bytes = [0u8; 12];
                buffer.read_bytes(*offset, &mut bytes);
                let counts: [u32; 3] = std::array::from_fn(|k| {
                    u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap())
                });
                // WebGPU: an indirect dispatch over the per-dimension limit does nothing.
                if counts
                    .iter()
                    .all(|&n| n <= crate::compute::MAX_WORKGROUPS_PER_DIMENSION)
                {
                    run_dispatch(
                        compute_mut(&mut compute),
                        counts,
                        workers,
                        l2,
                        budget,
                        stats,
                    )?;
                }
            }
            Command::EndComputePass => compute = None,
            Command::SetVertexBuffer(slot, range) => {
                let p = pass_mut(&mut pass);
                let buffers = &mut p.state.vertex_buffers;
                if buffers.len() <= *slot as usize {
                    buffers.resize(*slot as usize + 1, None);
                }
                buffers[*slot as usize] = Some(range.clone());
            }
            Command::SetIndexBuffer(range, format) => {
                pass_mut(&mut pass).state.index = Some((range.clone(), *format))
            }
            Command::SetViewport(v) => pass_mut(&mut pass).state.viewport = *v,
            Command::SetScissor(s) => pass_mut(&mut pass).state.scissor = *s,
            Command::SetBlendConstant(c) => pass_mut(&mut pass).state.blend_constant = *c,
            Command::Draw { range, instances } => {
                let p = pass_mut(&mut pass);
                let what = match range {
                    rastra_pipeline::DrawRange::Vertices { count, .. } => format!("draw {count}"),
                    rastra_pipeline::DrawRange::Indexed { count, .. } => {
                        format!("draw_indexed {count}")
                    }
                };
                let label = format!("{} draw {}: {what} × {}", p.label, p.draws, instances.len());
                p.draws += 1;
                let alone = !batchable(p.state.pipeline());
                if alone {
                    // A draw that writes memory runs after the queued draws have finished
                    // and before any later one starts, as if nothing were batched.
                    run_queued(p, workers, l2, chunks, budget, stats)?;
                }
                p.queue_draw(label, *range, instances.clone());
                if alone || p.queue.len() >= MAX_QUEUED_DRAWS {
                    run_queued(p, workers, l2, chunks, budget, stats)?;
                }
            }
            Command::DrawIndirect {
                buffer,
                offset,
                indexed,
            } => {
                let p = pass_mut(&mut pass);
                let (range, instances, what) = indirect_draw(p, buffer, *offset, *indexed);
                let label = format!("{} draw {}: {what}", p.label, p.draws);
                p.draws += 1;
                match (&range, &instances) {
                    (Some(range), Some(instances)) if first_instance_ok(instances, features) => {
                        p.queue_draw(label, *range, instances.clone());
                        run_queued(p, workers, l2, chunks, budget, stats)?;
                    }
                    _ => {
                        let skipped = if range.is_some() && instances.is_some() {
                            " skipped: first_instance ≠ 0 needs indirect_first_instance"
                        } else {
                            " skipped: its arguments read past the bound buffers"
                        };
                        stats.draws.push(DrawStats {
                            label: format!("{label}{skipped}"),
                            counters: Counters::default(),
                        });
                    }
                }
            }
            Command::BeginOcclusionQuery { set, index } => {
                pass_mut(&mut pass).query = Some((set.clone(), *index, 0));
            }
            Command::EndOcclusionQuery => {
                let (set, index, passed) = pass_mut(&mut pass)
                    .query
                    .take()
                    .expect("the encoder pairs begin and end");
                set.write(index, &[passed]);
            }
            Command::ResolveQuerySet {
                set,
                first,
                count,
                buffer,
                offset,
            } => buffer.write_bytes(*offset, &set.read_bytes(*first, *count)),
            Command::BeginPipelineStatistics { set, index } => {
                let q = Statistics {
                    set: set.clone(),
                    index: *index,
                    sum: Counters::default(),
                };
                match compute.as_mut() {
                    Some(c) => c.statistics = Some(q),
                    None => pass_mut(&mut pass).statistics = Some(q),
                }
            }
            Command::EndPipelineStatistics => {
                let q = match compute.as_mut() {
                    Some(c) => c.statistics.take(),
                    None => pass_mut(&mut pass).statistics.take(),
                };
                q.expect("the encoder pairs begin and end").end();
            }
            Command::EndRenderPass => {
                let p = pass.take().expect("encoder pairs begin and end");
                end_pass(commands, i, p, workers, stats);
            }
            Command::ClearBuffer {
                buffer,
                offset,
                size,
            } => buffer.write_bytes(*offset, &vec![0; *size as usize]),
            Command::CopyBufferToBuffer {
                src,
                src_offset,
                dst,
                dst_offset,
                size,
            } => {
                let mut data = vec![0; *size as usize];
                src.read_bytes(*src_offset, &mut data);
                dst.write_bytes(*dst_offset, &data);
            }
            // Copies were validated when recorded; the texture memory checks again and
            // a failure there leaves the destination untouched.
            Command::CopyTextureToBuffer {
                src,
                at,
                dst,
                layout,
                size,
            } => {
                let mut data = vec![0; dst.size() as usize];
                dst.read_bytes(0, &mut data);
                if src.read_lock().read(*at, *layout, *size, &mut data).is_ok() {
                    dst.write_bytes(0, &data);
                }
            }
            Command::CopyBufferToTexture {
                src,
                layout,
                dst,
                at,
                size,
            } => {
                let mut data = vec![0; src.size() as usize];
                src.read_bytes(0, &mut data);
                let _ = dst.write_lock().write(*at, &data, *layout, *size);
                dst.invalidate_hiz();
            }
            Command::CopyTextureToTexture {
                src,
                src_at,
                dst,
                dst_at,
                size,
            } => {
                let _ = if src.same(dst) {
                    dst.write_lock().copy_within(*src_at, *dst_at, *size)
                } else {
                    rastra_texture::copy_texture_to_texture(
                        &src.read_lock(),
                        *src_at,
                        &mut dst.write_lock(),
                        *dst_at,
                        *size,
                    )
                };
                dst.invalidate_hiz();
            }
        }
    }
    // (The encoder closes every pass it opens, and the pass end ran the queue; a pass left
    // open would still run its draws.)
    if let Some(p) = pass.as_mut() {
        run_queued(p, workers, l2, chunks, budget, stats)?;
    }
    Ok(())
}

/// State of the compute pass being executed.
struct ComputeState {
    label: String,
    dispatches: usize,
    pipeline: Option<ComputePipeline>,
    bind_groups: [Option<BindGroup>; MAX_BIND_GROUPS as usize],
    statistics: Option<Statistics>,
}

fn compute_mut(compute: &mut Option<ComputeState>) -> &mut ComputeState {
    compute
        .as_mut()
        .expect("the encoder only records compute commands inside a compute pass")
}

/// Texture memory a draw's shaders sample: locked for reading, or — for a texture the pass
/// renders into (other subresources of it, as validated) — a snapshot taken through the
/// pass's own write guard, since the texture cannot be locked a second time.
enum Sampled<'g> {
    Shared(RwLockReadGuard<'g, rastra_texture::Texture>),
    Snapshot(Box<rastra_texture::Texture>),
}

impl std::ops::Deref for Sampled<'_> {
    type Target = rastra_texture::Texture;

    fn deref(&self) -> &rastra_texture::Texture {
        match self {
            Sampled::Shared(guard) => guard,
            Sampled::Snapshot(texture) => texture,
        }
    }
}

/// The memory of every texture a draw samples, one entry per texture.
type SampledTextures<'g> = Vec<(&'g Texture, Sampled<'g>)>;

/// The textures a draw's or dispatch's shaders use as storage textures, locked for writing
/// once each.
type ImageTextures<'g> = Vec<(&'g Texture, Memory<'g>)>;

/// Locks (for writing) every texture the programs bind as a storage texture.
fn lock_images<'g>(
    programs: &[&rastra_shader::Program],
    groups: &'g [Option<BindGroup>],
) -> ImageTextures<'g> {
    let mut locked: ImageTextures<'g> = Vec::new();
    for program in programs {
        for t in &program.storage_textures {
            if let Some(Bound::Texture(v)) = groups[t.group as usize]
                .as_ref()
                .and_then(|g| g.entry(t.binding))
                && !locked.iter().any(|(l, _)| l.same(v.texture()))
            {
                locked.push((v.texture(), v.texture().write_lock()));
            }
        }
    }
    locked
}

/// The storage images of every program's `storage_textures`, in order, over the memory of
/// `images` (each texture's bytes shared once by all its bindings).
fn storage_images<'g>(
    programs: &[&rastra_shader::Program],
    groups: &'g [Option<BindGroup>],
    images: &'g mut ImageTextures<'_>,
) -> Vec<Vec<StorageImage<'g>>> {
    let view_of = |t: &rastra_shader::StorageTextureVar| match groups[t.group as usize]
        .as_ref()
        .and_then(|g| g.entry(t.binding))
    {
        Some(Bound::Texture(v)) => v,
        _ => unreachable!("validated: a storage texture binding holds a view"),
    };
    // Layouts first: they read the textures' descriptions, before their bytes are shared.
    let layouts: Vec<Vec<(&Texture, ImageLayout)>> = programs
        .iter()
        .map(|p| {
            p.storage_textures
                .iter()
                .map(|t| {
                    let v = view_of(t);
                    let (_, memory) = images
                        .iter()
                        .find(|(l, _)| l.same(v.texture()))
                        .expect("every storage texture is locked");
                    let layout = ImageLayout::new(memory, &v.view)
                        .expect("a view of the texture, validated");
                    (v.texture(), layout)
                })
                .collect()
        })
        .collect();
    let shared: Vec<(&Texture, &[std::sync::atomic::AtomicU8])> = images
        .iter_mut()
        .map(|(t, memory)| (*t, memory.shared_bytes()))
        .collect();
    layouts
        .into_iter()
        .map(|program| {
            program
                .into_iter()
                .map(|(texture, layout)| {
                    let bytes = shared
                        .iter()
                        .find(|(t, _)| t.same(texture))
                        .expect("locked")
                        .1;
                    StorageImage::new(layout, bytes)
                })
                .collect()
        })
        .collect()
}

/// Locks (for reading) every texture the programs sample, once each; `attached` is the
/// memory of textures already locked for writing (the pass's attachments, the storage
/// textures), which is copied instead of locked.
fn lock_sampled<'g>(
    locked: &mut SampledTextures<'g>,
    programs: &[&rastra_shader::Program],
    groups: &'g [Option<BindGroup>],
    attached: &[&rastra_texture::Texture],
) {
    for program in programs {
        for t in &program.textures {
            if let Some(Bound::Texture(v)) = groups[t.group as usize]
                .as_ref()
                .and_then(|g| g.entry(t.binding))
                && !locked.iter().any(|(l, _)| l.same(v.texture()))
            {
                let memory = match attached.iter().find(|m| m.id() == v.view.texture_id()) {
                    Some(m) => Sampled::Snapshot(Box::new((*m).clone())),
                    None => Sampled::Shared(v.texture().read_lock()),
                };
                locked.push((v.texture(), memory));
            }
        }
    }
}

/// What a program's bindings name, in its `bindings`, `textures` and `samplers` orders.
/// Buffer offsets are multiples of 256 (validated); a trailing partial word is not
/// addressable. `sampled` holds the locked memory of every texture.
fn stage_resources<'g>(
    program: &rastra_shader::Program,
    groups: &'g [Option<BindGroup>],
    sampled: &'g SampledTextures<'g>,
) -> StageResources<'g> {
    let entry = |group: u32, binding: u32| -> &'g Bound {
        groups[group as usize]
            .as_ref()
            .and_then(|g| g.entry(binding))
            .expect("validated")
    };
    let buffers = program
        .bindings
        .iter()
        .map(|b| match entry(b.group, b.binding) {
            Bound::Buffer(r) => {
                let first = (r.offset / 4) as usize;
                &r.buffer.words()[first..first + (r.size / 4) as usize]
            }
            _ => unreachable!("validated: a buffer binding holds a buffer"),
        })
        .collect();
    let textures = program
        .textures
        .iter()
        .map(|t| match entry(t.group, t.binding) {
            Bound::Texture(v) => TextureBinding {
                texture: &sampled
                    .iter()
                    .find(|(l, _)| l.same(v.texture()))
                    .expect("every sampled texture is locked")
                    .1,
                view: &v.view,
            },
            _ => unreachable!("validated: a texture binding holds a view"),
        })
        .collect();
    let samplers = program
        .samplers
        .iter()
        .map(|s| match entry(s.group, s.binding) {
            Bound::Sampler(s) => &*s.0,
            _ => unreachable!("validated: a sampler binding holds a sampler"),
        })
        .collect();
    StageResources {
        buffers,
        textures,
        samplers,
        images: Vec::new(),
    }
}

fn run_dispatch(
    c: &mut ComputeState,
    counts: [u32; 3],
    workers: &Workers,
    l2: &mut L2Cache,
    budget: &mut u64,
    stats: &mut FrameStats,
) -> Result<(), String> {
    let pipeline = c.pipeline.clone().expect("validated at record time");
    let programs = [&*pipeline.0];
    let mut images = lock_images(&programs, &c.bind_groups);
    let written: Vec<&rastra_texture::Texture> = images.iter().map(|(_, m)| &**m).collect();
    let mut sampled = Vec::new();
    lock_sampled(&mut sampled, &programs, &c.bind_groups, &written);
    drop(written);
    let mut storage = storage_images(&programs, &c.bind_groups, &mut images);
    let mut resources = stage_resources(&pipeline.0, &c.bind_groups, &sampled);
    resources.images = storage.remove(0);
    let mut counters = Counters::default();
    rastra_pipeline::compute::dispatch(
        &pipeline.0,
        counts,
        &resources,
        workers,
        l2,
        budget,
        &mut counters,
    )
    .map_err(|e| e.to_string())?;
    if let Some(q) = &mut c.statistics {
        q.sum.accumulate(&counters);
    }
    stats.draws.push(DrawStats {
        label: format!(
            "{} dispatch {}: {}×{}×{}",
            c.label, c.dispatches, counts[0], counts[1], counts[2]
        ),
        counters,
    });
    c.dispatches += 1;
    Ok(())
}

impl Pass<'_> {
    /// Adds a draw's passing samples to the active occlusion query.
    fn count_passed(&mut self, out: &DrawOutput) {
        if let Some((_, _, passed)) = &mut self.query {
            *passed += out.samples_passed;
        }
    }
}

fn pass_mut<'a, 'g>(pass: &'a mut Option<Pass<'g>>) -> &'a mut Pass<'g> {
    pass.as_mut()
        .expect("the encoder only records pass commands inside a pass")
}

impl Pass<'_> {
    /// Queues a draw with the pass's current state.
    fn queue_draw(
        &mut self,
        label: String,
        range: rastra_pipeline::DrawRange,
        instances: std::ops::Range<u32>,
    ) {
        self.queue.push(QueuedDraw {
            label,
            state: self.state.clone(),
            range,
            instances,
        });
    }
}

/// Whether a draw may share a batch with others: its shaders write no memory (no storage
/// textures, no writable storage buffers), so running the batch's draws tile by tile —
/// vertex work of later draws before pixel work of earlier ones — cannot change what any
/// shader reads.
fn batchable(pipeline: &RenderPipeline) -> bool {
    let desc = &pipeline.0.desc;
    std::iter::once(&*desc.vertex)
        .chain(desc.fragment.as_deref())
        .all(|program| {
            program.storage_textures.is_empty()
                && program.bindings.iter().all(|b| {
                    !matches!(
                        b.kind,
                        rastra_shader::BindingKind::Storage { read_only: false }
                    )
                })
        })
}

/// Runs the pass's queued draws as one batch and records their statistics and query
/// results, draw by draw.
fn run_queued(
    p: &mut Pass<'_>,
    workers: &Workers,
    l2: &mut L2Cache,
    chunks: &mut ChunkPool,
    budget: &mut u64,
    stats: &mut FrameStats,
) -> Result<(), String> {
    let queue = std::mem::take(&mut p.queue);
    if queue.is_empty() {
        return Ok(());
    }
    fn slice(r: &BufferRange) -> BufferSlice<'_> {
        BufferSlice {
            words: r.buffer.words(),
            offset: r.offset,
            size: r.size,
        }
    }
    fn programs_of(q: &QueuedDraw) -> Vec<&rastra_shader::Program> {
        let linked = &q.state.pipeline().0;
        std::iter::once(&*linked.desc.vertex)
            .chain(linked.desc.fragment.as_deref())
            .collect()
    }
    // Storage textures are never attachments (validated), so they lock on their own; only
    // a draw alone in its batch has any (`batchable`).
    let mut images: Vec<ImageTextures<'_>> = queue
        .iter()
        .map(|q| lock_images(&programs_of(q), &q.state.bind_groups))
        .collect();
    // Every texture the batch samples, locked once.
    let mut sampled: SampledTextures<'_> = Vec::new();
    for (q, images) in queue.iter().zip(&images) {
        let attached: Vec<&rastra_texture::Texture> = p
            .colors
            .iter()
            .flatten()
            .map(|(memory, _)| &**memory)
            .chain(p.depth.as_ref().map(|d| &*d.memory))
            .chain(images.iter().map(|(_, m)| &**m))
            .collect();
        lock_sampled(
            &mut sampled,
            &programs_of(q),
            &q.state.bind_groups,
            &attached,
        );
    }
    let mut calls = Vec::with_capacity(queue.len());
    for (q, images) in queue.iter().zip(&mut images) {
        let linked = &q.state.pipeline().0;
        let programs = programs_of(q);
        let vertex_buffers: Vec<BufferSlice<'_>> = (0..linked.desc.vertex_buffers.len())
            .map(|s| slice(q.state.vertex_buffers[s].as_ref().expect("validated")))
            .collect();
        let index_buffer = q
            .state
            .index
            .as_ref()
            .map(|(r, format)| (slice(r), *format));
        let mut storage = storage_images(&programs, &q.state.bind_groups, images).into_iter();
        let mut vertex_resources =
            stage_resources(&linked.desc.vertex, &q.state.bind_groups, &sampled);
        vertex_resources.images = storage.next().unwrap_or_default();
        let fragment_resources =
            linked
                .desc
                .fragment
                .as_deref()
                .map_or_else(StageResources::default, |fs| {
                    let mut r = stage_resources(fs, &q.state.bind_groups, &sampled);
                    r.images = storage.next().unwrap_or_default();
                    r
                });
        calls.push(DrawCall {
            pipeline: linked,
            vertex_buffers,
            index_buffer,
            range: q.range,
            instances: q.instances.clone(),
            vertex_resources,
            fragment_resources,
            viewport: q.state.viewport,
            scissor: q.state.scissor,
            blend_constant: q.state.blend_constant,
        });
    }
    let colors = p
        .colors
        .iter_mut()
        .zip(&p.color_formats)
        .map(|(g, f)| match (g, f) {
            (Some((g, layout)), Some(format)) => Some(ColorTarget {
                format: *format,
                data: g.bytes_mut(),
                layout: *layout,
            }),
            _ => None,
        })
        .collect();
    let depth = p.depth.as_mut().map(|d| DepthTarget {
        format: d.format,
        data: d.memory.bytes_mut(),
        layout: d.layout,
        hiz: d.hiz[d.hiz_index]
            .as_mut()
            .expect("bounds are created when the pass begins"),
    });
    let mut fb = Framebuffer {
        width: p.width,
        height: p.height,
        samples: p.samples,
        colors,
        depth,
        clear: p.fast_clear.as_ref(),
    };
    let mut counters = vec![Counters::default(); calls.len()];
    let outputs = rastra_pipeline::draw_batch(
        &calls,
        &mut fb,
        workers,
        l2,
        chunks,
        budget,
        &mut counters,
        p.remove_hidden,
    )
    .map_err(|e| e.to_string())?;
    drop(fb);
    for ((q, counters), out) in queue.iter().zip(counters).zip(&outputs) {
        p.count_passed(out);
        if let Some(s) = &mut p.statistics {
            s.sum.accumulate(&counters);
        }
        stats.draws.push(DrawStats {
            label: q.label.clone(),
            counters,
        });
    }
    Ok(())
}

/// Reads an indirect draw's arguments: the draw range and instances, None for either when
/// the arguments read past what is bound (WebGPU then skips the draw), and a description.
fn indirect_draw(
    p: &Pass<'_>,
    buffer: &Buffer,
    offset: u64,
    indexed: bool,
) -> (
    Option<rastra_pipeline::DrawRange>,
    Option<std::ops::Range<u32>>,
    String,
) {
    let pipeline = p.state.pipeline();
    let layouts = &pipeline.0.desc.vertex_buffers;
    let limit = |step: VertexStepMode| -> u64 {
        layouts
            .iter()
            .enumerate()
            .filter(|(_, l)| l.step_mode == step)
            .map(|(slot, l)| {
                let bound = p.state.vertex_buffers[slot].as_ref().expect("validated");
                element_limit(l, bound.size)
            })
            .min()
            .unwrap_or(u64::MAX)
    };
    // The range's end must fit u32 as well as the bound data.
    let fits = |first: u32, count: u32, limit: u64| {
        first
            .checked_add(count)
            .is_some_and(|end| end as u64 <= limit)
    };
    let instances = |first: u32, count: u32| {
        fits(first, count, limit(VertexStepMode::Instance)).then(|| first..first + count)
    };
    if indexed {
        let mut bytes = [0; DrawIndexedIndirectArgs::SIZE as usize];
        buffer.read_bytes(offset, &mut bytes);
        let a = DrawIndexedIndirectArgs::from_bytes(bytes);
        let (index, format) = p.state.index.as_ref().expect("validated at record time");
        let range = fits(
            a.first_index,
            a.index_count,
            index.size / format.size() as u64,
        )
        .then_some(rastra_pipeline::DrawRange::Indexed {
            first: a.first_index,
            count: a.index_count,
            base_vertex: a.base_vertex,
        });
        let what = format!(
            "draw_indexed_indirect {} × {}",
            a.index_count, a.instance_count
        );
        (range, instances(a.first_instance, a.instance_count), what)
    } else {
        let mut bytes = [0; DrawIndirectArgs::SIZE as usize];
        buffer.read_bytes(offset, &mut bytes);
        let a = DrawIndirectArgs::from_bytes(bytes);
        let range = fits(
            a.first_vertex,
            a.vertex_count,
            limit(VertexStepMode::Vertex),
        )
        .then_some(rastra_pipeline::DrawRange::Vertices {
            first: a.first_vertex,
            count: a.vertex_count,
        });
        let what = format!("draw_indirect {} × {}", a.vertex_count, a.instance_count);
        (range, instances(a.first_instance, a.instance_count), what)
    }
}

/// Whether the device lets an indirect draw start at `instances.start`.
fn first_instance_ok(instances: &std::ops::Range<u32>, features: &DeviceFeatures) -> bool {
    instances.start == 0 || features.indirect_first_instance
}

fn end_pass(
    commands: &[Command],
    end_index: usize,
    mut p: Pass<'_>,
    workers: &Workers,
    stats: &mut FrameStats,
) {
    // The clear reaches the tiles no draw touched before anything reads the surfaces.
    let mut cleared = 0;
    if let Some(clear) = p.fast_clear.take() {
        let colors = p
            .colors
            .iter_mut()
            .map(|g| g.as_mut().map(|(g, layout)| (g.bytes_mut(), *layout)))
            .collect();
        let depth = p.depth.as_mut().map(|d| (d.memory.bytes_mut(), d.layout));
        cleared = clear.finish(colors, depth, workers);
    }
    // Find the pass's begin command for the attachment descriptions.
    let begin = commands[..end_index]
        .iter()
        .rev()
        .find_map(|c| match c {
            Command::BeginRenderPass { colors, depth, .. } => Some((colors, depth)),
            _ => None,
        })
        .expect("every end has a begin");
    let (colors, depth) = begin;
    let mut resolved = 0;
    for (c, guard) in colors.iter().zip(p.colors.iter_mut()) {
        let (Some(c), Some((memory, layout))) = (c, guard) else {
            continue;
        };
        let format = c.view.texture().format();
        if let Some(target) = &c.resolve {
            let (mut dst, dst_layout) = attach(target);
            resolved += resolve(
                format,
                memory.bytes(),
                layout,
                p.samples,
                target.texture().format(),
                dst.bytes_mut(),
                &dst_layout,
            );
        }
        if c.ops.store == StoreOp::Discard {
            clear_color(format, memory.bytes_mut(), layout, Color::TRANSPARENT);
        }
    }
    if let (Some(d), Some(g)) = (depth, p.depth.as_mut()) {
        let discard_depth = d.depth_ops.is_some_and(|o| o.store == StoreOp::Discard);
        let discard_stencil = d.stencil_ops.is_some_and(|o| o.store == StoreOp::Discard);
        if discard_depth || discard_stencil {
            clear_depth_stencil(
                g.format,
                g.memory.bytes_mut(),
                &g.layout,
                discard_depth.then_some(0.0),
                discard_stencil.then_some(0),
            );
            if let (true, Some(h)) = (discard_depth, g.hiz[g.hiz_index].as_mut()) {
                h.clear(0.0);
            }
        }
    }
    // The pass end's own work, as entries after the pass's draws.
    let entries = [
        (
            "clear",
            cleared,
            Counters {
                fast_clear_tiles: cleared,
                ..Counters::default()
            },
        ),
        (
            "resolve",
            resolved,
            Counters {
                pixels_resolved: resolved,
                ..Counters::default()
            },
        ),
    ];
    for (what, count, counters) in entries {
        if count > 0 {
            stats.draws.push(DrawStats {
                label: format!("{} {what}", p.label),
                counters,
            });
        }
    }
}
