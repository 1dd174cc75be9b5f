//! Tests of the texture unit's short paths against the general computations they
//! shorten (bit for bit, cache statistics included).

use super::*;
use crate::{AddressMode, BorderColor, SamplerDesc, TextureDesc, TextureFormat};

/// A xorshift generator of 32-bit words from `seed` (not zero), for the tests' random cases.
fn xorshift(mut s: u32) -> impl FnMut() -> u32 {
    move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    }
}

/// The tabled probe offsets are the formula's bits, for every probe count the table
/// holds and beyond it.
#[test]
fn probe_offsets_equal_the_formula() {
    for n in 1..=40u32 {
        for k in 0..n {
            let want = (k as f32 + 0.5) / n as f32 - 0.5;
            assert_eq!(probe_offset(k, n).to_bits(), want.to_bits(), "{k} of {n}");
        }
    }
}

/// The truncation-based floor agrees with `f32::floor` on edge values and a sweep.
#[test]
fn floor_i64_is_the_floor() {
    let reference = |x: f32| (x.floor() as i64).clamp(-(1 << 40), 1 << 40);
    let mut values = vec![
        0.0f32,
        -0.0,
        0.5,
        -0.5,
        1.0,
        -1.0,
        1.5,
        -1.5,
        2.5e-8,
        -2.5e-8,
        8388607.5,
        -8388607.5,
        8388608.0,
        -8388609.0,
        1e12,
        -1e12,
        1e30,
        -1e30,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
    ];
    let mut x = -70000.0f32;
    while x < 70000.0 {
        values.push(x);
        x += 0.37;
    }
    for v in values {
        assert_eq!(super::floor_i64(v), reference(v), "{v}");
        assert_eq!(super::floor_f32(v).to_bits(), v.floor().to_bits(), "{v}");
    }
}

/// [`linear_axis`]'s short path (one floor, in-range texels as their own address)
/// against the general computation it shortens, bit for bit: values around zero, texel
/// edges, the 2²³ boundary, huge values, infinities and NaN, every mode, odd sizes.
#[test]
fn linear_axis_equals_the_general_computation() {
    fn general(u: f32, n: u32, offset: i32, mode: AddressMode) -> [(Option<u32>, f32); 2] {
        let u = u - 0.5;
        let fl = floor_f32(u);
        let frac = if (u - fl).is_finite() { u - fl } else { 0.0 };
        let i0 = sat_add(floor_i64(u), offset);
        [
            (address(i0, n, mode), 1.0 - frac),
            (address(i0 + 1, n, mode), frac),
        ]
    }
    let modes = [
        AddressMode::Repeat,
        AddressMode::MirrorRepeat,
        AddressMode::ClampToEdge,
        AddressMode::ClampToBorder,
    ];
    let mut next = xorshift(0x2545_f491);
    let special = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        8_388_607.5,
        8_388_608.5,
        -8_388_607.5,
        -8_388_609.0,
        1e20,
        -1e20,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    for i in 0..200_000u32 {
        let r = next();
        let u = match i % 4 {
            0 => special[(r % special.len() as u32) as usize],
            1 => f32::from_bits(next()),
            2 => (next() % 4096) as f32 / 16.0 - 128.0,
            _ => (next() as i32 >> 4) as f32 / 64.0,
        };
        let n = [1, 2, 3, 7, 64, 1000][(r >> 4) as usize % 6];
        let offset = (r >> 8) as i32 % 9 - 4;
        let mode = modes[(r >> 12) as usize % 4];
        let a = linear_axis(u, n, offset, mode);
        let b = general(u, n, offset, mode);
        for k in 0..2 {
            assert_eq!(a[k].0, b[k].0, "u {u} n {n} offset {offset} {mode:?}");
            assert_eq!(a[k].1.to_bits(), b[k].1.to_bits(), "u {u} n {n}");
        }
    }
}

/// The bilinear fast path gives the general path's bits and cache traffic: every
/// address mode and border, coordinates inside, outside and far outside the texture,
/// odd sizes, two levels, texel offsets, an array layer.
#[test]
fn bilinear_2d_equals_the_general_footprint() {
    let mut tex = Texture::new(
        TextureDesc::d2(13, 7, TextureFormat::Rgba8Unorm)
            .with_mips(2)
            .with_layers(2),
    )
    .unwrap();
    for level in 0..2 {
        let [w, h, _] = tex.desc().mip_size(level);
        for layer in 0..2 {
            for y in 0..h {
                for x in 0..w {
                    let b = [
                        x as u8 * 19,
                        y as u8 * 37,
                        (x ^ y) as u8 * 11,
                        200 + layer as u8,
                    ];
                    tex.element_mut(level, layer, x, y)
                        .unwrap()
                        .copy_from_slice(&b);
                }
            }
        }
    }
    let view = TextureView::whole(&tex).unwrap();
    let src = Source {
        texture: &tex,
        format: view.format,
        aspect: view.aspect,
    };
    let modes = [
        AddressMode::Repeat,
        AddressMode::MirrorRepeat,
        AddressMode::ClampToEdge,
        AddressMode::ClampToBorder,
    ];
    let (mut fast, mut general) = (TextureUnit::default(), TextureUnit::default());
    let mut next = xorshift(0x9e37_79b9);
    for i in 0..20_000 {
        let r = next();
        let sampler = Sampler::new(SamplerDesc {
            address_mode_u: modes[(r & 3) as usize],
            address_mode_v: modes[(r >> 2 & 3) as usize],
            border_color: [
                BorderColor::TransparentBlack,
                BorderColor::OpaqueBlack,
                BorderColor::OpaqueWhite,
            ][(r >> 4) as usize % 3],
            ..SamplerDesc::default()
        })
        .unwrap();
        let coord = |v: u32| match v % 5 {
            0 => (v >> 3) as f32 / (1 << 29) as f32 * 3.0 - 1.0,
            1 => (v >> 3) as f32 / (1 << 29) as f32,
            2 => ((v >> 3) % 64) as f32 / 13.0,
            3 => -1e9 + (v >> 3) as f32,
            _ => f32::from_bits(v),
        };
        let c = [coord(next()), coord(next()), 0.0];
        // Mostly small offsets; sometimes ones at and beyond the short path's limit.
        let offsets = [
            -1,
            0,
            1,
            -13,
            1 << 24,
            -(1 << 24),
            (1 << 24) + 1,
            i32::MIN,
            i32::MAX,
        ];
        let pick = |v: u32| {
            if v.is_multiple_of(8) {
                offsets[(v / 8) as usize % offsets.len()]
            } else {
                v as i32 % 3 - 1
            }
        };
        let o = next();
        let offset = [pick(o), pick(o >> 12), 0];
        let (level, slice) = ((r >> 12) & 1, (r >> 13) & 1);
        let source = Cell::new(None);
        let ctx = LaneCtx {
            slice,
            depth_ref: None,
            source: &source,
        };
        let l = fast.level_2d(&src, &view, &sampler, level, slice, &source);
        let a = fast.bilinear_2d::<true>(&l, offset, c);
        let b = general.footprint_general(
            &src,
            &view,
            &sampler,
            offset,
            level,
            Pos::Flat(c),
            FilterMode::Linear,
            &ctx,
        );
        assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "case {i}: {c:?}");
    }
    assert_eq!(fast.stats(), general.stats());
}

