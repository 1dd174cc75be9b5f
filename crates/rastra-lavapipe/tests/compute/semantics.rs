//! What WGSL says the integer, bit and float operations of case (g) return: the edge-value
//! inputs, the kernel that writes every result as bits, and for every result the set of
//! values WGSL admits ([`Allowed`]), computed on the CPU from the WGSL specification.
//!
//! Where WGSL fixes a result (integer arithmetic including division by zero and
//! `MIN / -1`, shifts taken modulo 32, the bit builtins, float → integer conversions of
//! finite values, `round` half-to-even, `floor`/`ceil`/`trunc`/`sign`/`abs`, the pack
//! formulas, `f16` quantisation of values inside the `f16` range) the set is one value and
//! both renderers must produce it; for float results that value is held to IEEE
//! round-to-nearest-even (WGSL allows rounding either way, but both renderers and every
//! host here round to nearest-even, so a difference is an arithmetic bug, not a rounding
//! choice). The set is widened only where WGSL itself leaves the result open, and
//! [`Allowed`] says why each time:
//!
//! * **NaN and infinity** (inputs or intermediate results): the Finite Math Assumption
//!   (WGSL § "Floating Point Evaluation") lets an implementation assume they never occur
//!   at runtime, so the result is an indeterminate value — `min`/`max`/`clamp` with NaN,
//!   `i32(NaN)`, `u32(±inf)`, `fract(inf)`, comparisons with NaN, `x + x` overflowing.
//! * **Subnormals**: operations in the accuracy table and the pack/unpack/bitcast
//!   intermediates may flush subnormal inputs and outputs to zero; `min`/`max` of two
//!   subnormals may return either.
//! * **Sign of zero**: implementations may ignore it (so `-0.0` and `0.0` are
//!   interchangeable in every float result).
//! * **`clamp(x, low, high)` with `low > high`**: `min(max(x, low), high)` or the median
//!   of the three.
//! * **Integer → f32 conversions of values f32 cannot represent**: either neighbour.
//! * **`f16` quantisation/packing of a value outside the `f16` finite range**: indeterminate.
//! * **Accuracy bounds**: `x / y` is 2.5 ULP (compared within 3), `unpack*norm` 3 ULP,
//!   `fma(a, b, c)` may or may not be fused, `frexp` of a subnormal is indeterminate.

use std::fmt;

/// The values WGSL admits for one result.
#[derive(Clone, Debug)]
pub enum Allowed {
    /// WGSL fixes every bit (integer results).
    Bits(u32),
    /// Any of these integer results (e.g. packing a value whose `f16` conversion may
    /// round either way or be flushed).
    BitsOneOf(Vec<u32>, &'static str),
    /// Any of these f32 values; zeros of either sign are interchangeable, a NaN stands
    /// for any NaN. One value: WGSL fixes the result (up to the sign of zero).
    Floats(Vec<f32>, &'static str),
    /// Within `ulps` of `value` (accuracy bounds).
    Ulps(f32, u32, &'static str),
    /// An indeterminate value.
    Any(&'static str),
    /// WGSL admits `wgsl`; lavapipe is known to produce one of `lavapipe` instead (a
    /// deviation of lavapipe's, or of naga's lowering to SPIR-V, not of rastra's, which
    /// is held to `wgsl`).
    LavapipeDeviates {
        wgsl: Box<Allowed>,
        lavapipe: Vec<u32>,
        why: &'static str,
    },
}

impl Allowed {
    /// A single admissible value: both renderers must agree exactly (up to the sign of
    /// zero and NaN payloads).
    pub fn is_fixed(&self) -> bool {
        match self {
            Allowed::Bits(_) => true,
            Allowed::BitsOneOf(v, _) => v.len() == 1,
            Allowed::Floats(v, _) => v.len() == 1,
            Allowed::Ulps(..) | Allowed::Any(_) => false,
            Allowed::LavapipeDeviates { wgsl, .. } => wgsl.is_fixed(),
        }
    }

    /// Why the result is not fixed ("" when it is).
    pub fn why(&self) -> &'static str {
        match self {
            Allowed::Bits(_) => "",
            Allowed::BitsOneOf(_, w) | Allowed::Floats(_, w) | Allowed::Ulps(_, _, w) => w,
            Allowed::Any(w) => w,
            Allowed::LavapipeDeviates { wgsl, .. } => wgsl.why(),
        }
    }

    /// Whether lavapipe's `bits` are admitted: by WGSL, or as lavapipe's known deviation
    /// (returned, so it can be reported).
    pub fn admits_lavapipe(&self, bits: u32) -> Result<Option<&'static str>, ()> {
        match self {
            Allowed::LavapipeDeviates {
                wgsl,
                lavapipe,
                why,
            } if !wgsl.admits(bits) => {
                if lavapipe.contains(&bits) {
                    Ok(Some(why))
                } else {
                    Err(())
                }
            }
            _ if self.admits(bits) => Ok(None),
            _ => Err(()),
        }
    }

    /// Whether WGSL admits `bits`.
    pub fn admits(&self, bits: u32) -> bool {
        match self {
            Allowed::Bits(b) => *b == bits,
            Allowed::BitsOneOf(v, _) => v.contains(&bits),
            Allowed::Floats(v, _) => v.iter().any(|&f| same_float(f, f32::from_bits(bits))),
            Allowed::Ulps(v, n, _) => {
                let x = f32::from_bits(bits);
                x.is_finite() && ulp_distance(*v, x) <= *n as u64
            }
            Allowed::Any(_) => true,
            Allowed::LavapipeDeviates { wgsl, .. } => wgsl.admits(bits),
        }
    }
}

impl fmt::Display for Allowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Allowed::Bits(b) => write!(f, "0x{b:08x}"),
            Allowed::BitsOneOf(v, w) => {
                let v: Vec<String> = v.iter().map(|b| format!("0x{b:08x}")).collect();
                write!(f, "one of [{}] ({w})", v.join(", "))
            }
            Allowed::Floats(v, w) => {
                let v: Vec<String> = v.iter().map(|&x| show_f32(x.to_bits())).collect();
                if w.is_empty() {
                    write!(f, "{}", v.join(", "))
                } else {
                    write!(f, "one of [{}] ({w})", v.join(", "))
                }
            }
            Allowed::Ulps(v, n, w) => write!(f, "{} ± {n} ULP ({w})", show_f32(v.to_bits())),
            Allowed::Any(w) => write!(f, "anything ({w})"),
            Allowed::LavapipeDeviates { wgsl, .. } => write!(f, "{wgsl}"),
        }
    }
}

