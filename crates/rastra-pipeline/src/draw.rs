//! One draw through the whole pipeline — the part of the command processor that runs a
//! draw (T2/T3 → T9). The front end (`front_end`: input assembly, vertex batches, clip,
//! setup, binning, chunk by chunk on the workers) fills per-chunk triangle storage and tile
//! bins; the back end then walks the tiles, each one independently on any worker,
//! rasterizing its bins in API order into quads that go through the pixel pipeline.

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rastra_shader::{ExecError, Resources, TextureBinding};
use rastra_stats::Counters;
use rastra_texture::{L2Cache, Sampler, StorageImage};

use crate::binning::{ChunkBins, TileLists};
use crate::cores::{account_texels, drain_texture_unit};
use crate::depth::DepthUnit;
use crate::format::IndexFormat;
use crate::format::TextureFormat;
use crate::front_end::{Chunk, FrontEndOutput, front_end};
use crate::hiz::{HiZBuffer, HiZMode, block_index, rejects};
use crate::interpolate::depth_at;
use crate::link::DepthMode;
use crate::link::RenderPipeline;
use crate::memory::{BufferSlice, Framebuffer, SharedSurface, SurfaceLayout};
use crate::output_merger::Rop;
use crate::pixel::{ColorSurface, PixelPipe};
use crate::raster::BLOCK_SIZE;
use crate::raster::{Rasterized, SamplePattern, rasterize};
use crate::setup::Triangle;
use crate::setup::{PixelRect, SUBPIXEL_BITS};
use crate::state::{Color, ScissorRect, Viewport};
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
    let fold = |b: f32, z: f32| {
        if mode == HiZMode::Max {
            b.max(z)
        } else {
            b.min(z)
        }
    };
    let block = BLOCK_SIZE;
    let mut by = rect.y0;
    while by <= rect.y1 {
        let mut bx = rect.x0;
        while bx <= rect.x1 {
            let b = &mut bounds[block_index(bx, by)];
            let whole = bx + block - 1 <= rect.x1 && by + block - 1 <= rect.y1;
            if whole && matches!(format, TextureFormat::Depth32Float) {
                // A whole block is one 8×8 Morton tile of the surface: its pixels' samples
                // are one run of f32 depths (the bound does not depend on the order they
                // are visited in).
                let at = layout.pixel(bx, by);
                let len = (block * block * samples) as usize * size;
                // SAFETY: the tile's pixels belong to this worker (SharedSurface invariant).
                let texels = unsafe { surface.texels_mut(at, len) };
                *b = texels
                    .chunks_exact(4)
                    .map(|t| f32::from_le_bytes([t[0], t[1], t[2], t[3]]))
                    .fold(*b, fold);
            } else {
                for y in by..(by + block).min(rect.y1 + 1) {
                    for x in bx..(bx + block).min(rect.x1 + 1) {
                        let at = layout.pixel(x, y);
                        // SAFETY: the tile's pixels belong to this worker (SharedSurface
                        // invariant).
                        let texels = unsafe { surface.texels_mut(at, size * samples as usize) };
                        for texel in texels.chunks_exact(size) {
                            *b = fold(*b, format.decode_depth(texel));
                        }
                    }
                }
            }
            bx += block;
        }
        by += block;
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

/// Runs one draw: the front end's chunks and the back end's tiles on `workers`.
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
        &mut |front, budget, counters| {
            // The vertex shaders' texel traffic reaches the L2 before the pixels', batch by
            // batch.
            for chunk in front.chunks.iter_mut() {
                for texels in chunk.texels.drain(..) {
                    account_texels(texels, l2, counters);
                }
            }
            out.samples_passed += back_end(call, fb, &front, workers, l2, budget, counters)?;
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

fn back_end(
    call: &DrawCall<'_>,
    fb: &mut Framebuffer<'_>,
    front: &FrontEndOutput<'_>,
    workers: &Workers,
    l2: &mut L2Cache,
    budget: &mut u64,
    counters: &mut Counters,
) -> Result<u64, DrawError> {
    let p = call.pipeline;
    let chunks: &[Chunk] = front.chunks;
    if chunks.iter().all(|c| c.triangles.is_empty()) {
        return Ok(0);
    }
    let words = p.varying_words as usize;
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
    let bins: Vec<&ChunkBins> = chunks.iter().map(|c| &c.bins).collect();
    let lists = TileLists::new(front.grid.count(), &bins);
    let tiles: Vec<usize> = lists.used().collect();
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
            call.viewport,
            width,
            colors,
            depth,
            texel_cache,
        )
    };
    let results = workers.map_init(tiles.len(), new_pipe, |pixels, k| {
        let t = tiles[k];
        let rect = front.grid.tile_rect(t);
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
        let list = lists.tile(t);
        for (n, &(c, index)) in list.iter().enumerate() {
            if let Some(&(c, index)) = list.get(n + PREFETCH_AHEAD) {
                prefetch(&chunks[c as usize].triangles[index as usize]);
            }
            let chunk = &chunks[c as usize];
            let tri = &chunk.triangles[index as usize];
            let attrs = chunk.attrs_of(tri, words);
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
                |raster, counters| {
                    if result.is_ok() {
                        result = match raster {
                            Rasterized::Quad(quad) => {
                                pixels.push(tri, attrs, quad, &mut local, counters)
                            }
                            Rasterized::Block { x, y } => {
                                pixels.push_block(tri, attrs, x, y, &mut local, counters)
                            }
                        };
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

/// How many entries ahead of the one being rasterized a tile's walk asks for a triangle.
/// A tile's triangles were set up long before (a draw's set-up triangles are far larger than
/// the caches) and lie apart in memory: each would otherwise stall the walk on its first
/// read.
const PREFETCH_AHEAD: usize = 4;

/// Asks the memory system for `value`'s cache lines (a hint: no effect on results).
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let start = value as *const T as *const i8;
        let mut offset = 0;
        while offset < std::mem::size_of::<T>() {
            // SAFETY: a prefetch never faults and changes no memory; the addresses lie
            // inside `value`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.add(offset)) };
            offset += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
