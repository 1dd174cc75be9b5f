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
    /// `dst` = the word at byte address `offset + add` of `mem`, or 0 when it is out of bounds.
    /// `offset` absent means 0. Every host-shareable WGSL type is word-aligned.
    Load {
        dst: Reg,
        mem: Mem,
        offset: Option<Reg>,
        add: u32,
    },
    /// The word at byte address `offset + add` of `mem` = `src`, for each lane that is active
    /// and not a helper, in lane order; out-of-bounds stores are dropped.
    StoreMem {
        mem: Mem,
        offset: Option<Reg>,
        add: u32,
        src: Reg,
    },
    /// Atomic read-modify-write of the word at `offset + add` of `mem` with `value`, for each
    /// lane that is active and not a helper, in lane order. `dst` = the old value (0 for an
    /// out-of-bounds word, which is left alone).
    Atomic {
        op: AtomicOp,
        mem: Mem,
        offset: Option<Reg>,
        add: u32,
        dst: Reg,
        value: Reg,
    },
    /// `atomicCompareExchangeWeak` (never fails spuriously): where the word equals `compare`
    /// it becomes `value`. `dst` = old value, `dst + 1` = exchanged (0/1).
    CompareExchange {
        mem: Mem,
        offset: Option<Reg>,
        add: u32,
        dst: Reg,
        compare: Reg,
        value: Reg,
    },
    /// `dst` = byte length of buffer `slot` (saturated to u32).
    BufferLen {
        dst: Reg,
        slot: u32,
    },
    /// Workgroup control barrier (`workgroupBarrier`, `storageBarrier`, the two barriers of
    /// `workgroupUniformLoad`): the warp waits until every unfinished warp of its workgroup
    /// has reached a barrier. Outside a workgroup it does nothing.
    Barrier,
    /// `dst` = the lane's index in its warp (`subgroup_invocation_id`).
    LaneId {
        dst: Reg,
    },
    /// `subgroupBallot`: `dst..dst + 4` = mask of active lanes where `pred != 0`, 32 lanes
    /// a word, low lanes first (a warp has [`crate::WARP_LANES`] ≤ 64 lanes: `dst + 2` and
    /// `dst + 3` are zero).
    Ballot {
        dst: Reg,
        pred: Reg,
    },
    /// Subgroup reduction or scan of `src` with `op` over the active lanes, in lane order.
    /// `identity` is `op`'s neutral value (the result of an empty exclusive scan).
    SubgroupOp {
        op: BinOp,
        scan: Scan,
        identity: u32,
        dst: Reg,
        src: Reg,
    },
    /// `dst` = `src` read from another lane chosen by `mode` and `index` (index ignored by
    /// `BroadcastFirst`). A source lane outside the warp or not active gives 0.
    Shuffle {
        mode: ShuffleMode,
        dst: Reg,
        src: Reg,
        index: Reg,
    },
    /// A texture-unit request (T4): sample, gather, load or query; see [`TexOp`].
    Texture(Box<TexInst>),
    /// A storage-texture access, lane by lane; see [`ImageOp`].
    Image(Box<ImageInst>),
}

/// A storage-texture instruction on `Program::storage_textures[image]`. Coordinates are
/// i32 (u32 values saturated by the lowering); `layer` is the array layer of arrayed
/// views.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageInst {
    pub op: ImageOp,
    pub image: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ImageOp {
    /// `dst..dst + 4` = the texel at `coords` (zero outside the view).
    Load {
        dst: Reg,
        coords: Reg,
        coord_count: u32,
        layer: Option<Reg>,
    },
    /// The texel at `coords` = `value..value + 4` (a side effect: active, non-helper lanes
    /// only, in lane order; dropped outside the view).
    Store {
        coords: Reg,
        coord_count: u32,
        layer: Option<Reg>,
        value: Reg,
    },
    /// `dst..dst + components` = the view's width, height, depth.
    Size { dst: Reg, components: u32 },
    /// `dst` = the view's layer count.
    NumLayers { dst: Reg },
}