/// `bits` as an f32 with its bit pattern.
pub fn show_f32(bits: u32) -> String {
    format!("{:e} (0x{bits:08x})", f32::from_bits(bits))
}

/// Equal as WGSL results: same bits, or both zeros, or both NaNs.
fn same_float(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a == 0.0 && b == 0.0) || (a.is_nan() && b.is_nan())
}

/// Distance in representable f32 values (zeros of both signs count as one point).
pub fn ulp_distance(a: f32, b: f32) -> u64 {
    fn ordered(x: f32) -> i64 {
        let b = x.to_bits() as i64;
        if x.is_sign_negative() {
            -(b & 0x7fff_ffff)
        } else {
            b
        }
    }
    ordered(a).abs_diff(ordered(b))
}

// ---------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------

/// Integer edge values (as bits), used pairwise (a, b) by `int_ops` and one by one by
/// `conversions`: small values and shift amounts around 32, the i32/u32 extremes, values
/// f32 cannot represent, and `f16`/8-bit patterns for the unpack builtins (infinity, NaN,
/// subnormal, -0, -128).
pub const INTS: [u32; 23] = [
    0,
    1,
    2,
    3,
    7,
    31,
    32,
    33,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_ffff,
    0xffff_fffe,
    0xffff_fff9,
    0x1234_5678,
    0xf0f0_0f0f,
    0x0100_0001,
    0x7fff_ffc0,
    0x7c00_3c00,
    0x8001_7e00,
    0x03ff_0001,
    0x7f80_0081,
    0xffff_ff80,
];

/// Float edge values for the unary operations: zeros, halves (rounding ties), subnormals,
/// the normal/subnormal boundary, the f32 extremes, infinities and NaNs (quiet, negative,
/// signalling), the i32/u32 conversion boundaries, f16 boundaries (largest finite, the
/// overflow threshold, smallest normal and subnormal, a tie below the smallest subnormal),
/// and pack rounding cases.
pub fn unary_floats() -> Vec<u32> {
    let mut v: Vec<u32> = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        3.5,
        0.499_999_97,
        -0.499_999_97,
        0.999_999_94,
        1e-10,
        -1e-10,
        100.5,
        -100.25,
        8_388_607.5,
        -8_388_607.5,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        2_147_483_520.0,
        2_147_483_648.0,
        -2_147_483_648.0,
        -2_147_483_904.0,
        4_294_967_040.0,
        4_294_967_296.0,
        3e9,
        -3e9,
        1e20,
        65504.0,
        65519.0,
        65520.0,
        -65504.0,
        6.103_515_6e-5,
        5.960_464_5e-8,
        2.980_232_2e-8,
        4.470_348_4e-8,
        1e-8,
        0.333_333_34,
        1.0 / 255.0,
        0.5 / 255.0,
        1.5 / 255.0,
        0.5 / 127.0,
        -0.5 / 127.0,
        2.0,
        0.75,
        -0.75,
    ]
    .iter()
    .map(|x| x.to_bits())
    .collect();
    v.extend([
        0x0000_0001, // smallest subnormal
        0x8000_0001,
        0x007f_ffff, // largest subnormal
        0x0040_0000,
        0x7fc0_0000, // quiet NaN
        0xffc0_0000, // negative quiet NaN
        0x7f80_0001, // signalling NaN
    ]);
    v
}

/// Float edge values for the binary operations (used pairwise).
pub fn pair_floats() -> Vec<u32> {
    let mut v: Vec<u32> = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        3.0,
        -2.5,
        1e-3,
        f32::MIN_POSITIVE,
        f32::MAX,
        -3e38,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ]
    .iter()
    .map(|x| x.to_bits())
    .collect();
    v.extend([0x0000_0001, 0x8040_0000, 0x7fc0_0000]);
    v
}

// ---------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------

/// Results per (a, b) pair of `int_ops`.
pub const INT_SLOTS: &[&str] = &[
    "i32 a / b",
    "i32 a % b",
    "u32 a / b",
    "u32 a % b",
    "u32 a << b",
    "i32 a << b",
    "u32 a >> b",
    "i32 a >> b",
    "i32 a * b",
    "i32 a + b",
    "i32 a - b",
    "u32 a * b",
    "min(i32 a, b)",
    "max(i32 a, b)",
    "min(u32 a, b)",
    "max(u32 a, b)",
    "clamp(i32 a, b, 7)",
    "clamp(u32 a, 3, b)",
    "extractBits(i32 a, o, c)",
    "extractBits(u32 a, o, c)",
    "insertBits(i32 a, b, o, c)",
    "insertBits(u32 a, b, o, c)",
    "abs(i32 a)",
    "-(i32 a)",
    "~a",
    "comparisons",
    "countLeadingZeros(u32 a)",
    "countTrailingZeros(u32 a)",
    "countOneBits(u32 a)",
    "reverseBits(u32 a)",
    "firstLeadingBit(i32 a)",
    "firstLeadingBit(u32 a)",
    "firstTrailingBit(u32 a)",
    "firstTrailingBit(i32 a)",
    "countLeadingZeros(i32 a)",
    "countOneBits(i32 a)",
    "reverseBits(i32 a)",
    "dot(vec2(i32 a, b), vec2(b, 3))",
    "countLeadingZeros(a ^ b)",
    "extractBits(i32 a, b & 31, 32 - (b & 31))",
];

