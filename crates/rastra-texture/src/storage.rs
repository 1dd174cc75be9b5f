//! Texture memory — T4's "underlying texture resource": a pointer to the texture bits with
//! their physical layout nailed down, but no interpretation yet (that is the view's job).
//!
//! `TextureDesc` is validated per WebGPU `createTexture` (§6.1.3): non-zero sizes within the
//! limits, mip count ≤ ⌊log2(max extent)⌋ + 1, 1D textures single-level and single-sampled,
//! compressed formats block-aligned (BC and ASTC allowed in 3D as with the sliced-3D
//! features, ETC2/EAC not), multisampling only 4× on single-level, single-layer 2D textures
//! of a multisample-capable format.
//!
//! **Layout (tiled, as hardware does).** Each 2D slice of each mip level (a 2D array layer or
//! a 3D depth slice) is a grid of *elements* — texels, 4×4 (or ASTC-sized) blocks for
//! compressed formats, or a multisampled pixel's samples side by side (so the ROPs and the
//! depth unit find a pixel's samples in one place, [`SurfaceLayout`]). Storage slice indices
//! still count samples: slice `layer × samples + s` is sample `s` of `layer`. Elements are grouped in 8×8 tiles
//! stored in row-major tile order; inside a tile, elements are in Morton (Z) order. So a
//! tile of 4-byte texels is 256 bytes and every aligned 64-byte run holds a 4×4 texel square
//! (one L1 cache line's worth, see `cache`), and a bilinear footprint touches at most four
//! neighbouring runs; the address is a few bit interleaves, the same idea as D3D's standard
//! swizzle at a smaller scale. Rows are padded to whole tiles. 1D textures are linear (a
//! one-texel-high tile would waste 7/8 of the memory). Mips are stored one after the other
//! (level-major), each level's slices consecutively.
//!
//! Uploads and downloads convert between that layout and linear rows with a row pitch
//! (WebGPU `GPUTexelCopyBufferLayout`: offset, bytes per row, rows per image), and
//! `copy_texture_to_texture` copies regions between textures. Texture-to-texture copies move
//! the stored bytes of every aspect; uploads and downloads may name one aspect of a combined
//! format (a depth24plus-stencil8 texel is 4 bytes: depth in bytes 0..3, stencil in byte 3;
//! depth32float-stencil8 is 8: f32 depth, stencil, 3 pad bytes), whose bytes are then packed
//! in the linear data.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use crate::format::{TextureAspect, TextureFormat};
use crate::{TextureError, invalid};

/// Elements per tile side (8×8 elements per tile, Morton order inside).
pub const TILE: u32 = 8;

/// Texture dimensionality of the resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureDimension {
    D1,
    D2,
    D3,
}

/// Device limits that bound texture creation (WebGPU's default limits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_texture_dimension_1d: u32,
    pub max_texture_dimension_2d: u32,
    pub max_texture_dimension_3d: u32,
    pub max_texture_array_layers: u32,
    /// Largest allocation one texture may take (bytes), so a huge descriptor is an error
    /// rather than an allocation failure.
    pub max_texture_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_texture_dimension_1d: 8192,
            max_texture_dimension_2d: 8192,
            max_texture_dimension_3d: 2048,
            max_texture_array_layers: 256,
            max_texture_bytes: 1 << 31,
        }
    }
}

/// What a texture is: WebGPU's `GPUTextureDescriptor` minus usages and view formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureDesc {
    pub dimension: TextureDimension,
    /// Width, height and depth (3D) or array layers (1D/2D).
    pub size: [u32; 3],
    pub mip_level_count: u32,
    pub sample_count: u32,
    pub format: TextureFormat,
}

impl TextureDesc {
    /// A single-level, single-sampled 2D texture (one layer).
    pub fn d2(width: u32, height: u32, format: TextureFormat) -> Self {
        TextureDesc {
            dimension: TextureDimension::D2,
            size: [width, height, 1],
            mip_level_count: 1,
            sample_count: 1,
            format,
        }
    }

    /// Same descriptor with `n` mip levels.
    pub fn with_mips(mut self, n: u32) -> Self {
        self.mip_level_count = n;
        self
    }

    /// Same descriptor with `n` array layers (or depth for 3D).
    pub fn with_layers(mut self, n: u32) -> Self {
        self.size[2] = n;
        self
    }

    /// The full mip chain length for this size: ⌊log2(max extent)⌋ + 1 (1 for 1D).
    pub fn max_mip_levels(&self) -> u32 {
        let m = match self.dimension {
            TextureDimension::D1 => return 1,
            TextureDimension::D2 => self.size[0].max(self.size[1]),
            TextureDimension::D3 => self.size[0].max(self.size[1]).max(self.size[2]),
        };
        32 - m.max(1).leading_zeros()
    }

    /// Array layers (1 for 3D textures).
    pub fn array_layers(&self) -> u32 {
        match self.dimension {
            TextureDimension::D3 => 1,
            _ => self.size[2],
        }
    }

