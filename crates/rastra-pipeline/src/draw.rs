//! One draw through the whole pipeline — the part of the command processor that runs a
//! draw (T2/T3 → T9). The front end (input assembly, vertex batches, clip, setup, binning)
//! runs first and fills per-draw triangle storage and tile bins: assembly and batching on
//! the submitting thread, shading, clipping and setup of groups of batches on the workers
//! (OpenSWR's "any worker runs a chunk of the draw"), merged in batch order for binning.
//! The back end then walks the tiles, each one independently, rasterizing its bin in API
//! order into quads that go through the pixel pipeline.

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rastra_shader::{ExecError, Resources, TextureBinding, Warp};
use rastra_stats::Counters;
use rastra_texture::{
    CacheConfig, L2Cache, L2Request, Sampler, StorageImage, TexelCacheStats, TextureUnit,
};

use crate::binning::Bins;
use crate::clip::{ClipDecision, ClipSpace, Clipper, classify};
use crate::cores::{account_texels, drain_texture_unit};
use crate::depth::DepthUnit;
use crate::format::IndexFormat;
use crate::format::TextureFormat;
use crate::hiz::{HiZBuffer, HiZMode, block_index, rejects};
use crate::input_assembler::IndexSource;
use crate::interpolate::depth_at;
use crate::link::DepthMode;
use crate::link::RenderPipeline;
use crate::memory::{BufferSlice, Framebuffer, SharedSurface, SurfaceLayout};
use crate::output_merger::Rop;
use crate::pixel::{ColorSurface, PixelPipe};
use crate::primitive::for_each_triangle;
use crate::raster::BLOCK_SIZE;
use crate::raster::{SamplePattern, rasterize};
use crate::setup::{Culled, SetupState, Triangle};
use crate::setup::{PixelRect, SUBPIXEL_BITS};
use crate::state::{Color, ScissorRect, Viewport};
use crate::vertex::{Batch, Batcher, ShadedBatch, VertexShading};
use crate::workers::Workers;

/// A lower and an upper bound of a triangle's depth over the 8×8 block at (bx, by): its
/// depth plane at the block's corners (a plane's extremes over a rectangle are at corners),
/// narrowed by the vertices' range, widened by a margin for f32 rounding.
fn block_depth_range(tri: &Triangle, bx: u32, by: u32) -> (f32, f32) {
    let x0 = (bx as i64) << SUBPIXEL_BITS;
    let y0 = (by as i64) << SUBPIXEL_BITS;
    let side = (BLOCK_SIZE as i64) << SUBPIXEL_BITS;
    let corners = [
        depth_at(tri, x0, y0),
        depth_at(tri, x0 + side, y0),
        depth_at(tri, x0, y0 + side),
        depth_at(tri, x0 + side, y0 + side),
    ];
    let lo = corners.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = corners.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let vlo = tri.z.iter().copied().fold(f32::INFINITY, f32::min);
    let vhi = tri.z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    const MARGIN: f32 = 1.0 / (1 << 20) as f32;
    (lo.max(vlo) - MARGIN, hi.min(vhi) + MARGIN)
}

/// Recomputes a tile's Hi-Z bounds exactly from the stored depths (maxima or minima).
fn refresh_bounds(
    bounds: &mut [f32],
    mode: HiZMode,
    rect: &PixelRect,
    format: TextureFormat,
    surface: &SharedSurface<'_>,
    layout: &SurfaceLayout,
    samples: u32,
) {
    let size = format.texel_size();
    let init = if mode == HiZMode::Max {
        f32::NEG_INFINITY
    } else {
        f32::INFINITY
    };
    bounds.fill(init);
    for y in rect.y0..=rect.y1 {
        for x in rect.x0..=rect.x1 {
            let at = layout.pixel(x, y);
            // SAFETY: the tile's pixels belong to this worker (SharedSurface invariant).
            let texels = unsafe { surface.texels_mut(at, size * samples as usize) };
            let b = &mut bounds[block_index(x, y)];
            for texel in texels.chunks_exact(size) {
                let z = format.decode_depth(texel);
                *b = if mode == HiZMode::Max {
                    b.max(z)
                } else {
                    b.min(z)
                };
            }
        }
    }
}

