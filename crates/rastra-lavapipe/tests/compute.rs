//! Differential compute tests: the same [`ComputeRecipe`] run on rastra
//! ([`ComputeRecipe::run`]) and on lavapipe ([`Lavapipe::run_compute`]), output buffers
//! compared element by element. Integer results and float results computed in the same
//! order must be bit-identical; where the order or the accuracy of an operation legitimately
//! differs (f32 `inverseSqrt`, fused multiply-adds) the tolerance and its reason are stated
//! where it is set. Every case also checks rastra against a CPU model of the algorithm, so
//! agreement cannot come from both being wrong the same way.
//!
//! Cases: (a) tree reductions through workgroup memory, (b) a two-level prefix sum,
//! (c) histograms with storage and workgroup atomics (and the other atomic operations),
//! (d) a bitonic sort over many dispatches, (e) a 3×3 box filter, (f) an n-body step,
//! (g) integer, bit and float edge-case semantics against what WGSL admits
//! ([`semantics`]), (h) the `fma_then_reduce` benchmark workload.
//!
//! Each test skips, saying why, when lavapipe is not installed (CI installs it). A failure
//! names the first differing element and both values.

#[path = "compute/semantics.rs"]
mod semantics;

use std::collections::BTreeMap;

use rastra::BufferUsages;
use rastra_lavapipe::Lavapipe;
use rastra_scene::BufferData;
use rastra_scene::compute::{ComputeRecipe, ComputeStep};
use semantics::{Allowed, show_f32};

// ---------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------

fn lavapipe() -> Option<Lavapipe> {
    Lavapipe::new()
        .map_err(|why| eprintln!("skipping: {why}"))
        .ok()
}

/// The output buffers of one recipe on both renderers, in `recipe.outputs` order.
struct Both {
    rastra: Vec<Vec<u8>>,
    lavapipe: Vec<Vec<u8>>,
}

impl Both {
    fn u32s(&self, k: usize) -> (Vec<u32>, Vec<u32>) {
        (u32s(&self.rastra[k]), u32s(&self.lavapipe[k]))
    }

    fn f32s(&self, k: usize) -> (Vec<f32>, Vec<f32>) {
        (f32s(&self.rastra[k]), f32s(&self.lavapipe[k]))
    }
}

fn run_both(lp: &Lavapipe, recipe: &ComputeRecipe) -> Both {
    let ours = recipe
        .run(&Default::default(), 1)
        .unwrap_or_else(|e| panic!("rastra, compute job {:?}: {e}", recipe.name));
    let theirs = lp.run_compute(recipe, 1).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{}: rastra {:.2} ms, lavapipe {:.2} ms",
        recipe.name,
        ours.median_ms(),
        theirs.median_ms()
    );
    assert_eq!(ours.outputs.len(), recipe.outputs.len());
    assert_eq!(theirs.outputs.len(), recipe.outputs.len());
    for (k, (a, b)) in ours.outputs.iter().zip(&theirs.outputs).enumerate() {
        assert_eq!(
            a.len(),
            b.len(),
            "{}: output {k} differs in length",
            recipe.name
        );
    }
    Both {
        rastra: ours.outputs,
        lavapipe: theirs.outputs,
    }
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    u32s(b).into_iter().map(f32::from_bits).collect()
}

fn bytes<T: Copy>(v: &[T], to: impl Fn(T) -> [u8; 4]) -> Vec<u8> {
    v.iter().flat_map(|&x| to(x)).collect()
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    bytes(v, u32::to_le_bytes)
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    bytes(v, f32::to_le_bytes)
}

fn storage(label: &str, data: Vec<u8>) -> BufferData {
    BufferData {
        label: label.into(),
        data,
        usage: BufferUsages::STORAGE,
    }
}

fn step(entry: &str, bindings: &[(u32, usize)], workgroups: [u32; 3]) -> ComputeStep {
    ComputeStep {
        entry: entry.into(),
        bindings: bindings.to_vec(),
        workgroups,
    }
}

/// Asserts `ours == theirs` element for element, naming the first difference.
fn assert_u32s_equal(what: &str, ours: &[u32], theirs: &[u32]) {
    assert_eq!(ours.len(), theirs.len(), "{what}: lengths differ");
    let differing = ours.iter().zip(theirs).filter(|(a, b)| a != b).count();
    if let Some(i) = (0..ours.len()).find(|&i| ours[i] != theirs[i]) {
        panic!(
            "{what}: {differing} of {} elements differ; first at [{i}]: rastra {} (0x{:08x}), \
             lavapipe {} (0x{:08x})",
            ours.len(),
            ours[i],
            ours[i],
            theirs[i],
            theirs[i]
        );
    }
}

/// Asserts `ours` equals a CPU `model` (so the two renderers cannot agree on a wrong
/// answer), naming the first difference.
fn assert_u32s_model(what: &str, ours: &[u32], model: &[u32]) {
    assert_eq!(ours.len(), model.len(), "{what}: lengths differ");
    if let Some(i) = (0..ours.len()).find(|&i| ours[i] != model[i]) {
        panic!(
            "{what}: rastra differs from the CPU model at [{i}]: rastra {} (0x{:08x}), model {} \
             (0x{:08x})",
            ours[i], ours[i], model[i], model[i]
        );
    }
}

/// Asserts two f32 arrays are bit-identical, naming the first difference.
fn assert_f32s_identical(what: &str, ours: &[f32], theirs: &[f32]) {
    assert_eq!(ours.len(), theirs.len(), "{what}: lengths differ");
    let differing = ours
        .iter()
        .zip(theirs)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    if let Some(i) = (0..ours.len()).find(|&i| ours[i].to_bits() != theirs[i].to_bits()) {
        panic!(
            "{what}: {differing} of {} elements differ; first at [{i}]: rastra {}, lavapipe {}",
            ours.len(),
            show_f32(ours[i].to_bits()),
            show_f32(theirs[i].to_bits())
        );
    }
}