    /// Logical size of mip `level`: width, height, depth (3D) or layers (1D/2D).
    pub fn mip_size(&self, level: u32) -> [u32; 3] {
        let s = |v: u32| (v >> level.min(31)).max(1);
        match self.dimension {
            TextureDimension::D1 => [s(self.size[0]), 1, self.size[2]],
            TextureDimension::D2 => [s(self.size[0]), s(self.size[1]), self.size[2]],
            TextureDimension::D3 => [s(self.size[0]), s(self.size[1]), s(self.size[2])],
        }
    }

    /// Mip size rounded up to whole blocks (WebGPU's "physical miplevel-specific size").
    pub fn physical_mip_size(&self, level: u32) -> [u32; 3] {
        let [w, h, d] = self.mip_size(level);
        let (bw, bh) = self.format.block_dims();
        [w.div_ceil(bw) * bw, h.div_ceil(bh) * bh, d]
    }

    /// Checks the WebGPU `createTexture` rules against `limits`.
    pub fn validate(&self, limits: &Limits) -> Result<(), TextureError> {
        let [w, h, d] = self.size;
        let f = self.format;
        if w == 0 || h == 0 || d == 0 {
            return invalid!("texture size {:?} has a zero extent", self.size);
        }
        if self.mip_level_count == 0 {
            return invalid!("mip_level_count must be at least 1");
        }
        if self.sample_count != 1 && self.sample_count != 4 {
            return invalid!("sample_count {} is not 1 or 4", self.sample_count);
        }
        match self.dimension {
            TextureDimension::D1 => {
                if w > limits.max_texture_dimension_1d {
                    return invalid!("1D width {w} exceeds maxTextureDimension1D");
                }
                if h != 1 || d != 1 {
                    return invalid!("1D textures have height and depthOrArrayLayers 1");
                }
                if f.is_compressed() || f.is_depth_stencil() {
                    return invalid!("{f:?} cannot be a 1D texture");
                }
            }
            TextureDimension::D2 => {
                let m = limits.max_texture_dimension_2d;
                if w > m || h > m {
                    return invalid!("2D size {w}×{h} exceeds maxTextureDimension2D ({m})");
                }
                if d > limits.max_texture_array_layers {
                    return invalid!("{d} array layers exceed maxTextureArrayLayers");
                }
            }
            TextureDimension::D3 => {
                let m = limits.max_texture_dimension_3d;
                if w > m || h > m || d > m {
                    return invalid!("3D size {w}×{h}×{d} exceeds maxTextureDimension3D ({m})");
                }
                if f.is_depth_stencil() {
                    return invalid!("depth/stencil format {f:?} cannot be a 3D texture");
                }
                if f.is_etc2() {
                    return invalid!("ETC2/EAC format {f:?} cannot be a 3D texture");
                }
            }
        }
        if f.is_compressed() {
            let (bw, bh) = f.block_dims();
            if w % bw != 0 || h % bh != 0 {
                return invalid!("{f:?} needs a size that is a multiple of {bw}×{bh}, not {w}×{h}");
            }
        }
        if self.mip_level_count > self.max_mip_levels() {
            return invalid!(
                "mip_level_count {} exceeds the {} levels of a {:?} {w}×{h}×{d} texture",
                self.mip_level_count,
                self.max_mip_levels(),
                self.dimension
            );
        }
        if self.sample_count > 1 {
            if self.dimension != TextureDimension::D2 {
                return invalid!("multisampled textures must be 2D");
            }
            if self.mip_level_count != 1 {
                return invalid!("multisampled textures have one mip level");
            }
            if d != 1 {
                return invalid!("multisampled textures have one array layer");
            }
            if !f.supports_multisample() {
                return invalid!("{f:?} does not support multisampling");
            }
        }
        let bytes = Layout::new(self).total;
        if bytes > limits.max_texture_bytes {
            return invalid!("texture needs {bytes} bytes, more than the limit");
        }
        Ok(())
    }
}

/// Where one mip level lives and how its slices are tiled.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MipLayout {
    pub(crate) offset: u64,
    /// Elements (texels or blocks) across and down.
    pub(crate) elems: [u32; 2],
    pub(crate) tiles_x: u32,
    /// Bytes of one layer (all its samples) or 3D slice.
    pub(crate) slice_bytes: u64,
    /// Layers or 3D slices.
    pub(crate) slices: u32,
}

/// How a render target addresses one 2D subresource (mip level, layer) of a non-1D
/// texture: 8×8-pixel tiles in row-major order, Morton order inside, each pixel's
/// `samples` texels adjacent. A 64×64 screen tile is whole memory tiles, so workers owning
/// different screen tiles touch different bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SurfaceLayout {
    /// Byte offset of the subresource in the texture's memory.
    pub base: usize,
    pub width: u32,
    pub height: u32,
    pub tiles_x: u32,
    /// Bytes per pixel (texel size × samples).
    pub pixel_bytes: usize,
    /// Bytes of the subresource (whole tiles).
    pub bytes: usize,
}

