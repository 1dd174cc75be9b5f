//! Execution tests: WGSL programs run on a 32-lane warp, checked against the reference
//! interpreter (inside `common::run`) and against expected values.
#![allow(
    clippy::needless_range_loop,
    clippy::manual_range_contains,
    clippy::manual_clamp
)]

mod common;

use common::*;
use rastra_shader::{ExecError, FULL_MASK, WARP_LANES};

fn fbits(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn integer_arithmetic_edges() {
    let p = compile(
        "@fragment fn main(@location(0) @interpolate(flat) a: i32, @location(1) @interpolate(flat) b: i32)
            -> @location(0) vec4<i32> {
            return vec4<i32>(a / b, a % b, a << u32(b), a >> u32(b));
        }",
    );
    let a = |l: usize| I_EDGE[l % 16];
    let b = |l: usize| I_EDGE[(l * 7 + 3) % 16];
    let r = run(&p, &|i, _, l| {
        if i == 0 { a(l) as u32 } else { b(l) as u32 }
    });
    for l in 0..WARP_LANES {
        let (x, y) = (a(l), b(l));
        let div = if y == 0 { x } else { x.wrapping_div(y) };
        let rem = if y == 0 { 0 } else { x.wrapping_rem(y) };
        assert_eq!(r.i(0, 0, l), div, "div lane {l}: {x} / {y}");
        assert_eq!(r.i(0, 1, l), rem, "rem lane {l}");
        assert_eq!(r.i(0, 2, l), x << (y as u32 & 31), "shl lane {l}");
        assert_eq!(r.i(0, 3, l), x >> (y as u32 & 31), "shr lane {l}");
    }
    // The interesting edges are really exercised: shifts by 32 and 33 are masked.
    assert_eq!((a(3), b(3)), (i32::MIN, 32));
    assert_eq!(r.i(0, 0, 3), i32::MIN / 32);
    assert_eq!(r.i(0, 2, 3), i32::MIN);
    assert_eq!((a(10), b(10)), (7, 33));
    assert_eq!(r.i(0, 2, 10), 14);
    assert_eq!(r.i(0, 3, 10), 3);
}

#[test]
fn min_div_minus_one_and_div_zero() {
    let p = compile(
        "@fragment fn main(@location(0) @interpolate(flat) a: i32, @location(1) @interpolate(flat) b: i32)
            -> @location(0) vec4<i32> {
            return vec4<i32>(a / b, a % b, -a, abs(a));
        }",
    );
    let pairs = [
        (i32::MIN, -1),
        (5, 0),
        (-5, 0),
        (7, 2),
        (-7, 2),
        (i32::MIN, 0),
    ];
    let r = run(&p, &|i, _, l| {
        let (a, b) = pairs[l % pairs.len()];
        if i == 0 { a as u32 } else { b as u32 }
    });
    assert_eq!(r.i(0, 0, 0), i32::MIN);
    assert_eq!(r.i(0, 1, 0), 0);
    assert_eq!(r.i(0, 2, 0), i32::MIN);
    assert_eq!(r.i(0, 3, 0), i32::MIN);
    assert_eq!(r.i(0, 0, 1), 5);
    assert_eq!(r.i(0, 1, 1), 0);
    assert_eq!(r.i(0, 0, 2), -5);
    assert_eq!(r.i(0, 0, 3), 3);
    assert_eq!(r.i(0, 1, 3), 1);
    assert_eq!(r.i(0, 0, 4), -3);
    assert_eq!(r.i(0, 1, 4), -1);
}

#[test]
fn unsigned_and_bit_builtins() {
    let p = compile(
        "@fragment fn main(@location(0) @interpolate(flat) a: u32, @location(1) @interpolate(flat) b: i32)
            -> @location(0) vec4<u32> {
            let x = countOneBits(a) + (reverseBits(a) & 0xffu) * 100u;
            let y = bitcast<u32>(firstLeadingBit(b)) ^ (firstTrailingBit(a) << 8u) ^ (firstLeadingBit(a) << 16u);
            let z = extractBits(a, 4u, 8u) | (bitcast<u32>(extractBits(b, 28u, 4u)) & 0xf000u);
            let w = insertBits(a, 0xabu, 8u, 8u) + countLeadingZeros(a) + countTrailingZeros(a) + (a >> (33u + a * 0u)) + a / (a * 0u) + a % (a * 0u);
            return vec4<u32>(x, y, z, w);
        }",
    );
    let r = run(&p, &|_, _, l| I_EDGE[l % 16] as u32);
    for l in 0..WARP_LANES {
        let a = I_EDGE[l % 16] as u32;
        let b = I_EDGE[l % 16];
        let x = a
            .count_ones()
            .wrapping_add((a.reverse_bits() & 0xff).wrapping_mul(100));
        let flb_s = {
            let v = if b < 0 { !b } else { b } as u32;
            if v == 0 {
                u32::MAX
            } else {
                31 - v.leading_zeros()
            }
        };
        let ftb = if a == 0 { u32::MAX } else { a.trailing_zeros() };
        let flb_u = if a == 0 {
            u32::MAX
        } else {
            31 - a.leading_zeros()
        };
        let y = flb_s ^ (ftb << 8) ^ (flb_u << 16);
        let top = ((b >> 28) as u32) & 0xf000;
        let z = ((a >> 4) & 0xff) | top;
        let ins = (a & !0xff00) | (0xab << 8);
        let w = ins
            .wrapping_add(a.leading_zeros())
            .wrapping_add(a.trailing_zeros())
            .wrapping_add(a >> 1)
            .wrapping_add(a);
        assert_eq!(r.u(0, 0, l), x, "x lane {l}");
        assert_eq!(r.u(0, 1, l), y, "y lane {l}");
        assert_eq!(r.u(0, 2, l), z, "z lane {l}");
        assert_eq!(r.u(0, 3, l), w, "w lane {l}");
    }
}

#[test]
fn float_math_builtins() {
    let p = compile(
        "struct O { @location(0) a: vec4<f32>, @location(1) b: vec4<f32>, @location(2) c: vec4<f32>, @location(3) d: vec4<f32> }
        @fragment fn main(@location(0) x: f32) -> O {
            var o: O;
            o.a = vec4<f32>(floor(x), ceil(x), round(x), trunc(x));
            o.b = vec4<f32>(fract(x), sqrt(x), abs(x), sign(x));
            o.c = vec4<f32>(clamp(x, -1.0, 1.0), saturate(x), min(x, 2.0), max(x, 2.0));
            o.d = vec4<f32>(exp2(x), log2(x), x * 2.0 - 1.0, step(0.5, x));
            return o;
        }",
    );
    let r = run(&p, &|_, _, l| fbits(F_EDGE[l % 16]));
    let same =
        |got: f32, want: f32| got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
    for l in 0..WARP_LANES {
        let x = F_EDGE[l % 16];
        let sign = if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            0.0
        };
        let want = [
            [x.floor(), x.ceil(), x.round_ties_even(), x.trunc()],
            [x - x.floor(), x.sqrt(), x.abs(), sign],
            [
                x.max(-1.0).min(1.0),
                x.clamp(0.0, 1.0).max(0.0),
                x.min(2.0),
                x.max(2.0),
            ],
            [
                x.exp2(),
                x.log2(),
                x * 2.0 - 1.0,
                if x >= 0.5 { 1.0 } else { 0.0 },
            ],
        ];
        for (o, row) in want.iter().enumerate() {
            for (c, &w) in row.iter().enumerate() {
                assert!(
                    same(r.f(o, c, l), w),
                    "out {o}.{c} lane {l} x={x}: got {} want {w}",
                    r.f(o, c, l)
                );
            }
        }
    }
    // round() is half-to-even.
    assert_eq!(r.f(0, 2, 5), 2.0);
    assert_eq!(r.f(0, 2, 6), -2.0);
}

