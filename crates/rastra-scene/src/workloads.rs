//! The benchmark's reference workloads (issue "spine" §6, BRIEF "measured side by side with
//! lavapipe"): each is a [`Frame`] so rastra and lavapipe render exactly the same thing.

use rastra::{
    AddressMode, BlendState, BufferUsages, Color, ColorWrites, CompareFunction, DepthStencilState,
    PrimitiveState, SamplerDescriptor, TextureFormat, VertexAttribute, VertexBufferLayout,
    VertexFormat, VertexStepMode,
};

use crate::{BufferData, DrawKind, DrawRecipe, Frame, PipelineRecipe, TextureData, f32_bytes};

/// The benchmark's graphics workloads, by name, in the order `rastra bench` runs them.
pub const REFERENCE_FRAMES: [&str; 3] = ["small_triangles", "blended_layers", "textured_cubes"];

/// A reference workload at its benchmark size (issue "throughput": ~200k small triangles,
/// 32 blended full-screen layers, 10k textured cubes), or `None` for an unknown name.
pub fn reference_frame(name: &str, width: u32, height: u32) -> Option<Frame> {
    match name {
        "small_triangles" => Some(small_triangles(width, height, 200_000)),
        "blended_layers" => Some(blended_layers(width, height, 32)),
        "textured_cubes" => Some(textured_cubes(width, height, 10_000)),
        _ => None,
    }
}

/// Pass-through shader: positions already in clip space, one colour per vertex.
const FLAT_SHADER: &str = r#"
struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
}

@vertex
fn vs_main(@location(0) position: vec3<f32>, @location(1) color: vec4<f32>) -> VertexOut {
    var out: VertexOut;
    out.clip = vec4<f32>(position, 1.0);
    out.color = color;
    return out;
}

@fragment
fn fs_main(i: VertexOut) -> @location(0) vec4<f32> {
    return i.color;
}

@fragment
fn fs_layer(i: VertexOut) -> @location(0) vec4<f32> {
    let p = i.clip.xy * 0.01;
    let wave = 0.5 + 0.5 * sin(p.x + p.y * 0.7 + i.color.a * 40.0);
    return vec4<f32>(i.color.rgb * (0.6 + 0.4 * wave), i.color.a);
}
"#;

fn flat_layout() -> VertexBufferLayout {
    VertexBufferLayout {
        array_stride: 28,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![
            VertexAttribute {
                format: VertexFormat::Float32x3,
                offset: 0,
                shader_location: 0,
            },
            VertexAttribute {
                format: VertexFormat::Float32x4,
                offset: 12,
                shader_location: 1,
            },
        ],
    }
}

/// A small deterministic generator (xorshift32) so workloads are identical everywhere.
pub struct Rng(pub u32);

impl Rng {
    pub fn next_u32(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 24) as f32
    }
}

fn flat_frame(
    name: &str,
    width: u32,
    height: u32,
    vertices: Vec<f32>,
    pipeline: PipelineRecipe,
) -> Frame {
    let count = (vertices.len() / 7) as u32;
    Frame {
        name: name.into(),
        width,
        height,
        samples: 1,
        color_format: TextureFormat::Rgba8Unorm,
        depth_format: pipeline.depth.map(|d| d.format),
        clear_color: Color {
            r: 0.05,
            g: 0.05,
            b: 0.08,
            a: 1.0,
        },
        clear_depth: 1.0,
        blend_constant: Color::TRANSPARENT,
        shader: FLAT_SHADER.into(),
        buffers: vec![BufferData {
            label: "vertices".into(),
            data: f32_bytes(&vertices),
            usage: BufferUsages::VERTEX,
        }],
        textures: Vec::new(),
        samplers: Vec::new(),
        pipelines: vec![pipeline],
        draws: vec![DrawRecipe {
            pipeline: 0,
            vertex_buffers: vec![0],
            index_buffer: None,
            bindings: Vec::new(),
            kind: DrawKind::Vertices(0..count),
            instances: 0..1,
        }],
    }
}