impl SurfaceLayout {
    /// Byte offset of pixel (x, y)'s first sample.
    #[inline]
    pub fn pixel(&self, x: u32, y: u32) -> usize {
        self.element_offset(self.element(x, y))
    }

    /// Pixel (x, y)'s place in the tiled order ([`tiled_element`]): the same in every
    /// surface of this width, whatever its texel size, samples or base.
    #[inline]
    pub fn element(&self, x: u32, y: u32) -> usize {
        tiled_element(self.tiles_x, x, y)
    }

    /// Byte offset of the first sample of the pixel at tiled place `element`
    /// ([`SurfaceLayout::element`]).
    #[inline]
    pub fn element_offset(&self, element: usize) -> usize {
        self.base + element * self.pixel_bytes
    }
}

/// Pixel (x, y)'s place in a surface `tiles_x` tiles wide: its 8×8 tile's index (row-major)
/// times 64 plus its Morton index inside the tile. A quad's four pixels are four
/// consecutive places from its top-left pixel's.
#[inline]
pub fn tiled_element(tiles_x: u32, x: u32, y: u32) -> usize {
    let tile = (y / TILE) as usize * tiles_x as usize + (x / TILE) as usize;
    tile * (TILE * TILE) as usize + morton8(x % TILE, y % TILE) as usize
}

#[derive(Clone, Debug)]
struct Layout {
    mips: Vec<MipLayout>,
    total: u64,
    /// Bytes of one element (texel or block) — the format's block size, kept here because
    /// every texel address needs it.
    elem_bytes: u64,
}

impl Layout {
    fn new(desc: &TextureDesc) -> Layout {
        let elem = desc.format.block_size() as u64;
        let (bw, bh) = desc.format.block_dims();
        let linear = desc.dimension == TextureDimension::D1;
        let mut offset = 0u64;
        let mut mips = Vec::new();
        for level in 0..desc.mip_level_count.min(32) {
            let [w, h, d] = desc.mip_size(level);
            let elems = [w.div_ceil(bw), h.div_ceil(bh)];
            let (tiles_x, slice_bytes) = if linear {
                (0, elems[0] as u64 * elem)
            } else {
                let tx = elems[0].div_ceil(TILE);
                let ty = elems[1].div_ceil(TILE);
                (tx, tx as u64 * ty as u64 * (TILE * TILE) as u64 * elem)
            };
            let slice_bytes = slice_bytes.saturating_mul(desc.sample_count.max(1) as u64);
            let slices = d;
            mips.push(MipLayout {
                offset,
                elems,
                tiles_x,
                slice_bytes,
                slices,
            });
            offset = offset.saturating_add(slice_bytes.saturating_mul(slices as u64));
        }
        Layout {
            mips,
            total: offset,
            elem_bytes: elem,
        }
    }
}

/// Copies one element, or two adjacent ones, between linear data and texture memory: the
/// common sizes as
/// fixed-size copies (a texel is a few bytes, and a copy of unknown length is a library
/// call).
#[inline(always)]
fn copy_element(dst: &mut [u8], src: &[u8]) {
    fn fixed<const N: usize>(dst: &mut [u8], src: &[u8]) {
        match (
            <&mut [u8; N]>::try_from(&mut *dst),
            <&[u8; N]>::try_from(src),
        ) {
            (Ok(d), Ok(s)) => *d = *s,
            _ => dst.copy_from_slice(src),
        }
    }
    match src.len() {
        2 => fixed::<2>(dst, src),
        4 => fixed::<4>(dst, src),
        8 => fixed::<8>(dst, src),
        16 => fixed::<16>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

/// Position of element (x, y) inside its 8×8 tile, in Morton order (of the coordinates'
/// low three bits): a table, one load instead of interleaving the bits (sixteen
/// instructions on every pixel address the ROP and depth units compute).
#[inline]
pub fn morton8(x: u32, y: u32) -> u32 {
    const fn spread(v: u32) -> u32 {
        (v & 1) | (v & 2) << 1 | (v & 4) << 2
    }
    const TABLE: [u8; 64] = {
        let mut t = [0u8; 64];
        let mut i = 0;
        while i < 64 {
            t[i] = (spread(i as u32 & 7) | spread(i as u32 >> 3) << 1) as u8;
            i += 1;
        }
        t
    };
    TABLE[((y & 7) << 3 | (x & 7)) as usize] as u32
}

/// The inverse of [`morton8`]: the (x, y) of Morton index `m` (< 64) in an 8×8 tile
/// (a table).
#[inline]
pub(crate) const fn demorton8(m: u32) -> (u32, u32) {
    const fn gather(v: u32) -> u32 {
        (v & 1) | (v >> 1 & 2) | (v >> 2 & 4)
    }
    const TABLE: [(u8, u8); 64] = {
        let mut t = [(0u8, 0u8); 64];
        let mut m = 0;
        while m < 64 {
            t[m] = (gather(m as u32) as u8, gather(m as u32 >> 1) as u8);
            m += 1;
        }
        t
    };
    let (x, y) = TABLE[(m & 63) as usize];
    (x as u32, y as u32)
}

static NEXT_TEXTURE_ID: AtomicU64 = AtomicU64::new(1);

/// A texture's region of the cache model's address space is 2⁴⁰ bytes
/// ([`Texture::memory_base`]): larger than any texture the limits allow.
const MEMORY_REGION_BITS: u32 = 40;

/// A texture's memory: the validated descriptor and its bytes in the tiled layout. A clone
/// is a snapshot with the same identity (same id and generation, so the texel caches and
/// views accept it as the texture it was taken from).
#[derive(Clone, Debug)]
pub struct Texture {
    desc: TextureDesc,
    id: u64,
    /// Where the texture's bytes start in the cache model's address space
    /// ([`Texture::memory_base`]).
    memory_base: u64,
    generation: u64,
    layout: Layout,
    data: Vec<u8>,
}

/// A texel position for copies: mip level, origin (x, y, and z = array layer or 3D slice),
/// aspect (copies move whole stored texels, so `All`, or the only aspect of the format).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TextureCopy {
    pub mip_level: u32,
    pub origin: [u32; 3],
    pub aspect: TextureAspect,
}

/// Linear data layout of an upload or download (WebGPU `GPUTexelCopyBufferLayout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DataLayout {
    pub offset: u64,
    /// Bytes between the starts of consecutive block rows; needed when a copy has more than
    /// one block row.
    pub bytes_per_row: Option<u32>,
    /// Block rows between consecutive images; needed when a copy has more than one image.
    pub rows_per_image: Option<u32>,
}