/// Which vertices a draw reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawRange {
    /// `draw(first..first + count)`.
    Vertices { first: u32, count: u32 },
    /// `draw_indexed(first..first + count, base_vertex)`.
    Indexed {
        first: u32,
        count: u32,
        base_vertex: i32,
    },
}

/// What one shader stage of a draw or dispatch may access, in its `Program`'s binding
/// orders: buffer ranges (as words) for `bindings`, texture views for `textures`, samplers
/// for `samplers`, storage images for `storage_textures`.
#[derive(Clone, Debug, Default)]
pub struct StageResources<'a> {
    pub buffers: Vec<&'a [AtomicU32]>,
    pub textures: Vec<TextureBinding<'a>>,
    pub samplers: Vec<&'a Sampler>,
    pub images: Vec<StorageImage<'a>>,
}

impl StageResources<'_> {
    /// The shader cores' view of these resources.
    pub fn resources(&self) -> Resources<'_> {
        Resources {
            buffers: &self.buffers,
            textures: &self.textures,
            samplers: &self.samplers,
            images: &self.images,
        }
    }

    /// Whether the stage reads any texture (its warps need a texture unit's caches).
    pub fn uses_textures(&self) -> bool {
        !self.textures.is_empty()
    }
}

/// Everything one draw needs, resolved and validated by the API layer.
pub struct DrawCall<'a> {
    pub pipeline: &'a RenderPipeline,
    /// Bound vertex buffers, one per layout slot.
    pub vertex_buffers: Vec<BufferSlice<'a>>,
    pub index_buffer: Option<(BufferSlice<'a>, IndexFormat)>,
    pub range: DrawRange,
    pub instances: Range<u32>,
    /// The vertex shader's buffers, textures and samplers.
    pub vertex_resources: StageResources<'a>,
    /// The fragment shader's buffers, textures and samplers.
    pub fragment_resources: StageResources<'a>,
    pub viewport: Viewport,
    pub scissor: ScissorRect,
    pub blend_constant: Color,
}

/// A draw stopped because a shader misbehaved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DrawError {
    Shader(ExecError),
}

impl fmt::Display for DrawError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DrawError::Shader(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for DrawError {}

impl From<ExecError> for DrawError {
    fn from(e: ExecError) -> Self {
        DrawError::Shader(e)
    }
}

impl FrontEndOutput {
    /// Empties the output after the back end consumed it (keeping allocations).
    fn clear(&mut self) {
        self.triangles.clear();
        self.attrs.clear();
        self.bins.clear();
    }
}

/// What the front end produced for the back end.
struct FrontEndOutput {
    /// The viewport rectangle for per-sample tests, when its edges are fractional.
    viewport_bounds: Option<[crate::setup::Fixed; 4]>,
    triangles: Vec<Triangle>,
    attrs: Vec<u32>,
    bins: Bins,
}

/// Runs one draw: the front end's assembly and batching on the calling thread, its batch
/// groups and the back end's tiles on `workers`.
/// `budget` is the shader instruction budget left for the submission; `l2` is the
/// device's texture L2, shared by every texture unit (see `cores::account_texels`).
pub fn draw(
    call: &DrawCall<'_>,
    fb: &mut Framebuffer<'_>,
    workers: &Workers,
    l2: &mut L2Cache,
    budget: &mut u64,
    counters: &mut Counters,
) -> Result<DrawOutput, DrawError> {
    let (width, height) = (fb.width, fb.height);
    let texel_cache = *l2.config();
    let mut out = DrawOutput::default();
    front_end(
        call,
        width,
        height,
        workers,
        texel_cache,
        budget,
        counters,
        &mut |front, vertex_texels, budget, counters| {
            // The vertex shaders' texel traffic reaches the L2 before the pixels', batch by
            // batch.
            for texels in vertex_texels.drain(..) {
                account_texels(texels, l2, counters);
            }
            out.samples_passed += back_end(call, fb, front, workers, l2, budget, counters)?;
            Ok(())
        },
    )?;
    Ok(out)
}

/// What a draw produces besides its pixels: results the API hands back to the program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawOutput {
    /// Samples that passed every per-sample test (what an occlusion query counts).
    pub samples_passed: u64,
}