/// `count` small depth-tested triangles (2–12 px across) scattered over the target, each
/// with its own depth and flat colour.
pub fn small_triangles(width: u32, height: u32, count: u32) -> Frame {
    let mut rng = Rng(0x2545_f491);
    let mut v = Vec::with_capacity(count as usize * 21);
    for _ in 0..count {
        let cx = rng.unit() * 2.0 - 1.0;
        let cy = rng.unit() * 2.0 - 1.0;
        let z = 0.05 + rng.unit() * 0.9;
        let size = 2.0 + rng.unit() * 10.0;
        let color = [rng.unit(), rng.unit(), rng.unit(), 1.0];
        for k in 0..3 {
            let a = rng.unit() * 0.6 + k as f32 * 2.094;
            let dx = a.cos() * size / width as f32;
            let dy = a.sin() * size / height as f32;
            v.extend_from_slice(&[cx + dx, cy + dy, z]);
            v.extend_from_slice(&color);
        }
    }
    flat_frame(
        "small_triangles",
        width,
        height,
        v,
        PipelineRecipe {
            vs_entry: "vs_main".into(),
            fs_entry: "fs_main".into(),
            vertex_buffers: vec![flat_layout()],
            primitive: PrimitiveState::default(),
            depth: Some(DepthStencilState {
                format: TextureFormat::Depth32Float,
                depth_write_enabled: true,
                depth_compare: CompareFunction::Less,
                bias: rastra::DepthBias::default(),
            }),
            blend: None,
            write_mask: ColorWrites::ALL,
        },
    )
}

/// `layers` full-screen quads, alpha-blended on top of each other.
pub fn blended_layers(width: u32, height: u32, layers: u32) -> Frame {
    let mut rng = Rng(0x9e37_79b9);
    let mut v = Vec::new();
    for _ in 0..layers {
        let color = [rng.unit(), rng.unit(), rng.unit(), 0.08 + rng.unit() * 0.2];
        for [x, y] in [
            [-1.0, -1.0],
            [1.0, -1.0],
            [1.0, 1.0],
            [-1.0, -1.0],
            [1.0, 1.0],
            [-1.0, 1.0f32],
        ] {
            v.extend_from_slice(&[x, y, 0.5]);
            v.extend_from_slice(&color);
        }
    }
    flat_frame(
        "blended_layers",
        width,
        height,
        v,
        PipelineRecipe {
            vs_entry: "vs_main".into(),
            fs_entry: "fs_layer".into(),
            vertex_buffers: vec![flat_layout()],
            primitive: PrimitiveState::default(),
            depth: None,
            blend: Some(BlendState::ALPHA_BLENDING),
            write_mask: ColorWrites::ALL,
        },
    )
}

/// Side of the textured-cube workload's texture.
pub const CUBE_TEXTURE_SIDE: u32 = 1024;

/// `count` instanced, lit, textured cubes standing on a grid that recedes to the horizon:
/// one draw of 12 triangles × `count` instances. The texture is a 1024² procedural brick
/// pattern (sRGB) with its full mip chain, sampled trilinear with 16× anisotropic filtering
/// and repeat addressing; faces near the camera are magnified, distant and oblique ones
/// minified several levels, so the texel caches see every kind of footprint.
pub fn textured_cubes(width: u32, height: u32, count: u32) -> Frame {
    use crate::lit::{Material, MeshData, Textures, View, frame};
    let mut cube = MeshData::default();
    crate::builtin::cuboid(&mut cube, [-0.5, 0.0, -0.5], [0.5, 1.0, 0.5], [1.0; 4]);
    let side = (count as f32).sqrt().ceil().max(1.0) as u32;
    let spacing = 2.2;
    let mut rng = Rng(0x6a09_e667);
    cube.instances = (0..count)
        .map(|i| {
            let (gx, gz) = ((i % side) as f32, (i / side) as f32);
            let x = (gx - (side as f32 - 1.0) / 2.0) * spacing + (rng.unit() - 0.5) * 0.6;
            let z = -gz * spacing - 2.0 + (rng.unit() - 0.5) * 0.6;
            [x, 0.0, z, rng.unit() * std::f32::consts::TAU]
        })
        .collect();
    let view = View {
        eye: [0.0, 4.5, 4.0],
        target: [0.0, 0.0, -24.0],
        up: [0.0, 1.0, 0.0],
        yfov: 60f32.to_radians(),
        near: 0.1,
        far: 500.0,
        light: [0.4, 0.9, 0.35],
    };
    let textures = Textures {
        textures: vec![brick_texture()],
        samplers: vec![SamplerDescriptor {
            address_mode_u: AddressMode::Repeat,
            address_mode_v: AddressMode::Repeat,
            max_anisotropy: 16,
            ..SamplerDescriptor::trilinear()
        }],
    };
    let material = Material::Textured {
        texture: 0,
        sampler: 0,
        two_sided: false,
    };
    frame(
        "textured_cubes",
        width,
        height,
        1,
        &view,
        &[(cube, material)],
        textures,
    )
}

