//! Conformance corpus: every WGSL operator and builtin on edge values (NaN, ±inf, ±0,
//! denormals, i32::MIN / -1, wrapping, shifts ≥ 32, float→int saturation, f16 overflow and
//! rounding, bit-field edge widths, …). Data-driven: one table row per operation, generated
//! into a fragment program whose flat inputs are the operands' bits, run over 16 operand
//! tuples per warp on the warp interpreter and the reference interpreter (`common::run_mask`
//! checks they agree), then checked against an expected value computed here from the WGSL
//! spec rule written out in Rust (never through the ALU table).
#![allow(
    clippy::approx_constant,
    clippy::excessive_precision,
    clippy::cast_abs_to_unsigned,
    clippy::manual_clamp
)]

mod common;

use common::*;
use half::f16;
use rastra_shader::FULL_MASK;

#[derive(Clone, Copy, PartialEq)]
enum T {
    F,
    I,
    U,
    /// bool result.
    B,
}

/// How results are compared.
#[derive(Clone, Copy, PartialEq)]
enum Tol {
    /// Same bits (any NaN matches any NaN).
    Exact,
    /// f32 within WGSL's accuracy for transcendentals (relative 2^-20 or absolute 2^-20
    /// near zero); special values (NaN, ±inf) exact.
    Approx,
}

struct Row {
    expr: &'static str,
    args: &'static [T],
    ret: T,
    tol: Tol,
    want: fn(&[u32]) -> u32,
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}
fn i(x: u32) -> i32 {
    x as i32
}
fn fb(x: f32) -> u32 {
    x.to_bits()
}
fn b(x: bool) -> u32 {
    x as u32
}

macro_rules! row {
    ($expr:literal, [$($a:ident),*] -> $ret:ident, $tol:ident, |$v:ident| $body:expr) => {
        Row {
            expr: $expr,
            args: &[$(T::$a),*],
            ret: T::$ret,
            tol: Tol::$tol,
            want: |$v: &[u32]| $body,
        }
    };
}

const F_EDGES: &[f32] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    3.7,
    -7.25,
    100.0,
    1e30,
    -1e30,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    1e-40,  // denormal
    -1e-45, // smallest denormal
    f32::MIN_POSITIVE,
    f32::MAX,
    65504.0,
    65520.0, // rounds to f16 infinity
    1e-7,
    0.1,
    2147483648.0,
    -2147483904.0,
    4294967296.0,
];

const I_EDGES: &[i32] = &[
    0,
    1,
    -1,
    2,
    -2,
    7,
    -7,
    31,
    32,
    33,
    63,
    100,
    -100,
    i32::MIN,
    i32::MIN + 1,
    i32::MAX,
    0x5555_5555,
    -0x1234_5678,
    0x00ff_00ff,
];

const U_EDGES: &[u32] = &[
    0,
    1,
    2,
    7,
    31,
    32,
    33,
    100,
    0xff,
    0x7fff_ffff,
    0x8000_0000,
    0xdead_beef,
    0x0102_7f80,
    u32::MAX,
    u32::MAX - 1,
];

/// Edge values of a type, as bits.
fn edges(t: T) -> Vec<u32> {
    match t {
        T::F => F_EDGES.iter().map(|x| x.to_bits()).collect(),
        T::I => I_EDGES.iter().map(|&x| x as u32).collect(),
        T::U | T::B => U_EDGES.to_vec(),
    }
}

/// Operand tuples: the full cross product for one or two operands, a deterministic spread
/// for three.
fn tuples(args: &[T]) -> Vec<Vec<u32>> {
    let e: Vec<Vec<u32>> = args.iter().map(|&t| edges(t)).collect();
    match e.len() {
        1 => e[0].iter().map(|&a| vec![a]).collect(),
        2 => {
            let mut out = Vec::new();
            for &a in &e[0] {
                for &b in &e[1] {
                    out.push(vec![a, b]);
                }
            }
            out
        }
        _ => {
            let n = e.iter().map(|v| v.len()).max().unwrap_or(1) * 6;
            (0..n)
                .map(|k| {
                    e.iter()
                        .enumerate()
                        .map(|(j, v)| v[(k * (2 * j + 1) + k / v.len() * (j + 3)) % v.len()])
                        .collect()
                })
                .collect()
        }
    }
}