/// Results per value of `float_unary`.
pub const UNARY_SLOTS: &[&str] = &[
    "i32(x)",
    "u32(x)",
    "round(x)",
    "floor(x)",
    "ceil(x)",
    "trunc(x)",
    "fract(x)",
    "sign(x)",
    "abs(x)",
    "-x",
    "quantizeToF16(x)",
    "pack2x16float(vec2(x, 1))",
    "pack4x8unorm(vec4(x, 0, 1, 0.5))",
    "pack4x8snorm(vec4(x, 0, -1, 0.5))",
    "pack2x16unorm(vec2(x, 0.25))",
    "pack2x16snorm(vec2(x, -0.25))",
    "saturate(x)",
    "x + x",
    "x * 0.5",
    "bitcast<u32>(x)",
    "comparisons",
    "step(0.5, x)",
    "frexp(x).exp",
    "frexp(x).fract",
];

/// Results per (a, b) pair of `float_pairs`.
pub const PAIR_SLOTS: &[&str] = &[
    "min(a, b)",
    "max(a, b)",
    "clamp(a, b, 2)",
    "clamp(0.25, a, b)",
    "a + b",
    "a - b",
    "a * b",
    "a / b",
    "comparisons",
    "step(a, b)",
    "fma(a, b, 0.5)",
];

/// Results per value of `conversions`.
pub const CONVERSION_SLOTS: &[&str] = &[
    "f32(i32 n)",
    "f32(u32 n)",
    "unpack4x8unorm(n).x",
    "unpack4x8unorm(n).y",
    "unpack4x8unorm(n).z",
    "unpack4x8unorm(n).w",
    "unpack4x8snorm(n).x",
    "unpack4x8snorm(n).y",
    "unpack4x8snorm(n).z",
    "unpack4x8snorm(n).w",
    "unpack2x16unorm(n).x",
    "unpack2x16unorm(n).y",
    "unpack2x16snorm(n).x",
    "unpack2x16snorm(n).y",
    "unpack2x16float(n).x",
    "unpack2x16float(n).y",
];

/// Bindings: 0 `ints`, 1 `int_out`, 2 `floats`, 3 `unary_out`, 4 `pairs`, 5 `pair_out`,
/// 6 `conversion_out`. Every input is read as u32 and bitcast, so the bits reach the
/// operation untouched; every result is written as bits.
pub const SHADER: &str = r#"
@group(0) @binding(0) var<storage, read> ints: array<u32>;
@group(0) @binding(1) var<storage, read_write> int_out: array<u32>;
@group(0) @binding(2) var<storage, read> floats: array<u32>;
@group(0) @binding(3) var<storage, read_write> unary_out: array<u32>;
@group(0) @binding(4) var<storage, read> pairs: array<u32>;
@group(0) @binding(5) var<storage, read_write> pair_out: array<u32>;
@group(0) @binding(6) var<storage, read_write> conversion_out: array<u32>;

fn bit(c: bool, k: u32) -> u32 {
    return select(0u, 1u, c) << k;
}

@compute @workgroup_size(64)
fn int_ops(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = arrayLength(&ints);
    let p = gid.x;
    if p >= n * n {
        return;
    }
    let ua = ints[p / n];
    let ub = ints[p % n];
    let ia = bitcast<i32>(ua);
    let ib = bitcast<i32>(ub);
    let o = (p * 7u) % 37u;
    let c = (p * 11u + 3u) % 37u;
    let s = p * 40u;
    int_out[s + 0u] = bitcast<u32>(ia / ib);
    int_out[s + 1u] = bitcast<u32>(ia % ib);
    int_out[s + 2u] = ua / ub;
    int_out[s + 3u] = ua % ub;
    int_out[s + 4u] = ua << ub;
    int_out[s + 5u] = bitcast<u32>(ia << ub);
    int_out[s + 6u] = ua >> ub;
    int_out[s + 7u] = bitcast<u32>(ia >> ub);
    int_out[s + 8u] = bitcast<u32>(ia * ib);
    int_out[s + 9u] = bitcast<u32>(ia + ib);
    int_out[s + 10u] = bitcast<u32>(ia - ib);
    int_out[s + 11u] = ua * ub;
    int_out[s + 12u] = bitcast<u32>(min(ia, ib));
    int_out[s + 13u] = bitcast<u32>(max(ia, ib));
    int_out[s + 14u] = min(ua, ub);
    int_out[s + 15u] = max(ua, ub);
    int_out[s + 16u] = bitcast<u32>(clamp(ia, ib, 7));
    int_out[s + 17u] = clamp(ua, 3u, ub);
    int_out[s + 18u] = bitcast<u32>(extractBits(ia, o, c));
    int_out[s + 19u] = extractBits(ua, o, c);
    int_out[s + 20u] = bitcast<u32>(insertBits(ia, ib, o, c));
    int_out[s + 21u] = insertBits(ua, ub, o, c);
    int_out[s + 22u] = bitcast<u32>(abs(ia));
    int_out[s + 23u] = bitcast<u32>(-ia);
    int_out[s + 24u] = ~ua;
    int_out[s + 25u] = bit(ia < ib, 0u) | bit(ua < ub, 1u) | bit(ia <= ib, 2u)
        | bit(ua >= ub, 3u) | bit(ia == ib, 4u) | bit(ua != ub, 5u) | bit(ia > ib, 6u);
    int_out[s + 26u] = countLeadingZeros(ua);
    int_out[s + 27u] = countTrailingZeros(ua);
    int_out[s + 28u] = countOneBits(ua);
    int_out[s + 29u] = reverseBits(ua);
    int_out[s + 30u] = bitcast<u32>(firstLeadingBit(ia));
    int_out[s + 31u] = firstLeadingBit(ua);
    int_out[s + 32u] = firstTrailingBit(ua);
    int_out[s + 33u] = bitcast<u32>(firstTrailingBit(ia));
    int_out[s + 34u] = bitcast<u32>(countLeadingZeros(ia));
    int_out[s + 35u] = bitcast<u32>(countOneBits(ia));
    int_out[s + 36u] = bitcast<u32>(reverseBits(ia));
    int_out[s + 37u] = bitcast<u32>(dot(vec2<i32>(ia, ib), vec2<i32>(ib, 3)));
    int_out[s + 38u] = countLeadingZeros(ua ^ ub);
    int_out[s + 39u] = bitcast<u32>(extractBits(ia, ub & 31u, 32u - (ub & 31u)));
}

