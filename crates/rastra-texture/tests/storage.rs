//! Texture memory, views and samplers: WebGPU descriptor validation, the tiled layout's
//! upload → download round trip on odd sizes and mips, row pitches, texture-to-texture
//! copies, and view / sampler validation errors.

use rastra_texture::storage::TILE;
use rastra_texture::{
    AddressMode, DataLayout, FilterMode, Limits, Sampler, SamplerDesc, Texture, TextureAspect,
    TextureCopy, TextureDesc, TextureDimension as D, TextureError, TextureFormat as F, TextureView,
    TextureViewDesc, TextureViewDimension as V, copy_texture_to_texture,
};

fn desc(dimension: D, size: [u32; 3], mips: u32, samples: u32, format: F) -> TextureDesc {
    TextureDesc {
        dimension,
        size,
        mip_level_count: mips,
        sample_count: samples,
        format,
    }
}

fn err(d: TextureDesc) -> String {
    match Texture::new(d) {
        Err(TextureError::Validation(m)) => m,
        other => panic!("{d:?} should fail validation, got {other:?}"),
    }
}

fn bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u8
        })
        .collect()
}

#[test]
fn texture_validation_follows_webgpu() {
    let ok = |d: TextureDesc| Texture::new(d).unwrap();
    ok(desc(D::D2, [256, 1, 1], 9, 1, F::Rgba8Unorm));
    ok(desc(D::D3, [4, 4, 16], 5, 1, F::R8Unorm));
    ok(desc(D::D1, [100, 1, 1], 1, 1, F::Rg16Float));
    ok(desc(D::D2, [64, 64, 1], 1, 4, F::Depth24PlusStencil8));
    ok(desc(D::D3, [8, 8, 8], 1, 1, F::Bc7RgbaUnorm)); // BC sliced 3D
    ok(desc(
        D::D2,
        [12, 12, 6],
        1,
        1,
        F::Astc {
            block: rastra_texture::AstcBlock::B12x12,
            channel: rastra_texture::AstcChannel::Unorm,
        },
    ));
    assert!(err(desc(D::D2, [0, 4, 1], 1, 1, F::R8Unorm)).contains("zero"));
    assert!(err(desc(D::D2, [256, 1, 1], 10, 1, F::R8Unorm)).contains("mip_level_count"));
    assert!(err(desc(D::D2, [4, 4, 1], 0, 1, F::R8Unorm)).contains("at least 1"));
    assert!(err(desc(D::D1, [16, 2, 1], 1, 1, F::R8Unorm)).contains("1D"));
    assert!(err(desc(D::D1, [16, 1, 1], 2, 1, F::R8Unorm)).contains("mip_level_count"));
    assert!(err(desc(D::D1, [16, 1, 1], 1, 1, F::Depth16Unorm)).contains("1D"));
    assert!(err(desc(D::D2, [6, 8, 1], 1, 1, F::Bc1RgbaUnorm)).contains("multiple"));
    assert!(err(desc(D::D3, [4, 4, 4], 1, 1, F::Depth32Float)).contains("3D"));
    assert!(err(desc(D::D3, [4, 4, 4], 1, 1, F::Etc2Rgb8Unorm)).contains("3D"));
    assert!(err(desc(D::D2, [4, 4, 1], 1, 2, F::R8Unorm)).contains("sample_count"));
    assert!(err(desc(D::D2, [4, 4, 1], 2, 4, F::R8Unorm)).contains("multisampled"));
    assert!(err(desc(D::D2, [4, 4, 2], 1, 4, F::R8Unorm)).contains("multisampled"));
    assert!(err(desc(D::D3, [4, 4, 1], 1, 4, F::R8Unorm)).contains("multisampled"));
    assert!(err(desc(D::D2, [4, 4, 1], 1, 4, F::Rgba32Float)).contains("multisampling"));
    assert!(err(desc(D::D2, [8193, 4, 1], 1, 1, F::R8Unorm)).contains("maxTextureDimension2D"));
    assert!(err(desc(D::D2, [4, 4, 257], 1, 1, F::R8Unorm)).contains("maxTextureArrayLayers"));
    assert!(err(desc(D::D3, [4, 4, 4096], 1, 1, F::R8Unorm)).contains("maxTextureDimension3D"));
    assert!(err(desc(D::D2, [8192, 8192, 256], 1, 1, F::Rgba32Float)).contains("bytes"));
    let small = Limits {
        max_texture_dimension_2d: 16,
        ..Limits::default()
    };
    assert!(Texture::with_limits(desc(D::D2, [32, 4, 1], 1, 1, F::R8Unorm), &small).is_err());
}

