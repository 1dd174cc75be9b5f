//! The front end of a batch of draws, spread over the workers (BRIEF "Work distribution";
//! OpenSWR's draws split into chunks any worker runs; the primitive distributor of
//! T5/T6-era GPUs that hands batches to several geometry front ends).
//!
//! Each draw's primitive stream — every instance's positions (list triangles or strip
//! indices, see [`Assembly`]) one after the other — is cut into chunks of
//! [`CHUNK_POSITIONS`]; the chunks of the batch's draws, draw after draw, form one stream of
//! jobs. A chunk is one job for any worker: input assembly, vertex batches (a chunk starts a
//! new batch; the instances inside a chunk share batches, see [`crate::vertex`]), vertex
//! shading on the worker's shader core, clipping, setup, and binning of its triangles into
//! its own tile bins. The cuts are fixed by positions, never by threads, so the batches,
//! the statistics and the triangles are the same however many workers there are.
//!
//! Chunks run in groups of [`GROUP_CHUNKS`] (a group may span draws); a group's results are
//! merged in chunk order (statistics, the shader budget). Once [`BACK_END_TRIANGLES`]
//! triangles have been set up or [`BACK_END_CHUNKS`] chunks are ready (and at the end), the
//! back end consumes the chunks' triangles tile by tile, reading each tile's bins chunk
//! after chunk — API order — so the triangles are never copied into one list and a batch's
//! memory stays bounded whatever its size.
//!
//! The chunks' buffers outlive the batch in the device's [`ChunkPool`]: the next batch
//! writes its triangles into memory that is already mapped. (Fresh buffers every frame
//! were three quarters of small_triangles' page faults — 83k a run of four frames against
//! 26k with memory kept — each a kernel entry and a 4 KiB zero fill.)

use std::sync::atomic::{AtomicUsize, Ordering};

use rastra_shader::{ExecError, Warp};
use rastra_stats::Counters;
use rastra_texture::{CacheConfig, TextureUnit};

use crate::binning::{ChunkBins, TileGrid};
use crate::clip::{ClipDecision, ClipSpace, Clipper, classify};
use crate::cores::{TexelLog, drain_texture_unit};
use crate::draw::{DrawCall, DrawError, DrawRange};
use crate::format::IndexFormat;
use crate::input_assembler::IndexSource;
use crate::memory::BufferSlice;
use crate::primitive::Assembly;
use crate::raster::SamplePattern;
use crate::setup::{Culled, Fixed, Projected, SetupState, Triangle};
use crate::vertex::{Batch, Batcher, ShadedBatch, VertexShading};
use crate::workers::Workers;

/// Positions (list triangles, strip indices) per chunk: enough work to be worth handing to
/// a worker, few enough for a busy draw to have many.
pub const CHUNK_POSITIONS: u32 = 1024;

/// Chunks handed to the workers at once: a fixed number, so budget exhaustion is decided
/// the same way for any number of threads. The workers wait for each other at the end of
/// every group, so groups are as long as a back-end run: a frame of many small draws (the
/// model's 116 draws, 196 chunks) then has one such wait, not thirteen (measured on the
/// model at two threads, five and six alternating runs: groups of 16 chunks 25.8 ms,
/// of 64 25.1 and 25.3, of 256 25.2).
const GROUP_CHUNKS: usize = BACK_END_CHUNKS;

/// Set-up triangles the front end accumulates before the back end runs, which bounds the
/// memory a draw holds however many primitives it has.
const BACK_END_TRIANGLES: usize = 1 << 18;

/// Chunks the front end accumulates before the back end runs, however few triangles they
/// set up (a draw whose primitives are mostly culled still holds a bounded number of chunk
/// records, and the back end's per-tile walk over the chunks stays short).
const BACK_END_CHUNKS: usize = 256;

/// The front end's chunk records with their buffers (triangles, varying words, bins), kept
/// from one batch to the next by the device. At most [`BACK_END_CHUNKS`] +
/// [`GROUP_CHUNKS`] chunks, each holding what one chunk of [`CHUNK_POSITIONS`] positions
/// set up (at most eight triangles per primitive: seven clip planes make a polygon of up to
/// ten vertices) — so the pool is bounded however big a batch is.
#[derive(Default)]
pub struct ChunkPool {
    chunks: Vec<Chunk>,
}

