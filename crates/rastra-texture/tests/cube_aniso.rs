//! Cube maps (face selection at faces, edges and corners per Vulkan §16.5.4; seamless
//! filtering across face edges; corners; cube arrays) and anisotropic filtering against a
//! supersampled reference (the average of many point samples over the pixel footprint).

mod common;
use common::*;

use rastra_texture::cube::{face_coord, resolve_texel, select_face, texel_direction};
use rastra_texture::{
    FilterMode, Quad, SamplerDesc, Texture, TextureDesc, TextureFormat as F, TextureViewDesc,
    TextureViewDimension as V,
};

#[test]
fn face_selection_per_vulkan_table() {
    // Each axis → its face; (s, t) per the table: +X: sc = −rz, tc = −ry, etc.
    let cases = [
        ([1.0, 0.5, 0.5], 0, 0.25, 0.25),
        ([-1.0, 0.5, 0.5], 1, 0.75, 0.25),
        ([0.5, 1.0, 0.5], 2, 0.75, 0.75),
        ([0.5, -1.0, 0.5], 3, 0.75, 0.25),
        ([0.5, 0.5, 1.0], 4, 0.75, 0.25),
        ([0.5, 0.5, -1.0], 5, 0.25, 0.25),
    ];
    for (r, face, s, t) in cases {
        let fc = face_coord(r);
        assert_eq!((fc.face, fc.s, fc.t), (face, s, t), "{r:?}");
    }
    // Edges and corners: ties go to z, then y.
    assert_eq!(select_face([1.0, 0.0, 1.0]), 4);
    assert_eq!(select_face([1.0, 1.0, 0.0]), 2);
    assert_eq!(select_face([1.0, -1.0, 0.0]), 3);
    assert_eq!(select_face([-1.0, -1.0, -1.0]), 5);
    assert_eq!(select_face([0.0, 0.0, -0.0]), 5);
    // A zero direction still gives a defined position.
    let z = face_coord([0.0; 3]);
    assert_eq!((z.s, z.t), (0.5, 0.5));
}

/// Crossing an edge and crossing back lands on the starting texel, and the neighbour
/// texel's centre is adjacent (less than two texels away on the unit cube) — for every
/// edge texel of every face, at several sizes.
#[test]
fn seam_neighbours_are_exact_and_symmetric() {
    for n in 1..=5u32 {
        for face in 0..6 {
            for k in 0..n as i32 {
                for (i, j) in [(-1, k), (n as i32, k), (k, -1), (k, n as i32)] {
                    let (f2, i2, j2) = resolve_texel(face, i, j, n).unwrap();
                    assert_ne!(f2, face);
                    let back: Vec<_> = [(-1, 0), (1, 0), (0, -1), (0, 1)]
                        .iter()
                        .filter_map(|(di, dj)| resolve_texel(f2, i2 as i32 + di, j2 as i32 + dj, n))
                        .collect();
                    let ci = i.clamp(0, n as i32 - 1) as u32;
                    let cj = j.clamp(0, n as i32 - 1) as u32;
                    assert!(back.contains(&(face, ci, cj)), "n{n} f{face} ({i},{j})");
                    let a = texel_direction(face, ci, cj, n);
                    let b = texel_direction(f2, i2, j2, n);
                    let norm = |v: [f32; 3]| {
                        let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                        v.map(|x| x / l)
                    };
                    let (a, b) = (norm(a), norm(b));
                    let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2))
                        .sqrt();
                    assert!(d < 2.0 / n as f32 + 1e-5, "n{n} f{face} ({i},{j}) d {d}");
                }
            }
            assert_eq!(resolve_texel(face, -1, -1, n), None);
            assert_eq!(resolve_texel(face, n as i32, -1, n), None);
        }
    }
}

fn cube(n: u32, layers: u32, f: impl Fn(u32, u32, u32) -> f32) -> Texture {
    let mut t = Texture::new(TextureDesc::d2(n, n, F::R32Float).with_layers(layers)).unwrap();
    for l in 0..layers {
        fill_r32(&mut t, 0, l, |x, y| f(l, x, y));
    }
    t
}

fn cube_view(t: &Texture, dim: V) -> rastra_texture::TextureView {
    view_with(
        t,
        TextureViewDesc {
            dimension: Some(dim),
            ..Default::default()
        },
    )
}

