//! Real files from Debian's `assimp-testmodels` and `glmark2-data`: the deliberately broken
//! glTF files must fail with a clear reason, the real models must load with the triangle counts
//! and bounds computed independently (by a separate Python reader of the JSON/GLB and by `awk`
//! over the OBJ; see the numbers' comments). Each test skips with a note when its file is not
//! installed.

mod common;

use std::path::Path;

use common::{assert_close, assert_scene_invariants, expect_error, system_model};
use rastra_assets::load;

const GLTF2: &str = "/usr/share/assimp/models/glTF2";

/// Loads `GLTF2/<relative>` expecting an error of `variant` whose message contains `needle`.
fn broken(relative: &str, variant: &str, needle: &str) {
    let Some(path) = system_model(&format!("{GLTF2}/{relative}")) else {
        return;
    };
    let message = expect_error(load(&path), variant);
    assert!(
        message.contains(needle),
        "message {message:?} lacks {needle:?}"
    );
    assert!(
        message.starts_with(&path.display().to_string()),
        "{message}"
    );
    eprintln!("{relative}: {message}");
}

#[test]
fn index_out_of_range_is_rejected() {
    broken(
        "IndexOutOfRange/IndexOutOfRange.gltf",
        "Invalid",
        "index 255 (at position 0) is out of range: POSITION has 24 vertices",
    );
    broken(
        "IndexOutOfRange/AllIndicesOutOfRange.gltf",
        "Invalid",
        "index 65535 (at position 0) is out of range",
    );
}

#[test]
fn infinite_positions_are_rejected() {
    // The file also omits POSITION min/max, which the loader tolerates so that the real defect
    // is the one reported.
    broken(
        "BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb",
        "Invalid",
        "POSITION accessor 2 element 0 is [-inf, -0.5, 0.5]",
    );
}

#[test]
fn wrong_json_types_are_rejected() {
    let cases = [
        // `primitives` is an object, not an array.
        ("badArray.gltf", "expected a sequence"),
        // KHR_texture_transform's value is a string, not an object.
        ("badExtension.gltf", "expected struct TextureTransform"),
        // normalTexture.scale is a string.
        (
            "badNumber.gltf",
            "invalid type: string \"not a number\", expected f32",
        ),
        // pbrMetallicRoughness is an array.
        ("badObject.gltf", "invalid type: string \"not an object\""),
        // scene name is a number.
        (
            "badString.gltf",
            "invalid type: integer `42`, expected a string",
        ),
        // texture index -1.
        ("badUint.gltf", "invalid type: integer `-1`"),
    ];
    for (file, needle) in cases {
        broken(&format!("wrongTypes/{file}"), "Format", needle);
    }
    // Every glTF in the directory is covered above.
    if let Ok(entries) = std::fs::read_dir(format!("{GLTF2}/wrongTypes")) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".gltf") {
                assert!(cases.iter().any(|(f, _)| *f == name), "untested {name}");
            }
        }
    }
}

#[test]
fn recursive_nodes_are_rejected() {
    broken(
        "RecursiveNodes/RecursiveNodes.gltf",
        "Invalid",
        "node hierarchy has a cycle (child → parent: 0 → 1 → 0)",
    );
}

#[test]
fn missing_bin_is_rejected() {
    broken(
        "MissingBin/BoxTextured.gltf",
        "Invalid",
        "buffer 0 (\"BoxTextured0.bin\"): cannot read",
    );
}

#[test]
fn schema_failures_are_rejected() {
    broken(
        "SchemaFailures/sceneWrongType.gltf",
        "Format",
        "invalid type: string \"hello\"",
    );
}

#[test]
fn incorrect_vertex_arrays_are_rejected() {
    // The first drawn defect: a non-indexed TRIANGLES primitive with 35 vertices. (The file also
    // has buffer views past its 514-byte buffer and truncated line primitives.)
    broken(
        "IncorrectVertexArrays/Cube.gltf",
        "Invalid",
        "mesh 1 \"TruncatedCube\" primitive 0: TRIANGLES with 35 vertex indices",
    );
}