#[test]
fn mip_sizes_and_counts() {
    let d = desc(D::D2, [13, 7, 3], 4, 1, F::Rgba8Unorm);
    assert_eq!(d.max_mip_levels(), 4);
    assert_eq!(d.mip_size(0), [13, 7, 3]);
    assert_eq!(d.mip_size(2), [3, 1, 3]);
    assert_eq!(d.mip_size(3), [1, 1, 3]);
    let b = desc(D::D2, [12, 8, 1], 4, 1, F::Bc1RgbaUnorm);
    assert_eq!(b.mip_size(2), [3, 2, 1]);
    assert_eq!(b.physical_mip_size(2), [4, 4, 1]);
    let v = desc(D::D3, [8, 2, 32], 6, 1, F::R8Unorm);
    assert_eq!(v.max_mip_levels(), 6);
    assert_eq!(v.mip_size(4), [1, 1, 2]);
}

#[test]
fn layout_is_tiled_morton() {
    let t = Texture::new(TextureDesc::d2(20, 20, F::Rgba8Unorm)).unwrap();
    let at = |x, y| t.element_offset(0, 0, x, y).unwrap();
    // Morton inside the 8×8 tile: (1,0)=1, (0,1)=2, (1,1)=3, (2,0)=4 texels in.
    assert_eq!(
        [at(0, 0), at(1, 0), at(0, 1), at(1, 1), at(2, 0)],
        [0, 4, 8, 12, 16]
    );
    // A 4×4 square is one aligned 64-byte run (one L2 line).
    let square: Vec<u64> = (0..16).map(|i| at(i % 4, i / 4)).collect();
    assert_eq!(*square.iter().max().unwrap(), 60);
    // Next tile to the right starts after 64 texels; rows of tiles are 3 tiles wide.
    assert_eq!(at(TILE, 0), 256);
    assert_eq!(at(0, TILE), 3 * 256);
    assert_eq!(t.element_offset(0, 0, 20, 0), None);
    assert_eq!(t.memory_size(), 9 * 256);
}

/// Upload random texels to every mip and layer: each lies where `Texture::element` finds
/// it; download them: identical — for odd sizes, several formats (incl. 16-byte texels and
/// BC blocks), 2D arrays, 3D and 1D.
#[test]
fn tiled_round_trip_odd_sizes_and_mips() {
    let cases = [
        desc(D::D2, [13, 7, 3], 4, 1, F::Rgba8Unorm),
        desc(D::D2, [33, 17, 1], 6, 1, F::Rgba32Float),
        desc(D::D2, [12, 20, 2], 5, 1, F::Bc1RgbaUnorm),
        desc(D::D2, [20, 12, 1], 5, 1, F::Bc7RgbaUnormSrgb),
        desc(D::D3, [5, 3, 9], 4, 1, F::R16Float),
        desc(D::D1, [37, 1, 1], 1, 1, F::Rg8Uint),
        desc(D::D2, [9, 9, 1], 4, 1, F::Depth32FloatStencil8),
    ];
    for (n, d) in cases.into_iter().enumerate() {
        let mut t = Texture::new(d).unwrap();
        let mut expect = Vec::new();
        for level in 0..d.mip_level_count {
            let size = d.physical_mip_size(level);
            let layout = DataLayout::packed(d.format, size);
            let len =
                (layout.bytes_per_row.unwrap() * layout.rows_per_image.unwrap() * size[2]) as usize;
            let data = bytes(len, n as u64 * 100 + level as u64 + 1);
            let at = TextureCopy {
                mip_level: level,
                ..TextureCopy::default()
            };
            t.write_packed(at, &data, size).unwrap();
            // Every element where the layout's own addressing says it lies.
            let ((bw, bh), eb) = (d.format.block_dims(), d.format.block_size());
            let (cols, rows) = (size[0].div_ceil(bw), size[1].div_ceil(bh));
            for z in 0..size[2] {
                for ey in 0..rows {
                    for ex in 0..cols {
                        let k = ((z * rows + ey) * cols + ex) as usize * eb;
                        assert_eq!(
                            t.element(level, z, ex, ey),
                            Some(&data[k..k + eb]),
                            "{d:?} mip {level} element ({ex}, {ey}, {z})"
                        );
                    }
                }
            }
            expect.push((at, size, data));
        }
        for (at, size, data) in expect {
            assert_eq!(
                t.read_packed(at, size).unwrap(),
                data,
                "{d:?} mip {}",
                at.mip_level
            );
        }
    }
}

