//! Mip-chain generation: each level is the box-filtered reduction of the one above it, done
//! in linear space (sRGB texels are decoded before filtering and encoded after, T4's "filter
//! properly, in linear space").
//!
//! A level's size is `max(1, size >> 1)` per axis (WebGPU's mip size rule). Each destination
//! texel averages the source interval it covers, `[i·n/m, (i+1)·n/m)` for a source of `n`
//! texels and a destination of `m`, weighting partly covered source texels by their overlap —
//! the exact box filter, so odd sizes (where a 2×2 average would shift the image by a quarter
//! texel and drop a row) keep their content centred. The filter is separable and runs per
//! axis in turn. Array layers are reduced independently; 3D textures are reduced in depth too.
//!
//! Channels are filtered independently (alpha is not premultiplied), as graphics APIs'
//! mipmap generators do. Uncompressed float, unorm and snorm formats are supported; integer,
//! depth/stencil and compressed formats have no meaningful average and are refused.

use crate::format::TextureFormat;
use crate::storage::TextureDimension;
use crate::{TextureError, invalid};

/// The size of mip level `level` of a texture whose level 0 is `size` (array layers of 1D/2D
/// textures are not reduced).
pub fn level_size(size: [u32; 3], dimension: TextureDimension, level: u32) -> [u32; 3] {
    let shrink = |v: u32| (v >> level.min(31)).max(1);
    match dimension {
        TextureDimension::D1 => [shrink(size[0]), 1, size[2]],
        TextureDimension::D2 => [shrink(size[0]), shrink(size[1]), size[2]],
        TextureDimension::D3 => [shrink(size[0]), shrink(size[1]), shrink(size[2])],
    }
}

/// The number of levels of a full mip chain: `floor(log2(largest reduced side)) + 1`.
pub fn full_chain_levels(size: [u32; 3], dimension: TextureDimension) -> u32 {
    let largest = match dimension {
        TextureDimension::D1 => size[0],
        TextureDimension::D2 => size[0].max(size[1]),
        TextureDimension::D3 => size[0].max(size[1]).max(size[2]),
    };
    32 - largest.max(1).leading_zeros()
}

/// Builds `levels` mip levels from `level0` (tightly packed texels, all layers or slices):
/// returns every level including the first, each tightly packed.
pub fn generate(
    format: TextureFormat,
    size: [u32; 3],
    dimension: TextureDimension,
    levels: u32,
    level0: Vec<u8>,
) -> Result<Vec<Vec<u8>>, TextureError> {
    check_format(format)?;
    let max = full_chain_levels(size, dimension);
    if levels == 0 || levels > max {
        return invalid!("{levels} mip levels for a {size:?} texture (1 to {max})");
    }
    if dimension == TextureDimension::D1 && size[1] != 1 {
        return invalid!("a 1D texture of size {size:?} (its height must be 1)");
    }
    let texel = format.block_size();
    let expected = size.iter().map(|&s| s as usize).product::<usize>() * texel;
    if level0.len() != expected {
        return invalid!(
            "level 0 holds {} bytes; a tightly packed {size:?} {format:?} texture holds {expected}",
            level0.len()
        );
    }
    let mut chain = vec![level0];
    for level in 1..levels {
        let src_size = level_size(size, dimension, level - 1);
        let dst_size = level_size(size, dimension, level);
        let src = chain.last().map(Vec::as_slice).unwrap_or_default();
        chain.push(reduce(format, src, src_size, dst_size));
    }
    Ok(chain)
}

fn check_format(format: TextureFormat) -> Result<(), TextureError> {
    if format.is_compressed() || format.is_depth_stencil() || format.is_integer() {
        return Err(TextureError::Unsupported(format!(
            "mipmap generation for {format:?} (only uncompressed float, unorm and snorm formats \
             can be averaged)"
        )));
    }
    Ok(())
}

