//! Block decoders for the compressed formats, run by the texel cache when it fills a line
//! (T4: "the 4×4 blocks are decoded when it's brought into the L1 cache"; scan-conversion
//! lecture, "S3 Texturkompression": two endpoint colours plus per-texel 2-bit codes).
//!
//! BC1–BC7 use `bcdec_rs` (BC4/BC5 through its float path so unorm and snorm keep the
//! interpolated precision; BC6H to f32, HDR); ETC2 RGB and its punch-through / alpha variants
//! use `texture2ddecoder`; EAC R11/RG11 are decoded here at their full 11-bit precision
//! (Khronos Data Format §"ETC2 / EAC"); ASTC LDR uses `texture2ddecoder` (8-bit results;
//! a block the decoder cannot handle decodes to the ASTC error colour, magenta). sRGB
//! formats convert RGB to linear here, so filtering later happens in linear space.

use crate::format::{AstcChannel, TextureFormat, linear_to_srgb8, srgb_to_linear8};
use crate::{TextureError, format::AstcBlock};

/// Largest block in texels (ASTC 12×12).
pub const MAX_BLOCK_TEXELS: usize = 144;

/// Decodes one compressed block of `format` into `out` (row-major, `block_dims` texels;
/// each RGBA in linear float, missing components 0 and alpha 1). Errors when the format is
/// not compressed or the slices are too short.
pub fn decode_block(
    format: TextureFormat,
    block: &[u8],
    out: &mut [[f32; 4]],
) -> Result<(), TextureError> {
    use TextureFormat::*;
    if !format.is_compressed() {
        return crate::invalid!("{format:?} is not a compressed format");
    }
    let (bw, bh) = format.block_dims();
    let texels = (bw * bh) as usize;
    let Some(block) = block.get(..format.block_size()) else {
        return crate::invalid!("block of {format:?} needs {} bytes", format.block_size());
    };
    let Some(out) = out.get_mut(..texels) else {
        return crate::invalid!("output of {texels} texels needed for {format:?}");
    };
    let srgb = format.is_srgb();
    match format {
        Bc1RgbaUnorm | Bc1RgbaUnormSrgb | Bc2RgbaUnorm | Bc2RgbaUnormSrgb | Bc3RgbaUnorm
        | Bc3RgbaUnormSrgb | Bc7RgbaUnorm | Bc7RgbaUnormSrgb => {
            let mut rgba = [0u8; 64];
            match format {
                Bc1RgbaUnorm | Bc1RgbaUnormSrgb => bcdec_rs::bc1(block, &mut rgba, 16),
                Bc2RgbaUnorm | Bc2RgbaUnormSrgb => bcdec_rs::bc2(block, &mut rgba, 16),
                Bc3RgbaUnorm | Bc3RgbaUnormSrgb => bcdec_rs::bc3(block, &mut rgba, 16),
                _ => bcdec_rs::bc7(block, &mut rgba, 16),
            }
            for (o, px) in out.iter_mut().zip(rgba.chunks_exact(4)) {
                *o = rgba8_to_f32([px[0], px[1], px[2], px[3]], srgb);
            }
        }
        Bc4RUnorm | Bc4RSnorm => {
            let mut r = [0f32; 16];
            bcdec_rs::bc4_float(block, &mut r, 4, format == Bc4RSnorm);
            for (o, v) in out.iter_mut().zip(r) {
                *o = [v, 0.0, 0.0, 1.0];
            }
        }
        Bc5RgUnorm | Bc5RgSnorm => {
            let mut rg = [0f32; 32];
            bcdec_rs::bc5_float(block, &mut rg, 8, format == Bc5RgSnorm);
            for (o, px) in out.iter_mut().zip(rg.chunks_exact(2)) {
                *o = [px[0], px[1], 0.0, 1.0];
            }
        }
        Bc6hRgbUfloat | Bc6hRgbFloat => {
            let mut rgb = [0f32; 48];
            bcdec_rs::bc6h_float(block, &mut rgb, 12, format == Bc6hRgbFloat);
            for (o, px) in out.iter_mut().zip(rgb.chunks_exact(3)) {
                *o = [px[0], px[1], px[2], 1.0];
            }
        }
        Etc2Rgb8Unorm | Etc2Rgb8UnormSrgb | Etc2Rgb8A1Unorm | Etc2Rgb8A1UnormSrgb
        | Etc2Rgba8Unorm | Etc2Rgba8UnormSrgb => {
            let mut px = [0u32; 16];
            match format {
                Etc2Rgb8Unorm | Etc2Rgb8UnormSrgb => {
                    texture2ddecoder::decode_etc2_rgb_block(block, &mut px)
                }
                Etc2Rgb8A1Unorm | Etc2Rgb8A1UnormSrgb => {
                    texture2ddecoder::decode_etc2_rgba1_block(block, &mut px)
                }
                _ => {
                    texture2ddecoder::decode_etc2_rgb_block(&block[8..], &mut px);
                    // The alpha half is an EAC block at 8 bits (base + multiplier × modifier).
                    let a = eac_alpha8(&block[..8]);
                    for (p, a) in px.iter_mut().zip(a) {
                        *p = (*p & 0x00ff_ffff) | (a as u32) << 24;
                    }
                }
            }
            for (o, p) in out.iter_mut().zip(px) {
                *o = bgra_u32_to_f32(p, srgb);
            }
        }
        EacR11Unorm | EacR11Snorm => {
            let r = eac11(block, format == EacR11Snorm);
            for (o, v) in out.iter_mut().zip(r) {
                *o = [v, 0.0, 0.0, 1.0];
            }
        }
        EacRg11Unorm | EacRg11Snorm => {
            let signed = format == EacRg11Snorm;
            let r = eac11(&block[..8], signed);
            let g = eac11(&block[8..], signed);
            for (i, o) in out.iter_mut().enumerate() {
                *o = [r[i], g[i], 0.0, 1.0];
            }
        }
        Astc { block: fp, channel } => {
            let px = decode_astc(block, fp);
            let srgb = channel == AstcChannel::UnormSrgb;
            for (o, p) in out.iter_mut().zip(px.iter()) {
                *o = bgra_u32_to_f32(*p, srgb);
            }
        }
        _ => return crate::invalid!("{format:?} is not a compressed format"),
    }
    Ok(())
}