#[test]
fn transcendental_and_geometric() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32, @location(1) y: f32) -> @location(0) vec4<f32> {
            let v = vec3<f32>(x, y, 1.0);
            let n = normalize(v);
            let c = cross(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0));
            let r = reflect(vec3<f32>(1.0, -1.0, 0.0), vec3<f32>(0.0, 1.0, 0.0));
            return vec4<f32>(length(n), dot(v, v) - (x * x + y * y + 1.0), c.z + r.y * 10.0,
                atan2(y, x) + sin(x) * cos(y) + pow(abs(x), 0.5) + mix(x, y, 0.25) + smoothstep(0.0, 1.0, 0.5 + x * 0.0) + fma(x, y, 1.0) + distance(v, vec3<f32>(0.0)) - length(v));
        }",
    );
    let vals = [0.3f32, -1.5, 2.0, 0.0, 4.0, -0.25, 1.0, 7.0];
    let r = run(&p, &|i, _, l| fbits(vals[(l + 3 * i) % 8]));
    for l in 0..WARP_LANES {
        let (x, y) = (vals[l % 8], vals[(l + 3) % 8]);
        assert!((r.f(0, 0, l) - 1.0).abs() < 1e-6);
        assert!(r.f(0, 1, l).abs() < 1e-4);
        assert_eq!(r.f(0, 2, l), 1.0 + 10.0);
        let want = y.atan2(x)
            + x.sin() * y.cos()
            + x.abs().powf(0.5)
            + (x * 0.75 + y * 0.25)
            + 0.5
            + x.mul_add(y, 1.0);
        assert!(
            (r.f(0, 3, l) - want).abs() < 1e-4,
            "lane {l}: {} vs {want}",
            r.f(0, 3, l)
        );
    }
}

