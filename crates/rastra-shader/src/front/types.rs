//! Type shapes for lowering: how many registers a naga type occupies (register layout) and
//! where its scalars live in a host-shareable buffer (memory layout, taken from naga's own
//! layout data: struct member offsets, array strides, vector alignment for matrix columns).
//! Part of the shader compiler (T3 shader units).

use naga::proc::Alignment;
use naga::{ArraySize, Module, TypeInner};

use crate::CompileError;

/// How a scalar's 32 bits are interpreted by arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    F,
    S,
    U,
    B,
}

pub(super) fn unsupported<T>(what: &str) -> Result<T, CompileError> {
    Err(CompileError::Unsupported(what.to_string()))
}

fn check_scalar(s: naga::Scalar) -> Result<Kind, CompileError> {
    use naga::ScalarKind as K;
    match (s.kind, s.width) {
        (K::Float, 4) => Ok(Kind::F),
        (K::Sint, 4) => Ok(Kind::S),
        (K::Uint, 4) => Ok(Kind::U),
        (K::Bool, _) => Ok(Kind::B),
        (K::Float, 2) => unsupported("f16"),
        (K::AbstractInt | K::AbstractFloat, _) => unsupported("abstract numeric type"),
        _ => unsupported("64-bit and 16-bit scalar types"),
    }
}

/// Scalar kind of a scalar, vector, matrix, atomic or value pointer.
pub(super) fn kind(inner: &TypeInner) -> Result<Kind, CompileError> {
    match *inner {
        TypeInner::Scalar(s)
        | TypeInner::Vector { scalar: s, .. }
        | TypeInner::Matrix { scalar: s, .. }
        | TypeInner::Atomic(s)
        | TypeInner::ValuePointer { scalar: s, .. } => check_scalar(s),
        _ => unsupported("arithmetic on a composite type"),
    }
}

/// Registers a value of this type occupies.
pub(super) fn words(module: &Module, inner: &TypeInner) -> Result<u32, CompileError> {
    Ok(match *inner {
        TypeInner::Scalar(s) | TypeInner::Atomic(s) => {
            check_scalar(s)?;
            1
        }
        TypeInner::Vector { size, scalar } => {
            check_scalar(scalar)?;
            size as u32
        }
        TypeInner::Matrix {
            columns,
            rows,
            scalar,
        } => {
            check_scalar(scalar)?;
            columns as u32 * rows as u32
        }
        TypeInner::Array { base, size, .. } => {
            let n = match size {
                ArraySize::Constant(n) => n.get(),
                ArraySize::Pending(_) => return unsupported("override-sized arrays"),
                ArraySize::Dynamic => return unsupported("runtime-sized array value"),
            };
            let w = words(module, &module.types[base].inner)?;
            w.checked_mul(n)
                .filter(|&t| t <= 1 << 20)
                .map_or_else(|| unsupported("arrays larger than 2^20 words"), Ok)?
        }
        TypeInner::Struct { ref members, .. } => {
            let mut total = 0;
            for m in members {
                total += words(module, &module.types[m.ty].inner)?;
            }
            total
        }
        TypeInner::Pointer { .. } | TypeInner::ValuePointer { .. } => {
            return unsupported("pointer stored in a variable");
        }
        TypeInner::Image { .. } | TypeInner::Sampler { .. } => {
            return unsupported("textures and samplers");
        }
        TypeInner::BindingArray { .. } => return unsupported("binding arrays"),
        TypeInner::AccelerationStructure { .. } | TypeInner::RayQuery { .. } => {
            return unsupported("ray tracing");
        }
        TypeInner::CooperativeMatrix { .. } => return unsupported("cooperative matrices"),
    })
}

/// Register offset of struct member `index`.
pub(super) fn member_word_offset(
    module: &Module,
    members: &[naga::StructMember],
    index: usize,
) -> Result<u32, CompileError> {
    let mut off = 0;
    for m in &members[..index] {
        off += words(module, &module.types[m.ty].inner)?;
    }
    Ok(off)
}

/// Byte distance between matrix columns in a host-shareable buffer: the column vector's
/// alignment (so `mat3x3<f32>` columns are 16 bytes apart).
pub(super) fn column_stride(rows: naga::VectorSize, scalar: naga::Scalar) -> u32 {
    (Alignment::from(rows) * Alignment::from_width(scalar.width))
        .round_up(rows as u32 * scalar.width as u32)
}

/// Byte offsets, in register order, of every scalar of a value of this type stored at byte
/// offset `base` of a host-shareable buffer.
pub(super) fn buffer_leaves(
    module: &Module,
    inner: &TypeInner,
    base: u32,
    out: &mut Vec<u32>,
) -> Result<(), CompileError> {
    match *inner {
        TypeInner::Scalar(_) | TypeInner::Atomic(_) => out.push(base),
        TypeInner::Vector { size, .. } => out.extend((0..size as u32).map(|i| base + 4 * i)),
        TypeInner::Matrix {
            columns,
            rows,
            scalar,
        } => {
            let cs = column_stride(rows, scalar);
            for c in 0..columns as u32 {
                out.extend((0..rows as u32).map(|r| base + c * cs + 4 * r));
            }
        }
        TypeInner::Array {
            base: elem,
            size,
            stride,
        } => {
            let n = match size {
                ArraySize::Constant(n) => n.get(),
                _ => return unsupported("loading a runtime-sized array by value"),
            };
            for i in 0..n {
                buffer_leaves(module, &module.types[elem].inner, base + i * stride, out)?;
            }
        }
        TypeInner::Struct { ref members, .. } => {
            for m in members {
                buffer_leaves(module, &module.types[m.ty].inner, base + m.offset, out)?;
            }
        }
        _ => return unsupported("non-host-shareable type in a buffer"),
    }
    Ok(())
}