/// The probes' footprints found all at once equal [`linear_axis`] per probe at the probe's
/// coordinate (`offset_flat`'s), bit for bit, in every address mode, and are refused exactly
/// when some probe's coordinate is past the short path (2²³, infinities, NaN) or — except
/// on a repeating power-of-two axis or one clamped to its edge — its footprint leaves the
/// level: probe counts 2…16, axes short and long, coordinates inside, across and far
/// outside the level, odd and power-of-two sizes, texel offsets up to the 32-bit limit and
/// past it; eight slots give what sixteen give in their first eight.
#[test]
fn probe_footprints_equal_the_probes_one_by_one() {
    let mut next = xorshift(0x6a09_e667);
    let modes = [
        AddressMode::Repeat,
        AddressMode::MirrorRepeat,
        AddressMode::ClampToEdge,
        AddressMode::ClampToBorder,
    ];
    let (mut taken, mut refused, mut wrapped) = (0, 0, 0);
    for i in 0..200_000u32 {
        let r = next();
        let n = 2 + r % 15;
        let size = [1, 2, 3, 7, 64, 1000, 1 << 20][(r >> 4) as usize % 7];
        let mode = modes[(r >> 16) as usize % 4];
        let unit = |v: u32| (v >> 8) as f32 / (1 << 24) as f32;
        let c0 = match i % 4 {
            0 => unit(next()),
            1 => unit(next()) * 3.0 - 1.0,
            2 => f32::from_bits(next()),
            _ => 0.5 + (next() % 64) as f32 / size as f32,
        };
        let axis = match (i / 4) % 4 {
            0 => unit(next()) * 0.01 - 0.005,
            1 => unit(next()) * 2.0 - 1.0,
            2 => f32::from_bits(next()),
            _ => 0.0,
        };
        let offset = match (r >> 8) % 16 {
            0 => [1 << 24, -(1 << 24), (1 << 24) + 1, i32::MIN][(r >> 12) as usize % 4],
            v => v as i32 % 9 - 4,
        };
        let row = &PROBE_OFFSETS[n as usize];
        let got = probe_axis(row, n, c0, axis, size, offset, mode);
        if n <= 8 {
            // Eight slots give the same first eight as sixteen.
            let row8 = row.first_chunk::<8>().expect("16 slots");
            let got8 = probe_axis(row8, n, c0, axis, size, offset, mode);
            let first8 = got.map(|(t, f)| {
                (
                    t.map(|t| *t.first_chunk::<8>().expect("16")),
                    *f.first_chunk::<8>().expect("16"),
                )
            });
            let bits =
                |g: Option<([[u32; 8]; 2], [f32; 8])>| g.map(|(t, f)| (t, f.map(f32::to_bits)));
            assert_eq!(bits(got8), bits(first8), "case {i}");
        }
        let short_form = (mode == AddressMode::Repeat && size.is_power_of_two())
            || mode == AddressMode::ClampToEdge;
        let mut every_taken = true;
        let mut any_outside = false;
        for k in 0..n as usize {
            let c = offset_flat([c0, 0.0, 0.0], [axis, 0.0, 0.0], probe_offset(k as u32, n))[0];
            let [(x0, w0), (x1, w1)] = linear_axis(c * size as f32, size, offset, mode);
            let [(b0, _), (b1, _)] =
                linear_axis(c * size as f32, size, offset, AddressMode::ClampToBorder);
            // (`linear_axis`'s general path also reads two texels inside for a NaN or an
            // infinite coordinate — texels 0 and 1 — which the short path leaves to it.)
            let short = (c * size as f32 - 0.5).abs() < 8_388_608.0;
            let inside = b0.is_some() && b1.is_some();
            let probe_taken = short && (inside || short_form);
            any_outside |= !inside;
            every_taken &= probe_taken;
            if let (Some((texels, frac)), true) = (&got, probe_taken) {
                assert_eq!(
                    (x0, x1),
                    (Some(texels[0][k]), Some(texels[1][k])),
                    "case {i} probe {k} {mode:?}"
                );
                assert_eq!(
                    w0.to_bits(),
                    (1.0 - frac[k]).to_bits(),
                    "case {i} probe {k}"
                );
                assert_eq!(w1.to_bits(), frac[k].to_bits(), "case {i} probe {k}");
            }
        }
        let short_offset = offset.unsigned_abs() <= 1 << 24;
        assert_eq!(got.is_some(), every_taken && short_offset, "case {i}");
        if got.is_some() {
            taken += 1;
            wrapped += any_outside as u32;
        } else {
            refused += 1;
        }
    }
    assert!(
        taken > 20_000 && refused > 20_000 && wrapped > 5_000,
        "{taken} {refused} {wrapped}"
    );
}

