//! Compressed-format decoding against hand-built blocks whose texels follow from the format
//! specifications (expected values derived in the comments), plus robustness on random
//! blocks. Scan-conversion lecture "S3 Texturkompression" for BC1; Khronos Data Format
//! for ETC2/EAC and ASTC void-extent blocks; Microsoft's BC7 mode reference.

use rastra_texture::compressed::decode_block;
use rastra_texture::{AstcBlock, AstcChannel, TextureFormat as F};

fn decode(f: F, block: &[u8]) -> Vec<[f32; 4]> {
    let (w, h) = f.block_dims();
    let mut out = vec![[0.0; 4]; (w * h) as usize];
    decode_block(f, block, &mut out).unwrap();
    out
}

fn px8(c: [f32; 4]) -> [u8; 4] {
    c.map(|v| (v * 255.0).round() as u8)
}

/// BC1 with red and blue endpoints: c0 = 0xF800 > c1 = 0x001F, so four colours:
/// code 0 = red, 1 = blue, 2 = ⅔ red + ⅓ blue = (170, 0, 85), 3 = (85, 0, 170).
/// Row 0 holds codes 0, 1, 2, 3 (2 bits per texel, first texel in the low bits: 0xE4).
#[test]
fn bc1_four_colour_block() {
    let block = [0x00, 0xF8, 0x1F, 0x00, 0xE4, 0x00, 0x00, 0x00];
    let t = decode(F::Bc1RgbaUnorm, &block);
    assert_eq!(px8(t[0]), [255, 0, 0, 255]);
    assert_eq!(px8(t[1]), [0, 0, 255, 255]);
    assert_eq!(px8(t[2]), [170, 0, 85, 255]);
    assert_eq!(px8(t[3]), [85, 0, 170, 255]);
    assert_eq!(px8(t[4]), [255, 0, 0, 255]);
    assert_eq!(px8(t[15]), [255, 0, 0, 255]);
    // The sRGB variant decodes the same codes to linear.
    let s = decode(F::Bc1RgbaUnormSrgb, &block);
    assert!((s[2][0] - rastra_texture::format::srgb_to_linear8(170)).abs() < 1e-7);
}

/// BC1 with c0 = blue ≤ c1 = red: three colours and transparent black; code 2 is the
/// midpoint (128, 0, 128), code 3 is (0, 0, 0, 0).
#[test]
fn bc1_punch_through_block() {
    let block = [0x1F, 0x00, 0x00, 0xF8, 0xE4, 0x00, 0x00, 0x00];
    let t = decode(F::Bc1RgbaUnorm, &block);
    assert_eq!(px8(t[0]), [0, 0, 255, 255]);
    assert_eq!(px8(t[1]), [255, 0, 0, 255]);
    assert_eq!(px8(t[2]), [128, 0, 128, 255]);
    assert_eq!(px8(t[3]), [0, 0, 0, 0]);
}

/// BC3: alpha endpoints 255 > 0 give eight alphas; code 2 = (6·255 + 0)/7 = 218 (rounded
/// down after +1). Texel 0 uses code 2, texel 1 code 1 (0), the rest code 0 (255). The
/// colour half is solid white (both endpoints 0xFFFF).
#[test]
fn bc3_alpha_block() {
    let idx: u64 = 2 | 1 << 3;
    let mut block = [0u8; 16];
    block[0] = 255;
    block[1] = 0;
    block[2..8].copy_from_slice(&idx.to_le_bytes()[..6]);
    block[8..12].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF]);
    let t = decode(F::Bc3RgbaUnorm, &block);
    assert_eq!(px8(t[0]), [255, 255, 255, 218]);
    assert_eq!(px8(t[1]), [255, 255, 255, 0]);
    assert_eq!(px8(t[2]), [255, 255, 255, 255]);
}

/// BC4 unorm: r0 = 200 > r1 = 100, eight values in float: code 2 = (6·r0 + r1)/7, code 7
/// = (r0 + 6·r1)/7 (all over 255). BC4 snorm: r0 = −128 (reads −1) < r1 = 127 (1): six
/// values plus −1 (code 6) and 1 (code 7).
#[test]
fn bc4_unorm_and_snorm() {
    let idx: u64 = 2 | 7 << 3 | 1 << 6;
    let mut block = [200, 100, 0, 0, 0, 0, 0, 0];
    block[2..8].copy_from_slice(&idx.to_le_bytes()[..6]);
    let t = decode(F::Bc4RUnorm, &block);
    let (a, b) = (200.0f32 / 255.0, 100.0f32 / 255.0);
    assert!((t[0][0] - (6.0 * a + b) / 7.0).abs() < 1e-6);
    assert!((t[1][0] - (a + 6.0 * b) / 7.0).abs() < 1e-6);
    assert!((t[2][0] - b).abs() < 1e-6);
    assert!((t[3][0] - a).abs() < 1e-6);
    assert_eq!(&t[0][1..], &[0.0, 0.0, 1.0]);

    let idx: u64 = 6 | 7 << 3 | 2 << 6;
    let mut block = [0x80, 127, 0, 0, 0, 0, 0, 0];
    block[2..8].copy_from_slice(&idx.to_le_bytes()[..6]);
    let t = decode(F::Bc4RSnorm, &block);
    assert_eq!(t[0][0], -1.0);
    assert_eq!(t[1][0], 1.0);
    assert!((t[2][0] - (-4.0 + 1.0) / 5.0).abs() < 1e-6); // code 2 = (4·r0 + r1)/5
    assert_eq!(t[3][0], -1.0); // code 0
}

