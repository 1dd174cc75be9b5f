//! glTF 2.0 loading: document → validated node graph → world-space primitives.
//!
//! Stages, in order:
//! 1. `container`: GLB or JSON text (§4), buffers from the BIN chunk, files and `data:` URIs
//!    (§2.8, §3.6.1).
//! 2. JSON parsing and validation by the `gltf` crate (schema types, dangling indices,
//!    required extensions), after a pre-check of what its validator indexes unchecked.
//! 3. `hierarchy`: the scene's node trees (§3.5), shape-checked, walked into global
//!    transforms.
//! 4. Each mesh primitive (§3.7.2.1) is read once through `accessor` (type table, ranges,
//!    NaN), assembled into a triangle list by topology, validated, then instanced per node
//!    by `crate::mesh` (§3.7.4). Points and lines are skipped and listed.
//! 5. The first perspective camera node (§3.10).
//!
//! Materials (`material`): the base colour only (§3.9.2) — `baseColorFactor`, multiplied into
//! the vertex colours (both linear), and `baseColorTexture` with its sampler, image and
//! `KHR_texture_transform` (applied to the texture coordinates here). The default material
//! (§3.9.6) is white.

mod accessor;
mod container;
mod hierarchy;
mod material;

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::Path;

use ::gltf::json;
use glam::Mat4;
use json::mesh::{Mode, Semantic};
use json::validation::Checked;

use self::accessor::{Reader, Usage};
use self::material::Materials;
use crate::Scene;
use crate::error::{Problem, invalid};
use crate::mesh::{self, FileCamera, LocalMesh, MAX_SCENE_INDICES, MAX_SCENE_VERTICES};

/// Loads a `.gltf` or `.glb` held in memory; relative URIs resolve against `base_dir`.
pub(crate) fn load(bytes: &[u8], base_dir: &Path) -> Result<Scene, Problem> {
    let container = container::split(bytes)?;
    let root = parse(container.json)?;
    let buffers = container::load_buffers(&root, container.bin, base_dir)?;
    let reader = Reader {
        root: &root,
        buffers: &buffers,
    };
    let scene_index = match (root.scene, root.scenes.len()) {
        (Some(index), _) => index.value(),
        (None, 0) => {
            return invalid!(
                "the file defines no scene (a glTF without scenes is an asset library, §3.5.1); \
                 nothing to draw"
            );
        }
        (None, _) => 0,
    };
    let Some(scene) = root.scenes.get(scene_index) else {
        return invalid!("scene {scene_index} does not exist");
    };
    let roots: Vec<usize> = scene.nodes.iter().map(|n| n.value()).collect();
    let placed = hierarchy::walk(&root, &roots)?;
    let mut materials = Materials::new(&reader, base_dir);

    let mut primitives: HashMap<(usize, usize), Option<LocalMesh>> = HashMap::new();
    let mut skipped = Vec::new();
    let mut meshes = Vec::new();
    let mut vertex_total = 0usize;
    let mut index_total = 0usize;
    let mut camera: Option<(usize, FileCamera)> = None;
    for &(node_index, world) in &placed {
        let node = &root.nodes[node_index];
        if let Some(camera_index) = node.camera
            && let Some(file_camera) = read_camera(&root, camera_index.value(), world)
                .map_err(|p| p.context(format!("node {node_index} camera")))?
            && camera.is_none_or(|(first, _)| node_index < first)
        {
            camera = Some((node_index, file_camera));
        }
        let Some(mesh_index) = node.mesh.map(|m| m.value()) else {
            continue;
        };
        let Some(json_mesh) = root.meshes.get(mesh_index) else {
            return invalid!("node {node_index} refers to missing mesh {mesh_index}");
        };
        for primitive_index in 0..json_mesh.primitives.len() {
            let local = match primitives.entry((mesh_index, primitive_index)) {
                Entry::Occupied(entry) => entry.into_mut(),
                Entry::Vacant(entry) => {
                    let place = primitive_place(json_mesh, mesh_index, primitive_index);
                    let drawable =
                        read_primitive(&reader, &mut materials, json_mesh, primitive_index)
                            .map_err(|p| p.context(&place))?;
                    entry.insert(match drawable {
                        Drawable::Triangles(local) => Some(local),
                        Drawable::Skipped(why) => {
                            skipped.push(format!("{place}: {why}"));
                            None
                        }
                    })
                }
            };
            let Some(local) = local else {
                continue;
            };
            vertex_total = vertex_total.saturating_add(local.positions.len());
            index_total = index_total.saturating_add(local.indices.len());
            if vertex_total > MAX_SCENE_VERTICES || index_total > MAX_SCENE_INDICES {
                return Err(Problem::Unsupported(format!(
                    "more than {MAX_SCENE_VERTICES} vertices or {MAX_SCENE_INDICES} indices after \
                     instancing meshes on nodes"
                )));
            }
            let placed_mesh = mesh::instantiate(local, &world)
                .map_err(|p| p.context(format!("node {node_index} mesh {mesh_index}")))?;
            meshes.push(placed_mesh);
        }
    }
    mesh::finish_scene(meshes, camera.map(|(_, c)| c), skipped, materials.images)
}

