//! The register file as compiled code sees it: a register's value is a vector per 4-lane
//! chunk, taken from what the run last computed, a constant, a uniform register's scalar
//! variable or a promoted register's variables before the register file is read; changed
//! chunks reach the register file only when a chunk's pass ends or the code calls back into
//! the interpreter. Also the vector constants and lane-mask conversions the generator uses.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{ConstantData, Endianness, InstBuilder, MemFlagsData, Value, types};

use super::{CHUNKS, Cached, Gen, MASK_TY, REG_BYTES, reg_flags};
use crate::WARP_LANES;
use crate::ir::Reg;

impl Gen<'_, '_> {
    /// Register `r` as four vectors of type `ty` — the value this run last gave it, else
    /// read from the register file — for the chunks being generated (`self.chunks`); the
    /// other entries repeat a generated one, so whatever is computed from them is dead code
    /// (removed by the compiler).
    pub(super) fn load(&mut self, r: Reg, ty: types::Type) -> [Value; CHUNKS] {
        if let Some(bits) = self.uses.constant(r.0) {
            // The register's one value (`liveness::RegUses::constant`): no load.
            if ty == types::F32X4 {
                return [self.fconst(f32::from_bits(bits)); CHUNKS];
            }
            if ty == types::I32X4 {
                return [self.splat(bits); CHUNKS];
            }
        }
        if let Some(var) = self.scalar_var(r) {
            let x = self.b.use_var(var);
            if let Some(bits) = self.known_constant(x) {
                // A constant: from the constant pool, as the vector code's own constants.
                return [if ty == types::F32X4 {
                    self.fconst(f32::from_bits(bits))
                } else {
                    self.splat(bits)
                }; CHUNKS];
            }
            let v = if ty == types::F32X4 {
                let flags = MemFlagsData::new().with_endianness(Endianness::Little);
                let f = self.b.ins().bitcast(types::F32, flags, x);
                self.b.ins().splat(ty, f)
            } else {
                self.b.ins().splat(ty, x)
            };
            return [v; CHUNKS];
        }
        if let Some(vars) = self.promoted_vars(r) {
            let mut v = [None; CHUNKS];
            for j in self.chunks.clone() {
                let x = self.b.use_var(vars[j]);
                v[j] = Some(if ty == types::I32X4 {
                    x
                } else {
                    let flags = MemFlagsData::new().with_endianness(Endianness::Little);
                    self.b.ins().bitcast(ty, flags, x)
                });
            }
            let any = v[self.chunks.start].expect("a chunk is being generated");
            return v.map(|x| x.unwrap_or(any));
        }
        let mut v = [None; CHUNKS];
        for j in self.chunks.clone() {
            v[j] = Some(match self.cache.get(&(r.0, j)).copied() {
                Some(c) if c.ty == ty => c.v,
                Some(c) => {
                    let flags = MemFlagsData::new().with_endianness(Endianness::Little);
                    self.b.ins().bitcast(ty, flags, c.v)
                }
                None => {
                    let off = r.0 as i32 * REG_BYTES + 16 * j as i32;
                    let x = self.b.ins().load(ty, reg_flags(), self.regs, off);
                    self.cache.insert(
                        (r.0, j),
                        Cached {
                            ty,
                            v: x,
                            dirty: false,
                        },
                    );
                    x
                }
            });
        }
        let any = v[self.chunks.start].expect("a chunk is being generated");
        v.map(|x| x.unwrap_or(any))
    }

    /// Gives register `r` the value `v` (in the chunks being generated); it reaches the
    /// register file when the chunk's pass ends or the run calls back.
    pub(super) fn store(&mut self, r: Reg, v: [Value; CHUNKS]) {
        if let Some(var) = self.scalar_var(r) {
            // Every lane holds the value: lane 0 of the first chunk is it.
            if self.chunks.contains(&0) {
                let x = self.b.ins().extractlane(v[0], 0);
                let x = if self.b.func.dfg.value_type(x) == types::F32 {
                    let flags = MemFlagsData::new().with_endianness(Endianness::Little);
                    self.b.ins().bitcast(types::I32, flags, x)
                } else {
                    x
                };
                self.b.def_var(var, x);
            }
            return;
        }
        if let Some(vars) = self.promoted_vars(r) {
            for j in self.chunks.clone() {
                let x = if self.b.func.dfg.value_type(v[j]) == types::I32X4 {
                    v[j]
                } else {
                    let flags = MemFlagsData::new().with_endianness(Endianness::Little);
                    self.b.ins().bitcast(types::I32X4, flags, v[j])
                };
                self.b.def_var(vars[j], x);
            }
            return;
        }
        for j in self.chunks.clone() {
            let ty = self.b.func.dfg.value_type(v[j]);
            self.cache.insert(
                (r.0, j),
                Cached {
                    ty,
                    v: v[j],
                    dirty: true,
                },
            );
        }
    }

