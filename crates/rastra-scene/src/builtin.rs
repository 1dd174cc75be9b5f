//! The built-in scene `rastra render` draws when given no file: a procedural courtyard that
//! exercises what the spine must get right — a checkerboard floor receding to the horizon
//! (perspective-correct interpolation over huge triangles that cross the near plane's
//! neighbourhood and the guard band), rows of spheres tessellated from coarse to very fine
//! (tens of thousands of triangles from screen-filling to sub-pixel), pillars occluding
//! each other (depth testing), and translucent panels drawn last (alpha blending).

use std::f32::consts::PI;

use crate::Frame;
use crate::lit::{Material, MeshData, Textures, View, frame};
use crate::math::{Vec3, add, normalize, scale};

/// A UV sphere.
fn sphere(mesh: &mut MeshData, center: Vec3, radius: f32, segments: u32, color: [f32; 4]) {
    let rings = (segments / 2).max(2);
    let base = mesh.vertex_count() as u32;
    for r in 0..=rings {
        let theta = PI * r as f32 / rings as f32;
        for s in 0..=segments {
            let phi = 2.0 * PI * s as f32 / segments as f32;
            let n = [
                theta.sin() * phi.cos(),
                theta.cos(),
                theta.sin() * phi.sin(),
            ];
            mesh.vertex(
                add(center, scale(n, radius)),
                n,
                color,
                [s as f32 / segments as f32, r as f32 / rings as f32],
            );
        }
    }
    let row = segments + 1;
    for r in 0..rings {
        for s in 0..segments {
            let a = base + r * row + s;
            let b = a + row;
            // Counter-clockwise seen from outside.
            mesh.triangle(a, a + 1, b);
            mesh.triangle(a + 1, b + 1, b);
        }
    }
}

/// An axis-aligned box, one flat-shaded quad per face.
pub(crate) fn cuboid(mesh: &mut MeshData, min: Vec3, max: Vec3, color: [f32; 4]) {
    let faces: [(Vec3, [Vec3; 4]); 6] = [
        (
            [1.0, 0.0, 0.0],
            [
                [max[0], min[1], max[2]],
                [max[0], min[1], min[2]],
                [max[0], max[1], min[2]],
                [max[0], max[1], max[2]],
            ],
        ),
        (
            [-1.0, 0.0, 0.0],
            [
                [min[0], min[1], min[2]],
                [min[0], min[1], max[2]],
                [min[0], max[1], max[2]],
                [min[0], max[1], min[2]],
            ],
        ),
        (
            [0.0, 1.0, 0.0],
            [
                [min[0], max[1], max[2]],
                [max[0], max[1], max[2]],
                [max[0], max[1], min[2]],
                [min[0], max[1], min[2]],
            ],
        ),
        (
            [0.0, -1.0, 0.0],
            [
                [min[0], min[1], min[2]],
                [max[0], min[1], min[2]],
                [max[0], min[1], max[2]],
                [min[0], min[1], max[2]],
            ],
        ),
        (
            [0.0, 0.0, 1.0],
            [
                [min[0], min[1], max[2]],
                [max[0], min[1], max[2]],
                [max[0], max[1], max[2]],
                [min[0], max[1], max[2]],
            ],
        ),
        (
            [0.0, 0.0, -1.0],
            [
                [max[0], min[1], min[2]],
                [min[0], min[1], min[2]],
                [min[0], max[1], min[2]],
                [max[0], max[1], min[2]],
            ],
        ),
    ];
    for (n, corners) in faces {
        let uv = [[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]];
        let v: Vec<u32> = (0..4)
            .map(|k| mesh.vertex(corners[k], n, color, uv[k]))
            .collect();
        mesh.triangle(v[0], v[1], v[2]);
        mesh.triangle(v[0], v[2], v[3]);
    }
}

/// A vertical quad facing +z (both sides drawn).
fn panel(mesh: &mut MeshData, center: Vec3, half: [f32; 2], color: [f32; 4]) {
    let n = [0.0, 0.0, 1.0];
    let c = |dx: f32, dy: f32, u: f32, v: f32, m: &mut MeshData| {
        m.vertex(
            [center[0] + dx, center[1] + dy, center[2]],
            n,
            color,
            [u, v],
        )
    };
    let a = c(-half[0], -half[1], 0.0, 1.0, mesh);
    let b = c(half[0], -half[1], 1.0, 1.0, mesh);
    let d = c(half[0], half[1], 1.0, 0.0, mesh);
    let e = c(-half[0], half[1], 0.0, 0.0, mesh);
    mesh.triangle(a, b, d);
    mesh.triangle(a, d, e);
}

