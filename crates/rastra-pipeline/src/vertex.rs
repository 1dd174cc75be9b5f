//! Vertex batching and vertex shading (T3 "Vertex Caching and Shading").
//!
//! The batcher walks primitives in API order and gathers up to [`BATCH_VERTICES`] unique
//! vertices, using the vertex ids as cache tags: an index already in the batch is a hit and
//! reuses that slot; a miss allocates a new slot. When a primitive's misses no longer fit,
//! the batch is closed and a new one starts from an empty tag array, so batches are
//! independent and a primitive is never split between two. Each batch is shaded on the
//! shader cores in warps of [`WARP_LANES`] lanes, every vertex exactly once.
//!
//! The tag of a slot is its vertex id within an instance: an instanced draw's batch may
//! hold the end of one instance and the start of the next (instance packing, so a small
//! mesh drawn many times fills whole warps), but a vertex of one instance never hits a slot
//! of another — each slot carries its instance, and a lookup compares only the slots of the
//! current one.

use rastra_shader::{Resources, WARP_LANES, Warp, lane_mask};
use rastra_stats::Counters;
use rastra_texture::TextureUnit;

use crate::clip::ClipSpace;
use crate::input_assembler::fetch_attribute_lanes;
use crate::link::{RenderPipeline, VertexInputSource};
use crate::memory::BufferSlice;
use crate::setup::Projected;

/// Unique vertices per batch: one warp's lanes.
pub const BATCH_VERTICES: usize = WARP_LANES;
const _: () = assert!(BATCH_VERTICES < u8::MAX as usize);

/// Entries of a batch's tag table: twice its slots, so probe sequences stay short.
const TAG_TABLE: usize = 2 * BATCH_VERTICES;

/// A batch: the cache tags (vertex ids, one per slot), each slot's instance, and the
/// primitives as slot triples.
#[derive(Clone, Debug)]
pub struct Batch {
    pub tags: Vec<u32>,
    pub instances: Vec<u32>,
    pub prims: Vec<[u8; 3]>,
    /// The tag lookup — a CAM in hardware — as an open-addressing table: entry = slot + 1
    /// (0 empty), placed at the id's hash or the next free entry after it. An id has at most
    /// one entry, its latest slot: a vertex of a new instance takes over the entry of the
    /// same id in an earlier instance.
    table: [u8; TAG_TABLE],
    /// The instance new slots belong to, and its first slot: the slots before it hold
    /// earlier instances' vertices, which no lookup may hit.
    instance: u32,
    instance_start: usize,
}

impl Default for Batch {
    fn default() -> Self {
        Batch {
            tags: Vec::new(),
            instances: Vec::new(),
            prims: Vec::new(),
            table: [0; TAG_TABLE],
            instance: 0,
            instance_start: 0,
        }
    }
}

/// The table entry where `id`'s probe sequence starts: Fibonacci hashing, the top bits of
/// the product, so ids in a run spread over the table.
#[inline(always)]
fn home(id: u32) -> usize {
    const BITS: u32 = TAG_TABLE.trailing_zeros();
    const { assert!(TAG_TABLE.is_power_of_two()) };
    (id.wrapping_mul(0x9e37_79b9) >> (32 - BITS)) as usize
}

impl Batch {
    /// Empties the batch; new slots still belong to the current instance.
    fn clear(&mut self) {
        self.tags.clear();
        self.instances.clear();
        self.prims.clear();
        self.table = [0; TAG_TABLE];
        self.instance_start = 0;
    }

    /// Starts `instance`: the slots filled so far stay, but no later lookup hits them.
    fn begin_instance(&mut self, instance: u32) {
        self.instance = instance;
        self.instance_start = self.tags.len();
    }

    /// The entry holding `id`'s slot, or the empty entry that ends its probe sequence. The
    /// table never holds more entries than slots, at most half of it, so there is always
    /// an empty entry to stop at.
    #[inline(always)]
    fn probe(&self, id: u32) -> usize {
        let mut e = home(id);
        loop {
            let s = self.table[e] as usize;
            if s == 0 || self.tags[s - 1] == id {
                return e;
            }
            e = (e + 1) % TAG_TABLE;
        }
    }

