//! Textures through the API: mip chains and arrays written with a row pitch, views,
//! samplers, sampling from fragment and compute shaders (implicit LOD from quads, explicit
//! level, loads, queries), render-to-texture then sample, copies, texel-cache counters, and
//! the validation rules of texture bindings; storage textures written by compute and
//! fragment shaders.

mod common;

use common::*;
use rastra::*;

fn texture(device: &Device, size: [u32; 3], mips: u32, format: TextureFormat) -> Texture {
    device
        .create_texture(&TextureDescriptor {
            label: None,
            size: Extent3d {
                width: size[0],
                height: size[1],
                depth_or_array_layers: size[2],
            },
            mip_level_count: mips,
            sample_count: 1,
            dimension: TextureDimension::D2,
            format,
            usage: TextureUsages::TEXTURE_BINDING
                | TextureUsages::COPY_DST
                | TextureUsages::COPY_SRC,
        })
        .unwrap()
}

/// Fills every mip of `t` (one layer) with one RGBA8 colour per level, written with a
/// padded row pitch.
fn fill_levels(queue: &Queue, t: &Texture, colors: &[[u8; 4]]) {
    for (level, c) in colors.iter().enumerate() {
        let [w, h, _] = t.mip_size(level as u32);
        let pitch = w * 4 + 12;
        let mut data = vec![0xEEu8; (pitch * h) as usize];
        for y in 0..h {
            for x in 0..w {
                let at = (y * pitch + x * 4) as usize;
                data[at..at + 4].copy_from_slice(c);
            }
        }
        queue
            .write_texture_region(
                &TexelCopyTextureInfo {
                    texture: t,
                    mip_level: level as u32,
                    origin: [0; 3],
                    aspect: TextureAspect::All,
                },
                &data,
                TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(pitch),
                    rows_per_image: None,
                },
                Extent3d {
                    width: w,
                    height: h,
                    depth_or_array_layers: 1,
                },
            )
            .unwrap();
    }
}

fn group(device: &Device, entries: &[BindingResource<'_>]) -> Result<BindGroup, Error> {
    let entries: Vec<BindGroupEntry<'_>> = entries
        .iter()
        .enumerate()
        .map(|(i, r)| BindGroupEntry {
            binding: i as u32,
            resource: r.clone(),
        })
        .collect();
    device.create_bind_group(&BindGroupDescriptor {
        label: None,
        entries: &entries,
    })
}

/// Draws a full-screen triangle with `fs` into a `w`×`h` RGBA8 target; returns its texels.
fn draw_fullscreen(
    device: &Device,
    queue: &Queue,
    fs: &str,
    bind: &BindGroup,
    w: u32,
    h: u32,
) -> Result<Vec<u8>, Error> {
    let src = format!(
        "@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {{
            let p = vec2(f32(i & 1u) * 4.0 - 1.0, f32(i >> 1u) * 4.0 - 1.0);
            return vec4(p, 0.0, 1.0);
        }}
        {fs}"
    );
    let m = module(device, &src)?;
    let p = pipeline(device, &m, &[], TextureFormat::Rgba8Unorm)?;
    let t = target(device, w, h, TextureFormat::Rgba8Unorm, 1);
    let view = t.create_view();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            label: None,
            color_attachments: &clear_pass(&view),
            depth_stencil_attachment: None,
            occlusion_query_set: None,
        });
        pass.set_pipeline(&p);
        pass.set_bind_group(0, bind);
        pass.draw(0..3, 0..1);
    }
    queue.submit([encoder.finish()?])?;
    queue.read_texture(&t)
}

const LEVELS: [[u8; 4]; 4] = [
    [255, 0, 0, 255],
    [0, 255, 0, 255],
    [0, 0, 255, 255],
    [255, 255, 0, 255],
];

