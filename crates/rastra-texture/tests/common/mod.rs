//! Helpers shared by the sampling and cache tests: R32Float textures filled from closures,
//! point quads, a deterministic random generator.
#![allow(dead_code)]

use rastra_texture::{
    CacheConfig, Quad, Sampler, SamplerDesc, Texture, TextureCopy, TextureDesc, TextureFormat,
    TextureUnit, TextureView, TextureViewDesc,
};

pub fn unit() -> TextureUnit {
    TextureUnit::new(CacheConfig::default())
}

pub fn sampler(d: SamplerDesc) -> Sampler {
    Sampler::new(d).unwrap()
}

/// Writes `f(x, y)` into R32Float mip `level`, slice `z` of `t`.
pub fn fill_r32(t: &mut Texture, level: u32, z: u32, f: impl Fn(u32, u32) -> f32) {
    let [w, h, _] = t.desc().mip_size(level);
    let mut data = Vec::with_capacity((w * h * 4) as usize);
    for y in 0..h {
        for x in 0..w {
            data.extend_from_slice(&f(x, y).to_le_bytes());
        }
    }
    let at = TextureCopy {
        mip_level: level,
        origin: [0, 0, z],
        ..TextureCopy::default()
    };
    t.write_packed(at, &data, [w, h, 1]).unwrap();
}

/// Writes encoded texels of any uncompressed format.
pub fn fill_texels(t: &mut Texture, level: u32, z: u32, f: impl Fn(u32, u32) -> [f32; 4]) {
    let fmt = t.format();
    let [w, h, _] = t.desc().mip_size(level);
    let mut data = vec![0u8; (w * h) as usize * fmt.block_size()];
    for y in 0..h {
        for x in 0..w {
            let at = (y * w + x) as usize * fmt.block_size();
            fmt.encode_float(f(x, y), &mut data[at..at + fmt.block_size()])
                .unwrap();
        }
    }
    let at = TextureCopy {
        mip_level: level,
        origin: [0, 0, z],
        ..TextureCopy::default()
    };
    t.write_packed(at, &data, [w, h, 1]).unwrap();
}

/// A 2D R32Float texture (1 layer) from a closure, single level.
pub fn r32(w: u32, h: u32, f: impl Fn(u32, u32) -> f32) -> Texture {
    let mut t = Texture::new(TextureDesc::d2(w, h, TextureFormat::R32Float)).unwrap();
    fill_r32(&mut t, 0, 0, f);
    t
}

pub fn view(t: &Texture) -> TextureView {
    TextureView::whole(t).unwrap()
}

pub fn view_with(t: &Texture, d: TextureViewDesc) -> TextureView {
    TextureView::new(t, &d).unwrap()
}

/// All four lanes at the same coordinate.
pub fn point(c: [f32; 3]) -> Quad {
    Quad::new([c; 4])
}

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn f32(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Fills every mip of an R32Float 2D texture by 2×2 box filtering level 0 (`f`).
pub fn mipmapped_r32(size: u32, f: impl Fn(u32, u32) -> f32) -> Texture {
    let levels = 32 - size.leading_zeros();
    let mut t =
        Texture::new(TextureDesc::d2(size, size, TextureFormat::R32Float).with_mips(levels))
            .unwrap();
    let mut cur: Vec<f32> = (0..size * size).map(|i| f(i % size, i / size)).collect();
    let mut s = size;
    for level in 0..levels {
        let c = cur.clone();
        fill_r32(&mut t, level, 0, |x, y| c[(y * s + x) as usize]);
        if s > 1 {
            let n = s / 2;
            cur = (0..n * n)
                .map(|i| {
                    let (x, y) = (2 * (i % n), 2 * (i / n));
                    (c[(y * s + x) as usize]
                        + c[(y * s + x + 1) as usize]
                        + c[((y + 1) * s + x) as usize]
                        + c[((y + 1) * s + x + 1) as usize])
                        / 4.0
                })
                .collect();
            s = n;
        }
    }
    t
}

pub fn default_sampler() -> Sampler {
    sampler(SamplerDesc::default())
}
