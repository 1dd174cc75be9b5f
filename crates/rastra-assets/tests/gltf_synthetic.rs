//! Small glTF documents built in memory, one rule of the glTF 2.0 spec per test: topology
//! conversion, skipped primitives, accessor types and ranges, sparse data, the node graph,
//! transforms, materials and cameras.

mod common;

use common::{GltfBuilder, assert_close, assert_scene_invariants, base64, expect_error, load_gltf};
use serde_json::{Value, json};

const QUAD: [[f32; 3]; 4] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [1.0, 1.0, 0.0],
    [0.0, 1.0, 0.0],
];

/// One node with mesh 0 made of `primitives`.
fn single_mesh(primitives: Value) -> Value {
    json!({
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": [{ "mesh": 0 }],
        "meshes": [{ "name": "m", "primitives": primitives }],
    })
}

/// A quad as one primitive of `mode` with `indices`.
fn quad_with(mode: u32, indices: &[u16]) -> Vec<u8> {
    let mut b = GltfBuilder::default();
    let position = b.positions(&QUAD);
    let index = b.u16s(indices);
    b.finish(single_mesh(json!([{
        "attributes": { "POSITION": position },
        "indices": index,
        "mode": mode,
    }])))
}

#[test]
fn triangles_strips_and_fans_become_the_same_ccw_list() {
    for (mode, indices) in [
        (4, &[0u16, 1, 2, 0, 2, 3][..]),
        (5, &[1, 2, 0, 3][..]),
        (6, &[0, 1, 2, 3][..]),
    ] {
        let scene = load_gltf(&quad_with(mode, indices)).unwrap();
        assert_scene_invariants(&scene);
        assert_eq!(scene.triangle_count(), 2, "mode {mode}");
        // Every triangle faces +Z (counter-clockwise seen from +Z), so computed normals do too.
        assert!(
            scene.meshes[0]
                .normals
                .iter()
                .all(|n| *n == [0.0, 0.0, 1.0])
        );
    }
}

/// glTF 2.0 §3.9.5: a material is single-sided unless it says `doubleSided`, and so is the
/// default material of a primitive without one.
#[test]
fn double_sided_comes_from_the_material() {
    let mut b = GltfBuilder::default();
    let position = b.positions(&QUAD);
    let index = b.u16s(&[0, 1, 2, 0, 2, 3]);
    let mut doc = json!({
        "scene": 0,
        "scenes": [{ "nodes": [0, 1, 2] }],
        "nodes": [{ "mesh": 0 }, { "mesh": 1 }, { "mesh": 2 }],
        "meshes": [
            { "primitives": [{ "attributes": { "POSITION": position }, "indices": index }] },
            { "primitives": [{ "attributes": { "POSITION": position }, "indices": index, "material": 0 }] },
            { "primitives": [{ "attributes": { "POSITION": position }, "indices": index, "material": 1 }] },
        ],
    });
    doc["materials"] = json!([{ "doubleSided": true }, { "doubleSided": false }]);
    let scene = load_gltf(&b.finish(doc)).unwrap();
    assert_scene_invariants(&scene);
    let sided: Vec<bool> = scene.meshes.iter().map(|m| m.double_sided).collect();
    assert_eq!(sided, [false, true, false]);
}

#[test]
fn points_and_lines_are_skipped_and_listed() {
    let mut b = GltfBuilder::default();
    let position = b.positions(&QUAD);
    let triangles = b.u16s(&[0, 1, 2]);
    let doc = b.finish(single_mesh(json!([
        { "attributes": { "POSITION": position }, "mode": 0 },
        { "attributes": { "POSITION": position }, "mode": 1 },
        { "attributes": { "POSITION": position }, "mode": 2 },
        { "attributes": { "POSITION": position }, "mode": 3 },
        { "attributes": { "POSITION": position }, "indices": triangles },
    ])));
    let scene = load_gltf(&doc).unwrap();
    assert_scene_invariants(&scene);
    assert_eq!(scene.triangle_count(), 1);
    assert_eq!(
        scene.skipped_primitives,
        [
            "mesh 0 \"m\" primitive 0: POINTS with 4 vertices (rastra render draws triangles only)",
            "mesh 0 \"m\" primitive 1: LINES with 4 vertices (rastra render draws triangles only)",
            "mesh 0 \"m\" primitive 2: LINE_LOOP with 4 vertices (rastra render draws triangles only)",
            "mesh 0 \"m\" primitive 3: LINE_STRIP with 4 vertices (rastra render draws triangles only)",
        ]
    );
}

