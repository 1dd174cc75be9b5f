//! Vertex batching and vertex shading (T3 "Vertex Caching and Shading").
//!
//! The batcher walks primitives in API order and gathers up to [`BATCH_VERTICES`] unique
//! vertices, using the vertex ids as cache tags: an index already in the batch is a hit and
//! reuses that slot; a miss allocates a new slot. When a primitive's misses no longer fit,
//! the batch is closed and a new one starts from an empty tag array, so batches are
//! independent and a primitive is never split between two. Each batch is shaded on the
//! shader cores in warps of [`WARP_LANES`] lanes, every vertex exactly once.

use rastra_shader::{Resources, WARP_LANES, Warp, lane_mask};
use rastra_stats::Counters;
use rastra_texture::TextureUnit;

use crate::clip::ClipSpace;
use crate::input_assembler::fetch_attribute_lanes;
use crate::link::{RenderPipeline, VertexInputSource};
use crate::memory::BufferSlice;

/// Unique vertices per batch: one warp's lanes.
pub const BATCH_VERTICES: usize = WARP_LANES;
const _: () = assert!(BATCH_VERTICES.is_multiple_of(16) && BATCH_VERTICES <= 64);

/// A batch: the cache tags (vertex ids, one per slot) and the primitives as slot triples.
#[derive(Clone, Debug)]
pub struct Batch {
    pub tags: Vec<u32>,
    pub prims: Vec<[u8; 3]>,
    /// The tags again in a fixed array (slots past `tags.len()` hold stale values), so a
    /// lookup compares all of them at once.
    tag_array: [u32; BATCH_VERTICES],
}

impl Default for Batch {
    fn default() -> Self {
        Batch {
            tags: Vec::new(),
            prims: Vec::new(),
            tag_array: [0; BATCH_VERTICES],
        }
    }
}

impl Batch {
    fn clear(&mut self) {
        self.tags.clear();
        self.prims.clear();
    }

    fn push_tag(&mut self, id: u32) {
        self.tag_array[self.tags.len()] = id;
        self.tags.push(id);
    }

    /// Slot holding `id`, if it is cached in this batch: every slot in use compared (a
    /// mask of the equal ones; no early exit). On x86-64 SSE2 compares of four tags,
    /// sixteen at a time (the groups holding slots in use), narrowed with saturation (−1
    /// and 0 survive) to bytes whose sign bits are one `movemask` — bit `i` for slot `i`,
    /// as the plain loop sets it.
    #[inline]
    fn lookup(&self, id: u32) -> Option<u8> {
        let n = self.tags.len();
        // The slots in use are a warp's first lanes (BATCH_VERTICES = WARP_LANES).
        let equal = tag_matches(&self.tag_array, n.div_ceil(16), id) & lane_mask(n);
        (equal != 0).then(|| equal.trailing_zeros() as u8)
    }

    /// Tries to add a triangle; false when its misses do not fit (the batch is unchanged).
    /// Each index is looked up once; an index repeated inside the triangle is a hit on the
    /// slot its first occurrence took.
    fn try_add(&mut self, tri: [u32; 3], counters: &mut Counters) -> bool {
        let found = tri.map(|id| self.lookup(id));
        let mut misses = 0;
        for k in 0..3 {
            if found[k].is_none() && !tri[..k].contains(&tri[k]) {
                misses += 1;
            }
        }
        if self.tags.len() + misses > BATCH_VERTICES {
            return false;
        }
        let mut slots = [0u8; 3];
        for k in 0..3 {
            let earlier = (0..k).find(|&j| tri[j] == tri[k]);
            slots[k] = match (found[k], earlier) {
                (Some(slot), _) => {
                    counters.vertex_cache_hits += 1;
                    slot
                }
                (None, Some(j)) => {
                    counters.vertex_cache_hits += 1;
                    slots[j]
                }
                (None, None) => {
                    self.push_tag(tri[k]);
                    (self.tags.len() - 1) as u8
                }
            };
        }
        self.prims.push(slots);
        true
    }
}