/// A quad's lanes sampled together (one request: one source lookup, the lanes in turn
/// through one texel cache) give what each lane gives sampled alone: trilinear anisotropic
/// requests whose lanes take different levels and different layers of a 2D array.
#[test]
fn lanes_sampled_together_equal_lanes_alone() {
    let mut tex = Texture::new(
        TextureDesc::d2(64, 64, TextureFormat::Rgba8Unorm)
            .with_mips(7)
            .with_layers(3),
    )
    .unwrap();
    for level in 0..7 {
        let [w, h, _] = tex.desc().mip_size(level);
        for layer in 0..3 {
            for y in 0..h {
                for x in 0..w {
                    let b = [
                        (x * 7 + level * 40) as u8,
                        (y * 5 + layer * 80) as u8,
                        ((x ^ y) * 3) as u8,
                        255,
                    ];
                    tex.element_mut(level, layer, x, y)
                        .unwrap()
                        .copy_from_slice(&b);
                }
            }
        }
    }
    let view = TextureView::whole(&tex).unwrap();
    let sampler = Sampler::new(SamplerDesc {
        address_mode_u: AddressMode::Repeat,
        address_mode_v: AddressMode::Repeat,
        max_anisotropy: 8,
        ..SamplerDesc::trilinear()
    })
    .unwrap();
    let mut words = xorshift(0x3c6e_f372);
    let mut next = || (words() >> 8) as f32 / (1 << 24) as f32;
    let mut unit = TextureUnit::default();
    let mut mixed = 0;
    for i in 0..2_000 {
        let coords: [[f32; 3]; 4] = std::array::from_fn(|_| [next() * 2.0, next() * 2.0, 0.0]);
        let layers: [i32; 4] = std::array::from_fn(|l| (i + l as i32) % 3);
        let bias: [f32; 4] = std::array::from_fn(|_| next() * 6.0 - 2.0);
        let quad = Quad::new(coords).with_array_index(layers);
        let together = unit
            .sample_bias(&tex, &view, &sampler, &quad, bias)
            .unwrap();
        for l in 0..4 {
            let alone = unit
                .sample_bias(&tex, &view, &sampler, &quad.with_lanes(1 << l), bias)
                .unwrap();
            assert_eq!(
                together[l].map(f32::to_bits),
                alone[l].map(f32::to_bits),
                "case {i} lane {l}"
            );
        }
        mixed += (bias[0].floor() != bias[1].floor()) as u32;
    }
    assert!(mixed > 500, "{mixed}");
}

/// With finite texels that are not negative (an 8-bit unorm source's) the unmasked
/// weighted sum, which starts from its first term, is the masked one, bit for bit: weights
/// of zero among others, texels of +0, large and tiny, sums that overflow.
#[test]
fn unmasked_weighted_sum_equals_the_masked_one_on_finite_texels() {
    let mut next = xorshift(0x510e_527f);
    let texel_values = [0.0f32, 1.0, 0.5, 1e-30, 3e38, 0.2, 1.0 / 255.0];
    let weight_values = [0.0f32, 1.0, 0.25, 0.75, 1e-20, 0.5];
    for _ in 0..200_000 {
        let weights: [f32; 4] =
            std::array::from_fn(|_| weight_values[next() as usize % weight_values.len()]);
        let texels: [[u32; 4]; 4] = std::array::from_fn(|_| {
            std::array::from_fn(|_| {
                let r = next();
                if r.is_multiple_of(3) {
                    // Any finite value not negative: the exponent field below all ones,
                    // the sign clear.
                    r >> 2 & 0x3f7f_ffff | (r & 1) << 30
                } else {
                    texel_values[r as usize % texel_values.len()].to_bits()
                }
            })
        });
        let a = weighted_sum::<true>(weights, &texels).map(f32::to_bits);
        let b = weighted_sum::<false>(weights, &texels).map(f32::to_bits);
        assert_eq!(a, b, "{weights:?} {texels:?}");
    }
}

/// A linear mip filter's levels and weights: a trilinear sampler, and an anisotropic one
/// told to blend fully, blend by λ's whole fraction; an anisotropic sampler by default
/// reads one level while the fraction is outside its middle 0.3 and ramps across it, its
/// weights always summing to 1 and the coarser level's never falling as λ rises.
#[test]
fn anisotropic_samplers_narrow_the_mip_blend() {
    let tex =
        Texture::new(TextureDesc::d2(64, 64, TextureFormat::Rgba8Unorm).with_mips(7)).unwrap();
    let view = TextureView::whole(&tex).unwrap();
    let make = |aniso: u16, blend: crate::MipBlend| {
        Sampler::with_mip_blend(
            SamplerDesc {
                max_anisotropy: aniso,
                ..SamplerDesc::trilinear()
            },
            blend,
        )
        .unwrap()
    };
    let trilinear = make(1, crate::MipBlend::Narrow);
    let full = make(16, crate::MipBlend::Full);
    let narrow = make(16, crate::MipBlend::Narrow);
    assert_eq!(trilinear.mip_blend(), crate::MipBlend::Full);
    assert_eq!(
        Sampler::new(SamplerDesc {
            max_anisotropy: 2,
            ..SamplerDesc::trilinear()
        })
        .unwrap()
        .mip_blend(),
        crate::MipBlend::Narrow
    );
    let levels = |s: &Sampler, l: f32| lane_levels(&view, s, l);
    for l in [0.0f32, 0.1, 0.34, 0.5, 0.66, 2.25, 5.9, 6.0, 9.0] {
        let want = levels(&trilinear, l);
        assert_eq!(levels(&full, l), want, "λ {l}");
    }
    assert_eq!(levels(&trilinear, 2.25), [(2, 0.75), (3, 0.25)]);
    // Outside the band: one level, the second of weight 0 (not sampled).
    assert_eq!(levels(&narrow, 2.25), [(2, 1.0), (3, 0.0)]);
    assert_eq!(levels(&narrow, 2.35), [(2, 1.0), (3, 0.0)]);
    assert_eq!(levels(&narrow, 2.75), [(3, 1.0), (3, 0.0)]);
    assert_eq!(levels(&narrow, 2.5), [(2, 0.5), (3, 0.5)]);
    // The last level and beyond: that level alone.
    assert_eq!(levels(&narrow, 6.0), [(6, 1.0), (6, 0.0)]);
    assert_eq!(levels(&narrow, 8.0), [(6, 1.0), (6, 0.0)]);
    let mut last = 0.0f32;
    for i in 0..=1000 {
        let l = 1.0 + i as f32 / 1000.0 * 0.999;
        let [(a, wa), (b, wb)] = levels(&narrow, l);
        assert!((wa + wb - 1.0).abs() < 1e-6, "λ {l}: {wa} + {wb}");
        let coarser = if a == 2 {
            1.0
        } else if b == 2 {
            wb
        } else {
            0.0
        };
        assert!(coarser >= last, "λ {l}: {coarser} after {last}");
        assert!(a == 1 || (a == 2 && wa == 1.0), "λ {l}: level {a}");
        last = coarser;
    }
    assert_eq!(last, 1.0);
}