#[test]
fn nearest_cube_sampling_hits_every_texel() {
    let t = cube(3, 6, |f, x, y| (100 * f + 3 * y + x) as f32);
    let v = cube_view(&t, V::Cube);
    let s = default_sampler();
    let mut u = unit();
    for f in 0..6 {
        for y in 0..3 {
            for x in 0..3 {
                let q = point(texel_direction(f, x, y, 3));
                let r = u.sample_level(&t, &v, &s, &q, [0.0; 4]).unwrap()[0][0];
                assert_eq!(r, (100 * f + 3 * y + x) as f32, "face {f} ({x},{y})");
            }
        }
    }
}

#[test]
fn seamless_filtering_across_a_face_edge() {
    let t = cube(4, 6, |f, _, _| f as f32);
    let v = cube_view(&t, V::Cube);
    let lin = sampler(SamplerDesc {
        mag_filter: FilterMode::Linear,
        min_filter: FilterMode::Linear,
        ..SamplerDesc::default()
    });
    let mut u = unit();
    // Near the +X face's s = 1 edge, whose neighbour is −Z (face 5): the tap past the edge
    // reads face 5 with weight frac(s·4 − ½).
    let r = [1.0, 0.1, -0.999];
    let fc = face_coord(r);
    assert_eq!(fc.face, 0);
    let a = (fc.s * 4.0 - 0.5).fract();
    let got = u.sample_level(&t, &v, &lin, &point(r), [0.0; 4]).unwrap()[0][0];
    assert!((got - 5.0 * a).abs() < 1e-5, "{got} vs {}", 5.0 * a);
    assert!(got > 2.0); // a clamped (seamed) sample would read 0
    // Exactly on the edge between +X and −Z, from either side: the average.
    let e = u
        .sample_level(&t, &v, &lin, &point([1.0, 0.0, -1.0]), [0.0; 4])
        .unwrap()[0][0];
    assert_eq!(e, 2.5);
    // The cube corner (+X, +Y, +Z): on +Z, the missing corner tap is the mean of the
    // three faces, (4 + 0 + 2) / 3 = 2; the other taps are 4, 0 and 2.
    let t2 = cube(2, 6, |f, _, _| f as f32);
    let v2 = cube_view(&t2, V::Cube);
    let c = u
        .sample_level(&t2, &v2, &lin, &point([1.0, 1.0, 1.0]), [0.0; 4])
        .unwrap()[0][0];
    assert!((c - 2.0).abs() < 1e-6, "{c}");
}

#[test]
fn cube_arrays_and_lod() {
    let t = cube(4, 12, |l, _, _| (l / 6 * 10 + l % 6) as f32);
    let v = cube_view(&t, V::CubeArray);
    let s = default_sampler();
    let mut u = unit();
    let q = point([0.0, -1.0, 0.2]).with_array_index([0, 1, 5, -1]);
    let r = u.sample_level(&t, &v, &s, &q, [0.0; 4]).unwrap();
    assert_eq!(r.map(|p| p[0]), [3.0, 13.0, 13.0, 3.0]);
    // Implicit LOD on a cube: a quad spanning 2 texels per pixel on the +Z face of a
    // mip-mapped 8×8 cube (levels 8, 4, 2, 1 hold 0, 1, 2, 3) → λ = 1.
    let mut m = Texture::new(
        TextureDesc::d2(8, 8, F::R32Float)
            .with_layers(6)
            .with_mips(4),
    )
    .unwrap();
    for l in 0..6 {
        for lv in 0..4 {
            fill_r32(&mut m, lv, l, |_, _| lv as f32);
        }
    }
    let mv = cube_view(&m, V::Cube);
    let d = 2.0 * 2.0 / 8.0; // 2 texels of s = 2/8, in direction units (s = ½x + ½)
    let quad = Quad::new(std::array::from_fn(|i| {
        [0.1 + d * (i & 1) as f32, -0.1 - d * (i >> 1) as f32, 1.0]
    }));
    let tri = sampler(SamplerDesc::trilinear());
    let r = u.sample(&m, &mv, &tri, &quad).unwrap();
    for p in r {
        assert!((p[0] - 1.0).abs() < 0.05, "{r:?}");
    }
}