@compute @workgroup_size(64)
fn float_unary(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= arrayLength(&floats) {
        return;
    }
    let x = bitcast<f32>(floats[i]);
    let s = i * 24u;
    unary_out[s + 0u] = bitcast<u32>(i32(x));
    unary_out[s + 1u] = u32(x);
    unary_out[s + 2u] = bitcast<u32>(round(x));
    unary_out[s + 3u] = bitcast<u32>(floor(x));
    unary_out[s + 4u] = bitcast<u32>(ceil(x));
    unary_out[s + 5u] = bitcast<u32>(trunc(x));
    unary_out[s + 6u] = bitcast<u32>(fract(x));
    unary_out[s + 7u] = bitcast<u32>(sign(x));
    unary_out[s + 8u] = bitcast<u32>(abs(x));
    unary_out[s + 9u] = bitcast<u32>(-x);
    unary_out[s + 10u] = bitcast<u32>(quantizeToF16(x));
    unary_out[s + 11u] = pack2x16float(vec2<f32>(x, 1.0));
    unary_out[s + 12u] = pack4x8unorm(vec4<f32>(x, 0.0, 1.0, 0.5));
    unary_out[s + 13u] = pack4x8snorm(vec4<f32>(x, 0.0, -1.0, 0.5));
    unary_out[s + 14u] = pack2x16unorm(vec2<f32>(x, 0.25));
    unary_out[s + 15u] = pack2x16snorm(vec2<f32>(x, -0.25));
    unary_out[s + 16u] = bitcast<u32>(saturate(x));
    unary_out[s + 17u] = bitcast<u32>(x + x);
    unary_out[s + 18u] = bitcast<u32>(x * 0.5);
    unary_out[s + 19u] = bitcast<u32>(x);
    unary_out[s + 20u] = bit(x != x, 0u) | bit(x < 0.0, 1u) | bit(x == 0.0, 2u) | bit(x > 1.0, 3u)
        | bit(x >= -1.0, 4u);
    unary_out[s + 21u] = bitcast<u32>(step(0.5, x));
    let fr = frexp(x);
    unary_out[s + 22u] = bitcast<u32>(fr.exp);
    unary_out[s + 23u] = bitcast<u32>(fr.fract);
}

@compute @workgroup_size(64)
fn float_pairs(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = arrayLength(&pairs);
    let p = gid.x;
    if p >= n * n {
        return;
    }
    let a = bitcast<f32>(pairs[p / n]);
    let b = bitcast<f32>(pairs[p % n]);
    let s = p * 11u;
    pair_out[s + 0u] = bitcast<u32>(min(a, b));
    pair_out[s + 1u] = bitcast<u32>(max(a, b));
    pair_out[s + 2u] = bitcast<u32>(clamp(a, b, 2.0));
    pair_out[s + 3u] = bitcast<u32>(clamp(0.25, a, b));
    pair_out[s + 4u] = bitcast<u32>(a + b);
    pair_out[s + 5u] = bitcast<u32>(a - b);
    pair_out[s + 6u] = bitcast<u32>(a * b);
    pair_out[s + 7u] = bitcast<u32>(a / b);
    pair_out[s + 8u] = bit(a < b, 0u) | bit(a <= b, 1u) | bit(a == b, 2u) | bit(a != b, 3u)
        | bit(a > b, 4u) | bit(a >= b, 5u);
    pair_out[s + 9u] = bitcast<u32>(step(a, b));
    pair_out[s + 10u] = bitcast<u32>(fma(a, b, 0.5));
}

@compute @workgroup_size(64)
fn conversions(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= arrayLength(&ints) {
        return;
    }
    let n = ints[i];
    let s = i * 16u;
    conversion_out[s + 0u] = bitcast<u32>(f32(bitcast<i32>(n)));
    conversion_out[s + 1u] = bitcast<u32>(f32(n));
    let u4 = unpack4x8unorm(n);
    let s4 = unpack4x8snorm(n);
    for (var k = 0u; k < 4u; k++) {
        conversion_out[s + 2u + k] = bitcast<u32>(u4[k]);
        conversion_out[s + 6u + k] = bitcast<u32>(s4[k]);
    }
    let u2 = unpack2x16unorm(n);
    let s2 = unpack2x16snorm(n);
    let h2 = unpack2x16float(n);
    for (var k = 0u; k < 2u; k++) {
        conversion_out[s + 10u + k] = bitcast<u32>(u2[k]);
        conversion_out[s + 12u + k] = bitcast<u32>(s2[k]);
        conversion_out[s + 14u + k] = bitcast<u32>(h2[k]);
    }
}
"#;

// ---------------------------------------------------------------------------------------
// The reference
// ---------------------------------------------------------------------------------------

const NONFINITE: &str = "NaN/infinity: Finite Math Assumption, indeterminate";

fn is_subnormal(x: f32) -> bool {
    x != 0.0 && !x.is_normal() && x.is_finite()
}

