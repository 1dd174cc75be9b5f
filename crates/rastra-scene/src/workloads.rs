//! The benchmark's reference workloads (issue "spine" §6, BRIEF "measured side by side with
//! lavapipe"): each is a [`Frame`] so rastra and lavapipe render exactly the same thing.

use rastra::{
    BlendState, BufferUsages, Color, ColorWrites, CompareFunction, DepthStencilState,
    PrimitiveState, TextureFormat, VertexAttribute, VertexBufferLayout, VertexFormat,
    VertexStepMode,
};

use crate::{BufferData, DrawKind, DrawRecipe, Frame, PipelineRecipe, f32_bytes};

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

/// The compute workload: `invocations` invocations of 64 dependent FMAs each, then a
/// 256-wide workgroup tree reduction of the results through workgroup memory.
pub fn fma_then_reduce(invocations: u32) -> crate::compute::ComputeRecipe {
    use crate::compute::{ComputeRecipe, ComputeStep};
    let groups = invocations.div_ceil(256);
    ComputeRecipe {
        name: "compute_fma_reduce".into(),
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