/// Bit `i` set when `tags[i] == id`, for the slots of the first `groups` groups of sixteen
/// (the other bits are unspecified).
#[inline(always)]
fn tag_matches(tags: &[u32; BATCH_VERTICES], groups: usize, id: u32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86-64 baseline; each load reads four of the tags
        // (groups below BATCH_VERTICES / 4).
        unsafe {
            let id = _mm_set1_epi32(id as i32);
            let eq =
                |g: usize| _mm_cmpeq_epi32(_mm_loadu_si128(tags.as_ptr().add(4 * g).cast()), id);
            let mut equal = 0u64;
            for h in 0..groups.min(BATCH_VERTICES / 16) {
                let g = 4 * h;
                let bytes = _mm_packs_epi16(
                    _mm_packs_epi32(eq(g), eq(g + 1)),
                    _mm_packs_epi32(eq(g + 2), eq(g + 3)),
                );
                equal |= (_mm_movemask_epi8(bytes) as u64 & 0xffff) << (16 * h);
            }
            equal
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut equal = 0u64;
        for (i, &t) in tags.iter().enumerate().take(16 * groups) {
            equal |= ((t == id) as u64) << i;
        }
        equal
    }
}

/// Forms batches from a stream of triangles.
#[derive(Default)]
pub struct Batcher {
    batch: Batch,
}

impl Batcher {
    /// Adds a triangle. When the current batch is full it is passed to `dispatch` first and a
    /// new batch is started.
    pub fn push(
        &mut self,
        tri: [u32; 3],
        counters: &mut Counters,
        dispatch: &mut impl FnMut(&Batch, &mut Counters),
    ) {
        if !self.batch.try_add(tri, counters) {
            self.flush(counters, dispatch);
            let fits = self.batch.try_add(tri, counters);
            debug_assert!(fits, "a triangle always fits an empty batch");
        }
    }

    /// Dispatches the current batch, if it has any primitive.
    pub fn flush(
        &mut self,
        counters: &mut Counters,
        dispatch: &mut impl FnMut(&Batch, &mut Counters),
    ) {
        if !self.batch.prims.is_empty() {
            counters.vertex_batches += 1;
            dispatch(&self.batch, counters);
        }
        self.batch.clear();
    }
}

/// The shaded vertices of one batch, slot-indexed: clip positions, out-codes and the
/// varyings the fragment shader reads (`words` per vertex).
#[derive(Default)]
pub struct ShadedBatch {
    pub positions: Vec<[f32; 4]>,
    pub outcodes: Vec<u16>,
    pub attrs: Vec<u32>,
    pub words: usize,
}

impl ShadedBatch {
    /// Attribute words of slot `s`.
    #[inline]
    pub fn attrs_of(&self, s: usize) -> &[u32] {
        &self.attrs[s * self.words..(s + 1) * self.words]
    }
}

/// What vertex shading of a draw needs besides the batch.
pub struct VertexShading<'a> {
    pub pipeline: &'a RenderPipeline,
    pub vertex_buffers: &'a [BufferSlice<'a>],
    pub resources: Resources<'a>,
    pub clip_space: ClipSpace,
}

impl VertexShading<'_> {
    /// Shades every vertex of `batch` for `instance`, writing the results to `out`; `unit`
    /// is the texture unit of the shader core the vertex warps run on.
    #[allow(clippy::too_many_arguments)]
    pub fn shade(
        &self,
        batch: &Batch,
        instance: u32,
        warp: &mut Warp,
        unit: &mut TextureUnit,
        out: &mut ShadedBatch,
        budget: &mut u64,
        counters: &mut Counters,
    ) -> Result<(), rastra_shader::ExecError> {
        let p = self.pipeline;
        let program = &p.desc.vertex;
        let words = p.varying_words as usize;
        let n = batch.tags.len();
        out.words = words;
        out.positions.clear();
        out.positions.resize(n, [0.0; 4]);
        out.outcodes.clear();
        out.outcodes.resize(n, 0);
        out.attrs.clear();
        out.attrs.resize(n * words, 0);
        for (w, chunk) in batch.tags.chunks(WARP_LANES).enumerate() {
            let base = w * WARP_LANES;
            let active = lane_mask(chunk.len());
            for input in &p.vertex_inputs {
                let regs = warp.regs_mut(input.first_reg, input.components);
                match input.source {
                    VertexInputSource::Attribute {
                        slot,
                        format,
                        offset,
                        stride,
                        step,
                    } => fetch_attribute_lanes(
                        &self.vertex_buffers[slot],
                        format,
                        offset,
                        stride,
                        step,
                        chunk,
                        instance,
                        regs,
                        counters,
                    ),
                    // One component, the rest (if any) zero.
                    VertexInputSource::VertexIndex | VertexInputSource::InstanceIndex => {
                        let index = input.source == VertexInputSource::VertexIndex;
                        for (c, reg) in regs.iter_mut().enumerate() {
                            for (lane, &id) in chunk.iter().enumerate() {
                                reg[lane] = match (c, index) {
                                    (0, true) => id,
                                    (0, false) => instance,
                                    _ => 0,
                                };
                            }
                        }
                    }
                }
            }
            let info =
                rastra_shader::execute(program, warp, active, 0, &self.resources, unit, budget)?;
            counters.vertex_warps += 1;
            counters.vertex_shader_invocations += chunk.len() as u64;
            counters.vertex_instructions += info.instructions;
            crate::cores::account(&info, counters);
            let pos = warp.regs(p.position_reg, 4);
            for lane in 0..chunk.len() {
                let v = [0, 1, 2, 3].map(|c| f32::from_bits(pos[c][lane]));
                out.positions[base + lane] = v;
                out.outcodes[base + lane] = self.clip_space.outcode(&v);
            }
            // The warp's vertices' rows of the attribute words, one varying at a time (the
            // copies unrolled per component count).
            let rows = &mut out.attrs[base * words..(base + chunk.len()) * words];
            for varying in &p.varyings {
                let regs = warp.regs(varying.vs_reg, varying.components);
                let word = varying.word as usize;
                match regs.len() {
                    1 => store_varying::<1>(regs, rows, words, word),
                    2 => store_varying::<2>(regs, rows, words, word),
                    3 => store_varying::<3>(regs, rows, words, word),
                    _ => store_varying::<4>(regs, rows, words, word),
                }
            }
        }
        Ok(())
    }
}

