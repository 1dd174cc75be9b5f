//! Compute (T13) and side effects: storage writes and atomics in every stage (helpers and
//! discarded lanes have none), workgroups of warps advancing together between barriers
//! (workgroup memory, atomics on it, non-uniform barriers, budget), statistics, and real
//! compute programs (reduction, prefix sums, histogram, bitonic sort, box filter, n-body)
//! checked against Rust computations.
#![allow(clippy::needless_range_loop)]

mod common;

use std::sync::atomic::{AtomicU32, Ordering};

use common::*;
use rastra_shader::{
    ExecError, ExecInfo, FULL_MASK, Program, Resources, Stage, WARP_LANES, Warp, Workgroup,
    execute, execute_workgroup,
};

/// Runs every workgroup of a `groups` dispatch; returns the buffers' final words. Compiled
/// programs run on the interpreter too: the same memory and statistics.
fn dispatch(p: &Program, buffers: &[Vec<u32>], groups: [u32; 3]) -> (Vec<Vec<u32>>, ExecInfo) {
    let out = dispatch_budget(p, buffers, groups, 50_000_000).expect("dispatch");
    if p.is_compiled() {
        let interpreted = dispatch_budget(&p.interpreted(), buffers, groups, 50_000_000)
            .expect("dispatch on the interpreter");
        // Atomic races between lanes resolve in lane order, so even those agree.
        assert_eq!(
            out.0, interpreted.0,
            "memory: compiled code and interpreter differ"
        );
        assert_eq!(
            out.1, interpreted.1,
            "statistics: compiled code and interpreter differ"
        );
    }
    out
}

fn dispatch_budget(
    p: &Program,
    buffers: &[Vec<u32>],
    groups: [u32; 3],
    budget: u64,
) -> Result<(Vec<Vec<u32>>, ExecInfo), ExecError> {
    let mem: Vec<Vec<AtomicU32>> = buffers
        .iter()
        .map(|b| b.iter().map(|&w| AtomicU32::new(w)).collect())
        .collect();
    let slices: Vec<&[AtomicU32]> = mem.iter().map(|b| b.as_slice()).collect();
    let res = Resources::buffers(&slices);
    let mut wg = Workgroup::new(p);
    let mut budget = budget;
    let start = budget;
    let mut info = ExecInfo::default();
    for z in 0..groups[2] {
        for y in 0..groups[1] {
            for x in 0..groups[0] {
                info += execute_workgroup(
                    p,
                    &mut wg,
                    [x, y, z],
                    groups,
                    &res,
                    &mut rastra_texture::TextureUnit::default(),
                    &mut budget,
                )?;
            }
        }
    }
    assert_eq!(start - budget, info.instructions);
    check_stats(&info);
    let out = mem
        .iter()
        .map(|b| b.iter().map(|w| w.load(Ordering::Relaxed)).collect())
        .collect();
    Ok((out, info))
}

fn check_stats(info: &ExecInfo) {
    assert_eq!(
        info.alu + info.transcendental + info.memory + info.texture + info.control,
        info.instructions
    );
    assert!(info.active_lanes <= info.instructions * WARP_LANES as u64);
}

