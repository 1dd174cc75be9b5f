//! Draws through the whole pipeline — the part of the command processor that runs them
//! (T2/T3 → T9), a batch of consecutive draws at a time (several draws in flight, as
//! OpenSWR keeps several draw contexts). The front end (`front_end`: input assembly, vertex
//! batches, clip, setup, binning, chunk by chunk on the workers, the chunks of every draw
//! of the batch in one stream) fills per-chunk triangle storage and tile bins; the back end
//! then walks the tiles, each one independently on any worker, rasterizing its bins draw
//! after draw, each draw's in API order, into quads that go through that draw's pixel
//! pipeline.

use std::cell::Cell;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rastra_shader::{ExecError, Resources, TextureBinding};
use rastra_stats::Counters;
use rastra_texture::{L2Cache, L2Sets, Sampler, StorageImage};

use crate::binning::{TILE_SIZE, gather_tile, mark_used};
use crate::cores::{TexelLog, account_texel_logs, drain_texture_unit};
use crate::depth::DepthUnit;
use crate::format::IndexFormat;
use crate::format::TextureFormat;
use crate::front_end::{Chunk, ChunkPool, FrontEndOutput, front_end};
use crate::hidden::TileOwners;
use crate::hiz::{HiZBuffer, HiZMode, block_index, fold_depths, rejects};
use crate::interpolate::depth_at;
use crate::link::DepthMode;
use crate::link::RenderPipeline;
use crate::memory::{BufferSlice, Framebuffer, SharedSurface, SurfaceLayout, prefetch_bytes};
use crate::output_merger::Rop;
use crate::pixel::{ColorSurface, PixelPipe};
use crate::raster::BLOCK_SIZE;
use crate::raster::{Rasterized, SamplePattern, rasterize_with};
use crate::setup::Triangle;
use crate::setup::{PixelRect, SUBPIXEL_BITS};
use crate::state::{Color, ScissorRect, Viewport};
use crate::workers::Workers;

/// What a triangle's blocks' depth bounds ([`block_depth_range`]) share, made once per
/// triangle: the lowest and highest depth of its vertices, and the depth plane's change
/// across a block's width and down its height where each lowers (`lower`) or raises
/// (`raise`) it — a plane's extremes over a rectangle are at corners; the side is a power
/// of two, so those changes are exact products.
#[derive(Clone, Copy)]
struct DepthSpan {
    vertices: (f32, f32),
    lower: [f32; 2],
    raise: [f32; 2],
}

impl DepthSpan {
    fn of(tri: &Triangle) -> DepthSpan {
        const SIDE: f32 = (BLOCK_SIZE << SUBPIXEL_BITS) as f32;
        let vlo = tri.z.iter().copied().fold(f32::INFINITY, f32::min);
        let vhi = tri.z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let (across, down) = (tri.planes.z[0] * SIDE, tri.planes.z[1] * SIDE);
        DepthSpan {
            vertices: (vlo, vhi),
            lower: [across.min(0.0), down.min(0.0)],
            raise: [across.max(0.0), down.max(0.0)],
        }
    }
}

/// A lower and an upper bound of a triangle's depth over the 8×8 block at (bx, by): its
/// depth plane at the block's top-left corner plus the changes across the block that lower
/// or raise it ([`DepthSpan`]), narrowed by the vertices' range, widened by a margin for
/// f32 rounding.
#[inline(always)]
fn block_depth_range(tri: &Triangle, span: &DepthSpan, bx: u32, by: u32) -> (f32, f32) {
    let x0 = (bx as i64) << SUBPIXEL_BITS;
    let y0 = (by as i64) << SUBPIXEL_BITS;
    let z = depth_at(tri, x0, y0);
    let lo = z + span.lower[0] + span.lower[1];
    let hi = z + span.raise[0] + span.raise[1];
    const MARGIN: f32 = 1.0 / (1 << 20) as f32;
    let (vlo, vhi) = span.vertices;
    (lo.max(vlo) - MARGIN, hi.min(vhi) + MARGIN)
}