/// ASTC LDR block decode. The decoder indexes its tables with values from the block; a
/// malformed block that trips it decodes to the error colour instead of unwinding further.
fn decode_astc(block: &[u8], fp: AstcBlock) -> [u32; MAX_BLOCK_TEXELS] {
    let (bw, bh) = fp.dims();
    let mut px = [0u32; MAX_BLOCK_TEXELS];
    let ok = std::panic::catch_unwind(|| {
        let mut tmp = [0u32; MAX_BLOCK_TEXELS];
        texture2ddecoder::decode_astc_block(block, bw as usize, bh as usize, &mut tmp);
        tmp
    });
    match ok {
        Ok(tmp) => px = tmp,
        Err(_) => px.fill(u32::from_le_bytes([255, 0, 255, 255])),
    }
    px
}

/// texture2ddecoder's pixel: bytes B, G, R, A of a little-endian u32.
fn bgra_u32_to_f32(p: u32, srgb: bool) -> [f32; 4] {
    let [b, g, r, a] = p.to_le_bytes();
    rgba8_to_f32([r, g, b, a], srgb)
}

fn rgba8_to_f32(c: [u8; 4], srgb: bool) -> [f32; 4] {
    let n = |x: u8| x as f32 / 255.0;
    if srgb {
        [
            srgb_to_linear8(c[0]),
            srgb_to_linear8(c[1]),
            srgb_to_linear8(c[2]),
            n(c[3]),
        ]
    } else {
        [n(c[0]), n(c[1]), n(c[2]), n(c[3])]
    }
}