fn f32s(v: &[u32]) -> Vec<f32> {
    v.iter().map(|&w| f32::from_bits(w)).collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn fragment_storage_writes_and_atomics_skip_helpers_and_discarded_lanes() {
    let p = compile_stage(
        "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @group(0) @binding(1) var<storage, read_write> count: atomic<u32>;
        @fragment fn main(@location(0) @interpolate(flat) i: u32) -> @location(0) vec4<f32> {
            if i == 5u { discard; }
            out[i] = i * 10u + 1u;
            let old = atomicAdd(&count, 1u);
            out[i + 16u] = old;
            out[1000u + i] = 7u; // out of bounds: dropped (the index clamps to the last element)
            return vec4<f32>(1.0);
        }",
        "main",
        Stage::Fragment,
    );
    let mem: Vec<AtomicU32> = (0..33).map(|_| AtomicU32::new(0)).collect();
    let count = [AtomicU32::new(100)];
    let slices: [&[AtomicU32]; 2] = [&mem, &count];
    let res = Resources::buffers(&slices);
    let mut w = Warp::new(&p);
    for l in 0..WARP_LANES {
        w.regs_mut(p.inputs[0].first_reg, 1)[0][l] = l as u32;
    }
    let active = 0x7fff; // lane 15 inactive
    let helpers = 0b1100; // lanes 2, 3 are helpers
    let mut budget = BUDGET;
    let info = execute(
        &p,
        &mut w,
        active,
        helpers,
        &res,
        &mut rastra_texture::TextureUnit::default(),
        &mut budget,
    )
    .unwrap();
    assert_eq!(info.discarded, 1 << 5);
    let mut next = 100;
    // Lanes 16 and up are inactive; their words hold the atomics' old values.
    for l in 0..16 {
        let effects = l != 2 && l != 3 && l != 5 && l != 15;
        let v = mem[l].load(Ordering::Relaxed);
        assert_eq!(v, if effects { l as u32 * 10 + 1 } else { 0 }, "lane {l}");
        if effects && l < 16 {
            // Lanes perform their atomics in lane order.
            assert_eq!(
                mem[l + 16].load(Ordering::Relaxed),
                next,
                "old value lane {l}"
            );
            next += 1;
        }
    }
    assert_eq!(count[0].load(Ordering::Relaxed), next);
    // The clamped out-of-bounds store lands on the last element (robust access: clamp).
    assert_eq!(mem[32].load(Ordering::Relaxed), 7);
}

#[test]
fn every_atomic_on_storage_and_workgroup_memory() {
    let p = compile(
        "struct A { add: atomic<u32>, sub: atomic<u32>, mx: atomic<i32>, mn: atomic<i32>,
                    umx: atomic<u32>, umn: atomic<u32>, and_: atomic<u32>, or_: atomic<u32>,
                    xor_: atomic<u32>, xchg: atomic<u32>, cas: atomic<u32>, st: atomic<u32> }
        @group(0) @binding(0) var<storage, read_write> a: A;
        @group(0) @binding(1) var<storage, read_write> res: array<u32>;
        var<workgroup> w: A;
        @compute @workgroup_size(40) fn main(@builtin(local_invocation_index) i: u32) {
            let s = i32(i) - 20;
            atomicAdd(&a.add, i); atomicAdd(&w.add, i);
            atomicSub(&a.sub, i); atomicSub(&w.sub, i);
            atomicMax(&a.mx, s); atomicMax(&w.mx, s);
            atomicMin(&a.mn, s); atomicMin(&w.mn, s);
            atomicMax(&a.umx, i * 3u); atomicMax(&w.umx, i * 3u);
            atomicMin(&a.umn, i + 5u); atomicMin(&w.umn, i + 5u);
            atomicAnd(&a.and_, ~(1u << i)); atomicAnd(&w.and_, ~(1u << i));
            atomicOr(&a.or_, 1u << (i % 32u)); atomicOr(&w.or_, 1u << (i % 32u));
            atomicXor(&a.xor_, i); atomicXor(&w.xor_, i);
            let old = atomicExchange(&a.xchg, i);
            let c = atomicCompareExchangeWeak(&a.cas, i, i + 1u);
            let wc = atomicCompareExchangeWeak(&w.cas, i, i + 1u);
            res[i] = select(0u, 1u, c.exchanged) | (select(0u, 2u, wc.exchanged)) | (old << 8u);
            if i == 39u { atomicStore(&a.st, 77u); atomicStore(&w.st, 78u); }
            workgroupBarrier();
            if i == 0u {
                res[40] = atomicLoad(&w.add); res[41] = atomicLoad(&w.sub);
                res[42] = bitcast<u32>(atomicLoad(&w.mx)); res[43] = bitcast<u32>(atomicLoad(&w.mn));
                res[44] = atomicLoad(&w.umx); res[45] = atomicLoad(&w.umn);
                res[46] = atomicLoad(&w.and_); res[47] = atomicLoad(&w.or_);
                res[48] = atomicLoad(&w.xor_); res[49] = atomicLoad(&w.cas);
                res[50] = atomicLoad(&w.st);
            }
        }",
    );
    let init = vec![0, 1000, 0, 0, 0, u32::MAX, u32::MAX, 0, 0, 99, 0, 0];
    let (out, _) = dispatch(&p, &[init, vec![0; 51]], [1, 1, 1]);
    let a = &out[0];
    let sum: u32 = (0..40).sum();
    let xor = (0..40u32).fold(0, |x, i| x ^ i);
    assert_eq!(a[0], sum);
    assert_eq!(a[1], 1000u32.wrapping_sub(sum));
    assert_eq!(a[2] as i32, 19);
    assert_eq!(a[3] as i32, -20);
    assert_eq!(a[4], 39 * 3);
    assert_eq!(a[5], 5);
    assert_eq!(a[6], 0);
    assert_eq!(a[7], u32::MAX);
    assert_eq!(a[8], xor);
    assert_eq!(a[9], 39, "last exchange wins (lane order, warp order)");
    // CAS chain: invocation i succeeds iff the value is i when it runs: 0→1→…→40.
    assert_eq!(a[10], 40);
    assert_eq!(a[11], 77);
    let r = &out[1];
    for i in 0..40 {
        assert_eq!(r[i] & 3, 3, "cas {i}");
        assert_eq!(r[i] >> 8, if i == 0 { 99 } else { i as u32 - 1 });
    }
    // Workgroup memory starts at zero.
    assert_eq!(
        &r[40..51],
        &[
            sum,
            0u32.wrapping_sub(sum),
            19,
            -20i32 as u32,
            39 * 3,
            0,
            0,
            u32::MAX,
            xor,
            40,
            78
        ]
    );
}