/// Triangles the front end sets up before handing them to the back end, which bounds the
/// memory a draw holds however many primitives it has.
const CHUNK_TRIANGLES: usize = 1 << 18;

/// Vertex batches the front end hands to its workers at once: enough to share between
/// threads, few enough that the hand-off and the in-order merge stay cheap.
const GROUP_BATCHES: usize = 64;

/// The texel-cache figures and L2 log of one vertex batch's shader core.
type TexelLog = (TexelCacheStats, Vec<L2Request>);

/// Where the front end hands its output: the back end, which consumes the triangles (and
/// first replays the vertex batches' texel logs, in batch order).
type BackEnd<'s> = dyn FnMut(&FrontEndOutput, &mut Vec<TexelLog>, &mut u64, &mut Counters) -> Result<(), DrawError>
    + 's;

/// Triangles set up from one vertex batch; `Triangle::attrs` index `attrs`.
#[derive(Default)]
struct SetUp {
    triangles: Vec<Triangle>,
    attrs: Vec<u32>,
}

/// What a worker returns for one vertex batch.
struct BatchOutput {
    set_up: SetUp,
    counters: Counters,
    texels: Option<TexelLog>,
    /// Shader instructions the batch issued.
    instructions: u64,
}

/// A worker's shader core for vertex batches, made once per chunk of work it takes.
struct VertexCore {
    warp: Warp,
    shaded: ShadedBatch,
    clipper: Clipper,
    unit: TextureUnit,
}