#[test]
fn implicit_lod_follows_the_quad_footprint() {
    let (device, queue) = device();
    let t = texture(&device, [8, 8, 1], 4, TextureFormat::Rgba8Unorm);
    fill_levels(&queue, &t, &LEVELS);
    let view = t.create_view();
    let sampler = device
        .create_sampler(&SamplerDescriptor {
            min_filter: FilterMode::Nearest,
            mipmap_filter: FilterMode::Nearest,
            ..Default::default()
        })
        .unwrap();
    let bind = group(
        &device,
        &[
            BindingResource::TextureView(&view),
            BindingResource::Sampler(&sampler),
        ],
    )
    .unwrap();
    let fs = "@group(0) @binding(0) var t: texture_2d<f32>;
        @group(0) @binding(1) var s: sampler;
        @fragment fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
            return textureSample(t, s, p.xy / vec2(SIZE));
        }";
    // A w×w target maps the 8×8 texture at 8/w texels per pixel: LOD log2(8/w).
    for (w, level) in [(8u32, 0usize), (4, 1), (2, 2), (1, 3)] {
        let fs = fs.replace("SIZE", &format!("{w}.0"));
        let texels = draw_fullscreen(&device, &queue, &fs, &bind, w, w).unwrap();
        for px in texels.chunks(4) {
            assert_eq!(px, LEVELS[level], "{w}×{w} target samples level {level}");
        }
        let total = queue.take_stats().total();
        assert_eq!(total.instructions_texture, total.pixel_warps);
        assert!(total.texel_requests > 0 && total.texel_l1_misses > 0);
        assert!(total.texture_bytes_from_memory > 0);
    }
}

#[test]
fn compute_loads_levels_and_queries() {
    let (device, queue) = device();
    let t = texture(&device, [8, 4, 3], 3, TextureFormat::Rgba8Unorm);
    for layer in 0..3u32 {
        for level in 0..3u32 {
            let [w, h, _] = t.mip_size(level);
            let v = (layer * 16 + level) as u8;
            let data: Vec<u8> = (0..w * h).flat_map(|i| [v, i as u8, 0, 255]).collect();
            queue
                .write_texture_region(
                    &TexelCopyTextureInfo {
                        texture: &t,
                        mip_level: level,
                        origin: [0, 0, layer],
                        aspect: TextureAspect::All,
                    },
                    &data,
                    TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(w * 4),
                        rows_per_image: Some(h),
                    },
                    Extent3d {
                        width: w,
                        height: h,
                        depth_or_array_layers: 1,
                    },
                )
                .unwrap();
        }
    }
    let view = t.create_view();
    assert_eq!(view.dimension(), TextureViewDimension::D2Array);
    let out = device
        .create_buffer(&BufferDescriptor {
            label: None,
            size: 64,
            usage: BufferUsages::STORAGE | BufferUsages::COPY_SRC,
        })
        .unwrap();
    let bind = group(
        &device,
        &[
            BindingResource::TextureView(&view),
            BindingResource::Buffer(BufferBinding {
                buffer: &out,
                offset: 0,
                size: None,
            }),
        ],
    )
    .unwrap();
    let m = module(
        &device,
        "@group(0) @binding(0) var t: texture_2d_array<f32>;
        @group(0) @binding(1) var<storage, read_write> out: array<u32, 16>;
        @compute @workgroup_size(1) fn main() {
            let d = textureDimensions(t, 1);
            out[0] = d.x; out[1] = d.y;
            out[2] = textureNumLevels(t); out[3] = textureNumLayers(t);
            out[4] = u32(round(textureLoad(t, vec2(3, 1), 2, 1).x * 255.0));
            out[5] = u32(round(textureLoad(t, vec2(3, 1), 2, 1).y * 255.0));
            out[6] = u32(round(textureLoad(t, vec2(1, 0), 1, 2).x * 255.0));
            // Out of bounds: zeros (robust access).
            out[7] = u32(textureLoad(t, vec2(8, 0), 0, 0).w);
            out[8] = u32(textureLoad(t, vec2(0, 0), 0, 5).w);
            out[9] = u32(textureLoad(t, vec2(0, 0), 7, 0).w);
        }",
    )
    .unwrap();
    let p = device
        .create_compute_pipeline(&ComputePipelineDescriptor {
            label: None,
            module: &m,
            entry_point: None,
            constants: &[],
        })
        .unwrap();
    let readback = device
        .create_buffer(&BufferDescriptor {
            label: None,
            size: 64,
            usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
        })
        .unwrap();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_compute_pass(None);
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &bind);
        pass.dispatch_workgroups(1, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&out, 0, &readback, 0, 64);
    queue.submit([encoder.finish().unwrap()]).unwrap();
    let words: Vec<u32> = readback
        .read()
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(&words[..10], &[4, 2, 3, 3, 2 * 16 + 1, 7, 16 + 2, 0, 0, 0]);
}