/// The four-lane LOD set-up of flat positions with implicit LOD (and bias) gives each lane
/// the lane-by-lane set-up's LOD, probe count and axis, bit for bit: 1D, 2D and 3D views,
/// anisotropy off and on, gradients of every size including none, infinite and NaN.
#[test]
fn four_lane_lods_equal_the_lane_path() {
    let mut words = xorshift(0x1f83_d9ab);
    let mut next = || (words() >> 8) as f32 / (1 << 24) as f32;
    let descs = [
        TextureDesc {
            dimension: crate::TextureDimension::D1,
            size: [256, 1, 1],
            ..TextureDesc::d2(256, 1, TextureFormat::Rgba8Unorm)
        },
        TextureDesc::d2(512, 128, TextureFormat::Rgba8Unorm).with_mips(4),
        TextureDesc {
            dimension: crate::TextureDimension::D3,
            ..TextureDesc::d2(32, 64, TextureFormat::Rgba8Unorm).with_layers(16)
        },
    ];
    let mut compared = 0;
    for desc in descs {
        let tex = Texture::new(desc).unwrap();
        let view = TextureView::whole(&tex).unwrap();
        for aniso in [1u16, 4, 16] {
            let sampler = Sampler::new(SamplerDesc {
                max_anisotropy: aniso,
                lod_min_clamp: 0.25,
                lod_max_clamp: 9.0,
                ..SamplerDesc::trilinear()
            })
            .unwrap();
            for i in 0..3_000 {
                let spread = [0.0, 1e-4, 0.01, 0.3, 40.0][i % 5];
                let base = [next(), next(), next()];
                let mut coords: [[f32; 3]; 4] = std::array::from_fn(|_| {
                    base.map(|b| b + (next() - 0.5) * spread * if i % 7 == 0 { 0.0 } else { 1.0 })
                });
                if i % 97 == 0 {
                    coords[1][0] = f32::INFINITY;
                }
                if i % 89 == 0 {
                    coords[2][1] = f32::NAN;
                }
                let bias: [f32; 4] = std::array::from_fn(|_| next() * 4.0 - 2.0);
                let lanes = [0xf, 0x5, 0x8][i % 3];
                for lod in [Lod::Implicit, Lod::Bias(bias)] {
                    let quad = Quad::new(coords).with_lanes(lanes);
                    let pos = coords.map(Pos::Flat);
                    let want = TextureUnit::lane_lods(&view, &sampler, &quad, lod, &pos);
                    let size0 = view.level_size(0);
                    let b = match lod {
                        Lod::Bias(b) => b,
                        _ => [0.0; 4],
                    };
                    let dims = view_dims(&view);
                    let got = flat_implicit_lods(coords, lanes, size0, dims, &sampler, b);
                    for l in (0..4).filter(|l| lanes >> l & 1 != 0) {
                        let key =
                            |d: &LaneLod| (d.lambda.to_bits(), d.probes, d.axis.map(f32::to_bits));
                        assert_eq!(
                            key(&got[l]),
                            key(&want[l]),
                            "{desc:?} aniso {aniso} case {i} lane {l}"
                        );
                        compared += 1;
                    }
                }
            }
        }
    }
    assert!(compared > 100_000);
}