/// The inputs an implementation may see for `x`: `x` itself and, when subnormal, the
/// zeros it may be flushed to.
fn flushed(x: f32) -> Vec<f32> {
    if is_subnormal(x) {
        vec![x, 0.0, -0.0]
    } else {
        vec![x]
    }
}

/// `Floats` for a unary float operation: `f` of every admissible input, plus zero when a
/// result is subnormal (outputs may be flushed too).
fn float_results(xs: &[f32], f: impl Fn(f32) -> f32, why: &'static str) -> Allowed {
    let mut v: Vec<f32> = Vec::new();
    for &x in xs {
        for x in flushed(x) {
            let r = f(x);
            if !r.is_finite() {
                return Allowed::Any(NONFINITE);
            }
            push_unique(&mut v, r);
            if is_subnormal(r) {
                push_unique(&mut v, 0.0);
            }
        }
    }
    let why = if v.len() > 1 && why.is_empty() {
        "subnormal flushed to zero"
    } else {
        why
    };
    Allowed::Floats(v, why)
}

fn push_unique(v: &mut Vec<f32>, r: f32) {
    if !v.iter().any(|&f| same_float(f, r)) {
        v.push(r);
    }
}

fn push_unique_u32(v: &mut Vec<u32>, r: u32) {
    if !v.contains(&r) {
        v.push(r);
    }
}

/// WGSL's float → i32: truncate, then the closest i32 that f32 represents.
fn f32_to_i32(x: f32) -> i32 {
    let t = x.trunc();
    if t >= 2_147_483_648.0 {
        2_147_483_520
    } else if t < -2_147_483_648.0 {
        i32::MIN
    } else {
        t as i32
    }
}

/// WGSL's float → u32: truncate, then the closest u32 that f32 represents.
fn f32_to_u32(x: f32) -> u32 {
    let t = x.trunc();
    if t >= 4_294_967_296.0 {
        4_294_967_040
    } else if t <= 0.0 {
        0
    } else {
        t as u32
    }
}

/// f16 bits → f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let man = (h & 0x3ff) as f32;
    match exp {
        0 => sign * man * 2f32.powi(-24),
        31 if man == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        e => sign * (1.0 + man / 1024.0) * 2f32.powi(e as i32 - 15),
    }
}

