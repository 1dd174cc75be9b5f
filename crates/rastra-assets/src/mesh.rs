//! From loader output to the public types: instancing, normals, validation, bounds, cameras.
//!
//! Both loaders produce a [`LocalMesh`] per primitive (object space, file order, already a
//! triangle list) and hand it here with the node's world matrix. [`instantiate`] applies the
//! transform the way glTF 2.0 specifies: positions by the matrix (§3.5.3), normals by its
//! inverse-transpose, and the winding flipped when the determinant is negative (§3.7.4) so that
//! counter-clockwise is front-facing in world space for every mesh. [`finish_scene`] checks the
//! [`crate::Mesh`] invariants and computes bounds; this is the last gate before the API boundary.
//!
//! Normals missing from the file are computed as area-weighted smooth normals (the sum of the
//! unnormalised face normals around a vertex). glTF 2.0 §3.7.2.1 asks for flat normals instead;
//! rastra shares vertices so that indexed drawing stays indexed, and smooth shading is what
//! the render command wants for scanned models such as the bunny.

use glam::{Mat3, Mat4, Vec3};

use crate::error::{Problem, invalid};
use crate::image::{BaseColorTexture, Image};
use crate::{Camera, Mesh, Scene};

/// Vertical field of view of [`crate::Scene::framing_camera`]: 45°.
pub const FRAMING_YFOV_RADIANS: f32 = std::f32::consts::FRAC_PI_4;

/// Azimuth (to the right of +Z) and elevation of the framing camera's view direction.
const FRAMING_AZIMUTH_DEGREES: f32 = 30.0;
const FRAMING_ELEVATION_DEGREES: f32 = 20.0;

/// Normal used for a vertex no non-degenerate triangle touches.
const FALLBACK_NORMAL: [f32; 3] = [0.0, 0.0, 1.0];

/// After instancing, a scene may hold at most this many vertices (about 3 GiB of attributes)
/// and indices (768 MiB): a small file can instance a big mesh many times, and that must fail
/// cleanly, not abort on allocation.
pub(crate) const MAX_SCENE_VERTICES: usize = 1 << 26;
pub(crate) const MAX_SCENE_INDICES: usize = 3 << 26;

/// One primitive in its own coordinate system, as read from the file.
///
/// Invariant (checked by [`LocalMesh::validate`]): attribute vectors as long as `positions`,
/// whole triangles, indices in range, finite values.
#[derive(Debug, Clone, Default)]
pub(crate) struct LocalMesh {
    pub positions: Vec<[f32; 3]>,
    /// `None` when the file has no normals; computed after transforming to world space.
    pub normals: Option<Vec<[f32; 3]>>,
    pub colors: Vec<[f32; 4]>,
    pub texcoords: Vec<[f32; 2]>,
    pub indices: Vec<u32>,
    pub base_color_texture: Option<BaseColorTexture>,
    /// See [`crate::Mesh::double_sided`].
    pub double_sided: bool,
}

impl LocalMesh {
    /// Checks the invariant; loaders call this once per primitive, before instancing.
    pub(crate) fn validate(&self) -> Result<(), Problem> {
        let n = self.positions.len();
        let lengths = [
            ("normals", self.normals.as_ref().map_or(n, Vec::len)),
            ("colors", self.colors.len()),
            ("texcoords", self.texcoords.len()),
        ];
        for (name, len) in lengths {
            if len != n {
                return invalid!("{name} has {len} entries for {n} positions");
            }
        }
        if !self.indices.len().is_multiple_of(3) {
            return invalid!(
                "{} indices is not a whole number of triangles",
                self.indices.len()
            );
        }
        if let Some((at, &index)) = self
            .indices
            .iter()
            .enumerate()
            .find(|&(_, &i)| i as usize >= n)
        {
            return invalid!("index {index} (at position {at}) is out of range for {n} vertices");
        }
        check_finite("position", &self.positions)?;
        if let Some(normals) = &self.normals {
            check_finite("normal", normals)?;
        }
        check_finite("color", &self.colors)?;
        check_finite("texcoord", &self.texcoords)
    }
}