/// The largest |a − b| / bound(i) over both arrays (≤ 1 passes), asserting it, naming the
/// element that exceeds its bound first; returns (worst ratio, largest absolute
/// difference, elements that differ at all).
fn assert_f32s_within(
    what: &str,
    ours: &[f32],
    theirs: &[f32],
    bound: impl Fn(usize) -> f64,
    reason: &str,
) -> (f64, f64, usize) {
    assert_eq!(ours.len(), theirs.len(), "{what}: lengths differ");
    let (mut worst, mut max_abs, mut differing) = (0.0f64, 0.0f64, 0);
    for i in 0..ours.len() {
        let (a, b) = (ours[i], theirs[i]);
        assert!(
            a.is_finite() && b.is_finite(),
            "{what}: non-finite result at [{i}]: rastra {a}, lavapipe {b}"
        );
        let d = (a as f64 - b as f64).abs();
        if d == 0.0 {
            continue;
        }
        differing += 1;
        max_abs = max_abs.max(d);
        let ratio = d / bound(i);
        assert!(
            ratio <= 1.0,
            "{what}: element [{i}] differs beyond the tolerance ({reason}): rastra {}, lavapipe {}, \
             |difference| {d:e} > bound {:e}",
            show_f32(a.to_bits()),
            show_f32(b.to_bits()),
            bound(i)
        );
        worst = worst.max(ratio);
    }
    (worst, max_abs, differing)
}

/// xorshift64*: seeded, so every run tests the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }

    fn below(&mut self, n: u32) -> u32 {
        self.u32() % n
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.u32() >> 8) as f32 / (1 << 24) as f32
    }
}

// ---------------------------------------------------------------------------------------
// (a) Tree reduction through workgroup memory
// ---------------------------------------------------------------------------------------

const REDUCE: &str = r#"
@group(0) @binding(0) var<storage, read> src_u: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst_u: array<u32>;
@group(0) @binding(2) var<storage, read> src_f: array<f32>;
@group(0) @binding(3) var<storage, read_write> dst_f: array<f32>;
var<workgroup> part_u: array<u32, 256>;
var<workgroup> part_f: array<f32, 256>;

@compute @workgroup_size(256)
fn reduce_u32(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    part_u[l] = src_u[wg.x * 256u + l];
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {
        if l < s {
            part_u[l] += part_u[l + s];
        }
        workgroupBarrier();
    }
    if l == 0u {
        dst_u[wg.x] = part_u[0];
    }
}

@compute @workgroup_size(256)
fn reduce_f32(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    part_f[l] = src_f[wg.x * 256u + l];
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {
        if l < s {
            part_f[l] = part_f[l] + part_f[l + s];
        }
        workgroupBarrier();
    }
    if l == 0u {
        dst_f[wg.x] = part_f[0];
    }
}
"#;

/// The kernels' tree over 256-element blocks, on the CPU, in the same order.
fn tree_reduce<T: Copy>(v: &[T], add: impl Fn(T, T) -> T) -> Vec<T> {
    v.chunks_exact(256)
        .map(|block| {
            let mut p = block.to_vec();
            let mut s = 128;
            while s > 0 {
                for l in 0..s {
                    p[l] = add(p[l], p[l + s]);
                }
                s /= 2;
            }
            p[0]
        })
        .collect()
}

/// (a) 65 536 values reduced to 256 partial sums by 256-wide trees in workgroup memory,
/// then the partials to one total by the same kernel. u32 sums wrap; f32 sums are
/// bit-exact because both renderers add in the same tree order (WGSL allows
/// reassociation, but neither renderer reassociates).
#[test]
fn tree_reduction_through_workgroup_memory() {
    let Some(lp) = lavapipe() else { return };
    let n = 65_536;
    let mut rng = Rng(0x5eed_0001);
    let ints: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
    // Magnitudes over 2^-8 .. 2^8, both signs: every addition rounds.
    let floats: Vec<f32> = (0..n)
        .map(|_| (rng.unit() * 2.0 - 1.0) * 2f32.powi(rng.below(17) as i32 - 8))
        .collect();
    let recipe = ComputeRecipe {
        name: "tree_reduction".into(),
        shader: REDUCE.into(),
        buffers: vec![
            storage("ints", u32_bytes(&ints)),
            storage("partial_u", vec![0; 256 * 4]),
            storage("total_u", vec![0; 4]),
            storage("floats", f32_bytes(&floats)),
            storage("partial_f", vec![0; 256 * 4]),
            storage("total_f", vec![0; 4]),
        ],
        steps: vec![
            step("reduce_u32", &[(0, 0), (1, 1)], [256, 1, 1]),
            step("reduce_u32", &[(0, 1), (1, 2)], [1, 1, 1]),
            step("reduce_f32", &[(2, 3), (3, 4)], [256, 1, 1]),
            step("reduce_f32", &[(2, 4), (3, 5)], [1, 1, 1]),
        ],
        outputs: vec![1, 2, 4, 5],
    };
    let out = run_both(&lp, &recipe);

    let partial_u = tree_reduce(&ints, u32::wrapping_add);
    let total_u = tree_reduce(&partial_u, u32::wrapping_add);
    let partial_f = tree_reduce(&floats, |a, b| a + b);
    let total_f = tree_reduce(&partial_f, |a, b| a + b);

    let (ours, theirs) = out.u32s(0);
    assert_u32s_equal("u32 partial sums", &ours, &theirs);
    assert_u32s_model("u32 partial sums", &ours, &partial_u);
    let (ours, theirs) = out.u32s(1);
    assert_u32s_equal("u32 total", &ours, &theirs);
    assert_u32s_model("u32 total", &ours, &total_u);
    let (ours, theirs) = out.f32s(2);
    assert_f32s_identical("f32 partial sums", &ours, &theirs);
    assert_f32s_identical("f32 partial sums (rastra vs CPU model)", &ours, &partial_f);
    let (ours, theirs) = out.f32s(3);
    assert_f32s_identical("f32 total", &ours, &theirs);
    assert_f32s_identical("f32 total (rastra vs CPU model)", &ours, &total_f);
    eprintln!(
        "tree_reduction: 256 u32 and 256 f32 partials and both totals identical \
         (u32 total 0x{:08x}, f32 total {})",
        total_u[0], total_f[0]
    );
}

