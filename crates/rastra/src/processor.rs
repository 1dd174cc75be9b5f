//! The command processor (T2 "the command processor", ATTILA's command processor unit):
//! executes a command buffer's commands in order — render pass begin (load operations),
//! state changes, draws (handed to `rastra_pipeline::draw` with the bound memory) and pass
//! end (multisample resolve, store operations) — and records per-draw statistics.

use std::sync::{MutexGuard, RwLockWriteGuard};

use rastra_pipeline::hiz::HiZBuffer;

use rastra_pipeline::memory::{clear_color, clear_depth_stencil, resolve};
use rastra_pipeline::state::{Color, ScissorRect, Viewport};
use rastra_pipeline::{BufferSlice, ColorTarget, DepthTarget, DrawCall, Framebuffer, Workers};
use rastra_stats::{Counters, DrawStats, FrameStats};

use crate::IndexFormat;
use crate::binding::BindGroup;
use crate::command::{BufferRange, Command, LoadOp, StoreOp};
use crate::compute::ComputePipeline;
use crate::pipeline::{MAX_BIND_GROUPS, RenderPipeline};

/// The depth attachment as a pass holds it: format, data and Hi-Z bounds, locked.
type DepthAttachmentGuards<'g> = (
    crate::TextureFormat,
    RwLockWriteGuard<'g, Vec<u8>>,
    MutexGuard<'g, Option<HiZBuffer>>,
);

/// State of the render pass being executed.
struct Pass<'g> {
    label: String,
    draws: usize,
    width: u32,
    height: u32,
    samples: u32,
    colors: Vec<Option<RwLockWriteGuard<'g, Vec<u8>>>>,
    color_formats: Vec<Option<crate::TextureFormat>>,
    depth: Option<DepthAttachmentGuards<'g>>,
    pipeline: Option<RenderPipeline>,
    bind_groups: [Option<BindGroup>; MAX_BIND_GROUPS as usize],
    vertex_buffers: Vec<Option<BufferRange>>,
    index: Option<(BufferRange, IndexFormat)>,
    viewport: Viewport,
    scissor: ScissorRect,
    blend_constant: Color,
}

