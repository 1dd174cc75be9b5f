//! Storage images: texture memory a shader reads and writes by integer texel coordinates,
//! with no sampler, no filtering and no texel cache (WebGPU storage textures, D3D11's
//! unordered-access views; T4's texture unit is only the read path). One storage view is
//! one mip level and a range of layers; texels are decoded from and encoded into the view's
//! format on every access.
//!
//! Many invocations on many threads access a storage image at once, so its bytes are
//! relaxed atomics ([`Texture::shared_bytes`]): accesses to different texels never
//! interfere; racing accesses to one texel are defined but may mix bytes of the values
//! written (WebGPU leaves such races' results unspecified). Out-of-bounds loads return zero
//! and out-of-bounds stores are dropped.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::format::{SampleType, TextureAspect, TextureFormat};
use crate::storage::{MipLayout, morton8};
use crate::{Texture, TextureDimension, TextureView, TextureViewDimension};

/// Where a storage view's texels live in its texture's memory: the view's mip level and
/// layers, and how they are tiled. Computed from the texture before its memory is shared.
#[derive(Clone, Copy, Debug)]
pub struct ImageLayout {
    format: TextureFormat,
    dimension: TextureViewDimension,
    /// Width, height, and depth (3D) or layer count (arrays) of the view.
    size: [u32; 3],
    base_layer: u32,
    mip: MipLayout,
    linear: bool,
}

impl ImageLayout {
    /// The layout of `view`'s first mip level (storage views have one level), or `None`
    /// when the view does not belong to `texture` or the level does not exist.
    pub fn new(texture: &Texture, view: &TextureView) -> Option<ImageLayout> {
        if view.texture_id() != texture.id() {
            return None;
        }
        let level = view.base_mip_level;
        let mip = texture.mip_layout(level)?;
        let [w, h, d] = view.level_size(0);
        let size = match view.dimension {
            TextureViewDimension::D3 => [w, h, d],
            _ => [w, h, view.layers()],
        };
        Some(ImageLayout {
            format: view.format,
            dimension: view.dimension,
            size,
            base_layer: view.base_array_layer,
            mip,
            linear: texture.desc().dimension == TextureDimension::D1,
        })
    }

    /// The view's size: width, height, and depth or layer count.
    pub fn size(&self) -> [u32; 3] {
        self.size
    }

    pub fn format(&self) -> TextureFormat {
        self.format
    }

    /// Byte offset of texel (x, y) of layer or slice `z` of the view, if inside it.
    fn offset(&self, x: i32, y: i32, z: i32) -> Option<usize> {
        let [w, h, d] = self.size;
        let inside = |v: i32, n: u32| (v >= 0 && (v as u32) < n).then_some(v as u32);
        let (x, y, z) = (inside(x, w)?, inside(y, h)?, inside(z, d)?);
        let slice = match self.dimension {
            TextureViewDimension::D3 => z,
            _ => self.base_layer + z,
        };
        let elem = self.format.block_size() as u64;
        let base = self.mip.offset + slice as u64 * self.mip.slice_bytes;
        let within = if self.linear {
            x as u64 * elem
        } else {
            let tile = (y / 8) as u64 * self.mip.tiles_x as u64 + (x / 8) as u64;
            (tile * 64 + morton8(x % 8, y % 8) as u64) * elem
        };
        Some((base + within) as usize)
    }
}

/// One storage view bound for a draw or dispatch: its layout and its texture's shared
/// memory.
#[derive(Clone, Copy, Debug)]
pub struct StorageImage<'a> {
    pub layout: ImageLayout,
    bytes: &'a [AtomicU8],
}