// ---------------------------------------------------------------------------------------
// (b) Prefix sum
// ---------------------------------------------------------------------------------------

const SCAN: &str = r#"
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> block_sums: array<u32>;
var<workgroup> tmp: array<u32, 256>;

// Hillis–Steele inclusive scan of one 256-element block in workgroup memory; the block's
// total goes to block_sums.
@compute @workgroup_size(256)
fn scan_blocks(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let i = wg.x * 256u + l;
    tmp[l] = data[i];
    workgroupBarrier();
    for (var offset = 1u; offset < 256u; offset <<= 1u) {
        var v = tmp[l];
        if l >= offset {
            v += tmp[l - offset];
        }
        workgroupBarrier();
        tmp[l] = v;
        workgroupBarrier();
    }
    data[i] = tmp[l];
    if l == 255u {
        block_sums[wg.x] = tmp[255];
    }
}

// Adds the inclusive scan of the block totals of the blocks before this one.
@compute @workgroup_size(256)
fn add_offsets(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    if wg.x > 0u {
        data[wg.x * 256u + l] += block_sums[wg.x - 1u];
    }
}
"#;

/// (b) Inclusive prefix sum of 65 536 u32 (wrapping): each block scanned in workgroup
/// memory, the 256 block totals scanned by the same kernel, then a dispatch adding each
/// block's offset.
#[test]
fn prefix_sum_of_65536_u32() {
    let Some(lp) = lavapipe() else { return };
    let n = 65_536;
    let mut rng = Rng(0x5eed_0002);
    let values: Vec<u32> = (0..n).map(|_| rng.u32() >> rng.below(32)).collect();
    let recipe = ComputeRecipe {
        name: "prefix_sum".into(),
        shader: SCAN.into(),
        buffers: vec![
            storage("data", u32_bytes(&values)),
            storage("block_sums", vec![0; 256 * 4]),
            storage("total", vec![0; 4]),
        ],
        steps: vec![
            step("scan_blocks", &[(0, 0), (1, 1)], [256, 1, 1]),
            step("scan_blocks", &[(0, 1), (1, 2)], [1, 1, 1]),
            step("add_offsets", &[(0, 0), (1, 1)], [256, 1, 1]),
        ],
        outputs: vec![0, 1, 2],
    };
    let out = run_both(&lp, &recipe);

    let scan: Vec<u32> = values
        .iter()
        .scan(0u32, |acc, &v| {
            *acc = acc.wrapping_add(v);
            Some(*acc)
        })
        .collect();
    let block_scan: Vec<u32> = scan.chunks_exact(256).map(|b| b[255]).collect();

    let (ours, theirs) = out.u32s(0);
    assert_u32s_equal("prefix sums", &ours, &theirs);
    assert_u32s_model("prefix sums", &ours, &scan);
    let (ours, theirs) = out.u32s(1);
    assert_u32s_equal("scanned block totals", &ours, &theirs);
    assert_u32s_model("scanned block totals", &ours, &block_scan);
    let (ours, theirs) = out.u32s(2);
    assert_u32s_equal("total", &ours, &theirs);
    assert_u32s_model("total", &ours, &[scan[n - 1]]);
    eprintln!(
        "prefix_sum: 65 536 sums identical, total 0x{:08x}",
        scan[n - 1]
    );
}

// ---------------------------------------------------------------------------------------
// (c) Histograms and atomics
// ---------------------------------------------------------------------------------------

const HISTOGRAM: &str = r#"
@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>, 256>;
@group(0) @binding(2) var<storage, read_write> stats: array<atomic<u32>, 8>;
@group(0) @binding(3) var<storage, read_write> sstats: array<atomic<i32>, 2>;
@group(0) @binding(4) var<storage, read_write> slots: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> previous: array<u32>;
var<workgroup> local_hist: array<atomic<u32>, 256>;

fn bin(v: u32) -> u32 {
    return (v >> 8u) & 255u;
}

// Every invocation adds to the storage histogram.
@compute @workgroup_size(256)
fn hist_global(@builtin(global_invocation_id) id: vec3<u32>) {
    atomicAdd(&hist[bin(values[id.x])], 1u);
}

// Each workgroup counts into its zero-initialised workgroup histogram, then flushes it
// with one storage atomic per non-empty bin.
@compute @workgroup_size(256)
fn hist_local(@builtin(global_invocation_id) id: vec3<u32>,
              @builtin(local_invocation_index) l: u32) {
    atomicAdd(&local_hist[bin(values[id.x])], 1u);
    workgroupBarrier();
    let count = atomicLoad(&local_hist[l]);
    if count != 0u {
        atomicAdd(&hist[l], count);
    }
}

// The other atomic operations, each with an order-independent final value, and
// exchange's return value on invocation-private slots.
@compute @workgroup_size(256)
fn other_atomics(@builtin(global_invocation_id) id: vec3<u32>) {
    let v = values[id.x];
    atomicMax(&stats[0], v);
    atomicMin(&stats[1], v);
    atomicOr(&stats[2], v & 0x0f0f0f0fu);
    atomicAnd(&stats[3], v | 0x00ff00ffu);
    atomicXor(&stats[4], v);
    atomicAdd(&stats[5], v);
    atomicSub(&stats[6], v);
    if id.x < 1024u {
        var old = atomicLoad(&stats[7]);
        loop {
            let r = atomicCompareExchangeWeak(&stats[7], old, old + 3u);
            if r.exchanged {
                break;
            }
            old = r.old_value;
        }
    }
    atomicMax(&sstats[0], bitcast<i32>(v));
    atomicMin(&sstats[1], bitcast<i32>(v));
    previous[id.x] = atomicExchange(&slots[id.x], v);
}
"#;

