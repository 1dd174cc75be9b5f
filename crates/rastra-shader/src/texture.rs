//! The shader core's port to its texture unit (T4: "the shader unit sends texture requests
//! a quad at a time"): executes one [`TexInst`] for a warp by handing its quads of lanes
//! (lanes 4q…4q+3, pixel i of a pixel quad) with an active lane to the [`TextureUnit`] —
//! a sample's as one run ([`rastra_texture::QuadRun`]), checked once, a gather's or a
//! load's one by one — then scattering each quad's four results into the destination
//! registers.
//!
//! Lanes that are not active still supply coordinates (so a quad's implicit LOD stays
//! defined) but read no texels; neither do helper lanes when nothing reads their results
//! (`quad_mode`). A binding the pipeline did not supply, or a request the
//! texture unit rejects, reads zeros — API validation keeps both from happening.

use rastra_texture::{Lod, Quad, QuadRun, TextureUnit};

use crate::ir::{Reg, SampleLod, TexInst, TexOp};
use crate::{Mask, Resources, WARP_LANES};

type Regs = [[u32; WARP_LANES]];

/// Lanes of quad `q` in `mask`, as a 4-bit mask.
#[inline]
fn quad_lanes(mask: Mask, q: usize) -> u8 {
    ((mask >> (4 * q)) & 0xF) as u8
}

/// `count` registers from `first`, lane `l`'s values, padded with zeros to 3.
#[inline]
fn vec3(regs: &Regs, first: Reg, count: u32, l: usize) -> [u32; 3] {
    let mut v = [0u32; 3];
    for (k, out) in v.iter_mut().enumerate().take(count.min(3) as usize) {
        *out = regs[first.0 as usize + k][l];
    }
    v
}

#[inline]
fn lane(regs: &Regs, r: Option<Reg>, l: usize, default: u32) -> u32 {
    r.map_or(default, |r| regs[r.0 as usize][l])
}