impl DataLayout {
    /// Tightly packed rows for a copy of `size` texels of `format`.
    pub fn packed(format: TextureFormat, size: [u32; 3]) -> DataLayout {
        let (bw, bh) = format.block_dims();
        DataLayout {
            offset: 0,
            bytes_per_row: Some(size[0].div_ceil(bw) * format.block_size() as u32),
            rows_per_image: Some(size[1].div_ceil(bh)),
        }
    }
}

/// A validated copy region: element ranges plus the linear layout's strides.
struct Region {
    mip: u32,
    /// First element (block) column and row.
    ex: u32,
    ey: u32,
    /// Elements across, element rows, images (layers or slices).
    blocks: u32,
    rows: u32,
    images: u32,
    z: u32,
    /// The bytes of each stored element the copy moves: (offset, length) — the whole
    /// element, or one aspect of a combined depth-stencil texel.
    part: (usize, usize),
}

/// The bytes of a stored `format` element that a copy of `aspect` moves (offset, length).
fn aspect_part(
    format: TextureFormat,
    aspect: TextureAspect,
) -> Result<(usize, usize), TextureError> {
    use TextureFormat::{Depth24PlusStencil8, Depth32FloatStencil8};
    match (format, aspect) {
        (Depth24PlusStencil8, TextureAspect::StencilOnly) => Ok((3, 1)),
        (Depth24PlusStencil8, TextureAspect::DepthOnly) => Err(TextureError::Unsupported(
            "copying the depth aspect of Depth24PlusStencil8 on its own (its depth bits are \
             the implementation's; WebGPU does not copy them)"
                .to_string(),
        )),
        (Depth32FloatStencil8, TextureAspect::DepthOnly) => Ok((0, 4)),
        (Depth32FloatStencil8, TextureAspect::StencilOnly) => Ok((4, 1)),
        _ => Ok((0, format.block_size())),
    }
}

impl Texture {
    /// Allocates a zero-filled texture after validating `desc` against the default limits.
    pub fn new(desc: TextureDesc) -> Result<Texture, TextureError> {
        Texture::with_limits(desc, &Limits::default())
    }

    /// Allocates a zero-filled texture after validating `desc` against `limits`.
    pub fn with_limits(desc: TextureDesc, limits: &Limits) -> Result<Texture, TextureError> {
        desc.validate(limits)?;
        let layout = Layout::new(&desc);
        let Ok(len) = usize::try_from(layout.total) else {
            return invalid!("texture of {} bytes does not fit in memory", layout.total);
        };
        let id = NEXT_TEXTURE_ID.fetch_add(1, Ordering::Relaxed);
        Ok(Texture {
            desc,
            id,
            memory_base: id << MEMORY_REGION_BITS,
            generation: 0,
            layout,
            data: vec![0; len],
        })
    }

    pub fn desc(&self) -> &TextureDesc {
        &self.desc
    }

    pub fn format(&self) -> TextureFormat {
        self.desc.format
    }

    /// Unique id (in the process): the texture's identity, for views and the texel caches.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The address of the texture's first byte in the cache model's memory: each texture
    /// has a region of 2⁴⁰ bytes of its own, `region << 40`. A device numbers its textures'
    /// regions itself, in the order it makes them ([`Texture::place_in_region`]), so what its
    /// caches do — sets, hits, misses — does not depend on textures other devices made
    /// before (the same work on a new device gives the same statistics); a texture made
    /// outside a device has the region of its id.
    pub fn memory_base(&self) -> u64 {
        self.memory_base
    }

    /// The number of the texture's memory region ([`Texture::memory_base`]).
    pub fn memory_region(&self) -> u64 {
        self.memory_base >> MEMORY_REGION_BITS
    }

