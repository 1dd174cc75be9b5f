//! Buffer reads: WGSL host-shareable layout (naga's offsets and strides, matrix column
//! alignment), robust access (out-of-bounds words read 0, indices clamped), runtime arrays and
//! `arrayLength`.
#![allow(
    clippy::needless_range_loop,
    clippy::manual_range_contains,
    clippy::manual_clamp
)]

mod common;

use common::*;
use rastra_shader::{BindingKind, FULL_MASK};

const SRC: &str = "
struct U { m: mat3x3<f32>, v: vec3<f32>, s: f32, arr: array<vec4<f32>, 2>, m2: mat2x2<f32> }
struct S { count: u32, items: array<vec2<f32>> }
@group(0) @binding(2) var<uniform> u: U;
@group(0) @binding(0) var<storage, read> data: array<u32>;
@group(1) @binding(0) var<storage, read> s: S;
struct O {
    @location(0) a: vec4<f32>,
    @location(1) b: vec4<f32>,
    @location(2) c: vec4<u32>,
    @location(3) d: vec4<f32>,
}
fn item(i: u32) -> vec2<f32> { return s.items[i]; }
@fragment fn main(@location(0) @interpolate(flat) i: u32) -> O {
    var o: O;
    o.a = vec4<f32>(u.m * u.v, u.s);
    o.b = u.arr[i];
    o.c = vec4<u32>(data[i], arrayLength(&data), arrayLength(&s.items), bitcast<u32>(item(i).y));
    o.d = vec4<f32>(u.m2[1], u.m2[i][0], f32(s.count));
    return o;
}";

fn put(buf: &mut [u8], off: usize, v: f32) {
    buf[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn uniform_and_storage_layout_bounds_and_runtime_arrays() {
    let p = compile(SRC);
    // Bindings sorted by (group, binding) with naga-derived minimum sizes.
    let b: Vec<_> = p
        .bindings
        .iter()
        .map(|b| (b.group, b.binding, b.min_size, b.kind))
        .collect();
    assert_eq!(
        b,
        vec![
            (0, 0, 4, BindingKind::Storage { read_only: true }),
            (0, 2, 112, BindingKind::Uniform),
            (1, 0, 16, BindingKind::Storage { read_only: true }),
        ]
    );
    assert_eq!(p.bindings[1].name, "u");

    // Uniform buffer, truncated to 100 bytes: m2's second column and half of its first are
    // out of bounds.
    let mut ub = vec![0u8; 100];
    for c in 0..3 {
        for r in 0..3 {
            put(&mut ub, c * 16 + r * 4, (c * 3 + r + 1) as f32); // columns 16 bytes apart
        }
        put(&mut ub, c * 16 + 12, 999.0); // padding must be ignored
    }
    put(&mut ub, 48, 1.0);
    put(&mut ub, 52, 10.0);
    put(&mut ub, 56, 100.0);
    put(&mut ub, 60, 0.5); // s
    for k in 0..8 {
        put(&mut ub, 64 + 4 * k, (k + 20) as f32); // arr
    }
    put(&mut ub, 96, 42.0); // m2[0][0]
    // Storage: 10 bytes => arrayLength 2.
    let data: Vec<u8> = [7u32, 8, 0xffff]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .take(10)
        .collect();
    // S: count, pad, 3 items of vec2 + 4 stray bytes => arrayLength 3.
    let mut sb = vec![0u8; 36];
    sb[0..4].copy_from_slice(&5u32.to_le_bytes());
    for k in 0..6 {
        put(&mut sb, 8 + 4 * k, (k + 1) as f32 * 0.25);
    }
    let bufs: [&[u8]; 3] = [&data, &ub, &sb];
    let r = run_mask(&p, FULL_MASK, &bufs, &|_, _, l| l as u32);
    for l in 0..16 {
        // m * v with m columns (1,2,3), (4,5,6), (7,8,9).
        assert_eq!(r.f(0, 0, l), 1.0 + 40.0 + 700.0);
        assert_eq!(r.f(0, 1, l), 2.0 + 50.0 + 800.0);
        assert_eq!(r.f(0, 2, l), 3.0 + 60.0 + 900.0);
        assert_eq!(r.f(0, 3, l), 0.5);
        let ai = l.min(1);
        for c in 0..4 {
            assert_eq!(r.f(1, c, l), (ai * 4 + c + 20) as f32, "arr[{l}].{c}");
        }
        assert_eq!(r.u(2, 0, l), [7, 8][l.min(1)], "data[{l}] clamped");
        assert_eq!(r.u(2, 1, l), 2);
        assert_eq!(r.u(2, 2, l), 3);
        let it = l.min(2);
        assert_eq!(f32::from_bits(r.u(2, 3, l)), (2 * it + 2) as f32 * 0.25);
        assert_eq!(r.f(3, 0, l), 0.0, "m2[1] is out of bounds");
        assert_eq!(r.f(3, 1, l), 0.0);
        assert_eq!(r.f(3, 2, l), if l == 0 { 42.0 } else { 0.0 }, "m2[{l}][0]");
        assert_eq!(r.f(3, 3, l), 5.0);
    }

    // Every buffer empty (or missing): every read is 0, lengths are 0.
    let empty: [&[u8]; 3] = [&[], &[], &[]];
    let r = run_mask(&p, FULL_MASK, &empty, &|_, _, l| l as u32);
    for l in 0..16 {
        assert_eq!(r.u(2, 0, l), 0);
        assert_eq!(r.u(2, 1, l), 0);
        assert_eq!(r.u(2, 2, l), 0);
        assert_eq!(r.f(0, 0, l), 0.0);
    }
}

#[test]
fn struct_in_array_in_storage() {
    let p = compile(
        "struct Light { pos: vec3<f32>, intensity: f32, color: vec2<f32> }
        @group(0) @binding(0) var<storage, read> lights: array<Light>;
        @fragment fn main(@location(0) @interpolate(flat) i: u32) -> @location(0) vec4<f32> {
            let l = lights[i];
            return vec4<f32>(l.pos.z, l.intensity, l.color.y, f32(arrayLength(&lights)));
        }",
    );
    // Light: pos @0, intensity @12, color @16, size 24 -> stride 32 (align 16).
    let mut b = vec![0u8; 64];
    for k in 0..2 {
        put(&mut b, 32 * k + 8, (10 + k) as f32);
        put(&mut b, 32 * k + 12, (20 + k) as f32);
        put(&mut b, 32 * k + 20, (30 + k) as f32);
    }
    let bufs: [&[u8]; 1] = [&b];
    let r = run_mask(&p, FULL_MASK, &bufs, &|_, _, l| l as u32);
    for l in 0..16 {
        let k = l.min(1);
        assert_eq!(r.f(0, 0, l), (10 + k) as f32);
        assert_eq!(r.f(0, 1, l), (20 + k) as f32);
        assert_eq!(r.f(0, 2, l), (30 + k) as f32);
        assert_eq!(r.f(0, 3, l), 2.0);
    }
}
