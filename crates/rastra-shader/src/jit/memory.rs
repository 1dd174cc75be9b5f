//! Buffer and workgroup-memory loads and stores in compiled code (`Inst::Load`,
//! `Inst::StoreMem`), with the interpreter's semantics (`warp::exec_inst`): a word at byte
//! address `offset + add` (64-bit arithmetic, the word index is the address / 4), loads of
//! words outside the memory give 0, stores outside it are dropped; a load reads every lane,
//! a store writes the lanes allowed side effects, in lane order.
//!
//! A load at a uniform address into a uniform register (`uniform`) is one scalar load.
//! Otherwise the common case — sixteen consecutive words inside the memory
//! (`array[base + lane]`), and for a store every lane writing — is four vector loads or
//! stores; in the rest each lane's address is checked and then redirected rather than
//! branched around: an out-of-bounds load reads [`Cx::zero`], a dropped store writes
//! [`Cx::sink`]. A memory
//! instruction is generated for all four chunks at once, lane 0 to 15, never interleaved
//! with another instruction's chunks, so accesses happen in the interpreter's order (the
//! vector path touches distinct words, so its order cannot be observed).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::Variable;

use super::{CHUNKS, Cx, Gen, NATIVE_BUFFERS};
use crate::WARP_LANES;
use crate::ir::{Inst, Mem, Reg};

impl Gen<'_, '_> {
    /// Whether instruction `index` is a memory access the compiled code makes itself
    /// (workgroup memory, or one of the first [`NATIVE_BUFFERS`] buffer bindings).
    pub(super) fn is_native_memory(&self, index: usize) -> bool {
        match self.code.insts[index] {
            Inst::Load { mem, .. } | Inst::StoreMem { mem, .. } => match mem {
                Mem::Workgroup => true,
                Mem::Buffer(slot) => (slot as usize) < NATIVE_BUFFERS,
            },
            _ => false,
        }
    }

    /// The first word of `mem` and its length in words.
    fn words(&mut self, mem: Mem) -> (Value, Value) {
        let flags = MemFlagsData::trusted();
        let (ptr, len) = match mem {
            Mem::Workgroup => (
                std::mem::offset_of!(Cx, shared),
                std::mem::offset_of!(Cx, shared_len),
            ),
            Mem::Buffer(slot) => {
                let at = std::mem::offset_of!(Cx, buffers)
                    + slot as usize * std::mem::size_of::<super::BufferWords>();
                (at, at + std::mem::offset_of!(super::BufferWords, len))
            }
        };
        let base = self.b.ins().load(self.ptr, flags, self.cx, ptr as i32);
        let len = self.b.ins().load(self.ptr, flags, self.cx, len as i32);
        (base, len)
    }

    /// A memory instruction's operands: `mem`'s first word and length in words, and each
    /// chunk's byte offsets (`offset`'s register, or zeros).
    fn operands(&mut self, mem: Mem, offset: Option<Reg>) -> (Value, Value, [Value; CHUNKS]) {
        let (base, len) = self.words(mem);
        let offsets = match offset {
            Some(r) => self.load(r, types::I32X4),
            None => [self.splat(0); CHUNKS],
        };
        (base, len, offsets)
    }

    /// The address of a field of the `Cx` (the zero word out-of-range loads read, the sink
    /// out-of-range stores write).
    fn cx_field(&mut self, offset: usize) -> Value {
        self.b.ins().iadd_imm_u(self.cx, offset as i64)
    }

    /// Lane `k` of `offsets` plus `add` as a word address inside `mem` (`base`, `len`), and
    /// whether it is inside.
    fn word_address(
        &mut self,
        offsets: Value,
        k: u8,
        add: u32,
        base: Value,
        len: Value,
    ) -> (Value, Value) {
        let o = self.b.ins().extractlane(offsets, k);
        self.scalar_word_address(o, add, base, len)
    }