rastra_texture::multiversion! {
    /// Executes `t` for the lanes in `mask`; `effects` are those that are not helpers, the only
    /// ones that read texels when helper lanes do not need the results
    /// ([`TexInst::helper_results`]; the others get zeros).
    /// (Compiled for AVX2 too, [`rastra_texture::multiversion`]: its gathers of coordinates
    /// and its scatters of results are vector shuffles there.)
    pub(crate) fn execute(
        regs: &mut Regs,
        t: &TexInst,
        mask: Mask,
        effects: Mask,
        res: &Resources,
        unit: &mut TextureUnit,
    ) {
        let mut out = [[0u32; WARP_LANES]; 4];
        // The lanes that get results.
        let wanted = if t.helper_results {
            mask
        } else {
            mask & effects
        };
        if let Some(b) = res.textures.get(t.texture as usize) {
            let view = b.view;
            match t.op {
                TexOp::Size { level, components } => {
                    for l in 0..WARP_LANES {
                        let dims = TextureUnit::dimensions(view, lane(regs, level, l, 0));
                        for (c, comp) in out.iter_mut().enumerate().take(components.min(3) as usize) {
                            comp[l] = dims[c];
                        }
                    }
                }
                TexOp::NumLevels => out[0] = [TextureUnit::num_levels(view); WARP_LANES],
                TexOp::NumLayers => out[0] = [TextureUnit::num_layers(view); WARP_LANES],
                TexOp::NumSamples => out[0] = [TextureUnit::num_samples(view); WARP_LANES],
                TexOp::Load {
                    coords,
                    coord_count,
                    array_index,
                    level,
                    sample,
                } => {
                    for q in 0..WARP_LANES / 4 {
                        let lanes = quad_lanes(wanted, q);
                        if lanes == 0 {
                            continue;
                        }
                        let at = |i: usize| 4 * q + i;
                        let c: [[i32; 3]; 4] = std::array::from_fn(|i| {
                            vec3(regs, coords, coord_count, at(i)).map(|v| v as i32)
                        });
                        let a = std::array::from_fn(|i| lane(regs, array_index, at(i), 0) as i32);
                        // Inactive lanes ask for level -1, which reads nothing.
                        let lv = std::array::from_fn(|i| {
                            if lanes >> i & 1 == 0 {
                                -1
                            } else {
                                lane(regs, level, at(i), 0) as i32
                            }
                        });
                        let s = std::array::from_fn(|i| lane(regs, sample, at(i), 0) as i32);
                        if let Ok(r) = unit.load(b.texture, view, c, a, lv, s) {
                            scatter(&mut out, q, r);
                        }
                    }
                }
                TexOp::Sample {
                    sampler,
                    coords,
                    coord_count,
                    array_index,
                    offset,
                    lod,
                    depth_ref,
                    gather,
                    clamp_to_edge,
                } => {
                    let Some(&smp) = res.samplers.get(sampler as usize) else {
                        write(regs, t.dst, &out);
                        return;
                    };
                    let first = mask.trailing_zeros() as usize;
                    let offset = match offset {
                        Some(o) if first < WARP_LANES => {
                            vec3(regs, o, coord_count, first).map(|v| v as i32)
                        }
                        _ => [0; 3],
                    };
                    // textureSampleBaseClampToEdge keeps coordinates half a texel inside level 0.
                    let [w, h, _] = view.level_size(0);
                    let clamp = |v: f32, size: u32| {
                        let half = 0.5 / size.max(1) as f32;
                        v.clamp(half, 1.0 - half)
                    };
                    // The quads with lanes that want results, in order: a gather's one by one, a
                    // sample's as one run.
                    let mut run = [Quad::new([[0.0; 3]; 4]); WARP_LANES / 4];
                    // (One LOD choice for the whole run when no quad has its own.)
                    let shared = match lod {
                        SampleLod::Implicit => Some(Lod::Implicit),
                        SampleLod::Zero => Some(Lod::Level([0.0; 4])),
                        _ => None,
                    };
                    let mut lods = [Lod::Implicit; WARP_LANES / 4];
                    let mut refs = [[0.0f32; 4]; WARP_LANES / 4];
                    let mut quads = [0usize; WARP_LANES / 4];
                    let mut n = 0;
                    // The coordinates' registers, found once for the warp (components past
                    // `coord_count` read zeros, as `vec3` pads them).
                    let zeros = [0u32; WARP_LANES];
                    let coord_regs: [&[u32; WARP_LANES]; 3] = std::array::from_fn(|k| {
                        if k < coord_count.min(3) as usize {
                            &regs[coords.0 as usize + k]
                        } else {
                            &zeros
                        }
                    });
                    for q in 0..WARP_LANES / 4 {
                        let lanes = quad_lanes(wanted, q);
                        if lanes == 0 {
                            continue;
                        }
                        let at = |i: usize| 4 * q + i;
                        let fl = |r: Reg, i: usize| f32::from_bits(regs[r.0 as usize][at(i)]);
                        let mut c: [[f32; 3]; 4] = std::array::from_fn(|i| {
                            std::array::from_fn(|k| f32::from_bits(coord_regs[k][at(i)]))
                        });
                        if clamp_to_edge {
                            for c in &mut c {
                                c[0] = clamp(c[0], w);
                                c[1] = clamp(c[1], h);
                            }
                        }
                        // (Made in its place in the run: a gather's is used there and then
                        // overwritten by the next quad.)
                        run[n] = Quad {
                            coords: c,
                            array_index: match array_index {
                                Some(a) => std::array::from_fn(|i| regs[a.0 as usize][at(i)] as i32),
                                None => [0; 4],
                            },
                            offset,
                            lanes,
                        };
                        let quad = &run[n];
                        let dref = depth_ref.map(|d| std::array::from_fn(|i| fl(d, i)));
                        if let Some(component) = gather {
                            let result = match dref {
                                Some(dref) => unit
                                    .gather_compare(b.texture, view, smp, quad, dref)
                                    .map(bits),
                                None => unit.gather(b.texture, view, smp, quad, component),
                            };
                            if let Ok(r) = result {
                                scatter(&mut out, q, r);
                            }
                            continue;
                        }
                        if shared.is_none() {
                            lods[n] = match lod {
                                SampleLod::Bias(r) => Lod::Bias(std::array::from_fn(|i| fl(r, i))),
                                SampleLod::Level(r) => Lod::Level(std::array::from_fn(|i| fl(r, i))),
                                SampleLod::Grad { ddx, ddy } => {
                                    let g = |r: Reg, i: usize| {
                                        vec3(regs, r, coord_count, at(i)).map(f32::from_bits)
                                    };
                                    Lod::Grad {
                                        ddx: std::array::from_fn(|i| g(ddx, i)),
                                        ddy: std::array::from_fn(|i| g(ddy, i)),
                                    }
                                }
                                // (Those are the run's shared choice.)
                                SampleLod::Implicit | SampleLod::Zero => Lod::Implicit,
                            };
                        }
                        refs[n] = dref.unwrap_or_default();
                        quads[n] = q;
                        n += 1;
                    }
                    if n > 0 {
                        let mut results = [[[0.0f32; 4]; 4]; WARP_LANES / 4];
                        let refs = depth_ref.map(|_| &refs[..n]);
                        let lods = match &shared {
                            Some(l) => std::slice::from_ref(l),
                            None => &lods[..n],
                        };
                        let run = QuadRun {
                            quads: &run[..n],
                            lods,
                            depth_refs: refs,
                        };
                        let sampled = unit.sample_run(b.texture, view, smp, &run, &mut results);
                        if sampled.is_ok() {
                            for (&q, r) in quads[..n].iter().zip(&results) {
                                scatter(&mut out, q, bits(*r));
                            }
                        }
                    }
                }
            }
        }
        write(regs, t.dst, &out);
    }
}