/// The quad path gives what the per-lane path gives, bit for bit (a NaN for a NaN), with the
/// same requests and texel reads and, its taps' lines coalesced, fewer L1 accesses; and
/// refuses (fetching nothing) exactly the quads it cannot take: unorm8 and
/// float textures (infinite and NaN texels among the float ones), 2D arrays, odd and
/// power-of-two sizes, every address mode, nearest and linear mips, anisotropy 1 to 16,
/// lanes masked, LOD biases and explicit LODs (spread quads that overflow the grid), texel
/// offsets, coordinates near and far from the level, at texel centres (taps of weight zero)
/// and non-finite ones; with and without the AVX2 versions (with them, a quad of at most
/// two probes a level takes a pass of its own).
#[test]
fn quad_path_equals_the_lane_path() {
    let mut next = xorshift(0x9b05_688c);
    let unit_f = |v: u32| (v >> 8) as f32 / (1 << 24) as f32;
    let modes = [
        AddressMode::Repeat,
        AddressMode::MirrorRepeat,
        AddressMode::ClampToEdge,
        AddressMode::ClampToBorder,
    ];
    let (mut taken, mut refused) = (0u32, 0u32);
    for (t, (format, size)) in [
        (TextureFormat::Rgba8Unorm, [128, 128]),
        (TextureFormat::Rgba8UnormSrgb, [48, 20]),
        (TextureFormat::Rgba32Float, [16, 32]),
    ]
    .into_iter()
    .enumerate()
    {
        let mut tex = Texture::new(
            TextureDesc::d2(size[0], size[1], format)
                .with_mips(5)
                .with_layers(2),
        )
        .unwrap();
        fill_random(&mut tex, &mut next, |r| {
            let v = match r % 50 {
                0 => f32::INFINITY,
                1 => f32::NAN,
                2 => -f32::INFINITY,
                _ => unit_f(r) * 4.0 - 1.0,
            };
            [v, unit_f(r.rotate_left(7)), -0.0, 1.0]
        });
        let view = TextureView::whole(&tex).unwrap();
        let src = Source {
            texture: &tex,
            format: view.format,
            aspect: view.aspect,
        };
        // The default L1, and small ones of one and two ways (where a footprint's later
        // line can evict its earlier one), a third of the cases each.
        let configs = [
            CacheConfig::default(),
            CacheConfig {
                l1_lines: 2,
                l1_ways: 1,
                ..CacheConfig::default()
            },
            CacheConfig {
                l1_lines: 8,
                l1_ways: 2,
                ..CacheConfig::default()
            },
        ];
        let mut units = configs.map(|c| (TextureUnit::new(c), TextureUnit::new(c)));
        for i in 0..6_000 {
            let (quad_unit, lane_unit) = &mut units[i % 3];
            let r = next();
            let sampler = Sampler::new(SamplerDesc {
                address_mode_u: modes[(r & 3) as usize],
                address_mode_v: modes[(r >> 2 & 3) as usize],
                // (Anisotropy needs linear mips: nearest ones only with anisotropy 1.)
                mipmap_filter: [FilterMode::Linear, FilterMode::Nearest][(r >> 4 & 1) as usize],
                max_anisotropy: if r >> 4 & 1 == 1 {
                    1
                } else {
                    [1, 2, 4, 8, 16][(r >> 5) as usize % 5]
                },
                ..SamplerDesc::trilinear()
            })
            .unwrap();
            let spread = [0.0, 1e-3, 0.02, 0.2, 3.0][(r >> 8) as usize % 5];
            let base = match i % 6 {
                0 => [unit_f(next()) * 4.0 - 2.0, unit_f(next()) * 4.0 - 2.0],
                1 => [1e7 + unit_f(next()), unit_f(next())],
                2 if r.is_multiple_of(5) => [f32::NAN, unit_f(next())],
                // A texel's centre on the base level: taps of weight zero (which must not
                // turn an infinite texel into a NaN).
                3 => [
                    ((next() % size[0]) as f32 + 0.5) / size[0] as f32,
                    ((next() % size[1]) as f32 + 0.5) / size[1] as f32,
                ],
                _ => [unit_f(next()), unit_f(next())],
            };
            let (dx, dy) = (
                [unit_f(next()) - 0.5, unit_f(next()) - 0.5],
                [unit_f(next()) - 0.5, (unit_f(next()) - 0.5) * 0.1],
            );
            let coords: [[f32; 3]; 4] = std::array::from_fn(|l| {
                let (x, y) = ((l & 1) as f32, (l >> 1) as f32);
                [
                    base[0] + (dx[0] * x + dy[0] * y) * spread,
                    base[1] + (dx[1] * x + dy[1] * y) * spread,
                    0.0,
                ]
            });
            let offset = match (r >> 11) % 8 {
                0 => [1 << 24, -3, 0],
                1 => [(1 << 24) + 1, 0, 0],
                v => [v as i32 - 4, (r >> 14) as i32 % 5 - 2, 0],
            };
            let lanes = 1 + (r >> 17) as u8 % 15;
            let bias: [f32; 4] = std::array::from_fn(|_| unit_f(next()) * 6.0 - 2.0);
            let quad = Quad::new(coords)
                .with_offset(offset)
                .with_lanes(lanes)
                // (Lanes on different layers in some quads: those take the per-lane path.)
                .with_array_index(std::array::from_fn(|l| {
                    (i + if r >> 21 & 3 == 0 { l } else { 0 }) as i32 % 3
                }));
            // (An explicit LOD the lanes share keeps a spread quad on a fine level: its
            // footprints span more lines than the quad path's grid holds, and it fetches
            // them slot by slot.)
            let lod = match (r >> 20 & 1, i % 4) {
                (0, 3) => Lod::Level([0.0; 4]),
                (0, _) => Lod::Implicit,
                _ => Lod::Bias(bias),
            };
            let (pos, lods) = quad_unit.setup(&view, &sampler, &quad, lod);
            let finite = format != TextureFormat::Rgba32Float;
            let before = quad_unit.stats();
            let source = Cell::new(None);
            let at = QuadAt {
                src: &src,
                source: &source,
                pos: Some(&pos),
                lods: &lods,
            };
            // (Every fourth case without the AVX2 versions: a quad of at most two probes a
            // level then takes the general passes, not its own.)
            crate::cpu::set_wide_allowed(i % 4 != 1);
            let got = if finite {
                sample_quad::<true>(quad_unit, &view, &sampler, &quad, &at)
            } else {
                sample_quad::<false>(quad_unit, &view, &sampler, &quad, &at)
            };
            crate::cpu::set_wide_allowed(true);
            let lanes_of = |unit: &mut TextureUnit| {
                // (Each unit its own source index; every other case without the
                // positions, which the lane path then makes itself.)
                let source = Cell::new(None);
                let at = QuadAt {
                    source: &source,
                    pos: if i % 2 == 0 { at.pos } else { None },
                    ..at
                };
                if finite {
                    sample_lanes::<true>(unit, &view, &sampler, &quad, &at, None)
                } else {
                    sample_lanes::<false>(unit, &view, &sampler, &quad, &at, None)
                }
            };
            let want = lanes_of(lane_unit);
            match got {
                Some(got) => {
                    taken += 1;
                    // (Any NaN for a NaN: which NaN a sum of two NaNs gives depends on the
                    // order the compiler puts the operands in.)
                    let bits = |v: [[f32; 4]; 4]| {
                        v.map(|l| l.map(|c| if c.is_nan() { u32::MAX } else { c.to_bits() }))
                    };
                    assert_eq!(bits(got), bits(want), "texture {t} case {i}");
                }
                None => {
                    refused += 1;
                    // Nothing was fetched before refusing; the per-lane path then.
                    assert_eq!(quad_unit.stats(), before, "texture {t} case {i}");
                    lanes_of(quad_unit);
                }
            }
            let (q, l) = (quad_unit.stats(), lane_unit.stats());
            assert_eq!(
                (q.requests, q.texel_reads),
                (l.requests, l.texel_reads),
                "texture {t} case {i}"
            );
            assert_eq!(
                q.l1_hits + q.l1_misses,
                q.l1_accesses,
                "texture {t} case {i}"
            );
        }
        // The default L1 (the units of every third case) holds a grid's lines, so each
        // of them is one access where the per-lane path makes one per footprint.
        let (q, l) = (units[0].0.stats(), units[0].1.stats());
        assert!(q.l1_accesses < l.l1_accesses, "{q:?} {l:?}");
    }
    assert!(taken > 5_000 && refused > 1_000, "{taken} {refused}");
}