#[test]
fn scenes_without_content_are_rejected() {
    // `"scene": 0` without a `scenes` array.
    broken(
        "TestNoRootNode/NoScene.gltf",
        "Invalid",
        "scene: Index out of bounds",
    );
    // A scene object without `nodes`: the gltf crate's schema requires the field.
    broken(
        "TestNoRootNode/SceneWithoutNodes.gltf",
        "Format",
        "missing field `nodes`",
    );
}

#[test]
fn required_extensions_are_unsupported() {
    broken(
        "draco/2CylinderEngine.gltf",
        "Unsupported",
        "KHR_draco_mesh_compression",
    );
    broken(
        "BoxTextured-glTF-techniqueWebGL/BoxTextured.gltf",
        "Unsupported",
        "KHR_technique_webgl",
    );
}

#[test]
fn two_cylinder_engine_loads() {
    let Some(path) = system_model(&format!(
        "{GLTF2}/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"
    )) else {
        return;
    };
    let scene = load(&path).unwrap();
    assert_scene_invariants(&scene);
    // Independent reader: 121496 triangles; world bounds (node hierarchy applied)
    // [-371.69226, -180.97156, -139.99999] .. [371.69217, 92.04156, 127.99999].
    assert_eq!(scene.triangle_count(), 121_496);
    assert_close(scene.bounds_min, [-371.69226, -180.97156, -140.0], 1e-3);
    assert_close(scene.bounds_max, [371.69217, 92.04156, 128.0], 1e-3);
    assert!(scene.skipped_primitives.is_empty());
    // The file has one perspective camera.
    let camera = scene.camera.expect("file camera");
    assert!((camera.yfov_radians - 0.314_346_37).abs() < 1e-6);
    assert_eq!(camera.aspect, Some(1.0));
}

#[test]
fn box_textured_loads_identically_from_gltf_glb_and_data_uri() {
    let variants = [
        "BoxTextured-glTF/BoxTextured.gltf",
        "BoxTextured-glTF-Binary/BoxTextured.glb",
        "BoxTextured-glTF-Embedded/BoxTextured.gltf",
    ];
    let mut scenes = Vec::new();
    for variant in variants {
        let Some(path) = system_model(&format!("{GLTF2}/{variant}")) else {
            return;
        };
        let scene = load(&path).unwrap();
        assert_scene_invariants(&scene);
        // 36 indices; a ±0.5 cube under a 90° rotation about X.
        assert_eq!(scene.triangle_count(), 12);
        assert_close(scene.bounds_min, [-0.5; 3], 1e-6);
        assert_close(scene.bounds_max, [0.5; 3], 1e-6);
        assert!(scene.camera.is_none());
        scenes.push(scene);
    }
    // The image is named after its file only where it has one.
    assert_eq!(scenes[0].images[0].name, "CesiumLogoFlat.png");
    assert_eq!(scenes[1].images[0].name, "images[0]");
    // The GLB and embedded variants' sampler wraps with REPEAT; the .gltf + .bin one asks
    // for MIRRORED_REPEAT / CLAMP_TO_EDGE.
    let wrap = |scene: &rastra_assets::Scene| {
        let sampler = scene.meshes[0].base_color_texture.unwrap().sampler;
        (sampler.wrap_u, sampler.wrap_v)
    };
    use rastra_assets::Wrap;
    assert_eq!(wrap(&scenes[1]), (Wrap::Repeat, Wrap::Repeat));
    assert_eq!(wrap(&scenes[2]), (Wrap::Repeat, Wrap::Repeat));
    let first_sampler = scenes[0].meshes[0].base_color_texture.unwrap().sampler;
    for scene in &mut scenes {
        scene.images.iter_mut().for_each(|i| i.name.clear());
        for mesh in &mut scene.meshes {
            if let Some(t) = &mut mesh.base_color_texture {
                t.sampler = first_sampler;
            }
        }
    }
    assert_eq!(scenes[0], scenes[1]);
    assert_eq!(scenes[0], scenes[2]);
    // The base-colour texture, its sampler, its image (a 211² palette PNG) and texture
    // coordinates are read.
    let mesh = &scenes[0].meshes[0];
    let texture = mesh.base_color_texture.expect("a base colour texture");
    let image = &scenes[0].images[texture.image];
    assert_eq!((image.width, image.height), (211, 211));
    assert_eq!(image.rgba8.len(), 211 * 211 * 4);
    assert_eq!(
        texture.sampler,
        rastra_assets::Sampler {
            mag_filter: rastra_assets::Filter::Linear,
            min_filter: rastra_assets::Filter::Nearest,
            mipmap_filter: Some(rastra_assets::Filter::Linear),
            wrap_u: rastra_assets::Wrap::MirroredRepeat,
            wrap_v: rastra_assets::Wrap::ClampToEdge,
        }
    );
    assert!(image.rgba8.chunks_exact(4).any(|p| p != &image.rgba8[..4]));
    assert!(mesh.texcoords.iter().any(|t| *t != [0.0, 0.0]));
    // Material has no baseColorFactor: white.
    assert!(scenes[0].meshes[0].colors.iter().all(|c| *c == [1.0; 4]));
}