#[test]
fn out_of_bounds_atomics_do_nothing_and_return_zero() {
    let p = compile(
        "@group(0) @binding(0) var<storage, read_write> a: array<atomic<u32>>;
        @group(0) @binding(1) var<storage, read_write> r: array<u32>;
        @compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) {
            r[i] = atomicAdd(&a[i], 5u);
        }",
    );
    // `a` has 2 elements: indices clamp to the last one (robust access).
    let (out, _) = dispatch(&p, &[vec![1, 2], vec![0; 4]], [1, 1, 1]);
    assert_eq!(out[0], vec![6, 17]);
    assert_eq!(out[1], vec![1, 2, 7, 12]);
    // An empty buffer: every atomic returns 0 and nothing is written anywhere.
    let (out, _) = dispatch(&p, &[vec![], vec![9; 4]], [1, 1, 1]);
    assert_eq!(out[1], vec![0; 4]);
}

#[test]
fn compute_builtins_and_partial_last_warp() {
    let p = compile(
        "@group(0) @binding(0) var<storage, read_write> o: array<vec4<u32>>;
        @compute @workgroup_size(5, 3, 2)
        fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) li: u32,
                @builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nw: vec3<u32>) {
            let flat = (wid.x + nw.x * (wid.y + nw.y * wid.z)) * 30u + li;
            o[flat * 3u] = vec4<u32>(lid, li);
            o[flat * 3u + 1u] = vec4<u32>(gid, flat);
            o[flat * 3u + 2u] = vec4<u32>(wid.x + 10u * wid.y + 100u * wid.z, nw.x + 10u * nw.y + 100u * nw.z, li % 16u, 16u);
        }",
    );
    let groups = [2, 2, 1];
    let n = 4 * 30 * 3 * 4;
    let (out, info) = dispatch(&p, &[vec![u32::MAX; n]], groups);
    let o = &out[0];
    for wz in 0..1 {
        for wy in 0..2 {
            for wx in 0..2 {
                for li in 0..30u32 {
                    let lid = [li % 5, li / 5 % 3, li / 15];
                    let flat = (wx + 2 * (wy + 2 * wz)) * 30 + li;
                    let b = flat as usize * 12;
                    assert_eq!(&o[b..b + 4], &[lid[0], lid[1], lid[2], li]);
                    assert_eq!(
                        &o[b + 4..b + 8],
                        &[wx * 5 + lid[0], wy * 3 + lid[1], lid[2], flat]
                    );
                    assert_eq!(
                        &o[b + 8..b + 12],
                        &[wx + 10 * wy, 2 + 20 + 100, li % 16, 16]
                    );
                }
            }
        }
    }
    // 30 invocations: one warp's last lanes (or a last warp's) are not used.
    assert_eq!(info.barrier_waits, 0);
    assert!(info.active_lanes < info.instructions * WARP_LANES as u64);
}

#[test]
fn barrier_inside_loop_and_function_resumes() {
    // Each round every invocation reads its neighbour's value written in the previous round:
    // only correct if all 64 invocations (4 warps) advance together between barriers.
    let p = compile(
        "var<workgroup> buf: array<u32, 64>;
        @group(0) @binding(0) var<storage, read_write> o: array<u32>;
        fn sync() { workgroupBarrier(); }
        @compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {
            buf[i] = i;
            for (var round = 0u; round < 5u; round++) {
                sync();
                let v = buf[(i + 1u) % 64u];
                sync();
                buf[i] = v + 1000u;
            }
            sync();
            o[i] = buf[i];
        }",
    );
    let (out, info) = dispatch(&p, &[vec![0; 64]], [1, 1, 1]);
    for i in 0..64 {
        assert_eq!(out[0][i], (i as u32 + 5) % 64 + 5000, "{i}");
    }
    // Every warp of the 64 invocations waits at each of the 11 barriers.
    assert_eq!(info.barrier_waits, (64 / WARP_LANES as u64) * 11);
}