/// One reduction step, `src_size` → `dst_size`, axis by axis in linear float.
fn reduce(format: TextureFormat, src: &[u8], src_size: [u32; 3], dst_size: [u32; 3]) -> Vec<u8> {
    let texel = format.block_size();
    let mut values: Vec<[f32; 4]> = src
        .chunks_exact(texel)
        .map(|t| format.decode_float(t))
        .collect();
    let mut size = src_size.map(|s| s as usize);
    for axis in 0..3 {
        let m = dst_size[axis] as usize;
        if m == size[axis] {
            continue;
        }
        let taps = box_taps(size[axis], m);
        let n = size[axis] as f64;
        let mut out_size = size;
        out_size[axis] = m;
        let mut out = vec![[0.0f32; 4]; out_size.iter().product()];
        let stride = [1, size[0], size[0] * size[1]];
        let out_stride = [1, out_size[0], out_size[0] * out_size[1]];
        for z in 0..out_size[2] {
            for y in 0..out_size[1] {
                for x in 0..out_size[0] {
                    let at = [x, y, z];
                    let mut base = 0;
                    for k in 0..3 {
                        if k != axis {
                            base += at[k] * stride[k];
                        }
                    }
                    // Σ value × overlap in f64 (exact for these few terms), divided once by
                    // the interval length and rounded once: a constant level stays exactly
                    // constant.
                    let mut sum = [0.0f64; 4];
                    for &(j, overlap) in &taps[at[axis]] {
                        let v = values[base + j * stride[axis]];
                        for c in 0..4 {
                            sum[c] += v[c] as f64 * overlap as f64;
                        }
                    }
                    out[x * out_stride[0] + y * out_stride[1] + z * out_stride[2]] =
                        sum.map(|s| (s / n) as f32);
                }
            }
        }
        values = out;
        size = out_size;
    }
    let mut bytes = vec![0u8; values.len() * texel];
    for (v, t) in values.iter().zip(bytes.chunks_exact_mut(texel)) {
        // The format was checked to be an encodable colour format.
        let _ = format.encode_float(*v, t);
    }
    bytes
}

