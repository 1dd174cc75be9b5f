//! Front ends other than WGSL (GLSL and SPIR-V through naga), pipeline-overridable constants,
//! and subgroup/quad operations (subgroup = one warp of `WARP_LANES` lanes).
#![allow(clippy::needless_range_loop)]

mod common;

use std::sync::atomic::{AtomicU32, Ordering};

use common::*;
use rastra_shader::{
    CompileError, FULL_MASK, Program, Resources, ShaderModule, Stage, WARP_LANES, Workgroup,
    execute_workgroup,
};

fn run_compute(p: &Program, buffers: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let mem: Vec<Vec<AtomicU32>> = buffers
        .iter()
        .map(|b| b.iter().map(|&w| AtomicU32::new(w)).collect())
        .collect();
    let slices: Vec<&[AtomicU32]> = mem.iter().map(|b| b.as_slice()).collect();
    let res = Resources::buffers(&slices);
    let mut wg = Workgroup::new(p);
    let mut budget = BUDGET;
    execute_workgroup(
        p,
        &mut wg,
        [0; 3],
        [1, 1, 1],
        &res,
        &mut rastra_texture::TextureUnit::default(),
        &mut budget,
    )
    .unwrap();
    mem.iter()
        .map(|b| b.iter().map(|w| w.load(Ordering::Relaxed)).collect())
        .collect()
}

#[test]
fn glsl_fragment_and_compute() {
    let fs = ShaderModule::from_glsl(
        "#version 450
        layout(location = 0) in float x;
        layout(location = 0) out vec4 color;
        void main() {
            float y = x * 2.0;
            if (x > 0.5) { y = -y; }
            color = vec4(y, abs(x), 0.0, 1.0);
        }",
        Stage::Fragment,
    )
    .unwrap();
    let p = fs.program("main", Stage::Fragment).unwrap();
    let r = run(&p, &|_, _, l| (l as f32 / 16.0).to_bits());
    for l in 0..16 {
        let x = l as f32 / 16.0;
        let y = if x > 0.5 { -x * 2.0 } else { x * 2.0 };
        assert_eq!(r.f(0, 0, l), y);
    }

    let cs = ShaderModule::from_glsl(
        "#version 450
        layout(local_size_x = 32) in;
        layout(std430, set = 0, binding = 0) buffer Data { uint v[]; } data;
        shared uint tmp[32];
        void main() {
            uint i = gl_LocalInvocationIndex;
            tmp[i] = data.v[i] * 3u;
            barrier();
            data.v[i] = tmp[31u - i];
            if (i == 0u) { data.v[32] += 32u; }
        }",
        Stage::Compute,
    )
    .unwrap();
    let p = cs.program("main", Stage::Compute).unwrap();
    let init: Vec<u32> = (0..33).collect();
    let out = run_compute(&p, &[init]);
    for i in 0..32 {
        assert_eq!(out[0][i], (31 - i as u32) * 3);
    }
    assert_eq!(out[0][32], 32 + 32);
}

#[test]
fn glsl_errors_have_positions() {
    match ShaderModule::from_glsl(
        "#version 450\nvoid main() {\n  float x = undefined_thing;\n}\n",
        Stage::Fragment,
    ) {
        Err(CompileError::Source { line, column, .. }) => {
            assert_eq!(line, 3);
            assert!(column > 1);
        }
        other => panic!("expected a source error, got {other:?}"),
    }
}

#[test]
fn spirv_round_trip_through_naga() {
    // Produce SPIR-V with naga's writer, read it back with the SPIR-V front end.
    let src = "@group(0) @binding(0) var<storage, read_write> o: array<u32>;
        @compute @workgroup_size(16) fn main(@builtin(local_invocation_index) i: u32) {
            o[i] = i * i + 1u;
        }";
    let module = naga::front::wgsl::parse_str(src).unwrap();
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .unwrap();
    let words =
        naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None)
            .unwrap();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let m = ShaderModule::from_spirv(&bytes).unwrap();
    let p = m.program("main", Stage::Compute).unwrap();
    let out = run_compute(&p, &[vec![0; 16]]);
    for i in 0..16u32 {
        assert_eq!(out[0][i as usize], i * i + 1);
    }
    match ShaderModule::from_spirv(&[1, 2, 3, 4, 5, 6, 7]) {
        Err(CompileError::Source {
            line: 0,
            column: 0,
            message,
        }) => assert!(!message.is_empty()),
        other => panic!("expected a source error, got {other:?}"),
    }
}