/// Ulps between two finite floats of one sign (their bit patterns' distance).
fn ulps(a: f32, b: f32) -> u32 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
}

#[test]
fn literal_integer_powers_multiply_out_and_normalize_scales_by_a_reciprocal() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32, @location(1) y: f32) -> @location(0) vec4<f32> {
            let n = normalize(vec3<f32>(x, y, 1.0));
            return vec4<f32>(pow(x, 32.0), pow(x, 5.0), pow(abs(x), 2.5), n.x);
        }",
    );
    // Both literal integer exponents became products; 2.5 stays a `pow`, and normalize
    // divides once (the reciprocal) instead of once per component.
    let code = format!("{:?}", p.code);
    assert_eq!(code.matches("FPow").count(), 1, "{code}");
    assert_eq!(code.matches("FDiv").count(), 1, "{code}");
    let vals = [
        0.3f32, -1.5, 2.0, 0.0, -0.0, 0.97, 1.0, 7.0, -3.25, 1e-3, 40.0, 0.5,
    ];
    let r = run(&p, &|i, _, l| fbits(vals[(l + 5 * i) % vals.len()]));
    for l in 0..WARP_LANES {
        let (x, y) = (vals[l % vals.len()], vals[(l + 5) % vals.len()]);
        for (c, n) in [(0, 32), (1, 5)] {
            let got = r.f(0, c, l);
            let exact = (x as f64).powi(n) as f32;
            // Within (n − 1)/2 ulp of the power, sign included; 0⁵ keeps its sign.
            assert_eq!(
                got.is_sign_negative(),
                exact.is_sign_negative(),
                "x^{n}, x = {x}"
            );
            assert!(
                ulps(got, exact) <= (n as u32 - 1) / 2,
                "{x}^{n}: {got} vs {exact}"
            );
        }
        // The length's square root and the reciprocal: within 2 ulp of the exact value.
        let len = ((x as f64).powi(2) + (y as f64).powi(2) + 1.0).sqrt();
        let want = (x as f64 / len) as f32;
        let got = r.f(0, 3, l);
        assert!(
            ulps(got, want) <= 2,
            "normalize x = {x}, y = {y}: {got} vs {want}"
        );
    }
}

#[test]
fn conversions_saturate_and_bitcast() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32, @location(1) @interpolate(flat) i: i32) -> @location(0) vec4<u32> {
            return vec4<u32>(bitcast<u32>(i32(x)), u32(x), bitcast<u32>(f32(i)), bitcast<u32>(x) ^ u32(bool(x)) ^ (u32(x > 0.0) << 1u));
        }",
    );
    let r = run(&p, &|inp, _, l| {
        if inp == 0 {
            fbits(F_EDGE[l % 16])
        } else {
            I_EDGE[l % 16] as u32
        }
    });
    // WGSL clamps out-of-range values to the nearest integer f32 can represent.
    let to_i32 = |x: f32| x.clamp(-2_147_483_648.0, 2_147_483_520.0) as i32;
    let to_u32 = |x: f32| x.clamp(0.0, 4_294_967_040.0) as u32;
    for l in 0..WARP_LANES {
        let x = F_EDGE[l % 16];
        assert_eq!(r.u(0, 0, l), to_i32(x) as u32, "i32(x) lane {l}");
        assert_eq!(r.u(0, 1, l), to_u32(x), "u32(x) lane {l}");
        assert_eq!(r.u(0, 2, l), (I_EDGE[l % 16] as f32).to_bits());
        let b = (x != 0.0) as u32;
        assert_eq!(r.u(0, 3, l), x.to_bits() ^ b ^ (((x > 0.0) as u32) << 1));
    }
    assert_eq!(r.u(0, 0, 12), 0, "NaN -> 0");
    assert_eq!(r.u(0, 0, 10), 2_147_483_520, "inf clamps to 2^31 − 128");
}

#[test]
fn divergent_control_flow_in_functions() {
    let p = compile(
        "fn classify(n: i32) -> i32 {
            if n < 0 { return -1; }
            var acc = 0;
            for (var i = 0; i < 10; i++) {
                if i == n { break; }
                if (i & 1) == 1 { continue; }
                acc += i;
            }
            switch n {
                case 3, 4: { acc += 100; }
                case 5: { return acc * 1000; }
                default: { acc += 10; }
            }
            return acc;
        }
        fn count_down(n: i32) -> i32 {
            var k = n;
            var steps = 0;
            loop {
                if k <= 0 { break; }
                k -= 2;
                steps += 1;
                continuing { break if steps >= 4; }
            }
            return steps;
        }
        @fragment fn main(@location(0) @interpolate(flat) n: i32) -> @location(0) vec2<i32> {
            return vec2<i32>(classify(n), count_down(n));
        }",
    );
    let r = run(&p, &|_, _, l| ((l as i32) - 3) as u32);
    let classify = |n: i32| -> i32 {
        if n < 0 {
            return -1;
        }
        let mut acc = 0;
        for i in 0..10 {
            if i == n {
                break;
            }
            if i & 1 == 1 {
                continue;
            }
            acc += i;
        }
        match n {
            3 | 4 => acc + 100,
            5 => acc * 1000,
            _ => acc + 10,
        }
    };
    for l in 0..WARP_LANES {
        let n = l as i32 - 3;
        assert_eq!(r.i(0, 0, l), classify(n), "classify({n})");
        let steps = if n <= 0 { 0 } else { ((n + 1) / 2).min(4) };
        assert_eq!(r.i(0, 1, l), steps, "count_down({n})");
    }
}