/// For each of `m` destination texels, the source texels of an `n`-texel axis it covers and
/// their overlaps with `[i·n/m, (i+1)·n/m)`, in units of 1/m texel (they sum to `n`).
fn box_taps(n: usize, m: usize) -> Vec<Vec<(usize, u32)>> {
    (0..m)
        .map(|i| {
            // Exact in integers: interval [i·n, (i+1)·n) in units of 1/m source texels.
            let (lo, hi) = (i * n, (i + 1) * n);
            (lo / m..hi.div_ceil(m))
                .map(|j| (j, (hi.min((j + 1) * m) - lo.max(j * m)) as u32))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_taps_cover_each_interval_exactly() {
        assert_eq!(
            box_taps(4, 2),
            vec![vec![(0, 2), (1, 2)], vec![(2, 2), (3, 2)]]
        );
        // 3 → 1: all three texels, equal weight.
        assert_eq!(box_taps(3, 1), vec![vec![(0, 1), (1, 1), (2, 1)]]);
        // 5 → 2: 0, 1, half of 2 | half of 2, 3, 4.
        assert_eq!(
            box_taps(5, 2),
            vec![vec![(0, 2), (1, 2), (2, 1)], vec![(2, 1), (3, 2), (4, 2)]]
        );
        for n in 1..40 {
            let m = (n / 2).max(1);
            for taps in box_taps(n, m) {
                assert_eq!(
                    taps.iter().map(|t| t.1 as usize).sum::<usize>(),
                    n,
                    "{n}→{m}"
                );
            }
        }
    }

    #[test]
    fn constant_levels_stay_exactly_constant() {
        let format = TextureFormat::R32Float;
        let v = 0.1f32;
        let level0: Vec<u8> = (0..7 * 5).flat_map(|_| v.to_le_bytes()).collect();
        let chain = generate(format, [7, 5, 1], TextureDimension::D2, 3, level0).unwrap();
        for level in &chain {
            assert!(
                level.chunks_exact(4).all(|t| t == v.to_le_bytes()),
                "{level:?}"
            );
        }
        // A 1D texture must have height 1.
        assert!(generate(format, [4, 2, 1], TextureDimension::D1, 1, vec![0; 32]).is_err());
    }

    #[test]
    fn chain_sizes_and_counts() {
        let d2 = TextureDimension::D2;
        assert_eq!(full_chain_levels([1024, 1024, 1], d2), 11);
        assert_eq!(full_chain_levels([5, 3, 6], d2), 3);
        assert_eq!(full_chain_levels([5, 3, 6], TextureDimension::D3), 3);
        assert_eq!(level_size([5, 3, 6], d2, 2), [1, 1, 6]);
        assert_eq!(level_size([5, 3, 6], TextureDimension::D3, 1), [2, 1, 3]);
    }

    #[test]
    fn srgb_averages_in_linear_space() {
        // Black and white averaged: linear 0.5 is sRGB code 188, not 128.
        let format = TextureFormat::Rgba8UnormSrgb;
        let level0 = [0, 0, 0, 255, 255, 255, 255, 255].to_vec();
        let chain = generate(format, [2, 1, 1], TextureDimension::D2, 2, level0).unwrap();
        assert_eq!(chain[1], [188, 188, 188, 255]);
        let unorm = generate(
            TextureFormat::Rgba8Unorm,
            [2, 1, 1],
            TextureDimension::D2,
            2,
            [0, 0, 0, 0, 255, 255, 255, 255].to_vec(),
        )
        .unwrap();
        assert_eq!(unorm[1], [128, 128, 128, 128]);
    }

    #[test]
    fn odd_sizes_keep_the_content_centred_and_layers_apart() {
        // A 3×1 ramp 0, 0.5, 1 (R32Float) reduces to its mean.
        let format = TextureFormat::R32Float;
        let bytes = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
        let chain = generate(
            format,
            [3, 1, 1],
            TextureDimension::D2,
            2,
            bytes(&[0.0, 0.5, 1.0]),
        )
        .unwrap();
        assert_eq!(chain[1], bytes(&[0.5]));
        // Two layers of 2×2: each averaged on its own.
        let chain = generate(
            format,
            [2, 2, 2],
            TextureDimension::D2,
            2,
            bytes(&[1.0, 1.0, 1.0, 1.0, 3.0, 5.0, 3.0, 5.0]),
        )
        .unwrap();
        assert_eq!(chain[1], bytes(&[1.0, 4.0]));
        // A 2×2×2 volume is reduced in depth as well.
        let chain = generate(
            format,
            [2, 2, 2],
            TextureDimension::D3,
            2,
            bytes(&[1.0, 1.0, 1.0, 1.0, 3.0, 5.0, 3.0, 5.0]),
        )
        .unwrap();
        assert_eq!(chain[1], bytes(&[2.5]));
    }

    #[test]
    fn formats_without_an_average_and_bad_sizes_are_refused() {
        let d2 = TextureDimension::D2;
        for format in [
            TextureFormat::Rgba8Uint,
            TextureFormat::Depth32Float,
            TextureFormat::Bc1RgbaUnorm,
        ] {
            assert!(matches!(
                generate(format, [4, 4, 1], d2, 2, vec![0; 64]),
                Err(TextureError::Unsupported(_))
            ));
        }
        let f = TextureFormat::Rgba8Unorm;
        assert!(generate(f, [4, 4, 1], d2, 4, vec![0; 64]).is_err());
        assert!(generate(f, [4, 4, 1], d2, 2, vec![0; 63]).is_err());
        assert_eq!(generate(f, [4, 4, 1], d2, 3, vec![0; 64]).unwrap().len(), 3);
    }
}
