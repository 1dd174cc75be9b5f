//! Input assembler (T3 "Input Assembler stage"): index fetch and vertex attribute fetch.
//!
//! Every read is bounds-checked: an index read past the end of the index buffer returns 0,
//! and an attribute whose bytes are not all inside its vertex buffer reads as zero (missing
//! components then take their 0, 0, 0, 1 defaults). Both count as out-of-bounds fetches.

use std::sync::atomic::{AtomicU32, Ordering};

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
                let value = data.read_index(at, size).unwrap_or_else(|| {
                    counters.out_of_bounds_fetches += 1;
                    0
                });
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

/// [`fetch_attribute`] for the vertices of one warp — lane i is vertex `ids[i]` of instance
/// `instances[i]` — written to the first `regs.len()` components' registers (`regs[c][i]`),
/// with the same values and the same out-of-bounds count as lane by lane. The common
/// attribute, 32-bit components stepping per vertex at word-aligned addresses, is read as
/// words, with one bounds test for the warp (or, near the slice's end, one per lane); a
/// per-instance attribute is fetched once for each run of lanes of one instance.
#[allow(clippy::too_many_arguments)]
pub fn fetch_attribute_lanes<const L: usize>(
    buffer: &BufferSlice<'_>,
    format: VertexFormat,
    offset: u64,
    stride: u64,
    step: VertexStepMode,
    ids: &[u32],
    instances: &[u32],
    regs: &mut [[u32; L]],
    counters: &mut Counters,
) {
    let lanes = ids.len().min(instances.len()).min(L);
    let (ids, instances) = (&ids[..lanes], &instances[..lanes]);
    let put = |lane: usize, value: [u32; 4], regs: &mut [[u32; L]]| {
        for (c, reg) in regs.iter_mut().enumerate().take(4) {
            reg[lane] = value[c];
        }
    };
    if step == VertexStepMode::Instance {
        // The lanes of one instance read the same element: one read per run of equal
        // instances (a warp packs a few), its outcome counted per lane.
        let mut first = 0;
        while first < lanes {
            let instance = instances[first];
            let end = (first + 1..lanes)
                .find(|&l| instances[l] != instance)
                .unwrap_or(lanes);
            let before = counters.out_of_bounds_fetches;
            let value =
                fetch_attribute(buffer, format, offset, stride, step, 0, instance, counters);
            let missed = counters.out_of_bounds_fetches - before;
            counters.out_of_bounds_fetches += missed * (end - first - 1) as u64;
            for lane in first..end {
                put(lane, value, regs);
            }
            first = end;
        }
        return;
    }
    let words = format
        .whole_words()
        .filter(|_| (buffer.offset + offset).is_multiple_of(4) && stride.is_multiple_of(4));
    let Some((n, one)) = words else {
        for (lane, (&id, &instance)) in ids.iter().zip(instances).enumerate() {
            let value =
                fetch_attribute(buffer, format, offset, stride, step, id, instance, counters);
            put(lane, value, regs);
        }
        return;
    };
    // The component count fixed per version: the lane loop's copies unrolled.
    let fetch = match n {
        1 => word_lanes::<1, L>,
        2 => word_lanes::<2, L>,
        3 => word_lanes::<3, L>,
        _ => word_lanes::<4, L>,
    };
    let mut misses = fetch(buffer, offset, stride, ids, one, regs);
    // The lanes whose words are not all inside the slice: as `fetch_attribute` reads them.
    while misses != 0 {
        let lane = misses.trailing_zeros() as usize;
        misses &= misses - 1;
        let value = fetch_attribute(
            buffer,
            format,
            offset,
            stride,
            step,
            ids[lane],
            instances[lane],
            counters,
        );
        put(lane, value, regs);
    }
}