#[test]
fn switch_fallthrough_default_in_middle_and_nested_break() {
    let p = compile(
        "@fragment fn main(@location(0) @interpolate(flat) n: u32) -> @location(0) u32 {
            var r = 0u;
            loop {
                switch n {
                    case 1u: { r = 10u; }
                    default: { r = 20u; break; }
                    case 2u, 3u: { r = 30u; if n == 3u { r = 33u; break; } r += 1u; }
                }
                r += 1000u;
                break;
            }
            return r;
        }",
    );
    let r = run(&p, &|_, _, l| l as u32 % 5);
    for l in 0..WARP_LANES {
        let want = match l as u32 % 5 {
            1 => 1010,
            2 => 1031,
            3 => 1033,
            _ => 1020,
        };
        assert_eq!(r.u(0, 0, l), want, "lane {l}");
    }
}

#[test]
fn discard_marks_lanes_and_keeps_helpers_running() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {
            if x < 0.0 { discard; }
            return vec4<f32>(x, 1.0, 2.0, 3.0);
        }",
    );
    assert!(p.uses_discard);
    let r = run(&p, &|_, _, l| fbits(F_EDGE[l % 16]));
    let mut want = 0;
    for l in 0..WARP_LANES {
        if F_EDGE[l % 16] < 0.0 {
            want |= 1 << l;
        }
    }
    assert_eq!(r.info.discarded, want);
    assert_ne!(want, 0);
    assert_eq!(r.f(0, 1, 0), 1.0);
}

#[test]
fn partial_masks_work() {
    let p = compile(
        "@fragment fn main(@location(0) @interpolate(flat) n: u32) -> @location(0) u32 {
            var s = 0u;
            for (var i = 0u; i < n; i++) { s += i; }
            return s;
        }",
    );
    let active = 0b1010_0110_0011_0101;
    let r = run_mask(&p, active, &[], &|_, _, l| l as u32);
    // Inactive lanes' outputs are unspecified (compiled code may write them).
    for l in (0..WARP_LANES).filter(|l| (active >> l) & 1 == 1) {
        assert_eq!(r.u(0, 0, l), (0..l as u32).sum::<u32>());
    }
}

#[test]
fn derivatives_coarse_and_fine() {
    let p = compile(
        "struct O { @location(0) coarse: vec4<f32>, @location(1) fine: vec4<f32>, @location(2) w: vec4<f32> }
        @fragment fn main(@builtin(position) pos: vec4<f32>, @location(0) v: f32) -> O {
            var o: O;
            o.coarse = vec4<f32>(dpdx(v), dpdy(v), dpdxCoarse(v), dpdyCoarse(v));
            o.fine = vec4<f32>(dpdxFine(v), dpdyFine(v), fwidthFine(v), fwidth(v));
            o.w = vec4<f32>(fwidthCoarse(v), dpdx(pos.x), dpdy(pos.y), 0.0);
            return o;
        }",
    );
    assert!(p.uses_derivatives);
    let quad = [1.0f32, 4.0, 10.0, 20.0];
    let r = run(&p, &|i, c, l| {
        if i == 0 {
            // position: x = 2q + (l & 1), y = l >> 1 & 1
            let q = l / 4;
            let v = match c {
                0 => (2 * q + (l & 1)) as f32 + 0.5,
                1 => ((l >> 1) & 1) as f32 + 0.5,
                _ => 1.0,
            };
            fbits(v)
        } else {
            fbits(quad[l % 4] + 100.0 * (l / 4) as f32)
        }
    });
    for l in 0..WARP_LANES {
        let i = l % 4;
        assert_eq!(r.f(0, 0, l), 3.0);
        assert_eq!(r.f(0, 1, l), 9.0);
        assert_eq!(r.f(0, 2, l), 3.0);
        assert_eq!(r.f(0, 3, l), 9.0);
        let fx = if i < 2 { 3.0 } else { 10.0 };
        let fy = if i & 1 == 0 { 9.0 } else { 16.0 };
        assert_eq!(r.f(1, 0, l), fx, "dpdxFine lane {l}");
        assert_eq!(r.f(1, 1, l), fy, "dpdyFine lane {l}");
        assert_eq!(r.f(1, 2, l), fx + fy);
        assert_eq!(r.f(1, 3, l), 12.0);
        assert_eq!(r.f(2, 0, l), 12.0);
        assert_eq!(r.f(2, 1, l), 1.0);
        assert_eq!(r.f(2, 2, l), 1.0);
    }
}

