//! Loaded models as frames: every mesh of a [`rastra_assets::Scene`] drawn with the lit
//! material, seen through the file's camera or, when it has none, a camera framing its
//! bounds, lit by one directional light over the viewer's shoulder.

use rastra_assets::Scene;

use crate::Frame;
use crate::lit::{Material, MeshData, View, frame};
use crate::math::{add, normalize, sub};

/// A frame showing `scene` at the given size.
pub fn frame_for(name: &str, scene: &Scene, width: u32, height: u32, samples: u32) -> Frame {
    let aspect = width as f32 / height as f32;
    let camera = scene.camera.unwrap_or_else(|| scene.framing_camera(aspect));
    let forward = normalize(sub(camera.target, camera.eye));
    let light = normalize(add(sub([0.0; 3], forward), [0.3, 0.8, 0.2]));
    let view = View {
        eye: camera.eye,
        target: camera.target,
        up: camera.up,
        yfov: camera.yfov_radians,
        near: camera.znear,
        far: camera.zfar,
        light,
    };
    let meshes: Vec<(MeshData, Material)> = scene
        .meshes
        .iter()
        .map(|m| {
            let mut data = MeshData::default();
            for i in 0..m.positions.len() {
                data.vertex(m.positions[i], m.normals[i], m.colors[i], m.texcoords[i]);
            }
            data.indices = m.indices.clone();
            // Files do not promise consistent winding: draw both faces.
            (data, Material::LitTwoSided)
        })
        .collect();
    frame(name, width, height, samples, &view, &meshes)
}
