//! Per-format round trips (encode → decode) for every uncompressed WebGPU format, with the
//! edge values of Vulkan §3.9–3.10 conversions: ±0, NaN, ∞, denormals, snorm −1 clamping,
//! sRGB codes, integer saturation, depth quantisation.

use rastra_texture::format::{linear_to_srgb8, srgb_to_linear8};
use rastra_texture::{SampleType, TextureAspect, TextureFormat as F};

fn enc(f: F, c: [f32; 4]) -> Vec<u8> {
    let mut out = vec![0u8; f.block_size()];
    f.encode_float(c, &mut out).unwrap();
    out
}

fn rt(f: F, c: [f32; 4]) -> [f32; 4] {
    f.decode_float(&enc(f, c))
}

fn same(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// A tiny deterministic generator (xorshift) for byte patterns.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn every_format_has_consistent_properties() {
    let all = F::all();
    assert_eq!(all.len(), 73 + 28);
    for f in all {
        let (bw, bh) = f.block_dims();
        assert!(bw >= 1 && bh >= 1 && f.block_size() >= 1, "{f:?}");
        assert_eq!(f.is_compressed(), (bw, bh) != (1, 1), "{f:?}");
        assert!((1..=4).contains(&f.components()), "{f:?}");
        if let Some(s) = f.srgb_sibling() {
            assert_eq!(s.srgb_sibling(), Some(f));
            assert_ne!(s.is_srgb(), f.is_srgb());
            assert_eq!(s.block_size(), f.block_size());
        }
        if f.is_depth() {
            assert_eq!(f.sample_type(), SampleType::Depth);
        }
    }
    assert_eq!(F::Rgba8Unorm.texel_size(), 4);
    assert_eq!(F::Rgba32Float.texel_size(), 16);
    assert_eq!(F::Depth32FloatStencil8.block_size(), 8);
    assert_eq!(F::Bc1RgbaUnorm.block_size(), 8);
    assert_eq!(F::Bc7RgbaUnorm.block_size(), 16);
    assert_eq!(F::EacRg11Unorm.block_size(), 16);
    assert_eq!(
        F::Depth24PlusStencil8.sample_type_of(TextureAspect::StencilOnly),
        SampleType::Uint
    );
    assert_eq!(F::Rgba32Float.sample_type(), SampleType::UnfilterableFloat);
    assert_eq!(F::Rgb10a2Uint.sample_type(), SampleType::Uint);
    assert!(F::Bc4RSnorm.is_bc() && F::EacR11Snorm.is_etc2());
}

/// decode ∘ encode ∘ decode = decode on random bit patterns of every uncompressed format
/// (every stored value survives a round trip through its decoded form).
#[test]
fn decoded_values_round_trip_for_every_uncompressed_format() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for f in F::all().into_iter().filter(|f| !f.is_compressed()) {
        for _ in 0..2000 {
            let bytes: Vec<u8> = (0..f.block_size()).map(|_| rng.next() as u8).collect();
            if f.is_integer() || f.has_stencil() && !f.is_depth() {
                let v = f.decode_int(TextureAspect::All, &bytes);
                let mut out = vec![0; f.block_size()];
                f.encode_int(v, &mut out).unwrap();
                assert_eq!(f.decode_int(TextureAspect::All, &out), v, "{f:?} {bytes:?}");
                continue;
            }
            let mut v = f.decode_float(&bytes);
            let back = rt(f, v);
            if f.is_depth() && v[0].is_nan() {
                v[0] = 0.0; // NaN depth stores 0
            }
            for c in 0..4 {
                // Depth32Float keeps every bit; formats with NaN keep NaN-ness.
                assert!(same(back[c], v[c]), "{f:?} {bytes:?}: {v:?} → {back:?}");
            }
        }
    }
}

