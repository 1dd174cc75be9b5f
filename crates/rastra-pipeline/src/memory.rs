//! Memory as the units see it during a draw (T9 "memory"; BRIEF "Memory"): buffers, and
//! colour and depth surfaces with each sample stored in the surface's real format.
//!
//! Buffers are device memory made of 32-bit words (`AtomicU32`): shader loads, stores and
//! atomics, fixed-function fetches and API copies may touch them from any thread without
//! undefined behaviour; [`BufferSlice`] addresses bytes inside them for the fixed-function
//! units (index and vertex fetch).
//!
//! Layout invariant: a surface is one 2D subresource of a texture in texture memory's tiled
//! layout (`rastra_texture::SurfaceLayout`: 8×8-pixel tiles, Morton order inside, a pixel's
//! samples adjacent), so texel `(x, y, sample)` starts at
//! `layout.pixel(x, y) + sample * texel_size`. The texture units read the same bytes when a
//! rendered texture is sampled later.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crate::binning::TileGrid;
use crate::format::TextureFormat;
use crate::workers::Workers;

/// A byte range of a buffer: `words` is the whole buffer, `offset..offset + size` the range.
#[derive(Clone, Copy, Debug)]
pub struct BufferSlice<'a> {
    pub words: &'a [AtomicU32],
    pub offset: u64,
    pub size: u64,
}

impl<'a> BufferSlice<'a> {
    pub const EMPTY: BufferSlice<'static> = BufferSlice {
        words: &[],
        offset: 0,
        size: 0,
    };

    /// Copies `out.len()` bytes starting `at` bytes into the range; false (and `out`
    /// untouched) when any of them lies outside it.
    #[inline]
    pub fn read(&self, at: u64, out: &mut [u8]) -> bool {
        let len = out.len() as u64;
        if at.checked_add(len).is_none_or(|end| end > self.size) {
            return false;
        }
        read_bytes(self.words, self.offset + at, out);
        true
    }

    /// An index of `size` bytes (2 or 4, little-endian) starting `at` bytes into the range,
    /// or `None` when any of its bytes lies outside it: what [`BufferSlice::read`] reads,
    /// from the one word that holds it when it is aligned to its size (index buffers bound
    /// at offsets the index size divides always are).
    #[inline]
    pub fn read_index(&self, at: u64, size: usize) -> Option<u32> {
        if at
            .checked_add(size as u64)
            .is_none_or(|end| end > self.size)
        {
            return None;
        }
        let addr = self.offset + at;
        if addr.is_multiple_of(size as u64) && (size == 2 || size == 4) {
            let word = self.words[(addr / 4) as usize].load(Ordering::Relaxed);
            let value = word >> (8 * (addr % 4));
            return Some(if size == 2 { value & 0xffff } else { value });
        }
        let mut bytes = [0u8; 4];
        read_bytes(self.words, addr, &mut bytes[..size.min(4)]);
        Some(u32::from_le_bytes(bytes))
    }

    /// [`BufferSlice::read`] of `out.len()` whole words starting `at` bytes into the range,
    /// where `offset + at` is a multiple of 4: each word loaded as it is.
    #[inline]
    pub fn read_words(&self, at: u64, out: &mut [u32]) -> bool {
        let len = 4 * out.len() as u64;
        if at.checked_add(len).is_none_or(|end| end > self.size) {
            return false;
        }
        let addr = self.offset + at;
        debug_assert!(addr.is_multiple_of(4), "word read at byte {addr}");
        let first = (addr / 4) as usize;
        let n = out.len();
        for (o, w) in out.iter_mut().zip(&self.words[first..first + n]) {
            *o = w.load(Ordering::Relaxed);
        }
        true
    }
}

/// Copies bytes out of word memory starting at byte `offset` (which must be in range).
#[inline]
pub fn read_bytes(words: &[AtomicU32], offset: u64, out: &mut [u8]) {
    let mut addr = offset as usize;
    let mut i = 0;
    while i < out.len() {
        let word = words[addr / 4].load(Ordering::Relaxed).to_le_bytes();
        let start = addr % 4;
        let n = (4 - start).min(out.len() - i);
        out[i..i + n].copy_from_slice(&word[start..start + n]);
        i += n;
        addr += n;
    }
}

