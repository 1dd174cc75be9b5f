//! Cube-map arithmetic of the texture unit (T4: "determine which cube face to sample from
//! … and do a division to project the coordinates onto the unit cube"): face selection and
//! face coordinates (Vulkan §16.5.4 "Cube Map Face Selection and Transformations"),
//! derivatives projected onto the face (§16.5.5 "Cube Map Derivative Transformation"), and
//! seamless filtering: a filter tap that falls one texel off a face is fetched from the
//! adjacent face (§16.7 "Cube map edge handling").
//!
//! **Face selection.** The major axis is the coordinate of largest magnitude; ties go to z,
//! then y (`|rz| ≥ |ry|, |rz| ≥ |rx|` → ±Z; else `|ry| ≥ |rx|` → ±Y; else ±X). A negative
//! zero selects the negative face. Faces are numbered as layers: +X, −X, +Y, −Y, +Z, −Z.
//!
//! **Seams, exactly.** Texel (i, j) of face f in an n×n level is the lattice point on the
//! cube of half-size n whose tangent coordinates are 2i + 1 − n and 2j + 1 − n (odd half-texel
//! units), major coordinate ±n. A tap one texel off the face has a tangent coordinate of
//! ±(n + 1); folding it over the edge sets it to ±n and the old major coordinate to ±(n − 1)
//! — the first texel row of the neighbouring face, along the same edge position. Integer
//! arithmetic, so the neighbour is exact (projecting the direction would drift by up to half
//! a texel near corners). A tap off both edges (a cube corner) has no texel; the unit
//! replaces it with the average of the other three taps, as D3D and Vulkan implementations do.

/// (major axis, major sign, s axis, s sign, t axis, t sign) per face (Vulkan table 16.5.4).
const FACES: [(usize, i32, usize, i32, usize, i32); 6] = [
    (0, 1, 2, -1, 1, -1),  // +X: sc = −rz, tc = −ry
    (0, -1, 2, 1, 1, -1),  // −X: sc = +rz, tc = −ry
    (1, 1, 0, 1, 2, 1),    // +Y: sc = +rx, tc = +rz
    (1, -1, 0, 1, 2, -1),  // −Y: sc = +rx, tc = −rz
    (2, 1, 0, 1, 1, -1),   // +Z: sc = +rx, tc = −ry
    (2, -1, 0, -1, 1, -1), // −Z: sc = −rx, tc = −ry
];

/// A direction projected onto its cube face.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaceCoord {
    /// Face index (= layer within the cube): +X, −X, +Y, −Y, +Z, −Z.
    pub face: u32,
    /// Normalised face coordinates in [0, 1].
    pub s: f32,
    pub t: f32,
}

/// The face a direction selects.
pub fn select_face(r: [f32; 3]) -> u32 {
    let [ax, ay, az] = r.map(f32::abs);
    let axis = if az >= ay && az >= ax {
        2
    } else if ay >= ax {
        1
    } else {
        0
    };
    2 * axis as u32 + r[axis].is_sign_negative() as u32
}

/// Projects `r` onto face `face` (Vulkan: s = ½·sc/|rc| + ½). A zero or non-finite major
/// component gives the face centre.
pub fn project(r: [f32; 3], face: u32) -> FaceCoord {
    let (ma_axis, _, sa, ss, ta, ts) = FACES[face as usize % 6];
    let ma = r[ma_axis].abs();
    let sc = ss as f32 * r[sa];
    let tc = ts as f32 * r[ta];
    let (mut s, mut t) = (0.5 * sc / ma + 0.5, 0.5 * tc / ma + 0.5);
    if !s.is_finite() || !t.is_finite() {
        s = 0.5;
        t = 0.5;
    }
    FaceCoord { face, s, t }
}

/// Selects the face of `r` and projects onto it.
pub fn face_coord(r: [f32; 3]) -> FaceCoord {
    project(r, select_face(r))
}

/// Derivative of (s, t) on `face` for a change `dr` of the direction `r` (Vulkan §16.5.5:
/// ∂s/∂x = ½·(∂sc/∂x·|rc| − sc·∂|rc|/∂x) / rc²).
pub fn project_derivative(r: [f32; 3], dr: [f32; 3], face: u32) -> [f32; 2] {
    let (ma_axis, ms, sa, ss, ta, ts) = FACES[face as usize % 6];
    let ma = r[ma_axis].abs();
    let dma = ms as f32 * dr[ma_axis];
    let (sc, tc) = (ss as f32 * r[sa], ts as f32 * r[ta]);
    let (dsc, dtc) = (ss as f32 * dr[sa], ts as f32 * dr[ta]);
    let m2 = ma * ma;
    let d = [
        0.5 * (dsc * ma - sc * dma) / m2,
        0.5 * (dtc * ma - tc * dma) / m2,
    ];
    if d[0].is_finite() && d[1].is_finite() {
        d
    } else {
        [0.0, 0.0]
    }
}

/// Resolves texel (i, j) of `face` in an `n`×`n` level, where i and j may lie one texel off
/// the face, to the texel that holds it: itself, the neighbouring face's edge texel, or
/// `None` at a corner (off two edges). Coordinates further off are clamped first.
pub fn resolve_texel(face: u32, i: i32, j: i32, n: u32) -> Option<(u32, u32, u32)> {
    let n = n as i64;
    let i = (i as i64).clamp(-1, n);
    let j = (j as i64).clamp(-1, n);
    let off_i = i < 0 || i >= n;
    let off_j = j < 0 || j >= n;
    if !off_i && !off_j {
        return Some((face, i as u32, j as u32));
    }
    if off_i && off_j {
        return None;
    }
    let (ma, ms, sa, ss, ta, ts) = FACES[face as usize % 6];
    let mut p = [0i64; 3];
    p[ma] = ms as i64 * n;
    p[sa] = ss as i64 * (2 * i + 1 - n);
    p[ta] = ts as i64 * (2 * j + 1 - n);
    // Fold over the edge: the tangent coordinate that left the face becomes the major one.
    let out_axis = if off_i { sa } else { ta };
    p[out_axis] = p[out_axis].signum() * n;
    p[ma] = ms as i64 * (n - 1);
    let new_face = 2 * out_axis as u32 + (p[out_axis] < 0) as u32;
    let (_, _, nsa, nss, nta, nts) = FACES[new_face as usize];
    let sc = nss as i64 * p[nsa];
    let tc = nts as i64 * p[nta];
    Some((
        new_face,
        ((sc + n - 1) / 2) as u32,
        ((tc + n - 1) / 2) as u32,
    ))
}

/// The direction through the centre of texel (i, j) of `face` in an `n`×`n` level (used to
/// build test cubes and references).
pub fn texel_direction(face: u32, i: u32, j: u32, n: u32) -> [f32; 3] {
    let (ma, ms, sa, ss, ta, ts) = FACES[face as usize % 6];
    let sc = (2.0 * (i as f32 + 0.5) / n as f32) - 1.0;
    let tc = (2.0 * (j as f32 + 0.5) / n as f32) - 1.0;
    let mut r = [0.0f32; 3];
    r[ma] = ms as f32;
    r[sa] = ss as f32 * sc;
    r[ta] = ts as f32 * tc;
    r
}
