//! The lit-mesh material shared by the built-in scene, loaded models and the textured-cube
//! workload: one vertex layout (position, normal, linear RGBA colour, uv), one WGSL module
//! with a directional light, a base-colour texture variant, a procedural checkerboard for
//! floors and a translucent "glass" variant, an instanced vertex entry point, and a builder
//! that turns meshes and a camera into a [`Frame`].

use rastra::{
    BlendState, BufferUsages, Color, ColorWrites, CompareFunction, CullMode, DepthStencilState,
    FrontFace, IndexFormat, PrimitiveState, PrimitiveTopology, SamplerDescriptor, TextureFormat,
    VertexAttribute, VertexBufferLayout, VertexFormat, VertexStepMode,
};

use crate::math::{Mat4, Vec3, normalize};
use crate::{
    BufferData, DrawKind, DrawRecipe, Frame, PipelineRecipe, Resource, TextureData, f32_bytes,
    u32_bytes,
};

/// WGSL of the lit material.
pub const SHADER: &str = r#"
struct Globals {
    view_proj: mat4x4<f32>,
    light_dir: vec4<f32>,
    eye: vec4<f32>,
}
@group(0) @binding(0) var<uniform> globals: Globals;
@group(0) @binding(1) var base_texture: texture_2d<f32>;
@group(0) @binding(2) var base_sampler: sampler;

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec4<f32>,
    @location(3) uv: vec2<f32>,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) color: vec4<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) world: vec3<f32>,
}

@vertex
fn vs_main(v: VertexIn) -> VertexOut {
    var out: VertexOut;
    out.clip = globals.view_proj * vec4<f32>(v.position, 1.0);
    out.normal = v.normal;
    out.color = v.color;
    out.uv = v.uv;
    out.world = v.position;
    return out;
}

// Instanced meshes: `place` is the instance's translation (xyz) and rotation about +Y (w).
@vertex
fn vs_instanced(v: VertexIn, @location(4) place: vec4<f32>) -> VertexOut {
    let c = cos(place.w);
    let s = sin(place.w);
    let p = vec3<f32>(c * v.position.x + s * v.position.z, v.position.y,
                      -s * v.position.x + c * v.position.z) + place.xyz;
    var out: VertexOut;
    out.clip = globals.view_proj * vec4<f32>(p, 1.0);
    out.normal = vec3<f32>(c * v.normal.x + s * v.normal.z, v.normal.y,
                           -s * v.normal.x + c * v.normal.z);
    out.color = v.color;
    out.uv = v.uv;
    out.world = p;
    return out;
}

fn lighting(normal: vec3<f32>, world: vec3<f32>) -> f32 {
    let n = normalize(normal);
    let l = normalize(globals.light_dir.xyz);
    let v = normalize(globals.eye.xyz - world);
    let h = normalize(l + v);
    let diffuse = max(dot(n, l), 0.0);
    let specular = pow(max(dot(n, h), 0.0), 32.0) * 0.35;
    return 0.22 + 0.78 * diffuse + specular;
}

@fragment
fn fs_lit(i: VertexOut) -> @location(0) vec4<f32> {
    return vec4<f32>(i.color.rgb * lighting(i.normal, i.world), 1.0);
}

@fragment
fn fs_textured(i: VertexOut) -> @location(0) vec4<f32> {
    let base = textureSample(base_texture, base_sampler, i.uv) * i.color;
    return vec4<f32>(base.rgb * lighting(i.normal, i.world), 1.0);
}

@fragment
fn fs_checker(i: VertexOut) -> @location(0) vec4<f32> {
    let cell = floor(i.uv.x) + floor(i.uv.y);
    let even = fract(cell * 0.5) < 0.25;
    let base = select(vec3<f32>(0.12, 0.12, 0.14), i.color.rgb, even);
    let fog = clamp(length(globals.eye.xyz - i.world) / 60.0, 0.0, 1.0);
    let lit = base * lighting(i.normal, i.world);
    return vec4<f32>(mix(lit, vec3<f32>(0.55, 0.62, 0.72), fog * fog), 1.0);
}

@fragment
fn fs_glass(i: VertexOut) -> @location(0) vec4<f32> {
    let edge = min(min(i.uv.x, 1.0 - i.uv.x), min(i.uv.y, 1.0 - i.uv.y));
    let rim = 1.0 - smoothstep(0.0, 0.06, edge);
    let rgb = mix(i.color.rgb * lighting(i.normal, i.world), vec3<f32>(1.0), rim * 0.6);
    return vec4<f32>(rgb, clamp(i.color.a + rim * 0.5, 0.0, 1.0));
}
"#;

/// Floats per vertex: position 3, normal 3, colour 4, uv 2.
pub const VERTEX_FLOATS: usize = 12;