/// Copies bytes into word memory starting at byte `offset` (which must be in range); words
/// only partly covered keep their other bytes.
pub fn write_bytes(words: &[AtomicU32], offset: u64, data: &[u8]) {
    let offset = offset as usize;
    // A partly covered first word, whole words, a partly covered last word.
    let head = ((4 - offset % 4) % 4).min(data.len());
    merge_bytes(words, offset, &data[..head]);
    let whole = (data.len() - head) / 4 * 4;
    let first = (offset + head) / 4;
    for (word, bytes) in words[first..first + whole / 4]
        .iter()
        .zip(data[head..head + whole].chunks_exact(4))
    {
        let v = u32::from_le_bytes(bytes.try_into().expect("four bytes"));
        word.store(v, Ordering::Relaxed);
    }
    merge_bytes(words, offset + head + whole, &data[head + whole..]);
}

/// Writes `data` (at most the rest of one word) at byte `addr`, keeping the word's other
/// bytes.
fn merge_bytes(words: &[AtomicU32], addr: usize, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let start = addr % 4;
    let word = &words[addr / 4];
    let mut bytes = word.load(Ordering::Relaxed).to_le_bytes();
    bytes[start..start + data.len()].copy_from_slice(data);
    word.store(u32::from_le_bytes(bytes), Ordering::Relaxed);
}

use crate::state::Color;
pub use rastra_texture::SurfaceLayout;

/// A render-target surface shared by the back end's tile workers.
///
/// Invariant (what makes the unsafe access sound): the back end gives every screen tile to
/// exactly one worker at a time, quads never straddle tiles (tiles are multiples of 2
/// pixels), and a surface's texels for a pixel lie in that pixel's own byte range — so no
/// two threads ever touch the same bytes.
pub struct SharedSurface<'a> {
    ptr: *mut u8,
    len: usize,
    _surface: std::marker::PhantomData<&'a mut [u8]>,
}

// SAFETY: access goes through `texels_mut`, whose contract keeps threads on disjoint bytes.
unsafe impl Send for SharedSurface<'_> {}
unsafe impl Sync for SharedSurface<'_> {}

impl<'a> SharedSurface<'a> {
    pub fn new(data: &'a mut [u8]) -> SharedSurface<'a> {
        SharedSurface {
            ptr: data.as_mut_ptr(),
            len: data.len(),
            _surface: std::marker::PhantomData,
        }
    }

    /// The bytes `at..at + len` of the surface.
    ///
    /// # Safety
    /// No other thread may access these bytes while the returned slice lives (the tile
    /// ownership invariant above guarantees it for the back end).
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn texels_mut(&self, at: usize, len: usize) -> &mut [u8] {
        assert!(at + len <= self.len, "texel range outside the surface");
        // SAFETY: in bounds (checked above); exclusive by the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), len) }
    }

    /// The address of the 16 bytes `at..at + 16` of the surface (a quad of 4-byte texels),
    /// for writes in place through raw pointers; using it carries [`SharedSurface::texels_mut`]'s
    /// obligation.
    #[inline]
    pub fn quad_ptr(&self, at: usize) -> *mut [u8; 16] {
        assert!(at + 16 <= self.len, "texel range outside the surface");
        // SAFETY: in bounds (checked above); no reference is made.
        unsafe { self.ptr.add(at).cast() }
    }

    /// The address of the `len` bytes `at..at + len` of the surface (a run of quads, such as
    /// an 8×8 tile's), checked once for every quad inside it; using it carries
    /// [`SharedSurface::texels_mut`]'s obligation.
    #[inline]
    pub fn range_ptr(&self, at: usize, len: usize) -> *mut u8 {
        assert!(
            at.checked_add(len).is_some_and(|end| end <= self.len),
            "texel range outside the surface"
        );
        // SAFETY: in bounds (checked above); no reference is made.
        unsafe { self.ptr.add(at) }
    }

    /// Asks the memory system for the cache lines of bytes `at..at + len` (clamped to the
    /// surface): a hint, which reads and changes nothing.
    #[inline(always)]
    pub fn prefetch(&self, at: usize, len: usize) {
        let at = at.min(self.len);
        let len = len.min(self.len - at);
        prefetch_bytes(self.ptr.wrapping_add(at), len);
    }
}

/// Asks for the cache lines of the `len` bytes at `start` (every line the range touches): a
/// hint — a prefetch never faults and changes no memory.
#[inline(always)]
pub(crate) fn prefetch_bytes(start: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        if len == 256 && (start as usize).is_multiple_of(256) {
            // The commonest range: an 8×8 block of 4-byte pixels (one Morton tile), four
            // whole lines — asked for without the loop.
            for k in 0..4 {
                // SAFETY: a prefetch never faults and changes no memory.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(64 * k).cast()) };
            }
            return;
        }
        let first = start as usize & !63;
        let mut line = first;
        while line < start as usize + len {
            // SAFETY: a prefetch never faults and changes no memory.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line as *const i8) };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, len);
}

/// A colour attachment bound for a draw: the texture's memory and where the attached
/// subresource lies in it.
pub struct ColorTarget<'a> {
    pub format: TextureFormat,
    pub data: &'a mut [u8],
    pub layout: SurfaceLayout,
}

/// The depth(-stencil) attachment bound for a draw, with its hierarchical-Z bounds.
pub struct DepthTarget<'a> {
    pub format: TextureFormat,
    pub data: &'a mut [u8],
    pub layout: SurfaceLayout,
    pub hiz: &'a mut crate::hiz::HiZBuffer,
}

