//! The texture unit on small textures with exact expected results: every address mode and
//! border colour, nearest / bilinear / trilinear weights, LOD from quad gradients with bias
//! and clamps, explicit level and gradients, offsets, sRGB filtered in linear space, arrays,
//! 3D and 1D, depth compare (PCF), gather, load with robust bounds, queries, and the errors
//! for invalid requests.

mod common;
use common::*;

use rastra_texture::{
    AddressMode as A, BorderColor, CompareFunction as C, FilterMode, Quad, SamplerDesc, Texture,
    TextureDesc, TextureDimension, TextureFormat as F, TextureUnit, TextureViewDesc,
    TextureViewDimension as V,
};

/// Lane 0 of a `sample_level` at one coordinate.
fn at_level(
    u: &mut TextureUnit,
    t: &Texture,
    s: &SamplerDesc,
    c: [f32; 3],
    level: f32,
) -> [f32; 4] {
    let v = view(t);
    u.sample_level(t, &v, &sampler(*s), &point(c), [level; 4])
        .unwrap()[0]
}

fn row4() -> Texture {
    r32(4, 1, |x, _| 10.0 * (x + 1) as f32)
}

#[test]
fn address_modes_nearest() {
    let t = row4();
    let mut u = unit();
    let us = [-0.125, 0.1, 0.9, 1.125, 1.375, -1.125, 2.1];
    let cases: [(A, [f32; 7]); 4] = [
        (A::Repeat, [40.0, 10.0, 40.0, 10.0, 20.0, 40.0, 10.0]),
        (A::MirrorRepeat, [10.0, 10.0, 40.0, 40.0, 30.0, 40.0, 10.0]),
        (A::ClampToEdge, [10.0, 10.0, 40.0, 40.0, 40.0, 10.0, 40.0]),
        (A::ClampToBorder, [-1.0, 10.0, 40.0, -1.0, -1.0, -1.0, -1.0]),
    ];
    for (mode, expect) in cases {
        for border in [
            BorderColor::TransparentBlack,
            BorderColor::OpaqueBlack,
            BorderColor::OpaqueWhite,
        ] {
            let s = SamplerDesc {
                address_mode_u: mode,
                border_color: border,
                ..SamplerDesc::default()
            };
            for (&x, &e) in us.iter().zip(&expect) {
                let got = at_level(&mut u, &t, &s, [x, 0.5, 0.0], 0.0);
                let want = if e < 0.0 {
                    border.rgba()
                } else {
                    [e, 0.0, 0.0, 1.0]
                };
                assert_eq!(got, want, "{mode:?} {border:?} u={x}");
            }
        }
    }
}

#[test]
fn address_modes_linear() {
    let t = row4();
    let mut u = unit();
    // u = 0: u' = −0.5, taps −1 and 0 with weight ½ each.
    for (mode, want) in [
        (A::Repeat, 25.0),
        (A::MirrorRepeat, 10.0),
        (A::ClampToEdge, 10.0),
        (A::ClampToBorder, 5.0),
    ] {
        let s = SamplerDesc {
            mag_filter: FilterMode::Linear,
            min_filter: FilterMode::Linear,
            ..SamplerDesc::default().with_address(mode)
        };
        let got = at_level(&mut u, &t, &s, [0.0, 0.5, 0.0], 0.0);
        assert_eq!(got[0], want, "{mode:?}");
        if mode == A::ClampToBorder {
            assert_eq!(got[3], 0.5); // half the border's transparent alpha
        }
    }
}

#[test]
fn bilinear_weights_are_exact() {
    let t = r32(2, 2, |x, y| (x + 2 * y) as f32);
    let mut u = unit();
    let s = SamplerDesc {
        mag_filter: FilterMode::Linear,
        min_filter: FilterMode::Linear,
        ..SamplerDesc::default()
    };
    assert_eq!(at_level(&mut u, &t, &s, [0.375, 0.5, 0.0], 0.0)[0], 1.25);
    assert_eq!(at_level(&mut u, &t, &s, [0.5, 0.5, 0.0], 0.0)[0], 1.5);
    for (x, y) in [(0.3f32, 0.7f32), (0.61, 0.27), (0.26, 0.74)] {
        let a = (x * 2.0 - 0.5).fract();
        let b = (y * 2.0 - 0.5).fract();
        let want = (1.0 - b) * (a * 1.0) + b * (2.0 * (1.0 - a) + 3.0 * a);
        let got = at_level(&mut u, &t, &s, [x, y, 0.0], 0.0)[0];
        assert!((got - want).abs() < 1e-6, "({x}, {y}): {got} vs {want}");
    }
}

