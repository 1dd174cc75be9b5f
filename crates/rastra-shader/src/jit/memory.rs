//! Buffer and workgroup-memory loads and stores in compiled code (`Inst::Load`,
//! `Inst::StoreMem`), with the interpreter's semantics (`warp::exec_inst`): a word at byte
//! address `offset + add` (64-bit arithmetic, the word index is the address / 4), loads of
//! words outside the memory give 0, stores outside it are dropped; a load reads every lane,
//! a store writes the lanes allowed side effects, in lane order.
//!
//! Each lane's address is checked and then redirected rather than branched around: an
//! out-of-bounds load reads [`Cx::zero`], a dropped store writes [`Cx::sink`]. A memory
//! instruction is generated for all four chunks at once, lane 0 to 15, never interleaved
//! with another instruction's chunks, so accesses happen in the interpreter's order.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

use super::{CHUNKS, Cx, Gen, NATIVE_BUFFERS};
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
        let o = self.b.ins().uextend(self.ptr, o);
        let addr = self.b.ins().iadd_imm_u(o, add as i64);
        let index = self.b.ins().ushr_imm_u(addr, 2);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, index, len);
        let bytes = self.b.ins().ishl_imm_u(index, 2);
        let p = self.b.ins().iadd(base, bytes);
        (p, inside)
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
            } => {
                let (base, len, offsets) = self.operands(mem, offset);
                let zero = self.cx_field(std::mem::offset_of!(Cx, zero));
                let out = std::array::from_fn(|j| {
                    let mut v = self.splat(0);
                    for k in 0..4u8 {
                        let (p, inside) = self.word_address(offsets[j], k, add, base, len);
                        let p = self.b.ins().select(inside, p, zero);
                        let word = self.b.ins().load(types::I32, flags, p, 0);
                        v = self.b.ins().insertlane(v, word, k);
                    }
                    v
                });
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
            }
            _ => unreachable!("is_native_memory admits loads and stores only"),
        }
    }
}