#[test]
fn budget_exhaustion_on_infinite_loop() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32) -> @location(0) f32 {
            var y = x;
            loop { y += 1.0; }
            return y;
        }",
    );
    assert_eq!(run_budget(&p, 10_000), Err(ExecError::BudgetExhausted));
    let mut w = rastra_shader::Warp::new(&p);
    let mut b = 10_000;
    assert_eq!(
        rastra_shader::reference::execute_warp(
            &p,
            &mut w,
            FULL_MASK,
            &rastra_shader::Resources::EMPTY,
            &mut b
        ),
        Err(rastra_shader::reference::RefError::Exec(
            ExecError::BudgetExhausted
        ))
    );
    // A finite program fits its budget and reports its instruction count.
    let q = compile("@fragment fn main() -> @location(0) f32 { return 1.0; }");
    let info = run_budget(&q, 100).unwrap();
    assert!(info.instructions > 0 && info.instructions < 100);
    assert_eq!(run_budget(&q, 1), Err(ExecError::BudgetExhausted));
}

#[test]
fn local_arrays_structs_private_const_override() {
    let p = compile(
        "const K: array<f32, 4> = array<f32, 4>(1.0, 2.0, 4.0, 8.0);
        override SCALE: f32 = 3.0;
        override OFFSET: f32 = SCALE * 2.0;
        var<private> counter: u32 = 5u;
        struct Pair { a: vec2<f32>, b: array<f32, 3> }
        fn make(x: f32) -> Pair {
            var p: Pair;
            p.a = vec2<f32>(x, -x);
            for (var i = 0; i < 3; i++) { p.b[i] = x * f32(i); }
            return p;
        }
        fn bump(c: ptr<private, u32>) { *c += 1u; }
        @fragment fn main(@location(0) @interpolate(flat) i: i32, @location(1) x: f32) -> @location(0) vec4<f32> {
            var arr = K;
            arr[i] = 100.0;           // dynamic store, clamped
            let p = make(x);
            var q = p;
            q.b[i] += 1.0;
            bump(&counter);
            bump(&counter);
            return vec4<f32>(arr[i] + K[i], p.b[2] + q.b[i], f32(counter), SCALE + OFFSET);
        }",
    );
    let r = run(&p, &|inp, _, l| {
        if inp == 0 {
            (l as i32 - 2) as u32
        } else {
            fbits(l as f32)
        }
    });
    let k = [1.0f32, 2.0, 4.0, 8.0];
    for l in 0..WARP_LANES {
        let i = l as i32 - 2;
        // Out-of-range indices are clamped into the array (u32 compare: negatives clamp high).
        let ci4 = if i < 0 || i > 3 { 3 } else { i as usize };
        let ci3 = if i < 0 || i > 2 { 2 } else { i as usize };
        let x = l as f32;
        assert_eq!(r.f(0, 0, l), 100.0 + k[ci4], "lane {l}");
        assert_eq!(r.f(0, 1, l), 2.0 * x + x * ci3 as f32 + 1.0, "lane {l}");
        assert_eq!(r.f(0, 2, l), 7.0);
        assert_eq!(r.f(0, 3, l), 9.0);
    }
}

#[test]
fn matrices() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {
            let m = mat3x3<f32>(vec3<f32>(1.0, 2.0, 3.0), vec3<f32>(4.0, 5.0, 6.0), vec3<f32>(7.0, 8.0, x));
            let v = vec3<f32>(1.0, 10.0, 100.0);
            let a = m * v;              // column combination
            let b = v * m;              // dot with columns
            let n = transpose(m) * m;
            let m2 = mat2x3<f32>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0));
            let m23 = m * m2;           // 3x3 * 2x3 (2 columns of 3) -> 2 columns
            let d = determinant(m);
            let s = (2.0 * m)[1][1] + (m + m)[2][2] - (m - m)[0][0];
            return vec4<f32>(a.x + a.y + a.z, b.x * 1000.0 + b.y, n[0][0] + m23[1][2], d + s);
        }",
    );
    let r = run(&p, &|_, _, l| fbits(l as f32));
    for l in 0..WARP_LANES {
        let x = l as f32;
        let a = [
            1.0 + 40.0 + 700.0,
            2.0 + 50.0 + 800.0,
            3.0 + 60.0 + 100.0 * x,
        ];
        let b = [1.0 + 20.0 + 300.0, 4.0 + 50.0 + 600.0];
        let n00 = 1.0 + 4.0 + 9.0;
        let m23_12 = 6.0; // second column of m23 = m * (0,1,0) = column 1 of m: (4,5,6)
        let det = 1.0 * (5.0 * x - 8.0 * 6.0) - 4.0 * (2.0 * x - 8.0 * 3.0)
            + 7.0 * (2.0 * 6.0 - 5.0 * 3.0);
        let s = 10.0 + 2.0 * x;
        assert_eq!(r.f(0, 0, l), a[0] + a[1] + a[2], "lane {l}");
        assert_eq!(r.f(0, 1, l), b[0] * 1000.0 + b[1]);
        assert_eq!(r.f(0, 2, l), n00 + m23_12);
        assert!(
            (r.f(0, 3, l) - (det + s)).abs() < 1e-3,
            "lane {l}: {} vs {}",
            r.f(0, 3, l),
            det + s
        );
    }
}