/// 16×16 with five levels holding the constants 1, 3, 5, 7, 9.
fn levels_tex() -> Texture {
    let mut t = Texture::new(TextureDesc::d2(16, 16, F::R32Float).with_mips(5)).unwrap();
    for l in 0..5 {
        fill_r32(&mut t, l, 0, |_, _| (2 * l + 1) as f32);
    }
    t
}

#[test]
fn trilinear_and_mip_selection() {
    let t = levels_tex();
    let v = view(&t);
    let mut u = unit();
    let tri = SamplerDesc::trilinear();
    let lvl =
        |u: &mut TextureUnit, s: &SamplerDesc, l: f32| at_level(u, &t, s, [0.3, 0.6, 0.0], l)[0];
    assert_eq!(lvl(&mut u, &tri, 0.25), 1.5);
    assert_eq!(lvl(&mut u, &tri, 2.5), 6.0);
    assert_eq!(lvl(&mut u, &tri, 10.0), 9.0); // clamped to the last level
    assert_eq!(lvl(&mut u, &tri, -3.0), 1.0);
    let near = SamplerDesc {
        mipmap_filter: FilterMode::Nearest,
        ..tri
    };
    assert_eq!(lvl(&mut u, &near, 0.5), 1.0); // ⌈d + ½⌉ − 1 rounds ½ down
    assert_eq!(lvl(&mut u, &near, 0.51), 3.0);
    assert_eq!(lvl(&mut u, &near, 1.49), 3.0);

    // Implicit LOD from the quad: 2 texels per pixel → λ = 1, 4 → 2.
    let s = sampler(tri);
    let q2 = Quad::screen(4, 6, 2.0 / 16.0, 2.0 / 16.0);
    assert_eq!(
        u.sample(&t, &v, &s, &q2).unwrap(),
        [[3.0, 0.0, 0.0, 1.0]; 4]
    );
    let q4 = Quad::screen(0, 0, 4.0 / 16.0, 4.0 / 16.0);
    assert_eq!(u.sample(&t, &v, &s, &q4).unwrap()[3][0], 5.0);
    // Only the major axis counts without anisotropy: 4 × 1 texels → λ = 2.
    let q41 = Quad::screen(0, 0, 4.0 / 16.0, 1.0 / 16.0);
    assert_eq!(u.sample(&t, &v, &s, &q41).unwrap()[0][0], 5.0);
    // Bias, then the sampler's clamps.
    assert_eq!(
        u.sample_bias(&t, &v, &s, &q2, [1.0, -0.5, 0.25, 9.0])
            .unwrap()
            .map(|p| p[0]),
        [5.0, 2.0, 3.5, 9.0]
    );
    let clamp_hi = sampler(SamplerDesc {
        lod_max_clamp: 0.5,
        ..tri
    });
    assert_eq!(u.sample(&t, &v, &clamp_hi, &q4).unwrap()[0][0], 2.0);
    let clamp_lo = sampler(SamplerDesc {
        lod_min_clamp: 3.0,
        ..tri
    });
    assert_eq!(u.sample(&t, &v, &clamp_lo, &q2).unwrap()[0][0], 7.0);
    // Explicit gradients: 8 texels along x → λ = 3.
    let g = u
        .sample_grad(
            &t,
            &v,
            &s,
            &q2,
            [[0.5, 0.0, 0.0]; 4],
            [[0.0, 1.0 / 16.0, 0.0]; 4],
        )
        .unwrap();
    assert_eq!(g[0][0], 7.0);
    // A view starting at mip 1 sees level 0 = the texture's mip 1 (3.0).
    let v1 = view_with(
        &t,
        TextureViewDesc {
            base_mip_level: 1,
            ..Default::default()
        },
    );
    assert_eq!(
        u.sample_level(&t, &v1, &s, &q2, [0.0; 4]).unwrap()[0][0],
        3.0
    );
    assert_eq!(u.sample(&t, &v1, &s, &q2).unwrap()[0][0], 3.0); // λ relative to 8×8: 0
}