/// Runs the front end over the whole draw, passing each chunk of set-up triangles (in API
/// order) to `back_end` as it fills.
///
/// Input assembly and batching run on the calling thread (they decide the batches, so the
/// vertex cache's figures do not depend on threads); groups of [`GROUP_BATCHES`] batches are
/// then shaded, clipped and set up by the workers, one batch per job on a shader core whose
/// texel L1 starts empty, and merged back in batch order — triangle numbering, tile bins
/// and statistics come out as if one thread had done it all.
#[allow(clippy::too_many_arguments)]
fn front_end(
    call: &DrawCall<'_>,
    width: u32,
    height: u32,
    workers: &Workers,
    texel_cache: CacheConfig,
    budget: &mut u64,
    counters: &mut Counters,
    back_end: &mut BackEnd<'_>,
) -> Result<(), DrawError> {
    let p = call.pipeline;
    let prim = &p.desc.primitive;
    let clip_space = ClipSpace::new(&call.viewport, prim.unclipped_depth);
    let mut setup = SetupState::new(
        call.viewport,
        call.scissor,
        width,
        height,
        prim.cull_mode,
        prim.front_face,
    );
    if let Some(ds) = &p.desc.depth_stencil {
        setup = setup.with_depth_bias(ds.bias, ds.format);
    }
    let words = p.varying_words as usize;
    // How each attribute word is interpolated (the clipper needs it per word).
    let mut modes = vec![rastra_shader::Interpolation::Perspective; words];
    for v in &p.varyings {
        modes[v.word as usize..(v.word + v.components) as usize].fill(v.interpolation);
    }
    let textured = call.vertex_resources.uses_textures();
    let shading = VertexShading {
        pipeline: p,
        vertex_buffers: &call.vertex_buffers,
        resources: call.vertex_resources.resources(),
        clip_space,
    };
    let (source, count) = match call.range {
        DrawRange::Vertices { first, count } => (IndexSource::Sequential { first }, count),
        DrawRange::Indexed {
            first,
            count,
            base_vertex,
        } => {
            let (data, format) = call
                .index_buffer
                .unwrap_or((BufferSlice::EMPTY, IndexFormat::Uint32));
            (
                IndexSource::Indexed {
                    data,
                    format,
                    first,
                    base_vertex,
                },
                count,
            )
        }
    };

    let mut out = FrontEndOutput {
        viewport_bounds: setup.viewport_bounds,
        triangles: Vec::new(),
        attrs: Vec::new(),
        bins: Bins::new(width, height),
    };
    let mut vertex_texels: Vec<TexelLog> = Vec::new();
    // One batch on a worker's shader core: shade, then clip, cull and set up its triangles.
    // Every batch of a group may use up to the budget left when the group started; the
    // merge charges them in batch order, so exhaustion is decided the same way for any
    // number of threads.
    let run_batch = |core: &mut VertexCore,
                     instance: u32,
                     batch: &Batch,
                     budget: u64|
     -> Result<BatchOutput, ExecError> {
        let mut counters = Counters::default();
        if textured {
            core.unit.invalidate_l1();
        }
        let mut local = budget;
        shading.shade(
            batch,
            instance,
            &mut core.warp,
            &mut core.unit,
            &mut core.shaded,
            &mut local,
            &mut counters,
        )?;
        let mut set_up = SetUp::default();
        for slots in &batch.prims {
            let s = slots.map(|s| s as usize);
            process_triangle(
                &setup,
                &clip_space,
                &mut core.clipper,
                &modes,
                &core.shaded,
                s,
                &mut set_up,
                &mut counters,
            );
        }
        Ok(BatchOutput {
            set_up,
            counters,
            texels: textured.then(|| drain_texture_unit(&mut core.unit)),
            instructions: budget - local,
        })
    };
    // Batches gathered for the workers: (instance, batch); `pending` of them are in use
    // (the rest keep their allocations for reuse).
    let mut group: Vec<(u32, Batch)> = Vec::new();
    let mut pending = 0usize;
    let mut run_group = |group: &[(u32, Batch)],
                         out: &mut FrontEndOutput,
                         vertex_texels: &mut Vec<TexelLog>,
                         budget: &mut u64,
                         counters: &mut Counters|
     -> Result<(), DrawError> {
        let group_budget = *budget;
        let results = workers.map_init(
            group.len(),
            || VertexCore {
                warp: Warp::new(&p.desc.vertex),
                shaded: ShadedBatch::default(),
                clipper: Clipper::default(),
                unit: TextureUnit::with_shared_l2(texel_cache),
            },
            |core, i| run_batch(core, group[i].0, &group[i].1, group_budget),
        );
        for result in results {
            let batch = result?;
            *budget = budget
                .checked_sub(batch.instructions)
                .ok_or(ExecError::BudgetExhausted)?;
            counters.accumulate(&batch.counters);
            vertex_texels.extend(batch.texels);
            let base = out.attrs.len() as u32;
            out.attrs.extend_from_slice(&batch.set_up.attrs);
            for mut tri in batch.set_up.triangles {
                tri.attrs += base;
                let index = out.triangles.len() as u32;
                out.bins.insert(index, &tri.bounds, counters);
                out.triangles.push(tri);
            }
        }
        if out.triangles.len() >= CHUNK_TRIANGLES {
            back_end(out, vertex_texels, budget, counters)?;
            out.clear();
        }
        Ok(())
    };
    let mut error: Option<DrawError> = None;
    for instance in call.instances.clone() {
        let mut batcher = Batcher::default();
        let mut dispatch = |batch: &Batch, counters: &mut Counters| {
            if error.is_some() {
                return;
            }
            match group.get_mut(pending) {
                Some(slot) => {
                    slot.0 = instance;
                    slot.1.clone_from(batch);
                }
                None => group.push((instance, batch.clone())),
            }
            pending += 1;
            if pending == GROUP_BATCHES {
                pending = 0;
                if let Err(e) = run_group(&group, &mut out, &mut vertex_texels, budget, counters) {
                    error = Some(e);
                }
            }
        };
        for_each_triangle(prim.topology, &source, count, counters, |t, counters| {
            batcher.push(t, counters, &mut dispatch)
        });
        batcher.flush(counters, &mut dispatch);
        if let Some(e) = error.take() {
            return Err(e);
        }
    }
    run_group(
        &group[..pending],
        &mut out,
        &mut vertex_texels,
        budget,
        counters,
    )?;
    // The last chunk (possibly empty: the vertex shaders' texel traffic still counts).
    back_end(&out, &mut vertex_texels, budget, counters)
}