/// (c) A 256-bin histogram of 65 536 values with a skewed distribution (bin 0 takes about
/// a tenth of them, so many invocations contend on one address), counted twice: with a
/// storage `atomicAdd` per value, and through a workgroup-memory histogram flushed with
/// atomics. Also atomicMax/Min/Or/And/Xor/Add/Sub (u32 and i32), a compare-exchange loop
/// and atomicExchange's return value. All exact.
#[test]
fn histograms_with_atomics() {
    let Some(lp) = lavapipe() else { return };
    let n = 65_536u32;
    let mut rng = Rng(0x5eed_0003);
    // AND of three random words: each bit set with probability 1/8.
    let values: Vec<u32> = (0..n).map(|_| rng.u32() & rng.u32() & rng.u32()).collect();
    let stats_init = [0, u32::MAX, 0, u32::MAX, 0, 0, 0, 0];
    let sstats_init = [i32::MIN as u32, i32::MAX as u32];
    let slots_init: Vec<u32> = (0..n).map(|i| i.wrapping_mul(7)).collect();
    let recipe = ComputeRecipe {
        name: "histogram".into(),
        shader: HISTOGRAM.into(),
        buffers: vec![
            storage("values", u32_bytes(&values)),
            storage("hist_global", vec![0; 256 * 4]),
            storage("hist_local", vec![0; 256 * 4]),
            storage("stats", u32_bytes(&stats_init)),
            storage("sstats", u32_bytes(&sstats_init)),
            storage("slots", u32_bytes(&slots_init)),
            storage("previous", vec![0; n as usize * 4]),
        ],
        steps: vec![
            step("hist_global", &[(0, 0), (1, 1)], [n / 256, 1, 1]),
            step("hist_local", &[(0, 0), (1, 2)], [n / 256, 1, 1]),
            step(
                "other_atomics",
                &[(0, 0), (2, 3), (3, 4), (4, 5), (5, 6)],
                [n / 256, 1, 1],
            ),
        ],
        outputs: vec![1, 2, 3, 4, 5, 6],
    };
    let out = run_both(&lp, &recipe);

    let mut hist = vec![0u32; 256];
    for &v in &values {
        hist[((v >> 8) & 255) as usize] += 1;
    }
    let stats = [
        *values.iter().max().unwrap(),
        *values.iter().min().unwrap(),
        values.iter().fold(0, |a, v| a | (v & 0x0f0f_0f0f)),
        values.iter().fold(u32::MAX, |a, v| a & (v | 0x00ff_00ff)),
        values.iter().fold(0, |a, v| a ^ v),
        values.iter().fold(0u32, |a, &v| a.wrapping_add(v)),
        values.iter().fold(0u32, |a, &v| a.wrapping_sub(v)),
        3 * 1024,
    ];
    let sstats = [
        values.iter().map(|&v| v as i32).max().unwrap() as u32,
        values.iter().map(|&v| v as i32).min().unwrap() as u32,
    ];

    for (k, what, model) in [
        (0, "storage-atomic histogram", &hist[..]),
        (1, "workgroup-atomic histogram", &hist[..]),
        (
            2,
            "u32 atomic max/min/or/and/xor/add/sub/compare-exchange",
            &stats[..],
        ),
        (3, "i32 atomic max/min", &sstats[..]),
        (4, "atomicExchange final values", &values[..]),
        (5, "atomicExchange return values", &slots_init[..]),
    ] {
        let (ours, theirs) = out.u32s(k);
        assert_u32s_equal(what, &ours, &theirs);
        assert_u32s_model(what, &ours, model);
    }
    eprintln!(
        "histogram: both histograms identical (bin 0 {} of {n}, max bin {}), atomics identical",
        hist[0],
        hist.iter().max().unwrap()
    );
}

// ---------------------------------------------------------------------------------------
// (d) Bitonic sort
// ---------------------------------------------------------------------------------------

const BITONIC: &str = r#"
struct Params {
    k: u32,
    j: u32,
}

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;
var<workgroup> block: array<u32, 512>;

// Every stage with k <= 512 for one 512-element block, in workgroup memory; blocks end up
// sorted ascending or descending by the global network's direction bit (base & k).
@compute @workgroup_size(256)
fn bitonic_local(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let base = wg.x * 512u;
    block[t] = data[base + t];
    block[t + 256u] = data[base + t + 256u];
    workgroupBarrier();
    for (var k = 2u; k <= 512u; k <<= 1u) {
        for (var j = k >> 1u; j > 0u; j >>= 1u) {
            let i = (t / j) * 2u * j + t % j;
            let l = i + j;
            let ascending = ((base + i) & k) == 0u;
            let a = block[i];
            let b = block[l];
            if (a > b) == ascending {
                block[i] = b;
                block[l] = a;
            }
            workgroupBarrier();
        }
    }
    data[base + t] = block[t];
    data[base + t + 256u] = block[t + 256u];
}

// One compare-exchange stage (k, j) of the global network, one dispatch per stage.
@compute @workgroup_size(256)
fn bitonic_global(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let l = i ^ params.j;
    if l > i {
        let a = data[i];
        let b = data[l];
        let ascending = (i & params.k) == 0u;
        if (a > b) == ascending {
            data[i] = b;
            data[l] = a;
        }
    }
}
"#;