#[test]
fn coarse_gradients_shared_by_the_quad() {
    // Lanes of one quad with different footprints along y: the coarse differences (lanes
    // 1 − 0 across, 2 − 0 down) give every lane the quad's one LOD, whatever lanes 2 and 3
    // hold beyond it.
    let t = levels_tex();
    let v = view(&t);
    let mut u = unit();
    let s = sampler(SamplerDesc::trilinear());
    let q = Quad::uv([
        [0.5, 0.5],
        [0.5, 0.5],
        [0.5, 0.5 + 2.0 / 16.0],
        [0.5, 0.5 + 8.0 / 16.0],
    ]);
    let r = u.sample(&t, &v, &s, &q).unwrap();
    // ∂x = c1 − c0 = 0, ∂y = c2 − c0 = 2 texels: λ 1 for every lane (fine differences would
    // give lane 1 ∂y = c3 − c1 = 8 texels, λ 3).
    assert_eq!([r[0][0], r[1][0], r[2][0], r[3][0]], [3.0; 4], "{r:?}");
    // The lanes' own bias still applies per lane.
    let r = u.sample_bias(&t, &v, &s, &q, [0.0, 1.0, 2.0, 0.5]).unwrap();
    assert_eq!(
        [r[0][0], r[1][0], r[2][0], r[3][0]],
        [3.0, 5.0, 7.0, 4.0],
        "{r:?}"
    );
}

#[test]
fn mag_and_min_filters_follow_lambda() {
    let t = r32(2, 1, |x, _| x as f32);
    let mut u = unit();
    let mk = |mag, min| SamplerDesc {
        mag_filter: mag,
        min_filter: min,
        ..SamplerDesc::default()
    };
    let c = [0.4, 0.5, 0.0];
    let nl = mk(FilterMode::Nearest, FilterMode::Linear);
    assert_eq!(at_level(&mut u, &t, &nl, c, 0.0)[0], 0.0); // λ ≤ 0: magnify, nearest
    let got = at_level(&mut u, &t, &nl, c, 0.5)[0]; // λ > 0: minify, linear at level 0
    assert!((got - 0.3).abs() < 1e-6);
    let ln = mk(FilterMode::Linear, FilterMode::Nearest);
    assert!((at_level(&mut u, &t, &ln, c, -1.0)[0] - 0.3).abs() < 1e-6);
    assert_eq!(at_level(&mut u, &t, &ln, c, 1.0)[0], 0.0);
}

#[test]
fn texel_offsets() {
    let t = row4();
    let v = view(&t);
    let mut u = unit();
    let s = sampler(SamplerDesc::default().with_address(A::Repeat));
    let q = point([0.1, 0.5, 0.0]).with_offset([2, 0, 0]);
    assert_eq!(
        u.sample_level(&t, &v, &s, &q, [0.0; 4]).unwrap()[0][0],
        30.0
    );
    let q = point([0.1, 0.5, 0.0]).with_offset([-1, 0, 0]);
    assert_eq!(
        u.sample_level(&t, &v, &s, &q, [0.0; 4]).unwrap()[0][0],
        40.0
    );
}

#[test]
fn srgb_is_decoded_before_filtering() {
    let mut t = Texture::new(TextureDesc::d2(2, 1, F::Rgba8UnormSrgb)).unwrap();
    fill_texels(&mut t, 0, 0, |x, _| [x as f32, x as f32, x as f32, 1.0]);
    let mut u = unit();
    let lin = SamplerDesc {
        mag_filter: FilterMode::Linear,
        ..SamplerDesc::default()
    };
    assert_eq!(at_level(&mut u, &t, &lin, [0.5, 0.5, 0.0], 0.0)[0], 0.5);
    // The same bits through a non-sRGB view: codes, not linear values (the cache keeps
    // both interpretations apart).
    let mut t = Texture::new(TextureDesc::d2(1, 1, F::Rgba8UnormSrgb)).unwrap();
    t.write_packed(Default::default(), &[128, 128, 128, 255], [1, 1, 1])
        .unwrap();
    let s = sampler(SamplerDesc::default());
    let srgb = view(&t);
    let raw = view_with(
        &t,
        TextureViewDesc {
            format: Some(F::Rgba8Unorm),
            ..Default::default()
        },
    );
    let q = point([0.5, 0.5, 0.0]);
    let a = u.sample_level(&t, &srgb, &s, &q, [0.0; 4]).unwrap()[0][0];
    let b = u.sample_level(&t, &raw, &s, &q, [0.0; 4]).unwrap()[0][0];
    assert!((a - 0.215_860_5).abs() < 1e-6);
    assert_eq!(b, 128.0 / 255.0);
}