#[test]
fn row_pitch_offset_and_subregions() {
    let mut t = Texture::new(TextureDesc::d2(10, 6, F::R8Unorm).with_layers(2)).unwrap();
    // A 3×2×2 region at (4, 1, 0) from padded rows: offset 5, 8 bytes per row, 3 rows per
    // image.
    let layout = DataLayout {
        offset: 5,
        bytes_per_row: Some(8),
        rows_per_image: Some(3),
    };
    let mut data = vec![0xEEu8; 5 + 8 * 3 + 8 + 3];
    for z in 0..2 {
        for y in 0..2 {
            for x in 0..3 {
                data[5 + z * 24 + y * 8 + x] = (100 * z + 10 * y + x) as u8;
            }
        }
    }
    let at = TextureCopy {
        mip_level: 0,
        origin: [4, 1, 0],
        aspect: TextureAspect::All,
    };
    t.write(at, &data, layout, [3, 2, 2]).unwrap();
    let layer1 = t
        .read_packed(
            TextureCopy {
                origin: [0, 0, 1],
                ..at
            },
            [10, 6, 1],
        )
        .unwrap();
    assert_eq!(layer1[10 + 4..10 + 7], [100, 101, 102]);
    assert_eq!(layer1[20 + 4..20 + 7], [110, 111, 112]);
    assert_eq!(layer1.iter().filter(|&&b| b != 0).count(), 6);
    // Errors: short data, small pitch, missing pitch, out of range, unaligned blocks.
    assert!(t.write(at, &data[..20], layout, [3, 2, 2]).is_err());
    let bad = DataLayout {
        bytes_per_row: Some(2),
        ..layout
    };
    assert!(t.write(at, &data, bad, [3, 2, 2]).is_err());
    assert!(
        t.write(at, &data, DataLayout::default(), [3, 2, 1])
            .is_err()
    );
    assert!(
        t.write(
            TextureCopy {
                origin: [8, 0, 0],
                ..at
            },
            &data,
            layout,
            [3, 1, 1]
        )
        .is_err()
    );
    assert!(
        t.write(TextureCopy { mip_level: 1, ..at }, &data, layout, [1, 1, 1])
            .is_err()
    );
    let mut bc = Texture::new(TextureDesc::d2(8, 8, F::Bc1RgbaUnorm)).unwrap();
    assert!(
        bc.write_packed(TextureCopy::default(), &[0; 8], [2, 4, 1])
            .is_err()
    );
    let unaligned = TextureCopy {
        origin: [2, 0, 0],
        ..TextureCopy::default()
    };
    assert!(bc.write_packed(unaligned, &[0; 8], [4, 4, 1]).is_err());
    // Zero-sized copies are valid no-ops.
    t.write(at, &[], DataLayout::default(), [0, 0, 0]).unwrap();
}