#[test]
fn non_uniform_barrier_does_not_hang_and_budget_stops_runaway_workgroups() {
    // Invalid WGSL naga's uniformity analysis accepts? It rejects barriers under a
    // non-uniform branch, so build the non-uniform case from a uniform-looking loop bound
    // read from storage memory (uniformity analysis trusts the value is uniform).
    let p = compile(
        "@group(0) @binding(0) var<storage, read_write> o: array<u32>;
        @compute @workgroup_size(48) fn main(@builtin(local_invocation_index) i: u32) {
            let n = workgroupUniformLoad(&dummy) + o[i];
            for (var k = 0u; k < n; k++) { workgroupBarrier(); }
            o[i] = o[i] + 100u;
        }
        var<workgroup> dummy: u32;",
    );
    // Lanes wait at different numbers of barriers; each warp still finishes.
    let init: Vec<u32> = (0..48).map(|i| i % 7).collect();
    let (out, _) = dispatch(&p, std::slice::from_ref(&init), [1, 1, 1]);
    for i in 0..48 {
        assert_eq!(out[0][i], init[i] + 100);
    }
    let spin = compile(
        "var<workgroup> w: u32;
        @group(0) @binding(0) var<storage, read_write> o: array<u32>;
        @compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {
            loop { workgroupBarrier(); if o[0] == 12345u { break; } }
        }",
    );
    assert_eq!(
        dispatch_budget(&spin, &[vec![0]], [1, 1, 1], 100_000).unwrap_err(),
        ExecError::BudgetExhausted
    );
}

#[test]
fn statistics_count_classes_divergence_and_barriers() {
    let p = compile(
        "@group(0) @binding(0) var<storage, read_write> o: array<f32>;
        @compute @workgroup_size(16) fn main(@builtin(local_invocation_index) i: u32) {
            var x = f32(i);
            if i % 2u == 0u { x = sqrt(x); } else { x = x * 2.0; }
            for (var k = 0u; k < i; k++) { x += 1.0; }
            workgroupBarrier();
            o[i] = x;
        }",
    );
    let (out, info) = dispatch(&p, &[vec![0; 16]], [1, 1, 1]);
    for i in 0..16 {
        let x = if i % 2 == 0 {
            (i as f32).sqrt()
        } else {
            i as f32 * 2.0
        } + i as f32;
        assert_eq!(f32::from_bits(out[0][i]), x);
    }
    assert!(info.transcendental >= 1);
    assert!(info.memory >= 1);
    assert!(info.control >= 1);
    // The if splits, and the loop loses one lane per iteration (15 splits).
    assert!(info.divergent_branches >= 16, "{info:?}");
    assert_eq!(info.barrier_waits, 1);
    // Uniform program: no divergence, full lanes.
    let u = compile(&format!(
        "@group(0) @binding(0) var<storage, read_write> o: array<u32>;
        @compute @workgroup_size({WARP_LANES}) fn main(@builtin(local_invocation_index) i: u32) {{
            var s = 0u;
            for (var k = 0u; k < 4u; k++) {{ s += k * i; }}
            o[i] = s;
        }}",
    ));
    let (_, info) = dispatch(&u, &[vec![0; WARP_LANES]], [1, 1, 1]);
    assert_eq!(info.divergent_branches, 0);
    assert_eq!(info.active_lanes, info.instructions * WARP_LANES as u64);
}

#[test]
fn graphics_warp_statistics_add_up() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {
            var y = x;
            if x > 0.5 { y = exp(x); }
            return vec4<f32>(y);
        }",
    );
    let r = run_mask(&p, FULL_MASK, &[], &|_, _, l| (l as f32 / 16.0).to_bits());
    check_stats(&r.info);
    assert_eq!(r.info.divergent_branches, 1);
    assert_eq!(r.info.transcendental, 1);
}

// ---- Real compute programs -------------------------------------------------------------