/// The f16 values (as bits) a finite f32 inside the f16 range converts to: itself when
/// exact, else both neighbours ("WGSL does not specify whether the higher or lower
/// representable value is chosen"); zeros of both signs added when a candidate is an f16
/// subnormal or `x` an f32 subnormal (pack/quantize intermediates may be flushed).
/// None when `x` is outside the f16 finite range (indeterminate).
fn f16_candidates(x: f32) -> Option<Vec<u16>> {
    if !x.is_finite() || x.abs() > 65504.0 {
        return None;
    }
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = x.abs();
    // Largest positive f16 (finite, ordered by bits) not above |x|.
    let (mut lo, mut hi) = (0u16, 0x7bffu16);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if f16_to_f32(mid) <= a {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut out = vec![sign | lo];
    if f16_to_f32(lo) != a {
        out.push(sign | (lo + 1));
    }
    if out.iter().any(|&h| h & 0x7c00 == 0 && h & 0x3ff != 0) || is_subnormal(x) {
        out.extend([0, 0x8000]);
    }
    out.dedup();
    Some(out)
}

/// The f32 values a real number (held exactly in an f64) rounds to: itself, or both
/// neighbours.
fn f32_neighbours(v: f64) -> Vec<f32> {
    let r = v as f32;
    if r as f64 == v {
        vec![r]
    } else if (r as f64) < v {
        vec![r, r.next_up()]
    } else {
        vec![r.next_down(), r]
    }
}

/// `⌊0.5 + scale × clamp(x, lo, 1)⌋` (WGSL's pack formulas), with the product correctly
/// rounded either way; the candidates as `bits`-wide fields. With `glsl`, GLSL's
/// `round(clamp(x, lo, 1) × scale)` instead, ties to even (what naga's SPIR-V lowering,
/// `PackSnorm4x8` and friends, gives on lavapipe).
fn pack_norm(x: f32, lo: f32, scale: f64, bits: u32, glsl: bool) -> Option<Vec<u32>> {
    if !x.is_finite() {
        return None;
    }
    let mask = (1u32 << bits) - 1;
    let mut out = Vec::new();
    for x in flushed(x) {
        let c = x.clamp(lo, 1.0) as f64 * scale;
        for r in f32_neighbours(c) {
            let q = if glsl {
                (r as f64).round_ties_even()
            } else {
                (0.5 + r as f64).floor()
            };
            push_unique_u32(&mut out, (q as i64 as u32) & mask);
        }
    }
    Some(out)
}

/// Every admissible word for a pack result whose other fields are fixed: `fields` is
/// the candidate list of each field from the lowest.
fn combine(fields: &[Vec<u32>], bits: u32) -> Vec<u32> {
    let mut out = vec![0u32];
    for (i, f) in fields.iter().enumerate() {
        let mut next = Vec::new();
        for &w in &out {
            for &v in f {
                push_unique_u32(&mut next, w | (v << (bits * i as u32)));
            }
        }
        out = next;
    }
    out
}

fn bits_one_of(v: Vec<u32>, why: &'static str) -> Allowed {
    if v.len() == 1 {
        Allowed::Bits(v[0])
    } else {
        Allowed::BitsOneOf(v, why)
    }
}

/// WGSL's i32 division: `a` for a zero divisor and for `MIN / -1`.
fn idiv(a: i32, b: i32) -> i32 {
    if b == 0 { a } else { a.wrapping_div(b) }
}

/// WGSL's i32 remainder: 0 for a zero divisor and for `MIN % -1`.
fn irem(a: i32, b: i32) -> i32 {
    if b == 0 { 0 } else { a.wrapping_rem(b) }
}

fn first_leading_bit_i32(a: i32) -> i32 {
    if a == 0 || a == -1 {
        -1
    } else {
        let x = if a < 0 { !a } else { a };
        31 - x.leading_zeros() as i32
    }
}

fn first_leading_bit_u32(a: u32) -> u32 {
    if a == 0 {
        u32::MAX
    } else {
        31 - a.leading_zeros()
    }
}

fn first_trailing_bit(a: u32) -> u32 {
    if a == 0 { u32::MAX } else { a.trailing_zeros() }
}

/// (o, c) clamped as WGSL's extractBits/insertBits clamp them.
fn clamp_field(offset: u32, count: u32) -> (u32, u32) {
    let o = offset.min(32);
    (o, count.min(32 - o))
}

fn low_mask(c: u32) -> u32 {
    if c >= 32 { u32::MAX } else { (1u32 << c) - 1 }
}

fn extract_bits_u32(e: u32, offset: u32, count: u32) -> u32 {
    let (o, c) = clamp_field(offset, count);
    if c == 0 {
        return 0;
    }
    (e.checked_shr(o).unwrap_or(0)) & low_mask(c)
}

fn extract_bits_i32(e: i32, offset: u32, count: u32) -> i32 {
    let (o, c) = clamp_field(offset, count);
    if c == 0 {
        return 0;
    }
    let v = extract_bits_u32(e as u32, o, c);
    ((v << (32 - c)) as i32) >> (32 - c)
}

fn insert_bits(e: u32, new: u32, offset: u32, count: u32) -> u32 {
    let (o, c) = clamp_field(offset, count);
    if c == 0 {
        return e;
    }
    let mask = low_mask(c) << o;
    (e & !mask) | ((new << o) & mask)
}

fn bit(c: bool, k: u32) -> u32 {
    (c as u32) << k
}

/// What WGSL admits for every result of `int_ops`, in output order (pair-major).
pub fn int_reference(ints: &[u32]) -> Vec<Allowed> {
    let n = ints.len() as u32;
    let mut out = Vec::new();
    for p in 0..n * n {
        let (ua, ub) = (ints[(p / n) as usize], ints[(p % n) as usize]);
        let (ia, ib) = (ua as i32, ub as i32);
        let o = (p * 7) % 37;
        let c = (p * 11 + 3) % 37;
        let sh = ub % 32;
        let r: [u32; 40] = [
            idiv(ia, ib) as u32,
            irem(ia, ib) as u32,
            ua.checked_div(ub).unwrap_or(ua),
            ua.checked_rem(ub).unwrap_or(0),
            ua << sh,
            (ia << sh) as u32,
            ua >> sh,
            (ia >> sh) as u32,
            ia.wrapping_mul(ib) as u32,
            ia.wrapping_add(ib) as u32,
            ia.wrapping_sub(ib) as u32,
            ua.wrapping_mul(ub),
            ia.min(ib) as u32,
            ia.max(ib) as u32,
            ua.min(ub),
            ua.max(ub),
            ia.max(ib).min(7) as u32,
            ua.max(3).min(ub),
            extract_bits_i32(ia, o, c) as u32,
            extract_bits_u32(ua, o, c),
            insert_bits(ua, ub, o, c),
            insert_bits(ua, ub, o, c),
            ia.wrapping_abs() as u32,
            ia.wrapping_neg() as u32,
            !ua,
            bit(ia < ib, 0)
                | bit(ua < ub, 1)
                | bit(ia <= ib, 2)
                | bit(ua >= ub, 3)
                | bit(ia == ib, 4)
                | bit(ua != ub, 5)
                | bit(ia > ib, 6),
            ua.leading_zeros(),
            ua.trailing_zeros(),
            ua.count_ones(),
            ua.reverse_bits(),
            first_leading_bit_i32(ia) as u32,
            first_leading_bit_u32(ua),
            first_trailing_bit(ua),
            first_trailing_bit(ua),
            ua.leading_zeros(),
            ua.count_ones(),
            ua.reverse_bits(),
            ia.wrapping_mul(ib).wrapping_add(ib.wrapping_mul(3)) as u32,
            (ua ^ ub).leading_zeros(),
            extract_bits_i32(ia, ub & 31, 32 - (ub & 31)) as u32,
        ];
        out.extend(r.iter().map(|&b| Allowed::Bits(b)));
    }
    out
}

fn sign(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// `frexp`'s fraction and exponent for zero and normal `x` (None otherwise:
/// indeterminate).
fn frexp(x: f32) -> Option<(f32, i32)> {
    if x == 0.0 {
        return Some((x, 0));
    }
    if !x.is_normal() {
        return None;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 126;
    let fract = f32::from_bits((bits & 0x807f_ffff) | (126 << 23));
    Some((fract, exp))
}

/// What WGSL admits for every result of `float_unary`, in output order (value-major).
pub fn unary_reference(floats: &[u32]) -> Vec<Allowed> {
    let mut out = Vec::new();
    for &bits in floats {
        let x = f32::from_bits(bits);
        let finite = x.is_finite();
        let unary = |f: fn(f32) -> f32| {
            if finite {
                float_results(&[x], f, "")
            } else {
                Allowed::Any(NONFINITE)
            }
        };
        let conv = |f: fn(f32) -> u32| {
            if finite {
                Allowed::Bits(f(x))
            } else {
                Allowed::Any(NONFINITE)
            }
        };
        let f16_out_of_range = "outside the f16 finite range: indeterminate";
        let f16_rounding = "f16 conversion may round either way; f16 subnormals may be flushed";
        let quantize = match f16_candidates(x) {
            Some(c) => {
                let v: Vec<f32> = c.iter().map(|&h| f16_to_f32(h)).collect();
                Allowed::Floats(v, f16_rounding)
            }
            None if finite => Allowed::Any(f16_out_of_range),
            None => Allowed::Any(NONFINITE),
        };
        let pack_f16 = match f16_candidates(x) {
            Some(c) => bits_one_of(
                c.iter().map(|&h| (h as u32) | (0x3c00 << 16)).collect(),
                f16_rounding,
            ),
            None if finite => Allowed::Any(f16_out_of_range),
            None => Allowed::Any(NONFINITE),
        };
        let pack_why = "the intermediate product may round either way";
        let pack = |lo: f32, scale: f64, bits: u32, rest: &[u32]| {
            let words = |glsl: bool| {
                pack_norm(x, lo, scale, bits, glsl).map(|c| {
                    let mut fields = vec![c];
                    fields.extend(rest.iter().map(|&r| vec![r]));
                    combine(&fields, bits)
                })
            };
            match (words(false), words(true)) {
                (Some(wgsl), Some(glsl)) => {
                    let spec = bits_one_of(wgsl.clone(), pack_why);
                    if glsl.iter().all(|w| wgsl.contains(w)) {
                        spec
                    } else {
                        Allowed::LavapipeDeviates {
                            wgsl: Box::new(spec),
                            lavapipe: glsl,
                            why: "lavapipe rounds exact .5 ties of pack*norm to even (naga \
                                  lowers them to GLSL.std.450 Pack*norm*, whose round() may \
                                  pick either way); WGSL's floor(0.5 + v) rounds them up",
                        }
                    }
                }
                _ => Allowed::Any(NONFINITE),
            }
        };
        let comparisons = if finite {
            let v: Vec<u32> = flushed(x)
                .into_iter()
                .map(|x| {
                    bit(x.is_nan(), 0)
                        | bit(x < 0.0, 1)
                        | bit(x == 0.0, 2)
                        | bit(x > 1.0, 3)
                        | bit(x >= -1.0, 4)
                })
                .collect();
            let mut u = Vec::new();
            for b in v {
                push_unique_u32(&mut u, b);
            }
            bits_one_of(u, "a subnormal may compare as zero")
        } else {
            Allowed::Any(NONFINITE)
        };
        let frexp_why = "frexp of a subnormal, NaN or infinity is indeterminate";
        let (frexp_exp, frexp_fract) = match frexp(x) {
            Some((f, e)) => (Allowed::Bits(e as u32), Allowed::Floats(vec![f], "")),
            None => (Allowed::Any(frexp_why), Allowed::Any(frexp_why)),
        };
        let r = [
            conv(|x| f32_to_i32(x) as u32),
            conv(f32_to_u32),
            unary(f32::round_ties_even),
            unary(f32::floor),
            unary(f32::ceil),
            unary(f32::trunc),
            unary(|x| x - x.floor()),
            unary(sign),
            unary(f32::abs),
            unary(|x| -x),
            quantize,
            pack_f16,
            pack(0.0, 255.0, 8, &[0, 255, 128]),
            pack(-1.0, 127.0, 8, &[0, 0x81, 64]),
            pack(0.0, 65535.0, 16, &[0x4000]),
            pack(-1.0, 32767.0, 16, &[0xe000]),
            unary(|x| x.clamp(0.0, 1.0)),
            unary(|x| x + x),
            unary(|x| x * 0.5),
            if x.is_nan() {
                Allowed::Floats(vec![f32::NAN], "a signalling NaN may be quieted")
            } else if is_subnormal(x) {
                Allowed::Floats(vec![x, 0.0], "bitcast intermediates may be flushed")
            } else {
                Allowed::Bits(bits)
            },
            comparisons,
            unary(|x| if 0.5 <= x { 1.0 } else { 0.0 }),
            frexp_exp,
            frexp_fract,
        ];
        out.extend(r);
    }
    out
}

/// `Floats` for a binary operation: `f` of every admissible (flushed) input pair, zero
/// added for subnormal results; Any when an input or result is not finite.
fn binary_results(a: f32, b: f32, f: impl Fn(f32, f32) -> Vec<f32>, why: &'static str) -> Allowed {
    if !a.is_finite() || !b.is_finite() {
        return Allowed::Any(NONFINITE);
    }
    let mut v = Vec::new();
    for a in flushed(a) {
        for b in flushed(b) {
            for r in f(a, b) {
                if !r.is_finite() {
                    return Allowed::Any(NONFINITE);
                }
                push_unique(&mut v, r);
                if is_subnormal(r) {
                    push_unique(&mut v, 0.0);
                }
            }
        }
    }
    let why = if v.len() > 1 && why.is_empty() {
        "subnormal flushed to zero"
    } else {
        why
    };
    Allowed::Floats(v, why)
}

fn wgsl_min(a: f32, b: f32) -> f32 {
    if b < a { b } else { a }
}

fn wgsl_max(a: f32, b: f32) -> f32 {
    if b > a { b } else { a }
}

/// `clamp(x, lo, hi)`: `min(max(x, lo), hi)` or the median of the three (they differ
/// when `lo > hi`).
fn clamp_both(x: f32, lo: f32, hi: f32) -> Vec<f32> {
    let mut v = [x, lo, hi];
    v.sort_by(f32::total_cmp);
    vec![wgsl_min(wgsl_max(x, lo), hi), v[1]]
}

/// What WGSL admits for every result of `float_pairs`, in output order (pair-major).
pub fn pair_reference(pairs: &[u32]) -> Vec<Allowed> {
    let n = pairs.len();
    let mut out = Vec::new();
    for p in 0..n * n {
        let a = f32::from_bits(pairs[p / n]);
        let b = f32::from_bits(pairs[p % n]);
        let both_subnormal = is_subnormal(a) && is_subnormal(b);
        let minmax = |f: fn(f32, f32) -> f32| {
            binary_results(
                a,
                b,
                |x, y| {
                    if both_subnormal {
                        vec![f(x, y), a, b]
                    } else {
                        vec![f(x, y)]
                    }
                },
                "subnormals: either input, or flushed",
            )
        };
        let division = if !a.is_finite() || !b.is_finite() {
            Allowed::Any(NONFINITE)
        } else if !(2f32.powi(-126)..=2f32.powi(126)).contains(&b.abs()) {
            Allowed::Any("x / y: accuracy unspecified for |y| outside [2^-126, 2^126]")
        } else {
            let q = a / b;
            if !q.is_finite() {
                Allowed::Any(NONFINITE)
            } else if is_subnormal(q) || is_subnormal(a) {
                Allowed::Any("x / y with a subnormal: flushing and 2.5 ULP overlap")
            } else {
                Allowed::Ulps(q, 3, "x / y is accurate to 2.5 ULP")
            }
        };
        let comparisons = if a.is_finite() && b.is_finite() {
            let mut u = Vec::new();
            for x in flushed(a) {
                for y in flushed(b) {
                    push_unique_u32(
                        &mut u,
                        bit(x < y, 0)
                            | bit(x <= y, 1)
                            | bit(x == y, 2)
                            | bit(x != y, 3)
                            | bit(x > y, 4)
                            | bit(x >= y, 5),
                    );
                }
            }
            bits_one_of(u, "a subnormal may compare as zero")
        } else {
            Allowed::Any(NONFINITE)
        };
        let r = [
            minmax(wgsl_min),
            minmax(wgsl_max),
            binary_results(a, b, |x, y| clamp_both(x, y, 2.0), "clamp with low > high"),
            binary_results(a, b, |x, y| clamp_both(0.25, x, y), "clamp with low > high"),
            binary_results(a, b, |x, y| vec![x + y], ""),
            binary_results(a, b, |x, y| vec![x - y], ""),
            binary_results(a, b, |x, y| vec![x * y], ""),
            division,
            comparisons,
            binary_results(a, b, |x, y| vec![if x <= y { 1.0 } else { 0.0 }], ""),
            binary_results(
                a,
                b,
                |x, y| {
                    // Infinite intermediate products make the result indeterminate too.
                    let prod = x * y;
                    if prod.is_finite() {
                        vec![x.mul_add(y, 0.5), prod + 0.5]
                    } else {
                        vec![f32::INFINITY]
                    }
                },
                "fma may be fused or not",
            ),
        ];
        out.extend(r);
    }
    out
}

/// What WGSL admits for every result of `conversions`, in output order (value-major).
pub fn conversion_reference(ints: &[u32]) -> Vec<Allowed> {
    let either = "not representable in f32: either neighbour";
    let unpack_why = "unpack*norm is accurate to 3 ULP";
    let mut out = Vec::new();
    for &n in ints {
        let to_f32 = |v: f64| {
            let c = f32_neighbours(v);
            Allowed::Floats(c.clone(), if c.len() > 1 { either } else { "" })
        };
        out.push(to_f32(n as i32 as f64));
        out.push(to_f32(n as f64));
        for k in 0..4 {
            let byte = (n >> (8 * k)) & 0xff;
            out.push(Allowed::Ulps((byte as f64 / 255.0) as f32, 3, unpack_why));
        }
        for k in 0..4 {
            let byte = ((n >> (8 * k)) & 0xff) as u8 as i8;
            let v = (byte as f64 / 127.0).max(-1.0) as f32;
            out.push(Allowed::Ulps(v, 3, unpack_why));
        }
        for k in 0..2 {
            let half = (n >> (16 * k)) & 0xffff;
            out.push(Allowed::Ulps((half as f64 / 65535.0) as f32, 3, unpack_why));
        }
        for k in 0..2 {
            let half = ((n >> (16 * k)) & 0xffff) as u16 as i16;
            let v = (half as f64 / 32767.0).max(-1.0) as f32;
            out.push(Allowed::Ulps(v, 3, unpack_why));
        }
        for k in 0..2 {
            let h = ((n >> (16 * k)) & 0xffff) as u16;
            let v = f16_to_f32(h);
            out.push(if !v.is_finite() {
                Allowed::Any(NONFINITE)
            } else if h & 0x7c00 == 0 && h & 0x3ff != 0 {
                Allowed::Floats(vec![v, 0.0], "an f16 subnormal may be flushed")
            } else {
                Allowed::Floats(vec![v], "")
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_follows_the_spec_examples() {
        // WGSL § "Floating Point Conversion" examples.
        assert_eq!(f32_to_u32(3.9), 3);
        assert_eq!(f32_to_u32(-1.0), 0);
        assert_eq!(f32_to_u32(1e20), 4_294_967_040);
        assert_eq!(f32_to_i32(-3.9), -3);
        assert_eq!(f32_to_i32(1e20), 2_147_483_520);
        assert_eq!(f32_to_i32(-1e20), i32::MIN);
        assert_eq!(idiv(i32::MIN, -1), i32::MIN);
        assert_eq!(irem(i32::MIN, -1), 0);
        assert_eq!(idiv(5, 0), 5);
        assert_eq!(extract_bits_i32(0b1100, 2, 2), -1);
        assert_eq!(extract_bits_u32(0xffff_ffff, 32, 5), 0);
        assert_eq!(insert_bits(0, 0xff, 28, 8), 0xf000_0000);
        assert_eq!(first_leading_bit_i32(-2), 0);
        assert_eq!(f16_candidates(1.0), Some(vec![0x3c00]));
        assert_eq!(f16_candidates(65519.0), None);
        assert_eq!(f16_candidates(65503.0), Some(vec![0x7bfe, 0x7bff]));
        assert_eq!(
            pack_norm(-0.5, -1.0, 127.0, 8, false),
            Some(vec![(-63i32) as u32 & 0xff])
        );
        assert_eq!(
            pack_norm(-0.5, -1.0, 127.0, 8, true),
            Some(vec![(-64i32) as u32 & 0xff])
        );
        assert_eq!(frexp(8.0), Some((0.5, 4)));
    }
}