/// JSON text → validated `json::Root`.
fn parse(json_bytes: &[u8]) -> Result<json::Root, Problem> {
    let root: json::Root = match json::deserialize::from_slice(json_bytes) {
        Ok(root) => root,
        Err(error) => {
            // A glTF 1.0 file fails the 2.0 schema; say so instead of the first type error.
            if let Ok(value) = json::deserialize::from_slice::<json::Value>(json_bytes)
                && let Some(version) = value
                    .get("asset")
                    .and_then(|a| a.get("version"))
                    .and_then(|v| v.as_str())
                && !version.starts_with("2.")
            {
                return Err(Problem::Unsupported(format!(
                    "glTF version {version} (rastra reads glTF 2.x)"
                )));
            }
            return Err(Problem::Format(format!("glTF JSON: {error}")));
        }
    };
    if !root.asset.version.starts_with("2.") {
        return Err(Problem::Unsupported(format!(
            "glTF version {} (rastra reads glTF 2.x)",
            root.asset.version
        )));
    }
    precheck(&root)?;
    validate(&root)?;
    Ok(root)
}

/// Checks what the `gltf` crate's validator would index without a bounds check (it reads the
/// POSITION accessor's min/max by index), so malformed files error instead of panicking.
fn precheck(root: &json::Root) -> Result<(), Problem> {
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            for (semantic, accessor) in &primitive.attributes {
                if accessor.value() >= root.accessors.len() {
                    let name = match semantic {
                        Checked::Valid(s) => semantic_name(s),
                        Checked::Invalid => "attribute".to_string(),
                    };
                    return invalid!(
                        "mesh {m} primitive {p}: {name} refers to accessor {}, but the file has {}",
                        accessor.value(),
                        root.accessors.len()
                    );
                }
            }
        }
    }
    Ok(())
}

/// Runs the `gltf` crate's validator (schema enums, dangling indices, required extensions)
/// and reports its findings as one problem (first few entries).
///
/// Tolerated: a POSITION accessor without `min`/`max`. §3.6.2.5 requires them, but rastra
/// computes bounds from the data and never reads them, and many exporters omit them; the data
/// itself is still checked value by value.
fn validate(root: &json::Root) -> Result<(), Problem> {
    use json::validation::{Error, Validate};
    let mut errors = Vec::new();
    root.validate(root, json::Path::new, &mut |path, error| {
        let path = path().to_string();
        let tolerated = matches!(error, Error::Missing)
            && (path.ends_with("[\"POSITION\"].min") || path.ends_with("[\"POSITION\"].max"));
        if !tolerated {
            errors.push((path, error));
        }
    });
    if errors.is_empty() {
        return Ok(());
    }
    let unsupported: Vec<&str> = errors
        .iter()
        .filter(|(_, e)| matches!(e, Error::Unsupported))
        .map(|(path, _)| path.as_str())
        .collect();
    if !unsupported.is_empty() {
        return Err(Problem::Unsupported(format!(
            "required glTF extension not supported: {}",
            unsupported.join(", ")
        )));
    }
    let shown: Vec<String> = errors
        .iter()
        .take(4)
        .map(|(path, e)| format!("{path}: {e}"))
        .collect();
    let more = match errors.len() {
        n if n > 4 => format!(" (and {} more)", n - 4),
        _ => String::new(),
    };
    invalid!("glTF validation: {}{more}", shown.join("; "))
}

/// A perspective camera at `world`; orthographic cameras are not represented (`None`).
fn read_camera(
    root: &json::Root,
    index: usize,
    world: Mat4,
) -> Result<Option<FileCamera>, Problem> {
    let Some(camera) = root.cameras.get(index) else {
        return invalid!("camera {index} does not exist");
    };
    let perspective = match (&camera.type_, &camera.perspective) {
        (Checked::Valid(json::camera::Type::Perspective), Some(p)) => p,
        (Checked::Valid(json::camera::Type::Perspective), None) => {
            return invalid!("camera {index} is perspective but has no perspective object");
        }
        _ => return Ok(None),
    };
    let file_camera = FileCamera {
        world,
        yfov: perspective.yfov,
        znear: perspective.znear,
        zfar: perspective.zfar,
        aspect: perspective.aspect_ratio,
    };
    file_camera.validate()?;
    Ok(Some(file_camera))
}