#[test]
fn unorm8_edges() {
    let f = F::Rgba8Unorm;
    assert_eq!(enc(f, [0.0, 1.0, 0.5, -0.0]), [0, 255, 128, 0]);
    assert_eq!(
        enc(f, [f32::NAN, 2.0, -1.0, f32::INFINITY]),
        [0, 255, 0, 255]
    );
    // Round to nearest: 1.5/255 → 2, 1.49/255 → 1.
    assert_eq!(enc(F::R8Unorm, [1.5 / 255.0, 0.0, 0.0, 0.0]), [2]);
    assert_eq!(enc(F::R8Unorm, [1.49 / 255.0, 0.0, 0.0, 0.0]), [1]);
    // 0.3 · 255 is 76.5 in single precision (the exact product is 76.500003), which
    // rounds to even: 76 (D3D's rule; one of the two nearest codes, as Vulkan asks).
    assert_eq!(
        rt(F::R8Unorm, [0.3, 0.7, 0.7, 0.7]),
        [76.0 / 255.0, 0.0, 0.0, 1.0]
    );
    assert_eq!(enc(F::Bgra8Unorm, [1.0, 0.5, 0.0, 1.0]), [0, 128, 255, 255]);
    assert_eq!(
        enc(F::R16Unorm, [0.5, 0.0, 0.0, 0.0]),
        32768u16.to_le_bytes()
    );
    assert_eq!(
        F::Rg16Unorm.decode_float(&[255, 255, 0, 0]),
        [1.0, 0.0, 0.0, 1.0]
    );
}

#[test]
fn snorm_clamps_to_minus_one() {
    let f = F::R8Snorm;
    assert_eq!(enc(f, [-1.0, 0.0, 0.0, 0.0]), [0x81]); // −127, never −128
    assert_eq!(enc(f, [-2.0, 0.0, 0.0, 0.0]), [0x81]);
    assert_eq!(enc(f, [1.0, 0.0, 0.0, 0.0]), [127]);
    assert_eq!(enc(f, [f32::NAN, 0.0, 0.0, 0.0]), [0]);
    assert_eq!(enc(f, [0.5, 0.0, 0.0, 0.0]), [64]); // 63.5 rounds away from zero
    assert_eq!(f.decode_float(&[0x80])[0], -1.0); // −128 reads as −1
    assert_eq!(f.decode_float(&[0x81])[0], -1.0);
    assert_eq!(f.decode_float(&[0x40])[0], 64.0 / 127.0);
    assert_eq!(F::R16Snorm.decode_float(&0x8000u16.to_le_bytes())[0], -1.0);
    assert_eq!(
        enc(F::R16Snorm, [-1.0, 0.0, 0.0, 0.0]),
        (-32767i16).to_le_bytes()
    );
}

#[test]
fn srgb_codes() {
    // The sRGB EOTF at a few codes (exact values from the formula).
    assert_eq!(srgb_to_linear8(0), 0.0);
    assert_eq!(srgb_to_linear8(255), 1.0);
    assert!((srgb_to_linear8(128) - 0.215_860_5).abs() < 1e-6);
    assert!((srgb_to_linear8(10) - 10.0 / 255.0 / 12.92).abs() < 1e-7);
    // Every code survives linear → code.
    for c in 0..=255u8 {
        assert_eq!(linear_to_srgb8(srgb_to_linear8(c)), c);
    }
    assert_eq!(linear_to_srgb8(0.5), 188);
    assert_eq!(linear_to_srgb8(f32::NAN), 0);
    assert_eq!(linear_to_srgb8(-1.0), 0);
    assert_eq!(linear_to_srgb8(7.0), 255);
    // Alpha stays linear; BGRA swizzles.
    assert_eq!(
        enc(F::Rgba8UnormSrgb, [0.5, 0.5, 0.5, 0.5]),
        [188, 188, 188, 128]
    );
    assert_eq!(
        enc(F::Bgra8UnormSrgb, [1.0, 0.0, 0.5, 1.0]),
        [188, 0, 255, 255]
    );
    let d = F::Rgba8UnormSrgb.decode_float(&[128, 0, 255, 128]);
    assert!((d[0] - 0.215_860_5).abs() < 1e-6 && d[2] == 1.0 && d[3] == 128.0 / 255.0);
}

#[test]
fn half_floats() {
    let f = F::R16Float;
    let h = |x: f32| u16::from_le_bytes(enc(f, [x, 0.0, 0.0, 0.0]).try_into().unwrap());
    assert_eq!(h(0.0), 0x0000);
    assert_eq!(h(-0.0), 0x8000);
    assert_eq!(h(1.0), 0x3c00);
    assert_eq!(h(65504.0), 0x7bff);
    assert_eq!(h(65520.0), 0x7c00); // rounds up to ∞
    assert_eq!(h(f32::INFINITY), 0x7c00);
    assert_eq!(h(f32::NEG_INFINITY), 0xfc00);
    assert_eq!(h(2f32.powi(-24)), 0x0001); // smallest denormal
    assert_eq!(h(2f32.powi(-26)), 0x0000); // below half of it: 0
    assert!(f.decode_float(&h(f32::NAN).to_le_bytes())[0].is_nan());
    assert_eq!(f.decode_float(&0x0001u16.to_le_bytes())[0], 2f32.powi(-24));
    assert_eq!(
        f.decode_float(&0x8000u16.to_le_bytes())[0].to_bits(),
        (-0.0f32).to_bits()
    );
    assert_eq!(
        rt(F::Rgba16Float, [1.0, 2.0, 3.0, 4.0]),
        [1.0, 2.0, 3.0, 4.0]
    );
}