/// Clip, cull and set up one assembled triangle (slots into the shaded batch).
#[allow(clippy::too_many_arguments)]
fn process_triangle(
    setup: &SetupState,
    clip_space: &ClipSpace,
    clipper: &mut Clipper,
    modes: &[rastra_shader::Interpolation],
    shaded: &ShadedBatch,
    s: [usize; 3],
    out: &mut SetUp,
    counters: &mut Counters,
) {
    counters.clipping_invocations += 1;
    let codes = s.map(|k| shaded.outcodes[k]);
    match classify(codes) {
        ClipDecision::Reject => counters.culled_frustum += 1,
        ClipDecision::Accept => {
            counters.clipping_primitives += 1;
            let pos = s.map(|k| &shaded.positions[k]);
            let attrs = s.map(|k| shaded.attrs_of(k));
            emit_triangle(setup, pos, attrs, out, counters);
        }
        ClipDecision::Clip => {
            counters.primitives_clipped += 1;
            let pos = s.map(|k| &shaded.positions[k]);
            let attrs = s.map(|k| shaded.attrs_of(k));
            let poly = clipper.clip(clip_space, pos, attrs, codes, modes);
            let w = poly.words;
            for i in 1..poly.len().saturating_sub(1) {
                counters.clipping_primitives += 1;
                let idx = [0, i, i + 1];
                let pos = idx.map(|k| &poly.positions[k]);
                let attrs = idx.map(|k| &poly.attrs[k * w..(k + 1) * w]);
                emit_triangle(setup, pos, attrs, out, counters);
            }
        }
    }
}

fn emit_triangle(
    setup: &SetupState,
    pos: [&[f32; 4]; 3],
    attrs: [&[u32]; 3],
    out: &mut SetUp,
    counters: &mut Counters,
) {
    match setup.setup(pos, out.attrs.len() as u32) {
        Ok(tri) => {
            for k in tri.vertex_order {
                out.attrs.extend_from_slice(attrs[k]);
            }
            counters.triangles_setup += 1;
            out.triangles.push(tri);
        }
        Err(Culled::ZeroArea) => counters.culled_zero_area += 1,
        Err(Culled::BackFace) => counters.culled_backface += 1,
        Err(Culled::OutsideScissor) => counters.culled_scissor += 1,
    }
}