/// The cube workload's texture: bricks with mortar, per-brick tint and per-texel grain, as
/// `Rgba8UnormSrgb` with every mip level.
fn brick_texture() -> TextureData {
    let n = CUBE_TEXTURE_SIDE;
    let hash = |x: u32, y: u32, salt: u32| {
        let mut h = x.wrapping_mul(0x8da6_b343) ^ y.wrapping_mul(0xd816_3841) ^ salt;
        h ^= h >> 13;
        h = h.wrapping_mul(0x5bd1_e995);
        h ^ (h >> 15)
    };
    let (brick_w, brick_h, mortar) = (128, 64, 6);
    let mut texels = Vec::with_capacity((n * n * 4) as usize);
    for y in 0..n {
        let row = y / brick_h;
        for x in 0..n {
            // Every other row is offset by half a brick.
            let bx = (x + (row % 2) * brick_w / 2) % n;
            let col = bx / brick_w;
            let in_mortar = y % brick_h < mortar || bx % brick_w < mortar;
            let grain = (hash(x, y, 7) & 31) as i32 - 16;
            let rgb = if in_mortar {
                [182, 176, 164].map(|c: i32| c + grain / 2)
            } else {
                let tint = (hash(col, row, 1) % 48) as i32 - 24;
                [150 + tint, 62 + tint / 2, 44 + tint / 3].map(|c| c + grain)
            };
            texels.extend(rgb.map(|c| c.clamp(0, 255) as u8));
            texels.push(255);
        }
    }
    TextureData::srgb_with_mips("bricks", n, n, texels)
        .expect("a tightly packed RGBA8 square has a mip chain")
}

/// The compute workload's name ([`fma_then_reduce`]'s recipe carries it).
pub const FMA_THEN_REDUCE: &str = "compute_fma_reduce";

/// The compute workload: `invocations` invocations of 64 dependent FMAs each, then a
/// 256-wide workgroup tree reduction of the results through workgroup memory.
pub fn fma_then_reduce(invocations: u32) -> crate::compute::ComputeRecipe {
    use crate::compute::{ComputeRecipe, ComputeStep};
    let groups = invocations.div_ceil(256);
    ComputeRecipe {
        name: FMA_THEN_REDUCE.into(),
        shader: r#"
@group(0) @binding(0) var<storage, read_write> values: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn fma_chain(@builtin(global_invocation_id) id: vec3<u32>) {
    var x = f32(id.x % 1024u) * 0.001;
    for (var i = 0; i < 64; i = i + 1) {
        x = fma(x, 0.999, 0.0007);
    }
    values[id.x] = x;
}

@compute @workgroup_size(256)
fn reduce(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    partial[l] = values[wg.x * 256u + l];
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride / 2u) {
        if l < stride {
            partial[l] = partial[l] + partial[l + stride];
        }
        workgroupBarrier();
    }
    if l == 0u {
        sums[wg.x] = partial[0];
    }
}
"#
        .into(),
        buffers: vec![
            BufferData {
                label: "values".into(),
                data: vec![0; groups as usize * 256 * 4],
                usage: BufferUsages::STORAGE,
            },
            BufferData {
                label: "sums".into(),
                data: vec![0; groups as usize * 4],
                usage: BufferUsages::STORAGE,
            },
        ],
        steps: vec![
            ComputeStep {
                entry: "fma_chain".into(),
                bindings: vec![(0, 0)],
                workgroups: [groups, 1, 1],
            },
            ComputeStep {
                entry: "reduce".into(),
                bindings: vec![(0, 0), (1, 1)],
                workgroups: [groups, 1, 1],
            },
        ],
        outputs: vec![1],
    }
}
