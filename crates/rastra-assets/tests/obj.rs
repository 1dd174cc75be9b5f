//! Wavefront OBJ through `tobj`: materials, vertex colours, texture coordinates, computed
//! normals, and malformed input.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_scene_invariants, expect_error};
use rastra_assets::{load, load_obj_bytes};

/// A fresh directory for files of one test.
fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rastra-assets-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const QUAD_OBJ: &str = "\
mtllib quad.mtl
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
vt 0 0
vt 1 0
vt 1 1
vt 0 1
usemtl red
f 1/1 2/2 3/3 4/4
";

#[test]
fn quads_are_triangulated_with_mtl_colour_and_flipped_texcoords() {
    let dir = scratch_dir("quad");
    std::fs::write(dir.join("quad.obj"), QUAD_OBJ).unwrap();
    std::fs::write(dir.join("quad.mtl"), "newmtl red\nKd 0.8 0.1 0.2\nd 0.5\n").unwrap();
    let scene = load(&dir.join("quad.obj")).unwrap();
    assert_scene_invariants(&scene);
    assert_eq!(scene.triangle_count(), 2);
    let mesh = &scene.meshes[0];
    assert!(mesh.colors.iter().all(|c| *c == [0.8, 0.1, 0.2, 0.5]));
    // `vt 0 0` (OBJ: bottom-left) becomes (0, 1) in the glTF top-left convention.
    assert_eq!(mesh.texcoords[0], [0.0, 1.0]);
    assert_eq!(mesh.texcoords[2], [1.0, 0.0]);
    // No `vn`: computed, facing the counter-clockwise side.
    assert!(mesh.normals.iter().all(|n| *n == [0.0, 0.0, 1.0]));
    // OBJ promises no winding: both faces are shown.
    assert!(mesh.double_sided);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_missing_mtl_leaves_the_mesh_white() {
    let scene = load_obj_bytes(
        QUAD_OBJ.as_bytes(),
        Path::new("/nonexistent"),
        Path::new("q.obj"),
    )
    .unwrap();
    assert!(scene.meshes[0].colors.iter().all(|c| *c == [1.0; 4]));
}

#[test]
fn vertex_colours_and_file_normals_are_used() {
    let obj = "v 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 0 1 0 0 0 1\nvn 0 0 2\nf 1//1 2//1 3//1\n";
    let scene = load_obj_bytes(obj.as_bytes(), Path::new("."), Path::new("c.obj")).unwrap();
    assert_scene_invariants(&scene);
    let mesh = &scene.meshes[0];
    assert_eq!(
        mesh.colors,
        [
            [1.0, 0.0, 0.0, 1.0],
            [0.0, 1.0, 0.0, 1.0],
            [0.0, 0.0, 1.0, 1.0]
        ]
    );
    // Renormalised.
    assert_eq!(mesh.normals[0], [0.0, 0.0, 1.0]);
}

#[test]
fn malformed_obj_is_rejected() {
    let cases = [
        ("v 0 0 0\nv 1 0 0\nf 1 2 3\n", "Format", "OBJ: "),
        ("v 0 0 zero\nf 1 1 1\n", "Format", "OBJ: "),
        (
            "v 0 0 0\nv 1 0 0\nv nan 1 0\nf 1 2 3\n",
            "Invalid",
            "position 2 is not finite",
        ),
        (
            "v 0 0 0\nv 1 0 0\nv inf 1 0\nf 1 2 3\n",
            "Invalid",
            "position 2 is not finite",
        ),
        ("v 0 0 0\nv 1 0 0\nl 1 2\n", "Invalid", "no triangles"),
        ("# nothing\n", "Invalid", "no triangles"),
    ];
    for (text, variant, needle) in cases {
        let result = load_obj_bytes(text.as_bytes(), Path::new("."), Path::new("bad.obj"));
        let message = expect_error(result, variant);
        assert!(message.contains(needle), "{text:?}: {message}");
        assert!(message.starts_with("bad.obj: "), "{message}");
    }
}

#[test]
fn io_and_extension_errors_name_the_file() {
    let message = expect_error(load(Path::new("/nonexistent/model.obj")), "Io");
    assert!(
        message.starts_with("/nonexistent/model.obj: cannot read file: "),
        "{message}"
    );
    let message = expect_error(load(Path::new("model.fbx")), "Unsupported");
    assert_eq!(
        message,
        "model.fbx: unsupported: unknown model file extension \"fbx\" (expected .gltf, .glb or .obj)"
    );
}