#[test]
fn float32_keeps_bits() {
    let f = F::Rgba32Float;
    let v = [
        -0.0,
        f32::from_bits(1),
        f32::INFINITY,
        f32::from_bits(0x7fc0_1234),
    ];
    let back = rt(f, v);
    for c in 0..4 {
        assert_eq!(back[c].to_bits(), v[c].to_bits());
    }
}

#[test]
fn rg11b10_ufloat() {
    let f = F::Rg11b10Ufloat;
    let bits = |c: [f32; 4]| u32::from_le_bytes(enc(f, c).try_into().unwrap());
    assert_eq!(bits([1.0, 0.0, 0.0, 0.0]) & 0x7ff, 15 << 6);
    assert_eq!(bits([0.0, 0.0, 1.0, 0.0]) >> 22, 15 << 5);
    assert_eq!(bits([-1.0, -0.0, 0.0, 0.0]), 0); // negative → 0
    assert_eq!(bits([1e10, 0.0, 0.0, 0.0]) & 0x7ff, 0x7bf); // clamps to max finite
    assert_eq!(bits([f32::INFINITY, 0.0, 0.0, 0.0]) & 0x7ff, 0x7c0);
    assert!(rt(f, [f32::NAN, 0.0, 0.0, 0.0])[0].is_nan());
    assert_eq!(rt(f, [1e10, 0.0, 0.0, 0.0])[0], 65024.0);
    assert_eq!(rt(f, [0.0, 0.0, 1e10, 0.0])[2], 64512.0);
    // Denormals: the 11-bit unit is 2^-20, the 10-bit one 2^-19.
    assert_eq!(bits([2f32.powi(-20), 0.0, 0.0, 0.0]) & 0x7ff, 1);
    assert_eq!(
        rt(f, [3.0 * 2f32.powi(-20), 0.0, 0.0, 0.0])[0],
        3.0 * 2f32.powi(-20)
    );
    // Round to nearest even: 1 + 1/128 is halfway between 1 and 1 + 1/64 → 1.
    assert_eq!(rt(f, [1.0 + 1.0 / 128.0, 0.0, 0.0, 0.0])[0], 1.0);
    assert_eq!(
        rt(f, [1.0 + 3.0 / 128.0, 0.0, 0.0, 0.0])[0],
        1.0 + 2.0 / 64.0
    );
    assert_eq!(rt(f, [0.5, 0.25, 2.0, 0.0]), [0.5, 0.25, 2.0, 1.0]);
}

#[test]
fn rgb9e5_ufloat() {
    let f = F::Rgb9e5Ufloat;
    assert_eq!(rt(f, [1.0, 0.5, 0.25, 0.0]), [1.0, 0.5, 0.25, 1.0]);
    assert_eq!(rt(f, [1e9, 0.0, 0.0, 0.0])[0], 65408.0); // max
    assert_eq!(rt(f, [f32::NAN, -5.0, 0.0, 0.0]), [0.0, 0.0, 0.0, 1.0]);
    // The shared exponent follows the largest channel: small ones lose precision.
    let v = rt(f, [100.0, 0.001, 3.0, 0.0]);
    assert_eq!(v[0], 100.0);
    assert_eq!(v[1], 0.0);
    assert_eq!(v[2], 3.0);
    // Rounding the largest mantissa up bumps the exponent (511.9 → 512 × 2^…).
    assert_eq!(rt(f, [511.9 / 256.0, 0.0, 0.0, 0.0])[0], 2.0);
}

#[test]
fn rgb10a2() {
    let f = F::Rgb10a2Unorm;
    let b = u32::from_le_bytes(enc(f, [1.0, 0.0, 0.5, 0.34]).try_into().unwrap());
    assert_eq!(b & 0x3ff, 1023);
    assert_eq!((b >> 20) & 0x3ff, 512);
    assert_eq!(b >> 30, 1);
    assert_eq!(rt(f, [1.0, 0.0, 0.5, 0.34])[3], 1.0 / 3.0);
    let u = F::Rgb10a2Uint;
    let mut out = [0u8; 4];
    u.encode_int([2000, 5, 1023, 9], &mut out).unwrap();
    assert_eq!(u.decode_int(TextureAspect::All, &out), [1023, 5, 1023, 3]);
}