#[test]
fn select_any_all_and_vector_compares() {
    let p = compile(
        "@fragment fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<u32> {
            let gt = v > vec4<f32>(0.0);
            let s = select(vec4<f32>(-1.0), v, gt);
            return vec4<u32>(u32(any(gt)), u32(all(gt)), bitcast<u32>(s.x), u32(!gt.y));
        }",
    );
    let r = run(&p, &|_, c, l| fbits(F_EDGE[(l + c * 5) % 16]));
    for l in 0..WARP_LANES {
        let v: Vec<f32> = (0..4).map(|c| F_EDGE[(l + c * 5) % 16]).collect();
        assert_eq!(r.u(0, 0, l), v.iter().any(|&x| x > 0.0) as u32);
        assert_eq!(r.u(0, 1, l), v.iter().all(|&x| x > 0.0) as u32);
        let sx = if v[0] > 0.0 { v[0] } else { -1.0 };
        assert_eq!(r.u(0, 2, l), sx.to_bits());
        assert_eq!(r.u(0, 3, l), (v[1] <= 0.0 || v[1].is_nan()) as u32);
    }
}

#[test]
fn pack_unpack_and_misc_builtins() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<u32> {
            let p = pack4x8unorm(vec4<f32>(0.0, 1.0, 0.5, 2.0));
            let q = pack2x16float(vec2<f32>(1.0, -2.0));
            let u = unpack4x8snorm(0x817f00ffu);
            let fr = frexp(8.0 + x * 0.0);
            let mf = modf(2.75 + x * 0.0);
            return vec4<u32>(p, q, bitcast<u32>(u.x + u.y * 10.0 + u.w * 100.0 + u.z * 1000.0),
                bitcast<u32>(fr.fract + f32(fr.exp) + mf.fract * 10.0 + mf.whole * 100.0 + quantizeToF16(1.0001) + ldexp(1.0, 3)));
        }",
    );
    let r = run(&p, &|_, _, _| fbits(1.0));
    assert_eq!(r.u(0, 0, 0), 0xff80_ff00);
    assert_eq!(r.u(0, 1, 0), 0xc000_3c00);
    // bytes: ff -> -1/127, 00 -> 0, 7f -> 1, 81 -> -1
    let want = -1.0f32 / 127.0 - 100.0 + 1000.0; // x + 10y + 100w + 1000z
    assert!((f32::from_bits(r.u(0, 2, 0)) - want).abs() < 1e-3);
    let want = 0.5 + 4.0 + 7.5 + 200.0 + 1.0 + 8.0;
    assert_eq!(f32::from_bits(r.u(0, 3, 0)), want);
}

#[test]
fn vertex_stage_position_and_builtins() {
    let p = compile_stage(
        "struct VOut { @builtin(position) pos: vec4<f32>, @location(0) @interpolate(flat) id: u32, @location(1) uv: vec2<f32> }
        @vertex fn vs(@builtin(vertex_index) vi: u32, @location(0) p: vec2<f32>) -> VOut {
            var o: VOut;
            o.pos = vec4<f32>(p, 0.0, 1.0);
            o.id = vi * 2u;
            o.uv = p * 0.5 + vec2<f32>(0.5);
            return o;
        }",
        "vs",
        rastra_shader::Stage::Vertex,
    );
    let r = run(&p, &|i, c, l| {
        if i == 0 {
            l as u32
        } else {
            fbits((l * 2 + c) as f32)
        }
    });
    for l in 0..WARP_LANES {
        assert_eq!(r.f(0, 0, l), (l * 2) as f32);
        assert_eq!(r.f(0, 3, l), 1.0);
        assert_eq!(r.u(1, 0, l), 2 * l as u32);
        assert_eq!(r.f(2, 1, l), (l * 2 + 1) as f32 * 0.5 + 0.5);
    }
}

