//! Render-target memory as the back end sees it during a draw (T9 "memory"; BRIEF
//! "Memory"): colour and depth surfaces, each sample stored in the surface's real format.
//!
//! Layout invariant: surfaces are row-major with a pixel's samples adjacent, so texel
//! `(x, y, sample)` of a `width`-wide, `samples`-per-pixel surface starts at
//! `((y * width + x) * samples + sample) * texel_size`. Tiled layouts arrive with the
//! throughput and texture-unit issues; every unit addresses surfaces through [`texel_offset`].

use crate::format::TextureFormat;
use crate::state::Color;

/// Byte offset of a texel in a surface of the given width, sample count and texel size.
#[inline]
pub fn texel_offset(width: u32, samples: u32, texel_size: usize, x: u32, y: u32, s: u32) -> usize {
    (((y as usize * width as usize) + x as usize) * samples as usize + s as usize) * texel_size
}

/// A colour attachment bound for a draw.
pub struct ColorTarget<'a> {
    pub format: TextureFormat,
    pub data: &'a mut [u8],
}

/// The depth(-stencil) attachment bound for a draw.
pub struct DepthTarget<'a> {
    pub format: TextureFormat,
    pub data: &'a mut [u8],
}

/// The surfaces a draw renders into. All share width, height and sample count.
pub struct Framebuffer<'a> {
    pub width: u32,
    pub height: u32,
    pub samples: u32,
    pub colors: Vec<Option<ColorTarget<'a>>>,
    pub depth: Option<DepthTarget<'a>>,
}

/// Fills a colour surface with one colour (the render pass "clear" load operation).
pub fn clear_color(format: TextureFormat, data: &mut [u8], color: Color) {
    let size = format.texel_size();
    let mut texel = [0u8; 16];
    format.encode_color(color.to_array(), &mut texel[..size]);
    for chunk in data.chunks_exact_mut(size) {
        chunk.copy_from_slice(&texel[..size]);
    }
}

/// Fills a depth(-stencil) surface: depth when `depth` is given, stencil when `stencil` is.
pub fn clear_depth_stencil(
    format: TextureFormat,
    data: &mut [u8],
    depth: Option<f32>,
    stencil: Option<u8>,
) {
    let size = format.texel_size();
    for chunk in data.chunks_exact_mut(size) {
        if let Some(z) = depth {
            format.encode_depth(format.quantize_depth(z.clamp(0.0, 1.0)), chunk);
        }
        if let Some(s) = stencil {
            format.encode_stencil(s, chunk);
        }
    }
}

/// Resolves a multisampled colour surface into a single-sample one by averaging each pixel's
/// samples in linear space (sRGB surfaces are decoded first). Returns pixels resolved.
pub fn resolve(
    format: TextureFormat,
    src: &[u8],
    samples: u32,
    dst_format: TextureFormat,
    dst: &mut [u8],
) -> u64 {
    let size = format.texel_size();
    let dst_size = dst_format.texel_size();
    let pixels = dst.len() / dst_size;
    for p in 0..pixels {
        let mut sum = [0.0f32; 4];
        for s in 0..samples as usize {
            let at = (p * samples as usize + s) * size;
            let c = format.decode_color(&src[at..at + size]);
            for i in 0..4 {
                sum[i] += c[i];
            }
        }
        let avg = sum.map(|v| v / samples as f32);
        dst_format.encode_color(avg, &mut dst[p * dst_size..(p + 1) * dst_size]);
    }
    pixels as u64
}