/// (d) Bitonic sort of 4096 u32 (with duplicates and both extremes): one dispatch sorting
/// 512-element blocks in workgroup memory, then 33 dispatches of the global network
/// (k = 1024 … 4096), each reading its (k, j) from its own uniform buffer. Exact.
#[test]
fn bitonic_sort_of_4096_u32() {
    let Some(lp) = lavapipe() else { return };
    let n = 4096u32;
    let mut rng = Rng(0x5eed_0004);
    let mut values: Vec<u32> = (0..n)
        .map(|i| match i % 4 {
            0 => rng.below(64),
            _ => rng.u32(),
        })
        .collect();
    values[17] = u32::MAX;
    values[1000] = 0;
    let mut buffers = vec![storage("data", u32_bytes(&values))];
    let mut steps = vec![step("bitonic_local", &[(0, 0)], [n / 512, 1, 1])];
    let mut k = 1024;
    while k <= n {
        let mut j = k / 2;
        while j > 0 {
            buffers.push(BufferData {
                label: format!("params k={k} j={j}"),
                data: u32_bytes(&[k, j]),
                usage: BufferUsages::UNIFORM,
            });
            steps.push(step(
                "bitonic_global",
                &[(0, 0), (1, buffers.len() - 1)],
                [n / 256, 1, 1],
            ));
            j /= 2;
        }
        k *= 2;
    }
    assert_eq!(steps.len(), 34);
    let recipe = ComputeRecipe {
        name: "bitonic_sort".into(),
        shader: BITONIC.into(),
        buffers,
        steps,
        outputs: vec![0],
    };
    let out = run_both(&lp, &recipe);

    values.sort_unstable();
    let (ours, theirs) = out.u32s(0);
    assert_u32s_equal("sorted values", &ours, &theirs);
    assert_u32s_model("sorted values", &ours, &values);
    eprintln!("bitonic_sort: 4096 values sorted identically in 34 dispatches");
}

// ---------------------------------------------------------------------------------------
// (e) Box filter
// ---------------------------------------------------------------------------------------

const BOX: &str = r#"
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst_tiled: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst_direct: array<f32>;

const W: i32 = 128;
const H: i32 = 128;
var<workgroup> tile: array<array<f32, 18>, 18>;

// Clamp-to-edge read.
fn texel(x: i32, y: i32) -> f32 {
    return src[clamp(y, 0, H - 1) * W + clamp(x, 0, W - 1)];
}

// 16x16 pixels per workgroup from an 18x18 tile (with its one-pixel halo) in workgroup
// memory.
@compute @workgroup_size(16, 16)
fn box_tiled(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>) {
    let ox = i32(wg.x) * 16 - 1;
    let oy = i32(wg.y) * 16 - 1;
    for (var k = lid.y * 16u + lid.x; k < 324u; k += 256u) {
        let tx = k % 18u;
        let ty = k / 18u;
        tile[ty][tx] = texel(ox + i32(tx), oy + i32(ty));
    }
    workgroupBarrier();
    var sum = 0.0;
    for (var dy = 0u; dy < 3u; dy++) {
        for (var dx = 0u; dx < 3u; dx++) {
            sum += tile[lid.y + dy][lid.x + dx];
        }
    }
    let x = wg.x * 16u + lid.x;
    let y = wg.y * 16u + lid.y;
    dst_tiled[y * 128u + x] = sum * (1.0 / 9.0);
}

// The same filter straight from storage, one invocation per pixel.
@compute @workgroup_size(16, 16)
fn box_direct(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x = i32(gid.x);
    let y = i32(gid.y);
    var sum = 0.0;
    for (var dy = -1; dy <= 1; dy++) {
        for (var dx = -1; dx <= 1; dx++) {
            sum += texel(x + dx, y + dy);
        }
    }
    dst_direct[gid.y * 128u + gid.x] = sum * (1.0 / 9.0);
}
"#;

/// (e) 3×3 box filter (clamp to edge) of a 128×128 f32 image, once through 18×18 tiles in
/// workgroup memory and once straight from storage. The nine additions happen in the
/// same order everywhere and the scale is one multiplication by the constant 1/9, so the
/// results are bit-exact (lavapipe does not contract or reassociate plain additions).
#[test]
fn box_filter_3x3_of_128x128_f32() {
    let Some(lp) = lavapipe() else { return };
    let (w, h) = (128usize, 128usize);
    let mut rng = Rng(0x5eed_0005);
    // A gradient with noise and a few large values: the sums round.
    let image: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            let big = if rng.below(50) == 0 { 1000.0 } else { 0.0 };
            x * 0.37 - y * 0.11 + rng.unit() * 3.0 + big
        })
        .collect();
    let recipe = ComputeRecipe {
        name: "box_filter".into(),
        shader: BOX.into(),
        buffers: vec![
            storage("image", f32_bytes(&image)),
            storage("tiled", vec![0; w * h * 4]),
            storage("direct", vec![0; w * h * 4]),
        ],
        steps: vec![
            step("box_tiled", &[(0, 0), (1, 1)], [8, 8, 1]),
            step("box_direct", &[(0, 0), (2, 2)], [8, 8, 1]),
        ],
        outputs: vec![1, 2],
    };
    let out = run_both(&lp, &recipe);

    let texel = |x: i64, y: i64| image[(y.clamp(0, 127) * 128 + x.clamp(0, 127)) as usize];
    let model: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            let mut sum = 0.0f32;
            for dy in -1..=1 {
                for dx in -1..=1 {
                    sum += texel(x + dx, y + dy);
                }
            }
            sum * (1.0f32 / 9.0)
        })
        .collect();
    for (k, what) in [(0, "tiled box filter"), (1, "direct box filter")] {
        let (ours, theirs) = out.f32s(k);
        assert_f32s_identical(what, &ours, &theirs);
        assert_f32s_identical(&format!("{what} (rastra vs CPU model)"), &ours, &model);
    }
    eprintln!("box_filter: 2 × 16 384 pixels bit-identical");
}