#[test]
fn pipeline_overridable_constants() {
    let src = "override scale: f32 = 2.0;
        @id(7) override count: u32;
        override wg: u32 = 8u;
        var<workgroup> tmp: array<u32, 32>; // override-sized arrays are unsupported
        @group(0) @binding(0) var<storage, read_write> o: array<u32>;
        @compute @workgroup_size(wg) fn main(@builtin(local_invocation_index) i: u32) {
            tmp[i] = u32(f32(i) * scale) + count;
            workgroupBarrier();
            o[i] = tmp[wg - 1u - i];
        }";
    let m = ShaderModule::from_wgsl(src).unwrap();
    // `count` has no default: it must be given.
    match m.program("main", Stage::Compute) {
        Err(CompileError::Override(msg)) => assert!(msg.contains("7"), "{msg}"),
        other => panic!("expected an override error, got {other:?}"),
    }
    let p = m
        .program_with_overrides("main", Stage::Compute, &[("7".into(), 100.0)])
        .unwrap();
    assert_eq!(p.workgroup_size, [8, 1, 1]);
    let out = run_compute(&p, &[vec![0; 8]]);
    for i in 0..8 {
        assert_eq!(out[0][i], (7 - i as u32) * 2 + 100);
    }
    let p = m
        .program_with_overrides(
            "main",
            Stage::Compute,
            &[
                ("7".into(), 1.0),
                ("scale".into(), 0.5),
                ("wg".into(), 20.0),
            ],
        )
        .unwrap();
    assert_eq!(p.workgroup_size, [20, 1, 1]);
    assert_eq!(p.workgroup_memory, 128);
    let out = run_compute(&p, &[vec![0; 20]]);
    for i in 0..20 {
        assert_eq!(out[0][i], (19 - i as u32) / 2 + 1);
    }
    match m.program_with_overrides("main", Stage::Compute, &[("nope".into(), 1.0)]) {
        Err(CompileError::Override(msg)) => assert!(msg.contains("nope"), "{msg}"),
        other => panic!("expected an override error, got {other:?}"),
    }
}

#[test]
fn subgroup_operations_over_active_lanes() {
    let p = compile(
        "@fragment fn main(@location(0) @interpolate(flat) x: u32,
                          @builtin(subgroup_invocation_id) id: u32,
                          @builtin(subgroup_size) size: u32) -> @location(0) vec4<u32> {
            var r = vec4<u32>(0u);
            if x % 4u != 3u {
                let b = subgroupBallot(x % 2u == 0u);
                r.x = (b.x ^ (b.y * 3u)) + subgroupAdd(x) * 65536u + b.z + b.w;
                r.y = subgroupInclusiveAdd(x) + subgroupExclusiveMul(x + 1u) * 1000u;
                r.z = subgroupBroadcastFirst(x) + subgroupShuffleXor(x, 1u) * 100u
                    + subgroupBroadcast(x, 4u) * 10000u;
                r.w = id + size * 100u + select(0u, 1000u, subgroupAll(x < 100u))
                    + select(0u, 10000u, subgroupAny(x == 6u)) + subgroupMax(x) * 100000u;
            }
            return r;
        }",
    );
    // Lanes 3, 7, 11, … (x % 4 == 3) take the other branch; lane 13 is inactive.
    let active = FULL_MASK & !(1 << 13);
    let r = run_mask(&p, active, &[], &|_, _, l| l as u32);
    let taking: Vec<u32> = (0..WARP_LANES as u32)
        .filter(|&l| l % 4 != 3 && l != 13)
        .collect();
    // The ballot's words, 32 lanes each (the upper two always zero).
    let ballot: u64 = taking
        .iter()
        .filter(|&&l| l % 2 == 0)
        .map(|&l| 1u64 << l)
        .sum();
    let ballot = (ballot as u32) ^ ((ballot >> 32) as u32).wrapping_mul(3);
    let sum: u32 = taking.iter().sum();
    let max = *taking.iter().max().unwrap();
    for &l in &taking {
        let lu = l as usize;
        assert_eq!(
            r.u(0, 0, lu),
            ballot.wrapping_add(sum.wrapping_mul(65536)),
            "lane {l}"
        );
        let incl: u32 = taking.iter().filter(|&&k| k <= l).sum();
        let excl: u32 = taking
            .iter()
            .filter(|&&k| k < l)
            .fold(1u32, |p, &k| p.wrapping_mul(k + 1));
        assert_eq!(
            r.u(0, 1, lu),
            incl.wrapping_add(excl.wrapping_mul(1000)),
            "lane {l}"
        );
        let xor = l ^ 1;
        let shuffled = if taking.contains(&xor) { xor } else { 0 };
        assert_eq!(r.u(0, 2, lu), shuffled * 100 + 4 * 10000, "lane {l}");
        assert_eq!(
            r.u(0, 3, lu),
            l + WARP_LANES as u32 * 100 + 1000 + 10000 + max * 100000
        );
    }
}

#[test]
fn quad_operations() {
    let p = compile(
        "@fragment fn main(@location(0) v: f32) -> @location(0) vec4<f32> {
            return vec4<f32>(quadBroadcast(v, 2u), quadSwapX(v), quadSwapY(v), quadSwapDiagonal(v));
        }",
    );
    let r = run(&p, &|_, _, l| (l as f32).to_bits());
    for l in 0..WARP_LANES {
        let q = l & !3;
        assert_eq!(r.f(0, 0, l), (q + 2) as f32);
        assert_eq!(r.f(0, 1, l), (l ^ 1) as f32);
        assert_eq!(r.f(0, 2, l), (l ^ 2) as f32);
        assert_eq!(r.f(0, 3, l), (l ^ 3) as f32);
    }
}