/// Anisotropic filtering against a supersampled reference: the average of 32×8 bilinear
/// point samples of level 0 over the pixel's footprint parallelogram. The 16× anisotropic
/// result must be close to it and much closer than isotropic trilinear filtering, which
/// blurs the footprint's short axis by its long one.
#[test]
fn anisotropic_filtering_matches_supersampled_reference() {
    let mut rng = Rng(0xA11CE);
    let noise: Vec<f32> = (0..64 * 64).map(|_| rng.f32()).collect();
    let t = mipmapped_r32(64, |x, y| noise[(y * 64 + x) as usize]);
    let v = view(&t);
    let base = SamplerDesc::trilinear().with_address(rastra_texture::AddressMode::Repeat);
    let aniso = sampler(SamplerDesc {
        max_anisotropy: 16,
        ..base
    });
    // The same probes blending their mip levels by λ's whole fraction, as a trilinear
    // sampler does: the default narrowed blend may cost some accuracy, not much.
    let full = rastra_texture::Sampler::with_mip_blend(
        SamplerDesc {
            max_anisotropy: 16,
            ..base
        },
        rastra_texture::MipBlend::Full,
    )
    .unwrap();
    let iso = sampler(base);
    let mut u = unit();
    let footprints: [([f32; 3], [f32; 3]); 3] = [
        ([8.0 / 64.0, 0.0, 0.0], [0.0, 1.0 / 64.0, 0.0]),
        ([0.0, 6.0 / 64.0, 0.0], [1.5 / 64.0, 0.0, 0.0]),
        (
            [5.0 / 64.0, 5.0 / 64.0, 0.0],
            [-0.7 / 64.0, 0.7 / 64.0, 0.0],
        ),
    ];
    for (dx, dy) in footprints {
        let (mut err_aniso, mut err_full, mut err_iso) = (0.0f32, 0.0f32, 0.0f32);
        let n = 48;
        for _ in 0..n {
            let c = [rng.f32(), rng.f32(), 0.0];
            let q = point(c);
            let a = u.sample_grad(&t, &v, &aniso, &q, [dx; 4], [dy; 4]).unwrap()[0][0];
            let f = u.sample_grad(&t, &v, &full, &q, [dx; 4], [dy; 4]).unwrap()[0][0];
            let i = u.sample_grad(&t, &v, &iso, &q, [dx; 4], [dy; 4]).unwrap()[0][0];
            let mut sum = 0.0;
            let (na, nb) = (32, 8);
            for ka in 0..na {
                for kb in 0..nb {
                    let fa = (ka as f32 + 0.5) / na as f32 - 0.5;
                    let fb = (kb as f32 + 0.5) / nb as f32 - 0.5;
                    let p = [
                        c[0] + fa * dx[0] + fb * dy[0],
                        c[1] + fa * dx[1] + fb * dy[1],
                        0.0,
                    ];
                    sum += u.sample_level(&t, &v, &iso, &point(p), [0.0; 4]).unwrap()[0][0];
                }
            }
            let reference = sum / (na * nb) as f32;
            err_aniso += (a - reference).abs();
            err_full += (f - reference).abs();
            err_iso += (i - reference).abs();
        }
        let [ea, ef, ei] = [err_aniso, err_full, err_iso].map(|e| e / n as f32);
        println!(
            "footprint {dx:?} × {dy:?}: mean |error| anisotropic {ea:.4} (full mip blend \
             {ef:.4}), isotropic {ei:.4}"
        );
        for (e, what) in [(ea, "anisotropic"), (ef, "full-blend anisotropic")] {
            assert!(e < 0.05, "{what} error {e}");
            assert!(e < 0.5 * ei, "{what} {e} vs isotropic {ei}");
        }
        assert!(ea < 1.5 * ef, "narrowed blend {ea} vs full {ef}");
    }
}

/// A footprint elongated N× uses the LOD of its minor axis: on a texture whose levels are
/// constants, 4×1 texels with anisotropy ≥ 4 reads level 0, and the cap limits it.
#[test]
fn anisotropy_picks_the_minor_axis_lod() {
    let mut t = Texture::new(TextureDesc::d2(16, 16, F::R32Float).with_mips(5)).unwrap();
    for l in 0..5 {
        fill_r32(&mut t, l, 0, |_, _| (2 * l + 1) as f32);
    }
    let v = view(&t);
    let mut u = unit();
    let q = Quad::screen(2, 2, 4.0 / 16.0, 1.0 / 16.0);
    for (max, want) in [(1, 5.0), (2, 3.0), (4, 1.0), (16, 1.0)] {
        let s = sampler(SamplerDesc {
            max_anisotropy: max,
            ..SamplerDesc::trilinear()
        });
        assert_eq!(u.sample(&t, &v, &s, &q).unwrap()[0][0], want, "aniso {max}");
    }
}