// ---------------------------------------------------------------------------------------
// (f) N-body
// ---------------------------------------------------------------------------------------

const NBODY: &str = r#"
@group(0) @binding(0) var<storage, read> pos_in: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> vel_in: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> pos_out: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> vel_out: array<vec4<f32>>;

const N: u32 = 256u;
const DT: f32 = 0.01;
const EPS2: f32 = 0.01;
var<workgroup> tile: array<vec4<f32>, 64>;

// One explicit Euler step; positions (xyz, mass in w) pass through workgroup memory in
// tiles of 64 bodies.
@compute @workgroup_size(64)
fn nbody_step(@builtin(global_invocation_id) gid: vec3<u32>,
              @builtin(local_invocation_index) l: u32) {
    let p = pos_in[gid.x];
    var acc = vec3<f32>(0.0);
    for (var t = 0u; t < N; t += 64u) {
        tile[l] = pos_in[t + l];
        workgroupBarrier();
        for (var k = 0u; k < 64u; k++) {
            let q = tile[k];
            let d = q.xyz - p.xyz;
            let inv = inverseSqrt(dot(d, d) + EPS2);
            acc += d * (q.w * inv * inv * inv);
        }
        workgroupBarrier();
    }
    let v = vel_in[gid.x].xyz + acc * DT;
    vel_out[gid.x] = vec4<f32>(v, 0.0);
    pos_out[gid.x] = vec4<f32>(p.xyz + v * DT, p.w);
}
"#;

/// (f) One n-body step of 256 bodies in f32. The order of the 256 accumulations is the
/// same, but WGSL does not fix the arithmetic: `inverseSqrt` is accurate to 2 ULP and
/// implementations may fuse `dot`'s and the accumulation's multiply-adds. So the results
/// are compared within a bound derived from that rather than bit for bit: per component,
/// 64 ε × Σ|term| (each term's few-ULP error, and the rounding of partial sums that differ
/// by those errors, is a small multiple of ε × the magnitude of what is summed), scaled by
/// DT for velocities, plus 2 ULP of the result for the final additions. (Today the two
/// renderers agree bit for bit; the message says so.)
#[test]
fn nbody_step_of_256_bodies() {
    let Some(lp) = lavapipe() else { return };
    let n = 256;
    let (dt, eps2) = (0.01f64, 0.01f64);
    let mut rng = Rng(0x5eed_0006);
    let mut pos = Vec::with_capacity(n * 4);
    let mut vel = Vec::with_capacity(n * 4);
    for _ in 0..n {
        pos.extend([
            rng.unit() * 20.0 - 10.0,
            rng.unit() * 20.0 - 10.0,
            rng.unit() * 20.0 - 10.0,
            0.5 + rng.unit() * 2.0,
        ]);
        vel.extend([rng.unit() - 0.5, rng.unit() - 0.5, rng.unit() - 0.5, 0.0]);
    }
    let recipe = ComputeRecipe {
        name: "nbody".into(),
        shader: NBODY.into(),
        buffers: vec![
            storage("pos_in", f32_bytes(&pos)),
            storage("vel_in", f32_bytes(&vel)),
            storage("pos_out", vec![0; n * 16]),
            storage("vel_out", vec![0; n * 16]),
        ],
        steps: vec![step(
            "nbody_step",
            &[(0, 0), (1, 1), (2, 2), (3, 3)],
            [(n / 64) as u32, 1, 1],
        )],
        outputs: vec![2, 3],
    };
    let out = run_both(&lp, &recipe);

    // Σ|term| per body and component, and an f64 model of the step.
    let mut magnitude = vec![0.0f64; n * 4];
    let mut model_vel = vec![0.0f64; n * 4];
    let mut model_pos = vec![0.0f64; n * 4];
    for i in 0..n {
        let p = &pos[i * 4..i * 4 + 4];
        let mut acc = [0.0f64; 3];
        for j in 0..n {
            let q = &pos[j * 4..j * 4 + 4];
            let d: Vec<f64> = (0..3).map(|c| (q[c] - p[c]) as f64).collect();
            let r2 = d.iter().map(|x| x * x).sum::<f64>() + eps2;
            let s = q[3] as f64 / (r2 * r2.sqrt());
            for c in 0..3 {
                acc[c] += d[c] * s;
                magnitude[i * 4 + c] += (d[c] * s).abs();
            }
        }
        for c in 0..3 {
            model_vel[i * 4 + c] = vel[i * 4 + c] as f64 + acc[c] * dt;
            model_pos[i * 4 + c] = p[c] as f64 + model_vel[i * 4 + c] * dt;
        }
        model_pos[i * 4 + 3] = p[3] as f64;
    }
    let eps = f32::EPSILON as f64;
    let ulp = |x: f32| (x.abs().next_up() - x.abs()) as f64;
    let reason = "inverseSqrt is 2 ULP; multiply-adds may be fused";
    let (ours_v, theirs_v) = out.f32s(1);
    let vel_bound = |i: usize| 64.0 * eps * magnitude[i] * dt + 2.0 * ulp(ours_v[i]) + 1e-30;
    let (worst_v, abs_v, diff_v) =
        assert_f32s_within("velocities", &ours_v, &theirs_v, vel_bound, reason);
    let (ours_p, theirs_p) = out.f32s(0);
    let pos_bound = |i: usize| vel_bound(i) * dt + 2.0 * ulp(ours_p[i]) + 1e-30;
    let (worst_p, abs_p, diff_p) =
        assert_f32s_within("positions", &ours_p, &theirs_p, pos_bound, reason);

    // rastra against the f64 model: same kind of bound, plus f32's own rounding of the
    // sum (up to 256 roundings of partial sums bounded by Σ|term|).
    for i in 0..n * 4 {
        let d = (ours_v[i] as f64 - model_vel[i]).abs();
        let bound = 300.0 * eps * magnitude[i] * dt + 4.0 * ulp(ours_v[i]);
        assert!(
            d <= bound,
            "velocity [{i}]: rastra {} vs f64 model {} (|difference| {d:e} > {bound:e})",
            ours_v[i],
            model_vel[i]
        );
    }
    eprintln!(
        "nbody: velocities {diff_v}/{} differ, max |Δ| {abs_v:e}, worst {:.3} of the bound; \
         positions {diff_p}/{} differ, max |Δ| {abs_p:e}, worst {:.3} of the bound",
        n * 4,
        worst_v,
        n * 4,
        worst_p
    );
}