/// Executes `commands`; returns the reason when the device is lost.
pub(crate) fn execute(
    commands: &[Command],
    workers: &Workers,
    budget: &mut u64,
    stats: &mut FrameStats,
) -> Result<(), String> {
    let mut pass: Option<Pass<'_>> = None;
    let mut compute: Option<ComputeState> = None;
    for (i, command) in commands.iter().enumerate() {
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
                for c in colors {
                    match c {
                        Some(c) => {
                            let mut g = c.texture.write_lock();
                            if let LoadOp::Clear(color) = c.ops.load {
                                clear_color(c.texture.format(), &mut g, color);
                            }
                            formats.push(Some(c.texture.format()));
                            guards.push(Some(g));
                        }
                        None => {
                            formats.push(None);
                            guards.push(None);
                        }
                    }
                }
                let depth = depth.as_ref().map(|d| {
                    let format = d.texture.format();
                    let mut g = d.texture.write_lock();
                    let z = match d.depth_ops.map(|o| o.load) {
                        Some(LoadOp::Clear(z)) => Some(z),
                        _ => None,
                    };
                    let s = match d.stencil_ops.map(|o| o.load) {
                        Some(LoadOp::Clear(s)) => Some(s as u8),
                        _ => None,
                    };
                    if z.is_some() || s.is_some() {
                        clear_depth_stencil(format, &mut g, z, s);
                    }
                    let mut hiz = d.texture.hiz_lock();
                    if let (Some(z), Some(h)) = (z, hiz.as_mut()) {
                        h.clear(format.quantize_depth(z));
                    }
                    (format, g, hiz)
                });
                pass = Some(Pass {
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
                    pipeline: None,
                    bind_groups: Default::default(),
                    vertex_buffers: Vec::new(),
                    index: None,
                    viewport: Viewport {
                        x: 0.0,
                        y: 0.0,
                        width: *width as f32,
                        height: *height as f32,
                        min_depth: 0.0,
                        max_depth: 1.0,
                    },
                    scissor: ScissorRect {
                        x: 0,
                        y: 0,
                        width: *width,
                        height: *height,
                    },
                    blend_constant: Color::TRANSPARENT,
                });
            }
            Command::SetPipeline(p) => pass_mut(&mut pass).pipeline = Some(p.clone()),
            Command::SetBindGroup(index, group) => {
                let groups = match compute.as_mut() {
                    Some(c) => &mut c.bind_groups,
                    None => &mut pass_mut(&mut pass).bind_groups,
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
                });
            }
            Command::SetComputePipeline(p) => compute_mut(&mut compute).pipeline = Some(p.clone()),
            Command::Dispatch(counts) => {
                run_dispatch(compute_mut(&mut compute), *counts, workers, budget, stats)?;
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
                    run_dispatch(compute_mut(&mut compute), counts, workers, budget, stats)?;
                }
            }
            Command::EndComputePass => compute = None,
            Command::SetVertexBuffer(slot, range) => {
                let p = pass_mut(&mut pass);
                if p.vertex_buffers.len() <= *slot as usize {
                    p.vertex_buffers.resize(*slot as usize + 1, None);
                }
                p.vertex_buffers[*slot as usize] = Some(range.clone());
            }
            Command::SetIndexBuffer(range, format) => {
                pass_mut(&mut pass).index = Some((range.clone(), *format))
            }
            Command::SetViewport(v) => pass_mut(&mut pass).viewport = *v,
            Command::SetScissor(s) => pass_mut(&mut pass).scissor = *s,
            Command::SetBlendConstant(c) => pass_mut(&mut pass).blend_constant = *c,
            Command::Draw { range, instances } => {
                let p = pass_mut(&mut pass);
                let mut counters = Counters::default();
                run_draw(p, *range, instances.clone(), workers, budget, &mut counters)?;
                let what = match range {
                    rastra_pipeline::DrawRange::Vertices { count, .. } => format!("draw {count}"),
                    rastra_pipeline::DrawRange::Indexed { count, .. } => {
                        format!("draw_indexed {count}")
                    }
                };
                stats.draws.push(DrawStats {
                    label: format!("{} draw {}: {what} × {}", p.label, p.draws, instances.len()),
                    counters,
                });
                p.draws += 1;
            }
            Command::EndRenderPass => {
                let p = pass.take().expect("encoder pairs begin and end");
                end_pass(commands, i, p, stats);
            }
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
            Command::CopyTextureToBuffer {
                src,
                dst,
                offset,
                bytes_per_row,
            } => {
                let texels = src.read_lock();
                let row = src.width() as usize * src.format().texel_size();
                for y in 0..src.height() as usize {
                    let at = *offset + y as u64 * *bytes_per_row as u64;
                    dst.write_bytes(at, &texels[y * row..(y + 1) * row]);
                }
            }
        }
    }
    Ok(())
}

/// State of the compute pass being executed.
struct ComputeState {
    label: String,
    dispatches: usize,
    pipeline: Option<ComputePipeline>,
    bind_groups: [Option<BindGroup>; MAX_BIND_GROUPS as usize],
}

fn compute_mut(compute: &mut Option<ComputeState>) -> &mut ComputeState {
    compute
        .as_mut()
        .expect("the encoder only records compute commands inside a compute pass")
}

/// The word ranges a program's bindings name, in `Program::bindings` order. Offsets are
/// multiples of 256 (validated); a trailing partial word is not addressable.
fn binding_words<'g>(
    program: &rastra_shader::Program,
    groups: &'g [Option<BindGroup>],
) -> Vec<&'g [std::sync::atomic::AtomicU32]> {
    program
        .bindings
        .iter()
        .map(|b| {
            let group = groups[b.group as usize].as_ref().expect("validated");
            let r = &group.entry(b.binding).expect("validated").range;
            let first = (r.offset / 4) as usize;
            &r.buffer.words()[first..first + (r.size / 4) as usize]
        })
        .collect()
}

