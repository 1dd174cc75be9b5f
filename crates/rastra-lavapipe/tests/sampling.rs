//! Texture sampling against lavapipe: every filter combination × address mode ×
//! representative format, magnified and minified (trilinear across mips), rendered by the
//! same frame on rastra and on lavapipe into an Rgba32Float target and compared within the
//! tolerances recorded here with their reasons. Skips, saying why, when lavapipe is not
//! installed.

use rastra::{
    AddressMode, BorderColor, BufferUsages, Color, ColorWrites, FilterMode, PrimitiveState,
    SamplerDescriptor, TextureDimension, TextureFormat, TextureViewDescriptor,
};
use rastra_lavapipe::Lavapipe;
use rastra_scene::{
    BufferData, DrawKind, DrawRecipe, Frame, PipelineRecipe, Resource, TextureData,
};

const SIZE: u32 = 48;

/// A full-screen triangle; the fragment shader maps pixels to texture coordinates
/// `uv = (p.xy / SIZE) * scale - offset` (outside [0, 1] for the address modes).
const SHADER: &str = r#"
struct Params { scale: vec2<f32>, offset: vec2<f32> }
@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<uniform> params: Params;

@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return vec4(f32(i & 1u) * 4.0 - 1.0, f32(i >> 1u) * 4.0 - 1.0, 0.0, 1.0);
}

@fragment fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    let uv = p.xy / 48.0 * params.scale - params.offset;
    return textureSample(t, s, uv);
}
"#;

fn lavapipe() -> Option<Lavapipe> {
    Lavapipe::new()
        .map_err(|why| eprintln!("skipping: {why}"))
        .ok()
}

/// Deterministic texel bytes: a hash of (level, x, y, byte).
fn texel_byte(level: u32, x: u32, y: u32, b: u32) -> u8 {
    let mut h = level
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(x.wrapping_mul(0x85EB_CA6B))
        .wrapping_add(y.wrapping_mul(0xC2B2_AE35))
        .wrapping_add(b.wrapping_mul(0x27D4_EB2F));
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    (h >> 8) as u8
}

/// A 16×16 texture with its full mip chain (5 levels) of `format`, each level's texels
/// generated independently (so a wrong level is visible).
fn texture(format: TextureFormat) -> TextureData {
    let levels = (0..5u32)
        .map(|level| {
            let side = 16u32 >> level;
            let (bw, bh) = format.block_dims();
            let (ew, eh) = (side.div_ceil(bw), side.div_ceil(bh));
            let block = format.block_size() as u32;
            let mut data = Vec::new();
            for y in 0..eh {
                for x in 0..ew {
                    for b in 0..block {
                        let mut v = texel_byte(level, x, y, b);
                        if format == TextureFormat::Rgba16Float && b % 2 == 1 {
                            // Keep halves finite and in [0, 2): exponent bits ≤ 0x3F.
                            v &= 0x3F;
                        }
                        data.push(v);
                    }
                }
            }
            data
        })
        .collect();
    TextureData {
        label: format!("{format:?}"),
        format,
        dimension: TextureDimension::D2,
        size: [16, 16, 1],
        levels,
        view: TextureViewDescriptor::default(),
    }
}