/// What the front end produced for one chunk of a draw.
#[derive(Default)]
pub struct Chunk {
    /// The draw the chunk belongs to (its index in the batch).
    pub draw: usize,
    /// The chunk's set-up triangles, in submission order; `Triangle::attrs` indexes `attrs`.
    pub triangles: Vec<Triangle>,
    /// Three vertices' varying words per triangle, in the triangle's vertex order.
    pub attrs: Vec<u32>,
    pub bins: ChunkBins,
    /// The vertex batches' texel traffic, batch by batch.
    pub texels: Vec<TexelLog>,
    counters: Counters,
    /// Shader instructions the chunk issued.
    instructions: u64,
    error: Option<ExecError>,
}

impl Chunk {
    /// The varying words of `tri`'s three vertices (`words` per vertex).
    #[inline]
    pub fn attrs_of(&self, tri: &Triangle, words: usize) -> &[u32] {
        let base = tri.attrs as usize;
        &self.attrs[base..base + 3 * words]
    }

    fn clear(&mut self, draw: usize) {
        self.draw = draw;
        self.triangles.clear();
        self.attrs.clear();
        self.bins.clear();
        self.texels.clear();
        self.counters = Counters::default();
        self.instructions = 0;
        self.error = None;
    }
}

/// What the back end receives: a run of chunks, in API order — the chunks of one or more
/// consecutive draws of the batch (`Chunk::draw` never decreases along the run).
pub struct FrontEndOutput<'c> {
    /// Per draw of the batch: the viewport rectangle for per-sample tests, when its edges
    /// are fractional.
    pub viewport_bounds: &'c [Option<[Fixed; 4]>],
    pub grid: TileGrid,
    pub chunks: &'c mut [Chunk],
}

/// Where the front end hands its output: the back end, which consumes the chunks' triangles
/// (and first replays the vertex batches' texel logs, in order). The counters are the
/// batch's, one per draw.
pub type BackEnd<'s> =
    dyn FnMut(FrontEndOutput<'_>, &mut u64, &mut [Counters]) -> Result<(), DrawError> + 's;

/// A worker's vertex front end, made once per worker and batch of chunks: a batcher and a
/// shader core with the clipper behind it (its register file sized per draw's program).
struct VertexCore {
    batcher: Batcher,
    warps: Vec<Option<Warp>>,
    core: ShaderCore,
}

/// A shader core for vertex batches and the clipper that takes its output.
struct ShaderCore {
    shaded: ShadedBatch,
    clipper: Clipper,
    unit: TextureUnit,
}

/// One draw's part of the front end: what its chunks need.
struct DrawFront<'c> {
    call: &'c DrawCall<'c>,
    clip_space: ClipSpace,
    setup: SetupState,
    /// How each attribute word is interpolated (the clipper needs it per word).
    modes: Vec<rastra_shader::Interpolation>,
    textured: bool,
    shading: VertexShading<'c>,
    assembly: Assembly<'c>,
    /// Positions per instance and in the whole draw.
    per_instance: u64,
    total: u64,
}