/// Recomputes the Hi-Z bounds of a tile's blocks in `blocks` (bit: block row · 8 + column)
/// exactly from the stored depths (maxima or minima).
#[allow(clippy::too_many_arguments)]
fn refresh_bounds(
    bounds: &[Cell<f32>],
    blocks: u64,
    mode: HiZMode,
    rect: &PixelRect,
    format: TextureFormat,
    surface: &SharedSurface<'_>,
    layout: &SurfaceLayout,
    samples: u32,
) {
    const ACROSS: u32 = TILE_SIZE / BLOCK_SIZE;
    let max = mode == HiZMode::Max;
    let init = if max {
        f32::NEG_INFINITY
    } else {
        f32::INFINITY
    };
    let mut blocks = blocks;
    while blocks != 0 {
        let i = blocks.trailing_zeros();
        blocks &= blocks - 1;
        let (bx, by) = (
            rect.x0 + i % ACROSS * BLOCK_SIZE,
            rect.y0 + i / ACROSS * BLOCK_SIZE,
        );
        let (x1, y1) = (bx + BLOCK_SIZE - 1, by + BLOCK_SIZE - 1);
        let bound = if x1 <= rect.x1 && y1 <= rect.y1 && format == TextureFormat::Depth32Float {
            // A whole block is one 8×8 Morton tile of the surface: its pixels' samples are
            // one run of f32 depths (the bound does not depend on the order they are visited
            // in).
            let at = layout.pixel(bx, by);
            let len = (BLOCK_SIZE * BLOCK_SIZE * samples) as usize * 4;
            // SAFETY: the tile's pixels belong to this worker (SharedSurface invariant).
            fold_depths(max, init, unsafe { surface.texels_mut(at, len) })
        } else {
            let size = format.texel_size();
            let mut b = init;
            for y in by..=y1.min(rect.y1) {
                for x in bx..=x1.min(rect.x1) {
                    let at = layout.pixel(x, y);
                    // SAFETY: the tile's pixels belong to this worker (SharedSurface
                    // invariant).
                    let texels = unsafe { surface.texels_mut(at, size * samples as usize) };
                    for texel in texels.chunks_exact(size) {
                        let z = format.decode_depth(texel);
                        b = if max { b.max(z) } else { b.min(z) };
                    }
                }
            }
            b
        };
        bounds[i as usize].set(bound);
    }
}

/// The blocks of a tile (bit: block row · 8 + column) that hold pixels of its `rect`.
fn rect_blocks(rect: &PixelRect) -> u64 {
    const ACROSS: u32 = TILE_SIZE / BLOCK_SIZE;
    let columns = (rect.x1 - rect.x0) / BLOCK_SIZE + 1;
    let rows = (rect.y1 - rect.y0) / BLOCK_SIZE + 1;
    let row = if columns >= 64 {
        u64::MAX
    } else {
        (1u64 << columns) - 1
    };
    (0..rows).fold(0, |m, r| m | row << (r * ACROSS))
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

/// Runs a batch of draws, in API order, into one framebuffer: the front end's chunks of
/// every draw, then the back end's tiles, each tile walking the draws one after the other
/// (several draws in flight: a batch of small draws shares the workers as one big draw
/// would). `budget` is the shader instruction budget left for the submission; `l2` is the
/// device's texture L2, shared by every texture unit (see `cores::account_texels`); `pool`
/// the device's front-end chunk buffers. `counters` has one entry per draw and receives
/// that draw's statistics: the same figures as running the draws one batch each, except
/// where a draw's triangles reach the back end in several runs (each run counts its tiles
/// again). `remove_hidden`: opaque draws' quads are held in each tile and the ones later
/// quads overwrite are not shaded ([`crate::hidden`]; the same images, fewer shaded pixels).
#[allow(clippy::too_many_arguments)]
pub fn draw_batch(
    calls: &[DrawCall<'_>],
    fb: &mut Framebuffer<'_>,
    workers: &Workers,
    l2: &mut L2Cache,
    pool: &mut ChunkPool,
    budget: &mut u64,
    counters: &mut [Counters],
    remove_hidden: bool,
) -> Result<Vec<DrawOutput>, DrawError> {
    assert_eq!(calls.len(), counters.len(), "one counter table per draw");
    let (width, height) = (fb.width, fb.height);
    let texel_cache = *l2.config();
    let mut out = vec![DrawOutput::default(); calls.len()];
    // The batch is driven from a worker, which then takes part in every step it hands out.
    workers.run(|| {
        front_end(
            calls,
            width,
            height,
            workers,
            texel_cache,
            pool,
            budget,
            counters,
            &mut |front, budget, counters| {
                back_end(
                    calls,
                    fb,
                    front,
                    workers,
                    l2,
                    budget,
                    counters,
                    &mut out,
                    remove_hidden,
                )
            },
        )
    })?;
    Ok(out)
}

/// What a draw produces besides its pixels: results the API hands back to the program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawOutput {
    /// Samples that passed every per-sample test (what an occlusion query counts).
    pub samples_passed: u64,
}

/// One draw's share of a back-end run: its chunks and its depth and Hi-Z set-up.
struct Segment<'c> {
    draw: usize,
    chunks: &'c [Chunk],
    /// Whether the draw tests blocks against the Hi-Z bounds and refreshes them, and what
    /// the bounds mean for it (fixed when its run begins, in API order).
    hiz_test: bool,
    hiz_refresh: bool,
    hiz_mode: HiZMode,
}