    /// Places the texture in memory region `region` ([`Texture::memory_base`]).
    pub fn place_in_region(&mut self, region: u64) {
        self.memory_base = region << MEMORY_REGION_BITS;
    }

    /// Incremented by every write, so cached copies of older contents never hit.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Bytes of memory the texture occupies (tile padding included).
    pub fn memory_size(&self) -> u64 {
        self.layout.total
    }

    /// Elements (texels or blocks) across and down in mip `level`.
    pub(crate) fn mip_elements(&self, level: u32) -> [u32; 2] {
        self.layout
            .mips
            .get(level as usize)
            .map_or([0, 0], |m| m.elems)
    }

    /// Byte offset of element (`ex`, `ey`) of `slice` in mip `level`, or `None` when outside.
    /// `slice` is the array layer (times the sample count, plus the sample) or 3D slice.
    pub fn element_offset(&self, level: u32, slice: u32, ex: u32, ey: u32) -> Option<u64> {
        let m = self.layout.mips.get(level as usize)?;
        let samples = self.desc.sample_count.max(1);
        // Sampled textures are single-sampled: no division on their path.
        let (layer, sample) = if samples == 1 {
            (slice, 0)
        } else {
            (slice / samples, slice % samples)
        };
        if layer >= m.slices || ex >= m.elems[0] || ey >= m.elems[1] {
            return None;
        }
        let elem = self.layout.elem_bytes;
        let base = m.offset + layer as u64 * m.slice_bytes;
        let within = if self.desc.dimension == TextureDimension::D1 {
            ex as u64 * elem
        } else {
            let tile = (ey / TILE) as u64 * m.tiles_x as u64 + (ex / TILE) as u64;
            let pixel = tile * (TILE * TILE) as u64 + morton8(ex % TILE, ey % TILE) as u64;
            (pixel * samples as u64 + sample as u64) * elem
        };
        Some(base + within)
    }

    /// For a single-sampled 2D or 3D texture: the byte offset of slice `slice` of mip
    /// `level` and the level's tiles across — what [`Texture::element_offset`] adds a
    /// tile's and a Morton place's offset to. `None` for other textures or out of range.
    pub(crate) fn slice_origin(&self, level: u32, slice: u32) -> Option<(u64, u32)> {
        let m = self.layout.mips.get(level as usize)?;
        if self.desc.sample_count > 1
            || self.desc.dimension == TextureDimension::D1
            || slice >= m.slices
        {
            return None;
        }
        Some((m.offset + slice as u64 * m.slice_bytes, m.tiles_x))
    }

    /// The render-target addressing of (`level`, `layer`) — a layer of a 2D texture or a
    /// depth slice of a 3D one; `None` for 1D and compressed textures or out of range.
    pub fn surface(&self, level: u32, layer: u32) -> Option<SurfaceLayout> {
        let m = self.layout.mips.get(level as usize)?;
        if layer >= m.slices
            || self.desc.dimension == TextureDimension::D1
            || self.desc.format.is_compressed()
        {
            return None;
        }
        let [width, height, _] = self.desc.mip_size(level);
        Some(SurfaceLayout {
            base: (m.offset + layer as u64 * m.slice_bytes) as usize,
            width,
            height,
            tiles_x: m.tiles_x,
            pixel_bytes: self.desc.format.block_size() * self.desc.sample_count.max(1) as usize,
            bytes: m.slice_bytes as usize,
        })
    }

    /// Where mip `level` lives, if the texture has it.
    pub(crate) fn mip_layout(&self, level: u32) -> Option<MipLayout> {
        self.layout.mips.get(level as usize).copied()
    }

    /// The texture's memory as bytes many shader invocations may load and store at once
    /// (storage textures); bumps the generation like `bytes_mut`.
    pub fn shared_bytes(&mut self) -> &[AtomicU8] {
        self.generation += 1;
        let bytes: &mut [u8] = &mut self.data;
        // SAFETY: AtomicU8 has the size, alignment and bit validity of u8, and the
        // exclusive borrow of `data` is held for the returned lifetime, so nothing else
        // reads or writes the bytes except through these atomics.
        unsafe { &*(bytes as *mut [u8] as *const [AtomicU8]) }
    }