#[test]
fn array_layers_and_sub_range_views() {
    let mut t = Texture::new(TextureDesc::d2(2, 2, F::R32Float).with_layers(3)).unwrap();
    for l in 0..3 {
        fill_r32(&mut t, 0, l, |_, _| 10.0 * l as f32);
    }
    let mut u = unit();
    let s = default_sampler();
    let v = view(&t);
    let q = point([0.5, 0.5, 0.0]).with_array_index([0, 1, 2, 7]);
    let r = u.sample_level(&t, &v, &s, &q, [0.0; 4]).unwrap();
    assert_eq!(r.map(|p| p[0]), [0.0, 10.0, 20.0, 20.0]);
    let q = point([0.5, 0.5, 0.0]).with_array_index([-3, 0, 1, 2]);
    let sub = view_with(
        &t,
        TextureViewDesc {
            base_array_layer: 1,
            array_layer_count: Some(2),
            dimension: Some(V::D2Array),
            ..Default::default()
        },
    );
    let r = u.sample_level(&t, &sub, &s, &q, [0.0; 4]).unwrap();
    assert_eq!(r.map(|p| p[0]), [10.0, 10.0, 20.0, 20.0]);
    let one = view_with(
        &t,
        TextureViewDesc {
            base_array_layer: 2,
            dimension: Some(V::D2),
            ..Default::default()
        },
    );
    assert_eq!(
        u.sample_level(&t, &one, &s, &q, [0.0; 4]).unwrap()[0][0],
        20.0
    );
}

#[test]
fn volume_and_1d_textures() {
    let mut t = Texture::new(TextureDesc {
        dimension: TextureDimension::D3,
        size: [2, 2, 2],
        mip_level_count: 1,
        sample_count: 1,
        format: F::R32Float,
    })
    .unwrap();
    for z in 0..2 {
        fill_r32(&mut t, 0, z, |x, y| (x + 2 * y + 4 * z) as f32);
    }
    let mut u = unit();
    let lin = SamplerDesc {
        mag_filter: FilterMode::Linear,
        ..SamplerDesc::default()
    };
    assert_eq!(at_level(&mut u, &t, &lin, [0.5, 0.5, 0.5], 0.0)[0], 3.5);
    assert_eq!(at_level(&mut u, &t, &lin, [0.25, 0.25, 0.75], 0.0)[0], 4.0);
    let near = SamplerDesc::default().with_address(A::Repeat);
    assert_eq!(at_level(&mut u, &t, &near, [0.75, 0.25, 1.75], 0.0)[0], 5.0);

    let mut l = Texture::new(TextureDesc {
        dimension: TextureDimension::D1,
        size: [4, 1, 1],
        mip_level_count: 1,
        sample_count: 1,
        format: F::R32Float,
    })
    .unwrap();
    fill_r32(&mut l, 0, 0, |x, _| 10.0 * (x + 1) as f32);
    assert_eq!(at_level(&mut u, &l, &lin, [0.5, 123.0, 9.0], 0.0)[0], 25.0);
    assert_eq!(TextureUnit::dimensions(&view(&l), 0), [4, 1, 1]);
    assert_eq!(TextureUnit::dimensions(&view(&t), 0), [2, 2, 2]);
}