fn bits(v: [[f32; 4]; 4]) -> [[u32; 4]; 4] {
    v.map(|lane| lane.map(f32::to_bits))
}

/// Puts quad `q`'s four per-lane results into `out` (component-major): a 4×4 transpose,
/// each component's four lanes stored together (SSE2 shuffles on x86-64, which every
/// x86-64 CPU has: the compiler made it sixteen loads and sixteen stores).
#[inline]
fn scatter(out: &mut [[u32; WARP_LANES]; 4], q: usize, r: [[u32; 4]; 4]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64; the loads read the four rows of `r` and the
        // stores write lanes 4q…4q + 3 of each component, inside `out` (checked).
        unsafe {
            let row = |l: usize| _mm_loadu_si128(r[l].as_ptr().cast());
            let (a, b, c, d) = (row(0), row(1), row(2), row(3));
            let (ab_lo, ab_hi) = (_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b));
            let (cd_lo, cd_hi) = (_mm_unpacklo_epi32(c, d), _mm_unpackhi_epi32(c, d));
            let columns = [
                _mm_unpacklo_epi64(ab_lo, cd_lo),
                _mm_unpackhi_epi64(ab_lo, cd_lo),
                _mm_unpacklo_epi64(ab_hi, cd_hi),
                _mm_unpackhi_epi64(ab_hi, cd_hi),
            ];
            for (reg, column) in out.iter_mut().zip(columns) {
                let lanes = &mut reg[4 * q..4 * q + 4];
                _mm_storeu_si128(lanes.as_mut_ptr().cast(), column);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (c, reg) in out.iter_mut().enumerate() {
        reg[4 * q..4 * q + 4].copy_from_slice(&[r[0][c], r[1][c], r[2][c], r[3][c]]);
    }
}

#[inline]
fn write(regs: &mut Regs, dst: Reg, out: &[[u32; WARP_LANES]; 4]) {
    for (c, v) in out.iter().enumerate() {
        regs[dst.0 as usize + c] = *v;
    }
}