// ---------------------------------------------------------------------------------------
// (g) Integer, bit and float semantics
// ---------------------------------------------------------------------------------------

/// Checks one kernel's results against what WGSL admits (see [`semantics`]): each result
/// with a fixed value must be that value on both renderers (lavapipe may instead show a
/// documented deviation of its own); each other result must be admitted on both. Prints
/// how many results were fixed and how many lenient, and, per operation, where rastra and
/// lavapipe differ within the leniency and why that is allowed. Returns the violations.
fn check_semantics(
    kernel: &str,
    slots: &[&str],
    inputs: &dyn Fn(usize) -> String,
    ours: &[u32],
    theirs: &[u32],
    allowed: &[Allowed],
) -> Vec<String> {
    assert_eq!(ours.len(), allowed.len(), "{kernel}: result count");
    let (mut fixed, mut lenient) = (0, 0);
    // Per operation: (results where the renderers differ, why allowed, first example).
    let mut differ: BTreeMap<&str, (usize, &str, String)> = BTreeMap::new();
    let mut deviations = Vec::new();
    let mut failures = Vec::new();
    for (i, a) in allowed.iter().enumerate() {
        let (r, l) = (ours[i], theirs[i]);
        let slot = slots[i % slots.len()];
        let name = || format!("{kernel} [{i}] {slot} with {}", inputs(i / slots.len()));
        if a.is_fixed() {
            fixed += 1;
        } else {
            lenient += 1;
            if r != l {
                let e = differ.entry(slot).or_insert_with(|| {
                    (
                        0,
                        a.why(),
                        format!("{}: rastra 0x{r:08x}, lavapipe 0x{l:08x}", name()),
                    )
                });
                e.0 += 1;
            }
        }
        let rastra_ok = a.admits(r);
        let lavapipe_ok = match a.admits_lavapipe(l) {
            Ok(Some(why)) => {
                deviations.push(format!("{}: lavapipe 0x{l:08x} ({why})", name()));
                true
            }
            Ok(None) => true,
            Err(()) => false,
        };
        if !rastra_ok || !lavapipe_ok {
            let who = match (rastra_ok, lavapipe_ok) {
                (false, false) => "rastra and lavapipe",
                (false, true) => "rastra",
                _ => "lavapipe",
            };
            failures.push(format!(
                "{}: rastra 0x{r:08x}, lavapipe 0x{l:08x}; WGSL: {a} ({who} wrong)",
                name()
            ));
        }
    }
    eprintln!(
        "{kernel}: {fixed} fixed results, {lenient} lenient, {} violations",
        failures.len()
    );
    for (slot, (count, why, example)) in &differ {
        eprintln!("  lenient, renderers differ: {slot}: {count}× ({why}); e.g. {example}");
    }
    for d in &deviations {
        eprintln!("  known lavapipe deviation: {d}");
    }
    for f in &failures {
        eprintln!("  VIOLATION {f}");
    }
    failures
}

/// (g) Edge-value semantics: integer division and remainder (by zero, `MIN / -1`), shifts
/// by ≥ 32, the bit builtins, min/max/clamp, float → integer conversions (saturating,
/// NaN, ±inf, subnormal), round half-to-even, fract/floor/ceil/trunc/sign, pack/unpack
/// 4x8 and 2x16, quantizeToF16, frexp, comparisons, integer → float conversions. Every
/// result is written as bits and compared against what WGSL admits for it
/// ([`semantics`]): fixed results exactly on both renderers; results WGSL leaves open
/// (NaN/infinity under the Finite Math Assumption, subnormal flushing, the sign of zero,
/// clamp with low > high, either-neighbour conversions, accuracy bounds) leniently, with
/// the reason printed next to every place where the renderers differ.
#[test]
fn integer_bit_and_float_semantics() {
    let Some(lp) = lavapipe() else { return };
    let ints = semantics::INTS.to_vec();
    let floats = semantics::unary_floats();
    let pairs = semantics::pair_floats();
    let n_int = ints.len() * ints.len();
    let n_pair = pairs.len() * pairs.len();
    let groups = |n: usize| [n.div_ceil(64) as u32, 1, 1];
    let zeros = |n: usize| vec![0u8; n * 4];
    let recipe = ComputeRecipe {
        name: "semantics".into(),
        shader: semantics::SHADER.into(),
        buffers: vec![
            storage("ints", u32_bytes(&ints)),
            storage("int_out", zeros(n_int * semantics::INT_SLOTS.len())),
            storage("floats", u32_bytes(&floats)),
            storage(
                "unary_out",
                zeros(floats.len() * semantics::UNARY_SLOTS.len()),
            ),
            storage("pairs", u32_bytes(&pairs)),
            storage("pair_out", zeros(n_pair * semantics::PAIR_SLOTS.len())),
            storage(
                "conversion_out",
                zeros(ints.len() * semantics::CONVERSION_SLOTS.len()),
            ),
        ],
        steps: vec![
            step("int_ops", &[(0, 0), (1, 1)], groups(n_int)),
            step("float_unary", &[(2, 2), (3, 3)], groups(floats.len())),
            step("float_pairs", &[(4, 4), (5, 5)], groups(n_pair)),
            step("conversions", &[(0, 0), (6, 6)], groups(ints.len())),
        ],
        outputs: vec![1, 3, 5, 6],
    };
    let out = run_both(&lp, &recipe);

    let int_pair = |p: usize| {
        let n = ints.len();
        let (o, c) = ((p as u32 * 7) % 37, (p as u32 * 11 + 3) % 37);
        format!(
            "a=0x{:08x}, b=0x{:08x}, o={o}, c={c}",
            ints[p / n],
            ints[p % n]
        )
    };
    let float_value = |i: usize| format!("x={}", show_f32(floats[i]));
    let float_pair = |p: usize| {
        let n = pairs.len();
        format!("a={}, b={}", show_f32(pairs[p / n]), show_f32(pairs[p % n]))
    };
    let int_value = |i: usize| format!("n=0x{:08x}", ints[i]);

    let mut failures = Vec::new();
    let (ours, theirs) = out.u32s(0);
    failures.extend(check_semantics(
        "int_ops",
        semantics::INT_SLOTS,
        &int_pair,
        &ours,
        &theirs,
        &semantics::int_reference(&ints),
    ));
    let (ours, theirs) = out.u32s(1);
    failures.extend(check_semantics(
        "float_unary",
        semantics::UNARY_SLOTS,
        &float_value,
        &ours,
        &theirs,
        &semantics::unary_reference(&floats),
    ));
    let (ours, theirs) = out.u32s(2);
    failures.extend(check_semantics(
        "float_pairs",
        semantics::PAIR_SLOTS,
        &float_pair,
        &ours,
        &theirs,
        &semantics::pair_reference(&pairs),
    ));
    let (ours, theirs) = out.u32s(3);
    failures.extend(check_semantics(
        "conversions",
        semantics::CONVERSION_SLOTS,
        &int_value,
        &ours,
        &theirs,
        &semantics::conversion_reference(&ints),
    ));
    assert!(
        failures.is_empty(),
        "{} results outside what WGSL admits; first: {}",
        failures.len(),
        failures[0]
    );
}