    /// Slot holding `id` of the current instance, if it is cached in this batch.
    #[cfg(test)]
    fn lookup(&self, id: u32) -> Option<u8> {
        let s = self.table[self.probe(id)] as usize;
        // Entry s is slot s − 1; 0 (empty) is never above the instance's first slot.
        (s > self.instance_start).then(|| (s - 1) as u8)
    }

    /// Tries to add a triangle; false when its misses do not fit (the batch is unchanged).
    /// Each index is looked up once, and a miss takes its slot at once, so an index
    /// repeated inside the triangle is a hit on the slot its first occurrence took. A miss
    /// that finds the batch full undoes the triangle's earlier misses (their table entries
    /// back to what they held, their slots dropped) before returning false.
    fn try_add(&mut self, tri: [u32; 3], counters: &mut Counters) -> bool {
        let mut slots = [0u8; 3];
        let mut taken = [(0usize, 0u8); 3];
        let mut misses = 0;
        for (slot, &id) in slots.iter_mut().zip(&tri) {
            let e = self.probe(id);
            // Entry s is slot s − 1: a hit when it is one of the current instance's (0,
            // empty, is never above the instance's first slot). Otherwise `e` is empty or
            // holds the same id of an earlier instance, whose entry the new slot takes over.
            let s = self.table[e] as usize;
            if s > self.instance_start {
                *slot = (s - 1) as u8;
                continue;
            }
            if self.tags.len() == BATCH_VERTICES {
                for &(e, old) in taken[..misses].iter().rev() {
                    self.table[e] = old;
                    self.tags.pop();
                    self.instances.pop();
                }
                return false;
            }
            taken[misses] = (e, self.table[e]);
            misses += 1;
            self.tags.push(id);
            self.instances.push(self.instance);
            self.table[e] = self.tags.len() as u8;
            *slot = (self.tags.len() - 1) as u8;
        }
        counters.vertex_cache_hits += 3 - misses as u64;
        self.prims.push(slots);
        true
    }
}

/// Forms batches from a stream of triangles.
#[derive(Default)]
pub struct Batcher {
    batch: Batch,
}