#[test]
fn render_to_texture_then_sample_and_copy() {
    let (device, queue) = device();
    let rt = device
        .create_texture(&TextureDescriptor {
            label: None,
            size: Extent3d {
                width: 16,
                height: 16,
                depth_or_array_layers: 2,
            },
            mip_level_count: 2,
            sample_count: 1,
            dimension: TextureDimension::D2,
            format: TextureFormat::Rgba8Unorm,
            usage: TextureUsages::RENDER_ATTACHMENT
                | TextureUsages::TEXTURE_BINDING
                | TextureUsages::COPY_SRC,
        })
        .unwrap();
    // Clear mip 1 of layer 1 through a single-subresource view.
    let level1 = rt
        .create_view_with(&TextureViewDescriptor {
            dimension: Some(TextureViewDimension::D2),
            base_mip_level: 1,
            mip_level_count: Some(1),
            base_array_layer: 1,
            array_layer_count: Some(1),
            ..Default::default()
        })
        .unwrap();
    let mut encoder = device.create_command_encoder();
    encoder.begin_render_pass(&RenderPassDescriptor {
        label: None,
        color_attachments: &[Some(RenderPassColorAttachment {
            view: &level1,
            resolve_target: None,
            ops: Operations {
                load: LoadOp::Clear(Color {
                    r: 0.0,
                    g: 0.5,
                    b: 1.0,
                    a: 1.0,
                }),
                store: StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        occlusion_query_set: None,
    });
    // Copy that subresource into a buffer with a 256-byte pitch.
    let buffer = device
        .create_buffer(&BufferDescriptor {
            label: None,
            size: 256 * 8,
            usage: BufferUsages::COPY_DST | BufferUsages::MAP_READ,
        })
        .unwrap();
    encoder.copy_texture_to_buffer_region(
        &TexelCopyTextureInfo {
            texture: &rt,
            mip_level: 1,
            origin: [0, 0, 1],
            aspect: TextureAspect::All,
        },
        &buffer,
        TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(256),
            rows_per_image: None,
        },
        Extent3d {
            width: 8,
            height: 8,
            depth_or_array_layers: 1,
        },
    );
    queue.submit([encoder.finish().unwrap()]).unwrap();
    let bytes = buffer.read().unwrap();
    for y in 0..8 {
        for x in 0..8 {
            let at = y * 256 + x * 4;
            assert_eq!(&bytes[at..at + 4], &[0, 128, 255, 255], "({x}, {y})");
        }
    }
    // Sample the rendered level from a shader; the other layer is still zero.
    let sampler = device
        .create_sampler(&SamplerDescriptor::default())
        .unwrap();
    let view = rt.create_view();
    let bind = group(
        &device,
        &[
            BindingResource::TextureView(&view),
            BindingResource::Sampler(&sampler),
        ],
    )
    .unwrap();
    let texels = draw_fullscreen(
        &device,
        &queue,
        "@group(0) @binding(0) var t: texture_2d_array<f32>;
        @group(0) @binding(1) var s: sampler;
        @fragment fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
            return textureSampleLevel(t, s, p.xy / 4.0, i32(p.x) & 1, 1.0);
        }",
        &bind,
        4,
        1,
    )
    .unwrap();
    assert_eq!(
        texels,
        [0, 0, 0, 0, 0, 128, 255, 255, 0, 0, 0, 0, 0, 128, 255, 255]
    );
}

#[test]
fn texture_bindings_are_validated() {
    let (device, queue) = device();
    let t = texture(&device, [4, 4, 1], 1, TextureFormat::Rgba8Uint);
    let view = t.create_view();
    let filtering = device
        .create_sampler(&SamplerDescriptor::default())
        .unwrap();
    let comparison = device
        .create_sampler(&SamplerDescriptor {
            compare: Some(CompareFunction::Less),
            ..Default::default()
        })
        .unwrap();
    let fs = "@group(0) @binding(0) var t: texture_2d<f32>;
        @group(0) @binding(1) var s: sampler;
        @fragment fn fs() -> @location(0) vec4<f32> { return textureSample(t, s, vec2(0.5)); }";
    // A uint texture where the shader declares float texels.
    let bind = group(
        &device,
        &[
            BindingResource::TextureView(&view),
            BindingResource::Sampler(&filtering),
        ],
    )
    .unwrap();
    let err = draw_fullscreen(&device, &queue, fs, &bind, 2, 2).unwrap_err();
    assert!(
        matches!(&err, Error::Validation(m) if m.contains("Uint")),
        "{err}"
    );
    // A comparison sampler where the shader declares a filtering one.
    let f = texture(&device, [4, 4, 1], 1, TextureFormat::Rgba8Unorm);
    let fview = f.create_view();
    let bind = group(
        &device,
        &[
            BindingResource::TextureView(&fview),
            BindingResource::Sampler(&comparison),
        ],
    )
    .unwrap();
    let err = draw_fullscreen(&device, &queue, fs, &bind, 2, 2).unwrap_err();
    assert!(
        matches!(&err, Error::Validation(m) if m.contains("comparison")),
        "{err}"
    );
    // A cube view needs six layers.
    let err = f
        .create_view_with(&TextureViewDescriptor {
            dimension: Some(TextureViewDimension::Cube),
            ..Default::default()
        })
        .unwrap_err();
    assert!(matches!(err, Error::Validation(_)), "{err}");
    // A texture without TEXTURE_BINDING usage cannot be bound.
    let rt = target(&device, 4, 4, TextureFormat::Rgba8Unorm, 1);
    let rview = rt.create_view();
    assert!(matches!(
        group(&device, &[BindingResource::TextureView(&rview)]),
        Err(Error::Validation(_))
    ));
}

/// Draws the 256² screen-aligned bilinear scene of the texel-cache tests on a device with
/// `texel_cache`; returns the image and the frame's counters.
fn screen_aligned_bilinear(texel_cache: TexelCacheConfig) -> (Vec<u8>, Counters) {
    let (device, queue) = Device::new(&DeviceDescriptor {
        texel_cache,
        ..Default::default()
    });
    let t = texture(&device, [512, 512, 1], 10, TextureFormat::Rgba8Unorm);
    let texels: Vec<u8> = (0..512 * 512 * 4)
        .map(|i: u32| (i * 7 % 251) as u8)
        .collect();
    queue.write_texture(&t, &texels).unwrap();
    let level1: Vec<u8> = (0..256 * 256 * 4)
        .map(|i: u32| (i * 13 % 241) as u8)
        .collect();
    queue
        .write_texture_region(
            &TexelCopyTextureInfo {
                texture: &t,
                mip_level: 1,
                origin: [0; 3],
                aspect: TextureAspect::All,
            },
            &level1,
            TexelCopyBufferLayout::packed(TextureFormat::Rgba8Unorm, [256, 256, 1]),
            Extent3d {
                width: 256,
                height: 256,
                depth_or_array_layers: 1,
            },
        )
        .unwrap();
    let view = t.create_view();
    let sampler = device
        .create_sampler(&SamplerDescriptor {
            mag_filter: FilterMode::Linear,
            min_filter: FilterMode::Linear,
            mipmap_filter: FilterMode::Nearest,
            ..Default::default()
        })
        .unwrap();
    let bind = group(
        &device,
        &[
            BindingResource::TextureView(&view),
            BindingResource::Sampler(&sampler),
        ],
    )
    .unwrap();
    queue.take_stats();
    let fs = "@group(0) @binding(0) var t: texture_2d<f32>;
        @group(0) @binding(1) var s: sampler;
        @fragment fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
            return textureSample(t, s, (p.xy + vec2(0.37, 0.21)) / 256.0);
        }";
    let image = draw_fullscreen(&device, &queue, fs, &bind, 256, 256).unwrap();
    (image, queue.take_stats().total())
}

/// T4's texel-cache figure: for mip-mapped, bilinear, screen-aligned access, a request
/// brings in about 1.25 new texels when pixels are tracked one by one, whatever the cache
/// size — each pixel moves about one texel across the texture. rastra's pixel pipes track
/// quads whose L1 starts cold per screen tile and fills 4×4-texel lines, so the figure here
/// is "texels filled into L1 per bilinear request" on a 256² target showing a 512² texture
/// at one texel per pixel (mip level 1), shifted by a fraction of a texel so every
/// footprint straddles texels.
#[test]
fn texel_cache_fills_about_one_texel_per_bilinear_request() {
    let (_, stats) = screen_aligned_bilinear(TexelCacheConfig::default());
    let requests = stats.get("texel_requests").unwrap();
    // One bilinear footprint per pixel (helper lanes of edge quads included).
    assert_eq!(requests, 256 * 256);
    let filled = stats.get("texel_l1_texels_filled").unwrap() as f64 / requests as f64;
    // One new texel per pixel, plus the lines along tile edges that both neighbouring
    // tiles fetch (a tile's footprints reach one texel past its edge: 17 lines across
    // instead of 16 for a 64-pixel tile).
    eprintln!("texels filled per bilinear request: {filled:.3}");
    assert!((1.0..1.3).contains(&filled), "{filled}");
}

/// The cache geometry is the device's to choose and changes only the statistics: a 4-line
/// L1 thrashes where the default 256-line one does not; a 1-line-per-set L2 misses more.
#[test]
fn texel_cache_geometry_changes_statistics_not_images() {
    let (image, stats) = screen_aligned_bilinear(TexelCacheConfig::default());
    let tiny = TexelCacheConfig {
        l1_lines: 4,
        l1_ways: 1,
        l2_bytes: 4096,
        l2_ways: 1,
        ..TexelCacheConfig::default()
    };
    let (tiny_image, tiny_stats) = screen_aligned_bilinear(tiny);
    assert!(image == tiny_image, "the cache geometry changed the image");
    let get = |s: &Counters, n: &str| s.get(n).unwrap();
    assert_eq!(
        get(&stats, "texel_requests"),
        get(&tiny_stats, "texel_requests")
    );
    eprintln!(
        "L1 misses {} → {}, L2 misses {} → {}",
        get(&stats, "texel_l1_misses"),
        get(&tiny_stats, "texel_l1_misses"),
        get(&stats, "texel_l2_misses"),
        get(&tiny_stats, "texel_l2_misses")
    );
    assert!(get(&tiny_stats, "texel_l1_misses") > 2 * get(&stats, "texel_l1_misses"));
    assert!(get(&tiny_stats, "texel_l2_misses") > get(&stats, "texel_l2_misses"));
}

/// A texture with the usages storage-texture programs need.
fn storage_texture(device: &Device, w: u32, h: u32, mips: u32, format: TextureFormat) -> Texture {
    device
        .create_texture(&TextureDescriptor {
            label: None,
            size: Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: mips,
            sample_count: 1,
            dimension: TextureDimension::D2,
            format,
            usage: TextureUsages::STORAGE_BINDING
                | TextureUsages::TEXTURE_BINDING
                | TextureUsages::COPY_SRC,
        })
        .unwrap()
}

fn level_view(t: &Texture, level: u32) -> TextureView {
    t.create_view_with(&TextureViewDescriptor {
        base_mip_level: level,
        mip_level_count: Some(1),
        ..Default::default()
    })
    .unwrap()
}

fn dispatch(device: &Device, queue: &Queue, src: &str, bind: &BindGroup, groups: [u32; 3]) {
    let m = module(device, src).unwrap();
    let p = device
        .create_compute_pipeline(&ComputePipelineDescriptor {
            label: None,
            module: &m,
            entry_point: None,
            constants: &[],
        })
        .unwrap();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_compute_pass(None);
        pass.set_pipeline(&p);
        pass.set_bind_group(0, bind);
        pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
    }
    queue.submit([encoder.finish().unwrap()]).unwrap();
}