#[test]
fn tree_reduction_256_wide() {
    let p = compile(
        "var<workgroup> s: array<f32, 256>;
        @group(0) @binding(0) var<storage, read> input: array<f32>;
        @group(0) @binding(1) var<storage, read_write> sums: array<f32>;
        @compute @workgroup_size(256)
        fn main(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) g: vec3<u32>) {
            s[i] = input[g.x * 256u + i];
            workgroupBarrier();
            for (var stride = 128u; stride > 0u; stride >>= 1u) {
                if i < stride { s[i] += s[i + stride]; }
                workgroupBarrier();
            }
            if i == 0u { sums[g.x] = s[0]; }
        }",
    );
    let data: Vec<f32> = (0..1024).map(|k| ((k * 37) % 101) as f32 * 0.25).collect();
    let (out, info) = dispatch(&p, &[bits(&data), vec![0; 4]], [4, 1, 1]);
    for g in 0..4 {
        let mut s = data[g * 256..(g + 1) * 256].to_vec();
        let mut stride = 128;
        while stride > 0 {
            for i in 0..stride {
                s[i] += s[i + stride];
            }
            stride >>= 1;
        }
        assert_eq!(f32s(&out[1])[g], s[0]);
    }
    assert_eq!(info.barrier_waits, 4 * (256 / WARP_LANES as u64) * 9);
}

#[test]
fn prefix_sums_hillis_steele_and_blelloch() {
    let hs = compile(
        "var<workgroup> a: array<u32, 128>;
        var<workgroup> b: array<u32, 128>;
        @group(0) @binding(0) var<storage, read_write> d: array<u32>;
        @compute @workgroup_size(128) fn main(@builtin(local_invocation_index) i: u32) {
            a[i] = d[i];
            workgroupBarrier();
            var off = 1u;
            var src_a = true;
            loop {
                if off >= 128u { break; }
                if src_a {
                    b[i] = a[i] + select(0u, a[i - off], i >= off);
                } else {
                    a[i] = b[i] + select(0u, b[i - off], i >= off);
                }
                src_a = !src_a;
                off *= 2u;
                workgroupBarrier();
            }
            d[i] = select(a[i], b[i], !src_a);
        }",
    );
    let data: Vec<u32> = (0..128).map(|k| (k * 7 + 3) % 23).collect();
    let (out, _) = dispatch(&hs, std::slice::from_ref(&data), [1, 1, 1]);
    let mut acc = 0;
    for i in 0..128 {
        acc += data[i];
        assert_eq!(out[0][i], acc, "inclusive {i}");
    }

    let blelloch = compile(
        "var<workgroup> t: array<u32, 256>;
        @group(0) @binding(0) var<storage, read_write> d: array<u32>;
        @compute @workgroup_size(128) fn main(@builtin(local_invocation_index) i: u32) {
            t[2u * i] = d[2u * i];
            t[2u * i + 1u] = d[2u * i + 1u];
            var off = 1u;
            for (var n = 128u; n > 0u; n >>= 1u) {
                workgroupBarrier();
                if i < n {
                    let ai = off * (2u * i + 1u) - 1u;
                    let bi = off * (2u * i + 2u) - 1u;
                    t[bi] += t[ai];
                }
                off *= 2u;
            }
            if i == 0u { t[255] = 0u; }
            for (var n = 1u; n < 256u; n *= 2u) {
                off >>= 1u;
                workgroupBarrier();
                if i < n {
                    let ai = off * (2u * i + 1u) - 1u;
                    let bi = off * (2u * i + 2u) - 1u;
                    let x = t[ai];
                    t[ai] = t[bi];
                    t[bi] += x;
                }
            }
            workgroupBarrier();
            d[2u * i] = t[2u * i];
            d[2u * i + 1u] = t[2u * i + 1u];
        }",
    );
    let data: Vec<u32> = (0..256).map(|k| (k * 13 + 5) % 31).collect();
    let (out, _) = dispatch(&blelloch, std::slice::from_ref(&data), [1, 1, 1]);
    let mut acc = 0;
    for i in 0..256 {
        assert_eq!(out[0][i], acc, "exclusive {i}");
        acc += data[i];
    }
}

#[test]
fn histogram_with_storage_and_workgroup_atomics() {
    let p = compile(
        "var<workgroup> local_bins: array<atomic<u32>, 16>;
        @group(0) @binding(0) var<storage, read> data: array<u32>;
        @group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>, 16>;
        @group(0) @binding(2) var<storage, read_write> direct: array<atomic<u32>, 16>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
            let v = data[gid.x] % 16u;
            atomicAdd(&direct[v], 1u);
            atomicAdd(&local_bins[v], 1u);
            workgroupBarrier();
            if li < 16u { atomicAdd(&bins[li], atomicLoad(&local_bins[li])); }
        }",
    );
    let data: Vec<u32> = (0..640u32)
        .map(|k| k.wrapping_mul(2654435761) >> 7)
        .collect();
    let (out, _) = dispatch(&p, &[data.clone(), vec![0; 16], vec![0; 16]], [10, 1, 1]);
    let mut want = vec![0u32; 16];
    for v in &data {
        want[(*v % 16) as usize] += 1;
    }
    assert_eq!(out[1], want);
    assert_eq!(out[2], want);
}