#[test]
fn integers_saturate() {
    let mut out = vec![0u8; 16];
    F::R8Uint.encode_int([300, 0, 0, 0], &mut out).unwrap();
    assert_eq!(out[0], 255);
    F::R8Sint
        .encode_int([(-200i32) as u32, 0, 0, 0], &mut out)
        .unwrap();
    assert_eq!(out[0] as i8, -128);
    F::Rg16Sint
        .encode_int([40000, (-5i32) as u32, 0, 0], &mut out)
        .unwrap();
    assert_eq!(
        F::Rg16Sint.decode_int(TextureAspect::All, &out),
        [32767, (-5i32) as u32, 0, 1]
    );
    F::Rgba32Uint
        .encode_int([u32::MAX, 0, 7, 1 << 31], &mut out)
        .unwrap();
    assert_eq!(
        F::Rgba32Uint.decode_int(TextureAspect::All, &out),
        [u32::MAX, 0, 7, 1 << 31]
    );
    // Missing components read 0, alpha 1.
    F::R16Uint.encode_int([9, 9, 9, 9], &mut out).unwrap();
    assert_eq!(
        F::R16Uint.decode_int(TextureAspect::All, &out),
        [9, 0, 0, 1]
    );
    // Float input to an integer format rounds and saturates.
    F::R8Uint
        .encode_float([2.6, 0.0, 0.0, 0.0], &mut out)
        .unwrap();
    assert_eq!(out[0], 3);
}

#[test]
fn depth_and_stencil() {
    let mut t = [0u8; 8];
    F::Depth16Unorm
        .encode_float([0.5, 0.0, 0.0, 0.0], &mut t)
        .unwrap();
    assert_eq!(u16::from_le_bytes([t[0], t[1]]), 32768);
    assert_eq!(F::Depth16Unorm.decode_depth(&t), 32768.0 / 65535.0);
    assert_eq!(F::Depth16Unorm.quantize_depth(0.5), 32768.0 / 65535.0);
    F::Depth24PlusStencil8.encode_stencil(0xab, &mut t);
    F::Depth24PlusStencil8.encode_depth(1.0, &mut t);
    assert_eq!(t[..4], [255, 255, 255, 0xab]);
    assert_eq!(F::Depth24PlusStencil8.decode_depth(&t), 1.0);
    assert_eq!(F::Depth24PlusStencil8.decode_stencil(&t), 0xab);
    assert_eq!(
        F::Depth24PlusStencil8.decode_int(TextureAspect::StencilOnly, &t),
        [0xab, 0, 0, 1]
    );
    F::Depth32FloatStencil8.encode_depth(0.125, &mut t);
    F::Depth32FloatStencil8.encode_stencil(7, &mut t);
    assert_eq!(
        F::Depth32FloatStencil8.decode_float(&t),
        [0.125, 0.0, 0.0, 1.0]
    );
    assert_eq!(F::Depth32FloatStencil8.decode_stencil(&t), 7);
    // Unorm depth clamps, NaN → 0.
    F::Depth16Unorm
        .encode_float([f32::NAN, 0.0, 0.0, 0.0], &mut t)
        .unwrap();
    assert_eq!(F::Depth16Unorm.decode_depth(&t), 0.0);
    F::Depth24Plus
        .encode_float([3.0, 0.0, 0.0, 0.0], &mut t)
        .unwrap();
    assert_eq!(F::Depth24Plus.decode_depth(&t), 1.0);
    F::Stencil8.encode_int([300, 0, 0, 0], &mut t).unwrap();
    assert_eq!(
        F::Stencil8.decode_int(TextureAspect::All, &t),
        [255, 0, 0, 1]
    );
}

#[test]
fn compressed_formats_refuse_texel_encoding_and_short_buffers_are_defined() {
    let mut out = [0u8; 16];
    assert!(F::Bc1RgbaUnorm.encode_float([0.0; 4], &mut out).is_err());
    assert!(
        F::Rgba32Float
            .encode_float([0.0; 4], &mut out[..4])
            .is_err()
    );
    assert_eq!(F::Rgba32Float.decode_float(&out[..3]), [0.0; 4]);
    // The pipeline-compatible name never panics.
    F::Bc1RgbaUnorm.encode_color([1.0; 4], &mut out);
    F::Rgba8Unorm.encode_color([1.0; 4], &mut out[..2]);
}
