//! Wavefront OBJ loading through `tobj`: one mesh per OBJ object/group, already in world space.
//!
//! OBJ has no specification document of its own beyond Wavefront's appendix; `tobj` parses it
//! with `triangulate` (polygons become fans) and `single_index` (one index per unique
//! position/texcoord/normal combination). Points and lines are ignored by the parser.
//!
//! Colours are the per-vertex colour (`v x y z r g b`, white when absent) times the MTL
//! material's `Kd`, with `d` as alpha; both taken as linear. A missing or unparsable MTL library
//! leaves meshes white rather than failing the model. `vt` coordinates are flipped to glTF's
//! top-left origin. `tobj` leaves normals or texcoords misaligned with positions when only some
//! faces reference them; such partial attributes are dropped (normals are then computed).

use std::io::Cursor;
use std::path::Path;

use glam::Mat4;

use crate::Scene;
use crate::error::Problem;
use crate::mesh::{self, LocalMesh};

/// Loads an OBJ held in memory; `mtllib` paths resolve against `base_dir`.
pub(crate) fn load(bytes: &[u8], base_dir: &Path) -> Result<Scene, Problem> {
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ignore_points: true,
        ignore_lines: true,
    };
    let (models, materials) = tobj::load_obj_buf(&mut Cursor::new(bytes), &options, |mtl| {
        tobj::load_mtl(base_dir.join(mtl))
    })
    .map_err(|e| Problem::Format(format!("OBJ: {e}")))?;
    let materials = materials.unwrap_or_default();

    let mut meshes = Vec::with_capacity(models.len());
    for (index, model) in models.iter().enumerate() {
        let local = to_local_mesh(&model.mesh, &materials)
            .map_err(|p| p.context(format!("object {index} {:?}", model.name)))?;
        local
            .validate()
            .map_err(|p| p.context(format!("object {index} {:?}", model.name)))?;
        meshes.push(mesh::instantiate(&local, &Mat4::IDENTITY)?);
    }
    mesh::finish_scene(meshes, None, Vec::new(), Vec::new())
}

/// Regroups `tobj`'s flat arrays into per-vertex attributes.
fn to_local_mesh(mesh: &tobj::Mesh, materials: &[tobj::Material]) -> Result<LocalMesh, Problem> {
    if !mesh.positions.len().is_multiple_of(3) {
        return Err(Problem::Invalid(
            "position array is not a whole number of vertices".to_string(),
        ));
    }
    let n = mesh.positions.len() / 3;
    let positions: Vec<[f32; 3]> = triples(&mesh.positions);
    let normals = (mesh.normals.len() == 3 * n).then(|| triples(&mesh.normals));
    let texcoords = if mesh.texcoords.len() == 2 * n {
        mesh.texcoords
            .chunks_exact(2)
            .map(|t| [t[0], 1.0 - t[1]])
            .collect()
    } else {
        vec![[0.0; 2]; n]
    };
    let material = mesh.material_id.and_then(|id| materials.get(id));
    let kd = material.and_then(|m| m.diffuse).unwrap_or([1.0; 3]);
    let alpha = material.and_then(|m| m.dissolve).unwrap_or(1.0);
    let colors = if mesh.vertex_color.len() == 3 * n {
        triples(&mesh.vertex_color)
            .into_iter()
            .map(|c| [c[0] * kd[0], c[1] * kd[1], c[2] * kd[2], alpha])
            .collect()
    } else {
        vec![[kd[0], kd[1], kd[2], alpha]; n]
    };
    Ok(LocalMesh {
        positions,
        normals,
        colors,
        texcoords,
        indices: mesh.indices.clone(),
        base_color_texture: None,
        // OBJ has no face rule and files do not promise a consistent winding.
        double_sided: true,
    })
}

fn triples(flat: &[f32]) -> Vec<[f32; 3]> {
    flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}