#[test]
fn storage_textures_written_by_compute_and_fragment_shaders() {
    let (device, queue) = device();
    // Compute writes level 0 (write-only), then a second dispatch builds level 1 from it:
    // level 0 sampled through a texture binding while level 1 is written through a
    // storage binding of the same texture.
    let t = storage_texture(&device, 16, 8, 2, TextureFormat::Rgba8Unorm);
    let (level0, level1) = (level_view(&t, 0), level_view(&t, 1));
    let bind = group(&device, &[BindingResource::TextureView(&level0)]).unwrap();
    dispatch(
        &device,
        &queue,
        "@group(0) @binding(0) var st: texture_storage_2d<rgba8unorm, write>;
        @compute @workgroup_size(8, 8) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            let size = textureDimensions(st);
            textureStore(st, id.xy, vec4(f32(id.x) / 15.0, f32(id.y) / 7.0, f32(size.x) / 255.0, 1.0));
        }",
        &bind,
        [2, 1, 1],
    );
    let img = queue.read_texture(&t).unwrap();
    let texel = |x: usize, y: usize| &img[(y * 16 + x) * 4..(y * 16 + x) * 4 + 4];
    assert_eq!(texel(0, 0), [0, 0, 16, 255]);
    assert_eq!(texel(15, 7), [255, 255, 16, 255]);
    assert_eq!(texel(3, 5), [51, 182, 16, 255]);
    let bind = group(
        &device,
        &[
            BindingResource::TextureView(&level0),
            BindingResource::TextureView(&level1),
        ],
    )
    .unwrap();
    dispatch(
        &device,
        &queue,
        "@group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<rgba8unorm, write>;
        @compute @workgroup_size(8, 4) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            let p = vec2<i32>(id.xy) * 2;
            let sum = textureLoad(src, p, 0) + textureLoad(src, p + vec2(1, 0), 0)
                + textureLoad(src, p + vec2(0, 1), 0) + textureLoad(src, p + vec2(1, 1), 0);
            textureStore(dst, id.xy, sum / 4.0);
        }",
        &bind,
        [1, 1, 1],
    );
    let mip = queue.read_texture_level(&t, 1).unwrap();
    // Level 1 texel (1, 2) averages level 0 texels x 2..4, y 4..6.
    let at = (2 * 8 + 1) * 4;
    let expect_r = ((2.0 / 15.0 + 3.0 / 15.0) / 2.0 * 255.0f32).round() as u8;
    let expect_g = ((4.0 / 7.0 + 5.0 / 7.0) / 2.0 * 255.0f32).round() as u8;
    assert!(mip[at].abs_diff(expect_r) <= 1 && mip[at + 1].abs_diff(expect_g) <= 1);

    // read_write r32uint: each invocation reads its texel and writes it back changed.
    let counters = storage_texture(&device, 4, 4, 1, TextureFormat::R32Uint);
    let view = counters.create_view();
    let bind = group(&device, &[BindingResource::TextureView(&view)]).unwrap();
    let bump = "@group(0) @binding(0) var c: texture_storage_2d<r32uint, read_write>;
        @compute @workgroup_size(4, 4) fn main(@builtin(local_invocation_id) id: vec3<u32>) {
            let v = textureLoad(c, id.xy).x;
            textureStore(c, id.xy, vec4(v * 2u + id.x + 1u));
        }";
    dispatch(&device, &queue, bump, &bind, [1, 1, 1]);
    dispatch(&device, &queue, bump, &bind, [1, 1, 1]);
    let words: Vec<u32> = queue
        .read_texture(&counters)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // x + 1, then 2(x + 1) + x + 1 = 3(x + 1).
    assert_eq!(&words[..4], &[3, 6, 9, 12]);

    // A fragment shader writes a storage texture as a side effect; lanes that discarded
    // (demoted to helpers) do not.
    let marks = storage_texture(&device, 8, 8, 1, TextureFormat::R32Float);
    let view = marks.create_view();
    let bind = group(&device, &[BindingResource::TextureView(&view)]).unwrap();
    draw_fullscreen(
        &device,
        &queue,
        "@group(0) @binding(0) var marks: texture_storage_2d<r32float, write>;
        @fragment fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
            if p.x + p.y > 8.0 {
                discard;
            }
            textureStore(marks, vec2<u32>(p.xy), vec4(p.x + 10.0 * p.y));
            return vec4(1.0);
        }",
        &bind,
        8,
        8,
    )
    .unwrap();
    let floats: Vec<f32> = queue
        .read_texture(&marks)
        .unwrap()
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(floats[0], 5.5);
    assert_eq!(floats[8 + 2], 2.5 + 15.0);
    assert_eq!(floats[7 * 8 + 3], 0.0, "discarded: no store");
}