fn frame(format: TextureFormat, sampler: SamplerDescriptor, scale: f32) -> Frame {
    let params: Vec<u8> = [scale, scale, (scale - 1.0) / 2.0, (scale - 1.0) / 2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    Frame {
        name: format!("sample-{format:?}-{scale}"),
        width: SIZE,
        height: SIZE,
        samples: 1,
        color_format: TextureFormat::Rgba32Float,
        depth_format: None,
        clear_color: Color::TRANSPARENT,
        clear_depth: 1.0,
        blend_constant: Color::TRANSPARENT,
        shader: SHADER.into(),
        buffers: vec![BufferData {
            label: "params".into(),
            data: params,
            usage: BufferUsages::UNIFORM,
        }],
        textures: vec![texture(format)],
        samplers: vec![sampler],
        pipelines: vec![PipelineRecipe {
            vs_entry: "vs".into(),
            fs_entry: "fs".into(),
            vertex_buffers: Vec::new(),
            primitive: PrimitiveState::default(),
            depth: None,
            blend: None,
            write_mask: ColorWrites::ALL,
        }],
        draws: vec![DrawRecipe {
            pipeline: 0,
            vertex_buffers: Vec::new(),
            index_buffer: None,
            bindings: vec![
                (0, Resource::Texture(0)),
                (1, Resource::Sampler(0)),
                (2, Resource::Buffer(0)),
            ],
            kind: DrawKind::Vertices(0..3),
            instances: 0..1,
        }],
    }
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Per-pixel largest component difference, as (max, pixels above `tol`).
fn compare(a: &[f32], b: &[f32], tol: f32) -> (f32, usize) {
    let mut max = 0f32;
    let mut over = 0;
    for (pa, pb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let d = pa
            .iter()
            .zip(pb)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max);
        max = max.max(d);
        if d > tol {
            over += 1;
        }
    }
    (max, over)
}

#[test]
fn filters_address_modes_and_formats_match_lavapipe() {
    let Some(lp) = lavapipe() else { return };
    use FilterMode::{Linear, Nearest};
    let formats = [
        TextureFormat::Rgba8Unorm,
        TextureFormat::Rgba8UnormSrgb,
        TextureFormat::Rgba16Float,
        TextureFormat::Bc1RgbaUnorm,
    ];
    let filters = [
        (Nearest, Nearest, Nearest),
        (Linear, Linear, Nearest),
        (Linear, Linear, Linear),
    ];
    let modes = [
        AddressMode::Repeat,
        AddressMode::MirrorRepeat,
        AddressMode::ClampToEdge,
        AddressMode::ClampToBorder,
    ];
    let mut failures = Vec::new();
    let mut cases = 0;
    for format in formats {
        for (mag, min, mip) in filters {
            for mode in modes {
                // 1.5: magnified (¾ texel per pixel), 6: minified (2 texels per pixel,
                // LOD 1), 10: LOD ≈ 1.74 (trilinear blends levels 1 and 2).
                for scale in [1.5f32, 6.0, 10.0] {
                    let sampler = SamplerDescriptor {
                        mag_filter: mag,
                        min_filter: min,
                        mipmap_filter: mip,
                        border_color: BorderColor::OpaqueWhite,
                        ..SamplerDescriptor::default().with_address(mode)
                    };
                    let f = frame(format, sampler, scale);
                    let ours = floats(&f.render(&Default::default(), 1).unwrap().pixels);
                    let theirs = floats(&lp.render(&f, 1).unwrap().pixels);
                    // Tolerances, each from a measured cause (values are in the texture's
                    // range: 1 for unorm, 2 for the half-float texture).
                    let range = if format == TextureFormat::Rgba16Float {
                        2.0
                    } else {
                        1.0
                    };
                    let tol = if mip == Linear && scale == 10.0 {
                        // Fractional LOD (λ ≈ 1.74): lavapipe's level blend weight differs
                        // from the exact log2 by up to ~0.045 (measured max difference
                        // 0.047 of the range), so trilinear results differ by that weight
                        // times the two levels' difference.
                        0.06 * range
                    } else if format == TextureFormat::Bc1RgbaUnorm {
                        // BC1's interpolated palette entries: rastra decodes (2c0 + c1) / 3
                        // exactly (bcdec), lavapipe rounds them to 8 bits: up to 2/255.
                        2.5 / 255.0
                    } else if format == TextureFormat::Rgba8UnormSrgb {
                        // lavapipe's sRGB → linear conversion is within 1.2e-3 of the
                        // exact curve rastra uses.
                        2e-3
                    } else if mag == Nearest {
                        1e-3
                    } else {
                        // Bilinear: lavapipe's 8-bit fixed-point weights.
                        1.0 / 128.0
                    };
                    // Nearest sampling may pick the neighbouring texel where a coordinate
                    // lies within an ulp of a texel boundary.
                    let allowed = if mag == Nearest {
                        (SIZE * SIZE / 50) as usize
                    } else {
                        0
                    };
                    let (max, over) = compare(&ours, &theirs, tol);
                    cases += 1;
                    if over > allowed {
                        failures.push(format!(
                            "{format:?} {mag:?}/{min:?}/{mip:?} {mode:?} ×{scale}: {over} \
                             pixels differ by more than {tol} (max {max})"
                        ));
                    }
                }
            }
        }
    }
    eprintln!("{cases} sampling cases compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