/// A run of quads with implicit LOD takes the quad path's run of its own
/// ([`quad::sample_implicit_run`]); a run with a bias of zero takes the general path quad by
/// quad, whose LODs are the same. Both give the same bits and leave the same statistics:
/// 8-bit and float textures (NaN texels among the float ones), 2D and 2D-array views
/// (lanes on different layers in some quads), lane masks (none too), anisotropy, texel
/// offsets, and footprints the quad path refuses (coordinates past 2²³, NaN, offsets past
/// 2²⁴, probes past the table).
#[test]
fn an_implicit_run_equals_the_general_path() {
    let mut next = xorshift(0x3c6e_f372);
    let unit_f = |v: u32| (v >> 8) as f32 / (1 << 24) as f32;
    let (mut implicit_total, mut refused) = (0usize, 0usize);
    for format in [TextureFormat::Rgba8UnormSrgb, TextureFormat::Rgba32Float] {
        let mut tex =
            Texture::new(TextureDesc::d2(64, 32, format).with_mips(6).with_layers(3)).unwrap();
        fill_random(&mut tex, &mut next, |r| {
            let v = if r.is_multiple_of(40) {
                f32::NAN
            } else {
                unit_f(r)
            };
            [v, 0.5, unit_f(r.rotate_left(9)), 1.0]
        });
        for array in [false, true] {
            let mut view = TextureView::whole(&tex).unwrap();
            if !array {
                view.dimension = TextureViewDimension::D2;
                view.base_array_layer = 1;
                view.array_layer_count = 1;
            }
            for aniso in [1, 4, 16] {
                let sampler = Sampler::new(SamplerDesc {
                    address_mode_u: AddressMode::Repeat,
                    address_mode_v: AddressMode::MirrorRepeat,
                    max_anisotropy: aniso,
                    ..SamplerDesc::trilinear()
                })
                .unwrap();
                let quads: Vec<Quad> = (0..64)
                    .map(|i| {
                        let r = next();
                        let spread = [0.0, 1e-3, 0.03, 0.3, 4.0][r as usize % 5];
                        let base = match i % 9 {
                            0 => [1e7, unit_f(next())],
                            1 => [f32::NAN, 0.5],
                            _ => [unit_f(next()) * 3.0 - 1.0, unit_f(next()) * 3.0 - 1.0],
                        };
                        let (dx, dy) = (
                            [unit_f(next()) - 0.5, unit_f(next()) - 0.5],
                            [(unit_f(next()) - 0.5) * 0.2, unit_f(next()) - 0.5],
                        );
                        let c: [[f32; 2]; 4] = std::array::from_fn(|l| {
                            let (x, y) = ((l & 1) as f32, (l >> 1) as f32);
                            [
                                base[0] + (dx[0] * x + dy[0] * y) * spread,
                                base[1] + (dx[1] * x + dy[1] * y) * spread,
                            ]
                        });
                        let offset = if i % 13 == 0 {
                            [(1 << 24) + 1, 0, 0]
                        } else {
                            [(r >> 4) as i32 % 5 - 2, (r >> 8) as i32 % 3 - 1, 0]
                        };
                        Quad::uv(c)
                            .with_offset(offset)
                            .with_lanes((r >> 12) as u8 % 16)
                            .with_array_index(std::array::from_fn(|l| {
                                if r >> 16 & 3 == 0 { l as i32 } else { 1 }
                            }))
                    })
                    .collect();
                let sample = |lod: Lod| {
                    let mut unit = TextureUnit::default();
                    let mut out = vec![[[0.0f32; 4]; 4]; quads.len()];
                    let run = QuadRun {
                        quads: &quads,
                        lods: &[lod],
                        depth_refs: None,
                    };
                    unit.sample_run(&tex, &view, &sampler, &run, &mut out)
                        .unwrap();
                    (out, unit.stats())
                };
                let (got, got_stats) = sample(Lod::Implicit);
                let (want, want_stats) = sample(Lod::Bias([0.0; 4]));
                let bits = |v: &[[[f32; 4]; 4]]| -> Vec<[[u32; 4]; 4]> {
                    v.iter()
                        .map(|q| {
                            q.map(|l| l.map(|c| if c.is_nan() { u32::MAX } else { c.to_bits() }))
                        })
                        .collect()
                };
                let case = format!("{format:?}, array {array}, anisotropy {aniso}");
                assert_eq!(bits(&got), bits(&want), "{case}");
                assert_eq!(got_stats, want_stats, "{case}");
                implicit_total += quads.len();
                refused += quads
                    .iter()
                    .filter(|q| q.coords[0][0].is_nan() || q.offset[0] > 1 << 24)
                    .count();
            }
        }
    }
    assert!(
        implicit_total == 768 && refused > 100,
        "{implicit_total} {refused}"
    );
}

/// Fills every texel of every level and layer of `tex` from `next`: an `Rgba32Float`
/// texel with `float` of a word, any other (four-byte) texel with the word's bytes.
fn fill_random(tex: &mut Texture, next: &mut impl FnMut() -> u32, float: impl Fn(u32) -> [f32; 4]) {
    let desc = *tex.desc();
    for level in 0..desc.mip_level_count {
        let [w, h, _] = desc.mip_size(level);
        for layer in 0..desc.array_layers() {
            for y in 0..h {
                for x in 0..w {
                    let r = next();
                    let e = tex.element_mut(level, layer, x, y).unwrap();
                    if desc.format == TextureFormat::Rgba32Float {
                        for (c, v) in float(r).iter().enumerate() {
                            e[4 * c..4 * c + 4].copy_from_slice(&v.to_le_bytes());
                        }
                    } else {
                        e.copy_from_slice(&r.to_le_bytes());
                    }
                }
            }
        }
    }
}

/// A sampler filtering bilinearly on one level (no mips), clamping to the edge.
fn bilinear() -> Sampler {
    Sampler::new(SamplerDesc {
        mag_filter: FilterMode::Linear,
        min_filter: FilterMode::Linear,
        ..SamplerDesc::default()
    })
    .unwrap()
}

/// The quad path accesses each L1 line its quad's taps touch once: a screen-aligned
/// bilinear quad (one texel per pixel) whose sixteen taps lie in one 4×4 line is one
/// access, one straddling a line edge across is two, one straddling a corner four — where
/// the per-lane path accesses each footprint's lines, footprint by footprint.
#[test]
fn the_quad_path_accesses_each_line_once() {
    let tex = Texture::new(TextureDesc::d2(64, 64, TextureFormat::Rgba8Unorm)).unwrap();
    let view = TextureView::whole(&tex).unwrap();
    let sampler = bilinear();
    let d = 1.0 / 64.0;
    // Pixel (x, y) samples texel coordinate (x + ½, y + ½) − ½: taps x…x + 1, y…y + 1.
    for (x, y, lines, lane_path) in [(0, 0, 1, 4), (2, 0, 2, 6), (2, 2, 4, 9)] {
        let quad = Quad::screen(x, y, d, d);
        let mut unit = TextureUnit::new(CacheConfig::default());
        unit.sample(&tex, &view, &sampler, &quad).unwrap();
        let st = unit.stats();
        assert_eq!(
            (st.requests, st.l1_accesses),
            (4, lines),
            "quad at ({x}, {y})"
        );
        // The same lanes one at a time.
        let mut unit = TextureUnit::new(CacheConfig::default());
        for lane in 0..4 {
            unit.sample(&tex, &view, &sampler, &quad.with_lanes(1 << lane))
                .unwrap();
        }
        assert_eq!(unit.stats().l1_accesses, lane_path, "lanes at ({x}, {y})");
    }
}

