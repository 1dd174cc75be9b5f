//! Test harness: compile WGSL, run a 32-lane warp with `execute` and with the reference
//! interpreter, check they agree on every output register of every active lane.
#![allow(dead_code)]

use std::sync::atomic::AtomicU32;

use rastra_shader::{
    ExecError, ExecInfo, FULL_MASK, Mask, Program, Resources, ShaderModule, Stage, WARP_LANES,
    Warp, execute, reference,
};

pub const BUDGET: u64 = 1_000_000;

pub fn compile(src: &str) -> Program {
    let module = ShaderModule::from_wgsl(src).unwrap_or_else(|e| panic!("compile error: {e}"));
    let (name, stage) = module.entry_points()[0].clone();
    module
        .program(&name, stage)
        .unwrap_or_else(|e| panic!("lowering error: {e}"))
}

pub fn compile_stage(src: &str, entry: &str, stage: Stage) -> Program {
    let module = ShaderModule::from_wgsl(src).unwrap();
    module.program(entry, stage).unwrap()
}

/// Output values: `out[output][component][lane]`.
pub struct Run {
    pub out: Vec<Vec<[u32; WARP_LANES]>>,
    pub info: ExecInfo,
}

impl Run {
    pub fn f(&self, o: usize, c: usize, lane: usize) -> f32 {
        f32::from_bits(self.out[o][c][lane])
    }
    pub fn u(&self, o: usize, c: usize, lane: usize) -> u32 {
        self.out[o][c][lane]
    }
    pub fn i(&self, o: usize, c: usize, lane: usize) -> i32 {
        self.out[o][c][lane] as i32
    }
}

fn fill_inputs(p: &Program, w: &mut Warp, fill: &dyn Fn(usize, usize, usize) -> u32) {
    for (i, io) in p.inputs.iter().enumerate() {
        let regs = w.regs_mut(io.first_reg, io.ty.components as u32);
        for (c, r) in regs.iter_mut().enumerate() {
            for (l, v) in r.iter_mut().enumerate() {
                *v = fill(i, c, l);
            }
        }
    }
}

/// Runs `p` with `execute` and (unless it uses derivatives) the reference interpreter on the
/// lanes in `active`, asserts they agree on all outputs of active lanes, returns the outputs.
pub fn run_mask(
    p: &Program,
    active: Mask,
    buffers: &[&[u8]],
    fill: &dyn Fn(usize, usize, usize) -> u32,
) -> Run {
    // Device memory is words; a trailing partial word is not addressable.
    let to_words = || -> Vec<Vec<AtomicU32>> {
        buffers
            .iter()
            .map(|b| {
                b.chunks_exact(4)
                    .map(|c| AtomicU32::new(u32::from_le_bytes(c.try_into().unwrap())))
                    .collect()
            })
            .collect()
    };
    // The warp as `execute` runs it: garbage in every register (execute must initialise what
    // it needs itself), the inputs, then the outputs and the memory afterwards.
    let exec = |p: &Program| {
        let words = to_words();
        let slices: Vec<&[AtomicU32]> = words.iter().map(|w| w.as_slice()).collect();
        let res = Resources::buffers(&slices);
        let mut w = Warp::new(p);
        for r in w.regs_mut(0, w.num_regs()) {
            *r = [0xdead_beef; WARP_LANES];
        }
        fill_inputs(p, &mut w, fill);
        let mut budget = BUDGET;
        let info = execute(
            p,
            &mut w,
            active,
            0,
            &res,
            &mut rastra_texture::TextureUnit::default(),
            &mut budget,
        )
        .expect("execute");
        assert_eq!(BUDGET - budget, info.instructions);
        let out: Vec<Vec<[u32; WARP_LANES]>> = p
            .outputs
            .iter()
            .map(|o| w.regs(o.first_reg, o.ty.components as u32).to_vec())
            .collect();
        let memory: Vec<Vec<u32>> = words
            .iter()
            .map(|w| {
                w.iter()
                    .map(|x| x.load(std::sync::atomic::Ordering::Relaxed))
                    .collect()
            })
            .collect();
        (out, info, memory)
    };
    let (out, info, memory) = exec(p);
    // Compiled code and the interpreter: the same bits on every lane, the same memory, the
    // same statistics.
    if p.is_compiled() {
        let (i_out, i_info, i_memory) = exec(&p.interpreted());
        assert_eq!(
            info, i_info,
            "statistics of compiled code and interpreter differ"
        );
        assert_eq!(
            memory, i_memory,
            "memory written by compiled code and interpreter differs"
        );
        // Lanes outside the active mask hold unspecified values (compiled code keeps a
        // uniform value once and writes it to every lane).
        for (oi, (o, io)) in out.iter().zip(&i_out).enumerate() {
            for (c, (a, b)) in o.iter().zip(io).enumerate() {
                for l in (0..WARP_LANES).filter(|l| (active >> l) & 1 == 1) {
                    assert_eq!(
                        a[l], b[l],
                        "output {oi} component {c} lane {l}: compiled {a:x?} interpreted {b:x?}"
                    );
                }
            }
        }
    }
    let words = to_words();
    let slices: Vec<&[AtomicU32]> = words.iter().map(|w| w.as_slice()).collect();
    let res = Resources::buffers(&slices);
    if !p.uses_derivatives {
        let mut rw = Warp::new(p);
        fill_inputs(p, &mut rw, fill);
        let mut budget = BUDGET;
        let discarded = match reference::execute_warp(p, &mut rw, active, &res, &mut budget) {
            Ok(d) => d,
            // Cross-lane operations have no one-lane reference: the caller checks values.
            Err(reference::RefError::NeedsWarp | reference::RefError::NeedsWorkgroup) => {
                return Run { out, info };
            }
            Err(e) => panic!("reference: {e:?}"),
        };
        assert_eq!(discarded, info.discarded, "discard masks differ");
        for (oi, o) in p.outputs.iter().enumerate() {
            let r = rw.regs(o.first_reg, o.ty.components as u32);
            for c in 0..o.ty.components as usize {
                for l in 0..WARP_LANES {
                    if (active >> l) & 1 == 1 {
                        assert_eq!(
                            out[oi][c][l], r[c][l],
                            "output {oi} component {c} lane {l}: warp {:#x} reference {:#x}",
                            out[oi][c][l], r[c][l]
                        );
                    }
                }
            }
        }
    }
    Run { out, info }
}

pub fn run(p: &Program, fill: &dyn Fn(usize, usize, usize) -> u32) -> Run {
    run_mask(p, FULL_MASK, &[], fill)
}

pub fn run_budget(p: &Program, budget: u64) -> Result<ExecInfo, ExecError> {
    let mut w = Warp::new(p);
    let mut b = budget;
    execute(
        p,
        &mut w,
        FULL_MASK,
        0,
        &Resources::EMPTY,
        &mut rastra_texture::TextureUnit::default(),
        &mut b,
    )
}

pub const F_EDGE: [f32; 16] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.5,
    -2.5,
    3.7,
    1e30,
    -1e30,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    1e-40,
    100.0,
    -7.25,
];

pub const I_EDGE: [i32; 16] = [
    0,
    1,
    -1,
    i32::MIN,
    i32::MAX,
    2,
    -2,
    31,
    32,
    33,
    7,
    -7,
    100,
    0x5555_5555,
    16,
    -100,
];