/// The surfaces a draw renders into. All share width, height and sample count.
pub struct Framebuffer<'a> {
    pub width: u32,
    pub height: u32,
    pub samples: u32,
    pub colors: Vec<Option<ColorTarget<'a>>>,
    pub depth: Option<DepthTarget<'a>>,
    /// The render pass's clear, when tiles of it are still unwritten.
    pub clear: Option<&'a FastClear>,
}

/// The bytes of the subresource `layout` describes (tile padding included).
fn subresource<'d>(data: &'d mut [u8], layout: &SurfaceLayout) -> &'d mut [u8] {
    &mut data[layout.base..layout.base + layout.bytes]
}

/// Fills a colour surface with one colour (the render pass "clear" load operation).
pub fn clear_color(format: TextureFormat, data: &mut [u8], layout: &SurfaceLayout, color: Color) {
    fill_texels(
        subresource(data, layout),
        ClearTexel::color(format, color).bytes(),
    );
}

/// One texel's stored bytes (the first `size` of `bytes`): what a clear writes everywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClearTexel {
    bytes: [u8; 16],
    size: usize,
}

impl ClearTexel {
    /// The texel a colour clear to `color` stores in `format`.
    pub fn color(format: TextureFormat, color: Color) -> ClearTexel {
        let size = format.texel_size();
        let mut bytes = [0u8; 16];
        format.encode_color(color.to_array(), &mut bytes[..size]);
        ClearTexel { bytes, size }
    }

    /// The texel a depth-stencil clear stores, when it writes every byte of the texel
    /// (depth given or the format has none, stencil given or the format has none); `None`
    /// when part of each texel keeps its value.
    pub fn depth_stencil(
        format: TextureFormat,
        depth: Option<f32>,
        stencil: Option<u8>,
    ) -> Option<ClearTexel> {
        let whole =
            (depth.is_some() || !format.is_depth()) && (stencil.is_some() || !format.has_stencil());
        if !whole {
            return None;
        }
        let size = format.texel_size();
        let mut bytes = [0u8; 16];
        encode_depth_stencil(format, depth, stencil, &mut bytes[..size]);
        Some(ClearTexel { bytes, size })
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes[..self.size]
    }
}

/// A render pass's clear load operation as a *fast clear* (T9: the ROP marks the surface
/// cleared in its metadata instead of writing it; the clear value reaches memory later):
/// the pass begins with every screen tile (the back end's 64×64 tiles) pending, the back
/// end writes a tile's clear value just before its first triangle there — on the worker
/// that owns the tile, into bytes it is about to test and blend — and the pass end writes
/// the tiles no triangle touched, spread over the workers. No unit reads a surface between
/// those points, so every read sees the cleared values: the images are those of clearing
/// first. A 64×64 tile is whole 8×8 memory tiles, one contiguous run of bytes per row of
/// them, so a tile's clear is a few fills.
pub struct FastClear {
    grid: TileGrid,
    /// Per tile: its clear is not written yet.
    pending: Vec<AtomicBool>,
    /// Per colour attachment, the texel its clear stores (`None`: loaded, not cleared).
    colors: Vec<Option<ClearTexel>>,
    depth: Option<ClearTexel>,
}

impl FastClear {
    /// A clear of a `width × height` framebuffer's colour attachments (`colors`, in
    /// attachment order) and depth attachment; `None` when it clears nothing.
    pub fn new(
        width: u32,
        height: u32,
        colors: Vec<Option<ClearTexel>>,
        depth: Option<ClearTexel>,
    ) -> Option<FastClear> {
        if depth.is_none() && colors.iter().all(Option::is_none) {
            return None;
        }
        let grid = TileGrid::new(width, height);
        Some(FastClear {
            grid,
            pending: (0..grid.count()).map(|_| AtomicBool::new(true)).collect(),
            colors,
            depth,
        })
    }