#[test]
fn depth_compare_every_function_and_pcf() {
    let mut t = Texture::new(TextureDesc::d2(2, 1, F::Depth32Float)).unwrap();
    fill_texels(&mut t, 0, 0, |x, _| [0.25 + 0.5 * x as f32, 0.0, 0.0, 0.0]);
    let v = view(&t);
    let mut u = unit();
    let at0 = point([0.25, 0.5, 0.0]); // texel 0 (0.25)
    for (f, want) in [
        (C::Never, [0.0, 0.0, 0.0]),
        (C::Less, [1.0, 0.0, 0.0]),
        (C::Equal, [0.0, 1.0, 0.0]),
        (C::LessEqual, [1.0, 1.0, 0.0]),
        (C::Greater, [0.0, 0.0, 1.0]),
        (C::NotEqual, [1.0, 0.0, 1.0]),
        (C::GreaterEqual, [0.0, 1.0, 1.0]),
        (C::Always, [1.0, 1.0, 1.0]),
    ] {
        let s = sampler(SamplerDesc {
            compare: Some(f),
            ..SamplerDesc::default()
        });
        for (r, w) in [0.1, 0.25, 0.4].into_iter().zip(want) {
            let got = u
                .sample_compare_level(&t, &v, &s, &at0, [r; 4], [0.0; 4])
                .unwrap()[0];
            assert_eq!(got, [w, 0.0, 0.0, 1.0], "{f:?} ref {r}");
        }
    }
    // PCF: compare per texel, then filter. Halfway between 0.25 and 0.75 with ref 0.5.
    let pcf = sampler(SamplerDesc {
        compare: Some(C::Less),
        mag_filter: FilterMode::Linear,
        min_filter: FilterMode::Linear,
        ..SamplerDesc::default()
    });
    let mid = point([0.5, 0.5, 0.0]);
    let got = u.sample_compare(&t, &v, &pcf, &mid, [0.5; 4]).unwrap()[0][0];
    assert_eq!(got, 0.5); // filtering depth first would give 0.5 < 0.5 = 0
    let q = point([0.375, 0.5, 0.0]); // weights ¾, ¼
    assert_eq!(
        u.sample_compare(&t, &v, &pcf, &q, [0.5; 4]).unwrap()[0][0],
        0.25
    );
    // Border texels compare the border colour's depth.
    let border = sampler(SamplerDesc {
        compare: Some(C::Less),
        border_color: BorderColor::OpaqueWhite,
        ..SamplerDesc::default().with_address(A::ClampToBorder)
    });
    let out = point([1.5, 0.5, 0.0]);
    assert_eq!(
        u.sample_compare_level(&t, &v, &border, &out, [0.5; 4], [0.0; 4])
            .unwrap()[0][0],
        1.0
    );
    // Unorm depth clamps the reference to [0, 1].
    let mut d16 = Texture::new(TextureDesc::d2(1, 1, F::Depth16Unorm)).unwrap();
    fill_texels(&mut d16, 0, 0, |_, _| [1.0; 4]);
    let le = sampler(SamplerDesc {
        compare: Some(C::LessEqual),
        ..SamplerDesc::default()
    });
    let r = u
        .sample_compare_level(&d16, &view(&d16), &le, &at0, [5.0; 4], [0.0; 4])
        .unwrap();
    assert_eq!(r[0][0], 1.0);
}

#[test]
fn gather_and_gather_compare() {
    let t = r32(2, 2, |x, y| (x + 2 * y) as f32);
    let mut u = unit();
    let s = default_sampler();
    let c = point([0.5, 0.5, 0.0]);
    let g = u.gather(&t, &view(&t), &s, &c, 0).unwrap();
    assert_eq!(g[0].map(f32::from_bits), [2.0, 3.0, 1.0, 0.0]);
    let g1 = u.gather(&t, &view(&t), &s, &c, 3).unwrap(); // alpha of R32Float: 1
    assert_eq!(g1[0].map(f32::from_bits), [1.0; 4]);
    // Integer textures gather integers (border colours as integers).
    let mut ti = Texture::new(TextureDesc::d2(2, 2, F::Rg32Uint)).unwrap();
    let data: Vec<u8> = (0..4u32)
        .flat_map(|i| [i, 100 + i])
        .flat_map(u32::to_le_bytes)
        .collect();
    ti.write_packed(Default::default(), &data, [2, 2, 1])
        .unwrap();
    let g = u.gather(&ti, &view(&ti), &s, &c, 1).unwrap();
    assert_eq!(g[0], [102, 103, 101, 100]);
    let b = sampler(SamplerDesc {
        border_color: BorderColor::OpaqueWhite,
        ..SamplerDesc::default().with_address(A::ClampToBorder)
    });
    let g = u
        .gather(&ti, &view(&ti), &b, &point([0.0, 0.0, 0.0]), 0)
        .unwrap();
    assert_eq!(g[0], [1, 0, 1, 1]);
    // Gather compare.
    let mut d = Texture::new(TextureDesc::d2(2, 2, F::Depth32Float)).unwrap();
    fill_texels(&mut d, 0, 0, |x, y| {
        [(x + 2 * y) as f32 / 4.0, 0.0, 0.0, 0.0]
    });
    let cs = sampler(SamplerDesc {
        compare: Some(C::Greater),
        ..SamplerDesc::default()
    });
    let g = u.gather_compare(&d, &view(&d), &cs, &c, [0.3; 4]).unwrap();
    assert_eq!(g[0], [0.0, 0.0, 1.0, 1.0]); // 0.5, 0.75, 0.25, 0
    assert!(u.gather(&t, &view(&t), &s, &c, 4).is_err());
}

