//! Subgroup and quad operations lowered to warp-wide IR instructions: a subgroup is a warp of
//! [`crate::WARP_LANES`] lanes, and only the lanes active at the operation take part (T3
//! shader units: cross-lane operations of a SIMT core; T8 quads for `quad*`).

use naga::{CollectiveOperation, Expression, GatherMode, Handle, SubgroupOperation as S};

use super::types::{self, Kind};
use super::{Lowerer, R, Scope, Value};
use crate::ir::{BinOp, Inst, Reg, Scan, ShuffleMode};

impl<'m> Lowerer<'m> {
    /// `subgroupAdd` … `subgroupExclusiveMul`, `subgroupAll`/`Any`, per component.
    pub(super) fn subgroup_collective(
        &mut self,
        scope: &mut Scope<'m>,
        op: S,
        collective: CollectiveOperation,
        argument: Handle<Expression>,
    ) -> R<Value> {
        let k = types::kind(self.ty(scope, argument))?;
        let a = self.comps(scope, argument)?;
        let f = k == Kind::F;
        let (bop, identity) = match (op, k) {
            (S::All, _) => (BinOp::And, 1),
            (S::Any, _) => (BinOp::Or, 0),
            (S::Add, Kind::F) => (BinOp::FAdd, 0.0f32.to_bits()),
            (S::Add, _) => (BinOp::IAdd, 0),
            (S::Mul, Kind::F) => (BinOp::FMul, 1.0f32.to_bits()),
            (S::Mul, _) => (BinOp::IMul, 1),
            (S::Min, Kind::F) => (BinOp::FMin, f32::INFINITY.to_bits()),
            (S::Min, Kind::S) => (BinOp::SMin, i32::MAX as u32),
            (S::Min, _) => (BinOp::UMin, u32::MAX),
            (S::Max, Kind::F) => (BinOp::FMax, f32::NEG_INFINITY.to_bits()),
            (S::Max, Kind::S) => (BinOp::SMax, i32::MIN as u32),
            (S::Max, _) => (BinOp::UMax, 0),
            (S::And, Kind::B) => (BinOp::And, 1),
            (S::And, _) => (BinOp::And, u32::MAX),
            (S::Or, _) => (BinOp::Or, 0),
            (S::Xor, _) => (BinOp::Xor, 0),
        };
        debug_assert!(!f || matches!(op, S::Add | S::Mul | S::Min | S::Max));
        let scan = match collective {
            CollectiveOperation::Reduce => Scan::Reduce,
            CollectiveOperation::InclusiveScan => Scan::Inclusive,
            CollectiveOperation::ExclusiveScan => Scan::Exclusive,
        };
        let first = self.alloc(a.len() as u32)?;
        for (c, &src) in a.iter().enumerate() {
            self.emit(Inst::SubgroupOp {
                op: bop,
                scan,
                identity,
                dst: first.offset(c as u32),
                src,
            });
        }
        Ok(Value::Regs {
            first,
            words: a.len() as u32,
        })
    }

    /// `subgroupBroadcast*`, `subgroupShuffle*`, `quadBroadcast`, `quadSwap*`, per component.
    pub(super) fn subgroup_gather(
        &mut self,
        scope: &mut Scope<'m>,
        mode: GatherMode,
        argument: Handle<Expression>,
    ) -> R<Value> {
        let a = self.comps(scope, argument)?;
        let (mode, index) = match mode {
            GatherMode::BroadcastFirst => (ShuffleMode::BroadcastFirst, self.konst(0)?),
            GatherMode::Broadcast(i) | GatherMode::Shuffle(i) => {
                (ShuffleMode::Index, self.reg1(scope, i)?)
            }
            GatherMode::ShuffleDown(i) => (ShuffleMode::Down, self.reg1(scope, i)?),
            GatherMode::ShuffleUp(i) => (ShuffleMode::Up, self.reg1(scope, i)?),
            GatherMode::ShuffleXor(i) => (ShuffleMode::Xor, self.reg1(scope, i)?),
            GatherMode::QuadBroadcast(i) => (ShuffleMode::QuadIndex, self.reg1(scope, i)?),
            GatherMode::QuadSwap(d) => (
                ShuffleMode::Xor,
                self.konst(match d {
                    naga::Direction::X => 1,
                    naga::Direction::Y => 2,
                    naga::Direction::Diagonal => 3,
                })?,
            ),
        };
        let first: Reg = self.alloc(a.len() as u32)?;
        for (c, &src) in a.iter().enumerate() {
            self.emit(Inst::Shuffle {
                mode,
                dst: first.offset(c as u32),
                src,
                index,
            });
        }
        Ok(Value::Regs {
            first,
            words: a.len() as u32,
        })
    }
}