#[test]
fn a_file_of_only_lines_is_unsupported() {
    let message = expect_error(load_gltf(&quad_with(1, &[0, 1, 1, 2])), "Unsupported");
    assert!(
        message.contains("no triangle primitives to draw; skipped mesh 0"),
        "{message}"
    );
}

#[test]
fn accessor_types_must_match_their_semantic() {
    let cases: [(&str, Value, &str); 5] = [
        (
            "NORMAL",
            json!({ "componentType": 5126, "type": "VEC2" }),
            "NORMAL uses accessor 1 of type VEC2 FLOAT; glTF 2.0 §3.7.2.1 allows VEC3 of FLOAT",
        ),
        (
            "NORMAL",
            json!({ "componentType": 5122, "type": "VEC3", "normalized": true }),
            "of type VEC3 normalized SHORT",
        ),
        (
            "TEXCOORD_0",
            json!({ "componentType": 5123, "type": "VEC2" }),
            "TEXCOORD_n uses accessor 1 of type VEC2 UNSIGNED_SHORT",
        ),
        (
            "COLOR_0",
            json!({ "componentType": 5126, "type": "SCALAR" }),
            "COLOR_n uses accessor 1 of type SCALAR FLOAT",
        ),
        (
            "JOINTS_0",
            json!({ "componentType": 5126, "type": "VEC4" }),
            "JOINTS_n uses accessor 1",
        ),
    ];
    for (semantic, shape, needle) in cases {
        let mut b = GltfBuilder::default();
        let position = b.positions(&QUAD);
        let view = b.view(&[0u8; 64], None);
        let mut accessor = shape.clone();
        accessor["bufferView"] = json!(view);
        accessor["count"] = json!(4);
        let wrong = b.accessor(accessor);
        let mut attributes = json!({ "POSITION": position });
        attributes[semantic] = json!(wrong);
        let doc = b.finish(single_mesh(json!([{ "attributes": attributes }])));
        let message = expect_error(load_gltf(&doc), "Invalid");
        assert!(message.contains(needle), "{message}");
    }
}

#[test]
fn indices_must_be_unsigned_integers_and_positions_float() {
    let mut b = GltfBuilder::default();
    let position = b.positions(&QUAD);
    let float_indices = b.floats("SCALAR", &[0.0, 1.0, 2.0]);
    let doc = b.finish(single_mesh(json!([{
        "attributes": { "POSITION": position }, "indices": float_indices,
    }])));
    let message = expect_error(load_gltf(&doc), "Invalid");
    assert!(
        message.contains("indices uses accessor 1 of type SCALAR FLOAT"),
        "{message}"
    );

    let mut b = GltfBuilder::default();
    let view = b.view(&[0u8; 24], None);
    let position = b.accessor(json!({
        "bufferView": view, "componentType": 5123, "type": "VEC3", "count": 4,
        "min": [0, 0, 0], "max": [0, 0, 0],
    }));
    let doc = b.finish(single_mesh(
        json!([{ "attributes": { "POSITION": position } }]),
    ));
    let message = expect_error(load_gltf(&doc), "Invalid");
    assert!(
        message.contains("POSITION uses accessor 0 of type VEC3 UNSIGNED_SHORT"),
        "{message}"
    );
}

#[test]
fn non_finite_normals_are_rejected() {
    let mut b = GltfBuilder::default();
    let position = b.positions(&QUAD);
    let normal = b.floats(
        "VEC3",
        &[
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
            1.0,
            f32::NAN,
            0.0,
            1.0,
            0.0,
            0.0,
            1.0,
        ],
    );
    let index = b.u16s(&[0, 1, 2, 0, 2, 3]);
    let doc = b.finish(single_mesh(json!([{
        "attributes": { "POSITION": position, "NORMAL": normal }, "indices": index,
    }])));
    let message = expect_error(load_gltf(&doc), "Invalid");
    assert!(
        message.contains("NORMAL accessor 1 element 2 is [NaN, 0.0, 1.0]"),
        "{message}"
    );
}

