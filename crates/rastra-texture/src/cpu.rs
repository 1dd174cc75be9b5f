//! The host CPU's vector units, as the GPU's hot loops see them (issue 5: "SIMD across lanes,
//! runtime feature detection").
//!
//! rastra's lane loops (a warp's 32 lanes, a quad's 16 colour channels, a tile's samples) are
//! written as plain loops over arrays, which the compiler turns into SIMD code for the target
//! it is told about. The baseline x86-64 target only has 128-bit SSE2 and no fused
//! multiply-add (so `f32::mul_add` is a library call). The hottest loops are therefore
//! compiled twice — once for the baseline and once with AVX2 and FMA enabled — and
//! [`wide`] picks one at run time.
//!
//! Both versions compute the same bits: they run the same Rust code, and IEEE-754 addition,
//! multiplication, division, square root and fused multiply-add are exactly rounded whatever
//! the instruction set; min/max, conversions and library calls (`sinf`, …) are the same code
//! in both. On a given machine, images and statistics therefore do not depend on which
//! version runs, which the tests check by running workloads both ways
//! ([`set_wide_allowed`]). (Across machines, the C library's transcendental functions may
//! themselves differ: they are not correctly rounded and pick their own CPU paths. Shader
//! sin and cos use rastra's own reduction and polynomials, `rastra-shader/src/trig.rs`, and
//! reach the library only beyond |x| = 8192.)

//!
//! `RASTRA_SIMD=baseline` in the environment turns the wide versions off for the whole
//! process (for comparisons and profiling).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Whether the CPU offers AVX2 and FMA (with POPCNT, BMI1/2 and LZCNT) (and the environment
/// does not forbid them), detected once: 0 not yet known, 1 no, 2 yes (one load on every
/// later call — the hot loops ask per call).
static DETECTED: AtomicU8 = AtomicU8::new(0);

#[inline]
fn detected() -> bool {
    match DETECTED.load(Ordering::Relaxed) {
        0 => detect(),
        state => state == 2,
    }
}

#[cold]
fn detect() -> bool {
    let forbidden = std::env::var("RASTRA_SIMD").is_ok_and(|v| v.trim() == "baseline");
    let wide = !forbidden && has_avx2_fma();
    DETECTED.store(if wide { 2 } else { 1 }, Ordering::Relaxed);
    wide
}

#[cfg(target_arch = "x86_64")]
fn has_avx2_fma() -> bool {
    // Every CPU with AVX2 and FMA (Haswell, Zen and later) also has these scalar
    // extensions; the wide versions use them for bit counts and shifts.
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("popcnt")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_avx2_fma() -> bool {
    false
}

/// Cleared by [`set_wide_allowed`] to force the baseline versions.
static ALLOWED: AtomicBool = AtomicBool::new(true);

/// Whether the hot loops run their AVX2+FMA versions. Callers must only call a function
/// compiled with `#[target_feature(enable = "avx2,fma,popcnt,bmi1,bmi2,lzcnt")]` when this
/// is true.
#[inline]
pub fn wide() -> bool {
    ALLOWED.load(Ordering::Relaxed) && detected()
}

/// Allows (the default) or forbids the AVX2+FMA versions, for tests that check both give the
/// same results. Because they do, changing this while work runs on other threads changes
/// nothing but speed.
pub fn set_wide_allowed(allowed: bool) {
    ALLOWED.store(allowed, Ordering::Relaxed);
}

/// The set bits of `m`, counted by the `popcnt` instruction when [`wide`] (its CPUs have it)
/// and by the baseline's bit arithmetic (about fifteen instructions) otherwise: for code
/// compiled for the baseline that counts a mask once per call.
#[inline]
pub fn count_ones(m: u64) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        #[target_feature(enable = "popcnt")]
        fn popcnt(m: u64) -> u32 {
            m.count_ones()
        }
        // SAFETY: `wide()` is true only when the CPU has POPCNT.
        return unsafe { popcnt(m) };
    }
    m.count_ones()
}

/// Defines `$name` with the given signature, running `$body` compiled for AVX2+FMA when
/// [`wide`] says so and for the baseline otherwise. The body is one block, inlined into both
/// versions (functions it calls should be `#[inline]` so they are compiled for AVX2 too).
/// The baseline version is a function of its own, like the AVX2 one: `$name` itself only
/// tests [`wide`] and passes its arguments on. (With the baseline body inlined into it,
/// `$name` saved and restored every callee-saved register and set up a large frame on each
/// call before calling the AVX2 version — 1.5% of the model's and small_triangles' time in
/// the quad intake's dispatch.)
#[macro_export]
macro_rules! multiversion {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident $(<$($lt:lifetime),*>)? ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block
    ) => {
        $(#[$attr])*
        $vis fn $name $(<$($lt),*>)? ($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn __multiversion_body $(<$($lt),*>)? ($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma,popcnt,bmi1,bmi2,lzcnt")]
                fn __multiversion_wide $(<$($lt),*>)? ($($arg: $ty),*) $(-> $ret)? {
                    __multiversion_body($($arg),*)
                }
                if $crate::cpu::wide() {
                    // SAFETY: `wide()` is true only when the CPU has AVX2 and FMA.
                    return unsafe { __multiversion_wide($($arg),*) };
                }
            }
            #[inline(never)]
            fn __multiversion_base $(<$($lt),*>)? ($($arg: $ty),*) $(-> $ret)? {
                __multiversion_body($($arg),*)
            }
            __multiversion_base($($arg),*)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::multiversion! {
        fn dot<'a>(a: &'a [f32; 16], b: &'a [f32; 16]) -> f32 {
            let mut s = 0.0f32;
            for i in 0..16 {
                s = a[i].mul_add(b[i], s);
            }
            s
        }
    }

    #[test]
    fn both_versions_agree() {
        let a: [f32; 16] = std::array::from_fn(|i| 0.1 + i as f32 * 1.37);
        let b: [f32; 16] = std::array::from_fn(|i| 3.3 - i as f32 * 0.71);
        let wide_result = dot(&a, &b);
        set_wide_allowed(false);
        let baseline = dot(&a, &b);
        set_wide_allowed(true);
        assert_eq!(wide_result.to_bits(), baseline.to_bits());
        let mut expect = 0.0f32;
        for i in 0..16 {
            expect = a[i].mul_add(b[i], expect);
        }
        assert_eq!(baseline.to_bits(), expect.to_bits());
    }
}