/// A texture instruction: quads of lanes (lanes 4q…4q+3) go to the texture unit together,
/// so implicit LODs come from the quad's own coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct TexInst {
    pub op: TexOp,
    /// `dst..dst + 4`: the result (one register for depth samples, compares and scalar
    /// queries; the remaining registers are written with zeros).
    pub dst: Reg,
    /// Index into `Program::textures` / `Resources::textures`.
    pub texture: u32,
    /// Whether helper lanes need the results (`quad_mode`: they reach a derivative, a
    /// cross-lane operation, an implicit-LOD sample or control flow). When false, texels are
    /// fetched only for the lanes that are not helpers, and helper lanes read zeros. Set
    /// when the program is laid out as SIMT code; the front end sets it true.
    pub helper_results: bool,
}

/// What a [`TexInst`] asks the texture unit for.
#[derive(Clone, Debug, PartialEq)]
pub enum TexOp {
    /// textureSample* and textureGather*: `coords..coords + coord_count` are f32.
    Sample {
        sampler: u32,
        coords: Reg,
        coord_count: u32,
        /// i32 layer (u32 indices saturated to `i32::MAX` by the lowering).
        array_index: Option<Reg>,
        /// `coord_count` i32 registers holding a constant texel offset.
        offset: Option<Reg>,
        lod: SampleLod,
        depth_ref: Option<Reg>,
        /// Gather this component (0–3) of the footprint's four texels.
        gather: Option<u32>,
        /// textureSampleBaseClampToEdge: coordinates clamped half a texel inside level 0.
        clamp_to_edge: bool,
    },
    /// textureLoad: `coords..coords + coord_count` and the optional operands are i32.
    Load {
        coords: Reg,
        coord_count: u32,
        array_index: Option<Reg>,
        level: Option<Reg>,
        sample: Option<Reg>,
    },
    /// textureDimensions (`components` of width, height, depth/layers) at `level` (u32).
    Size {
        level: Option<Reg>,
        components: u32,
    },
    NumLevels,
    NumLayers,
    NumSamples,
}

/// How a sample chooses its level of detail (WGSL textureSample / Bias / Level / Grad).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SampleLod {
    /// From the quad's coordinates (fragment stage).
    Implicit,
    /// Implicit plus the f32 bias in the register.
    Bias(Reg),
    /// The f32 level in the register.
    Level(Reg),
    /// Level 0.
    Zero,
    /// Explicit gradients: `coord_count` f32 registers each.
    Grad { ddx: Reg, ddy: Reg },
}

/// A memory `Load`/`StoreMem`/`Atomic` address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mem {
    /// Buffer binding `slot`: `Resources::buffers[slot]`, WGSL host-shareable layout.
    Buffer(u32),
    /// The workgroup's memory (compute only): `var<workgroup>` variables, packed one word per
    /// scalar in register order at the byte offsets the lowering assigned.
    Workgroup,
}

/// Atomic read-modify-write operations (WGSL `atomicAdd` … `atomicExchange`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    SMin,
    SMax,
    UMin,
    UMax,
    Exchange,
}

/// Which prefix of the active lanes a [`Inst::SubgroupOp`] combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scan {
    /// All active lanes; every lane gets the same result.
    Reduce,
    /// Active lanes up to and including this one.
    Inclusive,
    /// Active lanes before this one.
    Exclusive,
}

/// Source-lane selection of [`Inst::Shuffle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleMode {
    /// The lowest active lane.
    BroadcastFirst,
    /// Lane `index` (`subgroupBroadcast`, `subgroupShuffle`).
    Index,
    /// Lane `self ^ index`.
    Xor,
    /// Lane `self - index`.
    Up,
    /// Lane `self + index`.
    Down,
    /// Lane `index` of this lane's quad (`quadBroadcast`; `quadSwap*` use `Xor` 1, 2, 3).
    QuadIndex,
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