fn ty(t: T) -> &'static str {
    match t {
        T::F => "f32",
        T::I => "i32",
        T::U | T::B => "u32",
    }
}

fn program(row: &Row) -> String {
    let names = ["a", "b", "c"];
    let mut params = Vec::new();
    let mut lets = String::new();
    for (k, &t) in row.args.iter().enumerate() {
        params.push(format!("@location({k}) @interpolate(flat) r{k}: u32"));
        lets.push_str(&format!("let {} = bitcast<{}>(r{k});\n", names[k], ty(t)));
    }
    let ret = match row.ret {
        T::F | T::I => format!("bitcast<u32>({})", row.expr),
        T::U => format!("u32({})", row.expr),
        T::B => format!("select(0u, 1u, {})", row.expr),
    };
    format!(
        "@fragment fn main({}) -> @location(0) u32 {{\n{lets}return {ret};\n}}",
        params.join(", ")
    )
}

fn matches(row: &Row, got: u32, want: u32) -> bool {
    if row.ret != T::F {
        return got == want;
    }
    let (g, w) = (f(got), f(want));
    // WGSL does not distinguish the sign of zero in min/max/clamp results.
    if g == 0.0 && w == 0.0 {
        return true;
    }
    if w.is_nan() {
        return g.is_nan();
    }
    match row.tol {
        Tol::Exact => got == want,
        Tol::Approx => {
            if !w.is_finite() || !g.is_finite() {
                return got == want;
            }
            let err = (g as f64 - w as f64).abs();
            err <= (w.abs() as f64 * 2f64.powi(-20)).max(2f64.powi(-20))
        }
    }
}

