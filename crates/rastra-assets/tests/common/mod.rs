//! Test helpers: locating the Debian test models, and building small glTF files in memory.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rastra_assets::{AssetError, Scene};
use serde_json::{Value, json};

/// A model shipped by a Debian package (`assimp-testmodels`, `glmark2-data`; installed by
/// `scripts/setup.sh`). `None`, with a note on stderr, when it is not installed.
pub fn system_model(path: &str) -> Option<PathBuf> {
    let path = PathBuf::from(path);
    if path.exists() {
        Some(path)
    } else {
        eprintln!(
            "skipping: {} is not installed (scripts/setup.sh installs assimp-testmodels and \
             glmark2-data)",
            path.display()
        );
        None
    }
}

/// Absolute difference within `tolerance` for every component.
pub fn assert_close(actual: [f32; 3], expected: [f32; 3], tolerance: f32) {
    for (a, e) in actual.iter().zip(expected) {
        assert!(
            (a - e).abs() <= tolerance,
            "{actual:?} != {expected:?} (tolerance {tolerance})"
        );
    }
}

/// Checks the documented `Mesh` invariants on every mesh of a loaded scene.
pub fn assert_scene_invariants(scene: &Scene) {
    assert!(scene.triangle_count() > 0);
    for mesh in &scene.meshes {
        let n = mesh.positions.len();
        assert_eq!(mesh.normals.len(), n);
        assert_eq!(mesh.colors.len(), n);
        assert_eq!(mesh.texcoords.len(), n);
        assert_eq!(mesh.indices.len() % 3, 0);
        assert!(mesh.indices.iter().all(|&i| (i as usize) < n));
        for p in &mesh.positions {
            for (axis, &c) in p.iter().enumerate() {
                assert!(c.is_finite());
                assert!(scene.bounds_min[axis] <= c && c <= scene.bounds_max[axis]);
            }
        }
        for normal in &mesh.normals {
            let length = normal.iter().map(|c| c * c).sum::<f32>().sqrt();
            assert!(
                (length - 1.0).abs() < 1e-4,
                "normal {normal:?} is not unit length"
            );
        }
    }
}

/// Builds a glTF 2.0 JSON document whose single buffer is an embedded `data:` URI.
#[derive(Default)]
pub struct GltfBuilder {
    buffer: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl GltfBuilder {
    /// Appends `bytes` as a new buffer view (4-byte aligned); returns the view index.
    pub fn view(&mut self, bytes: &[u8], stride: Option<usize>) -> usize {
        while !self.buffer.len().is_multiple_of(4) {
            self.buffer.push(0);
        }
        let mut view = json!({
            "buffer": 0,
            "byteOffset": self.buffer.len(),
            "byteLength": bytes.len(),
        });
        if let Some(stride) = stride {
            view["byteStride"] = json!(stride);
        }
        self.buffer.extend_from_slice(bytes);
        self.views.push(view);
        self.views.len() - 1
    }

    /// Adds an accessor object verbatim; returns its index.
    pub fn accessor(&mut self, accessor: Value) -> usize {
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    /// A tightly packed FLOAT accessor of `ty` (`"VEC3"`, ...) over `values`.
    pub fn floats(&mut self, ty: &str, values: &[f32]) -> usize {
        let dims = match ty {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            _ => panic!("unknown type {ty}"),
        };
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.view(&bytes, None);
        self.accessor(json!({
            "bufferView": view,
            "componentType": 5126,
            "count": values.len() / dims,
            "type": ty,
        }))
    }

    /// A VEC3 FLOAT position accessor, with the `min`/`max` the spec requires.
    pub fn positions(&mut self, points: &[[f32; 3]]) -> usize {
        let flat: Vec<f32> = points.iter().flatten().copied().collect();
        let index = self.floats("VEC3", &flat);
        let mut min = [f32::INFINITY; 3];
        let mut max = [f32::NEG_INFINITY; 3];
        for p in points {
            for axis in 0..3 {
                min[axis] = min[axis].min(p[axis]);
                max[axis] = max[axis].max(p[axis]);
            }
        }
        self.accessors[index]["min"] = json!(min);
        self.accessors[index]["max"] = json!(max);
        index
    }

    /// An UNSIGNED_SHORT SCALAR accessor (indices).
    pub fn u16s(&mut self, values: &[u16]) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.view(&bytes, None);
        self.accessor(json!({
            "bufferView": view,
            "componentType": 5123,
            "count": values.len(),
            "type": "SCALAR",
        }))
    }

    /// The finished document: `rest` (scenes, nodes, meshes, ...) plus asset, buffer, views and
    /// accessors.
    pub fn finish(self, mut rest: Value) -> Vec<u8> {
        rest["asset"] = json!({ "version": "2.0" });
        rest["buffers"] = json!([{
            "byteLength": self.buffer.len(),
            "uri": format!("data:application/octet-stream;base64,{}", base64(&self.buffer)),
        }]);
        rest["bufferViews"] = Value::Array(self.views);
        rest["accessors"] = Value::Array(self.accessors);
        serde_json::to_vec_pretty(&rest).unwrap()
    }
}

/// Loads glTF bytes built in a test.
pub fn load_gltf(bytes: &[u8]) -> Result<Scene, AssetError> {
    rastra_assets::load_gltf_bytes(bytes, Path::new("."), Path::new("test.gltf"))
}

/// The message of an error, asserting its variant by name.
pub fn expect_error(result: Result<Scene, AssetError>, variant: &str) -> String {
    let error = match result {
        Ok(scene) => panic!(
            "expected {variant} error, loaded {} triangles",
            scene.triangle_count()
        ),
        Err(error) => error,
    };
    let actual = match &error {
        AssetError::Io { .. } => "Io",
        AssetError::Format { .. } => "Format",
        AssetError::Invalid { .. } => "Invalid",
        AssetError::Unsupported { .. } => "Unsupported",
    };
    assert_eq!(actual, variant, "wrong variant: {error}");
    error.to_string()
}

/// Standard base64 with padding (RFC 4648 §4), for embedding test buffers.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let bits = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(bits >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