/// A quad whose footprints span more lines than the quad path's grid holds is fetched slot
/// by slot, as the lanes are: lanes 0 and 2 sampling one line and lanes 1 and 3 another
/// take two accesses when the lines are near (one grid), and four — A, B, A, B — when they
/// are 200 texels apart on both axes; the results equal the lanes' either way.
#[test]
fn a_quad_past_the_grid_is_fetched_slot_by_slot() {
    let mut tex = Texture::new(TextureDesc::d2(256, 256, TextureFormat::Rgba8Unorm)).unwrap();
    for y in 0..256 {
        for x in 0..256 {
            let v = (x * 7 + y * 13) as u8;
            tex.element_mut(0, 0, x, y)
                .unwrap()
                .copy_from_slice(&[v, v ^ 0x5a, x as u8, y as u8]);
        }
    }
    let view = TextureView::whole(&tex).unwrap();
    let sampler = bilinear();
    // Texel coordinate (x + ½, y + ½) − ½ = (x, y): taps x…x + 1, y…y + 1.
    let at = |x: f32, y: f32| [(x + 0.5) / 256.0, (y + 0.5) / 256.0, 0.0];
    for (far, accesses) in [(false, 2), (true, 4)] {
        let b = if far { at(201.0, 201.0) } else { at(9.0, 1.0) };
        let quad = Quad::new([at(1.0, 1.0), b, at(1.0, 1.0), b]);
        let mut unit = TextureUnit::new(CacheConfig::default());
        let got = unit
            .sample_level(&tex, &view, &sampler, &quad, [0.0; 4])
            .unwrap();
        assert_eq!(unit.stats().l1_accesses, accesses, "far: {far}");
        let mut lanes = TextureUnit::new(CacheConfig::default());
        for lane in 0..4 {
            let want = lanes
                .sample_level(&tex, &view, &sampler, &quad.with_lanes(1 << lane), [0.0; 4])
                .unwrap();
            assert_eq!(got[lane], want[lane], "far: {far}, lane {lane}");
        }
    }
}

/// A run of quads ([`TextureUnit::sample_run`]) gives each quad what sampling it alone
/// gives, and leaves the same cache statistics: quads of all lane masks, with one LOD
/// choice for the run and with one per quad; lengths that do not match are an error that
/// writes nothing.
#[test]
fn a_run_of_quads_equals_its_quads_one_by_one() {
    let mut tex =
        Texture::new(TextureDesc::d2(32, 32, TextureFormat::Rgba8Unorm).with_mips(6)).unwrap();
    let mut next = xorshift(0x6a09_e667);
    for level in 0..6 {
        let [w, h, _] = tex.desc().mip_size(level);
        for y in 0..h {
            for x in 0..w {
                let v = next().to_le_bytes();
                tex.element_mut(level, 0, x, y).unwrap().copy_from_slice(&v);
            }
        }
    }
    let view = TextureView::whole(&tex).unwrap();
    let sampler = Sampler::new(SamplerDesc {
        max_anisotropy: 4,
        ..SamplerDesc::trilinear()
    })
    .unwrap();
    let unit_f = |v: u32| (v >> 8) as f32 / (1 << 24) as f32;
    let (mut runs, mut singles) = (TextureUnit::default(), TextureUnit::default());
    for round in 0..200 {
        let count = 1 + round % 16;
        let quads: Vec<Quad> = (0..count)
            .map(|_| {
                let (u, v, du, dv) = (
                    unit_f(next()),
                    unit_f(next()),
                    unit_f(next()) * 0.2,
                    unit_f(next()) * 0.05,
                );
                Quad::uv([[u, v], [u + du, v], [u, v + dv], [u + du, v + dv]])
                    .with_lanes(1 + (next() % 15) as u8)
            })
            .collect();
        let lods: Vec<Lod> = if round % 2 == 0 {
            vec![Lod::Implicit]
        } else {
            (0..count)
                .map(|_| Lod::Bias(std::array::from_fn(|_| unit_f(next()) * 4.0 - 2.0)))
                .collect()
        };
        let mut got = vec![[[0.0f32; 4]; 4]; count];
        let run = QuadRun {
            quads: &quads,
            lods: &lods,
            depth_refs: None,
        };
        runs.sample_run(&tex, &view, &sampler, &run, &mut got)
            .unwrap();
        for (i, q) in quads.iter().enumerate() {
            let lod = if lods.len() == 1 { lods[0] } else { lods[i] };
            let want = singles
                .sample_with(&tex, &view, &sampler, q, lod, None)
                .unwrap();
            assert_eq!(got[i], want, "round {round} quad {i}");
        }
        assert_eq!(runs.stats(), singles.stats(), "round {round}");
    }
    let quads = [Quad::uv([[0.5; 2]; 4]); 3];
    let mut out = [[[7.0f32; 4]; 4]; 3];
    let run = |lods| QuadRun {
        quads: &quads,
        lods,
        depth_refs: None,
    };
    let two = run(&[Lod::Implicit; 2]);
    assert!(
        runs.sample_run(&tex, &view, &sampler, &two, &mut out)
            .is_err()
    );
    let one = run(&[Lod::Implicit]);
    assert!(
        runs.sample_run(&tex, &view, &sampler, &one, &mut out[..2])
            .is_err()
    );
    assert_eq!(out, [[[7.0f32; 4]; 4]; 3]);
}

/// The anisotropic footprint's LOD is Vulkan's log2(ρmax / η), η = min(ρmax / ρmin,
/// maxAnisotropy) unrounded, with N = ⌈η⌉ probes: not log2(ρmax / N), which the spec
/// allows but which reads up to a level finer. A ratio between two integers, one past the
/// sampler's clamp, a zero minor axis (η = the clamp), no anisotropy (η = 1) and a point.
#[test]
fn anisotropic_lod_uses_the_ratio_itself() {
    let sampler = |max_anisotropy| {
        Sampler::new(SamplerDesc {
            max_anisotropy,
            ..SamplerDesc::trilinear()
        })
        .unwrap()
    };
    let size = [256, 256, 1];
    // Gradients in texels of the 256² base level: ρx along x, ρy along y.
    let grads = |rx: f32, ry: f32| ([rx / 256.0, 0.0, 0.0], [0.0, ry / 256.0, 0.0]);
    for (rx, ry, aniso, eta) in [
        (10.0f32, 4.0f32, 16u16, 2.5f32),
        (4.0, 10.0, 16, 2.5),
        (64.0, 2.0, 16, 16.0),
        (8.0, 0.0, 4, 4.0),
        (8.0, 2.0, 1, 1.0),
    ] {
        let (gx, gy) = grads(rx, ry);
        let (lambda, probes, axis) = footprint_lod(gx, gy, size, &sampler(aniso));
        let rmax = rx.max(ry);
        assert_eq!(lambda, (rmax / eta).log2(), "ρ = ({rx}, {ry}), {aniso}×");
        assert_eq!(probes, eta.ceil() as u32, "ρ = ({rx}, {ry}), {aniso}×");
        assert_eq!(axis, if rx >= ry { gx } else { gy });
    }
    // No footprint at all: one probe, λ = −∞ (magnified).
    let (lambda, probes, _) = footprint_lod([0.0; 3], [0.0; 3], size, &sampler(16));
    assert_eq!((lambda, probes), (f32::NEG_INFINITY, 1));
}