/// Rejects NaN and infinities, naming the first offending element.
pub(crate) fn check_finite<const N: usize>(what: &str, values: &[[f32; N]]) -> Result<(), Problem> {
    match values.iter().position(|v| v.iter().any(|c| !c.is_finite())) {
        Some(i) => invalid!("{what} {i} is not finite: {:?}", values[i]),
        None => Ok(()),
    }
}

/// Places a validated [`LocalMesh`] in the world with `world` (the node's global transform).
pub(crate) fn instantiate(local: &LocalMesh, world: &Mat4) -> Result<Mesh, Problem> {
    let linear = Mat3::from_mat4(*world);
    let determinant = linear.determinant();

    let positions: Vec<[f32; 3]> = local
        .positions
        .iter()
        .map(|&p| world.transform_point3(Vec3::from(p)).to_array())
        .collect();
    check_finite("transformed position", &positions)?;

    let mut indices = local.indices.clone();
    if determinant < 0.0 {
        // §3.7.4: a negative determinant makes the file's winding clockwise; restore CCW.
        for triangle in indices.chunks_exact_mut(3) {
            triangle.swap(1, 2);
        }
    }

    let normals = match &local.normals {
        Some(normals) if determinant.is_normal() => {
            let normal_matrix = linear.inverse().transpose();
            let mut smooth: Option<Vec<[f32; 3]>> = None;
            let mut out = Vec::with_capacity(normals.len());
            for (i, &n) in normals.iter().enumerate() {
                match (normal_matrix * Vec3::from(n)).try_normalize() {
                    Some(n) => out.push(n.to_array()),
                    // A zero-length normal in the file: use the computed one for that vertex.
                    None => out.push(
                        smooth.get_or_insert_with(|| smooth_normals(&positions, &indices))[i],
                    ),
                }
            }
            out
        }
        // No normals, or a singular transform that flattens the mesh: derive from geometry.
        _ => smooth_normals(&positions, &indices),
    };

    Ok(Mesh {
        positions,
        normals,
        colors: local.colors.clone(),
        texcoords: local.texcoords.clone(),
        indices,
        base_color_texture: local.base_color_texture,
        double_sided: local.double_sided,
    })
}

/// Area-weighted vertex normals of a CCW triangle list: each vertex gets the normalised sum of
/// the cross products (twice the area times the unit normal) of the triangles that use it.
pub(crate) fn smooth_normals(positions: &[[f32; 3]], indices: &[u32]) -> Vec<[f32; 3]> {
    let mut sums = vec![Vec3::ZERO; positions.len()];
    for triangle in indices.chunks_exact(3) {
        let [a, b, c] = [triangle[0], triangle[1], triangle[2]].map(|i| i as usize);
        let (pa, pb, pc) = (
            Vec3::from(positions[a]),
            Vec3::from(positions[b]),
            Vec3::from(positions[c]),
        );
        let face = (pb - pa).cross(pc - pa);
        if face.is_finite() {
            sums[a] += face;
            sums[b] += face;
            sums[c] += face;
        }
    }
    sums.into_iter()
        .map(|s| s.try_normalize().map_or(FALLBACK_NORMAL, |n| n.to_array()))
        .collect()
}

/// Assembles the public [`Scene`]: rejects an empty result, computes bounds, and resolves the
/// file camera's open far plane against those bounds.
pub(crate) fn finish_scene(
    meshes: Vec<Mesh>,
    camera: Option<FileCamera>,
    skipped_primitives: Vec<String>,
    images: Vec<Image>,
) -> Result<Scene, Problem> {
    let meshes: Vec<Mesh> = meshes
        .into_iter()
        .filter(|m| !m.indices.is_empty())
        .collect();
    if meshes.is_empty() {
        return if skipped_primitives.is_empty() {
            invalid!("the scene contains no triangles, nothing to draw")
        } else {
            Err(Problem::Unsupported(format!(
                "no triangle primitives to draw; skipped {}",
                skipped_primitives.join("; ")
            )))
        };
    }
    let mut min = Vec3::splat(f32::INFINITY);
    let mut max = Vec3::splat(f32::NEG_INFINITY);
    for p in meshes.iter().flat_map(|m| &m.positions) {
        min = min.min(Vec3::from(*p));
        max = max.max(Vec3::from(*p));
    }
    let camera = camera.map(|c| c.resolve(min, max));
    Ok(Scene {
        meshes,
        bounds_min: min.to_array(),
        bounds_max: max.to_array(),
        camera,
        skipped_primitives,
        images,
    })
}