#[test]
fn attribute_counts_must_agree() {
    let mut b = GltfBuilder::default();
    let position = b.positions(&QUAD);
    let texcoord = b.floats("VEC2", &[0.0; 6]);
    let doc = b.finish(single_mesh(json!([{
        "attributes": { "POSITION": position, "TEXCOORD_0": texcoord },
    }])));
    let message = expect_error(load_gltf(&doc), "Invalid");
    assert!(
        message.contains("TEXCOORD_0 has 3 elements but POSITION has 4"),
        "{message}"
    );
}

#[test]
fn accessors_must_fit_their_view_and_views_their_buffer() {
    let mut b = GltfBuilder::default();
    let view = b.view(&[0u8; 40], None);
    let position = b.accessor(json!({
        "bufferView": view, "byteOffset": 8, "componentType": 5126, "type": "VEC3", "count": 3,
    }));
    let doc = b.finish(single_mesh(
        json!([{ "attributes": { "POSITION": position } }]),
    ));
    let message = expect_error(load_gltf(&doc), "Invalid");
    assert!(
        message.contains(
            "accessor 0: 3 elements of 12 bytes (stride 12) from byte 8 need 44 bytes, but \
             bufferView 0 is 40 bytes"
        ),
        "{message}"
    );

    let mut doc: Value = serde_json::from_slice(&quad_with(4, &[0, 1, 2])).unwrap();
    doc["bufferViews"][0]["byteLength"] = json!(4096);
    let message = expect_error(load_gltf(&serde_json::to_vec(&doc).unwrap()), "Invalid");
    assert!(
        message.contains("bufferView 0 spans bytes 0..4096 of buffer 0"),
        "{message}"
    );
}

#[test]
fn interleaved_attributes_honour_byte_stride() {
    // POSITION and COLOR_0 (RGBA8 normalised) interleaved in a 16-byte stride.
    let mut bytes = Vec::new();
    let colors = [[255u8, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]];
    for (p, c) in QUAD.iter().take(3).zip(colors) {
        bytes.extend(p.iter().flat_map(|v| v.to_le_bytes()));
        bytes.extend(c);
    }
    let mut b = GltfBuilder::default();
    let view = b.view(&bytes, Some(16));
    let position = b.accessor(json!({
        "bufferView": view, "componentType": 5126, "type": "VEC3", "count": 3,
        "min": [0, 0, 0], "max": [1, 1, 0],
    }));
    let color = b.accessor(json!({
        "bufferView": view, "byteOffset": 12, "componentType": 5121, "normalized": true,
        "type": "VEC4", "count": 3,
    }));
    let mut rest = single_mesh(json!([{
        "attributes": { "POSITION": position, "COLOR_0": color }, "material": 0,
    }]));
    rest["materials"] =
        json!([{ "pbrMetallicRoughness": { "baseColorFactor": [0.5, 0.5, 0.5, 1.0] } }]);
    let scene = load_gltf(&b.finish(rest)).unwrap();
    assert_scene_invariants(&scene);
    let mesh = &scene.meshes[0];
    assert_eq!(mesh.positions, QUAD[..3]);
    // Vertex colour × baseColorFactor, both linear.
    assert_eq!(
        mesh.colors,
        [
            [0.5, 0.0, 0.0, 1.0],
            [0.0, 0.5, 0.0, 1.0],
            [0.0, 0.0, 0.5, 1.0]
        ]
    );
}