#[test]
fn bitonic_sort_in_workgroup_memory() {
    let p = compile(
        "var<workgroup> s: array<i32, 512>;
        @group(0) @binding(0) var<storage, read_write> d: array<i32>;
        @compute @workgroup_size(256) fn main(@builtin(local_invocation_index) i: u32) {
            s[i] = d[i];
            s[i + 256u] = d[i + 256u];
            for (var k = 2u; k <= 512u; k <<= 1u) {
                for (var j = k >> 1u; j > 0u; j >>= 1u) {
                    workgroupBarrier();
                    // Thread i handles the pair (lo, lo + j).
                    let lo = 2u * i - (i & (j - 1u));
                    let hi = lo + j;
                    let up = (lo & k) == 0u;
                    let a = s[lo];
                    let b = s[hi];
                    if (a > b) == up { s[lo] = b; s[hi] = a; }
                }
            }
            workgroupBarrier();
            d[i] = s[i];
            d[i + 256u] = s[i + 256u];
        }",
    );
    let data: Vec<i32> = (0..512i64)
        .map(|k| ((k * 7919 + 13) % 1001 - 500) as i32)
        .collect();
    let (out, _) = dispatch(&p, &[data.iter().map(|&v| v as u32).collect()], [1, 1, 1]);
    let mut want = data.clone();
    want.sort();
    let got: Vec<i32> = out[0].iter().map(|&v| v as i32).collect();
    assert_eq!(got, want);
}

#[test]
fn image_box_filter() {
    let p = compile(
        "@group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        const W: i32 = 37;
        const H: i32 = 21;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            let x = i32(gid.x);
            let y = i32(gid.y);
            if x >= W || y >= H { return; }
            var sum = 0.0;
            for (var dy = -1; dy <= 1; dy++) {
                for (var dx = -1; dx <= 1; dx++) {
                    let sx = clamp(x + dx, 0, W - 1);
                    let sy = clamp(y + dy, 0, H - 1);
                    sum += src[sy * W + sx];
                }
            }
            dst[y * W + x] = sum / 9.0;
        }",
    );
    let (w, h) = (37i32, 21i32);
    let img: Vec<f32> = (0..w * h).map(|k| ((k * 31) % 17) as f32).collect();
    let (out, _) = dispatch(&p, &[bits(&img), vec![0; (w * h) as usize]], [5, 3, 1]);
    let got = f32s(&out[1]);
    for y in 0..h {
        for x in 0..w {
            let mut s = 0.0f32;
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let sx = (x + dx).clamp(0, w - 1);
                    let sy = (y + dy).clamp(0, h - 1);
                    s += img[(sy * w + sx) as usize];
                }
            }
            assert_eq!(got[(y * w + x) as usize], s / 9.0, "({x}, {y})");
        }
    }
}