/// [`fetch_attribute_lanes`]' common case for `N` 32-bit components at word-aligned
/// addresses: each lane's `N` words of element `elements[lane]` (components past `N` their
/// 0, 0, 0, `one` defaults); returns the lanes (bit i = lane i) whose words are not all
/// inside the slice, untouched.
#[inline(always)]
fn word_lanes<const N: usize, const L: usize>(
    buffer: &BufferSlice<'_>,
    offset: u64,
    stride: u64,
    elements: &[u32],
    one: u32,
    regs: &mut [[u32; L]],
) -> u64 {
    const { assert!(L <= 64, "a lane mask is 64 bits") };
    let len = 4 * N as u64;
    let elements = &elements[..elements.len().min(L)];
    // Strides are at most 2048 and offsets inside the element (validated): no overflow.
    let first_word =
        |element: u32| ((buffer.offset + element as u64 * stride + offset) / 4) as usize;
    // Addresses grow with the element: when the furthest lane's words are inside the slice,
    // every lane's are — one bounds test for the warp, then plain copies.
    let furthest = elements.iter().copied().max().unwrap_or(0);
    if furthest as u64 * stride + offset + len <= buffer.size
        && first_word(furthest) + N <= buffer.words.len()
    {
        let (fetched, defaults) = regs.split_at_mut(N.min(regs.len()));
        for (c, reg) in defaults.iter_mut().enumerate() {
            reg[..elements.len()].fill(if N + c == 3 { one } else { 0 });
        }
        let copy = |fetched: &mut [[u32; L]], lane: usize, element: u32| {
            let first = first_word(element);
            let words: &[AtomicU32; N] =
                buffer.words[first..first + N].try_into().expect("N words");
            for (reg, w) in fetched.iter_mut().zip(words) {
                reg[lane] = w.load(Ordering::Relaxed);
            }
        };
        if fetched.len() == N {
            // The shader reads every component: the copy's length is the constant N, so
            // each lane's loop is unrolled (a register count short of N would be tested
            // again at every component).
            let fetched: &mut [[u32; L]; N] = fetched.try_into().expect("N registers");
            for (lane, &element) in elements.iter().enumerate() {
                copy(fetched, lane, element);
            }
        } else {
            for (lane, &element) in elements.iter().enumerate() {
                copy(fetched, lane, element);
            }
        }
        return 0;
    }
    let mut misses = 0;
    for (lane, &element) in elements.iter().enumerate() {
        let at = element as u64 * stride + offset;
        let first = first_word(element);
        let words = (at + len <= buffer.size)
            .then(|| buffer.words.get(first..first + N))
            .flatten()
            .and_then(|w| <&[AtomicU32; N]>::try_from(w).ok());
        let Some(words) = words else {
            misses |= 1 << lane;
            continue;
        };
        let mut value = [0, 0, 0, one];
        for (v, w) in value.iter_mut().zip(words) {
            *v = w.load(Ordering::Relaxed);
        }
        for (reg, v) in regs.iter_mut().zip(value) {
            reg[lane] = v;
        }
    }
    misses
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A warp's fetch equals the lane-by-lane fetch, values and out-of-bounds count: every
    /// format, per-vertex and per-instance steps (warps of one instance and of several),
    /// aligned and unaligned offsets and strides,
    /// slices starting mid-buffer, vertices inside, straddling and past the end, register
    /// counts 1…4, partial warps.
    #[test]
    fn warp_fetch_equals_lane_fetches() {
        let formats = VertexFormat::ALL;
        let mut s = 0x2545_f491u32;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        let bytes: Vec<u8> = (0..1024).map(|_| next() as u8).collect();
        let data = words(&bytes);
        let (mut fast, mut missed) = (0, 0);
        for case in 0..4000 {
            let r = next();
            let format = formats[r as usize % formats.len()];
            let step = if r >> 8 & 7 == 0 {
                VertexStepMode::Instance
            } else {
                VertexStepMode::Vertex
            };
            let stride = [4, 8, 12, 16, 20, 28, 6, 2][(r >> 11) as usize % 8];
            let offset = [0, 4, 8, 2, 1][(r >> 14) as usize % 5];
            let start = [0u64, 4, 8, 2][(r >> 17) as usize % 4];
            let size = 1024 - start - (next() % 200) as u64;
            let buf = BufferSlice {
                words: &data,
                offset: start,
                size,
            };
            let lanes = 1 + next() as usize % 32;
            let comps = 1 + (r >> 20) as usize % 4;
            let ids: Vec<u32> = (0..lanes)
                .map(|_| match next() % 8 {
                    0 => next(),
                    _ => next() % 80,
                })
                .collect();
            // One instance for the warp, or several packed in it (non-decreasing, as a
            // batch fills them).
            let mut instance = next() % 80;
            let packed = next() % 2 == 0;
            let instances: Vec<u32> = (0..lanes)
                .map(|_| {
                    instance += (packed && next() % 8 == 0) as u32;
                    instance
                })
                .collect();
            let mut c1 = Counters::default();
            let mut expected = vec![[0u32; 32]; comps];
            for (lane, (&id, &instance)) in ids.iter().zip(&instances).enumerate() {
                let v = fetch_attribute(&buf, format, offset, stride, step, id, instance, &mut c1);
                for (c, reg) in expected.iter_mut().enumerate() {
                    reg[lane] = v[c];
                }
            }
            let mut c2 = Counters::default();
            let mut got = vec![[0u32; 32]; comps];
            fetch_attribute_lanes(
                &buf, format, offset, stride, step, &ids, &instances, &mut got, &mut c2,
            );
            assert_eq!(got, expected, "case {case}: {format:?} {step:?}");
            assert_eq!(
                c1.out_of_bounds_fetches, c2.out_of_bounds_fetches,
                "case {case}"
            );
            fast += (format.whole_words().is_some() && (start + offset).is_multiple_of(4)) as u32;
            missed += (c1.out_of_bounds_fetches > 0) as u32;
        }
        assert!(fast > 400 && missed > 400, "{fast} {missed}");
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