#[test]
fn texture_to_texture_copies() {
    let mut a = Texture::new(TextureDesc::d2(8, 8, F::Rgba8Unorm).with_mips(2)).unwrap();
    let data = bytes(8 * 8 * 4, 7);
    a.write_packed(TextureCopy::default(), &data, [8, 8, 1])
        .unwrap();
    let mut b = Texture::new(TextureDesc::d2(4, 4, F::Rgba8UnormSrgb)).unwrap();
    let src = TextureCopy {
        origin: [2, 3, 0],
        ..TextureCopy::default()
    };
    let dst = TextureCopy {
        origin: [1, 1, 0],
        ..TextureCopy::default()
    };
    copy_texture_to_texture(&a, src, &mut b, dst, [3, 2, 1]).unwrap();
    let got = b.read_packed(TextureCopy::default(), [4, 4, 1]).unwrap();
    for y in 0..2 {
        for x in 0..3 {
            let s = ((3 + y) * 8 + 2 + x) * 4;
            let d = ((1 + y) * 4 + 1 + x) * 4;
            assert_eq!(got[d..d + 4], data[s..s + 4]);
        }
    }
    // Mip 0 → mip 1 of the same texture.
    let before = a.generation();
    a.copy_within(
        TextureCopy::default(),
        TextureCopy {
            mip_level: 1,
            ..TextureCopy::default()
        },
        [4, 4, 1],
    )
    .unwrap();
    assert!(a.generation() > before);
    let mip1 = a
        .read_packed(
            TextureCopy {
                mip_level: 1,
                ..TextureCopy::default()
            },
            [4, 4, 1],
        )
        .unwrap();
    assert_eq!(mip1[..16], data[..16]);
    // Same subresource overlaps; incompatible formats; out of range.
    assert!(
        a.copy_within(TextureCopy::default(), src, [2, 2, 1])
            .is_err()
    );
    let mut r = Texture::new(TextureDesc::d2(4, 4, F::R32Float)).unwrap();
    assert!(copy_texture_to_texture(&a, src, &mut r, dst, [1, 1, 1]).is_err());
    assert!(copy_texture_to_texture(&a, src, &mut b, dst, [4, 4, 1]).is_err());
    // Depth copies cover whole subresources.
    let d1 = Texture::new(TextureDesc::d2(4, 4, F::Depth32Float)).unwrap();
    let mut d2 = Texture::new(TextureDesc::d2(4, 4, F::Depth32Float)).unwrap();
    let z = TextureCopy::default();
    assert!(copy_texture_to_texture(&d1, z, &mut d2, z, [2, 2, 1]).is_err());
    copy_texture_to_texture(&d1, z, &mut d2, z, [4, 4, 1]).unwrap();
}

fn view_err(t: &Texture, d: TextureViewDesc) -> String {
    match TextureView::new(t, &d) {
        Err(TextureError::Validation(m)) => m,
        other => panic!("{d:?} should fail, got {other:?}"),
    }
}