/// Calls `read(first, count)` for every register range `inst` reads and `write` for every
/// range it writes (masked writes count as reads too: the lanes they leave keep old values).
pub(crate) fn inst_regs(
    inst: &Inst,
    read: &mut impl FnMut(Reg, u32),
    write: &mut impl FnMut(Reg, u32),
) {
    let opt = |r: Option<Reg>, n: u32, read: &mut dyn FnMut(Reg, u32)| {
        if let Some(r) = r {
            read(r, n)
        }
    };
    match inst {
        Inst::Const { dst, .. } | Inst::BufferLen { dst, .. } | Inst::LaneId { dst } => {
            write(*dst, 1)
        }
        Inst::Mov { dst, src }
        | Inst::Unary { dst, a: src, .. }
        | Inst::Derivative { dst, src, .. }
        | Inst::SubgroupOp { dst, src, .. } => {
            read(*src, 1);
            write(*dst, 1);
        }
        Inst::Store { dst, src } => {
            read(*src, 1);
            read(*dst, 1);
            write(*dst, 1);
        }
        Inst::LoadIndexed {
            dst,
            base,
            len,
            index,
            ..
        } => {
            read(*base, *len);
            read(*index, 1);
            write(*dst, 1);
        }
        Inst::StoreIndexed {
            base,
            len,
            index,
            src,
            ..
        } => {
            read(*index, 1);
            read(*src, 1);
            read(*base, *len);
            write(*base, *len);
        }
        Inst::Binary { dst, a, b, .. } => {
            read(*a, 1);
            read(*b, 1);
            write(*dst, 1);
        }
        Inst::Ternary { dst, a, b, c, .. } => {
            read(*a, 1);
            read(*b, 1);
            read(*c, 1);
            write(*dst, 1);
        }
        Inst::Load { dst, offset, .. } => {
            opt(*offset, 1, read);
            write(*dst, 1);
        }
        Inst::StoreMem { offset, src, .. } => {
            opt(*offset, 1, read);
            read(*src, 1);
        }
        Inst::Atomic {
            dst, offset, value, ..
        } => {
            opt(*offset, 1, read);
            read(*value, 1);
            write(*dst, 1);
        }
        Inst::CompareExchange {
            dst,
            offset,
            compare,
            value,
            ..
        } => {
            opt(*offset, 1, read);
            read(*compare, 1);
            read(*value, 1);
            write(*dst, 2);
        }
        Inst::Barrier => {}
        Inst::Ballot { dst, pred } => {
            read(*pred, 1);
            write(*dst, 4);
        }
        Inst::Shuffle {
            dst, src, index, ..
        } => {
            read(*src, 1);
            read(*index, 1);
            write(*dst, 1);
        }
        Inst::Texture(t) => {
            match &t.op {
                // Exactly what `texture::execute` reads: at most three coordinate, offset
                // and gradient components.
                TexOp::Sample {
                    coords,
                    coord_count,
                    array_index,
                    offset,
                    lod,
                    depth_ref,
                    ..
                } => {
                    let n = (*coord_count).min(3);
                    read(*coords, n);
                    opt(*array_index, 1, read);
                    opt(*offset, n, read);
                    opt(*depth_ref, 1, read);
                    match *lod {
                        SampleLod::Bias(r) | SampleLod::Level(r) => read(r, 1),
                        SampleLod::Grad { ddx, ddy } => {
                            read(ddx, n);
                            read(ddy, n);
                        }
                        SampleLod::Implicit | SampleLod::Zero => {}
                    }
                }
                TexOp::Load {
                    coords,
                    coord_count,
                    array_index,
                    level,
                    sample,
                } => {
                    read(*coords, (*coord_count).min(3));
                    opt(*array_index, 1, read);
                    opt(*level, 1, read);
                    opt(*sample, 1, read);
                }
                TexOp::Size { level, .. } => opt(*level, 1, read),
                TexOp::NumLevels | TexOp::NumLayers | TexOp::NumSamples => {}
            }
            write(t.dst, 4);
        }
        Inst::Image(i) => match &i.op {
            ImageOp::Load {
                dst, coords, layer, ..
            } => {
                read(*coords, 4);
                opt(*layer, 1, read);
                write(*dst, 4);
            }
            ImageOp::Store {
                coords,
                layer,
                value,
                ..
            } => {
                read(*coords, 4);
                opt(*layer, 1, read);
                read(*value, 4);
            }
            ImageOp::Size { dst, components } => write(*dst, *components),
            ImageOp::NumLayers { dst } => write(*dst, 1),
        },
    }
}
