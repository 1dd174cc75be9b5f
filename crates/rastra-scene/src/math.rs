//! The little linear algebra the recipes need: column-major 4×4 matrices for cameras and
//! 3-vectors for geometry. WebGPU conventions: right-handed view space, clip-space depth in
//! [0, 1].

/// A 3-vector.
pub type Vec3 = [f32; 3];

pub fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub fn scale(a: Vec3, s: f32) -> Vec3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

pub fn dot(a: Vec3, b: Vec3) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub fn normalize(a: Vec3) -> Vec3 {
    let l = dot(a, a).sqrt();
    if l > 0.0 { scale(a, 1.0 / l) } else { a }
}

/// Column-major 4×4 matrix: `m[column][row]`, the layout WGSL's `mat4x4<f32>` has in a
/// uniform buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mat4(pub [[f32; 4]; 4]);

impl Mat4 {
    pub const IDENTITY: Mat4 = Mat4([
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ]);

    /// `self × other`.
    pub fn mul(&self, other: &Mat4) -> Mat4 {
        let mut out = [[0.0f32; 4]; 4];
        for (c, column) in out.iter_mut().enumerate() {
            for (r, v) in column.iter_mut().enumerate() {
                *v = (0..4).map(|k| self.0[k][r] * other.0[c][k]).sum();
            }
        }
        Mat4(out)
    }

    /// Right-handed perspective projection to WebGPU clip space (depth 0 at `near`, 1 at
    /// `far`).
    pub fn perspective(yfov: f32, aspect: f32, near: f32, far: f32) -> Mat4 {
        let f = 1.0 / (yfov * 0.5).tan();
        let range = far / (near - far);
        Mat4([
            [f / aspect, 0.0, 0.0, 0.0],
            [0.0, f, 0.0, 0.0],
            [0.0, 0.0, range, -1.0],
            [0.0, 0.0, range * near, 0.0],
        ])
    }

    /// View matrix looking from `eye` at `target`.
    pub fn look_at(eye: Vec3, target: Vec3, up: Vec3) -> Mat4 {
        let f = normalize(sub(target, eye));
        let s = normalize(cross(f, up));
        let u = cross(s, f);
        Mat4([
            [s[0], u[0], -f[0], 0.0],
            [s[1], u[1], -f[1], 0.0],
            [s[2], u[2], -f[2], 0.0],
            [-dot(s, eye), -dot(u, eye), dot(f, eye), 1.0],
        ])
    }

    /// The matrix as 16 floats, column by column.
    pub fn to_cols(&self) -> [f32; 16] {
        let mut out = [0.0; 16];
        for c in 0..4 {
            out[c * 4..c * 4 + 4].copy_from_slice(&self.0[c]);
        }
        out
    }

    /// Transforms a point (w = 1) to homogeneous coordinates.
    pub fn transform(&self, p: Vec3) -> [f32; 4] {
        let v = [p[0], p[1], p[2], 1.0];
        let mut out = [0.0; 4];
        for (r, o) in out.iter_mut().enumerate() {
            *o = (0..4).map(|c| self.0[c][r] * v[c]).sum();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perspective_maps_near_and_far_to_0_and_1() {
        let p = Mat4::perspective(1.0, 1.0, 0.5, 10.0);
        let near = p.transform([0.0, 0.0, -0.5]);
        let far = p.transform([0.0, 0.0, -10.0]);
        assert!((near[2] / near[3]).abs() < 1e-6);
        assert!((far[2] / far[3] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn look_at_puts_target_on_negative_z() {
        let v = Mat4::look_at([0.0, 0.0, 5.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        let t = v.transform([0.0, 0.0, 0.0]);
        assert_eq!([t[0], t[1], t[2]], [0.0, 0.0, -5.0]);
    }
}