#[test]
fn return_from_loop_in_function_and_discard_in_function() {
    let p = compile(
        "fn find(n: u32, want: u32) -> i32 {
            var i = 0u;
            while i < n {
                if i * i == want { return i32(i); }
                i++;
            }
            return -1;
        }
        fn maybe_kill(x: u32) { if x % 3u == 0u { discard; } }
        @fragment fn main(@location(0) @interpolate(flat) t: u32) -> @location(0) vec2<i32> {
            maybe_kill(t);
            let a = find(10u, t);
            let b = find(t, 4u);
            return vec2<i32>(a, b);
        }",
    );
    let r = run(&p, &|_, _, l| l as u32);
    let mut killed = 0;
    for l in 0..WARP_LANES as u32 {
        let root = (0..10).find(|i| i * i == l).map_or(-1, |i| i as i32);
        assert_eq!(r.i(0, 0, l as usize), root, "find(10, {l})");
        assert_eq!(
            r.i(0, 1, l as usize),
            if l > 2 { 2 } else { -1 },
            "find({l}, 4)"
        );
        if l % 3 == 0 {
            killed |= 1 << l;
        }
    }
    assert_eq!(r.info.discarded, killed);
}

#[test]
fn program_and_module_are_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<rastra_shader::Program>();
    check::<rastra_shader::ShaderModule>();
    check::<rastra_shader::Warp>();
}

/// On hosts with a Cranelift back end, programs without barriers run as native code (so
/// `common::run_mask`'s comparison of compiled code with the interpreter runs at all).
#[test]
fn programs_are_compiled_on_this_host() {
    if !cfg!(target_arch = "x86_64") || std::env::var("RASTRA_JIT").is_ok_and(|v| v == "0") {
        return;
    }
    let p = compile(
        "@fragment fn main(@location(0) x: f32) -> @location(0) f32 {
            var s = 0.0;
            for (var i = 0; i < 4; i++) { if x > f32(i) { s += x; } else { break; } }
            return s;
        }",
    );
    assert!(p.is_compiled());
    assert!(!p.interpreted().is_compiled());
}

/// `sin` and `cos` over their reduction's range in warps with every lane in range (the
/// polynomial alone) and warps with one lane outside (the C library for that lane): `run`
/// checks compiled code (which calls the interpreter's lane loop for them), interpreter and
/// reference agree bit for bit.
#[test]
fn sin_cos_in_and_out_of_range() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32) -> @location(0) vec2<f32> {
            return vec2<f32>(sin(x), cos(x));
        }",
    );
    let mut s = 0x2545_f491u32;
    for batch in 0..400 {
        let xs: [f32; WARP_LANES] = std::array::from_fn(|l| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let x = (s >> 8) as f32 / (1u32 << 24) as f32 * 16384.0 - 8192.0;
            match (batch % 4, l) {
                (0, _) => x / 1000.0,
                (3, 5) => 1e6,
                _ => x,
            }
        });
        let r = run(&p, &|_, _, l| xs[l].to_bits());
        for (l, &x) in xs.iter().enumerate() {
            if x.abs() <= 8192.0 {
                assert!(
                    (r.f(0, 0, l) as f64 - (x as f64).sin()).abs() < 1e-6,
                    "sin {x}"
                );
                assert!(
                    (r.f(0, 1, l) as f64 - (x as f64).cos()).abs() < 1e-6,
                    "cos {x}"
                );
            }
        }
    }
}

/// Temporaries the compiled code keeps in machine registers: values read after a `sin` or a
/// call back into the interpreter (`min`), in the next loop iteration and as outputs must
/// still reach the register file (`common::run` also checks the compiled code against the
/// interpreter, bit for bit).
#[test]
fn values_read_across_segments_and_iterations() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {
            var acc = 0.0;
            var t = x;
            for (var i = 0; i < 5; i++) {
                let a = t * 1.5 + 0.25;
                let s = sin(a);
                let m = min(a, s);
                t = a * 0.5 + m;
                acc += t * s;
            }
            let k = x * 2.0;
            return vec4<f32>(acc, t, k, k + 1.0);
        }",
    );
    let xs: [f32; WARP_LANES] = std::array::from_fn(|l| l as f32 * 0.37 - 2.9);
    let r = run(&p, &|_, _, l| xs[l].to_bits());
    for (l, &x) in xs.iter().enumerate() {
        let (mut acc, mut t) = (0.0f64, x as f64);
        for _ in 0..5 {
            let a = t * 1.5 + 0.25;
            let s = a.sin();
            t = a * 0.5 + a.min(s);
            acc += t * s;
        }
        assert!((r.f(0, 0, l) as f64 - acc).abs() < 1e-3, "acc lane {l}");
        assert!((r.f(0, 1, l) as f64 - t).abs() < 1e-3, "t lane {l}");
        assert_eq!(r.f(0, 2, l), x * 2.0);
        assert_eq!(r.f(0, 3, l), x * 2.0 + 1.0);
    }
}