#[test]
fn storage_texture_bindings_are_validated() {
    let (device, queue) = device();
    let t = storage_texture(&device, 8, 8, 2, TextureFormat::Rgba8Unorm);
    let run = |src: &str, entries: &[BindingResource<'_>]| -> Result<(), Error> {
        let bind = group(&device, entries)?;
        let m = module(&device, src)?;
        let p = device.create_compute_pipeline(&ComputePipelineDescriptor {
            label: None,
            module: &m,
            entry_point: None,
            constants: &[],
        })?;
        let mut encoder = device.create_command_encoder();
        {
            let mut pass = encoder.begin_compute_pass(None);
            pass.set_pipeline(&p);
            pass.set_bind_group(0, &bind);
            pass.dispatch_workgroups(1, 1, 1);
        }
        queue.submit([encoder.finish()?])
    };
    let write = "@group(0) @binding(0) var st: texture_storage_2d<rgba8unorm, write>;
        @compute @workgroup_size(1) fn main() { textureStore(st, vec2(0), vec4(1.0)); }";
    let level0 = level_view(&t, 0);
    let whole = t.create_view();
    let err = run(write, &[BindingResource::TextureView(&whole)]).unwrap_err();
    assert!(err.to_string().contains("one mip level"), "{err}");
    let wrong_format = write.replace("rgba8unorm, write", "rgba16float, write");
    let err = run(&wrong_format, &[BindingResource::TextureView(&level0)]).unwrap_err();
    assert!(err.to_string().contains("declared Rgba16Float"), "{err}");
    let read_write = write.replace("rgba8unorm, write", "rgba8unorm, read_write");
    let err = run(&read_write, &[BindingResource::TextureView(&level0)]).unwrap_err();
    assert!(err.to_string().contains("read_write access needs"), "{err}");
    // Writing level 0 while sampling a view that includes it.
    let both = "@group(0) @binding(0) var st: texture_storage_2d<rgba8unorm, write>;
        @group(0) @binding(1) var src: texture_2d<f32>;
        @compute @workgroup_size(1) fn main() {
            textureStore(st, vec2(0), textureLoad(src, vec2(0), 0));
        }";
    let err = run(
        both,
        &[
            BindingResource::TextureView(&level0),
            BindingResource::TextureView(&whole),
        ],
    )
    .unwrap_err();
    assert!(err.to_string().contains("also bound another way"), "{err}");
    // A texture without STORAGE_BINDING, and formats that cannot be storage textures.
    let plain = texture(&device, [8, 8, 1], 1, TextureFormat::Rgba8Unorm);
    let err = run(write, &[BindingResource::TextureView(&plain.create_view())]).unwrap_err();
    assert!(err.to_string().contains("STORAGE_BINDING"), "{err}");
    let srgb = device.create_texture(&TextureDescriptor {
        label: None,
        size: Extent3d {
            width: 4,
            height: 4,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: TextureDimension::D2,
        format: TextureFormat::Rgba8UnormSrgb,
        usage: TextureUsages::STORAGE_BINDING,
    });
    assert!(matches!(srgb, Err(Error::Validation(_))));
}

#[test]
fn storage_bindings_of_attached_textures_and_high_groups_are_refused() {
    let (device, queue) = device();
    // Writing mip 1 as a storage texture while rendering into mip 0 of the same texture:
    // refused as unsupported (never a hang).
    let t = device
        .create_texture(&TextureDescriptor {
            label: None,
            size: Extent3d {
                width: 8,
                height: 8,
                depth_or_array_layers: 1,
            },
            mip_level_count: 2,
            sample_count: 1,
            dimension: TextureDimension::D2,
            format: TextureFormat::Rgba8Unorm,
            usage: TextureUsages::RENDER_ATTACHMENT | TextureUsages::STORAGE_BINDING,
        })
        .unwrap();
    let (level0, level1) = (level_view(&t, 0), level_view(&t, 1));
    let m = module(
        &device,
        "@group(0) @binding(0) var st: texture_storage_2d<rgba8unorm, write>;
        @vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
            return vec4(f32(i & 1u) * 4.0 - 1.0, f32(i >> 1u) * 4.0 - 1.0, 0.0, 1.0);
        }
        @fragment fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
            textureStore(st, vec2<u32>(p.xy) / 2u, vec4(1.0));
            return vec4(1.0);
        }",
    )
    .unwrap();
    let p = pipeline(&device, &m, &[], TextureFormat::Rgba8Unorm).unwrap();
    let bind = group(&device, &[BindingResource::TextureView(&level1)]).unwrap();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            color_attachments: &clear_pass(&level0),
            ..Default::default()
        });
        pass.set_pipeline(&p);
        pass.set_bind_group(0, &bind);
        pass.draw(0..3, 0..1);
    }
    let err = encoder.finish().unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("renders into")),
        "{err}"
    );
    drop(queue);
    // Textures, samplers and storage textures past the last bind group are refused when
    // the pipeline is created.
    for decls in [
        "@group(4) @binding(0) var t: texture_2d<f32>;
        fn use_it() { _ = textureDimensions(t); }",
        "@group(4) @binding(0) var s: sampler; @group(0) @binding(1) var t: texture_2d<f32>;
        fn use_it() { _ = textureSampleLevel(t, s, vec2(0.0), 0.0); }",
    ] {
        let src = format!("{decls} @compute @workgroup_size(1) fn main() {{ use_it(); }}");
        let m = module(&device, &src).unwrap();
        let err = device
            .create_compute_pipeline(&ComputePipelineDescriptor {
                label: None,
                module: &m,
                entry_point: None,
                constants: &[],
            })
            .unwrap_err();
        assert!(err.to_string().contains("uses @group(4)"), "{err}");
    }
}