/// A perspective camera from the file, placed by its node's world transform (§3.10).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileCamera {
    pub world: Mat4,
    pub yfov: f32,
    pub znear: f32,
    /// `None`: infinite projection (§3.10.3); given a finite far plane in [`Self::resolve`].
    pub zfar: Option<f32>,
    pub aspect: Option<f32>,
}

impl FileCamera {
    /// Checks the projection values (§3.10.3 / the camera schema).
    pub(crate) fn validate(&self) -> Result<(), Problem> {
        let finite = [self.yfov, self.znear, self.zfar.unwrap_or(1.0)]
            .iter()
            .chain(self.aspect.iter())
            .all(|v| v.is_finite());
        if !finite {
            return invalid!("non-finite projection value");
        }
        if !(self.yfov > 0.0 && self.yfov < std::f32::consts::PI) {
            return invalid!("yfov {} is not in (0, π)", self.yfov);
        }
        if self.znear <= 0.0 {
            return invalid!("znear {} is not positive", self.znear);
        }
        if self.zfar.is_some_and(|f| f <= self.znear) {
            return invalid!("zfar {:?} is not beyond znear {}", self.zfar, self.znear);
        }
        if self.aspect.is_some_and(|a| a <= 0.0) {
            return invalid!("aspectRatio {:?} is not positive", self.aspect);
        }
        // §3.10.2: the camera looks down local -Z with +Y up; scale is ignored.
        let linear = Mat3::from_mat4(self.world);
        let forward = (linear * Vec3::NEG_Z).try_normalize();
        let up = (linear * Vec3::Y).try_normalize();
        match (forward, up) {
            (Some(f), Some(u)) if f.cross(u).length() > 1e-4 => Ok(()),
            _ => invalid!("camera node transform is degenerate (no view direction)"),
        }
    }

    /// The public camera; the target is the point on the view ray nearest the scene centre.
    fn resolve(&self, bounds_min: Vec3, bounds_max: Vec3) -> Camera {
        let linear = Mat3::from_mat4(self.world);
        let eye = self.world.transform_point3(Vec3::ZERO);
        let forward = (linear * Vec3::NEG_Z).normalize();
        let up = (linear * Vec3::Y)
            .reject_from_normalized(forward)
            .normalize();
        let centre = (bounds_min + bounds_max) * 0.5;
        let focus = (centre - eye).dot(forward);
        let focus = if focus > self.znear { focus } else { 1.0 };
        let zfar = self.zfar.unwrap_or_else(|| {
            let radius = (bounds_max - bounds_min).length() * 0.5;
            ((centre - eye).length() + radius) * 1.01 + self.znear
        });
        Camera {
            eye: eye.to_array(),
            target: (eye + forward * focus).to_array(),
            up: up.to_array(),
            yfov_radians: self.yfov,
            znear: self.znear,
            zfar: zfar.max(self.znear * 2.0),
            aspect: self.aspect,
        }
    }
}