/// How a primitive is named in messages: `mesh 3 "Wheel" primitive 0`.
fn primitive_place(mesh: &json::Mesh, mesh_index: usize, primitive_index: usize) -> String {
    match &mesh.name {
        Some(name) => format!("mesh {mesh_index} {name:?} primitive {primitive_index}"),
        None => format!("mesh {mesh_index} primitive {primitive_index}"),
    }
}

/// What became of one primitive.
enum Drawable {
    Triangles(LocalMesh),
    /// Not drawn, with the reason (topology, no positions).
    Skipped(String),
}

/// Reads, assembles and validates one primitive (§3.7.2.1).
fn read_primitive(
    reader: &Reader<'_>,
    materials: &mut Materials<'_>,
    mesh: &json::Mesh,
    primitive_index: usize,
) -> Result<Drawable, Problem> {
    let primitive = &mesh.primitives[primitive_index];
    let Checked::Valid(mode) = primitive.mode else {
        return invalid!("invalid mode");
    };
    let attribute = |semantic: Semantic| {
        primitive
            .attributes
            .get(&Checked::Valid(semantic))
            .map(|a| a.value())
    };
    let Some(position_accessor) = attribute(Semantic::Positions) else {
        // §3.7.2.1: without positions the primitive SHOULD be skipped.
        return Ok(Drawable::Skipped("no POSITION attribute".to_string()));
    };

    // Types and equal counts for every attribute, drawn or not (§3.7.2.1).
    let vertex_count = reader.count(position_accessor)?;
    for (semantic, &accessor) in &primitive.attributes {
        let Checked::Valid(semantic) = semantic else {
            return invalid!("attribute with an invalid semantic name");
        };
        reader.check_usage(accessor.value(), usage_of(semantic))?;
        let count = reader.count(accessor.value())?;
        if count != vertex_count {
            return invalid!(
                "{} has {count} elements but POSITION has {vertex_count}; glTF 2.0 §3.7.2.1 \
                 requires equal counts",
                semantic_name(semantic)
            );
        }
    }

    let index_count = match primitive.indices {
        Some(accessor) => reader.count(accessor.value())?,
        None => vertex_count,
    };
    check_topology_count(mode, index_count)?;
    if !matches!(
        mode,
        Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
    ) {
        return Ok(Drawable::Skipped(format!(
            "{} with {index_count} vertices (rastra render draws triangles only)",
            mode_name(mode)
        )));
    }

    let positions = reader.vectors::<3>(position_accessor, Usage::Position)?;
    let normals = attribute(Semantic::Normals)
        .map(|a| reader.vectors::<3>(a, Usage::Normal))
        .transpose()?;
    let base_color = materials.base_color(primitive.material.map(|m| m.value()))?;
    // The set the base-colour texture is sampled with (§3.9.2 texCoord), transformed.
    let set = base_color.texture.as_ref().map_or(0, |t| t.tex_coord);
    let mut texcoords = match attribute(Semantic::TexCoords(set)) {
        Some(a) => reader.vectors::<2>(a, Usage::TexCoord)?,
        None if base_color.texture.is_some() => {
            return invalid!(
                "the base colour texture is sampled with TEXCOORD_{set}, which the primitive \
                 does not have"
            );
        }
        None => vec![[0.0; 2]; vertex_count],
    };
    if let Some(transform) = base_color.texture.as_ref().and_then(|t| t.transform) {
        texcoords
            .iter_mut()
            .for_each(|uv| *uv = transform.apply(*uv));
    }
    let factor = base_color.factor;
    let colors = match attribute(Semantic::Colors(0)) {
        Some(a) => reader.colors(a)?,
        None => vec![[1.0; 4]; vertex_count],
    };
    let colors = colors
        .into_iter()
        .map(|c| std::array::from_fn(|i| c[i] * factor[i]))
        .collect();
    let vertex_indices = match primitive.indices {
        Some(accessor) => reader.indices(accessor.value())?,
        None => (0..vertex_count as u32).collect(),
    };
    if let Some((at, &index)) = vertex_indices
        .iter()
        .enumerate()
        .find(|&(_, &i)| i as usize >= vertex_count)
    {
        return invalid!(
            "index {index} (at position {at}) is out of range: POSITION has {vertex_count} \
             vertices (glTF 2.0 §3.7.2.1)"
        );
    }
    let local = LocalMesh {
        positions,
        normals,
        colors,
        texcoords,
        indices: triangle_list(mode, &vertex_indices),
        base_color_texture: base_color.texture.map(|t| t.texture),
        double_sided: base_color.double_sided,
    };
    local.validate()?;
    Ok(Drawable::Triangles(local))
}