#[test]
fn load_is_robust() {
    let mut t = Texture::new(
        TextureDesc::d2(4, 4, F::Rgba8Uint)
            .with_mips(2)
            .with_layers(2),
    )
    .unwrap();
    for l in 0..2 {
        for m in 0..2 {
            let [w, h, _] = t.desc().mip_size(m);
            let data: Vec<u8> = (0..w * h)
                .flat_map(|i| [i as u8, m as u8, l as u8, 9])
                .collect();
            let at = rastra_texture::TextureCopy {
                mip_level: m,
                origin: [0, 0, l],
                ..Default::default()
            };
            t.write_packed(at, &data, [w, h, 1]).unwrap();
        }
    }
    let v = view(&t);
    let mut u = unit();
    let r = u
        .load(
            &t,
            &v,
            [[1, 2, 0], [1, 1, 0], [4, 0, 0], [-1, 0, 0]],
            [1, 0, 0, 0],
            [0, 1, 0, 0],
            [0; 4],
        )
        .unwrap();
    assert_eq!(r[0], [9, 0, 1, 9]);
    assert_eq!(r[1], [3, 1, 0, 9]);
    assert_eq!(r[2], [0; 4]);
    assert_eq!(r[3], [0; 4]);
    let r = u
        .load(
            &t,
            &v,
            [[0; 3]; 4],
            [2, -1, 0, 0],
            [0, 0, 2, -1],
            [0, 0, 0, 1],
        )
        .unwrap();
    assert_eq!(r, [[0; 4]; 4]);
    // Multisampled: each sample separately.
    let ms = Texture::new(TextureDesc {
        sample_count: 4,
        ..TextureDesc::d2(2, 2, F::R32Float)
    })
    .unwrap();
    let r = u
        .load(
            &ms,
            &view(&ms),
            [[1, 1, 0]; 4],
            [0; 4],
            [0; 4],
            [0, 3, 4, -1],
        )
        .unwrap();
    assert_eq!(r[0], [0, 0, 0, 1.0f32.to_bits()]);
    assert_eq!(r[2], [0; 4]);
    // Depth loads return the depth.
    let mut d = Texture::new(TextureDesc::d2(1, 1, F::Depth16Unorm)).unwrap();
    fill_texels(&mut d, 0, 0, |_, _| [1.0; 4]);
    let r = u
        .load(&d, &view(&d), [[0; 3]; 4], [0; 4], [0; 4], [0; 4])
        .unwrap();
    assert_eq!(f32::from_bits(r[0][0]), 1.0);
}

#[test]
fn queries() {
    let t = Texture::new(
        TextureDesc::d2(16, 8, F::Rgba8Unorm)
            .with_mips(3)
            .with_layers(12),
    )
    .unwrap();
    let v = view(&t);
    assert_eq!(TextureUnit::dimensions(&v, 0), [16, 8, 12]);
    assert_eq!(TextureUnit::dimensions(&v, 2), [4, 2, 12]);
    assert_eq!(TextureUnit::dimensions(&v, 3), [0, 0, 0]);
    assert_eq!(TextureUnit::num_levels(&v), 3);
    assert_eq!(TextureUnit::num_layers(&v), 12);
    assert_eq!(TextureUnit::num_samples(&v), 1);
    let sq = Texture::new(TextureDesc::d2(8, 8, F::Rgba8Unorm).with_layers(12)).unwrap();
    let ca = view_with(
        &sq,
        TextureViewDesc {
            dimension: Some(V::CubeArray),
            ..Default::default()
        },
    );
    assert_eq!(TextureUnit::num_layers(&ca), 2);
    assert_eq!(TextureUnit::dimensions(&ca, 0), [8, 8, 2]);
}