    /// The texture's memory (every level and layer, in the tiled layout).
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// The texture's memory for writing (bumps the generation, so cached texels of the old
    /// contents never hit).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.generation += 1;
        &mut self.data
    }

    /// The stored bytes of one element, or `None` when outside the texture.
    pub fn element(&self, level: u32, slice: u32, ex: u32, ey: u32) -> Option<&[u8]> {
        self.element_at(self.element_offset(level, slice, ex, ey)?)
    }

    /// The stored bytes of the element at byte `offset` (an [`Texture::element_offset`]).
    #[inline]
    pub fn element_at(&self, offset: u64) -> Option<&[u8]> {
        let off = usize::try_from(offset).ok()?;
        self.data
            .get(off..off.checked_add(self.layout.elem_bytes as usize)?)
    }

    /// Stored bytes of `count` consecutive elements from byte `offset`.
    pub fn elements_at(&self, offset: u64, count: usize) -> Option<&[u8]> {
        let off = usize::try_from(offset).ok()?;
        let len = (self.layout.elem_bytes as usize).checked_mul(count)?;
        self.data.get(off..off.checked_add(len)?)
    }

    /// Mutable stored bytes of one element (bumps the generation).
    pub fn element_mut(&mut self, level: u32, slice: u32, ex: u32, ey: u32) -> Option<&mut [u8]> {
        let off = self.element_offset(level, slice, ex, ey)? as usize;
        self.generation += 1;
        let n = self.desc.format.block_size();
        self.data.get_mut(off..off + n)
    }

    /// Checks a copy of `size` texels at `at` against this texture, and, when `linear`
    /// gives a data layout and the linear data's length, that layout (WebGPU "validating
    /// texture copy range" and "validating linear texture data") — what `write`, `read`
    /// and the copies check before moving bytes.
    pub fn validate_copy(
        &self,
        at: &TextureCopy,
        size: [u32; 3],
        linear: Option<(&DataLayout, usize)>,
    ) -> Result<(), TextureError> {
        let r = self.region(at, size)?;
        if let Some((layout, len)) = linear {
            self.linear(&r, layout, len)?;
        }
        Ok(())
    }

    /// Validates a copy of `size` texels at `at` (WebGPU "validating texture copy range").
    fn region(&self, at: &TextureCopy, size: [u32; 3]) -> Result<Region, TextureError> {
        let f = self.desc.format;
        if at.mip_level >= self.desc.mip_level_count {
            return invalid!(
                "mip level {} of a texture with {} levels",
                at.mip_level,
                self.desc.mip_level_count
            );
        }
        if !f.has_aspect(at.aspect) {
            return invalid!("{f:?} has no {:?} aspect", at.aspect);
        }
        let part = aspect_part(f, at.aspect)?;
        let phys = self.desc.physical_mip_size(at.mip_level);
        for i in 0..3 {
            if at.origin[i] as u64 + size[i] as u64 > phys[i] as u64 {
                return invalid!(
                    "copy of {size:?} at {:?} leaves mip {} of size {phys:?}",
                    at.origin,
                    at.mip_level
                );
            }
        }
        let (bw, bh) = f.block_dims();
        if !at.origin[0].is_multiple_of(bw) || !at.origin[1].is_multiple_of(bh) {
            return invalid!(
                "copy origin {:?} is not aligned to {bw}×{bh} blocks",
                at.origin
            );
        }
        if !size[0].is_multiple_of(bw) || !size[1].is_multiple_of(bh) {
            return invalid!("copy size {size:?} is not a multiple of {bw}×{bh} blocks");
        }
        Ok(Region {
            mip: at.mip_level,
            ex: at.origin[0] / bw,
            ey: at.origin[1] / bh,
            blocks: size[0] / bw,
            rows: size[1] / bh,
            images: size[2],
            z: at.origin[2],
            part,
        })
    }

    /// Calls `f(linear, tiled, n)` for every element (texel or block) of a validated region,
    /// row by row, with the byte offsets of the `n` bytes it copies in the linear data laid
    /// out by `layout` (`bpr` bytes per row, `rpi` rows per image) and in the tiled storage —
    /// two elements at once where they are adjacent in both (an even column and the next:
    /// neighbours in Morton order) and the copy moves whole elements. The one walk uploads
    /// and downloads share.
    fn each_element(
        &self,
        r: &Region,
        layout: &DataLayout,
        (bpr, rpi): (u64, u64),
        mut f: impl FnMut(usize, usize, usize),
    ) {
        let (part_offset, elem) = r.part;
        // A single-sampled 2D or 3D texture's elements are found row by row: per row its
        // tile row and the rows' Morton bits, per element its tile and column bits — what
        // `element_offset` computes, without its checks and general cases for each element
        // (readbacks of a 1080p target took about 50 instructions a texel).
        let tiled = (self.desc.sample_count <= 1 && self.desc.dimension != TextureDimension::D1)
            .then(|| &self.layout.mips[r.mip as usize]);
        let eb = self.layout.elem_bytes;
        let whole = part_offset == 0 && elem as u64 == eb;
        for image in 0..r.images {
            let slice = self.slice_of(r.z + image, 0);
            for row in 0..r.rows {
                let linear_row = (layout.offset + bpr * (rpi * image as u64 + row as u64)) as usize;
                if let Some(m) = tiled {
                    let ey = r.ey + row;
                    let base = m.offset + slice as u64 * m.slice_bytes;
                    let tile_row = (ey / TILE) as u64 * m.tiles_x as u64;
                    let row_bits = morton8(0, ey % TILE) as u64;
                    let mut b = 0;
                    while b < r.blocks {
                        let ex = r.ex + b;
                        let tile = tile_row + (ex / TILE) as u64;
                        let pixel =
                            tile * (TILE * TILE) as u64 + (morton8(ex % TILE, 0) as u64 | row_bits);
                        let tiled = base + pixel * eb;
                        debug_assert_eq!(Some(tiled), self.element_offset(r.mip, slice, ex, ey));
                        let n = if whole && ex.is_multiple_of(2) && b + 1 < r.blocks {
                            2
                        } else {
                            1
                        };
                        f(
                            linear_row + b as usize * elem,
                            tiled as usize + part_offset,
                            n as usize * elem,
                        );
                        b += n;
                    }
                    continue;
                }
                for b in 0..r.blocks {
                    // In range: `region` validated the copy against the texture.
                    let tiled = self
                        .element_offset(r.mip, slice, r.ex + b, r.ey + row)
                        .unwrap_or(0) as usize;
                    f(linear_row + b as usize * elem, tiled + part_offset, elem);
                }
            }
        }
    }

    fn slice_of(&self, z: u32, s: u32) -> u32 {
        match self.desc.dimension {
            TextureDimension::D3 => z,
            _ => z * self.desc.sample_count + s,
        }
    }

    /// Validates a linear layout for a region; returns (bytes per row, rows per image).
    fn linear(
        &self,
        r: &Region,
        layout: &DataLayout,
        len: usize,
    ) -> Result<(u64, u64), TextureError> {
        let row_bytes = r.blocks as u64 * r.part.1 as u64;
        let bpr = match layout.bytes_per_row {
            Some(b) => {
                if (b as u64) < row_bytes {
                    return invalid!("bytes_per_row {b} is less than the {row_bytes} a row needs");
                }
                b as u64
            }
            None if r.rows > 1 || r.images > 1 => {
                return invalid!("bytes_per_row is required for copies of more than one row");
            }
            None => row_bytes,
        };
        let rpi = match layout.rows_per_image {
            Some(n) => {
                if n < r.rows {
                    return invalid!("rows_per_image {n} is less than the {} rows copied", r.rows);
                }
                n as u64
            }
            None if r.images > 1 => {
                return invalid!("rows_per_image is required for copies of more than one image");
            }
            None => r.rows as u64,
        };
        if r.blocks > 0 && r.rows > 0 && r.images > 0 {
            let need = layout
                .offset
                .saturating_add(bpr * rpi * (r.images as u64 - 1))
                .saturating_add(bpr * (r.rows as u64 - 1))
                .saturating_add(row_bytes);
            if need > len as u64 {
                return invalid!("copy needs {need} bytes of linear data, only {len} given");
            }
        }
        Ok((bpr, rpi))
    }

    /// Uploads `size` texels from linear `data` (WebGPU `writeTexture`). Compressed formats
    /// are copied as blocks; origin and size must be block-aligned.
    pub fn write(
        &mut self,
        dst: TextureCopy,
        data: &[u8],
        layout: DataLayout,
        size: [u32; 3],
    ) -> Result<(), TextureError> {
        if self.desc.sample_count > 1 {
            return invalid!("cannot upload to a multisampled texture");
        }
        let r = self.region(&dst, size)?;
        let pitch = self.linear(&r, &layout, data.len())?;
        // The storage is taken out for the walk, which reads only the layout.
        let mut tiled_data = std::mem::take(&mut self.data);
        self.each_element(&r, &layout, pitch, |linear, tiled, n| {
            copy_element(&mut tiled_data[tiled..tiled + n], &data[linear..linear + n]);
        });
        self.data = tiled_data;
        self.generation += 1;
        Ok(())
    }

    /// Downloads `size` texels at `src` into linear `out` laid out by `layout`.
    pub fn read(
        &self,
        src: TextureCopy,
        layout: DataLayout,
        size: [u32; 3],
        out: &mut [u8],
    ) -> Result<(), TextureError> {
        if self.desc.sample_count > 1 {
            return invalid!("cannot read back a multisampled texture");
        }
        let r = self.region(&src, size)?;
        let pitch = self.linear(&r, &layout, out.len())?;
        self.each_element(&r, &layout, pitch, |linear, tiled, n| {
            copy_element(&mut out[linear..linear + n], &self.data[tiled..tiled + n]);
        });
        Ok(())
    }

    /// Downloads a region tightly packed (rows of `size[0]` texels / blocks, of the copied
    /// aspect's bytes).
    pub fn read_packed(&self, src: TextureCopy, size: [u32; 3]) -> Result<Vec<u8>, TextureError> {
        let (layout, len) = self.packed_layout(src.aspect, size)?;
        let mut out = vec![0; len];
        self.read(src, layout, size, &mut out)?;
        Ok(out)
    }

    /// Uploads a tightly packed region.
    pub fn write_packed(
        &mut self,
        dst: TextureCopy,
        data: &[u8],
        size: [u32; 3],
    ) -> Result<(), TextureError> {
        let (layout, _) = self.packed_layout(dst.aspect, size)?;
        self.write(dst, data, layout, size)
    }

    /// Tightly packed rows of the copied aspect's bytes for a region of `size`, and their
    /// total length.
    fn packed_layout(
        &self,
        aspect: TextureAspect,
        size: [u32; 3],
    ) -> Result<(DataLayout, usize), TextureError> {
        let elem = aspect_part(self.desc.format, aspect)?.1;
        let (bw, bh) = self.desc.format.block_dims();
        let (blocks, rows) = (size[0].div_ceil(bw), size[1].div_ceil(bh));
        let layout = DataLayout {
            offset: 0,
            bytes_per_row: Some(blocks * elem as u32),
            rows_per_image: Some(rows),
        };
        Ok((
            layout,
            blocks as usize * rows as usize * size[2] as usize * elem,
        ))
    }

    /// Reads every element (all samples) of a region, in region order.
    fn gather_region(&self, r: &Region) -> Vec<u8> {
        let elem = self.desc.format.block_size();
        let mut out = Vec::new();
        for i in 0..r.images {
            for s in 0..self.desc.sample_count {
                let slice = self.slice_of(r.z + i, s);
                for row in 0..r.rows {
                    for b in 0..r.blocks {
                        let off = self
                            .element_offset(r.mip, slice, r.ex + b, r.ey + row)
                            .unwrap_or(0) as usize;
                        out.extend_from_slice(&self.data[off..off + elem]);
                    }
                }
            }
        }
        out
    }

    /// Writes elements produced by `gather_region` of an equally shaped region.
    fn scatter_region(&mut self, r: &Region, bytes: &[u8]) {
        let elem = self.desc.format.block_size();
        let mut at = 0;
        for i in 0..r.images {
            for s in 0..self.desc.sample_count {
                let slice = self.slice_of(r.z + i, s);
                for row in 0..r.rows {
                    for b in 0..r.blocks {
                        let off = self
                            .element_offset(r.mip, slice, r.ex + b, r.ey + row)
                            .unwrap_or(0) as usize;
                        self.data[off..off + elem].copy_from_slice(&bytes[at..at + elem]);
                        at += elem;
                    }
                }
            }
        }
        self.generation += 1;
    }

    /// Copies a region inside this texture (source and destination subresources must not
    /// overlap: different mip levels, or disjoint layer ranges of 2D arrays).
    pub fn copy_within(
        &mut self,
        src: TextureCopy,
        dst: TextureCopy,
        size: [u32; 3],
    ) -> Result<(), TextureError> {
        let rs = self.region(&src, size)?;
        let rd = self.region(&dst, size)?;
        let disjoint_layers = self.desc.dimension != TextureDimension::D3
            && (rs.z + rs.images <= rd.z || rd.z + rd.images <= rs.z);
        if rs.mip == rd.mip && !disjoint_layers {
            return invalid!("copy source and destination subresources overlap");
        }
        self.check_whole(&rs, &src, size)?;
        let bytes = self.gather_region(&rs);
        self.scatter_region(&rd, &bytes);
        Ok(())
    }

    /// Texture-to-texture copies of depth/stencil formats move every aspect, and they and
    /// multisampled copies cover whole subresources (WebGPU).
    fn check_whole(
        &self,
        r: &Region,
        at: &TextureCopy,
        size: [u32; 3],
    ) -> Result<(), TextureError> {
        if r.part.1 != self.desc.format.block_size() {
            return invalid!(
                "texture-to-texture copies of {:?} copy all aspects",
                self.desc.format
            );
        }
        if self.desc.format.is_depth_stencil() || self.desc.sample_count > 1 {
            let full = self.desc.mip_size(at.mip_level);
            if size[0] != full[0] || size[1] != full[1] {
                return invalid!(
                    "depth/stencil and multisampled copies must cover the whole subresource"
                );
            }
        }
        Ok(())
    }
}