/// BC5 = two BC4 blocks, red then green.
#[test]
fn bc5_two_channels() {
    let mut block = [0u8; 16];
    block[0] = 255; // red: r0 = 255, r1 = 0, all codes 0 → 1.0
    block[8] = 0; // green: g0 = 0, g1 = 255 (six-value mode), all codes 1 → 1.0
    block[9] = 255;
    let idx: u64 = (0..16).fold(0, |a, i| a | 1 << (3 * i));
    block[10..16].copy_from_slice(&idx.to_le_bytes()[..6]);
    let t = decode(F::Bc5RgUnorm, &block);
    for px in t {
        assert_eq!(px, [1.0, 1.0, 0.0, 1.0]);
    }
}

/// LSB-first bit writer for BC7.
struct Bits {
    v: u128,
    at: u32,
}
impl Bits {
    fn put(&mut self, value: u32, n: u32) {
        self.v |= (value as u128) << self.at;
        self.at += n;
    }
}

/// BC7 mode 6 (one subset, 7-bit RGBA endpoints + one P-bit each, 4-bit indices):
/// endpoint 0 = (127, 0, 0, 127) with P = 1 → (255, 1, 1, 255); endpoint 1 =
/// (0, 127, 0, 127) with P = 0 → (0, 254, 0, 254). Texel 0 has index 0 (endpoint 0),
/// texel 5 index 15 (endpoint 1), texel 1 index 8: weight 34/64, so each channel is
/// ((64 − 34)·e0 + 34·e1 + 32) >> 6 = (120, 135, 0, 254).
#[test]
fn bc7_mode6_block() {
    let mut b = Bits { v: 0, at: 0 };
    b.put(1 << 6, 7); // mode 6
    for (e0, e1) in [(127, 0), (0, 127), (0, 0), (127, 127)] {
        b.put(e0, 7);
        b.put(e1, 7);
    }
    b.put(1, 1); // P0
    b.put(0, 1); // P1
    for texel in 0..16 {
        let index = match texel {
            1 => 8,
            5 => 15,
            _ => 0,
        };
        b.put(index, if texel == 0 { 3 } else { 4 });
    }
    assert_eq!(b.at, 128);
    let t = decode(F::Bc7RgbaUnorm, &b.v.to_le_bytes());
    assert_eq!(px8(t[0]), [255, 1, 1, 255]);
    assert_eq!(px8(t[5]), [0, 254, 0, 254]);
    assert_eq!(px8(t[1]), [120, 135, 0, 254]);
}

#[test]
fn bc6h_zero_block_is_black_and_hdr_is_float() {
    for f in [F::Bc6hRgbUfloat, F::Bc6hRgbFloat] {
        let t = decode(f, &[0u8; 16]);
        assert!(t.iter().all(|p| *p == [0.0, 0.0, 0.0, 1.0]), "{f:?}");
    }
}

/// ETC2 in ETC1 "individual" mode: base colours R = 8, G = 4, B = 2 (4-bit, expanded to
/// 136, 68, 34), table codeword 0 (modifiers +2, +8, −2, −8). Pixel indices are stored
/// column-major (pixel p = x·4 + y); only pixel (1, 0) has index 1 (+8), the rest 0 (+2).
/// So texel (0, 0) = (138, 70, 36) and texel (1, 0) — row-major index 1 — = (144, 76, 42),
/// which also checks the orientation.
fn etc2_rgb_block() -> [u8; 8] {
    [0x88, 0x44, 0x22, 0x00, 0x00, 0x00, 0x00, 0x10]
}

#[test]
fn etc2_rgb_individual_mode() {
    let t = decode(F::Etc2Rgb8Unorm, &etc2_rgb_block());
    assert_eq!(px8(t[0]), [138, 70, 36, 255]);
    assert_eq!(px8(t[1]), [144, 76, 42, 255]);
    assert_eq!(px8(t[4]), [138, 70, 36, 255]);
    assert_eq!(px8(t[15]), [138, 70, 36, 255]);
}

/// Builds an EAC block: base, multiplier, table, then the 3-bit index of each pixel in the
/// block's column-major order, first pixel in the most significant bits.
fn eac_block(base: u8, mul: u8, table: u8, index: impl Fn(usize, usize) -> u64) -> [u8; 8] {
    let mut v: u64 = (base as u64) << 56 | ((mul << 4 | table) as u64) << 48;
    for p in 0..16 {
        let (x, y) = (p / 4, p % 4);
        v |= index(x, y) << (45 - 3 * p);
    }
    v.to_be_bytes()
}