    /// Writes tile `t`'s clear into every cleared surface unless it is written already;
    /// true when this call wrote it. The caller owns the tile (`SharedSurface`'s invariant).
    pub(crate) fn fill_tile(
        &self,
        t: usize,
        colors: &[Option<(SharedSurface<'_>, SurfaceLayout)>],
        depth: Option<&SharedSurface<'_>>,
        depth_layout: Option<&SurfaceLayout>,
    ) -> bool {
        if !self.pending[t].swap(false, Ordering::Relaxed) {
            return false;
        }
        let rect = self.grid.tile_rect(t);
        let fill = |surface: &SharedSurface<'_>, layout: &SurfaceLayout, texel: &ClearTexel| {
            // Rows of 8×8 memory tiles inside the screen tile: each a contiguous run.
            let (tx0, tx1) = (rect.x0 / 8, rect.x1 / 8);
            for ty in rect.y0 / 8..=rect.y1 / 8 {
                let start = layout.pixel(tx0 * 8, ty * 8);
                let len = (tx1 - tx0 + 1) as usize * 64 * layout.pixel_bytes;
                // SAFETY: the tile's bytes belong to the caller (SharedSurface invariant).
                fill_texels(unsafe { surface.texels_mut(start, len) }, texel.bytes());
            }
        };
        for (texel, target) in self.colors.iter().zip(colors) {
            if let (Some(texel), Some((surface, layout))) = (texel, target) {
                fill(surface, layout, texel);
            }
        }
        if let (Some(texel), Some(surface), Some(layout)) = (&self.depth, depth, depth_layout) {
            fill(surface, layout, texel);
        }
        true
    }

    /// Writes every tile still pending (the pass end), on the workers; returns how many.
    pub fn finish(
        &self,
        colors: Vec<Option<(&mut [u8], SurfaceLayout)>>,
        depth: Option<(&mut [u8], SurfaceLayout)>,
        workers: &Workers,
    ) -> u64 {
        let colors: Vec<Option<(SharedSurface<'_>, SurfaceLayout)>> = colors
            .into_iter()
            .map(|c| c.map(|(data, layout)| (SharedSurface::new(data), layout)))
            .collect();
        let (depth, depth_layout) = match depth {
            Some((data, layout)) => (Some(SharedSurface::new(data)), Some(layout)),
            None => (None, None),
        };
        let left: Vec<usize> = (0..self.pending.len())
            .filter(|&t| self.pending[t].load(Ordering::Relaxed))
            .collect();
        let filled = workers.map_init(
            left.len(),
            || (),
            |_, k| self.fill_tile(left[k], &colors, depth.as_ref(), depth_layout.as_ref()),
        );
        filled.into_iter().filter(|&f| f).count() as u64
    }
}

/// Fills `dst` with copies of `texel`, as many whole texels as fit: the texel is written
/// once and the filled part copied onto the rest, doubling each time (memory speed).
fn fill_texels(dst: &mut [u8], texel: &[u8]) {
    let size = texel.len();
    let len = dst.len() / size * size;
    let dst = &mut dst[..len];
    if texel.iter().all(|&b| b == texel[0]) {
        dst.fill(texel[0]);
        return;
    }
    let mut filled = size.min(len);
    dst[..filled].copy_from_slice(&texel[..filled]);
    while filled < len {
        let n = filled.min(len - filled);
        dst.copy_within(..n, filled);
        filled += n;
    }
}

/// Fills a depth(-stencil) surface: depth when `depth` is given, stencil when `stencil` is.
pub fn clear_depth_stencil(
    format: TextureFormat,
    data: &mut [u8],
    layout: &SurfaceLayout,
    depth: Option<f32>,
    stencil: Option<u8>,
) {
    if let Some(texel) = ClearTexel::depth_stencil(format, depth, stencil) {
        // Every byte of a texel is cleared: encode one and replicate it.
        fill_texels(subresource(data, layout), texel.bytes());
        return;
    }
    for chunk in subresource(data, layout).chunks_exact_mut(format.texel_size()) {
        encode_depth_stencil(format, depth, stencil, chunk);
    }
}

/// Writes the given depth (clamped to [0, 1], quantised) and stencil into one stored texel,
/// leaving the part not given as it is.
fn encode_depth_stencil(
    format: TextureFormat,
    depth: Option<f32>,
    stencil: Option<u8>,
    texel: &mut [u8],
) {
    if let Some(z) = depth {
        format.encode_depth(format.quantize_depth(z.clamp(0.0, 1.0)), texel);
    }
    if let Some(s) = stencil {
        format.encode_stencil(s, texel);
    }
}

/// Resolves a multisampled colour surface into a single-sample one by averaging each pixel's
/// samples in linear space (sRGB surfaces are decoded first). Returns pixels resolved.
pub fn resolve(
    format: TextureFormat,
    src: &[u8],
    src_layout: &SurfaceLayout,
    samples: u32,
    dst_format: TextureFormat,
    dst: &mut [u8],
    dst_layout: &SurfaceLayout,
) -> u64 {
    let size = format.texel_size();
    let dst_size = dst_format.texel_size();
    let (w, h) = (
        src_layout.width.min(dst_layout.width),
        src_layout.height.min(dst_layout.height),
    );
    for y in 0..h {
        for x in 0..w {
            let mut sum = [0.0f32; 4];
            let base = src_layout.pixel(x, y);
            for s in 0..samples as usize {
                let at = base + s * size;
                let c = format.decode_color(&src[at..at + size]);
                for i in 0..4 {
                    sum[i] += c[i];
                }
            }
            let avg = sum.map(|v| v / samples as f32);
            let at = dst_layout.pixel(x, y);
            dst_format.encode_color(avg, &mut dst[at..at + dst_size]);
        }
    }
    w as u64 * h as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index read from its word is the bytes [`BufferSlice::read`] reads, at every
    /// offset of the range (aligned to the index size or not — the slow path), for both
    /// index sizes, and `None` exactly when `read` refuses.
    #[test]
    fn index_reads_equal_byte_reads() {
        let words: Vec<AtomicU32> = (0..8u32)
            .map(|i| AtomicU32::new(0x0403_0201u32.wrapping_mul(i + 1) ^ 0xa5c3_9b17))
            .collect();
        for offset in [0u64, 1, 2, 3, 4] {
            let slice = BufferSlice {
                words: &words,
                offset,
                size: 28 - offset,
            };
            for size in [2usize, 4] {
                for at in 0..32u64 {
                    let mut bytes = [0u8; 4];
                    let want = slice
                        .read(at, &mut bytes[..size])
                        .then(|| u32::from_le_bytes(bytes));
                    assert_eq!(
                        slice.read_index(at, size),
                        want,
                        "offset {offset}, size {size}, at {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn fills_repeat_the_texel_exactly() {
        for size in [1usize, 2, 4, 8, 16] {
            for len in [0usize, 1, 7, 16, 100, 4096 + 8, 10_000] {
                let texel: Vec<u8> = (0..size as u8).map(|b| b.wrapping_mul(37) + 1).collect();
                let mut got = vec![0xeeu8; len];
                fill_texels(&mut got, &texel);
                let whole = len / size * size;
                for (i, &b) in got.iter().enumerate() {
                    let want = if i < whole { texel[i % size] } else { 0xee };
                    assert_eq!(b, want, "size {size} len {len} byte {i}");
                }
            }
        }
    }

    #[test]
    fn writes_of_any_offset_and_length_change_exactly_their_bytes() {
        for offset in 0..9usize {
            for len in 0..14usize {
                let words: Vec<AtomicU32> = (0..8).map(|_| AtomicU32::new(0xaaaa_aaaa)).collect();
                let data: Vec<u8> = (1..=len as u8).collect();
                write_bytes(&words, offset as u64, &data);
                let mut want = [0xaau8; 32];
                want[offset..offset + len].copy_from_slice(&data);
                let mut got = [0u8; 32];
                read_bytes(&words, 0, &mut got);
                assert_eq!(got, want, "offset {offset}, {len} bytes");
            }
        }
    }

    #[test]
    fn bytes_round_trip_through_words_at_any_alignment() {
        let words: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0xaaaa_aaaa)).collect();
        write_bytes(&words, 3, &[1, 2, 3, 4, 5, 6]);
        let mut all = [0u8; 16];
        read_bytes(&words, 0, &mut all);
        assert_eq!(
            all,
            [
                0xaa, 0xaa, 0xaa, 1, 2, 3, 4, 5, 6, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa
            ]
        );
        let slice = BufferSlice {
            words: &words,
            offset: 2,
            size: 8,
        };
        let mut two = [0u8; 2];
        assert!(slice.read(1, &mut two));
        assert_eq!(two, [1, 2]);
        assert!(!slice.read(7, &mut two), "past the end of the range");
    }
}