#[test]
fn view_validation_follows_webgpu() {
    let arr = Texture::new(
        TextureDesc::d2(16, 16, F::Rgba8Unorm)
            .with_layers(12)
            .with_mips(5),
    )
    .unwrap();
    let v = TextureView::whole(&arr).unwrap();
    assert_eq!(
        (v.dimension, v.mip_level_count, v.array_layer_count),
        (V::D2Array, 5, 12)
    );
    let cube = TextureView::new(
        &arr,
        &TextureViewDesc {
            dimension: Some(V::Cube),
            base_array_layer: 6,
            format: Some(F::Rgba8UnormSrgb),
            base_mip_level: 1,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((cube.array_layer_count, cube.mip_level_count), (6, 4));
    assert_eq!(cube.level_size(0), [8, 8, 6]);
    let ca = TextureView::new(
        &arr,
        &TextureViewDesc {
            dimension: Some(V::CubeArray),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(ca.layers(), 2);
    let d = TextureViewDesc::default;
    assert!(
        view_err(
            &arr,
            TextureViewDesc {
                format: Some(F::R32Uint),
                ..d()
            }
        )
        .contains("sibling")
    );
    assert!(
        view_err(
            &arr,
            TextureViewDesc {
                dimension: Some(V::CubeArray),
                array_layer_count: Some(8),
                ..d()
            }
        )
        .contains("multiple of 6")
    );
    assert!(
        view_err(
            &arr,
            TextureViewDesc {
                dimension: Some(V::Cube),
                base_array_layer: 8,
                ..d()
            }
        )
        .contains("layers")
    );
    assert!(
        view_err(
            &arr,
            TextureViewDesc {
                dimension: Some(V::D2),
                array_layer_count: Some(2),
                ..d()
            }
        )
        .contains("one layer")
    );
    assert!(
        view_err(
            &arr,
            TextureViewDesc {
                base_mip_level: 5,
                ..d()
            }
        )
        .contains("mip")
    );
    assert!(
        view_err(
            &arr,
            TextureViewDesc {
                base_mip_level: 2,
                mip_level_count: Some(4),
                ..d()
            }
        )
        .contains("mips")
    );
    assert!(
        view_err(
            &arr,
            TextureViewDesc {
                dimension: Some(V::D3),
                ..d()
            }
        )
        .contains("D3")
    );
    assert!(
        view_err(
            &arr,
            TextureViewDesc {
                aspect: TextureAspect::DepthOnly,
                ..d()
            }
        )
        .contains("aspect")
    );
    let rect = Texture::new(TextureDesc::d2(8, 4, F::R8Unorm).with_layers(6)).unwrap();
    assert!(
        view_err(
            &rect,
            TextureViewDesc {
                dimension: Some(V::Cube),
                ..d()
            }
        )
        .contains("square")
    );
    let ms = Texture::new(TextureDesc {
        sample_count: 4,
        ..TextureDesc::d2(8, 8, F::Rgba8Unorm)
    })
    .unwrap();
    assert!(
        view_err(
            &ms,
            TextureViewDesc {
                dimension: Some(V::D2Array),
                ..d()
            }
        )
        .contains("multisampled")
    );
    let ds = Texture::new(TextureDesc::d2(8, 8, F::Depth24PlusStencil8)).unwrap();
    let stencil = TextureView::new(
        &ds,
        &TextureViewDesc {
            aspect: TextureAspect::StencilOnly,
            ..d()
        },
    )
    .unwrap();
    assert_eq!(stencil.sample_type(), rastra_texture::SampleType::Uint);
}

#[test]
fn sampler_validation_follows_webgpu() {
    let d = SamplerDesc::default();
    Sampler::new(d).unwrap();
    let bad = |d: SamplerDesc| assert!(Sampler::new(d).is_err(), "{d:?}");
    bad(SamplerDesc {
        lod_min_clamp: -1.0,
        ..d
    });
    bad(SamplerDesc {
        lod_min_clamp: 4.0,
        lod_max_clamp: 2.0,
        ..d
    });
    bad(SamplerDesc {
        lod_max_clamp: f32::NAN,
        ..d
    });
    bad(SamplerDesc {
        max_anisotropy: 0,
        ..d
    });
    bad(SamplerDesc {
        max_anisotropy: 4,
        ..d
    });
    bad(SamplerDesc {
        max_anisotropy: 4,
        mipmap_filter: FilterMode::Nearest,
        ..SamplerDesc::trilinear()
    });
    let s = Sampler::new(SamplerDesc {
        max_anisotropy: 64,
        ..SamplerDesc::trilinear().with_address(AddressMode::Repeat)
    })
    .unwrap();
    assert_eq!(s.anisotropy(), 16);
}

/// A copy may name one aspect of a combined depth-stencil format: its bytes alone move, packed
/// in the linear data, and the other aspect keeps its value. Texture-to-texture copies move
/// every aspect, and depth24plus's depth bits are not copied on their own.
#[test]
fn single_aspect_copies_of_combined_formats() {
    let at = |aspect| TextureCopy {
        aspect,
        ..TextureCopy::default()
    };
    // Depth32FloatStencil8: 8-byte texels (f32 depth, stencil, padding).
    let mut t = Texture::new(desc(D::D2, [3, 2, 1], 1, 1, F::Depth32FloatStencil8)).unwrap();
    let depth: Vec<u8> = (0..6)
        .flat_map(|i| (i as f32 * 0.125).to_le_bytes())
        .collect();
    let stencil: Vec<u8> = (10..16).collect();
    t.write_packed(at(TextureAspect::DepthOnly), &depth, [3, 2, 1])
        .unwrap();
    t.write_packed(at(TextureAspect::StencilOnly), &stencil, [3, 2, 1])
        .unwrap();
    assert_eq!(
        t.read_packed(at(TextureAspect::DepthOnly), [3, 2, 1])
            .unwrap(),
        depth
    );
    assert_eq!(
        t.read_packed(at(TextureAspect::StencilOnly), [3, 2, 1])
            .unwrap(),
        stencil
    );
    let whole = t.read_packed(at(TextureAspect::All), [3, 2, 1]).unwrap();
    assert_eq!(&whole[8..12], &0.125f32.to_le_bytes());
    assert_eq!(whole[12], 11);
    // Depth24PlusStencil8: stencil in byte 3; the depth bits alone are not copyable.
    let mut t = Texture::new(desc(D::D2, [2, 2, 1], 1, 1, F::Depth24PlusStencil8)).unwrap();
    t.write_packed(at(TextureAspect::All), &[0xAB; 16], [2, 2, 1])
        .unwrap();
    t.write_packed(at(TextureAspect::StencilOnly), &[1, 2, 3, 4], [2, 2, 1])
        .unwrap();
    let whole = t.read_packed(at(TextureAspect::All), [2, 2, 1]).unwrap();
    assert_eq!(&whole[..8], &[0xAB, 0xAB, 0xAB, 1, 0xAB, 0xAB, 0xAB, 2]);
    assert!(matches!(
        t.read_packed(at(TextureAspect::DepthOnly), [2, 2, 1]),
        Err(TextureError::Unsupported(_))
    ));
    let mut other = Texture::new(desc(D::D2, [2, 2, 1], 1, 1, F::Depth24PlusStencil8)).unwrap();
    assert!(
        copy_texture_to_texture(
            &t,
            at(TextureAspect::StencilOnly),
            &mut other,
            at(TextureAspect::StencilOnly),
            [2, 2, 1]
        )
        .is_err()
    );
    copy_texture_to_texture(
        &t,
        at(TextureAspect::All),
        &mut other,
        at(TextureAspect::All),
        [2, 2, 1],
    )
    .unwrap();
    assert_eq!(
        other
            .read_packed(at(TextureAspect::All), [2, 2, 1])
            .unwrap(),
        whole
    );
}

/// The ROPs write a 2×2 quad (even x and y) as one range: its pixels are adjacent in
/// memory, in quad order (x first), for every surface of every size and sample count.
#[test]
fn a_quads_pixels_are_adjacent() {
    for (size, samples, format) in [
        ([37, 21, 1], 1, F::Rgba8Unorm),
        ([64, 8, 1], 4, F::Rgba16Float),
        ([9, 33, 1], 1, F::Depth32Float),
    ] {
        let t = Texture::new(desc(D::D2, size, 1, samples, format)).unwrap();
        let s = t.surface(0, 0).unwrap();
        for y in (0..size[1]).step_by(2) {
            for x in (0..size[0]).step_by(2) {
                let at = s.pixel(x, y);
                for i in 0..4 {
                    let (px, py) = (x + (i & 1), y + (i >> 1));
                    assert_eq!(s.pixel(px, py), at + i as usize * s.pixel_bytes);
                }
                assert!(at + 4 * s.pixel_bytes <= s.base + s.bytes);
            }
        }
    }
}