#[test]
fn n_body_step_with_shared_tiles() {
    let p = compile(
        "struct Body { pos: vec4<f32>, vel: vec4<f32> }
        @group(0) @binding(0) var<storage, read> bodies: array<Body>;
        @group(0) @binding(1) var<storage, read_write> next: array<Body>;
        var<workgroup> tile: array<vec4<f32>, 32>;
        const N: u32 = 96u;
        const DT: f32 = 0.01;
        @compute @workgroup_size(32)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
            let me = bodies[gid.x];
            var acc = vec3<f32>(0.0);
            for (var t = 0u; t < N / 32u; t++) {
                tile[li] = bodies[t * 32u + li].pos;
                workgroupBarrier();
                for (var j = 0u; j < 32u; j++) {
                    let o = tile[j];
                    let d = o.xyz - me.pos.xyz;
                    let r2 = dot(d, d) + 0.01;
                    acc += d * (o.w / (r2 * sqrt(r2)));
                }
                workgroupBarrier();
            }
            let v = me.vel.xyz + acc * DT;
            next[gid.x] = Body(vec4<f32>(me.pos.xyz + v * DT, me.pos.w), vec4<f32>(v, 0.0));
        }",
    );
    let n = 96;
    let mut init = Vec::new();
    for k in 0..n {
        let f = k as f32;
        init.extend([
            (f * 0.37).sin() * 3.0,
            (f * 0.11).cos() * 2.0,
            f * 0.05 - 2.0,
            1.0 + (k % 3) as f32,
        ]);
        init.extend([0.1 * (f * 0.7).sin(), 0.0, -0.05, 0.0]);
    }
    let (out, _) = dispatch(&p, &[bits(&init), vec![0; n * 8]], [3, 1, 1]);
    let got = f32s(&out[1]);
    for i in 0..n {
        let me = &init[i * 8..i * 8 + 8];
        let mut acc = [0.0f32; 3];
        for j in 0..n {
            let o = &init[j * 8..j * 8 + 4];
            let d = [o[0] - me[0], o[1] - me[1], o[2] - me[2]];
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01;
            let s = o[3] / (r2 * r2.sqrt());
            for c in 0..3 {
                acc[c] += d[c] * s;
            }
        }
        for c in 0..3 {
            let v = me[4 + c] + acc[c] * 0.01;
            let pos = me[c] + v * 0.01;
            // Same operation order as the shader, but WGSL allows contraction differences:
            // compare within a few ulps.
            let (gp, gv) = (got[i * 8 + c], got[i * 8 + 4 + c]);
            assert!(
                (gp - pos).abs() <= 1e-5 * pos.abs().max(1.0),
                "pos {i}.{c}: {gp} vs {pos}"
            );
            assert!(
                (gv - v).abs() <= 1e-5 * v.abs().max(1.0),
                "vel {i}.{c}: {gv} vs {v}"
            );
        }
    }
}

/// Warps reading and writing consecutive words (`array[i]`, the vector path of compiled
/// code) where the words run past the end of a buffer shorter than the shader's fixed-size
/// arrays: in-range lanes get their words, the others load 0 and store nothing; the warp
/// that ends exactly at the end of a buffer reads and writes all its words.
#[test]
fn consecutive_words_crossing_the_end_of_a_buffer() {
    let p = compile(
        "@group(0) @binding(0) var<storage, read_write> src: array<u32, 64>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32, 64>;
        @compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {
            dst[i] = src[i] * 3u + 1u;
        }",
    );
    for words in [20usize, 32, 40] {
        let src: Vec<u32> = (0..words as u32).map(|k| k * 7 + 2).collect();
        // Loads past the end of the source give 0.
        let (out, _) = dispatch(&p, &[src.clone(), vec![0; 48]], [1, 1, 1]);
        let want: Vec<u32> = (0..48)
            .map(|k| src.get(k).map_or(0, |v| v * 3) + 1)
            .collect();
        assert_eq!(out[1], want, "{words} source words");
        assert_eq!(out[0], src, "the source is unchanged");
        // Stores past the end of the destination are dropped.
        let (out, _) = dispatch(&p, &[vec![5; 64], vec![0; words]], [1, 1, 1]);
        assert_eq!(out[1], vec![16; words], "{words} destination words");
    }
}

/// Loads and stores the compiled code makes itself: in-bounds words, an empty buffer (loads
/// give 0, stores are dropped), a fixed-size array read past its end through a pointer to
/// its last element's clamp, workgroup memory shared between warps, every lane in order.
#[test]
fn buffer_and_workgroup_loads_and_stores() {
    let p = compile(
        "@group(0) @binding(0) var<storage, read_write> a: array<u32>;
        @group(0) @binding(1) var<storage, read_write> empty: array<u32>;
        @group(0) @binding(2) var<storage, read_write> out: array<u32>;
        var<workgroup> shared_words: array<u32, 40>;
        @compute @workgroup_size(40) fn main(@builtin(local_invocation_index) i: u32) {
            shared_words[39u - i] = a[i % 8u] * 3u + i;
            empty[i] = 5u;
            workgroupBarrier();
            out[i] = shared_words[i] + empty[i] + arrayLength(&a) * 1000u + arrayLength(&empty);
            // Every lane writes the same word: the last lane wins.
            a[7] = i;
        }",
    );
    let a: Vec<u32> = (0..8).map(|k| k * 11 + 1).collect();
    let (out, _) = dispatch(&p, &[a.clone(), vec![], vec![0; 40]], [1, 1, 1]);
    for i in 0..40u32 {
        let writer = 39 - i;
        assert_eq!(
            out[2][i as usize],
            a[(writer % 8) as usize] * 3 + writer + 8000,
            "word {i}"
        );
    }
    assert_eq!(out[0][7], 39);
    assert!(out[1].is_empty());
}