/// The unit's own log2 is within an ulp of the logarithm computed in double precision and
/// rounded once, and equal to it for nearly every input; exact at powers of two (subnormal
/// ones too); −∞ at ±0, ∞ at ∞, NaN below 0 and at NaN.
#[test]
fn log2_is_the_rounded_logarithm() {
    use lod::log2;
    for e in -149..128 {
        let x = if e < -126 {
            f32::from_bits(1 << (e + 149))
        } else {
            f32::from_bits(((e + 127) as u32) << 23)
        };
        assert_eq!(log2(x), e as f32, "2^{e}");
    }
    assert_eq!(log2(0.0), f32::NEG_INFINITY);
    assert_eq!(log2(-0.0), f32::NEG_INFINITY);
    assert_eq!(log2(f32::INFINITY), f32::INFINITY);
    for x in [-1.0, -f32::MIN_POSITIVE, f32::NEG_INFINITY, f32::NAN] {
        assert!(log2(x).is_nan(), "{x}");
    }
    let mut next = xorshift(0x2545_f491);
    let (mut exact, mut total) = (0, 0);
    for i in 0..400_000u32 {
        // Every exponent, the subnormals among them, and values near 1 (where the logarithm
        // is small and its relative precision matters most).
        let bits = match i % 3 {
            0 => next() & 0x7fff_ffff,
            1 => 0x3f80_0000 ^ (next() & 0x0003_ffff) | (next() & 1) << 25,
            _ => next() & 0x007f_ffff,
        };
        let x = f32::from_bits(bits);
        if !x.is_finite() {
            continue;
        }
        let want = (x as f64).log2() as f32;
        let got = log2(x);
        let ulps = (got.to_bits() as i64 - want.to_bits() as i64).abs();
        // (Both sides of zero: the bits' distance is not the ulps' there; neither is
        // near zero but at 1, which is exact.)
        assert!(
            ulps <= 1 || got == want,
            "log2({x:e}) = {got:e}, want {want:e}"
        );
        exact += (got == want) as u32;
        total += 1;
    }
    assert!(
        exact as f64 >= total as f64 * 0.9999,
        "{exact} of {total} exact"
    );
}

/// The eight-lane log2 gives the one-lane version's bits, special values included.
#[cfg(target_arch = "x86_64")]
#[test]
fn eight_lane_log2_equals_the_lane_one() {
    use std::arch::x86_64::*;
    if !std::arch::is_x86_feature_detected!("avx2") {
        return;
    }
    let mut next = xorshift(0x68e3_1da4);
    let specials = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -1.0,
        1.0,
        1e-45,
    ];
    for i in 0..50_000 {
        let x: [f32; 8] = std::array::from_fn(|k| {
            if i % 7 == 0 {
                specials[(k + i) % 8]
            } else {
                f32::from_bits(next())
            }
        });
        let mut got = [0.0f32; 8];
        // SAFETY: the CPU has AVX2 (checked above); eight floats each way.
        unsafe { _mm256_storeu_ps(got.as_mut_ptr(), lod::log2_x8(_mm256_loadu_ps(x.as_ptr()))) };
        for k in 0..8 {
            let want = lod::log2(x[k]);
            assert!(
                got[k].to_bits() == want.to_bits() || (got[k].is_nan() && want.is_nan()),
                "log2({:e}): {:e} against {:e}",
                x[k],
                got[k],
                want
            );
        }
    }
}

/// A run's implicit LODs found eight quads at a time equal those found quad by quad:
/// gradients of every size, zero, infinite and NaN, anisotropy 1 to 16, LOD clamps.
#[cfg(target_arch = "x86_64")]
#[test]
fn implicit_lods_eight_at_a_time_equal_one_at_a_time() {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return;
    }
    let mut next = xorshift(0x1b87_3593);
    let unit_f = |v: u32| (v >> 8) as f32 / (1 << 24) as f32;
    for i in 0..3_000 {
        let r = next();
        let sampler = Sampler::new(SamplerDesc {
            max_anisotropy: [1, 2, 4, 16][(r & 3) as usize],
            lod_min_clamp: [0.0, 0.5, 2.0][(r >> 2) as usize % 3],
            lod_max_clamp: [32.0, 3.25, 2.0][(r >> 4) as usize % 3],
            ..SamplerDesc::trilinear()
        })
        .unwrap();
        let size0 = [[256, 256, 1], [48, 20, 1], [1, 4096, 1]][(r >> 6) as usize % 3];
        let mut quads = Vec::new();
        for _ in 0..16 {
            let scale = [0.0, 1e-6, 1e-3, 0.05, 1.0, 1e30][next() as usize % 6];
            let base = [unit_f(next()), unit_f(next())];
            let mut coords = [[0.0f32; 3]; 4];
            for c in &mut coords {
                for (a, v) in c.iter_mut().take(2).enumerate() {
                    *v = match next() % 40 {
                        0 => f32::NAN,
                        1 => f32::INFINITY,
                        2 => -f32::INFINITY,
                        _ => base[a] + (unit_f(next()) - 0.5) * scale,
                    };
                }
            }
            quads.push(Quad::new(coords));
        }
        // (The eight-quad version called directly, not through `wide()`: other tests turn
        // the wide versions off and on while this one runs.)
        let mut got = [LaneLod::UNSAMPLED; 16];
        for (q, out) in quads.chunks(8).zip(got.chunks_mut(8)) {
            // SAFETY: the CPU has AVX2 (checked above); eight quads and eight LODs.
            unsafe { lod::implicit_lods_x8(q, size0, &sampler, out) };
        }
        let want: Vec<LaneLod> = quads
            .iter()
            .map(|q| lod::implicit_lod(q, size0, &sampler))
            .collect();
        let key = |d: &LaneLod| (d.lambda.to_bits(), d.probes, d.axis.map(f32::to_bits));
        for k in 0..16 {
            assert_eq!(key(&got[k]), key(&want[k]), "case {i} quad {k}");
        }
    }
}