impl Batcher {
    /// Starts `instance`: its triangles join the current batch, but its vertices never hit
    /// the slots of the instances before it.
    pub fn begin_instance(&mut self, instance: u32) {
        self.batch.begin_instance(instance);
    }

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
    /// Each slot's position projected and snapped ([`crate::setup::SetupState::project`]),
    /// for the triangles that need no clipping.
    pub projected: Vec<Projected>,
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
    /// Shades every vertex of `batch` (each slot for its own instance), writing the results
    /// to `out`; `unit` is the texture unit of the shader core the vertex warps run on.
    pub fn shade(
        &self,
        batch: &Batch,
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
        // Sized, not cleared: every slot's position, out-code and attribute words are
        // written below (each varying's words, and the varyings cover a row's words), so
        // zeroing the buffers first — a memset of each batch's attribute rows, 0.7% of
        // textured_cubes' instructions — would only be overwritten.
        debug_assert_eq!(
            p.varyings
                .iter()
                .map(|v| v.components as usize)
                .sum::<usize>(),
            words,
            "the varyings cover a row's words"
        );
        out.positions.resize(n, [0.0; 4]);
        out.outcodes.resize(n, 0);
        out.attrs.resize(n * words, 0);
        let warps = batch
            .tags
            .chunks(WARP_LANES)
            .zip(batch.instances.chunks(WARP_LANES));
        for (w, (chunk, instances)) in warps.enumerate() {
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
                        instances,
                        regs,
                        counters,
                    ),
                    // One component, the rest (if any) zero.
                    VertexInputSource::VertexIndex | VertexInputSource::InstanceIndex => {
                        let index = input.source == VertexInputSource::VertexIndex;
                        let ids = if index { chunk } else { instances };
                        for (c, reg) in regs.iter_mut().enumerate() {
                            for (lane, &id) in ids.iter().enumerate() {
                                reg[lane] = if c == 0 { id } else { 0 };
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
        /// The table finds exactly what comparing every slot of the current instance finds:
        /// triangles over a few ids (many hits), instances switching now and then, batches
        /// filling and flushing; a triangle the batch refuses changes nothing.
        #[test]
        fn lookup_equals_comparing_every_slot_of_the_instance(
            tris in proptest::collection::vec(
                (proptest::array::uniform3(0u32..90), 0u32..10),
                1..400,
            ),
        ) {
            let mut batch = Batch::default();
            let mut counters = Counters::default();
            let mut instance = 0;
            for (tri, switch) in tris {
                if switch == 0 {
                    instance += 1;
                    batch.begin_instance(instance);
                }
                let before = (batch.tags.clone(), batch.instances.clone(), batch.table);
                if !batch.try_add(tri, &mut counters) {
                    // A refused triangle leaves the batch as it was.
                    proptest::prop_assert_eq!(
                        (batch.tags.clone(), batch.instances.clone(), batch.table),
                        before
                    );
                    batch.clear();
                    proptest::prop_assert!(batch.try_add(tri, &mut counters));
                }
                for id in 0..92 {
                    let expect = (batch.instance_start..batch.tags.len())
                        .find(|&s| batch.tags[s] == id)
                        .map(|s| s as u8);
                    proptest::prop_assert_eq!(batch.lookup(id), expect, "id {}", id);
                }
                proptest::prop_assert!(batch.instances[batch.instance_start..]
                    .iter()
                    .all(|&i| i == instance));
            }
        }
    }

    #[test]
    fn instances_share_a_batch_but_never_each_others_slots() {
        // A quad (two triangles, four vertices) drawn for instances 5, 6, …: sixteen
        // instances fill a 64-slot batch, each hitting only its own two shared vertices.
        let mut batcher = Batcher::default();
        let mut counters = Counters::default();
        let mut batches = Vec::new();
        let mut dispatch = |b: &Batch, _: &mut Counters| batches.push(b.clone());
        let per_batch = BATCH_VERTICES / 4;
        for instance in 5..5 + per_batch as u32 + 1 {
            batcher.begin_instance(instance);
            batcher.push([0, 1, 2], &mut counters, &mut dispatch);
            batcher.push([2, 1, 3], &mut counters, &mut dispatch);
        }
        batcher.flush(&mut counters, &mut dispatch);
        assert_eq!(batches.len(), 2);
        let first = &batches[0];
        assert_eq!(first.tags.len(), BATCH_VERTICES);
        assert_eq!(first.prims.len(), 2 * per_batch);
        for (i, slots) in first.prims.iter().enumerate() {
            let instance = 5 + (i / 2) as u32;
            for &s in slots {
                assert_eq!(first.instances[s as usize], instance, "triangle {i}");
            }
        }
        // The last instance starts the second batch, its slots its own.
        assert_eq!(batches[1].tags, vec![0, 1, 2, 3]);
        assert_eq!(batches[1].instances, vec![5 + per_batch as u32; 4]);
        assert_eq!(batches[1].prims, vec![[0, 1, 2], [2, 1, 3]]);
        assert_eq!(counters.vertex_cache_hits, 2 * (per_batch as u64 + 1));
    }

    /// A triangle whose misses do not fit leaves the batch as it was — its tags, its
    /// instances and its table (a later lookup finds what it found before) — and a
    /// triangle that fits is then added as into a batch that never saw the other one.
    #[test]
    fn a_triangle_that_does_not_fit_changes_nothing() {
        let mut b = Batch::default();
        let mut c = Counters::default();
        let n = BATCH_VERTICES as u32;
        // 62 slots: ids 0..62, then one triangle needing 2 more (64 in all) would fit, one
        // needing 3 would not.
        for k in (0..n - 2).step_by(2) {
            assert!(b.try_add([k, k + 1, k], &mut c));
        }
        assert_eq!(b.tags.len(), BATCH_VERTICES - 2);
        let before = (
            b.tags.clone(),
            b.instances.clone(),
            b.table,
            b.prims.clone(),
            c,
        );
        // Two misses fit, the third does not: both undone.
        assert!(!b.try_add([n + 1, n + 2, n + 3], &mut c));
        assert_eq!(
            (
                b.tags.clone(),
                b.instances.clone(),
                b.table,
                b.prims.clone(),
                c
            ),
            before
        );
        for id in [n + 1, n + 2, n + 3] {
            assert_eq!(b.lookup(id), None);
        }
        // A hit and two misses fit exactly.
        assert!(b.try_add([5, n + 1, n + 2], &mut c));
        assert_eq!(b.tags.len(), BATCH_VERTICES);
        assert_eq!(b.prims.last(), Some(&[5, 62, 63]));
        assert_eq!(b.lookup(n + 2), Some(63));
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