#[test]
fn sparse_accessors_substitute_values() {
    let mut b = GltfBuilder::default();
    let base = b.view(
        &QUAD
            .iter()
            .flatten()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>(),
        None,
    );
    let sparse_indices = b.view(&[3u8, 0, 0, 0], None);
    let sparse_values = b.view(
        &[0.0f32, 2.0, 0.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>(),
        None,
    );
    let position = b.accessor(json!({
        "bufferView": base, "componentType": 5126, "type": "VEC3", "count": 4,
        "min": [0, 0, 0], "max": [1, 2, 0],
        "sparse": {
            "count": 1,
            "indices": { "bufferView": sparse_indices, "componentType": 5121 },
            "values": { "bufferView": sparse_values },
        },
    }));
    let index = b.u16s(&[0, 1, 2, 0, 2, 3]);
    let doc = b.finish(single_mesh(json!([{
        "attributes": { "POSITION": position }, "indices": index,
    }])));
    let scene = load_gltf(&doc).unwrap();
    assert_eq!(scene.meshes[0].positions[3], [0.0, 2.0, 0.0]);
    assert_eq!(scene.bounds_max, [1.0, 2.0, 0.0]);
}

#[test]
fn huge_zero_initialised_sparse_accessors_fail_cleanly() {
    let mut b = GltfBuilder::default();
    let sparse_indices = b.view(&[0u8; 4], None);
    let sparse_values = b.view(&[0u8; 12], None);
    let position = b.accessor(json!({
        "componentType": 5126, "type": "VEC3", "count": 3u64 << 38,
        "min": [0, 0, 0], "max": [0, 0, 0],
        "sparse": {
            "count": 1,
            "indices": { "bufferView": sparse_indices, "componentType": 5121 },
            "values": { "bufferView": sparse_values },
        },
    }));
    let doc = b.finish(single_mesh(
        json!([{ "attributes": { "POSITION": position }, "mode": 4 }]),
    ));
    let message = expect_error(load_gltf(&doc), "Unsupported");
    assert!(message.contains("zero-initialised elements"), "{message}");
}

/// A mesh-less chain `0 → 1 → ... → n-1`, the last node holding the quad.
fn chain(length: usize, child_of_last: Option<usize>, scene_roots: Value) -> Vec<u8> {
    let mut b = GltfBuilder::default();
    let position = b.positions(&QUAD);
    let index = b.u16s(&[0, 1, 2, 0, 2, 3]);
    let mut nodes: Vec<Value> = (0..length)
        .map(|i| json!({ "children": [i + 1], "translation": [0.0, 0.0, 0.5] }))
        .collect();
    nodes[length - 1] = match child_of_last {
        Some(child) => json!({ "mesh": 0, "children": [child] }),
        None => json!({ "mesh": 0 }),
    };
    b.finish(json!({
        "scenes": [{ "nodes": scene_roots }],
        "nodes": nodes,
        "meshes": [{ "primitives": [{ "attributes": { "POSITION": position }, "indices": index }] }],
    }))
}

#[test]
fn deep_hierarchies_do_not_recurse() {
    // 100 000 nested nodes: an explicit stack, and every ancestor's translation applied.
    let scene = load_gltf(&chain(100_000, None, json!([0]))).unwrap();
    assert_scene_invariants(&scene);
    assert_close(scene.bounds_min, [0.0, 0.0, 49_999.5], 1e-2);
}

#[test]
fn cycles_and_shared_children_are_rejected() {
    let message = expect_error(load_gltf(&chain(3, Some(0), json!([0]))), "Invalid");
    assert!(
        message.contains("cycle (child → parent: 0 → 2 → 1 → 0)"),
        "{message}"
    );
    let message = expect_error(load_gltf(&chain(1, Some(0), json!([0]))), "Invalid");
    assert!(
        message.contains("cycle (child → parent: 0 → 0)"),
        "{message}"
    );
    // A cycle that the scene does not reach is unreachable, but still two parents are checked.
    let message = expect_error(load_gltf(&chain(3, Some(1), json!([0]))), "Invalid");
    assert!(
        message.contains("node 1 has two parents (nodes 0 and 2)"),
        "{message}"
    );
    let message = expect_error(load_gltf(&chain(2, None, json!([0, 1]))), "Invalid");
    assert!(
        message.contains("lists node 1 as a root, but it is a child of node 0"),
        "{message}"
    );
    let message = expect_error(load_gltf(&chain(1, None, json!([0, 0]))), "Invalid");
    assert!(message.contains("lists node 0 more than once"), "{message}");
}

/// The quad under node transforms: `nodes` is the node array, node 0 the scene root.
fn quad_under(nodes: Value, with_normals: bool) -> Vec<u8> {
    let mut b = GltfBuilder::default();
    let position = b.positions(&QUAD);
    let index = b.u16s(&[0, 1, 2, 0, 2, 3]);
    let mut attributes = json!({ "POSITION": position });
    if with_normals {
        attributes["NORMAL"] = json!(b.floats("VEC3", &[0.0, 0.0, 1.0].repeat(4)));
    }
    b.finish(json!({
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": nodes,
        "meshes": [{ "primitives": [{ "attributes": attributes, "indices": index }] }],
    }))
}

#[test]
fn node_transforms_compose_parent_first() {
    // Parent rotates 90° about +Y; child translates +X by 2: the child's origin lands at -Z 2.
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let doc = quad_under(
        json!([
            { "rotation": [0.0, s, 0.0, s], "children": [1] },
            { "translation": [2.0, 0.0, 0.0], "mesh": 0 },
        ]),
        true,
    );
    let scene = load_gltf(&doc).unwrap();
    assert_scene_invariants(&scene);
    assert_close(scene.meshes[0].positions[0], [0.0, 0.0, -2.0], 1e-6);
    // The +Z normal turns to +X.
    assert_close(scene.meshes[0].normals[0], [1.0, 0.0, 0.0], 1e-6);
    // A matrix node (column-major) is used as given: scale 3.
    let doc = quad_under(
        json!([{ "mesh": 0, "matrix": [3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 1] }]),
        false,
    );
    assert_eq!(load_gltf(&doc).unwrap().bounds_max, [3.0, 3.0, 0.0]);
}

#[test]
fn mirroring_nodes_flip_the_winding() {
    let doc = quad_under(json!([{ "mesh": 0, "scale": [-1.0, 1.0, 1.0] }]), true);
    let scene = load_gltf(&doc).unwrap();
    assert_scene_invariants(&scene);
    let mesh = &scene.meshes[0];
    assert_eq!(mesh.indices, [0, 2, 1, 0, 3, 2]);
    // Still facing +Z, and the re-wound triangles agree: CCW seen from +Z.
    assert_eq!(mesh.normals[0], [0.0, 0.0, 1.0]);
    let [a, b, c] = [0, 2, 1].map(|i| mesh.positions[i]);
    let cross_z = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    assert!(cross_z > 0.0);
}

#[test]
fn bad_transforms_are_rejected() {
    let doc = quad_under(
        json!([{ "mesh": 0, "rotation": [0.0, 0.0, 0.0, 0.0] }]),
        false,
    );
    let message = expect_error(load_gltf(&doc), "Invalid");
    assert!(
        message.contains("node 0: rotation [0.0, 0.0, 0.0, 0.0] is not a unit quaternion"),
        "{message}"
    );
    let doc = quad_under(
        json!([{ "mesh": 0, "scale": [1e30, 1e30, 1e30], "children": [1] }, { "mesh": 0, "scale": [1e30, 1.0, 1.0] }]),
        false,
    );
    let message = expect_error(load_gltf(&doc), "Invalid");
    assert!(message.contains("transformed position"), "{message}");
}

#[test]
fn meshes_are_instanced_per_node() {
    let doc = quad_under(
        json!([
            { "children": [1, 2] },
            { "mesh": 0, "translation": [-5.0, 0.0, 0.0] },
            { "mesh": 0, "translation": [5.0, 0.0, 0.0] },
        ]),
        false,
    );
    let scene = load_gltf(&doc).unwrap();
    assert_eq!(scene.meshes.len(), 2);
    assert_eq!(scene.triangle_count(), 4);
    assert_eq!(scene.bounds_min, [-5.0, 0.0, 0.0]);
    assert_eq!(scene.bounds_max, [6.0, 1.0, 0.0]);
}

fn with_camera(camera: Value, node_extra: Value) -> Vec<u8> {
    let mut doc: Value = serde_json::from_slice(&quad_with(4, &[0, 1, 2, 0, 2, 3])).unwrap();
    let mut node = json!({ "camera": 0 });
    for (k, v) in node_extra.as_object().unwrap() {
        node[k] = v.clone();
    }
    doc["nodes"].as_array_mut().unwrap().push(node);
    doc["scenes"][0]["nodes"] = json!([0, 1]);
    doc["cameras"] = json!([camera]);
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn cameras_take_their_frame_from_the_node() {
    // Rotated 90° about +Y: looks down -X from +X 4.
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let doc = with_camera(
        json!({ "type": "perspective", "perspective": { "yfov": 0.8, "znear": 0.1 } }),
        json!({ "translation": [4.0, 0.5, 0.0], "rotation": [0.0, s, 0.0, s], "scale": [2.0, 2.0, 2.0] }),
    );
    let scene = load_gltf(&doc).unwrap();
    let camera = scene.camera.unwrap();
    assert_close(camera.eye, [4.0, 0.5, 0.0], 1e-6);
    let direction: Vec<f32> = (0..3).map(|i| camera.target[i] - camera.eye[i]).collect();
    assert!(direction[0] < 0.0 && direction[1].abs() < 1e-6 && direction[2].abs() < 1e-6);
    assert_close(camera.up, [0.0, 1.0, 0.0], 1e-6);
    // No zfar (infinite projection): a finite far plane beyond the whole scene.
    assert!(camera.zfar > 3.5 + 0.71 && camera.zfar.is_finite());
    assert_eq!(camera.aspect, None);

    let doc = with_camera(
        json!({ "type": "orthographic", "orthographic": { "xmag": 1, "ymag": 1, "znear": 0.1, "zfar": 10 } }),
        json!({}),
    );
    assert_eq!(load_gltf(&doc).unwrap().camera, None);

    let doc = with_camera(
        json!({ "type": "perspective", "perspective": { "yfov": 0.0, "znear": 0.1 } }),
        json!({}),
    );
    let message = expect_error(load_gltf(&doc), "Invalid");
    assert!(
        message.contains("node 1 camera: yfov 0 is not in (0, π)"),
        "{message}"
    );

    // `type` says perspective but only an orthographic object is present.
    let doc = with_camera(
        json!({ "type": "perspective", "orthographic": { "xmag": 1, "ymag": 1, "znear": 0.1, "zfar": 10 } }),
        json!({}),
    );
    let message = expect_error(load_gltf(&doc), "Invalid");
    assert!(
        message.contains("perspective but has no perspective object"),
        "{message}"
    );
}

#[test]
fn dangling_references_are_errors_not_panics() {
    let mut doc: Value = serde_json::from_slice(&quad_with(4, &[0, 1, 2])).unwrap();
    doc["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(99);
    let message = expect_error(load_gltf(&serde_json::to_vec(&doc).unwrap()), "Invalid");
    assert!(
        message.contains("POSITION refers to accessor 99, but the file has 2"),
        "{message}"
    );

    let mut doc: Value = serde_json::from_slice(&quad_with(4, &[0, 1, 2])).unwrap();
    doc["meshes"][0]["primitives"][0]["material"] = json!(3);
    let message = expect_error(load_gltf(&serde_json::to_vec(&doc).unwrap()), "Invalid");
    assert!(
        message.contains("glTF validation: meshes[0].primitives[0].material: Index out of bounds"),
        "{message}"
    );
}

#[test]
fn files_without_scenes_or_triangles_are_rejected() {
    let mut doc: Value = serde_json::from_slice(&quad_with(4, &[0, 1, 2])).unwrap();
    doc.as_object_mut().unwrap().remove("scene");
    doc.as_object_mut().unwrap().remove("scenes");
    let message = expect_error(load_gltf(&serde_json::to_vec(&doc).unwrap()), "Invalid");
    assert!(message.contains("defines no scene"), "{message}");

    let mut doc: Value = serde_json::from_slice(&quad_with(4, &[0, 1, 2])).unwrap();
    doc["nodes"][0].as_object_mut().unwrap().remove("mesh");
    let message = expect_error(load_gltf(&serde_json::to_vec(&doc).unwrap()), "Invalid");
    assert!(message.contains("contains no triangles"), "{message}");
}

#[test]
fn glb_container_round_trip_and_gltf_1_detection() {
    // The same document as GLB with the buffer in the BIN chunk.
    let mut doc: Value = serde_json::from_slice(&quad_with(4, &[0, 1, 2, 0, 2, 3])).unwrap();
    let uri = doc["buffers"][0]["uri"].as_str().unwrap().to_string();
    let bin = decode(uri.split_once(",").unwrap().1);
    doc["buffers"][0].as_object_mut().unwrap().remove("uri");
    let mut json_chunk = serde_json::to_vec(&doc).unwrap();
    while !json_chunk.len().is_multiple_of(4) {
        json_chunk.push(b' ');
    }
    let mut bin_chunk = bin.clone();
    while !bin_chunk.len().is_multiple_of(4) {
        bin_chunk.push(0);
    }
    let mut glb = Vec::new();
    glb.extend(b"glTF");
    glb.extend(2u32.to_le_bytes());
    glb.extend(((12 + 8 + json_chunk.len() + 8 + bin_chunk.len()) as u32).to_le_bytes());
    glb.extend((json_chunk.len() as u32).to_le_bytes());
    glb.extend(0x4E4F_534Au32.to_le_bytes());
    glb.extend(&json_chunk);
    glb.extend((bin_chunk.len() as u32).to_le_bytes());
    glb.extend(0x004E_4942u32.to_le_bytes());
    glb.extend(&bin_chunk);
    let from_glb = load_gltf(&glb).unwrap();
    let from_json = load_gltf(&quad_with(4, &[0, 1, 2, 0, 2, 3])).unwrap();
    assert_eq!(from_glb, from_json);

    let v1 = br#"{"asset": {"version": "1.0"}, "scenes": {"s": {"nodes": []}}}"#;
    let message = expect_error(load_gltf(v1), "Unsupported");
    assert!(
        message.contains("glTF version 1.0 (rastra reads glTF 2.x)"),
        "{message}"
    );
    let message = expect_error(load_gltf(b"{ not json"), "Format");
    assert!(
        message.contains("glTF JSON: key must be a string"),
        "{message}"
    );
}

fn decode(text: &str) -> Vec<u8> {
    // Inverse of `common::base64`, by search: the test encoder is the reference.
    let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in text.trim_end_matches('=').chars() {
        bits = bits << 6 | alphabet.find(c).unwrap() as u32;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    assert_eq!(base64(&out), text);
    out
}

#[test]
fn instancing_past_the_scene_limit_fails_cleanly() {
    // 3 vertices, 3 000 000 indices, instanced on 100 nodes: 900 M indices.
    let mut b = GltfBuilder::default();
    let position = b.positions(&QUAD[..3]);
    let index = b.u16s(&[0, 1, 2].repeat(1_000_000));
    let nodes: Vec<Value> = (0..100).map(|_| json!({ "mesh": 0 })).collect();
    let doc = b.finish(json!({
        "scenes": [{ "nodes": (0..100).collect::<Vec<_>>() }],
        "nodes": nodes,
        "meshes": [{ "primitives": [{ "attributes": { "POSITION": position }, "indices": index }] }],
    }));
    let message = expect_error(load_gltf(&doc), "Unsupported");
    assert!(
        message.contains("after instancing meshes on nodes"),
        "{message}"
    );
}

/// A 2×1 PNG: red, then green.
fn tiny_png() -> Vec<u8> {
    let mut bytes = Vec::new();
    image::write_buffer_with_format(
        &mut std::io::Cursor::new(&mut bytes),
        &[255, 0, 0, 255, 0, 255, 0, 255],
        2,
        1,
        image::ExtendedColorType::Rgba8,
        image::ImageFormat::Png,
    )
    .unwrap();
    bytes
}

/// A quad with TEXCOORD_0 = corners and TEXCOORD_1 = corners × 2, whose material samples
/// image 0 through `texture_info`; `image` is the images array entry (a bufferView image is
/// added as view `png_view` when `in_buffer`).
fn textured_quad(texture_info: Value, sampler: Option<Value>, in_buffer: bool) -> Vec<u8> {
    let mut b = GltfBuilder::default();
    let position = b.positions(&QUAD);
    let uv0 = b.floats("VEC2", &[0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]);
    let uv1 = b.floats("VEC2", &[0.0, 0.0, 2.0, 0.0, 2.0, 2.0, 0.0, 2.0]);
    let index = b.u16s(&[0, 1, 2, 0, 2, 3]);
    let image = if in_buffer {
        let view = b.view(&tiny_png(), None);
        json!({ "bufferView": view, "mimeType": "image/png" })
    } else {
        json!({ "uri": format!("data:image/png;base64,{}", base64(&tiny_png())) })
    };
    let mut rest = single_mesh(json!([{
        "attributes": { "POSITION": position, "TEXCOORD_0": uv0, "TEXCOORD_1": uv1 },
        "indices": index, "material": 0,
    }]));
    rest["materials"] = json!([{ "pbrMetallicRoughness": { "baseColorTexture": texture_info } }]);
    rest["textures"] = match sampler {
        Some(_) => json!([{ "source": 0, "sampler": 0 }]),
        None => json!([{ "source": 0 }]),
    };
    if let Some(sampler) = sampler {
        rest["samplers"] = json!([sampler]);
    }
    rest["images"] = json!([image]);
    b.finish(rest)
}

#[test]
fn base_colour_textures_are_decoded_with_their_sampler() {
    for in_buffer in [false, true] {
        let scene = load_gltf(&textured_quad(
            json!({ "index": 0 }),
            Some(json!({ "magFilter": 9728, "minFilter": 9729, "wrapS": 33071 })),
            in_buffer,
        ))
        .unwrap();
        assert_scene_invariants(&scene);
        assert_eq!(scene.images.len(), 1);
        let image = &scene.images[0];
        assert_eq!((image.width, image.height), (2, 1));
        assert_eq!(image.rgba8, [255, 0, 0, 255, 0, 255, 0, 255]);
        let texture = scene.meshes[0].base_color_texture.unwrap();
        assert_eq!(texture.image, 0);
        use rastra_assets::{Filter, Sampler, Wrap};
        assert_eq!(
            texture.sampler,
            Sampler {
                mag_filter: Filter::Nearest,
                min_filter: Filter::Linear,
                mipmap_filter: None,
                wrap_u: Wrap::ClampToEdge,
                wrap_v: Wrap::Repeat,
            }
        );
        assert_eq!(scene.meshes[0].texcoords[2], [1.0, 1.0]);
    }
    // No sampler: repeat and trilinear ("auto" filtering).
    let scene = load_gltf(&textured_quad(json!({ "index": 0 }), None, false)).unwrap();
    let sampler = scene.meshes[0].base_color_texture.unwrap().sampler;
    assert_eq!(sampler, rastra_assets::Sampler::default());
}

#[test]
fn texcoord_sets_and_texture_transforms_apply() {
    // texCoord 1 selects the second set.
    let scene = load_gltf(&textured_quad(
        json!({ "index": 0, "texCoord": 1 }),
        None,
        false,
    ))
    .unwrap();
    assert_eq!(scene.meshes[0].texcoords[2], [2.0, 2.0]);
    // KHR_texture_transform: offset, rotation (π/2) and scale, and its texCoord override.
    let info = json!({ "index": 0, "extensions": { "KHR_texture_transform": {
        "offset": [0.0, 1.0], "rotation": std::f32::consts::FRAC_PI_2, "scale": [0.5, 0.5],
        "texCoord": 1,
    } } });
    let scene = load_gltf(&textured_quad(info, None, false)).unwrap();
    // TEXCOORD_1 of vertex 1 is (2, 0): scaled (1, 0), rotated (0, -1), offset (0, 0).
    let uv = scene.meshes[0].texcoords[1];
    assert!(uv[0].abs() < 1e-6 && uv[1].abs() < 1e-6, "{uv:?}");
    let uv = scene.meshes[0].texcoords[3];
    // (0, 2) → (0, 1) → (1, 0) → (1, 1).
    assert!(
        (uv[0] - 1.0).abs() < 1e-6 && (uv[1] - 1.0).abs() < 1e-6,
        "{uv:?}"
    );
}

#[test]
fn bad_textures_are_rejected_with_the_reason() {
    let message = expect_error(
        load_gltf(&textured_quad(
            json!({ "index": 0, "texCoord": 3 }),
            None,
            false,
        )),
        "Invalid",
    );
    assert!(message.contains("TEXCOORD_3"), "{message}");
    // An image that is not a PNG or JPEG.
    let mut doc: Value =
        serde_json::from_slice(&textured_quad(json!({ "index": 0 }), None, false)).unwrap();
    doc["images"][0]["uri"] = json!(format!("data:image/png;base64,{}", base64(b"GIF89a....")));
    let message = expect_error(load_gltf(&serde_json::to_vec(&doc).unwrap()), "Unsupported");
    assert!(
        message.contains("material 0 baseColorTexture: texture 0: image"),
        "{message}"
    );
    // A corrupt PNG.
    let mut png = tiny_png();
    png.truncate(png.len() - 20);
    doc["images"][0]["uri"] = json!(format!("data:image/png;base64,{}", base64(&png)));
    let message = expect_error(load_gltf(&serde_json::to_vec(&doc).unwrap()), "Invalid");
    assert!(message.contains("images[0]"), "{message}");
}