/// See [`crate::Scene::framing_camera`].
pub(crate) fn framing_camera(bounds_min: [f32; 3], bounds_max: [f32; 3], aspect: f32) -> Camera {
    let (min, max) = (Vec3::from(bounds_min), Vec3::from(bounds_max));
    let centre = (min + max) * 0.5;
    let radius = (max - min).length() * 0.5;
    let radius = if radius.is_normal() { radius } else { 1.0 };
    let aspect = if aspect.is_finite() && aspect > 0.0 {
        aspect
    } else {
        1.0
    };
    let half_y = FRAMING_YFOV_RADIANS * 0.5;
    let half_x = (aspect * half_y.tan()).atan();
    // The sphere touches the narrower half-angle's frustum planes.
    let distance = radius / half_y.min(half_x).sin();
    let (azimuth, elevation) = (
        FRAMING_AZIMUTH_DEGREES.to_radians(),
        FRAMING_ELEVATION_DEGREES.to_radians(),
    );
    let towards_eye = Vec3::new(
        azimuth.sin() * elevation.cos(),
        elevation.sin(),
        azimuth.cos() * elevation.cos(),
    );
    let up = Vec3::Y.reject_from_normalized(towards_eye).normalize();
    Camera {
        eye: (centre + towards_eye * distance).to_array(),
        target: centre.to_array(),
        up: up.to_array(),
        yfov_radians: FRAMING_YFOV_RADIANS,
        znear: ((distance - radius) * 0.5).max(distance * 1e-3),
        zfar: distance + radius * 2.0,
        aspect: Some(aspect),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quad() -> LocalMesh {
        LocalMesh {
            positions: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0],
                [0.0, 1.0, 0.0],
            ],
            normals: None,
            colors: vec![[1.0; 4]; 4],
            texcoords: vec![[0.0; 2]; 4],
            indices: vec![0, 1, 2, 0, 2, 3],
            base_color_texture: None,
            double_sided: false,
        }
    }

    #[test]
    fn computed_normals_face_the_ccw_side() {
        let mesh = instantiate(&quad(), &Mat4::IDENTITY).unwrap();
        assert!(mesh.normals.iter().all(|n| *n == [0.0, 0.0, 1.0]));
    }

    #[test]
    fn mirroring_flips_winding_and_keeps_normals_outward() {
        let mut local = quad();
        local.normals = Some(vec![[0.0, 0.0, 1.0]; 4]);
        let mirror = Mat4::from_scale(Vec3::new(1.0, 1.0, -1.0));
        let mesh = instantiate(&local, &mirror).unwrap();
        assert_eq!(&mesh.indices[..3], &[0, 2, 1]);
        assert!(mesh.normals.iter().all(|n| *n == [0.0, 0.0, -1.0]));
        // The re-wound triangles agree with the transformed file normals.
        let computed = smooth_normals(&mesh.positions, &mesh.indices);
        assert_eq!(computed, mesh.normals);
    }

    #[test]
    fn non_uniform_scale_uses_the_inverse_transpose() {
        let mut local = quad();
        let n = Vec3::new(1.0, 1.0, 0.0).normalize();
        local.normals = Some(vec![n.to_array(); 4]);
        let mesh = instantiate(&local, &Mat4::from_scale(Vec3::new(2.0, 1.0, 1.0))).unwrap();
        let expected = Vec3::new(0.5, 1.0, 0.0).normalize();
        assert!((Vec3::from(mesh.normals[0]) - expected).length() < 1e-6);
    }

    #[test]
    fn validate_rejects_bad_indices_and_non_finite_values() {
        let mut bad = quad();
        bad.indices[4] = 4;
        assert!(
            matches!(bad.validate(), Err(Problem::Invalid(m)) if m.contains("index 4 (at position 4)"))
        );
        let mut bad = quad();
        bad.positions[2][1] = f32::NAN;
        assert!(matches!(bad.validate(), Err(Problem::Invalid(m)) if m.contains("position 2")));
        let mut bad = quad();
        bad.indices.pop();
        assert!(bad.validate().is_err());
        assert!(quad().validate().is_ok());
    }

    #[test]
    fn framing_camera_sees_the_whole_bounding_sphere() {
        for aspect in [0.5, 1.0, 16.0 / 9.0] {
            let camera = framing_camera([-1.0, 0.0, -2.0], [3.0, 1.0, 2.0], aspect);
            let eye = Vec3::from(camera.eye);
            let target = Vec3::from(camera.target);
            let radius = Vec3::new(4.0, 1.0, 4.0).length() * 0.5;
            let distance = (target - eye).length();
            assert!(camera.znear < distance - radius && distance + radius < camera.zfar);
            let half_y = camera.yfov_radians * 0.5;
            let half_x = (aspect * half_y.tan()).atan();
            let needed = (radius / distance).asin();
            assert!(needed <= half_y.min(half_x) + 1e-5, "aspect {aspect}");
            assert!(eye.y > target.y && eye.z > target.z && eye.x > target.x);
            assert!(Vec3::from(camera.up).dot(target - eye).abs() < 1e-5);
        }
    }
}