/// The ETC2 alpha / EAC modifier table (Khronos Data Format, table "Intensity modifier sets
/// for the alpha component").
const EAC_MODIFIERS: [[i32; 8]; 16] = [
    [-3, -6, -9, -15, 2, 5, 8, 14],
    [-3, -7, -10, -13, 2, 6, 9, 12],
    [-2, -5, -8, -13, 1, 4, 7, 12],
    [-2, -4, -6, -13, 1, 3, 5, 12],
    [-3, -6, -8, -12, 2, 5, 7, 11],
    [-3, -7, -9, -11, 2, 6, 8, 10],
    [-4, -7, -8, -11, 3, 6, 7, 10],
    [-3, -5, -8, -11, 2, 4, 7, 10],
    [-2, -6, -8, -10, 1, 5, 7, 9],
    [-2, -5, -8, -10, 1, 4, 7, 9],
    [-2, -4, -8, -10, 1, 3, 7, 9],
    [-2, -5, -7, -10, 1, 4, 6, 9],
    [-3, -4, -7, -10, 2, 3, 6, 9],
    [-1, -2, -3, -10, 0, 1, 2, 9],
    [-4, -6, -8, -9, 3, 5, 7, 8],
    [-3, -5, -7, -9, 2, 4, 6, 8],
];

/// Splits an EAC block (64 bits, big-endian) into base, multiplier, modifier row and the
/// 3-bit index of each texel in row-major order (the block stores them column by column,
/// first texel in the most significant bits).
fn eac_fields(block: &[u8]) -> (u8, i32, &'static [i32; 8], [usize; 16]) {
    let bits = u64::from_be_bytes(block[..8].try_into().unwrap_or([0; 8]));
    let mut idx = [0usize; 16];
    for i in 0..16 {
        let (x, y) = (i / 4, i % 4);
        idx[y * 4 + x] = ((bits >> (45 - 3 * i)) & 7) as usize;
    }
    (
        block[0],
        (block[1] >> 4) as i32,
        &EAC_MODIFIERS[(block[1] & 0xf) as usize],
        idx,
    )
}

/// ETC2 alpha (8-bit EAC): clamp(base + modifier × multiplier, 0, 255).
fn eac_alpha8(block: &[u8]) -> [u8; 16] {
    let (base, mul, table, idx) = eac_fields(block);
    idx.map(|i| (base as i32 + table[i] * mul).clamp(0, 255) as u8)
}

/// EAC R11 channel decode to float: unsigned `(base·8 + 4 + modifier·multiplier·8)` clamped
/// to [0, 2047] over 2047; signed `(base·8 + modifier·multiplier·8)` clamped to
/// [−1023, 1023] over 1023 (base −128 reads as −127). A zero multiplier scales by 1/8.
fn eac11(block: &[u8], signed: bool) -> [f32; 16] {
    let (base, mul, table, idx) = eac_fields(block);
    let scale = |m: i32| if mul == 0 { m } else { m * mul * 8 };
    if signed {
        let b = (base as i8 as i32).max(-127);
        idx.map(|i| (b * 8 + scale(table[i])).clamp(-1023, 1023) as f32 / 1023.0)
    } else {
        idx.map(|i| (base as i32 * 8 + 4 + scale(table[i])).clamp(0, 2047) as f32 / 2047.0)
    }
}

/// Encodes a solid-colour BC1 block (both endpoints the 5:6:5 rounding of `rgb`, all codes
/// 0). A helper for tests and for building compressed textures from constant colours.
pub fn bc1_solid_block(rgb: [f32; 3]) -> [u8; 8] {
    let q = |x: f32, max: f32| (x.clamp(0.0, 1.0) * max + 0.5) as u16;
    let c = q(rgb[0], 31.0) << 11 | q(rgb[1], 63.0) << 5 | q(rgb[2], 31.0);
    let [lo, hi] = c.to_le_bytes();
    [lo, hi, lo, hi, 0, 0, 0, 0]
}

/// Linear to sRGB code, re-exported for building sRGB test data.
pub fn encode_srgb8(x: f32) -> u8 {
    linear_to_srgb8(x)
}