impl<'a> StorageImage<'a> {
    /// `bytes` must be the shared memory of the texture `layout` was made from.
    pub fn new(layout: ImageLayout, bytes: &'a [AtomicU8]) -> StorageImage<'a> {
        StorageImage { layout, bytes }
    }

    /// The texel at (x, y) of layer or 3D slice `z` as a shader register holds it (f32
    /// bits for float formats, integers for uint/sint); zero outside the view.
    pub fn load(&self, x: i32, y: i32, z: i32) -> [u32; 4] {
        let format = self.layout.format;
        let Some(at) = self.layout.offset(x, y, z) else {
            return [0; 4];
        };
        let mut texel = [0u8; 16];
        let n = format.block_size();
        let Some(src) = self.bytes.get(at..at + n) else {
            return [0; 4];
        };
        for (t, b) in texel.iter_mut().zip(src) {
            *t = b.load(Ordering::Relaxed);
        }
        format.decode_bits(TextureAspect::All, &texel[..n])
    }

    /// Stores `value` (register bits, as `load` returns them) at (x, y, z), converted to
    /// the view's format; dropped outside the view.
    pub fn store(&self, x: i32, y: i32, z: i32, value: [u32; 4]) {
        let format = self.layout.format;
        let Some(at) = self.layout.offset(x, y, z) else {
            return;
        };
        let n = format.block_size();
        let Some(dst) = self.bytes.get(at..at + n) else {
            return;
        };
        let mut texel = [0u8; 16];
        let encoded = match format.sample_type() {
            SampleType::Uint | SampleType::Sint => format.encode_int(value, &mut texel[..n]),
            _ => format.encode_float(value.map(f32::from_bits), &mut texel[..n]),
        };
        if encoded.is_ok() {
            for (d, t) in dst.iter().zip(&texel[..n]) {
                d.store(*t, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TextureDesc, TextureViewDesc};

    #[test]
    fn stores_land_where_loads_and_the_sampler_path_find_them() {
        let desc = TextureDesc::d2(20, 12, TextureFormat::Rgba16Float)
            .with_mips(2)
            .with_layers(3);
        let mut texture = Texture::new(desc).unwrap();
        let view = TextureView::new(
            &texture,
            &TextureViewDesc {
                base_mip_level: 1,
                mip_level_count: Some(1),
                base_array_layer: 1,
                array_layer_count: Some(2),
                dimension: Some(TextureViewDimension::D2Array),
                ..Default::default()
            },
        )
        .unwrap();
        let layout = ImageLayout::new(&texture, &view).unwrap();
        assert_eq!(layout.size(), [10, 6, 2]);
        let image = StorageImage::new(layout, texture.shared_bytes());
        let v = [0.5f32, -2.0, 1.0, 0.25].map(f32::to_bits);
        image.store(9, 5, 1, v);
        image.store(10, 0, 0, v); // outside: dropped
        assert_eq!(image.load(9, 5, 1), v);
        assert_eq!(image.load(-1, 0, 0), [0; 4]);
        // Layer 1 of the view is layer 2 of the texture.
        let texel = texture.element(1, 2, 9, 5).unwrap();
        assert_eq!(
            TextureFormat::Rgba16Float.decode_float(texel),
            [0.5, -2.0, 1.0, 0.25]
        );
    }

    #[test]
    fn integer_and_normalized_formats_convert_like_render_targets() {
        let mut texture = Texture::new(TextureDesc::d2(4, 4, TextureFormat::Rgba8Unorm)).unwrap();
        let view = TextureView::whole(&texture).unwrap();
        let image = StorageImage::new(
            ImageLayout::new(&texture, &view).unwrap(),
            texture.shared_bytes(),
        );
        image.store(1, 2, 0, [1.5f32, 0.5, -1.0, 1.0].map(f32::to_bits));
        assert_eq!(texture.element(0, 0, 1, 2).unwrap(), [255, 128, 0, 255]);
        let mut texture = Texture::new(TextureDesc::d2(4, 4, TextureFormat::R32Sint)).unwrap();
        let view = TextureView::whole(&texture).unwrap();
        let image = StorageImage::new(
            ImageLayout::new(&texture, &view).unwrap(),
            texture.shared_bytes(),
        );
        image.store(3, 3, 0, [-7i32 as u32, 0, 0, 0]);
        assert_eq!(image.load(3, 3, 0), [-7i32 as u32, 0, 0, 1]);
    }
}