fn back_end(
    call: &DrawCall<'_>,
    fb: &mut Framebuffer<'_>,
    front: &FrontEndOutput,
    workers: &Workers,
    l2: &mut L2Cache,
    budget: &mut u64,
    counters: &mut Counters,
) -> Result<u64, DrawError> {
    let p = call.pipeline;
    if front.triangles.is_empty() {
        return Ok(0);
    }
    let width = fb.width;
    let samples = fb.samples;
    let texel_cache = *l2.config();
    // The surfaces, shared by the tile workers (each writes only inside its own tile).
    let colors: Vec<Option<(Rop, SharedSurface<'_>, SurfaceLayout)>> = fb
        .colors
        .iter_mut()
        .zip(&p.desc.targets)
        .map(|(surface, state)| match (surface, state) {
            (Some(surface), Some(state)) => Some((
                Rop::new(*state, call.blend_constant.to_array()),
                SharedSurface::new(&mut *surface.data),
                surface.layout,
            )),
            _ => None,
        })
        .collect();
    // The depth surface, and hierarchical Z: whether this draw tests against the bounds and
    // whether it must refresh them (it may write depth).
    #[allow(clippy::type_complexity)]
    let (depth, (hiz_test, hiz_refresh, hiz)): (
        Option<(TextureFormat, SharedSurface<'_>, SurfaceLayout)>,
        (bool, bool, Option<&HiZBuffer>),
    ) = match (fb.depth.as_mut(), &p.desc.depth_stencil) {
        (Some(target), Some(ds)) => {
            let crate::memory::DepthTarget {
                format,
                data,
                layout,
                hiz,
            } = target;
            let writes = ds.depth_write_enabled && p.depth_mode != DepthMode::Off;
            let test = hiz.begin_draw(ds.depth_compare, writes)
                && matches!(
                    p.depth_mode,
                    DepthMode::EarlyTestWrite | DepthMode::EarlyTestLateWrite
                );
            let refresh = writes && matches!(hiz.mode, HiZMode::Max | HiZMode::Min);
            (
                Some((*format, SharedSurface::new(data), *layout)),
                (test, refresh, Some(&**hiz)),
            )
        }
        _ => (None, (false, false, None)),
    };
    let depth_range = [
        call.viewport.min_depth.min(call.viewport.max_depth),
        call.viewport.min_depth.max(call.viewport.max_depth),
    ];
    let pattern = SamplePattern::for_count(samples);
    let tiles: Vec<usize> = (0..front.bins.bins.len())
        .filter(|&t| !front.bins.bins[t].is_empty())
        .collect();
    let shared_budget = AtomicU64::new(*budget);
    let textured = call.fragment_resources.uses_textures();
    let new_pipe = || {
        let colors = colors
            .iter()
            .map(|c| {
                c.as_ref().map(|(rop, surface, layout)| ColorSurface {
                    rop: *rop,
                    data: surface,
                    layout: *layout,
                })
            })
            .collect();
        let depth = depth.as_ref().zip(p.desc.depth_stencil.as_ref()).map(
            |((format, surface, layout), ds)| {
                DepthUnit::new(
                    *format,
                    ds.depth_compare,
                    ds.depth_write_enabled,
                    surface,
                    *layout,
                    samples,
                    depth_range,
                )
            },
        );
        PixelPipe::new(
            p,
            call.fragment_resources.resources(),
            &front.triangles,
            &front.attrs,
            call.viewport,
            width,
            colors,
            depth,
            texel_cache,
        )
    };
    let results = workers.map_init(tiles.len(), new_pipe, |pixels, k| {
        let t = tiles[k];
        let rect = front.bins.tile_rect(t);
        let mut counters = Counters {
            tiles_rasterized: 1,
            ..Counters::default()
        };
        // Each tile's pixel work runs on a shader core whose texture L1 starts empty, so
        // the cache figures do not depend on which worker took which tiles.
        if textured {
            pixels.unit.invalidate_l1();
        }
        let start = shared_budget.load(Ordering::Relaxed);
        let mut local = start;
        let mut result = Ok(());
        // This tile's Hi-Z bounds, owned by this worker for the tile's duration.
        let mut bounds = hiz.map(|h| h.tile(t));
        for &index in &front.bins.bins[t] {
            let tri = &front.triangles[index as usize];
            let test = |bx: u32, by: u32| {
                let (Some(h), Some(b), Some(ds), Some((format, _, _))) = (
                    hiz,
                    bounds.as_deref(),
                    p.desc.depth_stencil.as_ref(),
                    depth.as_ref(),
                ) else {
                    return true;
                };
                let (zmin, zmax) = block_depth_range(tri, bx, by);
                let q = |z: f32| format.quantize_depth(z.clamp(depth_range[0], depth_range[1]));
                !rejects(
                    h.mode,
                    ds.depth_compare,
                    b[block_index(bx, by)],
                    zmin,
                    zmax,
                    q,
                )
            };
            rasterize(
                tri,
                &rect,
                &pattern,
                front.viewport_bounds.as_ref(),
                hiz_test.then_some(&test as &dyn Fn(u32, u32) -> bool),
                &mut counters,
                |quad, counters| {
                    if result.is_ok() {
                        result = pixels.push(index, quad, &mut local, counters);
                    }
                },
            );
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = pixels.flush(&mut local, &mut counters);
        }
        let wrote = pixels
            .depth
            .as_mut()
            .is_some_and(|d| std::mem::take(&mut d.wrote));
        if let (true, true, Some(b), Some((format, surface, layout)), Some(h)) = (
            hiz_refresh,
            wrote,
            bounds.as_deref_mut(),
            depth.as_ref(),
            hiz,
        ) {
            refresh_bounds(b, h.mode, &rect, *format, surface, layout, samples);
        }
        drop(bounds);
        let used = start - local;
        let _ = shared_budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
            Some(b.saturating_sub(used))
        });
        let texels = textured.then(|| drain_texture_unit(&mut pixels.unit));
        let passed = std::mem::take(&mut pixels.samples_passed);
        result
            .map(|()| (counters, texels, passed))
            .map_err(DrawError::from)
    });
    // Merged in tile order: the same totals (and the same L2 history) for any number of
    // workers.
    let mut samples_passed = 0;
    for r in results {
        let (tile, texels, passed) = r?;
        counters.accumulate(&tile);
        samples_passed += passed;
        if let Some(texels) = texels {
            account_texels(texels, l2, counters);
        }
    }
    *budget = shared_budget.load(Ordering::Relaxed);
    Ok(samples_passed)
}