impl<'c> DrawFront<'c> {
    fn new(call: &'c DrawCall<'c>, width: u32, height: u32) -> DrawFront<'c> {
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
        let setup = setup.with_samples(&SamplePattern::for_count(p.samples()));
        let words = p.varying_words as usize;
        let mut modes = vec![rastra_shader::Interpolation::Perspective; words];
        for v in &p.varyings {
            modes[v.word as usize..(v.word + v.components) as usize].fill(v.interpolation);
        }
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
        let assembly = Assembly::new(prim.topology, source, count);
        let per_instance = assembly.positions() as u64;
        DrawFront {
            call,
            clip_space,
            setup,
            modes,
            textured: call.vertex_resources.uses_textures(),
            shading,
            assembly,
            per_instance,
            total: per_instance * call.instances.len() as u64,
        }
    }

    fn chunk_count(&self) -> u64 {
        self.total.div_ceil(CHUNK_POSITIONS as u64)
    }

    /// One vertex batch on a worker's shader core: shade, then clip, cull and set up its
    /// triangles into the chunk.
    fn run_batch(
        &self,
        warp: &mut Warp,
        core: &mut ShaderCore,
        batch: &Batch,
        chunk: &mut ChunkParts<'_>,
        counters: &mut Counters,
    ) -> Result<(), ExecError> {
        let ShaderCore {
            shaded,
            clipper,
            unit,
        } = core;
        if self.textured {
            unit.invalidate_l1();
        }
        self.shading
            .shade(batch, warp, unit, shaded, chunk.budget, counters)?;
        // Every slot projected once, however many triangles share it.
        self.setup
            .project_all(&shaded.positions, &mut shaded.projected);
        for slots in &batch.prims {
            let s = slots.map(|s| s as usize);
            process_triangle(
                &self.setup,
                &self.clip_space,
                clipper,
                &self.modes,
                shaded,
                s,
                chunk,
                counters,
            );
        }
        if self.textured {
            chunk.texels.push(drain_texture_unit(unit, None));
        }
        Ok(())
    }

    /// Chunk `c` of the draw: its positions, instance by instance, through batching and
    /// `run_batch` on `vertex` (the draw's index in the batch is `d`), then binning. The
    /// chunk may use up to `start_budget` instructions.
    fn run_chunk(
        &self,
        d: usize,
        grid: &TileGrid,
        vertex: &mut VertexCore,
        c: u64,
        chunk: &mut Chunk,
        start_budget: u64,
    ) {
        let VertexCore {
            batcher,
            warps,
            core,
        } = vertex;
        let warp = warps[d].get_or_insert_with(|| Warp::new(&self.call.pipeline.desc.vertex));
        let words = self.call.pipeline.varying_words as usize;
        let mut local = start_budget;
        let Chunk {
            triangles,
            attrs,
            bins,
            texels,
            counters,
            error,
            ..
        } = chunk;
        let mut flat = c * CHUNK_POSITIONS as u64;
        let end = (flat + CHUNK_POSITIONS as u64).min(self.total);
        // A position ends at most one triangle (clipping aside): room for all of them
        // at once (grown by doubling, every chunk's triangles were copied over and over —
        // 2% of a draw of small triangles).
        let most = (end - flat) as usize;
        triangles.reserve(most);
        attrs.reserve(most * 3 * words);
        bins.reserve(most);
        {
            let mut out = ChunkParts {
                triangles,
                attrs,
                texels,
                budget: &mut local,
            };
            let mut dispatch = |batch: &Batch, counters: &mut Counters| {
                if error.is_none()
                    && let Err(e) = self.run_batch(warp, core, batch, &mut out, counters)
                {
                    *error = Some(e);
                }
            };
            while flat < end {
                let instance = self.call.instances.start + (flat / self.per_instance) as u32;
                let pos = flat % self.per_instance;
                let take = (self.per_instance - pos).min(end - flat);
                batcher.begin_instance(instance);
                self.assembly
                    .walk(pos as u32..(pos + take) as u32, counters, |t, counters| {
                        batcher.push(t, counters, &mut dispatch)
                    });
                flat += take;
            }
            batcher.flush(counters, &mut dispatch);
        }
        for (i, tri) in triangles.iter().enumerate() {
            bins.insert(grid, i as u32, &tri.bounds, counters);
        }
        bins.sort(grid.count());
        chunk.instructions = start_budget - local;
    }
}