    /// Stores the register chunks this run changed, in register order, leaving them marked
    /// changed (on a side path that rejoins code which still has to write them).
    pub(super) fn store_dirty(&mut self) {
        let mut dirty: Vec<((u32, usize), Value)> = self
            .cache
            .iter()
            .filter(|(_, c)| c.dirty)
            .map(|(&k, c)| (k, c.v))
            .collect();
        dirty.sort_unstable_by_key(|&(k, _)| k);
        for ((r, j), v) in dirty {
            let off = r as i32 * REG_BYTES + 16 * j as i32;
            self.b.ins().store(reg_flags(), v, self.regs, off);
        }
    }

    /// Writes the register chunks this run changed to the register file and forgets every
    /// cached value (ending their live ranges).
    pub(super) fn write_back(&mut self) {
        self.store_dirty();
        self.cache.clear();
    }

    /// [`Gen::write_back`] at the end of the native segment `insts[start..end]`: values no
    /// instruction outside the segment reads ([`liveness::RegUses::local_to`]) are dropped
    /// instead of stored.
    pub(super) fn write_back_segment(&mut self, start: usize, end: usize) {
        let uses = self.uses;
        self.cache
            .retain(|&(r, _), c| !(c.dirty && uses.local_to(r, start as u32, end as u32)));
        self.write_back();
    }

    /// A vector of four i32 lanes.
    pub(super) fn vconst(&mut self, lanes: [u32; 4]) -> Value {
        let bytes: Vec<u8> = lanes.iter().flat_map(|l| l.to_le_bytes()).collect();
        let h = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(types::I32X4, h)
    }

    pub(super) fn splat(&mut self, v: u32) -> Value {
        self.vconst([v; 4])
    }

    /// Four f32 lanes of `v`, from the constant pool.
    pub(super) fn fconst(&mut self, v: f32) -> Value {
        let bytes: Vec<u8> = [v.to_bits(); 4]
            .iter()
            .flat_map(|l| l.to_le_bytes())
            .collect();
        let h = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(types::F32X4, h)
    }

    /// All-ones lanes where `v cc 0` (integer compare of a vector with zero).
    pub(super) fn vcmp0(&mut self, cc: IntCC, v: Value) -> Value {
        let z = self.splat(0);
        self.b.ins().icmp(cc, v, z)
    }

    /// Per-chunk all-ones lane masks of the lanes set in the scalar `mask`.
    pub(super) fn lane_masks(&mut self, mask: Value) -> [Value; CHUNKS] {
        // The mask's 32-bit words, each splat across a vector: chunk `j`'s lanes are bits
        // 4j … 4j + 3, in word 4j / 32.
        let words: [Value; WARP_LANES.div_ceil(32)] = std::array::from_fn(|w| {
            let word = match w {
                0 => mask,
                _ => self.b.ins().ushr_imm_u(mask, 32 * w as i64),
            };
            let word = self.b.ins().ireduce(types::I32, word);
            self.b.ins().splat(types::I32X4, word)
        });
        std::array::from_fn(|j| {
            let s = 4 * j as u32 % 32;
            let bits = self.vconst([1 << s, 2 << s, 4 << s, 8 << s]);
            let on = self.b.ins().band(words[4 * j / 32], bits);
            self.b.ins().icmp(IntCC::Equal, on, bits)
        })
    }

    /// Gathers one bit per lane from per-chunk all-ones masks into a scalar mask.
    pub(super) fn gather(&mut self, chunks: [Value; CHUNKS]) -> Value {
        let mut out = None;
        for (j, c) in chunks.into_iter().enumerate() {
            let bits = self.b.ins().vhigh_bits(MASK_TY, c);
            let bits = if j == 0 {
                bits
            } else {
                self.b.ins().ishl_imm_u(bits, 4 * j as i64)
            };
            out = Some(match out {
                None => bits,
                Some(o) => self.b.ins().bor(o, bits),
            });
        }
        out.expect("a warp has lanes")
    }

    /// `simt::cond_mask`: lanes whose register value is not zero.
    pub(super) fn cond_mask(&mut self, r: Reg) -> Value {
        if self.scalar_var(r).is_some() {
            // The same in every lane: all lanes or none (callers keep the active ones).
            let x = self.scalar(r);
            let all = self.b.ins().iconst(MASK_TY, -1);
            let none = self.zero();
            return self.b.ins().select(x, all, none);
        }
        let v = self.load(r, types::I32X4);
        let ne = v.map(|v| self.vcmp0(IntCC::NotEqual, v));
        self.gather(ne)
    }

    /// `warp::eq_mask`: lanes whose register value is `value`.
    pub(super) fn eq_mask(&mut self, r: Reg, value: u32) -> Value {
        if self.scalar_var(r).is_some() {
            let x = self.scalar(r);
            let eq = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, x, value as i32 as i64);
            let all = self.b.ins().iconst(MASK_TY, -1);
            let none = self.zero();
            return self.b.ins().select(eq, all, none);
        }
        let v = self.load(r, types::I32X4);
        let k = self.splat(value);
        let eq = v.map(|v| self.b.ins().icmp(IntCC::Equal, v, k));
        self.gather(eq)
    }
}