fn run_dispatch(
    c: &mut ComputeState,
    counts: [u32; 3],
    workers: &Workers,
    budget: &mut u64,
    stats: &mut FrameStats,
) -> Result<(), String> {
    let pipeline = c.pipeline.clone().expect("validated at record time");
    let resources = binding_words(&pipeline.0, &c.bind_groups);
    let mut counters = Counters::default();
    rastra_pipeline::compute::dispatch(
        &pipeline.0,
        counts,
        &resources,
        workers,
        budget,
        &mut counters,
    )
    .map_err(|e| e.to_string())?;
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

fn pass_mut<'a, 'g>(pass: &'a mut Option<Pass<'g>>) -> &'a mut Pass<'g> {
    pass.as_mut()
        .expect("the encoder only records pass commands inside a pass")
}

fn run_draw(
    p: &mut Pass<'_>,
    range: rastra_pipeline::DrawRange,
    instances: std::ops::Range<u32>,
    workers: &Workers,
    budget: &mut u64,
    counters: &mut Counters,
) -> Result<(), String> {
    let pipeline = p.pipeline.clone().expect("validated at record time");
    let linked = &pipeline.0;
    fn slice(r: &BufferRange) -> BufferSlice<'_> {
        BufferSlice {
            words: r.buffer.words(),
            offset: r.offset,
            size: r.size,
        }
    }
    let vertex_buffers: Vec<BufferSlice<'_>> = (0..linked.desc.vertex_buffers.len())
        .map(|s| slice(p.vertex_buffers[s].as_ref().expect("validated")))
        .collect();
    let index_buffer = p.index.as_ref().map(|(r, format)| (slice(r), *format));
    let vertex_resources = binding_words(&linked.desc.vertex, &p.bind_groups);
    let fragment_resources = linked
        .desc
        .fragment
        .as_deref()
        .map_or_else(Vec::new, |fs| binding_words(fs, &p.bind_groups));

    let call = DrawCall {
        pipeline: linked,
        vertex_buffers,
        index_buffer,
        range,
        instances,
        vertex_resources,
        fragment_resources,
        viewport: p.viewport,
        scissor: p.scissor,
        blend_constant: p.blend_constant,
    };
    let colors = p
        .colors
        .iter_mut()
        .zip(&p.color_formats)
        .map(|(g, f)| match (g, f) {
            (Some(g), Some(format)) => Some(ColorTarget {
                format: *format,
                data: &mut g[..],
            }),
            _ => None,
        })
        .collect();
    let depth = p.depth.as_mut().map(|(format, g, hiz)| DepthTarget {
        format: *format,
        data: &mut g[..],
        hiz: hiz.as_mut().expect("depth textures have Hi-Z bounds"),
    });
    let mut fb = Framebuffer {
        width: p.width,
        height: p.height,
        samples: p.samples,
        colors,
        depth,
    };
    rastra_pipeline::draw(&call, &mut fb, workers, budget, counters).map_err(|e| e.to_string())
}

fn end_pass(commands: &[Command], end_index: usize, mut p: Pass<'_>, stats: &mut FrameStats) {
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
        let (Some(c), Some(guard)) = (c, guard) else {
            continue;
        };
        if let Some(target) = &c.resolve {
            let mut dst = target.write_lock();
            resolved += resolve(
                c.texture.format(),
                guard,
                p.samples,
                target.format(),
                &mut dst,
            );
        }
        if c.ops.store == StoreOp::Discard {
            guard.fill(0);
        }
    }
    if let (Some(d), Some((_, guard, hiz))) = (depth, p.depth.as_mut()) {
        let discard_depth = d.depth_ops.is_some_and(|o| o.store == StoreOp::Discard);
        let discard_stencil = d.stencil_ops.is_some_and(|o| o.store == StoreOp::Discard);
        if discard_depth || discard_stencil {
            clear_depth_stencil(
                d.texture.format(),
                guard,
                discard_depth.then_some(0.0),
                discard_stencil.then_some(0),
            );
            if let (true, Some(h)) = (discard_depth, hiz.as_mut()) {
                h.clear(0.0);
            }
        }
    }
    if resolved > 0 {
        stats.draws.push(DrawStats {
            label: format!("{} resolve", p.label),
            counters: Counters {
                pixels_resolved: resolved,
                ..Counters::default()
            },
        });
    }
}
