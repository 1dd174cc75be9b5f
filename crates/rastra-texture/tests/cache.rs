//! The texel cache model on T4's scenario: mip-mapped, screen-aligned bilinear sampling
//! walked the way rastra's rasterizer emits quads (64×64 tiles, 8×8 blocks, 2×2 quads).
//! T4: "the actual measured value with bilinear filtering is around 1.25 misses/request".
//! Here a request is one bilinear footprint; "texel misses" are the texels L1 fills bring
//! in (line misses × 16). Also: results never depend on the cache geometry, and compressed
//! blocks are decoded about once per 16 requests (T4's "about 0.08 blocks per sample").

mod common;
use common::*;

use rastra_texture::{
    CacheConfig, FilterMode, Quad, SamplerDesc, TexelCacheStats, Texture, TextureCopy, TextureDesc,
    TextureFormat as F, TextureUnit,
};

/// Quads of a `w`×`h` screen in rasterizer order: 64×64 tiles, 8×8 blocks, quads.
fn tiled_quads(w: u32, h: u32) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    for ty in (0..h).step_by(64) {
        for tx in (0..w).step_by(64) {
            for by in (ty..(ty + 64).min(h)).step_by(8) {
                for bx in (tx..(tx + 64).min(w)).step_by(8) {
                    for qy in (by..by + 8).step_by(2) {
                        for qx in (bx..bx + 8).step_by(2) {
                            v.push((qx, qy));
                        }
                    }
                }
            }
        }
    }
    v
}

/// Quads in scanline order (rows of quads across the whole screen).
fn scanline_quads(w: u32, h: u32) -> Vec<(u32, u32)> {
    (0..h / 2)
        .flat_map(|y| (0..w / 2).map(move |x| (2 * x, 2 * y)))
        .collect()
}

fn mipmapped(format: F, size: u32) -> Texture {
    let levels = 32 - size.leading_zeros();
    let mut t = Texture::new(TextureDesc::d2(size, size, format).with_mips(levels)).unwrap();
    let mut rng = Rng(99);
    for l in 0..levels {
        let [w, h, _] = t.desc().physical_mip_size(l);
        let (bw, bh) = format.block_dims();
        let n = (w / bw * h / bh) as usize * format.block_size();
        let data: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        let at = TextureCopy {
            mip_level: l,
            ..TextureCopy::default()
        };
        t.write_packed(at, &data, [w, h, 1]).unwrap();
    }
    t
}

/// Walks a `screen`² screen mapped onto the whole texture (λ = log2(size / screen)) with
/// bilinear + nearest-mip filtering; returns the stats of the walk.
fn walk(u: &mut TextureUnit, t: &Texture, screen: u32, order: &[(u32, u32)]) -> TexelCacheStats {
    let v = view(t);
    let s = sampler(SamplerDesc {
        mag_filter: FilterMode::Linear,
        min_filter: FilterMode::Linear,
        mipmap_filter: FilterMode::Nearest,
        ..SamplerDesc::default()
    });
    u.reset_stats();
    let d = 1.0 / screen as f32;
    for &(x, y) in order {
        u.sample(t, &v, &s, &Quad::screen(x, y, d, d)).unwrap();
    }
    u.stats()
}

fn report(name: &str, st: &TexelCacheStats) {
    println!(
        "{name}: {} requests, L1 hit rate {:.3}, {:.4} line misses/request, {:.3} texel \
         misses/request, L2 {} hits / {} misses, {} KiB from memory, {} blocks decoded \
         ({:.4}/request)",
        st.requests,
        st.l1_hit_rate(),
        st.line_misses_per_request(),
        st.texel_misses_per_request(),
        st.l2_hits,
        st.l2_misses,
        st.bytes_from_memory / 1024,
        st.blocks_decoded,
        st.blocks_decoded as f64 / st.requests.max(1) as f64,
    );
}

#[test]
fn misses_per_bilinear_request_on_a_screen_aligned_mipmapped_walk() {
    let t = mipmapped(F::Rgba8Unorm, 512);
    let mut u = TextureUnit::new(CacheConfig::default());
    // 256² screen over a 512² texture: λ = 1, mip 1 (256²) at one texel per pixel.
    let st = walk(&mut u, &t, 256, &tiled_quads(256, 256));
    report("rgba8 512² mip-mapped, 256² screen, tiled order", &st);
    assert_eq!(st.requests, 256 * 256);
    let tm = st.texel_misses_per_request();
    assert!((0.9..1.6).contains(&tm), "texel misses per request {tm}");
    // Every 64-byte L2 line of mip 1 (256² × 4 B = 256 KiB) is fetched about once.
    assert!(st.bytes_from_memory >= 256 * 1024 && st.bytes_from_memory < 320 * 1024);

    let scan = walk(&mut u, &t, 256, &scanline_quads(256, 256));
    report("rgba8 512² mip-mapped, 256² screen, scanline order", &scan);
    assert!(scan.texel_misses_per_request() >= tm * 0.95);

    // A big enough L1 holds the whole mip: then misses drop to the compulsory ones (T4:
    // "drops dramatically as soon as your texture cache is large enough").
    let mut big = TextureUnit::new(CacheConfig {
        l1_lines: 8192,
        l1_ways: 16,
        ..CacheConfig::default()
    });
    walk(&mut big, &t, 256, &tiled_quads(256, 256));
    let again = walk(&mut big, &t, 256, &tiled_quads(256, 256));
    report("second pass with a 2 MiB L1", &again);
    assert_eq!(again.l1_misses, 0);
}