/// ETC2 RGBA8: the alpha half is EAC at 8 bits: base 200, multiplier 2, table 13
/// (modifiers −1, −2, −3, −10, 0, 1, 2, 9): index 7 → 200 + 18 = 218, index 3 → 180 at
/// pixel (0, 1) (row-major index 4).
#[test]
fn etc2_rgba8_alpha() {
    let alpha = eac_block(200, 2, 13, |x, y| if (x, y) == (0, 1) { 3 } else { 7 });
    let mut block = [0u8; 16];
    block[..8].copy_from_slice(&alpha);
    block[8..].copy_from_slice(&etc2_rgb_block());
    let t = decode(F::Etc2Rgba8Unorm, &block);
    assert_eq!(px8(t[0]), [138, 70, 36, 218]);
    assert_eq!(px8(t[4]), [138, 70, 36, 180]);
    assert_eq!(px8(t[1]), [144, 76, 42, 218]);
}

/// EAC R11 at 11 bits: unsigned value = base·8 + 4 + modifier·multiplier·8; with base 128,
/// multiplier 1, table 0: index 4 (+2) → 1044, index 7 (+14) → 1140 (over 2047). Signed:
/// base −128 reads −127: −1016 + 16 = −1000 and −1016 + 112 = −904 (over 1023). A zero
/// multiplier uses the modifier unscaled: 100·8 + 4 − 15 = 789.
#[test]
fn eac_r11_and_rg11() {
    let b = eac_block(128, 1, 0, |x, y| if (x, y) == (1, 0) { 7 } else { 4 });
    let t = decode(F::EacR11Unorm, &b);
    assert_eq!(t[0], [1044.0 / 2047.0, 0.0, 0.0, 1.0]);
    assert_eq!(t[1][0], 1140.0 / 2047.0);
    let t = decode(F::EacR11Snorm, &b);
    assert_eq!(t[0][0], -1000.0 / 1023.0);
    assert_eq!(t[1][0], -904.0 / 1023.0);
    let z = eac_block(100, 0, 0, |_, _| 3);
    assert_eq!(decode(F::EacR11Unorm, &z)[7][0], 789.0 / 2047.0);
    let mut rg = [0u8; 16];
    rg[..8].copy_from_slice(&b);
    rg[8..].copy_from_slice(&z);
    let t = decode(F::EacRg11Unorm, &rg);
    assert_eq!(t[1], [1140.0 / 2047.0, 789.0 / 2047.0, 0.0, 1.0]);
}

/// ASTC void-extent block (a constant colour): 0x1FC marker, LDR, all-ones extents, then
/// RGBA as 16-bit unorm: (0xFFFF, 0x8000, 0x0000, 0xFFFF) decodes to (255, 128, 0, 255).
#[test]
fn astc_void_extent_every_footprint() {
    let mut block = [
        0xFC, 0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    block[8..10].copy_from_slice(&0xFFFFu16.to_le_bytes());
    block[10..12].copy_from_slice(&0x8000u16.to_le_bytes());
    block[14..16].copy_from_slice(&0xFFFFu16.to_le_bytes());
    for fp in AstcBlock::ALL {
        let t = decode(
            F::Astc {
                block: fp,
                channel: AstcChannel::Unorm,
            },
            &block,
        );
        assert_eq!(t.len(), (fp.dims().0 * fp.dims().1) as usize);
        assert!(t.iter().all(|p| px8(*p) == [255, 128, 0, 255]), "{fp:?}");
    }
}

/// Random blocks of every compressed format decode without panicking and give finite
/// values for LDR formats.
#[test]
fn random_blocks_are_safe() {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // the ASTC decoder's caught panics stay quiet
    for f in F::all().into_iter().filter(|f| f.is_compressed()) {
        for _ in 0..200 {
            let block: Vec<u8> = (0..f.block_size())
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    s as u8
                })
                .collect();
            let t = decode(f, &block);
            if !matches!(f, F::Bc6hRgbUfloat | F::Bc6hRgbFloat) {
                assert!(
                    t.iter().flatten().all(|v| v.is_finite() && v.abs() <= 1.0),
                    "{f:?}"
                );
            }
        }
    }
    std::panic::set_hook(hook);
}

#[test]
fn decode_block_rejects_uncompressed_and_short_input() {
    let mut out = vec![[0.0; 4]; 16];
    assert!(decode_block(F::Rgba8Unorm, &[0; 16], &mut out).is_err());
    assert!(decode_block(F::Bc7RgbaUnorm, &[0; 8], &mut out).is_err());
    assert!(decode_block(F::Bc1RgbaUnorm, &[0; 8], &mut out[..4]).is_err());
}
