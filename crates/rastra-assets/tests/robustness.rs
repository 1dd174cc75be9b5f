//! Malformed input never panics: every single-byte corruption and every truncation of small
//! valid files must come back as `Ok` or `Err`, never as a panic (the `gltf` crate's own GLB
//! reader and validator have unchecked arithmetic and indexing that `rastra-assets` guards).

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use common::{GltfBuilder, system_model};
use rastra_assets::{AssetError, Scene, load_gltf_bytes, load_obj_bytes};
use serde_json::json;

type Loader = fn(&[u8]) -> Result<Scene, AssetError>;

fn gltf(bytes: &[u8]) -> Result<Scene, AssetError> {
    load_gltf_bytes(bytes, Path::new("/nonexistent"), Path::new("fuzz.gltf"))
}

fn obj(bytes: &[u8]) -> Result<Scene, AssetError> {
    load_obj_bytes(bytes, Path::new("/nonexistent"), Path::new("fuzz.obj"))
}

/// Runs `load` on every truncation and on every byte replaced by each of `replacements`
/// (plus a bit flip); returns how many variants loaded. Panics list the first offenders.
fn survive_corruption(original: &[u8], load: Loader, replacements: &[u8]) -> usize {
    let mut panics = Vec::new();
    let mut loaded = 0;
    let mut attempt =
        |bytes: &[u8], what: String| match catch_unwind(AssertUnwindSafe(|| load(bytes))) {
            Ok(Ok(scene)) => {
                assert!(scene.triangle_count() > 0);
                loaded += 1;
            }
            Ok(Err(error)) => assert!(!error.to_string().is_empty()),
            Err(_) => panics.push(what),
        };
    for length in 0..original.len() {
        attempt(&original[..length], format!("truncated to {length} bytes"));
    }
    let mut bytes = original.to_vec();
    for at in 0..original.len() {
        for &value in replacements.iter().chain([original[at] ^ 0x04].iter()) {
            bytes[at] = value;
            attempt(&bytes, format!("byte {at} set to {value:#04x}"));
        }
        bytes[at] = original[at];
    }
    assert!(
        panics.is_empty(),
        "{} panics, first: {:?}",
        panics.len(),
        &panics[..panics.len().min(10)]
    );
    loaded
}

/// A small indexed, textured, coloured, sparse, camera-carrying document.
fn rich_document() -> Vec<u8> {
    let mut b = GltfBuilder::default();
    let position = b.positions(&[
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ]);
    let normal = b.floats("VEC3", &[0.0, 0.0, 1.0].repeat(4));
    let texcoord = b.floats("VEC2", &[0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]);
    let index = b.u16s(&[0, 1, 2, 3]);
    b.finish(json!({
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": [
            { "children": [1, 2], "scale": [2, 2, 2] },
            { "mesh": 0, "rotation": [0, 0, 0, 1] },
            { "camera": 0, "translation": [0, 0, 5] },
        ],
        "cameras": [{ "type": "perspective", "perspective": { "yfov": 0.8, "znear": 0.1 } }],
        "materials": [{ "pbrMetallicRoughness": { "baseColorFactor": [1, 0.5, 0.5, 1] } }],
        "meshes": [{ "primitives": [{
            "attributes": { "POSITION": position, "NORMAL": normal, "TEXCOORD_0": texcoord },
            "indices": index, "mode": 6, "material": 0,
        }] }],
    }))
}

#[test]
fn corrupted_gltf_json_never_panics() {
    let document = rich_document();
    assert!(gltf(&document).is_ok());
    let loaded = survive_corruption(&document, gltf, b"0\"-9{}[],:e ");
    assert!(loaded > 0);
}

#[test]
fn corrupted_glb_never_panics() {
    let Some(path) =
        system_model("/usr/share/assimp/models/glTF2/BoxTextured-glTF-Binary/BoxTextured.glb")
    else {
        return;
    };
    let original = std::fs::read(path).unwrap();
    assert!(gltf(&original).is_ok());
    survive_corruption(&original, gltf, &[0x00, 0xff, 0x7f, b'9', b'"']);
}

#[test]
fn corrupted_obj_never_panics() {
    let text = b"mtllib x.mtl\nv 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 1 1 0 0 0 1\nv 0 1 0 1 1 1\n\
vt 0 0\nvt 1 0\nvt 1 1\nvn 0 0 1\ng quad\nusemtl m\nf 1/1/1 2/2/1 3/3/1 4/1/1\nf -1 -2 -3\n";
    assert!(obj(text).is_ok());
    survive_corruption(text, obj, b"-0 /9\nfv");
}

#[test]
fn pathological_inputs_fail_cleanly() {
    let deep_json = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(matches!(
        gltf(deep_json.as_bytes()),
        Err(AssetError::Format { .. })
    ));
    for face in [
        "f 1/4611686018427387904/1 2 3",
        "f 1 2 18446744073709551615",
        "f 1 2 -9223372036854775808",
        "f 0 0 0",
    ] {
        let text = format!("v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\n{face}\n");
        assert!(obj(text.as_bytes()).is_err(), "{face}");
    }
}