/// Copies the `C` registers `regs` (one varying) into words `word..word + C` of each row of
/// `words` words in `rows`, lane i to row i.
#[inline(always)]
fn store_varying<const C: usize>(
    regs: &[[u32; WARP_LANES]],
    rows: &mut [u32],
    words: usize,
    word: usize,
) {
    let regs: &[[u32; WARP_LANES]; C] = regs.try_into().expect("C registers");
    for (lane, row) in rows.chunks_exact_mut(words).enumerate().take(WARP_LANES) {
        let dst: &mut [u32; C] = (&mut row[word..word + C])
            .try_into()
            .expect("a varying's words inside its row");
        for (d, reg) in dst.iter_mut().zip(regs) {
            *d = reg[lane];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_hold_a_warp_of_unique_vertices_and_never_split_a_triangle() {
        // A strip-like list: triangle k uses vertices k, k+1, k+2.
        let mut batcher = Batcher::default();
        let mut counters = Counters::default();
        let mut batches = Vec::new();
        let mut dispatch = |b: &Batch, _: &mut Counters| batches.push(b.clone());
        let n = BATCH_VERTICES as u32;
        for k in 0..n + 8 {
            batcher.push([k, k + 1, k + 2], &mut counters, &mut dispatch);
        }
        batcher.flush(&mut counters, &mut dispatch);
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[0].tags.len(), BATCH_VERTICES);
        assert_eq!(batches[0].prims.len(), BATCH_VERTICES - 2);
        assert_eq!(batches[1].prims.len(), 10);
        // n + 8 triangles × 3 references − unique vertices per batch (n + 12).
        assert_eq!(
            counters.vertex_cache_hits,
            3 * (n as u64 + 8) - (n as u64 + 12)
        );
        assert_eq!(counters.vertex_batches, 2);
    }

    proptest::proptest! {
        #[test]
        fn tag_matches_sets_the_bit_of_every_equal_slot(
            // Few distinct values, so most ids match several slots (or none).
            tags in proptest::collection::vec(0u32..6, BATCH_VERTICES),
            id in proptest::prop_oneof![0u32..7, proptest::strategy::Just(u32::MAX)],
        ) {
            let expect = (0..BATCH_VERTICES)
                .filter(|&i| tags[i] == id)
                .fold(0u64, |m, i| m | 1 << i);
            let tags: [u32; BATCH_VERTICES] = tags.try_into().expect("a batch of tags");
            proptest::prop_assert_eq!(tag_matches(&tags, BATCH_VERTICES / 16, id), expect);
            // The first group alone: its slots' bits.
            proptest::prop_assert_eq!(tag_matches(&tags, 1, id) & 0xffff, expect & 0xffff);
        }
    }

    #[test]
    fn repeated_index_in_one_triangle_is_one_slot() {
        let mut b = Batch::default();
        let mut c = Counters::default();
        assert!(b.try_add([7, 7, 8], &mut c));
        assert_eq!(b.tags, vec![7, 8]);
        assert_eq!(b.prims, vec![[0, 0, 1]]);
        assert_eq!(c.vertex_cache_hits, 1);
    }
}