/// Uniform values the compiled code keeps once per warp, across workgroup barriers: a
/// counter and a stride made before a barrier and read after it, in a loop whose later
/// iterations read what earlier ones wrote (they go through the register file while the
/// warp waits), and a uniform value only read in the run that makes it.
#[test]
fn uniform_values_live_across_barriers() {
    let p = compile_stage(
        "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
        var<workgroup> s: array<u32, 64>;
        @compute @workgroup_size(64)
        fn main(@builtin(local_invocation_index) l: u32) {
            var base = 7u;
            var total = 0u;
            for (var r = 0u; r < 4u; r++) {
                s[l] = l * base + r;
                workgroupBarrier();
                total += s[(l + base) % 64u];
                base = base + 3u;
                workgroupBarrier();
            }
            out[l] = total + base * 1000u;
        }",
        "main",
        Stage::Compute,
    );
    assert!(p.is_compiled());
    let (mem, _) = dispatch(&p, &[vec![0; 64]], [1, 1, 1]);
    for l in 0..64u32 {
        let mut base = 7u32;
        let mut total = 0u32;
        for r in 0..4u32 {
            let other = (l + base) % 64;
            total += other * base + r;
            base += 3;
        }
        assert_eq!(mem[0][l as usize], total + base * 1000, "lane {l}");
    }
}

/// Loads at addresses every lane agrees on, which compiled code makes once per warp as
/// scalar loads: fixed fields, an index read from memory, one past the end (clamped to the
/// last element, as WGSL's runtime-sized arrays are), one under
/// divergent control (a load writes every lane), workgroup memory written before a
/// barrier, and bindings past the ones compiled code addresses itself (the interpreter's
/// code loads those).
#[test]
fn loads_at_uniform_addresses() {
    let p = compile(
        "@group(0) @binding(0) var<storage, read_write> params: array<u32>;
        @group(0) @binding(1) var<storage, read> table: array<u32>;
        @group(0) @binding(2) var<storage, read_write> out: array<u32>;
        @group(0) @binding(3) var<storage, read> b3: array<u32>;
        @group(0) @binding(4) var<storage, read> b4: array<u32>;
        @group(0) @binding(5) var<storage, read> b5: array<u32>;
        @group(0) @binding(6) var<storage, read> b6: array<u32>;
        @group(0) @binding(7) var<storage, read> b7: array<u32>;
        @group(0) @binding(8) var<storage, read> b8: array<u32>;
        @group(0) @binding(9) var<uniform> far: vec4<u32>;
        var<workgroup> s: array<u32, 4>;
        @compute @workgroup_size(48)
        fn main(@builtin(local_invocation_index) l: u32,
                @builtin(workgroup_id) wg: vec3<u32>) {
            if l == 5u { s[wg.x % 4u] = params[0] * 5u + wg.x; }
            workgroupBarrier();
            let k = params[0];
            var v = table[k] + table[params[1]] * 7u;
            if (l & 1u) == 0u { v = v + table[k + 1u]; }
            let w = s[wg.x % 4u];
            let many = b3[0] + b4[0] + b5[0] + b6[0] + b7[0] + b8[1] + far.y + far[k % 4u];
            out[wg.x * 48u + l] = v + w * 100u + params[2] * l + many * 10000u;
        }",
    );
    assert!(p.is_compiled());
    let table: Vec<u32> = (0..16).map(|t| t * t + 3).collect();
    let (k, past, scale) = (6u32, 40u32, 9u32);
    let mut buffers = vec![vec![k, past, scale], table.clone(), vec![0; 96]];
    for b in 3..9u32 {
        buffers.push(vec![b, b * 2]);
    }
    buffers.push(vec![11, 12, 13, 14]);
    let (mem, _) = dispatch(&p, &buffers, [2, 1, 1]);
    let many = 3 + 4 + 5 + 6 + 7 + 16 + 12 + [11, 12, 13, 14][(k % 4) as usize];
    for g in 0..2u32 {
        for l in 0..48u32 {
            let mut v = table[k as usize] + table[15] * 7;
            if l & 1 == 0 {
                v += table[k as usize + 1];
            }
            let w = k * 5 + g;
            let want = v + w * 100 + scale * l + many * 10000;
            assert_eq!(mem[2][(g * 48 + l) as usize], want, "group {g} lane {l}");
        }
    }
}
