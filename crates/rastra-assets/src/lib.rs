//! rastra-assets: loads 3D model files into world-space triangle lists for `rastra render`.
//!
//! ```text
//!   .gltf / .glb ──► gltf  (parse, glTF 2.0 validation, node graph walk, accessor decoding,
//!                           base-colour materials; images decoded by `image`) ───────────────┐
//!                                                                                         ├─► mesh ──► Scene
//!   .obj ─────────► obj   (tobj: triangulate, single index, MTL Kd) ──────────────────────┘
//!                         local-space primitive  ──►  Mesh (world space, normals, colours)
//! ```
//!
//! **API boundary.** Everything is validated here, once: a [`Scene`] that [`load`] returns has
//! finite world-space positions and unit normals, an index list of whole triangles whose every
//! index is in range, and at least one triangle. Malformed files are reported as an
//! [`AssetError`] naming the file and the reason; the loaders never panic on bad input.
//!
//! **Conventions.** Right-handed, +Y up, metres (glTF 2.0 §3.4), counter-clockwise front faces
//! in world space (mirroring node transforms are resolved by flipping the winding, §3.7.4).
//! Colours are linear RGBA. Texture coordinates use glTF's convention (origin at the top-left
//! of the image); OBJ `vt` are flipped to match.
//!
//! **Not applied yet:** skins and morph targets (meshes are drawn in their bind / base pose),
//! the material model beyond the base colour (glTF `baseColorFactor` and `baseColorTexture`;
//! OBJ `Kd` — OBJ `map_Kd` textures are not read), orthographic cameras.

mod error;
mod gltf;
mod image;
mod mesh;
mod obj;

use std::path::Path;

pub use error::AssetError;
pub use image::{BaseColorTexture, Filter, Image, MAX_IMAGE_SIDE, Sampler, Wrap};
pub use mesh::FRAMING_YFOV_RADIANS;

/// One triangle mesh in world space, ready to draw as an indexed triangle list.
///
/// Invariant: all per-vertex vectors have the same length; `indices.len()` is a multiple of 3
/// and every index is `< positions.len()`; positions are finite and normals unit length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mesh {
    /// World space: the node transforms of the whole hierarchy are applied.
    pub positions: Vec<[f32; 3]>,
    /// World space, unit length (transformed by the inverse-transpose of the node matrix).
    /// Computed as area-weighted smooth normals when the file has none.
    pub normals: Vec<[f32; 3]>,
    /// Linear RGBA: vertex colour (`COLOR_0` / OBJ `v x y z r g b`, white when absent) times the
    /// material colour (glTF `baseColorFactor`, OBJ `Kd` with `d` as alpha).
    pub colors: Vec<[f32; 4]>,
    /// The set the base-colour texture is sampled with (`TEXCOORD_0` without a texture),
    /// texture transform applied; `vt` for OBJ; zeros when absent. Origin at the image's
    /// top-left (glTF convention).
    pub texcoords: Vec<[f32; 2]>,
    /// Triangle list (strips and fans are converted); counter-clockwise is front-facing.
    pub indices: Vec<u32>,
    /// Multiplies `colors` when present (sampled at `texcoords`).
    pub base_color_texture: Option<BaseColorTexture>,
    /// Whether both faces are seen: glTF's material `doubleSided` (§3.9.5; false by default,
    /// when the back faces are culled — the winding is the file's promise, made
    /// counter-clockwise in world space under mirroring transforms too); always true for
    /// OBJ, which promises no winding.
    pub double_sided: bool,
}

impl Mesh {
    /// Number of triangles in the index list.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }
}

/// A perspective camera as a look-at frame plus projection parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    pub eye: [f32; 3],
    pub target: [f32; 3],
    /// Unit up vector, orthogonal to the view direction.
    pub up: [f32; 3],
    /// Vertical field of view.
    pub yfov_radians: f32,
    /// Near plane distance, `> 0`.
    pub znear: f32,
    /// Far plane distance, `> znear`. A glTF camera without `zfar` (infinite projection) gets a
    /// finite far plane that encloses the scene.
    pub zfar: f32,
    /// Width / height the file asks for; `None` means "use the viewport's".
    pub aspect: Option<f32>,
}

/// Everything drawable in a model file, in world space.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// One entry per drawn primitive instance (a glTF primitive under one node, an OBJ model).
    pub meshes: Vec<Mesh>,
    /// Axis-aligned bounds of all mesh positions.
    pub bounds_min: [f32; 3],
    pub bounds_max: [f32; 3],
    /// The first perspective camera node in the file (lowest node index among the scene's
    /// nodes), if any.
    pub camera: Option<Camera>,
    /// Primitives that were not drawn, one human-readable line each (points and lines, which
    /// rastra render does not draw; primitives without positions).
    pub skipped_primitives: Vec<String>,
    /// The images base-colour textures sample, decoded (`BaseColorTexture::image` indexes
    /// here).
    pub images: Vec<Image>,
}

impl Scene {
    /// A camera that frames the scene's bounding box, for files that have no camera.
    ///
    /// The bounding sphere is fitted into the narrower of the vertical and horizontal field of
    /// view (`yfov` = [`FRAMING_YFOV_RADIANS`]), seen from a three-quarter view: 30° to the
    /// right of the front (+Z) and 20° above.
    pub fn framing_camera(&self, aspect: f32) -> Camera {
        mesh::framing_camera(self.bounds_min, self.bounds_max, aspect)
    }

    /// Total number of triangles over all meshes.
    pub fn triangle_count(&self) -> usize {
        self.meshes.iter().map(Mesh::triangle_count).sum()
    }

    /// Total number of vertices over all meshes.
    pub fn vertex_count(&self) -> usize {
        self.meshes.iter().map(|m| m.positions.len()).sum()
    }
}

/// Loads a model file, choosing the format by extension: `.gltf` and `.glb` (glTF 2.0, with
/// external `.bin` buffers and `data:` URIs), `.obj` (Wavefront OBJ with its MTL library).
pub fn load(path: &Path) -> Result<Scene, AssetError> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let read = || {
        std::fs::read(path).map_err(|source| AssetError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    let base_dir = path.parent().unwrap_or(Path::new("."));
    let result = match extension.as_str() {
        "gltf" | "glb" => gltf::load(&read()?, base_dir),
        "obj" => obj::load(&read()?, base_dir),
        _ => {
            return Err(AssetError::Unsupported {
                path: path.to_path_buf(),
                message: format!(
                    "unknown model file extension {:?} (expected .gltf, .glb or .obj)",
                    path.extension().unwrap_or_default()
                ),
            });
        }
    };
    result.map_err(|problem| problem.at(path))
}

/// Loads glTF 2.0 (JSON or GLB) from memory; relative buffer URIs resolve against `base_dir`.
/// `name` is only used in error messages.
pub fn load_gltf_bytes(bytes: &[u8], base_dir: &Path, name: &Path) -> Result<Scene, AssetError> {
    gltf::load(bytes, base_dir).map_err(|problem| problem.at(name))
}

/// Loads Wavefront OBJ from memory; `mtllib` paths resolve against `base_dir`.
/// `name` is only used in error messages.
pub fn load_obj_bytes(bytes: &[u8], base_dir: &Path, name: &Path) -> Result<Scene, AssetError> {
    obj::load(bytes, base_dir).map_err(|problem| problem.at(name))
}