/// The built-in scene at the given size and sample count.
pub fn scene(width: u32, height: u32, samples: u32) -> Frame {
    let mut floor = MeshData::default();
    let up = [0.0, 1.0, 0.0];
    let extent = 200.0;
    let corners = [
        [-extent, 0.0, -extent],
        [extent, 0.0, -extent],
        [extent, 0.0, extent],
        [-extent, 0.0, extent],
    ];
    let tile = 1.5;
    let v: Vec<u32> = corners
        .iter()
        .map(|&p| floor.vertex(p, up, [0.85, 0.80, 0.70, 1.0], [p[0] / tile, p[2] / tile]))
        .collect();
    floor.triangle(v[0], v[2], v[1]);
    floor.triangle(v[0], v[3], v[2]);

    let mut spheres = MeshData::default();
    let palette = [
        [0.80, 0.18, 0.15, 1.0],
        [0.95, 0.65, 0.10, 1.0],
        [0.20, 0.60, 0.25, 1.0],
        [0.15, 0.40, 0.85, 1.0],
        [0.55, 0.25, 0.75, 1.0],
    ];
    for row in 0..6 {
        for col in 0..9 {
            let segments = [6, 10, 16, 28, 48, 96][row];
            let radius = 0.35 + 0.08 * ((row * 7 + col * 3) % 5) as f32;
            let center = [(col as f32 - 4.0) * 1.6, radius, -(row as f32) * 2.2 - 1.0];
            sphere(
                &mut spheres,
                center,
                radius,
                segments,
                palette[(row + col) % palette.len()],
            );
        }
    }
    // A cloud of tiny spheres far away: many sub-pixel and few-pixel triangles.
    for k in 0..400 {
        let a = k as f32 * 2.399_963;
        let r = 6.0 + (k % 37) as f32 * 0.6;
        let center = [
            a.cos() * r,
            0.15 + (k % 5) as f32 * 0.05,
            -26.0 + a.sin() * r * 0.4,
        ];
        sphere(&mut spheres, center, 0.12, 12, palette[k % palette.len()]);
    }

    let mut pillars = MeshData::default();
    for k in 0..8 {
        let x = if k % 2 == 0 { -8.5 } else { 8.5 };
        let z = -(k / 2) as f32 * 4.5 + 1.0;
        cuboid(
            &mut pillars,
            [x - 0.5, 0.0, z - 0.5],
            [x + 0.5, 5.0, z + 0.5],
            [0.75, 0.74, 0.70, 1.0],
        );
    }
    cuboid(
        &mut pillars,
        [-9.0, 5.0, -15.0],
        [9.0, 5.6, 1.5],
        [0.70, 0.68, 0.64, 1.0],
    );

    let mut glass = MeshData::default();
    // Back to front, as alpha blending needs.
    panel(
        &mut glass,
        [3.6, 1.6, 1.0],
        [1.4, 1.5],
        [0.40, 1.00, 0.50, 0.30],
    );
    panel(
        &mut glass,
        [-3.0, 1.3, 2.0],
        [1.6, 1.2],
        [0.30, 0.70, 1.00, 0.35],
    );
    panel(
        &mut glass,
        [0.5, 1.0, 3.2],
        [1.2, 0.9],
        [1.00, 0.35, 0.45, 0.45],
    );

    let view = View {
        eye: [0.0, 3.4, 9.0],
        target: [0.0, 0.6, -6.0],
        up,
        yfov: 55f32.to_radians(),
        near: 0.1,
        far: 250.0,
        light: normalize([0.4, 0.9, 0.35]),
    };
    frame(
        "builtin",
        width,
        height,
        samples,
        &view,
        &[
            (floor, Material::Checker),
            (spheres, Material::Lit),
            (pillars, Material::Lit),
            (glass, Material::Glass),
        ],
        Textures::default(),
    )
}
