//! Primitive assembly's topology walker (T5 "primitive assembly"; Vulkan §21.1 "Primitive
//! Topologies"): turns the index stream into triangles in API order.
//!
//! Triangle strips follow the Vulkan vertex order — triangle `i` of a strip is
//! `(v[i], v[i + 1 + i % 2], v[i + 2 - i % 2])` — so the first vertex of every triangle is the
//! provoking vertex, and a restart index ends the strip.

use rastra_stats::Counters;

use crate::input_assembler::{Fetched, IndexSource};
use crate::state::PrimitiveTopology;

/// Calls `emit` with the vertex ids of every triangle of the draw, in order.
pub fn for_each_triangle(
    topology: PrimitiveTopology,
    source: &IndexSource<'_>,
    count: u32,
    counters: &mut Counters,
    mut emit: impl FnMut([u32; 3], &mut Counters),
) {
    match topology {
        PrimitiveTopology::TriangleList => {
            let whole = count - count % 3;
            for i in (0..whole).step_by(3) {
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
            let mut window = [0u32; 2];
            let mut run = 0u32; // vertices since the last restart
            for i in 0..count {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tris(topology: PrimitiveTopology, indices: &[u16]) -> Vec<[u32; 3]> {
        let mut bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let size = bytes.len() as u64;
        bytes.resize(bytes.len().div_ceil(4) * 4, 0);
        let words: Vec<std::sync::atomic::AtomicU32> = bytes
            .chunks(4)
            .map(|c| std::sync::atomic::AtomicU32::new(u32::from_le_bytes(c.try_into().unwrap())))
            .collect();
        let source = IndexSource::Indexed {
            data: crate::memory::BufferSlice {
                words: &words,
                offset: 0,
                size,
            },
            format: crate::format::IndexFormat::Uint16,
            first: 0,
            base_vertex: 0,
        };
        let mut out = Vec::new();
        let mut c = Counters::default();
        for_each_triangle(topology, &source, indices.len() as u32, &mut c, |t, _| {
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
}