/// Registers with one constant value the compiled code uses without reading the register
/// file, next to registers a branch may overwrite (not constants), read inside a loop.
#[test]
fn constants_and_values_a_branch_changes() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {
            var k = 2.0;
            if x > 0.0 {
                k = 3.0;
            }
            var acc = 0.0;
            for (var i = 0; i < 3; i++) {
                acc = acc * 0.5 + k * x;
            }
            return vec4<f32>(acc, k, 0.25 * x, 1.0);
        }",
    );
    let xs: [f32; WARP_LANES] = std::array::from_fn(|l| l as f32 * 0.5 - 3.75);
    let r = run(&p, &|_, _, l| xs[l].to_bits());
    for (l, &x) in xs.iter().enumerate() {
        let k = if x > 0.0 { 3.0f32 } else { 2.0 };
        let mut acc = 0.0f32;
        for _ in 0..3 {
            acc = acc * 0.5 + k * x;
        }
        assert!((r.f(0, 0, l) - acc).abs() < 1e-5, "acc lane {l}");
        assert_eq!(r.f(0, 1, l), k, "k lane {l}");
        assert_eq!(r.f(0, 2, l), 0.25 * x);
        assert_eq!(r.f(0, 3, l), 1.0);
    }
}

/// Unsigned conversion and division by constants, compiled as shifts, masks and split
/// conversions, against Rust's own rules (u32 → f32 rounds to nearest even; WGSL's x / 0 is
/// x and x % 0 is 0).
#[test]
fn unsigned_conversion_and_constant_divisors() {
    let p = compile(
        "@fragment fn main(@location(0) @interpolate(flat) a: u32) -> @location(0) vec4<u32> {
            var zero = 0u;
            return vec4<u32>(bitcast<u32>(f32(a)), a / 8u + a % 1024u, a / 3u + a % 6u, a / zero + a % zero);
        }",
    );
    let edges: [u32; 16] = [
        0,
        1,
        7,
        1 << 24,
        (1 << 24) + 1,
        (1 << 24) + 3,
        (1 << 25) + 6,
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0081,
        0xffff_ff7f,
        0xffff_ff80,
        0xffff_ffff,
        123_456_789,
        0x0100_0003,
        1023,
    ];
    let r = run(&p, &|_, _, l| edges[l % 16]);
    for (l, &a) in edges.iter().enumerate() {
        assert_eq!(r.u(0, 0, l), (a as f32).to_bits(), "f32({a})");
        assert_eq!(r.u(0, 1, l), a / 8 + a % 1024, "lane {l}");
        assert_eq!(r.u(0, 2, l), a / 3 + a % 6, "lane {l}");
        assert_eq!(r.u(0, 3, l), a, "lane {l}");
    }
}

/// Uniform values (kept once per warp by compiled code): a loop counter, a uniform branch
/// and switch, a uniform operand of an instruction the interpreter's code runs (`pow`), a
/// uniform output — and a count that only ever gets uniform values but is left at different
/// iterations by different lanes, so it must stay per lane. On full and partial warps
/// (`run_mask` compares compiled code, interpreter and reference on the active lanes).
#[test]
fn uniform_and_divergent_loop_values() {
    let p = compile(
        "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {
            var n = 0u;
            loop {
                n = n + 3u;
                if x < f32(n) { break; }
            }
            var s = 0u;
            for (var i = 0u; i < 5u; i++) { s = s + i * 2u; }
            var m = s;
            if s > 10u { m = m + 100u; }
            switch s {
                case 20u: { m = m * 2u; }
                default: { m = 0u; }
            }
            return vec4<f32>(f32(n), f32(m), pow(2.0, f32(s) * 0.25), f32(s));
        }",
    );
    for active in [FULL_MASK, 0b1010_0110_0001_1100, 1 << 15] {
        let xs: [f32; WARP_LANES] = std::array::from_fn(|l| l as f32 * 1.7 - 2.0);
        let r = common::run_mask(&p, active, &[], &|_, _, l| xs[l].to_bits());
        for (l, &x) in xs.iter().enumerate() {
            if (active >> l) & 1 == 0 {
                continue;
            }
            let mut n = 3u32;
            while x >= n as f32 {
                n += 3;
            }
            assert_eq!(r.f(0, 0, l), n as f32, "n, lane {l}");
            assert_eq!(r.f(0, 1, l), 240.0, "m, lane {l}");
            assert_eq!(r.f(0, 2, l), 2f32.powf(5.0), "pow, lane {l}");
            assert_eq!(r.f(0, 3, l), 20.0, "s, lane {l}");
        }
    }
}