/// Runs one row over all its operand tuples; returns the number of cases checked.
fn check(row: &Row) -> usize {
    let src = program(row);
    let p = compile(&src);
    let cases = tuples(row.args);
    let mut failures = Vec::new();
    for chunk in cases.chunks(16) {
        let r = run_mask(&p, FULL_MASK, &[], &|input, _, lane| {
            chunk[lane % chunk.len()][input]
        });
        for (lane, args) in chunk.iter().enumerate() {
            let got = r.u(0, 0, lane);
            let want = (row.want)(args);
            if !matches(row, got, want) {
                failures.push(format!(
                    "{}: args {:x?} ({:?}) got {got:#x} ({}) want {want:#x} ({})",
                    row.expr,
                    args,
                    args.iter().map(|&x| f(x)).collect::<Vec<_>>(),
                    f(got),
                    f(want)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    cases.len()
}

// ---- Expected values, written out from the WGSL spec rules ----------------------------

/// WGSL f32 → i32: truncate toward zero; out of range, the nearest i32 that f32 can also
/// represent (2^31 − 128 at the top, −2^31 at the bottom); NaN → 0 in rastra.
fn f2i(x: f32) -> i32 {
    if x.is_nan() {
        0
    } else if x >= 2147483520.0 {
        2_147_483_520
    } else if x <= -2147483648.0 {
        i32::MIN
    } else {
        x.trunc() as i64 as i32
    }
}

/// WGSL f32 → u32: truncate toward zero; out of range, 0 or 2^32 − 256; NaN → 0 in rastra.
fn f2u(x: f32) -> u32 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= 4294967040.0 {
        4_294_967_040
    } else {
        x.trunc() as u64 as u32
    }
}

/// WGSL min/max: if one operand is NaN the other is returned.
fn fmin(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a <= b {
        a
    } else {
        b
    }
}
fn fmax(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a >= b {
        a
    } else {
        b
    }
}

/// WGSL `extractBits` (signed when `signed`): o = min(offset, 32), c = min(count, 32 - o).
fn extract(e: u32, offset: u32, count: u32, signed: bool) -> u32 {
    let o = offset.min(32);
    let c = count.min(32 - o);
    if c == 0 {
        return 0;
    }
    let mut v = 0u32;
    for k in 0..c {
        v |= ((e >> (o + k)) & 1) << k;
    }
    if signed && (v >> (c - 1)) & 1 == 1 {
        for k in c..32 {
            v |= 1 << k;
        }
    }
    v
}

fn insert(e: u32, newbits: u32, offset: u32, count: u32) -> u32 {
    let o = offset.min(32);
    let c = count.min(32 - o);
    let mut v = e;
    for k in 0..c {
        let bit = (newbits >> k) & 1;
        v = (v & !(1 << (o + k))) | (bit << (o + k));
    }
    v
}

fn first_leading_bit_signed(x: i32) -> u32 {
    // The most significant bit that differs from the sign bit; -1 for 0 and -1.
    let sign = (x >> 31) & 1;
    for k in (0..32).rev() {
        if (x >> k) & 1 != sign {
            return k as u32;
        }
    }
    u32::MAX
}

fn quantize(x: f32) -> f32 {
    f16::from_f32(x).to_f32()
}

/// WGSL pack4x8snorm component: ⌊0.5 + 127 × min(1, max(-1, e))⌋ as 8 bits (min/max with
/// WGSL's NaN rule, so NaN packs as the low end).
fn snorm8(x: f32) -> u32 {
    ((0.5 + 127.0 * fmin(fmax(x, -1.0), 1.0)).floor() as i32 as u32) & 0xff
}
fn unorm8(x: f32) -> u32 {
    ((0.5 + 255.0 * fmin(fmax(x, 0.0), 1.0)).floor() as u32) & 0xff
}
fn snorm16(x: f32) -> u32 {
    ((0.5 + 32767.0 * fmin(fmax(x, -1.0), 1.0)).floor() as i32 as u32) & 0xffff
}
fn unorm16(x: f32) -> u32 {
    ((0.5 + 65535.0 * fmin(fmax(x, 0.0), 1.0)).floor() as u32) & 0xffff
}

fn byte(x: u32, k: u32) -> u32 {
    (x >> (8 * k)) & 0xff
}
fn sbyte(x: u32, k: u32) -> i32 {
    byte(x, k) as u8 as i8 as i32
}

fn finite_or_zero(x: u32) -> f32 {
    f(x)
}

fn rows() -> Vec<Row> {
    vec![
        // f32 arithmetic
        row!("a + b", [F, F] -> F, Exact, |v| fb(f(v[0]) + f(v[1]))),
        row!("a - b", [F, F] -> F, Exact, |v| fb(f(v[0]) - f(v[1]))),
        row!("a * b", [F, F] -> F, Exact, |v| fb(f(v[0]) * f(v[1]))),
        row!("a / b", [F, F] -> F, Approx, |v| fb(f(v[0]) / f(v[1]))),
        row!("-a", [F] -> F, Exact, |v| v[0] ^ 0x8000_0000),
        row!("a == b", [F, F] -> B, Exact, |v| b(f(v[0]) == f(v[1]))),
        row!("a != b", [F, F] -> B, Exact, |v| b(f(v[0]) != f(v[1]))),
        row!("a < b", [F, F] -> B, Exact, |v| b(f(v[0]) < f(v[1]))),
        row!("a <= b", [F, F] -> B, Exact, |v| b(f(v[0]) <= f(v[1]))),
        row!("a > b", [F, F] -> B, Exact, |v| b(f(v[0]) > f(v[1]))),
        row!("a >= b", [F, F] -> B, Exact, |v| b(f(v[0]) >= f(v[1]))),
        row!("min(a, b)", [F, F] -> F, Exact, |v| {
            // Signed zeros compare equal: either is allowed.
            if f(v[0]) == 0.0 && f(v[1]) == 0.0 { fb(f(v[0]).min(f(v[1]))) } else { fb(fmin(f(v[0]), f(v[1]))) }
        }),
        row!("max(a, b)", [F, F] -> F, Exact, |v| {
            if f(v[0]) == 0.0 && f(v[1]) == 0.0 { fb(f(v[0]).max(f(v[1]))) } else { fb(fmax(f(v[0]), f(v[1]))) }
        }),
        row!("step(a, b)", [F, F] -> F, Exact, |v| fb(if f(v[1]) >= f(v[0]) { 1.0 } else { 0.0 })),
        // f32 rounding and sign
        row!("abs(a)", [F] -> F, Exact, |v| v[0] & 0x7fff_ffff),
        row!("floor(a)", [F] -> F, Exact, |v| fb(f(v[0]).floor())),
        row!("ceil(a)", [F] -> F, Exact, |v| fb(f(v[0]).ceil())),
        row!("trunc(a)", [F] -> F, Exact, |v| fb(f(v[0]).trunc())),
        row!("round(a)", [F] -> F, Exact, |v| {
            // Round half to even, written out.
            let x = f(v[0]);
            let fl = x.floor();
            let d = x - fl;
            let r = if !x.is_finite() { x } else if d > 0.5 || (d == 0.5 && fl % 2.0 != 0.0) { fl + 1.0 } else { fl };
            fb(if r == 0.0 { r.copysign(x) } else { r })
        }),
        row!("fract(a)", [F] -> F, Exact, |v| fb(f(v[0]) - f(v[0]).floor())),
        row!("sign(a)", [F] -> F, Exact, |v| {
            let x = f(v[0]);
            fb(if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else { 0.0 })
        }),
        row!("saturate(a)", [F] -> F, Exact, |v| fb(fmin(fmax(f(v[0]), 0.0), 1.0))),
        row!("clamp(a, -1.0, 2.0)", [F] -> F, Exact, |v| fb(fmin(fmax(f(v[0]), -1.0), 2.0))),
        row!("modf(a).fract", [F] -> F, Exact, |v| fb(f(v[0]) - f(v[0]).trunc())),
        row!("modf(a).whole", [F] -> F, Exact, |v| fb(f(v[0]).trunc())),
        row!("frexp(a).fract", [F] -> F, Exact, |v| {
            let x = f(v[0]);
            if x == 0.0 || !x.is_finite() { return fb(x); }
            let mut m = x as f64;
            while m.abs() >= 1.0 { m /= 2.0; }
            while m.abs() < 0.5 { m *= 2.0; }
            fb(m as f32)
        }),
        row!("frexp(a).exp", [F] -> I, Exact, |v| {
            let x = f(v[0]);
            if x == 0.0 || !x.is_finite() { return 0; }
            let mut m = x.abs() as f64;
            let mut e = 0i32;
            while m >= 1.0 { m /= 2.0; e += 1; }
            while m < 0.5 { m *= 2.0; e -= 1; }
            e as u32
        }),
        row!("ldexp(a, 3)", [F] -> F, Exact, |v| fb((f(v[0]) as f64 * 8.0) as f32)),
        row!("ldexp(a, -130)", [F] -> F, Exact, |v| fb((f(v[0]) as f64 * 2f64.powi(-130)) as f32)),
        row!("quantizeToF16(a)", [F] -> F, Exact, |v| fb(quantize(f(v[0])))),
        // f32 transcendental
        row!("sqrt(a)", [F] -> F, Approx, |v| fb(f(v[0]).sqrt())),
        row!("inverseSqrt(a)", [F] -> F, Approx, |v| fb((1.0 / (f(v[0]) as f64).sqrt()) as f32)),
        row!("exp(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).exp() as f32)),
        row!("exp2(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).exp2() as f32)),
        row!("log(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).ln() as f32)),
        row!("log2(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).log2() as f32)),
        row!("sin(clamp(a, -100.0, 100.0))", [F] -> F, Approx, |v| fb((fmin(fmax(f(v[0]), -100.0), 100.0) as f64).sin() as f32)),
        row!("cos(clamp(a, -100.0, 100.0))", [F] -> F, Approx, |v| fb((fmin(fmax(f(v[0]), -100.0), 100.0) as f64).cos() as f32)),
        row!("tan(clamp(a, -1.5, 1.5))", [F] -> F, Approx, |v| fb((fmin(fmax(f(v[0]), -1.5), 1.5) as f64).tan() as f32)),
        row!("asin(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).asin() as f32)),
        row!("acos(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).acos() as f32)),
        row!("atan(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).atan() as f32)),
        row!("atan2(a, b)", [F, F] -> F, Approx, |v| fb((f(v[0]) as f64).atan2(f(v[1]) as f64) as f32)),
        row!("sinh(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).sinh() as f32)),
        row!("cosh(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).cosh() as f32)),
        row!("tanh(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).tanh() as f32)),
        row!("asinh(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).asinh() as f32)),
        row!("acosh(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).acosh() as f32)),
        row!("atanh(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64).atanh() as f32)),
        row!("degrees(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64 * 180.0 / std::f64::consts::PI) as f32)),
        row!("radians(a)", [F] -> F, Approx, |v| fb((f(v[0]) as f64 * std::f64::consts::PI / 180.0) as f32)),
        row!("pow(abs(a), clamp(b, -4.0, 4.0))", [F, F] -> F, Approx, |v| {
            fb(((f(v[0]).abs()) as f64).powf(fmin(fmax(f(v[1]), -4.0), 4.0) as f64) as f32)
        }),
        // f32 three-operand
        row!("fma(a, b, c)", [F, F, F] -> F, Exact, |v| fb(f(v[0]).mul_add(f(v[1]), f(v[2])))),
        row!("clamp(a, min(b, c), max(b, c))", [F, F, F] -> F, Exact, |v| {
            let (lo, hi) = (fmin(f(v[1]), f(v[2])), fmax(f(v[1]), f(v[2])));
            if f(v[0]) == 0.0 && lo == 0.0 || f(v[0]) == 0.0 && hi == 0.0 { return fb(f(v[0]).max(lo).min(hi)); }
            fb(fmin(fmax(f(v[0]), lo), hi))
        }),
        row!("mix(a, b, 0.25)", [F, F] -> F, Approx, |v| fb(f(v[0]) * 0.75 + f(v[1]) * 0.25)),
        row!("select(a, b, c > 0.0)", [F, F, F] -> F, Exact, |v| if f(v[2]) > 0.0 { v[1] } else { v[0] }),
        row!("smoothstep(0.0, 4.0, a)", [F] -> F, Approx, |v| {
            // clamp = min(max(·, 0), 1) with WGSL's NaN rule (the other operand): NaN → 0.
            let t = fmin(fmax(f(v[0]) / 4.0, 0.0), 1.0) as f64;
            fb((t * t * (3.0 - 2.0 * t)) as f32)
        }),
        // float ↔ int conversions
        row!("i32(a)", [F] -> I, Exact, |v| f2i(f(v[0])) as u32),
        row!("u32(a)", [F] -> U, Exact, |v| f2u(f(v[0]))),
        row!("bool(a)", [F] -> B, Exact, |v| b(f(v[0]) != 0.0)),
        row!("f32(a)", [I] -> F, Exact, |v| fb(i(v[0]) as f64 as f32)),
        row!("f32(a)", [U] -> F, Exact, |v| fb(v[0] as f64 as f32)),
        row!("bitcast<f32>(a)", [U] -> F, Exact, |v| v[0]),
        // i32
        row!("a + b", [I, I] -> I, Exact, |v| i(v[0]).wrapping_add(i(v[1])) as u32),
        row!("a - b", [I, I] -> I, Exact, |v| i(v[0]).wrapping_sub(i(v[1])) as u32),
        row!("a * b", [I, I] -> I, Exact, |v| (i(v[0]) as i64 * i(v[1]) as i64) as u32),
        row!("a / b", [I, I] -> I, Exact, |v| {
            let (x, y) = (i(v[0]), i(v[1]));
            if y == 0 || (x == i32::MIN && y == -1) { x as u32 } else { (x / y) as u32 }
        }),
        row!("a % b", [I, I] -> I, Exact, |v| {
            let (x, y) = (i(v[0]), i(v[1]));
            if y == 0 || (x == i32::MIN && y == -1) { 0 } else { (x % y) as u32 }
        }),
        row!("-a", [I] -> I, Exact, |v| (-(i(v[0]) as i64)) as u32),
        row!("abs(a)", [I] -> I, Exact, |v| (i(v[0]) as i64).abs() as u32),
        row!("sign(a)", [I] -> I, Exact, |v| i(v[0]).signum() as u32),
        row!("min(a, b)", [I, I] -> I, Exact, |v| if i(v[0]) < i(v[1]) { v[0] } else { v[1] }),
        row!("max(a, b)", [I, I] -> I, Exact, |v| if i(v[0]) > i(v[1]) { v[0] } else { v[1] }),
        row!("clamp(a, -7, 100)", [I] -> I, Exact, |v| i(v[0]).max(-7).min(100) as u32),
        row!("a << bitcast<u32>(b)", [I, I] -> I, Exact, |v| ((v[0] as u64) << (v[1] % 32)) as u32),
        row!("a >> bitcast<u32>(b)", [I, I] -> I, Exact, |v| (i(v[0]) as i64 >> (v[1] % 32)) as u32),
        row!("a & b", [I, I] -> I, Exact, |v| v[0] & v[1]),
        row!("a | b", [I, I] -> I, Exact, |v| v[0] | v[1]),
        row!("a ^ b", [I, I] -> I, Exact, |v| v[0] ^ v[1]),
        row!("~a", [I] -> I, Exact, |v| !v[0]),
        row!("a < b", [I, I] -> B, Exact, |v| b(i(v[0]) < i(v[1]))),
        row!("a <= b", [I, I] -> B, Exact, |v| b(i(v[0]) <= i(v[1]))),
        row!("a > b", [I, I] -> B, Exact, |v| b(i(v[0]) > i(v[1]))),
        row!("a >= b", [I, I] -> B, Exact, |v| b(i(v[0]) >= i(v[1]))),
        row!("a == b", [I, I] -> B, Exact, |v| b(v[0] == v[1])),
        row!("countOneBits(a)", [I] -> I, Exact, |v| (0..32).map(|k| (v[0] >> k) & 1).sum()),
        row!("countLeadingZeros(a)", [I] -> I, Exact, |v| (0..32).rev().take_while(|&k| (v[0] >> k) & 1 == 0).count() as u32),
        row!("countTrailingZeros(a)", [I] -> I, Exact, |v| (0..32).take_while(|&k| (v[0] >> k) & 1 == 0).count() as u32),
        row!("firstLeadingBit(a)", [I] -> I, Exact, |v| first_leading_bit_signed(i(v[0]))),
        row!("firstTrailingBit(a)", [I] -> I, Exact, |v| (0..32).find(|&k| (v[0] >> k) & 1 == 1).unwrap_or(u32::MAX)),
        row!("reverseBits(a)", [I] -> I, Exact, |v| (0..32).map(|k| ((v[0] >> k) & 1) << (31 - k)).sum()),
        row!("extractBits(a, bitcast<u32>(b), bitcast<u32>(c))", [I, I, I] -> I, Exact, |v| extract(v[0], v[1], v[2], true)),
        row!("extractBits(a, 28u, 4u)", [I] -> I, Exact, |v| extract(v[0], 28, 4, true)),
        row!("extractBits(a, 0u, 32u)", [I] -> I, Exact, |v| v[0]),
        row!("insertBits(a, b, 4u, 8u)", [I, I] -> I, Exact, |v| insert(v[0], v[1], 4, 8)),
        row!("bitcast<u32>(a)", [I] -> U, Exact, |v| v[0]),
        row!("u32(a)", [I] -> U, Exact, |v| v[0]),
        row!("dot(vec2<i32>(a, b), vec2<i32>(b, 3))", [I, I] -> I, Exact, |v| {
            (i(v[0]) as i64 * i(v[1]) as i64 + i(v[1]) as i64 * 3) as u32
        }),
        // u32
        row!("a + b", [U, U] -> U, Exact, |v| ((v[0] as u64 + v[1] as u64) % (1 << 32)) as u32),
        row!("a - b", [U, U] -> U, Exact, |v| v[0].wrapping_sub(v[1])),
        row!("a * b", [U, U] -> U, Exact, |v| (v[0] as u64 * v[1] as u64) as u32),
        row!("a / b", [U, U] -> U, Exact, |v| v[0].checked_div(v[1]).unwrap_or(v[0])),
        row!("a % b", [U, U] -> U, Exact, |v| if v[1] == 0 { 0 } else { v[0] % v[1] }),
        row!("a << b", [U, U] -> U, Exact, |v| ((v[0] as u64) << (v[1] % 32)) as u32),
        row!("a >> b", [U, U] -> U, Exact, |v| v[0] >> (v[1] % 32)),
        row!("min(a, b)", [U, U] -> U, Exact, |v| if v[0] < v[1] { v[0] } else { v[1] }),
        row!("max(a, b)", [U, U] -> U, Exact, |v| if v[0] > v[1] { v[0] } else { v[1] }),
        row!("a < b", [U, U] -> B, Exact, |v| b(v[0] < v[1])),
        row!("a >= b", [U, U] -> B, Exact, |v| b(v[0] >= v[1])),
        row!("countLeadingZeros(a)", [U] -> U, Exact, |v| (0..32).rev().take_while(|&k| (v[0] >> k) & 1 == 0).count() as u32),
        row!("firstLeadingBit(a)", [U] -> U, Exact, |v| (0..32).rev().find(|&k| (v[0] >> k) & 1 == 1).unwrap_or(u32::MAX)),
        row!("extractBits(a, b, c)", [U, U, U] -> U, Exact, |v| extract(v[0], v[1], v[2], false)),
        row!("insertBits(a, b, c, 40u - c)", [U, U, U] -> U, Exact, |v| insert(v[0], v[1], v[2], 40u32.wrapping_sub(v[2]))),
        row!("insertBits(a, b, 16u, 16u)", [U, U] -> U, Exact, |v| insert(v[0], v[1], 16, 16)),
        row!("bitcast<i32>(a)", [U] -> I, Exact, |v| v[0]),
        row!("i32(a)", [U] -> I, Exact, |v| v[0]),
        row!("bool(a)", [U] -> B, Exact, |v| b(v[0] != 0)),
        row!("select(a, b, a > b)", [U, U] -> U, Exact, |v| if v[0] > v[1] { v[1] } else { v[0] }),
        // packed integer dot products and byte packing
        row!("dot4U8Packed(a, b)", [U, U] -> U, Exact, |v| (0..4).map(|k| byte(v[0], k) * byte(v[1], k)).sum()),
        row!("dot4I8Packed(a, b)", [U, U] -> I, Exact, |v| (0..4).map(|k| sbyte(v[0], k) * sbyte(v[1], k)).sum::<i32>() as u32),
        row!("pack4xU8(vec4<u32>(a, b, a >> 8u, 300u))", [U, U] -> U, Exact, |v| {
            (v[0] & 0xff) | (v[1] & 0xff) << 8 | ((v[0] >> 8) & 0xff) << 16 | (300 & 0xff) << 24
        }),
        row!("pack4xU8Clamp(vec4<u32>(a, b, 255u, 256u))", [U, U] -> U, Exact, |v| {
            v[0].min(255) | v[1].min(255) << 8 | 255 << 16 | 255 << 24
        }),
        row!("pack4xI8(vec4<i32>(a, b, -1, 128))", [I, I] -> U, Exact, |v| {
            (v[0] & 0xff) | (v[1] & 0xff) << 8 | 0xff << 16 | 0x80 << 24
        }),
        row!("pack4xI8Clamp(vec4<i32>(a, b, -129, 128))", [I, I] -> U, Exact, |v| {
            let c = |x: i32| (x.clamp(-128, 127) as u32) & 0xff;
            c(i(v[0])) | c(i(v[1])) << 8 | c(-129) << 16 | c(128) << 24
        }),
        row!("unpack4xU8(a).y + unpack4xU8(a).w * 1000u", [U] -> U, Exact, |v| byte(v[0], 1) + byte(v[0], 3) * 1000),
        row!("unpack4xI8(a).x * 1000 + unpack4xI8(a).w", [U] -> I, Exact, |v| (sbyte(v[0], 0) * 1000 + sbyte(v[0], 3)) as u32),
        // float packing
        row!("pack4x8snorm(vec4<f32>(a, b, -a, 0.5))", [F, F] -> U, Exact, |v| {
            let (x, y) = (finite_or_zero(v[0]), finite_or_zero(v[1]));
            snorm8(x) | snorm8(y) << 8 | snorm8(-x) << 16 | snorm8(0.5) << 24
        }),
        row!("pack4x8unorm(vec4<f32>(a, b, 1.0 / 510.0, 0.5))", [F, F] -> U, Exact, |v| {
            let (x, y) = (finite_or_zero(v[0]), finite_or_zero(v[1]));
            unorm8(x) | unorm8(y) << 8 | unorm8(1.0 / 510.0) << 16 | unorm8(0.5) << 24
        }),
        row!("pack2x16snorm(vec2<f32>(a, b))", [F, F] -> U, Exact, |v| {
            snorm16(finite_or_zero(v[0])) | snorm16(finite_or_zero(v[1])) << 16
        }),
        row!("pack2x16unorm(vec2<f32>(a, b))", [F, F] -> U, Exact, |v| {
            unorm16(finite_or_zero(v[0])) | unorm16(finite_or_zero(v[1])) << 16
        }),
        row!("pack2x16float(vec2<f32>(a, b))", [F, F] -> U, Exact, |v| {
            // NaN payloads are free: canonicalise both sides' NaNs before comparing.
            let h = |x: u32| if f(x).is_nan() { 0x7e00 } else { f16::from_f32(f(x)).to_bits() as u32 };
            h(v[0]) | h(v[1]) << 16
        }),
        row!("unpack2x16float(a).x", [U] -> F, Exact, |v| fb(f16::from_bits(v[0] as u16).to_f32())),
        row!("unpack2x16float(a).y", [U] -> F, Exact, |v| fb(f16::from_bits((v[0] >> 16) as u16).to_f32())),
        row!("unpack4x8snorm(a).x + unpack4x8snorm(a).w * 4.0", [U] -> F, Exact, |v| {
            let s = |k| ((sbyte(v[0], k) as f32) / 127.0).max(-1.0);
            fb(s(0) + s(3) * 4.0)
        }),
        row!("unpack4x8unorm(a).z", [U] -> F, Exact, |v| fb(byte(v[0], 2) as f32 / 255.0)),
        row!("unpack2x16snorm(a).y", [U] -> F, Exact, |v| fb(((v[0] >> 16) as u16 as i16 as f32 / 32767.0).max(-1.0))),
        row!("unpack2x16unorm(a).x", [U] -> F, Exact, |v| fb((v[0] & 0xffff) as f32 / 65535.0)),
        // vectors and geometry
        row!("length(vec3<f32>(a, b, 2.0))", [F, F] -> F, Approx, |v| {
            // Accuracy is inherited from sqrt(dot(e, e)) in f32, overflow included.
            fb((f(v[0]) * f(v[0]) + f(v[1]) * f(v[1]) + 4.0).sqrt())
        }),
        row!("dot(vec2<f32>(a, b), vec2<f32>(3.0, -1.0))", [F, F] -> F, Exact, |v| fb(f(v[0]) * 3.0 - f(v[1]))),
        row!("cross(vec3<f32>(a, 1.0, 2.0), vec3<f32>(b, -1.0, 0.5)).y", [F, F] -> F, Exact, |v| fb(2.0 * f(v[1]) - f(v[0]) * 0.5)),
        row!("distance(a, b)", [F, F] -> F, Approx, |v| fb((f(v[0]) - f(v[1])).abs())),
        row!("all(vec2<bool>(a > 0, b > 0))", [I, I] -> B, Exact, |v| b(i(v[0]) > 0 && i(v[1]) > 0)),
        row!("any(vec2<bool>(a > 0, b > 0))", [I, I] -> B, Exact, |v| b(i(v[0]) > 0 || i(v[1]) > 0)),
        row!("!(a > 0) || (b == 0)", [I, I] -> B, Exact, |v| b(i(v[0]) <= 0 || v[1] == 0)),
        row!("vec4<u32>(a, b, a, b)[b % 7u]", [U, U] -> U, Exact, |v| [v[0], v[1], v[0], v[1]][((v[1] % 7) as usize).min(3)]),
    ]
}

#[test]
fn conformance_corpus() {
    let mut total = 0;
    let mut failures = Vec::new();
    let table = rows();
    for row in &table {
        match std::panic::catch_unwind(|| check(row)) {
            Ok(n) => total += n,
            Err(e) => failures.push(
                e.downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| format!("{}: panicked", row.expr)),
            ),
        }
    }
    println!(
        "conformance corpus: {} operations, {total} cases",
        table.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(total >= 500, "{total} cases");
}