#[test]
fn invalid_requests_are_errors() {
    let t = r32(2, 2, |_, _| 0.0);
    let other = r32(2, 2, |_, _| 0.0);
    let mut u = unit();
    let s = default_sampler();
    let q = point([0.5; 3]);
    assert!(u.sample(&t, &view(&other), &s, &q).is_err());
    let ti = Texture::new(TextureDesc::d2(2, 2, F::R32Uint)).unwrap();
    assert!(u.sample(&ti, &view(&ti), &s, &q).is_err());
    let cs = sampler(SamplerDesc {
        compare: Some(C::Less),
        ..SamplerDesc::default()
    });
    assert!(u.sample(&t, &view(&t), &cs, &q).is_err()); // compare sampler, no reference
    assert!(u.sample_compare(&t, &view(&t), &cs, &q, [0.0; 4]).is_err()); // colour texture
    let d = Texture::new(TextureDesc::d2(2, 2, F::Depth32Float)).unwrap();
    assert!(u.sample_compare(&d, &view(&d), &s, &q, [0.0; 4]).is_err()); // no compare
    let ms = Texture::new(TextureDesc {
        sample_count: 4,
        ..TextureDesc::d2(2, 2, F::R32Float)
    })
    .unwrap();
    assert!(u.sample(&ms, &view(&ms), &s, &q).is_err());
}

#[test]
fn hostile_coordinates_have_defined_results() {
    let t = levels_tex();
    let v = view(&t);
    let mut u = unit();
    for mode in [A::Repeat, A::MirrorRepeat, A::ClampToEdge, A::ClampToBorder] {
        let s = sampler(SamplerDesc {
            max_anisotropy: 16,
            ..SamplerDesc::trilinear().with_address(mode)
        });
        for c in [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e30,
            -1e30,
            f32::MIN_POSITIVE,
        ] {
            let q = Quad::uv([[c, 0.5], [0.5, c], [c, c], [0.25, 0.75]]);
            let r = u.sample(&t, &v, &s, &q).unwrap();
            assert!(
                r.iter().flatten().all(|x| x.is_finite()),
                "{mode:?} {c}: {r:?}"
            );
            u.sample_bias(&t, &v, &s, &q, [c; 4]).unwrap();
            u.sample_level(&t, &v, &s, &q, [c; 4]).unwrap();
            u.sample_grad(&t, &v, &s, &q, [[c; 3]; 4], [[c, 0.0, 0.0]; 4])
                .unwrap();
            u.gather(&t, &v, &sampler(SamplerDesc::default()), &q, 0)
                .unwrap();
        }
    }
}

#[test]
fn compressed_textures_decode_once_per_line_fill() {
    // An 8×8 BC1 texture of four solid blocks: red, green, blue, white.
    let mut t = Texture::new(TextureDesc::d2(8, 8, F::Bc1RgbaUnorm)).unwrap();
    let colours = [
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 1.0, 1.0],
    ];
    let data: Vec<u8> = colours
        .iter()
        .flat_map(|&c| rastra_texture::compressed::bc1_solid_block(c))
        .collect();
    t.write_packed(Default::default(), &data, [8, 8, 1])
        .unwrap();
    let v = view(&t);
    let s = default_sampler();
    let mut u = unit();
    for _ in 0..100 {
        for (i, c) in colours.iter().enumerate() {
            let p = point([
                0.25 + 0.5 * (i % 2) as f32,
                0.25 + 0.5 * (i / 2) as f32,
                0.0,
            ]);
            let r = u.sample_level(&t, &v, &s, &p, [0.0; 4]).unwrap()[0];
            assert_eq!(r, [c[0], c[1], c[2], 1.0]);
        }
    }
    let st = u.stats();
    assert_eq!(st.blocks_decoded, 4, "{st:?}");
    assert_eq!(st.l1_misses, 4);
    assert_eq!(st.requests, 400 * 4);
}