/// Runs the front end over a batch of draws (in API order), passing runs of chunks to
/// `back_end` as set-up triangles accumulate, and once at the end. The chunks of every
/// draw of the batch are one stream of jobs: the workers take them in groups whatever draw
/// they belong to, so a batch of small draws keeps every worker busy. `counters` has one
/// entry per draw. The chunks' buffers come from `pool` and go back to it.
#[allow(clippy::too_many_arguments)]
pub fn front_end(
    calls: &[DrawCall<'_>],
    width: u32,
    height: u32,
    workers: &Workers,
    texel_cache: CacheConfig,
    pool: &mut ChunkPool,
    budget: &mut u64,
    counters: &mut [Counters],
    back_end: &mut BackEnd<'_>,
) -> Result<(), DrawError> {
    let grid = TileGrid::new(width, height);
    let draws: Vec<DrawFront<'_>> = calls
        .iter()
        .map(|call| DrawFront::new(call, width, height))
        .collect();
    let viewport_bounds: Vec<Option<[Fixed; 4]>> =
        draws.iter().map(|d| d.setup.viewport_bounds).collect();
    // Every chunk of the batch as (draw, chunk of the draw), in API order.
    let jobs: Vec<(usize, u64)> = draws
        .iter()
        .enumerate()
        .flat_map(|(d, draw)| (0..draw.chunk_count()).map(move |c| (d, c)))
        .collect();

    // Chunks waiting for the back end (`ready` of them; the rest keep their allocations).
    let chunks = &mut pool.chunks;
    let mut ready = 0usize;
    let mut pending_triangles = 0usize;
    let mut j = 0usize;
    while j < jobs.len() {
        let n = (jobs.len() - j).min(GROUP_CHUNKS);
        if chunks.len() < ready + n {
            chunks.resize_with(ready + n, Chunk::default);
        }
        let (first, group_budget) = (j, *budget);
        // Every chunk of a group may use up to the budget left when the group started;
        // the merge charges them in chunk order, so exhaustion is decided the same way for
        // any number of threads. A chunk after one that failed is not run: the merge stops
        // at the first failure in chunk order, before it (so a shader that never ends costs
        // each worker's one chunk, not the group's).
        let failed = AtomicUsize::new(usize::MAX);
        workers.for_each_mut(
            &mut chunks[ready..ready + n],
            || VertexCore {
                batcher: Batcher::default(),
                warps: (0..draws.len()).map(|_| None).collect(),
                core: ShaderCore {
                    shaded: ShadedBatch::default(),
                    clipper: Clipper::default(),
                    unit: TextureUnit::with_shared_l2(texel_cache),
                },
            },
            |vertex, i, chunk| {
                let (d, c) = jobs[first + i];
                let draw = &draws[d];
                chunk.clear(d);
                if failed.load(Ordering::Relaxed) < i {
                    return;
                }
                draw.run_chunk(d, &grid, vertex, c, chunk, group_budget);
                if chunk.error.is_some() {
                    failed.fetch_min(i, Ordering::Relaxed);
                }
            },
        );
        for chunk in &chunks[ready..ready + n] {
            if let Some(e) = &chunk.error {
                return Err(e.clone().into());
            }
            *budget = budget
                .checked_sub(chunk.instructions)
                .ok_or(ExecError::BudgetExhausted)?;
            counters[chunk.draw].accumulate(&chunk.counters);
            pending_triangles += chunk.triangles.len();
        }
        ready += n;
        j += n;
        if pending_triangles >= BACK_END_TRIANGLES || ready >= BACK_END_CHUNKS {
            let output = FrontEndOutput {
                viewport_bounds: &viewport_bounds,
                grid,
                chunks: &mut chunks[..ready],
            };
            back_end(output, budget, counters)?;
            ready = 0;
            pending_triangles = 0;
        }
    }
    // The last run (possibly empty).
    let output = FrontEndOutput {
        viewport_bounds: &viewport_bounds,
        grid,
        chunks: &mut chunks[..ready],
    };
    back_end(output, budget, counters)
}

/// The parts of a chunk setup writes, with the chunk's running shader budget.
struct ChunkParts<'a> {
    triangles: &'a mut Vec<Triangle>,
    attrs: &'a mut Vec<u32>,
    texels: &'a mut Vec<TexelLog>,
    budget: &'a mut u64,
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
    out: &mut ChunkParts<'_>,
    counters: &mut Counters,
) {
    counters.clipping_invocations += 1;
    let codes = s.map(|k| shaded.outcodes[k]);
    match classify(codes) {
        ClipDecision::Reject => counters.culled_frustum += 1,
        ClipDecision::Accept => {
            counters.clipping_primitives += 1;
            let projected = s.map(|k| &shaded.projected[k]);
            let attrs = s.map(|k| shaded.attrs_of(k));
            emit_triangle(setup, projected, attrs, out, counters);
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
                let projected = idx.map(|k| setup.project(&poly.positions[k]));
                let attrs = idx.map(|k| &poly.attrs[k * w..(k + 1) * w]);
                emit_triangle(setup, projected.each_ref(), attrs, out, counters);
            }
        }
    }
}

fn emit_triangle(
    setup: &SetupState,
    projected: [&Projected; 3],
    attrs: [&[u32]; 3],
    out: &mut ChunkParts<'_>,
    counters: &mut Counters,
) {
    match setup.setup_projected(projected, out.attrs.len() as u32) {
        Ok(mut tri) => {
            for k in tri.vertex_order {
                out.attrs.extend_from_slice(attrs[k as usize]);
            }
            tri.constant_attrs = attrs[0]
                .iter()
                .zip(attrs[1])
                .zip(attrs[2])
                .all(|((&a, &b), &c)| crate::interpolate::constant_word([a, b, c]).is_some());
            counters.triangles_setup += 1;
            out.triangles.push(tri);
        }
        Err(Culled::ZeroArea) => counters.culled_zero_area += 1,
        Err(Culled::BackFace) => counters.culled_backface += 1,
        Err(Culled::OutsideScissor) => counters.culled_scissor += 1,
        Err(Culled::NoSample) => counters.culled_no_sample += 1,
    }
}