// ---------------------------------------------------------------------------------------
// (h) The benchmark workload
// ---------------------------------------------------------------------------------------

/// (h) `workloads::fma_then_reduce(65 536)`: 64 chained `fma`s per invocation, then
/// 256-wide tree sums. WGSL's `fma` is "inherited from x * y + z": it may or may not be
/// fused. rastra fuses it (`f32::mul_add`, one rounding); lavapipe's results differ in the
/// last bits, as an unfused multiply and add would, and those differences flow into the
/// sums. The chain contracts (× 0.999 per step), so a per-step 1-ULP difference stays
/// within about 64 ULP of the value, and the tree's additions keep that relative size.
/// Tolerance: relative 1e-5 (≈ 84 ULP) per sum.
#[test]
fn fma_then_reduce_workload() {
    let Some(lp) = lavapipe() else { return };
    let recipe = rastra_scene::workloads::fma_then_reduce(65_536);
    let out = run_both(&lp, &recipe);
    let (ours, theirs) = out.f32s(0);
    assert_eq!(ours.len(), 256);
    let (worst, max_abs, differing) = assert_f32s_within(
        "fma_then_reduce sums",
        &ours,
        &theirs,
        |i| 1e-5 * (ours[i].abs() as f64).max(1e-30),
        "fma may or may not be fused; relative 1e-5",
    );
    // The values cycle with period 1024, so the sums do with period 4.
    let mut model = Vec::new();
    for g in 0..256u32 {
        let values: Vec<f64> = (0..256u32)
            .map(|l| {
                let mut x = ((g * 256 + l) % 1024) as f64 * 0.001;
                for _ in 0..64 {
                    x = x * 0.999 + 0.0007;
                }
                x
            })
            .collect();
        model.push(values.iter().sum::<f64>());
    }
    for (i, (&o, &m)) in ours.iter().zip(&model).enumerate() {
        assert!(
            ((o as f64 - m) / m).abs() < 1e-5,
            "sum [{i}]: rastra {o} vs f64 model {m}"
        );
    }
    eprintln!(
        "fma_then_reduce: {differing}/256 sums differ, max |Δ| {max_abs:e}, worst {:.3} of the \
         relative 1e-5 bound ({:.2e} relative)",
        worst,
        worst * 1e-5
    );
}

/// A recipe wgpu rejects comes back as an error, not a panic; bad buffer indices too.
#[test]
fn invalid_recipes_are_errors() {
    let Some(lp) = lavapipe() else { return };
    let good = rastra_scene::workloads::fma_then_reduce(1024);
    let mut bad_wgsl = good.clone();
    bad_wgsl.shader = "this is not WGSL".into();
    let mut bad_entry = good.clone();
    bad_entry.steps[0].entry = "missing".into();
    let mut bad_binding = good.clone();
    bad_binding.steps[0].bindings = vec![(7, 0)];
    let mut bad_index = good.clone();
    bad_index.outputs = vec![9];
    let mut too_many_groups = good.clone();
    too_many_groups.steps[0].workgroups = [70_000, 1, 1];
    for (what, recipe) in [
        ("invalid WGSL", bad_wgsl),
        ("unknown entry point", bad_entry),
        ("binding the shader does not declare", bad_binding),
        ("output index out of range", bad_index),
        ("dispatch over the limit", too_many_groups),
    ] {
        let e = lp.run_compute(&recipe, 1).err();
        eprintln!("{what}: {e:?}");
        assert!(e.is_some(), "{what}: expected an error");
    }
    // And the device still works afterwards.
    let out = lp.run_compute(&good, 2).expect("valid recipe");
    assert_eq!(out.times_ms.len(), 2);
    assert!(out.median_ms() > 0.0);
    assert_eq!(out.outputs.len(), 1);
    assert_eq!(out.outputs[0].len(), 4 * 4);
}