    /// The byte offset `o` (an i32) plus `add` as a word address inside `mem` (`base`,
    /// `len`), and whether it is inside.
    fn scalar_word_address(
        &mut self,
        o: Value,
        add: u32,
        base: Value,
        len: Value,
    ) -> (Value, Value) {
        let o = self.b.ins().uextend(self.ptr, o);
        let addr = self.b.ins().iadd_imm_u(o, add as i64);
        let index = self.b.ins().ushr_imm_u(addr, 2);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, index, len);
        let bytes = self.b.ins().ishl_imm_u(index, 2);
        let p = self.b.ins().iadd(base, bytes);
        (p, inside)
    }

    /// Whether the warp's sixteen addresses are consecutive words all inside `mem` (lane
    /// `l`'s byte offset is lane 0's plus `4 l`, with no wrap-around), and the address of
    /// lane 0's word: such an access is four vector loads or stores.
    fn contiguous(
        &mut self,
        offsets: &[Value; CHUNKS],
        add: u32,
        base: Value,
        len: Value,
    ) -> (Value, Value) {
        let o0 = self.b.ins().extractlane(offsets[0], 0);
        let from = self.b.ins().splat(types::I32X4, o0);
        let mut same = None;
        for (j, &o) in offsets.iter().enumerate() {
            let s = 16 * j as u32;
            let step = self.vconst([s, s + 4, s + 8, s + 12]);
            let want = self.b.ins().iadd(from, step);
            let eq = self.b.ins().icmp(IntCC::Equal, o, want);
            same = Some(match same {
                None => eq,
                Some(acc) => self.b.ins().band(acc, eq),
            });
        }
        let ramp = self.b.ins().vall_true(same.expect("a warp has chunks"));
        let no_wrap = self.b.ins().icmp_imm_u(
            IntCC::UnsignedLessThanOrEqual,
            o0,
            (u32::MAX - 4 * (WARP_LANES as u32 - 1)) as i64,
        );
        let o = self.b.ins().uextend(self.ptr, o0);
        let addr = self.b.ins().iadd_imm_u(o, add as i64);
        let index = self.b.ins().ushr_imm_u(addr, 2);
        let end = self.b.ins().iadd_imm_u(index, WARP_LANES as i64);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, len);
        let ok = self.b.ins().band(ramp, no_wrap);
        let ok = self.b.ins().band(ok, inside);
        let bytes = self.b.ins().ishl_imm_u(index, 2);
        let first = self.b.ins().iadd(base, bytes);
        (ok, first)
    }

    /// Branches on `cond` to a new block (returned first) or another (second); both are to
    /// jump to the third when done.
    fn split(&mut self, cond: Value) -> (Block, Block, Block) {
        let (fast, slow, merge) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(cond, fast, &[], slow, &[]);
        self.b.seal_block(fast);
        self.b.seal_block(slow);
        (fast, slow, merge)
    }

    /// Emits the native memory instruction `index` for the whole warp; `effects` are the
    /// lanes allowed side effects.
    pub(super) fn memory(&mut self, index: usize, effects: Value) {
        self.chunks = 0..CHUNKS;
        let flags = MemFlagsData::new().with_notrap();
        match self.code.insts[index] {
            Inst::Load {
                dst,
                mem,
                offset,
                add,
            } if self.scalar_var(dst).is_some() => {
                // A uniform address (`uniform`): the word is read once for the warp, a
                // scalar load, as a GPU's scalar unit reads constants.
                let (base, len) = self.words(mem);
                let o = match offset {
                    Some(r) => self.scalar(r),
                    None => self.b.ins().iconst(types::I32, 0),
                };
                let (p, inside) = self.scalar_word_address(o, add, base, len);
                let zero = self.cx_field(std::mem::offset_of!(Cx, zero));
                let p = self.b.ins().select(inside, p, zero);
                let word = self.b.ins().load(types::I32, flags, p, 0);
                let var = self.scalar_var(dst).expect("checked");
                self.b.def_var(var, word);
            }
            Inst::Load {
                dst,
                mem,
                offset,
                add,
            } => {
                let (base, len, offsets) = self.operands(mem, offset);
                let (run, first) = self.contiguous(&offsets, add, base, len);
                let vars: [Variable; CHUNKS] =
                    std::array::from_fn(|_| self.b.declare_var(types::I32X4));
                let (fast, slow, merge) = self.split(run);
                self.b.switch_to_block(fast);
                for (j, var) in vars.iter().enumerate() {
                    let v = self.b.ins().load(types::I32X4, flags, first, 16 * j as i32);
                    self.b.def_var(*var, v);
                }
                self.b.ins().jump(merge, &[]);
                self.b.switch_to_block(slow);
                let zero = self.cx_field(std::mem::offset_of!(Cx, zero));
                for (j, var) in vars.iter().enumerate() {
                    let mut v = self.splat(0);
                    for k in 0..4u8 {
                        let (p, inside) = self.word_address(offsets[j], k, add, base, len);
                        let p = self.b.ins().select(inside, p, zero);
                        let word = self.b.ins().load(types::I32, flags, p, 0);
                        v = self.b.ins().insertlane(v, word, k);
                    }
                    self.b.def_var(*var, v);
                }
                self.b.ins().jump(merge, &[]);
                self.b.seal_block(merge);
                self.b.switch_to_block(merge);
                let out = vars.map(|var| self.b.use_var(var));
                self.store(dst, out);
            }
            Inst::StoreMem {
                mem,
                offset,
                add,
                src,
            } => {
                let (base, len, offsets) = self.operands(mem, offset);
                let values = self.load(src, types::I32X4);
                let (run, first) = self.contiguous(&offsets, add, base, len);
                // Every lane writes (the others' words must not be rewritten: another
                // workgroup may own them).
                let all = self
                    .b
                    .ins()
                    .icmp_imm_u(IntCC::Equal, effects, crate::FULL_MASK as i64);
                let run = self.b.ins().band(run, all);
                let (fast, slow, merge) = self.split(run);
                self.b.switch_to_block(fast);
                for (j, &v) in values.iter().enumerate() {
                    self.b.ins().store(flags, v, first, 16 * j as i32);
                }
                self.b.ins().jump(merge, &[]);
                self.b.switch_to_block(slow);
                let sink = self.cx_field(std::mem::offset_of!(Cx, sink));
                for j in 0..CHUNKS {
                    for k in 0..4u8 {
                        let lane = 4 * j as i64 + k as i64;
                        let (p, inside) = self.word_address(offsets[j], k, add, base, len);
                        let bit = self.b.ins().band_imm_u(effects, 1 << lane);
                        let on = self.b.ins().icmp_imm_u(IntCC::NotEqual, bit, 0);
                        let write = self.b.ins().band(on, inside);
                        let p = self.b.ins().select(write, p, sink);
                        let word = self.b.ins().extractlane(values[j], k);
                        self.b.ins().store(flags, word, p, 0);
                    }
                }
                self.b.ins().jump(merge, &[]);
                self.b.seal_block(merge);
                self.b.switch_to_block(merge);
            }
            _ => unreachable!("is_native_memory admits loads and stores only"),
        }
    }
}