fn usage_of(semantic: &Semantic) -> Usage {
    match semantic {
        Semantic::Positions => Usage::Position,
        Semantic::Normals => Usage::Normal,
        Semantic::Tangents => Usage::Tangent,
        Semantic::TexCoords(_) => Usage::TexCoord,
        Semantic::Colors(_) => Usage::Color,
        Semantic::Joints(_) => Usage::Joints,
        Semantic::Weights(_) => Usage::Weights,
        Semantic::Extras(_) => Usage::Custom,
    }
}

fn semantic_name(semantic: &Semantic) -> String {
    match semantic {
        Semantic::Positions => "POSITION".to_string(),
        Semantic::Normals => "NORMAL".to_string(),
        Semantic::Tangents => "TANGENT".to_string(),
        Semantic::TexCoords(n) => format!("TEXCOORD_{n}"),
        Semantic::Colors(n) => format!("COLOR_{n}"),
        Semantic::Joints(n) => format!("JOINTS_{n}"),
        Semantic::Weights(n) => format!("WEIGHTS_{n}"),
        Semantic::Extras(name) => format!("_{name}"),
    }
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Points => "POINTS",
        Mode::Lines => "LINES",
        Mode::LineLoop => "LINE_LOOP",
        Mode::LineStrip => "LINE_STRIP",
        Mode::Triangles => "TRIANGLES",
        Mode::TriangleStrip => "TRIANGLE_STRIP",
        Mode::TriangleFan => "TRIANGLE_FAN",
    }
}

/// §3.7.2.1: the number of vertex indices MUST be valid for the topology.
fn check_topology_count(mode: Mode, count: usize) -> Result<(), Problem> {
    let ok = match mode {
        Mode::Points => count > 0,
        Mode::LineLoop | Mode::LineStrip => count >= 2,
        Mode::TriangleStrip | Mode::TriangleFan => count >= 3,
        Mode::Lines => count > 0 && count.is_multiple_of(2),
        Mode::Triangles => count > 0 && count.is_multiple_of(3),
    };
    if ok {
        Ok(())
    } else {
        invalid!(
            "{} with {count} vertex indices; glTF 2.0 §3.7.2.1 requires {}",
            mode_name(mode),
            match mode {
                Mode::Points => "at least 1",
                Mode::LineLoop | Mode::LineStrip => "at least 2",
                Mode::TriangleStrip | Mode::TriangleFan => "at least 3",
                Mode::Lines => "a non-zero multiple of 2",
                Mode::Triangles => "a non-zero multiple of 3",
            }
        )
    }
}

/// A triangle-topology index sequence as a triangle list (§3.7.2.1 topology equations).
fn triangle_list(mode: Mode, v: &[u32]) -> Vec<u32> {
    match mode {
        Mode::TriangleStrip => (0..v.len().saturating_sub(2))
            .flat_map(|i| [v[i], v[i + 1 + i % 2], v[i + 2 - i % 2]])
            .collect(),
        Mode::TriangleFan => (0..v.len().saturating_sub(2))
            .flat_map(|i| [v[i + 1], v[i + 2], v[0]])
            .collect(),
        _ => v.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_and_fans_follow_the_spec_equations() {
        let v = [10, 11, 12, 13, 14];
        assert_eq!(
            triangle_list(Mode::TriangleStrip, &v),
            [10, 11, 12, 11, 13, 12, 12, 13, 14]
        );
        assert_eq!(
            triangle_list(Mode::TriangleFan, &v),
            [11, 12, 10, 12, 13, 10, 13, 14, 10]
        );
        assert_eq!(triangle_list(Mode::Triangles, &v[..3]), [10, 11, 12]);
    }

    #[test]
    fn topology_counts_are_checked() {
        assert!(check_topology_count(Mode::Triangles, 35).is_err());
        assert!(check_topology_count(Mode::Triangles, 0).is_err());
        assert!(check_topology_count(Mode::Triangles, 36).is_ok());
        assert!(check_topology_count(Mode::TriangleStrip, 2).is_err());
        assert!(check_topology_count(Mode::Lines, 3).is_err());
    }
}