#[test]
fn bad_normals_are_repaired_not_fatal() {
    // Zero-length and non-unit normals (invalid per §3.7.2.1, but harmless to fix): zero ones are
    // replaced by the computed normal, others renormalised.
    let Some(path) = system_model(&format!(
        "{GLTF2}/BoxBadNormals-glTF-Binary/BoxBadNormals.glb"
    )) else {
        return;
    };
    let scene = load(&path).unwrap();
    assert_scene_invariants(&scene);
    assert_eq!(scene.triangle_count(), 12);
    // The node matrix maps local +Y to world -Z and local +Z to world +Y.
    let normals = &scene.meshes[0].normals;
    // Vertex 4's file normal is (0, -0.1, 0): renormalised and rotated.
    assert_close(normals[4], [0.0, 0.0, 1.0], 1e-6);
    // Vertices 0..4 have zero normals; their face is the local +Z face, computed as world +Y.
    for normal in &normals[..4] {
        assert_close(*normal, [0.0, 1.0, 0.0], 1e-6);
    }
}

#[test]
fn camera_nodes_are_used() {
    let Some(path) = system_model(&format!("{GLTF2}/cameras/Cameras.gltf")) else {
        return;
    };
    let scene = load(&path).unwrap();
    assert_scene_invariants(&scene);
    assert_eq!(scene.triangle_count(), 2);
    // Node 1 is perspective (node 2, orthographic, is not representable and is ignored).
    let camera = scene.camera.expect("perspective camera");
    assert_close(camera.eye, [0.5, 0.5, 3.0], 1e-6);
    assert_close(camera.up, [0.0, 1.0, 0.0], 1e-6);
    assert!(camera.target[2] < camera.eye[2]); // looks down -Z
    assert_eq!(
        (
            camera.yfov_radians,
            camera.znear,
            camera.zfar,
            camera.aspect
        ),
        (0.7, 0.01, 100.0, Some(1.0))
    );
}

#[test]
fn bunny_obj_loads() {
    let Some(path) = system_model("/usr/share/glmark2/models/bunny.obj") else {
        return;
    };
    let scene = load(&path).unwrap();
    assert_scene_invariants(&scene);
    // awk: 69666 `f` lines, all triangles; 34835 `v` lines with x in [-1, 1],
    // y in [-0.991233, 0.991233], z in [-0.775047, 0.775047]; no `vn`, so normals are computed.
    assert_eq!(scene.triangle_count(), 69_666);
    assert_eq!(scene.vertex_count(), 34_835);
    assert_close(scene.bounds_min, [-1.0, -0.991233, -0.775047], 1e-6);
    assert_close(scene.bounds_max, [1.0, 0.991233, 0.775047], 1e-6);
    assert!(scene.camera.is_none());
    let camera = scene.framing_camera(16.0 / 9.0);
    assert!(camera.znear > 0.0 && camera.zfar > camera.znear);
}

#[test]
fn assimp_obj_samples() {
    let dir = "/usr/share/assimp/models/OBJ";
    let Some(cube) = system_model(&format!("{dir}/cube_usemtl.obj")) else {
        return;
    };
    let scene = load(&cube).unwrap();
    assert_scene_invariants(&scene);
    assert_eq!(scene.triangle_count(), 12);
    // A point cloud has nothing to draw.
    let message = expect_error(
        load(Path::new(&format!("{dir}/point_cloud.obj"))),
        "Invalid",
    );
    assert!(message.contains("no triangles"), "{message}");
}
