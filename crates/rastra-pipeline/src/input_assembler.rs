//! Input assembler (T3 "Input Assembler stage"): index fetch and vertex attribute fetch.
//!
//! Every read is bounds-checked: an index read past the end of the index buffer returns 0,
//! and an attribute whose bytes are not all inside its vertex buffer reads as zero (missing
//! components then take their 0, 0, 0, 1 defaults). Both count as out-of-bounds fetches.

use rastra_stats::Counters;

use crate::format::{IndexFormat, VertexFormat};
use crate::memory::BufferSlice;
use crate::state::VertexStepMode;

/// Where a draw's vertex indices come from.
#[derive(Clone, Copy, Debug)]
pub enum IndexSource<'a> {
    /// `draw`: indices `first, first + 1, …`.
    Sequential { first: u32 },
    /// `draw_indexed`: indices read from memory, `first` elements in, plus `base_vertex`.
    Indexed {
        data: BufferSlice<'a>,
        format: IndexFormat,
        first: u32,
        base_vertex: i32,
    },
}

/// One fetched index: a vertex id, or a strip cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fetched {
    Vertex(u32),
    Restart,
}

impl IndexSource<'_> {
    /// Fetches the `i`-th index of the draw. `restart` enables primitive restart (strips).
    #[inline]
    pub fn fetch(&self, i: u32, restart: bool, counters: &mut Counters) -> Fetched {
        match *self {
            IndexSource::Sequential { first } => Fetched::Vertex(first.wrapping_add(i)),
            IndexSource::Indexed {
                data,
                format,
                first,
                base_vertex,
            } => {
                let size = format.size();
                let at = (first as u64 + i as u64) * size as u64;
                let mut bytes = [0u8; 4];
                let value = if data.read(at, &mut bytes[..size]) {
                    u32::from_le_bytes(bytes)
                } else {
                    counters.out_of_bounds_fetches += 1;
                    0
                };
                if restart && value == format.restart_value() {
                    Fetched::Restart
                } else {
                    Fetched::Vertex(value.wrapping_add_signed(base_vertex))
                }
            }
        }
    }
}

/// Reads one vertex attribute for vertex id `vertex` of instance `instance` from `buffer`
/// (the bound slice of the vertex buffer), as four raw register values.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn fetch_attribute(
    buffer: &BufferSlice<'_>,
    format: VertexFormat,
    offset: u64,
    stride: u64,
    step: VertexStepMode,
    vertex: u32,
    instance: u32,
    counters: &mut Counters,
) -> [u32; 4] {
    let element = match step {
        VertexStepMode::Vertex => vertex,
        VertexStepMode::Instance => instance,
    } as u64;
    // Strides are at most 2048 and offsets inside the element (validated), so this cannot
    // overflow.
    let at = element * stride + offset;
    // 32-bit components at a word address (nearly every float attribute): the words
    // themselves, no byte assembly — `unpack` would give the same values.
    if let Some((n, one)) = format.whole_words()
        && (buffer.offset + at).is_multiple_of(4)
    {
        let mut out = [0, 0, 0, one];
        if buffer.read_words(at, &mut out[..n]) {
            return out;
        }
    }
    let size = format.size();
    let mut bytes = [0u8; 16];
    if !buffer.read(at, &mut bytes[..size]) {
        counters.out_of_bounds_fetches += 1;
    }
    format.unpack(&bytes[..size])
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::atomic::AtomicU32;

    fn words(bytes: &[u8]) -> Vec<AtomicU32> {
        bytes
            .chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                AtomicU32::new(u32::from_le_bytes(w))
            })
            .collect()
    }

    fn slice(words: &[AtomicU32], size: u64) -> BufferSlice<'_> {
        BufferSlice {
            words,
            offset: 0,
            size,
        }
    }

    #[test]
    fn index_reads_past_the_end_return_zero() {
        let data = words(&[5u8, 0, 7, 0]);
        let source = IndexSource::Indexed {
            data: slice(&data, 4),
            format: IndexFormat::Uint16,
            first: 1,
            base_vertex: 10,
        };
        let mut c = Counters::default();
        assert_eq!(source.fetch(0, false, &mut c), Fetched::Vertex(17));
        assert_eq!(source.fetch(1, false, &mut c), Fetched::Vertex(10));
        assert_eq!(c.out_of_bounds_fetches, 1);
    }

    #[test]
    fn restart_only_when_enabled() {
        let data = words(&[0xff, 0xff]);
        let source = IndexSource::Indexed {
            data: slice(&data, 2),
            format: IndexFormat::Uint16,
            first: 0,
            base_vertex: 0,
        };
        let mut c = Counters::default();
        assert_eq!(source.fetch(0, true, &mut c), Fetched::Restart);
        assert_eq!(source.fetch(0, false, &mut c), Fetched::Vertex(0xffff));
    }

    #[test]
    fn attribute_out_of_range_reads_zero() {
        let buf = words(&1.5f32.to_le_bytes());
        let buf = slice(&buf, 4);
        let mut c = Counters::default();
        let ok = fetch_attribute(
            &buf,
            VertexFormat::Float32,
            0,
            4,
            VertexStepMode::Vertex,
            0,
            0,
            &mut c,
        );
        assert_eq!(ok[0], 1.5f32.to_bits());
        let oob = fetch_attribute(
            &buf,
            VertexFormat::Float32,
            0,
            4,
            VertexStepMode::Vertex,
            1,
            0,
            &mut c,
        );
        assert_eq!(oob, [0, 0, 0, 1.0f32.to_bits()]);
        assert_eq!(c.out_of_bounds_fetches, 1);
    }

    /// 32-bit formats read as whole words give what unpacking the bytes gives: every
    /// such format, aligned and unaligned attributes, a slice starting inside a word, and
    /// elements running past the end (zeros and the default fourth component, counted).
    #[test]
    fn word_attributes_equal_their_unpacked_bytes() {
        use VertexFormat::*;
        let bytes: Vec<u8> = (0..64u32).map(|i| (i * 37 + 11) as u8).collect();
        let buf = words(&bytes);
        for format in [
            Float32, Float32x2, Float32x3, Float32x4, Uint32, Uint32x2, Uint32x3, Uint32x4, Sint32,
            Sint32x2, Sint32x3, Sint32x4,
        ] {
            for slice_offset in [0u64, 4, 2] {
                let size = 40;
                let slice = BufferSlice {
                    words: &buf,
                    offset: slice_offset,
                    size,
                };
                for (offset, stride) in [(0u64, 16u64), (4, 12), (1, 16), (0, 20)] {
                    for vertex in 0..4u32 {
                        let mut c = Counters::default();
                        let got = fetch_attribute(
                            &slice,
                            format,
                            offset,
                            stride,
                            VertexStepMode::Vertex,
                            vertex,
                            0,
                            &mut c,
                        );
                        let at = vertex as u64 * stride + offset;
                        let mut raw = [0u8; 16];
                        let inside = slice.read(at, &mut raw[..format.size()]);
                        assert_eq!(got, format.unpack(&raw[..format.size()]), "{format:?} {at}");
                        assert_eq!(c.out_of_bounds_fetches, !inside as u64, "{format:?} {at}");
                    }
                }
            }
        }
    }
}