/// A back-end worker's state: its pixel pipes (one per draw it meets), the scratch list
/// of a tile's triangles in one draw, and the owners of the tile's pixels among the quads
/// held for hidden-surface removal.
type TileWorker<'a, 'fb> = (
    Vec<Option<Box<PixelPipe<'a, 'fb>>>>,
    Vec<(u32, u32)>,
    TileOwners,
);

/// What one tile produced for one draw: its counters, the pixel texture unit's traffic and
/// the samples that passed.
type TileResult = (usize, Counters, Option<TexelLog>, u64);

#[allow(clippy::too_many_arguments)]
fn back_end(
    calls: &[DrawCall<'_>],
    fb: &mut Framebuffer<'_>,
    front: FrontEndOutput<'_>,
    workers: &Workers,
    l2: &mut L2Cache,
    budget: &mut u64,
    counters: &mut [Counters],
    out: &mut [DrawOutput],
    remove_hidden: bool,
) -> Result<(), DrawError> {
    // The runs of chunks of each draw, in API order.
    let mut runs: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
    for (k, chunk) in front.chunks.iter().enumerate() {
        match runs.last_mut() {
            Some((d, r)) if *d == chunk.draw => r.end = k + 1,
            _ => runs.push((chunk.draw, k..k + 1)),
        }
    }
    // The vertex shaders' texel traffic reaches the L2 before the pixels', draw by draw:
    // taken out of the chunks now, replayed in the merge below.
    let mut vertex_texels: Vec<Vec<TexelLog>> = runs
        .iter()
        .map(|(_, r)| {
            front.chunks[r.clone()]
                .iter_mut()
                .flat_map(|c| c.texels.drain(..))
                .collect()
        })
        .collect();
    let chunks: &[Chunk] = front.chunks;
    let width = fb.width;
    let samples = fb.samples;
    let clear = fb.clear;
    let texel_cache = *l2.config();
    // How the tiles' texel logs are split for the replay's shares, one per worker.
    let l2_split = L2Sets::new(&texel_cache).splitter(workers.threads());
    // The surfaces, shared by the tile workers (each writes only inside its own tile).
    let colors: Vec<Option<(SharedSurface<'_>, SurfaceLayout)>> = fb
        .colors
        .iter_mut()
        .map(|surface| {
            surface
                .as_mut()
                .map(|s| (SharedSurface::new(&mut *s.data), s.layout))
        })
        .collect();
    // The depth surface and hierarchical Z: each draw's test and refresh decided in API
    // order before any tile runs.
    let (depth, hiz): (
        Option<(TextureFormat, SharedSurface<'_>, SurfaceLayout)>,
        Option<&mut HiZBuffer>,
    ) = match fb.depth.as_mut() {
        Some(target) => {
            let crate::memory::DepthTarget {
                format,
                data,
                layout,
                hiz,
            } = target;
            (
                Some((*format, SharedSurface::new(data), *layout)),
                Some(&mut **hiz),
            )
        }
        None => (None, None),
    };
    let mut hiz = hiz;
    let segments: Vec<Segment<'_>> = runs
        .iter()
        .map(|(d, r)| {
            let p = calls[*d].pipeline;
            let (mut hiz_test, mut hiz_refresh, mut hiz_mode) = (false, false, HiZMode::Off);
            // A run whose triangles were all culled reaches no depth test: it leaves the
            // bounds' mode alone.
            let rasterizes = chunks[r.clone()].iter().any(|c| !c.triangles.is_empty());
            if let (true, Some(h), Some(ds), Some(_)) = (
                rasterizes,
                hiz.as_deref_mut(),
                &p.desc.depth_stencil,
                depth.as_ref(),
            ) {
                let writes = ds.depth_write_enabled && p.depth_mode != DepthMode::Off;
                hiz_test = h.begin_draw(ds.depth_compare, writes)
                    && matches!(
                        p.depth_mode,
                        DepthMode::EarlyTestWrite | DepthMode::EarlyTestLateWrite
                    );
                hiz_refresh = writes && matches!(h.mode, HiZMode::Max | HiZMode::Min);
                hiz_mode = h.mode;
            }
            Segment {
                draw: *d,
                chunks: &chunks[r.clone()],
                hiz_test,
                hiz_refresh,
                hiz_mode,
            }
        })
        .collect();
    let hiz: Option<&HiZBuffer> = hiz.map(|h| &*h);
    // Every tile some draw of the run has triangles in, in tile order.
    let mut used = vec![0u64; front.grid.count().div_ceil(64)];
    for chunk in segments.iter().flat_map(|s| s.chunks) {
        mark_used(&mut used, &chunk.bins);
    }
    let tiles: Vec<usize> = (0..front.grid.count())
        .filter(|&t| used[t / 64] >> (t % 64) & 1 != 0)
        .collect();
    let pattern = SamplePattern::for_count(samples);
    let shared_budget = AtomicU64::new(*budget);
    // Takes a tile's use of the shader instruction budget from what is left.
    let charge = |used: u64| {
        let _ = shared_budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
            Some(b.saturating_sub(used))
        });
    };
    // Draw `d`'s pixel pipeline on a worker, made the first time the worker meets the draw.
    let new_pipe = |d: usize| {
        let call = &calls[d];
        let p = call.pipeline;
        let depth_range = call.viewport.depth_range();
        // Hidden-surface removal drops held quads' writes to every colour surface: only for
        // a pipeline with a target state for each.
        let every_target = (0..colors.len())
            .all(|k| colors[k].is_none() || p.desc.targets.get(k).is_some_and(|t| t.is_some()));
        let colors: Vec<Option<ColorSurface<'_>>> = colors
            .iter()
            .zip(&p.desc.targets)
            .map(|(c, state)| match (c, state) {
                (Some((surface, layout)), Some(state)) => Some(ColorSurface {
                    rop: Rop::new(*state, call.blend_constant.to_array()),
                    data: surface,
                    layout: *layout,
                }),
                _ => None,
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
            call.viewport,
            width,
            colors,
            depth,
            texel_cache,
            remove_hidden && every_target,
        )
    };
    let results = if tiles.is_empty() {
        Vec::new()
    } else {
        workers.map_init(
            tiles.len(),
            // A worker's pixel pipes, one per draw it meets, boxed: a batch may hold a
            // thousand draws, and a worker makes the table once. And the list of the tile's
            // triangles in the draw at hand, gathered from the chunks' bins.
            || -> TileWorker<'_, '_> {
                (
                    segments.iter().map(|_| None).collect(),
                    Vec::new(),
                    TileOwners::default(),
                )
            },
            |(pipes, list, owners), k| -> Result<Vec<TileResult>, DrawError> {
                let t = tiles[k];
                let rect = front.grid.tile_rect(t);
                // The tile's blocks whose bytes were asked for (bit: block row · 8 + column):
                // each once per tile, when the Hi-Z test first passes it.
                let prefetched = Cell::new(0u64);
                // A pending fast clear reaches this tile's memory now, on the worker that
                // owns it, just before its first triangle (counted with that draw).
                let mut cleared = clear.is_some_and(|c| {
                    c.fill_tile(
                        t,
                        &colors,
                        depth.as_ref().map(|(_, s, _)| s),
                        depth.as_ref().map(|(_, _, l)| l),
                    )
                });
                // This tile's Hi-Z bounds, owned by this worker for the tile's duration.
                let mut bounds = hiz.map(|h| h.tile(t));
                // The tile's draws, each with its counters; the texel logs and the samples
                // passed are taken once the tile is done (held quads are shaded last).
                let mut tile_results: Vec<TileResult> = Vec::new();
                // Whether some draw's pipe holds quads for hidden-surface removal.
                let mut holding = false;
                for (s, seg) in segments.iter().enumerate() {
                    list.clear();
                    gather_tile(seg.chunks.iter().map(|c| &c.bins), t, list);
                    if list.is_empty() {
                        continue;
                    }
                    let call = &calls[seg.draw];
                    let p = call.pipeline;
                    let words = p.varying_words as usize;
                    let textured = call.fragment_resources.uses_textures();
                    let holds = pipes[s]
                        .get_or_insert_with(|| Box::new(new_pipe(seg.draw)))
                        .holds();
                    let start = shared_budget.load(Ordering::Relaxed);
                    let mut local = start;
                    // A draw whose quads are not held must see the held ones' colours (and
                    // cannot take their pixels): they are shaded first.
                    let mut result = if holding && !holds {
                        holding = false;
                        release_held(pipes, &mut tile_results, None, owners, &mut local)
                    } else {
                        Ok(())
                    };
                    let mut pixels = pipes[s].as_deref_mut().expect("made above");
                    let mut counters = Counters {
                        tiles_rasterized: 1,
                        fast_clear_tiles: std::mem::take(&mut cleared) as u64,
                        ..Counters::default()
                    };
                    // Each tile's pixel work runs on a shader core whose texture L1 starts
                    // empty, so the cache figures do not depend on which worker took which
                    // tiles.
                    if textured {
                        pixels.unit.invalidate_l1();
                    }
                    let depth_range = call.viewport.depth_range();
                    // What the Hi-Z test needs besides the block, fixed for the draw: the
                    // tile's bounds, the compare and the depth format (its quantisation
                    // only for unorm depth: 32-bit float depth is stored as it is).
                    let hiz_check = match (
                        bounds.as_deref_mut(),
                        p.desc.depth_stencil.as_ref(),
                        depth.as_ref(),
                    ) {
                        (Some(b), Some(ds), Some(target)) => Some((
                            Cell::from_mut(b.as_mut_slice()).as_slice_of_cells(),
                            ds.depth_compare,
                            target,
                            !matches!(
                                target.0,
                                TextureFormat::Depth32Float | TextureFormat::Depth32FloatStencil8
                            ),
                        )),
                        _ => None,
                    };
                    // Blocks whose bound may be above (below) their stored depths' maximum
                    // (minimum) because this draw reached them after the bound was made: a
                    // draw that tests and writes depth only lowers (raises) depths, so the
                    // old bound is still conservative, and one the test does not reject
                    // with it is made again, exactly, before it is tested a second time —
                    // the draw's own earlier triangles then hide later ones block by block
                    // (T7: the hierarchical Z buffer follows the depth buffer's updates).
                    let live_refresh = seg.hiz_test && seg.hiz_refresh;
                    let stale = Cell::new(0u64);
                    // Refreshes come every `interval` triangles: the shortest while they let
                    // the test reject blocks, twice as far apart after a round that did not
                    // (where no triangle hides another — scattered small ones over a block
                    // not yet covered whole — remaking the bounds only costs).
                    let rejected = Cell::new(false);
                    let mut interval = HIZ_REFRESH_TRIANGLES;
                    let mut next_refresh = interval;
                    for (n, &(c, index)) in list.iter().enumerate() {
                        if result.is_err() {
                            break;
                        }
                        if let Some(&(c, index)) = list.get(n + PREFETCH_AHEAD) {
                            prefetch(&seg.chunks[c as usize].triangles[index as usize]);
                        }
                        // Its vertices' varying words, once the triangle (asked for
                        // earlier) says where they are.
                        if let Some(&(c, index)) = list.get(n + PREFETCH_AHEAD / 2) {
                            let chunk = &seg.chunks[c as usize];
                            prefetch_slice(chunk.attrs_of(&chunk.triangles[index as usize], words));
                        }
                        let chunk = &seg.chunks[c as usize];
                        let tri = &chunk.triangles[index as usize];
                        let attrs = chunk.attrs_of(tri, words);
                        let span = DepthSpan::of(tri);
                        // The hierarchical Z test of a block, run before its fine
                        // rasterization; a block it passes has its depth and colour bytes
                        // asked for at once (its quads' early-Z tests and ROP writes follow)
                        // the first time in the tile — later they are in the cache already
                        // (asking again cost about 90 instructions a block: 8% of
                        // small_triangles' frame).
                        let test = |bx: u32, by: u32| {
                            let i = block_index(bx, by);
                            let bit = 1u64 << i;
                            let pass = match hiz_check {
                                Some((b, compare, (format, _, _), quantized)) => {
                                    let (zmin, zmax) = block_depth_range(tri, &span, bx, by);
                                    let q = |z: f32| {
                                        let z = z.clamp(depth_range[0], depth_range[1]);
                                        if quantized {
                                            format.quantize_depth(z)
                                        } else {
                                            z
                                        }
                                    };
                                    let reject =
                                        rejects(seg.hiz_mode, compare, b[i].get(), zmin, zmax, q);
                                    if reject {
                                        rejected.set(true);
                                    }
                                    !reject
                                }
                                None => true,
                            };
                            if pass {
                                if live_refresh {
                                    stale.set(stale.get() | bit);
                                }
                                if prefetched.get() & bit == 0 {
                                    prefetched.set(prefetched.get() | bit);
                                    prefetch_block(depth.as_ref(), &colors, bx, by);
                                }
                            }
                            pass
                        };
                        rasterize_with(
                            tri,
                            &rect,
                            &pattern,
                            front.viewport_bounds[seg.draw].as_ref(),
                            seg.hiz_test.then_some(&test),
                            &mut counters,
                            |raster, counters| {
                                if result.is_ok() {
                                    result = match raster {
                                        Rasterized::Quads(quads) => pixels
                                            .push(tri, attrs, quads, owners, &mut local, counters),
                                        Rasterized::Block { x, y } => pixels.push_block(
                                            tri, attrs, x, y, owners, &mut local, counters,
                                        ),
                                    };
                                }
                            },
                        );
                        if result.is_err() {
                            break;
                        }
                        // Held quads are bounded: past the limit, this draw's and every
                        // earlier one's are shaded.
                        if owners.held() >= HELD_QUADS_MAX {
                            result = release_held(
                                pipes,
                                &mut tile_results,
                                Some((s, &mut counters)),
                                owners,
                                &mut local,
                            );
                            pixels = pipes[s].as_deref_mut().expect("made above");
                        }
                        if live_refresh && n + 1 == next_refresh {
                            if let Some((b, _, (format, surface, layout), _)) = hiz_check {
                                let (mode, blocks) = (seg.hiz_mode, stale.replace(0));
                                refresh_bounds(
                                    b, blocks, mode, &rect, *format, surface, layout, samples,
                                );
                            }
                            interval = if rejected.replace(false) {
                                HIZ_REFRESH_TRIANGLES
                            } else {
                                (interval * 2).min(HIZ_REFRESH_MAX)
                            };
                            next_refresh += interval;
                        }
                    }
                    if result.is_ok() {
                        result = pixels.flush(&mut local, &mut counters);
                    }
                    holding |= pixels.is_holding();
                    let wrote = pixels
                        .depth
                        .as_mut()
                        .is_some_and(|d| std::mem::take(&mut d.wrote));
                    if let (true, true, Some(b), Some((format, surface, layout))) = (
                        seg.hiz_refresh,
                        wrote,
                        bounds.as_deref_mut(),
                        depth.as_ref(),
                    ) {
                        let b = Cell::from_mut(b.as_mut_slice()).as_slice_of_cells();
                        let (mode, blocks) = (seg.hiz_mode, rect_blocks(&rect));
                        refresh_bounds(b, blocks, mode, &rect, *format, surface, layout, samples);
                    }
                    charge(start - local);
                    if let Err(e) = result {
                        abandon_held(pipes, owners);
                        return Err(e.into());
                    }
                    tile_results.push((s, counters, None, 0));
                }
                // The held quads last, then what each draw's pixel pipe gathered.
                let start = shared_budget.load(Ordering::Relaxed);
                let mut local = start;
                if holding {
                    let result = release_held(pipes, &mut tile_results, None, owners, &mut local);
                    charge(start - local);
                    if let Err(e) = result {
                        abandon_held(pipes, owners);
                        return Err(e.into());
                    }
                }
                for (s, _, texels, passed) in &mut tile_results {
                    let pixels = pipes[*s].as_deref_mut().expect("made for the tile");
                    // (Split by share of the L2's sets here, on the tile's worker: the
                    // replay's shares then each read only their own requests.)
                    if calls[segments[*s].draw].fragment_resources.uses_textures() {
                        *texels = Some(drain_texture_unit(&mut pixels.unit, Some(&l2_split)));
                    }
                    *passed = std::mem::take(&mut pixels.samples_passed);
                }
                Ok(tile_results)
            },
        )
    };
    // Merged draw by draw, each in tile order: the same totals (and the same L2 history)
    // for any number of workers.
    let mut results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    // A tile's entries are in segment order: one cursor per tile. The texture units' logs
    // in that order too, replayed into the L2 at the end.
    let mut next = vec![0usize; results.len()];
    let mut texel_logs = Vec::new();
    for (s, seg) in segments.iter().enumerate() {
        let d = seg.draw;
        for texels in vertex_texels[s].drain(..) {
            texel_logs.push((d, texels));
        }
        for (tile, at) in results.iter_mut().zip(&mut next) {
            let Some((ts, tile_counters, texels, passed)) = tile.get_mut(*at) else {
                continue;
            };
            if *ts != s {
                continue;
            }
            *at += 1;
            counters[d].accumulate(tile_counters);
            out[d].samples_passed += *passed;
            if let Some(texels) = texels.take() {
                texel_logs.push((d, texels));
            }
        }
    }
    account_texel_logs(texel_logs, l2, workers, counters);
    *budget = shared_budget.load(Ordering::Relaxed);
    Ok(())
}

/// The most quads a tile holds for hidden-surface removal (over all its draws) before it
/// shades them (each 48 bytes: 16 Ki of them are a tile's quads sixteen times over).
const HELD_QUADS_MAX: usize = 16 * 1024;

/// Shades the quads the tile's pipes hold ([`PixelPipe::release_held`]), in API order:
/// those of the draws done in this tile (`done`, in draw order, each with its counters),
/// then those of the draw at hand (`current`, when it holds some), and numbers the tile's
/// owners afresh.
fn release_held(
    pipes: &mut [Option<Box<PixelPipe<'_, '_>>>],
    done: &mut [TileResult],
    current: Option<(usize, &mut Counters)>,
    owners: &mut TileOwners,
    budget: &mut u64,
) -> Result<(), ExecError> {
    for (s, counters, _, _) in done.iter_mut() {
        if let Some(pixels) = pipes[*s].as_deref_mut() {
            pixels.release_held(owners, budget, counters)?;
        }
    }
    if let Some((s, counters)) = current
        && let Some(pixels) = pipes[s].as_deref_mut()
    {
        pixels.release_held(owners, budget, counters)?;
    }
    owners.restart();
    Ok(())
}

/// Drops the quads a failed tile's pipes still hold, unshaded: the draw has failed, and the
/// worker's next tile must start with none.
fn abandon_held(pipes: &mut [Option<Box<PixelPipe<'_, '_>>>], owners: &mut TileOwners) {
    for pixels in pipes.iter_mut().flatten() {
        pixels.abandon_held();
    }
    owners.restart();
}

/// How many of a tile's triangles in a draw that tests and writes depth are rasterized
/// between two refreshes of the Hi-Z bounds of the blocks they reached, while the refreshed
/// bounds let the test reject blocks (32: measured against 16, 64 and 128 on the model and
/// small_triangles), and the most it grows to while they do not.
const HIZ_REFRESH_TRIANGLES: usize = 32;
const HIZ_REFRESH_MAX: usize = 1024;

/// How many entries ahead of the one being rasterized a tile's walk asks for a triangle.
/// A tile's triangles were set up long before (a draw's set-up triangles are far larger than
/// the caches) and lie apart in memory: each would otherwise stall the walk on its first
/// read.
const PREFETCH_AHEAD: usize = 4;

/// Asks for the bytes of the 8×8 block at (bx, by) — one Morton tile, contiguous — of the
/// depth surface and every colour surface (a hint: no effect on results).
// (A tile's blocks fit the 64-bit mask of those already asked for.)
const _: () = assert!((TILE_SIZE / BLOCK_SIZE) * (TILE_SIZE / BLOCK_SIZE) <= 64);
#[inline(always)]
fn prefetch_block(
    depth: Option<&(TextureFormat, SharedSurface<'_>, SurfaceLayout)>,
    colors: &[Option<(SharedSurface<'_>, SurfaceLayout)>],
    bx: u32,
    by: u32,
) {
    let block = |surface: &SharedSurface<'_>, layout: &SurfaceLayout| {
        surface.prefetch(
            layout.pixel(bx, by),
            (BLOCK_SIZE * BLOCK_SIZE) as usize * layout.pixel_bytes,
        );
    };
    // The depth surface, then the colour targets (no chained iterator: this runs for
    // every block the Hi-Z test passes).
    if let Some((_, surface, layout)) = depth {
        block(surface, layout);
    }
    for (surface, layout) in colors.iter().flatten() {
        block(surface, layout);
    }
}

/// Asks the memory system for `value`'s cache lines (a hint: no effect on results).
#[inline(always)]
fn prefetch<T>(value: &T) {
    prefetch_bytes(value as *const T as *const u8, std::mem::size_of::<T>());
}

/// [`prefetch`] for the elements of a slice.
#[inline(always)]
fn prefetch_slice<T>(values: &[T]) {
    prefetch_bytes(values.as_ptr() as *const u8, std::mem::size_of_val(values));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raster::{PATTERN_1X, PATTERN_4X, pixel_coverage};
    use crate::setup::SUBPIXEL_BITS;
    use crate::test_support::{setup_state, unit_values};

    /// Every covered sample's depth — computed as the pixel pipe computes it — lies inside
    /// the bounds the Hi-Z test takes for its block, for triangles of every size and slope
    /// (so a block the test rejects holds no sample that could pass).
    #[test]
    fn block_depth_bounds_hold_every_sample() {
        let (w, h) = (256u32, 256u32);
        let setup = setup_state(w, h);
        let mut next = unit_values(0x2545_f491);
        let mut samples = 0u64;
        for t in 0..600 {
            let spread = [6.0, 60.0, 400.0][t % 3];
            let (cx, cy) = (next() * 300.0 - 20.0, next() * 300.0 - 20.0);
            let p: [[f32; 4]; 3] = std::array::from_fn(|_| {
                let (x, y) = (cx + (next() - 0.5) * spread, cy + (next() - 0.5) * spread);
                // Steep and shallow depth planes, some of them in perspective.
                let z = if t % 4 == 0 {
                    next()
                } else {
                    0.3 + next() * 0.01
                };
                let cw = if t % 2 == 0 { 1.0 } else { 0.5 + next() * 4.0 };
                let ndc = [2.0 * x / w as f32 - 1.0, 1.0 - 2.0 * y / h as f32];
                [ndc[0] * cw, ndc[1] * cw, z * cw, cw]
            });
            let Ok(tri) = setup.setup([&p[0], &p[1], &p[2]], 0) else {
                continue;
            };
            let span = DepthSpan::of(&tri);
            let b = tri.bounds;
            for by in (b.y0 / BLOCK_SIZE * BLOCK_SIZE..=b.y1).step_by(BLOCK_SIZE as usize) {
                for bx in (b.x0 / BLOCK_SIZE * BLOCK_SIZE..=b.x1).step_by(BLOCK_SIZE as usize) {
                    let (lo, hi) = block_depth_range(&tri, &span, bx, by);
                    for pattern in [&PATTERN_1X, &PATTERN_4X] {
                        for (px, py) in (0..BLOCK_SIZE * BLOCK_SIZE)
                            .map(|i| (bx + i % BLOCK_SIZE, by + i / BLOCK_SIZE))
                        {
                            let cov = pixel_coverage(&tri, px, py, pattern);
                            for s in (0..pattern.count as usize).filter(|s| cov >> s & 1 != 0) {
                                let [ox, oy] = pattern.offsets[s];
                                let x = ((px as i64) << SUBPIXEL_BITS) + ox;
                                let y = ((py as i64) << SUBPIXEL_BITS) + oy;
                                let z = depth_at(&tri, x, y);
                                assert!(
                                    lo <= z && z <= hi,
                                    "triangle {t}, pixel ({px}, {py}) sample {s}: {z} outside [{lo}, {hi}]"
                                );
                                samples += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(samples > 100_000, "only {samples} samples checked");
    }
}
