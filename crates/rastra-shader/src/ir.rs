//! rastra IR: the scalar, structured program a shader core executes (T3 shader units,
//! ATTILA's unified shader ISA).
//!
//! Plain data. Every register ([`Reg`]) holds one 32-bit value per lane; vectors, matrices,
//! structs and arrays occupy consecutive registers (matrices column-major, structs in member
//! order). Function-local variables are registers too. Control flow stays structured
//! ([`Node`]); the warp interpreter turns it into execution masks.
//!
//! Invariants (established by the lowering, trusted by the interpreters):
//! - every register index is `< Program::num_regs`;
//! - `Break` appears only inside a `Loop` or `Switch`, `Continue` only inside a `Loop`,
//!   and `Return` only inside a `Region` (the entry point body is a `Region`);
//! - writes to registers that hold variables or outputs use the masked forms (`Store`,
//!   `StoreIndexed`); all other instructions write temporaries and may write every lane.

pub use crate::alu::{BinOp, TerOp, UnOp};

/// A register index: one 32-bit value per lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(pub u32);

impl Reg {
    /// The register `k` places after this one.
    pub fn offset(self, k: u32) -> Reg {
        Reg(self.0 + k)
    }
}

/// Which neighbour a derivative differences against (T8: 2×2 quads).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DerivAxis {
    X,
    Y,
}

/// One straight-line instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Inst {
    /// `dst = value` on every lane.
    Const {
        dst: Reg,
        value: u32,
    },
    /// `dst = src` on every lane (temporaries).
    Mov {
        dst: Reg,
        src: Reg,
    },
    /// `dst = src` on active lanes only (variables, outputs, call results).
    Store {
        dst: Reg,
        src: Reg,
    },
    /// `dst = regs[base + min(index + add, len - 1)]` per lane: dynamic indexing into a
    /// `len`-register variable or value.
    LoadIndexed {
        dst: Reg,
        base: Reg,
        len: u32,
        index: Reg,
        add: u32,
    },
    /// `regs[base + min(index + add, len - 1)] = src` on active lanes.
    StoreIndexed {
        base: Reg,
        len: u32,
        index: Reg,
        add: u32,
        src: Reg,
    },
    Unary {
        op: UnOp,
        dst: Reg,
        a: Reg,
    },
    Binary {
        op: BinOp,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Ternary {
        op: TerOp,
        dst: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    /// Quad derivative of `src` (f32). Coarse: one value for the whole quad; fine: per row
    /// (X) or per column (Y).
    Derivative {
        axis: DerivAxis,
        fine: bool,
        dst: Reg,
        src: Reg,
    },
    /// `dst` = the 4 bytes at byte address `offset + add` (little-endian) of buffer `slot`,
    /// or 0 when any of them is out of bounds. `offset` absent means 0.
    LoadBuffer {
        dst: Reg,
        slot: u32,
        offset: Option<Reg>,
        add: u32,
    },
    /// `dst` = byte length of buffer `slot` (saturated to u32).
    BufferLen {
        dst: Reg,
        slot: u32,
    },
}

/// One case of a [`Node::Switch`].
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Selector value (i32 selectors as their bit pattern); `None` is `default`.
    pub value: Option<u32>,
    pub body: Block,
    /// Continue into the next case's body (naga's model of multiple selectors per case).
    pub fall_through: bool,
}

/// A structured program node.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Inst(Inst),
    /// Lanes where `cond != 0` run `accept`, the others `reject`.
    If {
        cond: Reg,
        accept: Block,
        reject: Block,
    },
    /// Runs `body` then `continuing` until every lane has broken out (or returned); after
    /// `continuing`, lanes where `break_if != 0` leave.
    Loop {
        body: Block,
        continuing: Block,
        break_if: Option<Reg>,
    },
    /// Each lane enters the first case whose value equals `selector`, else the default case.
    Switch {
        selector: Reg,
        cases: Vec<Case>,
    },
    /// An inlined function call: `Return` inside exits this region only.
    Region(Block),
    /// Leave the innermost loop or switch.
    Break,
    /// Go to the innermost loop's `continuing`.
    Continue,
    /// Leave the innermost region.
    Return,
    /// WGSL `discard`: the lane becomes a helper (demote) and keeps executing so quad
    /// derivatives stay defined; its outputs are dead.
    Kill,
}

/// A sequence of nodes.
pub type Block = Vec<Node>;