/// The vertex buffer layout of [`SHADER`]'s `vs_main`.
pub fn vertex_layout() -> VertexBufferLayout {
    let attr = |location, offset, format| VertexAttribute {
        format,
        offset,
        shader_location: location,
    };
    VertexBufferLayout {
        array_stride: (VERTEX_FLOATS * 4) as u64,
        step_mode: VertexStepMode::Vertex,
        attributes: vec![
            attr(0, 0, VertexFormat::Float32x3),
            attr(1, 12, VertexFormat::Float32x3),
            attr(2, 24, VertexFormat::Float32x4),
            attr(3, 40, VertexFormat::Float32x2),
        ],
    }
}

/// The per-instance vertex buffer layout of `vs_instanced` (`@location(4)`).
pub fn instance_layout() -> VertexBufferLayout {
    VertexBufferLayout {
        array_stride: 16,
        step_mode: VertexStepMode::Instance,
        attributes: vec![VertexAttribute {
            format: VertexFormat::Float32x4,
            offset: 0,
            shader_location: 4,
        }],
    }
}

/// Which fragment entry point (and fixed-function state) a mesh is drawn with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Material {
    /// Opaque, lit, back faces culled.
    Lit,
    /// Opaque, lit, both faces (for geometry of unknown winding).
    LitTwoSided,
    /// Opaque checkerboard floor.
    Checker,
    /// Alpha-blended, depth-tested without depth writes; drawn after opaque meshes.
    Glass,
    /// Opaque, lit, colour times a base-colour texture (`texture` and `sampler` index the
    /// frame's textures and samplers).
    Textured {
        texture: usize,
        sampler: usize,
        two_sided: bool,
    },
}

impl Material {
    /// The material's pipeline kind (fragment entry point and fixed-function state) in
    /// [`frame`].
    fn pipeline(self) -> usize {
        match self {
            Material::Lit => 0,
            Material::LitTwoSided => 1,
            Material::Checker => 2,
            Material::Glass => 3,
            Material::Textured {
                two_sided: false, ..
            } => 4,
            Material::Textured {
                two_sided: true, ..
            } => 5,
        }
    }

    /// The draw's `@group(0)` bindings: the globals, and the texture and sampler if any.
    fn bindings(self) -> Vec<(u32, Resource)> {
        let mut bindings = vec![(0, Resource::Buffer(0))];
        if let Material::Textured {
            texture, sampler, ..
        } = self
        {
            bindings.push((1, Resource::Texture(texture)));
            bindings.push((2, Resource::Sampler(sampler)));
        }
        bindings
    }
}

/// Indexed triangle-list geometry in the lit vertex format.
#[derive(Clone, Debug, Default)]
pub struct MeshData {
    pub vertices: Vec<f32>,
    pub indices: Vec<u32>,
    /// Placements of an instanced mesh: translation (xyz) and rotation about +Y in radians
    /// (w), one instance each, drawn with `vs_instanced`. Empty: drawn once as given.
    pub instances: Vec<[f32; 4]>,
}

impl MeshData {
    /// Appends a vertex, returning its index.
    pub fn vertex(&mut self, position: Vec3, normal: Vec3, color: [f32; 4], uv: [f32; 2]) -> u32 {
        let index = (self.vertices.len() / VERTEX_FLOATS) as u32;
        self.vertices.extend_from_slice(&position);
        self.vertices.extend_from_slice(&normal);
        self.vertices.extend_from_slice(&color);
        self.vertices.extend_from_slice(&uv);
        index
    }

    pub fn triangle(&mut self, a: u32, b: u32, c: u32) {
        self.indices.extend_from_slice(&[a, b, c]);
    }

    pub fn vertex_count(&self) -> usize {
        self.vertices.len() / VERTEX_FLOATS
    }
}

/// Camera and light of a lit frame.
#[derive(Clone, Copy, Debug)]
pub struct View {
    pub eye: Vec3,
    pub target: Vec3,
    pub up: Vec3,
    pub yfov: f32,
    pub near: f32,
    pub far: f32,
    /// Direction towards the light.
    pub light: Vec3,
}

/// The textures and samplers textured materials index.
#[derive(Clone, Debug, Default)]
pub struct Textures {
    pub textures: Vec<TextureData>,
    pub samplers: Vec<SamplerDescriptor>,
}

