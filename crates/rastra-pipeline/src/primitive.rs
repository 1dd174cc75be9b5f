//! Primitive assembly's topology walker (T5 "primitive assembly"; Vulkan §21.1 "Primitive
//! Topologies"): turns the index stream into triangles in API order.
//!
//! Triangle strips follow the Vulkan vertex order — triangle `i` of a strip is
//! `(v[i], v[i + 1 + i % 2], v[i + 2 - i % 2])` — so the first vertex of every triangle is the
//! provoking vertex, and a restart index ends the strip.

use rastra_stats::Counters;

use crate::input_assembler::{Fetched, IndexSource};
use crate::state::PrimitiveTopology;

/// A draw's primitive stream, walked in pieces: the front end's chunks each assemble a range
/// of *positions* — triangles of a list, index positions of a strip (a strip's triangle ends
/// at its position) — and together they emit every triangle exactly once, in order, with
/// the counters a single walk would have.
pub struct Assembly<'a> {
    topology: PrimitiveTopology,
    source: IndexSource<'a>,
    count: u32,
    /// Strip positions holding a restart index, ascending (indexed strips only).
    restarts: Vec<u32>,
}

impl<'a> Assembly<'a> {
    /// `count` indices of `source` assembled as `topology`. Indexed strips are scanned once
    /// for their restart indices, so a walk can start anywhere.
    pub fn new(topology: PrimitiveTopology, source: IndexSource<'a>, count: u32) -> Assembly<'a> {
        let mut restarts = Vec::new();
        if topology == PrimitiveTopology::TriangleStrip
            && matches!(source, IndexSource::Indexed { .. })
        {
            // Index reads are counted by the walks, not by this scan.
            let mut uncounted = Counters::default();
            restarts.extend(
                (0..count).filter(|&i| source.fetch(i, true, &mut uncounted) == Fetched::Restart),
            );
        }
        Assembly {
            topology,
            source,
            count,
            restarts,
        }
    }

    /// Number of positions: triangles of a list, indices of a strip.
    pub fn positions(&self) -> u32 {
        match self.topology {
            PrimitiveTopology::TriangleStrip => self.count,
            _ => self.count / 3,
        }
    }

    /// Calls `emit` with the vertex ids of every triangle ending at a position in `range`,
    /// in order.
    pub fn walk(
        &self,
        range: std::ops::Range<u32>,
        counters: &mut Counters,
        mut emit: impl FnMut([u32; 3], &mut Counters),
    ) {
        let source = &self.source;
        let range = range.start..range.end.min(self.positions());
        match self.topology {
            PrimitiveTopology::TriangleList => {
                for t in range {
                    let i = t * 3;
                    let mut tri = [0; 3];
                    for (k, v) in tri.iter_mut().enumerate() {
                        *v = match source.fetch(i + k as u32, false, counters) {
                            Fetched::Vertex(v) => v,
                            Fetched::Restart => unreachable!("restart is disabled for lists"),
                        };
                    }
                    counters.input_assembly_vertices += 3;
                    counters.input_assembly_primitives += 1;
                    emit(tri, counters);
                }
            }
            PrimitiveTopology::TriangleStrip => {
                // The strip's state before `range.start`: vertices since the last restart
                // and the last two of them (read again, uncounted: the walk that covered
                // those positions counted them).
                let after_restart = match self.restarts.partition_point(|&r| r < range.start) {
                    0 => 0,
                    k => self.restarts[k - 1] + 1,
                };
                let mut run = range.start - after_restart;
                let mut window = [0u32; 2];
                let mut uncounted = Counters::default();
                for (w, back) in window.iter_mut().zip([2u32, 1]) {
                    if run >= back
                        && let Fetched::Vertex(v) =
                            source.fetch(range.start - back, true, &mut uncounted)
                    {
                        *w = v;
                    }
                }
                for i in range {
                    counters.input_assembly_vertices += 1;
                    match source.fetch(i, true, counters) {
                        Fetched::Restart => run = 0,
                        Fetched::Vertex(v) => {
                            if run >= 2 {
                                let k = run - 2;
                                let tri = if k.is_multiple_of(2) {
                                    [window[0], window[1], v]
                                } else {
                                    [window[0], v, window[1]]
                                };
                                counters.input_assembly_primitives += 1;
                                emit(tri, counters);
                            }
                            window = [window[1], v];
                            run += 1;
                        }
                    }
                }
            }
            PrimitiveTopology::PointList
            | PrimitiveTopology::LineList
            | PrimitiveTopology::LineStrip => {
                unreachable!("link rejects point and line topologies")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16-bit indices as buffer words, and their size in bytes.
    fn index_words(indices: &[u16]) -> (Vec<std::sync::atomic::AtomicU32>, u64) {
        let mut bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let size = bytes.len() as u64;
        bytes.resize(bytes.len().div_ceil(4) * 4, 0);
        let words = bytes
            .chunks(4)
            .map(|c| std::sync::atomic::AtomicU32::new(u32::from_le_bytes(c.try_into().unwrap())))
            .collect();
        (words, size)
    }

    fn source(words: &[std::sync::atomic::AtomicU32], size: u64) -> IndexSource<'_> {
        IndexSource::Indexed {
            data: crate::memory::BufferSlice {
                words,
                offset: 0,
                size,
            },
            format: crate::format::IndexFormat::Uint16,
            first: 0,
            base_vertex: 0,
        }
    }

    fn tris(topology: PrimitiveTopology, indices: &[u16]) -> Vec<[u32; 3]> {
        let (words, size) = index_words(indices);
        let assembly = Assembly::new(topology, source(&words, size), indices.len() as u32);
        let mut out = Vec::new();
        assembly.walk(0..assembly.positions(), &mut Counters::default(), |t, _| {
            out.push(t)
        });
        out
    }

    #[test]
    fn strips_alternate_winding_and_restart() {
        assert_eq!(
            tris(
                PrimitiveTopology::TriangleStrip,
                &[0, 1, 2, 3, 0xffff, 4, 5, 6]
            ),
            vec![[0, 1, 2], [1, 3, 2], [4, 5, 6]]
        );
    }

    #[test]
    fn lists_drop_incomplete_triangles() {
        assert_eq!(
            tris(PrimitiveTopology::TriangleList, &[0, 1, 2, 3, 4]),
            vec![[0, 1, 2]]
        );
    }

    #[test]
    fn walks_in_pieces_emit_the_same_triangles() {
        let indices: Vec<u16> = vec![0, 1, 2, 3, 4, 0xffff, 5, 6, 0xffff, 0xffff, 7, 8, 9, 10, 11];
        let whole = tris(PrimitiveTopology::TriangleStrip, &indices);
        let (words, size) = index_words(&indices);
        let source = source(&words, size);
        let assembly = Assembly::new(
            PrimitiveTopology::TriangleStrip,
            source,
            indices.len() as u32,
        );
        let mut all = Counters::default();
        assembly.walk(0..assembly.positions(), &mut all, |_, _| {});
        // Every split point, including restart positions and strip starts.
        for split in 0..=indices.len() as u32 {
            let mut out = Vec::new();
            let mut c = Counters::default();
            assembly.walk(0..split, &mut c, |t, _| out.push(t));
            assembly.walk(split..assembly.positions(), &mut c, |t, _| out.push(t));
            assert_eq!(out, whole, "split at {split}");
            assert_eq!(c.input_assembly_vertices, all.input_assembly_vertices);
            assert_eq!(c.input_assembly_primitives, all.input_assembly_primitives);
        }
    }
}