/// Copies `size` texels from one texture to another (WebGPU `copyTextureToTexture`): the
/// formats must be copy-compatible (equal up to sRGB-ness), the sample counts equal, both
/// regions in range and block-aligned.
pub fn copy_texture_to_texture(
    src: &Texture,
    src_at: TextureCopy,
    dst: &mut Texture,
    dst_at: TextureCopy,
    size: [u32; 3],
) -> Result<(), TextureError> {
    let (fs, fd) = (src.desc.format, dst.desc.format);
    if fs != fd && fs.srgb_sibling() != Some(fd) {
        return invalid!("formats {fs:?} and {fd:?} are not copy-compatible");
    }
    if src.desc.sample_count != dst.desc.sample_count {
        return invalid!("copy between textures of different sample counts");
    }
    let rs = src.region(&src_at, size)?;
    let rd = dst.region(&dst_at, size)?;
    src.check_whole(&rs, &src_at, size)?;
    dst.check_whole(&rd, &dst_at, size)?;
    let bytes = src.gather_region(&rs);
    dst.scatter_region(&rd, &bytes);
    Ok(())
}

#[cfg(test)]
mod morton_tests {
    use super::*;

    /// `demorton8` undoes `morton8` on every position of a tile.
    #[test]
    fn demorton_inverts_morton() {
        for y in 0..TILE {
            for x in 0..TILE {
                assert_eq!(demorton8(morton8(x, y)), (x, y));
            }
        }
    }
}