/// Builds a frame drawing `meshes` (opaque ones first, glass last in the given order).
pub fn frame(
    name: &str,
    width: u32,
    height: u32,
    samples: u32,
    view: &View,
    meshes: &[(MeshData, Material)],
    textures: Textures,
) -> Frame {
    let aspect = width as f32 / height as f32;
    let view_proj = Mat4::perspective(view.yfov, aspect, view.near, view.far).mul(&Mat4::look_at(
        view.eye,
        view.target,
        view.up,
    ));
    let light = normalize(view.light);
    let mut globals = view_proj.to_cols().to_vec();
    globals.extend_from_slice(&[light[0], light[1], light[2], 0.0]);
    globals.extend_from_slice(&[view.eye[0], view.eye[1], view.eye[2], 1.0]);

    let depth = |write, compare| DepthStencilState {
        format: TextureFormat::Depth32Float,
        depth_write_enabled: write,
        depth_compare: compare,
        bias: rastra::DepthBias::default(),
    };
    // (fragment entry, cull mode, blend, depth writes) of each `Material::pipeline` kind.
    let kinds = [
        ("fs_lit", CullMode::Back, None, true),
        ("fs_lit", CullMode::None, None, true),
        ("fs_checker", CullMode::None, None, true),
        (
            "fs_glass",
            CullMode::None,
            Some(BlendState::ALPHA_BLENDING),
            false,
        ),
        ("fs_textured", CullMode::Back, None, true),
        ("fs_textured", CullMode::None, None, true),
    ];
    let recipe = |(kind, instanced): (usize, bool)| {
        let (fs, cull, blend, write) = kinds[kind];
        let mut vertex_buffers = vec![vertex_layout()];
        if instanced {
            vertex_buffers.push(instance_layout());
        }
        PipelineRecipe {
            vs_entry: if instanced { "vs_instanced" } else { "vs_main" }.into(),
            fs_entry: fs.into(),
            vertex_buffers,
            primitive: PrimitiveState {
                topology: PrimitiveTopology::TriangleList,
                front_face: FrontFace::Ccw,
                cull_mode: cull,
                unclipped_depth: false,
            },
            depth: Some(depth(write, CompareFunction::Less)),
            blend,
            write_mask: ColorWrites::ALL,
        }
    };
    // Pipelines are made for the (kind, instanced) pairs the meshes use, in first-use order.
    let mut pipeline_keys: Vec<(usize, bool)> = Vec::new();
    let mut buffers = vec![BufferData {
        label: "globals".into(),
        data: f32_bytes(&globals),
        usage: BufferUsages::UNIFORM,
    }];
    let mut draws = Vec::new();
    let mut ordered: Vec<&(MeshData, Material)> = meshes
        .iter()
        .filter(|(_, m)| *m != Material::Glass)
        .collect();
    ordered.extend(meshes.iter().filter(|(_, m)| *m == Material::Glass));
    for (mesh, material) in ordered {
        if mesh.indices.is_empty() {
            continue;
        }
        let vb = buffers.len();
        buffers.push(BufferData {
            label: "vertices".into(),
            data: f32_bytes(&mesh.vertices),
            usage: BufferUsages::VERTEX,
        });
        let ib = buffers.len();
        buffers.push(BufferData {
            label: "indices".into(),
            data: u32_bytes(&mesh.indices),
            usage: BufferUsages::INDEX,
        });
        let mut vertex_buffers = vec![vb];
        let instanced = !mesh.instances.is_empty();
        if instanced {
            vertex_buffers.push(buffers.len());
            let flat: Vec<f32> = mesh.instances.iter().flatten().copied().collect();
            buffers.push(BufferData {
                label: "instances".into(),
                data: f32_bytes(&flat),
                usage: BufferUsages::VERTEX,
            });
        }
        let key = (material.pipeline(), instanced);
        let pipeline = match pipeline_keys.iter().position(|k| *k == key) {
            Some(i) => i,
            None => {
                pipeline_keys.push(key);
                pipeline_keys.len() - 1
            }
        };
        draws.push(DrawRecipe {
            pipeline,
            vertex_buffers,
            index_buffer: Some((ib, IndexFormat::Uint32)),
            bindings: material.bindings(),
            kind: DrawKind::Indexed {
                indices: 0..mesh.indices.len() as u32,
                base_vertex: 0,
            },
            instances: 0..mesh.instances.len().max(1) as u32,
        });
    }
    let pipelines = pipeline_keys.into_iter().map(recipe).collect();
    Frame {
        name: name.into(),
        width,
        height,
        samples,
        color_format: TextureFormat::Rgba8UnormSrgb,
        depth_format: Some(TextureFormat::Depth32Float),
        clear_color: Color {
            r: 0.30,
            g: 0.36,
            b: 0.46,
            a: 1.0,
        },
        clear_depth: 1.0,
        blend_constant: Color::TRANSPARENT,
        shader: SHADER.into(),
        buffers,
        textures: textures.textures,
        samplers: textures.samplers,
        pipelines,
        draws,
    }
}