#[test]
fn compressed_blocks_decode_at_fill() {
    let t = mipmapped(F::Bc1RgbaUnormSrgb, 512);
    let mut u = TextureUnit::new(CacheConfig::default());
    let st = walk(&mut u, &t, 256, &tiled_quads(256, 256));
    report("bc1-srgb 512² mip-mapped, 256² screen, tiled order", &st);
    let per_request = st.blocks_decoded as f64 / st.requests as f64;
    assert!((0.05..0.1).contains(&per_request), "{per_request}");
    assert_eq!(st.blocks_decoded, st.l1_misses); // one 4×4 block per 4×4 line
}

#[test]
fn results_do_not_depend_on_the_cache() {
    let t = mipmapped(F::Rgba8UnormSrgb, 64);
    let v = view(&t);
    let s = sampler(SamplerDesc {
        max_anisotropy: 8,
        ..SamplerDesc::trilinear().with_address(rastra_texture::AddressMode::MirrorRepeat)
    });
    let tiny = CacheConfig {
        l1_lines: 1,
        l1_ways: 1,
        line_width: 1,
        line_height: 1,
        l2_bytes: 64,
        l2_line_bytes: 64,
        l2_ways: 1,
    };
    let mut a = TextureUnit::new(CacheConfig::default());
    let mut b = TextureUnit::new(tiny);
    let mut rng = Rng(5);
    for _ in 0..500 {
        let c = [rng.f32() * 3.0 - 1.0, rng.f32() * 3.0 - 1.0];
        let d = rng.f32() * 0.3;
        let q = Quad::uv([
            c,
            [c[0] + d, c[1]],
            [c[0], c[1] + d * 0.2],
            [c[0] + d, c[1] + d * 0.2],
        ]);
        let ra = a.sample(&t, &v, &s, &q).unwrap();
        let rb = b.sample(&t, &v, &s, &q).unwrap();
        assert_eq!(ra, rb);
    }
    assert!(b.stats().l1_misses > a.stats().l1_misses);
    // A write makes cached lines stale: the next sample sees the new texel.
    let mut t2 = Texture::new(TextureDesc::d2(4, 4, F::R8Unorm)).unwrap();
    let v2 = view(&t2);
    let p = point([0.1, 0.1, 0.0]);
    let s2 = default_sampler();
    assert_eq!(
        a.sample_level(&t2, &v2, &s2, &p, [0.0; 4]).unwrap()[0][0],
        0.0
    );
    t2.write_packed(TextureCopy::default(), &[255], [1, 1, 1])
        .unwrap();
    assert_eq!(
        a.sample_level(&t2, &v2, &s2, &p, [0.0; 4]).unwrap()[0][0],
        1.0
    );
}

/// A line is the texels of one interpretation of one texture: an sRGB and a linear view of
/// the same texture, sampled in turn through one unit, each read their own decoding (and
/// the second view's first read misses although the bytes are cached for the first).
#[test]
fn views_of_one_texture_do_not_share_lines() {
    let mut t = Texture::new(TextureDesc::d2(8, 8, F::Rgba8Unorm)).unwrap();
    t.write_packed(TextureCopy::default(), &[128u8; 8 * 8 * 4], [8, 8, 1])
        .unwrap();
    let linear = view(&t);
    let srgb = view_with(
        &t,
        rastra_texture::TextureViewDesc {
            format: Some(F::Rgba8UnormSrgb),
            ..Default::default()
        },
    );
    let s = default_sampler();
    let p = point([0.3, 0.6, 0.0]);
    let mut u = TextureUnit::new(CacheConfig::default());
    let (lin, dec) = (128.0 / 255.0, rastra_texture::format::srgb_to_linear8(128));
    for round in 0..3 {
        let a = u.sample_level(&t, &linear, &s, &p, [0.0; 4]).unwrap()[0];
        let b = u.sample_level(&t, &srgb, &s, &p, [0.0; 4]).unwrap()[0];
        assert_eq!(a[..3], [lin; 3], "round {round}");
        assert_eq!(b[..3], [dec; 3], "round {round}");
        assert_eq!(a[3], b[3], "alpha is linear in both");
    }
    assert_eq!(u.stats().l1_misses, 2, "one line per view, then hits");
}