/// A pass's draws run in batches, but a draw whose shaders write memory runs after the
/// draws before it have finished and before the ones after it start: here a draw writes a
/// storage texture that the draws on either side sample, and the additive sum shows each
/// saw the texture as it was at its turn (0.25 before, 0.5 after: 0.75 in all).
#[test]
fn draws_around_a_storage_writing_draw_see_it_in_order() {
    let (device, queue) = device();
    let t = device
        .create_texture(&TextureDescriptor {
            label: None,
            size: Extent3d {
                width: 8,
                height: 8,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: TextureDimension::D2,
            format: TextureFormat::R32Float,
            usage: TextureUsages::STORAGE_BINDING
                | TextureUsages::TEXTURE_BINDING
                | TextureUsages::COPY_DST,
        })
        .unwrap();
    let quarter: Vec<u8> = (0..64).flat_map(|_| 0.25f32.to_le_bytes()).collect();
    queue.write_texture(&t, &quarter).unwrap();
    let view = t.create_view();
    let src = "
        @group(0) @binding(0) var seen: texture_2d<f32>;
        @group(0) @binding(0) var marks: texture_storage_2d<r32float, write>;
        @vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
            let p = vec2(f32(i & 1u) * 4.0 - 1.0, f32(i >> 1u) * 4.0 - 1.0);
            return vec4(p, 0.0, 1.0);
        }
        @fragment fn fs_read(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
            return vec4(textureLoad(seen, vec2<u32>(p.xy), 0).r, 0.0, 0.0, 1.0);
        }
        @fragment fn fs_write(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
            textureStore(marks, vec2<u32>(p.xy), vec4(0.5));
            return vec4(0.0);
        }";
    let m = module(&device, src).unwrap();
    let add = BlendComponent {
        src_factor: BlendFactor::One,
        dst_factor: BlendFactor::One,
        operation: BlendOperation::Add,
    };
    let pipeline = |fs: &str| {
        device
            .create_render_pipeline(&RenderPipelineDescriptor {
                label: None,
                vertex: VertexState {
                    module: &m,
                    entry_point: Some("vs"),
                    buffers: &[],
                    constants: &[],
                },
                primitive: PrimitiveState::default(),
                depth_stencil: None,
                multisample: MultisampleState::default(),
                fragment: Some(FragmentState {
                    module: &m,
                    entry_point: Some(fs),
                    targets: &[Some(ColorTargetState {
                        format: TextureFormat::Rgba8Unorm,
                        blend: Some(BlendState {
                            color: add,
                            alpha: add,
                        }),
                        write_mask: ColorWrites::ALL,
                    })],
                    constants: &[],
                }),
            })
            .unwrap()
    };
    let (read, write) = (pipeline("fs_read"), pipeline("fs_write"));
    let bind = group(&device, &[BindingResource::TextureView(&view)]).unwrap();
    let target_texture = target(&device, 8, 8, TextureFormat::Rgba8Unorm, 1);
    let target_view = target_texture.create_view();
    let mut encoder = device.create_command_encoder();
    {
        let mut pass = encoder.begin_render_pass(&RenderPassDescriptor {
            label: None,
            color_attachments: &clear_pass(&target_view),
            depth_stencil_attachment: None,
            occlusion_query_set: None,
        });
        pass.set_bind_group(0, &bind);
        for p in [&read, &write, &read] {
            pass.set_pipeline(p);
            pass.draw(0..3, 0..1);
        }
    }
    queue.submit([encoder.finish().unwrap()]).unwrap();
    let image = queue.read_texture(&target_texture).unwrap();
    // 0.25 + 0.5 in every pixel: the 8-bit target blends in fixed point, each source
    // converted to its code first (64 and 128), so 192 (0.75 itself would be 191).
    for px in image.chunks(4) {
        assert_eq!(px[0], 192, "{px:?}");
    }
}
