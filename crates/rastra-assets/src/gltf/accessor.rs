//! Accessor decoding: typed, bounds-checked reads of glTF buffer data.
//!
//! Follows glTF 2.0 §3.6.2 (accessors): §3.6.2.2 data types and the normalised-integer
//! conversions, §3.6.2.3 sparse accessors, §3.6.2.4 the rule that an accessor must fit its
//! buffer view (`byteOffset + stride × (count − 1) + elementSize ≤ byteLength`), and the
//! per-semantic type table of §3.7.2.1.
//!
//! Every accessor is first copied into a tightly packed byte array (strides removed, sparse
//! substitutions applied), then decoded. Checked: view and accessor ranges, strides, sparse
//! index order and range, accessor type/component type for the semantic, NaN and infinities.
//! Not checked, because reads are bytewise and it cannot cause harm: §3.6.2.4 alignment.

use ::gltf::json;
use json::accessor::{Accessor, ComponentType, Type};
use json::validation::Checked;

use crate::error::{Problem, invalid};

/// Zero-initialised sparse accessors (no `bufferView`) allocate `count` elements that the file
/// does not pay for in bytes; this caps that allocation.
const MAX_ZERO_FILLED_BYTES: usize = 256 << 20;

/// What an accessor is used for; decides which types §3.7.2.1 allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Usage {
    Position,
    Normal,
    Tangent,
    TexCoord,
    Color,
    Joints,
    Weights,
    /// An application-specific `_NAME` attribute.
    Custom,
    Indices,
}

impl Usage {
    fn name(self) -> &'static str {
        match self {
            Usage::Position => "POSITION",
            Usage::Normal => "NORMAL",
            Usage::Tangent => "TANGENT",
            Usage::TexCoord => "TEXCOORD_n",
            Usage::Color => "COLOR_n",
            Usage::Joints => "JOINTS_n",
            Usage::Weights => "WEIGHTS_n",
            Usage::Custom => "application-specific attribute",
            Usage::Indices => "indices",
        }
    }

    /// The allowed `(types, component types)` for this usage, §3.7.2.1 and §3.7.2.1's indices
    /// rule. `(ComponentType, normalized)` pairs.
    fn allowed(self) -> (&'static [Type], &'static [(ComponentType, bool)]) {
        use ComponentType::*;
        const FLOAT: &[(ComponentType, bool)] = &[(F32, false)];
        const FLOAT_OR_UNORM: &[(ComponentType, bool)] = &[(F32, false), (U8, true), (U16, true)];
        match self {
            Usage::Position | Usage::Normal => (&[Type::Vec3], FLOAT),
            Usage::Tangent => (&[Type::Vec4], FLOAT),
            Usage::TexCoord => (&[Type::Vec2], FLOAT_OR_UNORM),
            Usage::Color => (&[Type::Vec3, Type::Vec4], FLOAT_OR_UNORM),
            Usage::Joints => (&[Type::Vec4], &[(U8, false), (U16, false)]),
            Usage::Weights => (&[Type::Vec4], FLOAT_OR_UNORM),
            Usage::Custom => (
                &[
                    Type::Scalar,
                    Type::Vec2,
                    Type::Vec3,
                    Type::Vec4,
                    Type::Mat2,
                    Type::Mat3,
                    Type::Mat4,
                ],
                &[
                    (F32, false),
                    (I8, false),
                    (I8, true),
                    (U8, false),
                    (U8, true),
                    (I16, false),
                    (I16, true),
                    (U16, false),
                    (U16, true),
                ],
            ),
            Usage::Indices => (&[Type::Scalar], &[(U8, false), (U16, false), (U32, false)]),
        }
    }
}

fn type_name(ty: Type) -> &'static str {
    match ty {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

fn component_name(component: ComponentType, normalized: bool) -> String {
    let name = match component {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    };
    if normalized {
        format!("normalized {name}")
    } else {
        name.to_string()
    }
}

/// `count` elements of `element_size` bytes in buffer view `view`, the first at `offset`, one
/// every `stride` bytes (tightly packed when `None`).
struct Span {
    view: usize,
    offset: u64,
    stride: Option<usize>,
    element_size: usize,
    count: usize,
}

/// Reads accessors of one document against its loaded buffers.
pub(crate) struct Reader<'a> {
    pub root: &'a json::Root,
    /// One entry per `root.buffers`, truncated to `byteLength` (see `container::load_buffers`).
    pub buffers: &'a [Vec<u8>],
}

/// An accessor's shape once its JSON enums are known to be valid.
struct Shape {
    ty: Type,
    component: ComponentType,
    normalized: bool,
    count: usize,
}

impl Shape {
    fn dims(&self) -> usize {
        self.ty.multiplicity()
    }
    fn element_size(&self) -> usize {
        self.component.size() * self.dims()
    }
}

impl<'a> Reader<'a> {
    fn accessor(&self, index: usize) -> Result<&'a Accessor, Problem> {
        match self.root.accessors.get(index) {
            Some(accessor) => Ok(accessor),
            None => invalid!(
                "accessor {index} does not exist (the file has {})",
                self.root.accessors.len()
            ),
        }
    }

    fn shape(&self, index: usize) -> Result<Shape, Problem> {
        let accessor = self.accessor(index)?;
        let (Checked::Valid(ty), Checked::Valid(component)) =
            (&accessor.type_, &accessor.component_type)
        else {
            return invalid!("accessor {index} has an invalid type or componentType");
        };
        Ok(Shape {
            ty: *ty,
            component: component.0,
            normalized: accessor.normalized,
            count: usize::try_from(accessor.count.0).unwrap_or(usize::MAX),
        })
    }

    /// The element count of accessor `index`, without reading data.
    pub fn count(&self, index: usize) -> Result<usize, Problem> {
        Ok(self.shape(index)?.count)
    }

    /// Checks that accessor `index` has a type and component type §3.7.2.1 allows for `usage`.
    pub fn check_usage(&self, index: usize, usage: Usage) -> Result<(), Problem> {
        let shape = self.shape(index)?;
        let (types, components) = usage.allowed();
        if types.contains(&shape.ty) && components.contains(&(shape.component, shape.normalized)) {
            return Ok(());
        }
        let allowed_types: Vec<_> = types.iter().map(|&t| type_name(t)).collect();
        let allowed_components: Vec<_> = components
            .iter()
            .map(|&(c, n)| component_name(c, n))
            .collect();
        invalid!(
            "{} uses accessor {index} of type {} {}; glTF 2.0 §3.7.2.1 allows {} of {}",
            usage.name(),
            type_name(shape.ty),
            component_name(shape.component, shape.normalized),
            allowed_types.join("/"),
            allowed_components.join(", ")
        )
    }

    /// Reads a float-valued attribute as `N`-component vectors, after checking its type for
    /// `usage`. Integer components are converted per §3.6.2.2 (normalised or not).
    /// Rejects NaN and infinities (§3.6.2.2).
    pub fn vectors<const N: usize>(
        &self,
        index: usize,
        usage: Usage,
    ) -> Result<Vec<[f32; N]>, Problem> {
        self.check_usage(index, usage)?;
        let shape = self.shape(index)?;
        if shape.dims() != N {
            return invalid!(
                "{} accessor {index} is {}, expected {N} components",
                usage.name(),
                type_name(shape.ty)
            );
        }
        let bytes = self.packed(index, &shape, true)?;
        let size = shape.component.size();
        let mut out = Vec::with_capacity(shape.count);
        for (element, chunk) in bytes.chunks_exact(size * N).enumerate() {
            let mut value = [0.0f32; N];
            for (slot, component) in value.iter_mut().zip(chunk.chunks_exact(size)) {
                *slot = decode_float(shape.component, shape.normalized, component);
            }
            if value.iter().any(|v| !v.is_finite()) {
                return invalid!(
                    "{} accessor {index} element {element} is {value:?}; glTF 2.0 §3.6.2.2 \
                     forbids NaN and infinities",
                    usage.name()
                );
            }
            out.push(value);
        }
        Ok(out)
    }

    /// Reads `COLOR_n` as RGBA; VEC3 colours get alpha 1 (§3.7.2.1).
    pub fn colors(&self, index: usize) -> Result<Vec<[f32; 4]>, Problem> {
        self.check_usage(index, Usage::Color)?;
        if self.shape(index)?.dims() == 3 {
            Ok(self
                .vectors::<3>(index, Usage::Color)?
                .into_iter()
                .map(|[r, g, b]| [r, g, b, 1.0])
                .collect())
        } else {
            self.vectors::<4>(index, Usage::Color)
        }
    }

    /// Reads a primitive's `indices` accessor (SCALAR unsigned byte/short/int).
    pub fn indices(&self, index: usize) -> Result<Vec<u32>, Problem> {
        self.check_usage(index, Usage::Indices)?;
        let shape = self.shape(index)?;
        // §3.6.2.1: only vertex attributes are strided; indices are tightly packed.
        let bytes = self.packed(index, &shape, false)?;
        Ok(bytes
            .chunks_exact(shape.component.size())
            .map(|b| decode_uint(shape.component, b))
            .collect())
    }

    /// The bytes of buffer view `view`, and its `byteStride`.
    pub fn view(&self, view: usize) -> Result<(&'a [u8], Option<usize>), Problem> {
        let Some(json_view) = self.root.buffer_views.get(view) else {
            return invalid!("bufferView {view} does not exist");
        };
        let buffer_index = json_view.buffer.value();
        let Some(buffer) = self.buffers.get(buffer_index) else {
            return invalid!("bufferView {view} refers to missing buffer {buffer_index}");
        };
        let start = json_view.byte_offset.map_or(0, |o| o.0);
        let length = json_view.byte_length.0;
        let end = start.saturating_add(length);
        if end > buffer.len() as u64 {
            return invalid!(
                "bufferView {view} spans bytes {start}..{end} of buffer {buffer_index}, which is \
                 only {} bytes long",
                buffer.len()
            );
        }
        Ok((
            &buffer[start as usize..end as usize],
            json_view.byte_stride.map(|s| s.0),
        ))
    }

    /// The elements `span` describes, appended to `out` tightly packed.
    fn gather(&self, what: &str, span: Span, out: &mut Vec<u8>) -> Result<(), Problem> {
        let Span {
            view,
            offset,
            stride,
            element_size,
            count,
        } = span;
        let (data, _) = self.view(view)?;
        let stride = stride.unwrap_or(element_size);
        if stride < element_size {
            return invalid!(
                "{what}: bufferView {view} byteStride {stride} is smaller than the {element_size}-byte \
                 element"
            );
        }
        if count == 0 {
            return Ok(());
        }
        let needed = (stride as u128) * (count as u128 - 1) + element_size as u128 + offset as u128;
        if needed > data.len() as u128 {
            return invalid!(
                "{what}: {count} elements of {element_size} bytes (stride {stride}) from byte \
                 {offset} need {needed} bytes, but bufferView {view} is {} bytes (glTF 2.0 §3.6.2.4)",
                data.len()
            );
        }
        let data = &data[offset as usize..];
        if stride == element_size {
            out.extend_from_slice(&data[..count * element_size]);
        } else {
            out.reserve(count * element_size);
            for element in data.chunks(stride).take(count) {
                out.extend_from_slice(&element[..element_size]);
            }
        }
        Ok(())
    }

    /// Accessor `index` as tightly packed element bytes, sparse substitution applied.
    fn packed(&self, index: usize, shape: &Shape, strided: bool) -> Result<Vec<u8>, Problem> {
        let accessor = self.accessor(index)?;
        let what = format!("accessor {index}");
        if matches!(shape.ty, Type::Mat2 | Type::Mat3 | Type::Mat4) {
            // Column padding rules (§3.6.2.4) would apply; no drawn attribute is a matrix.
            return Err(Problem::Unsupported(format!(
                "{what}: matrix accessors are not read"
            )));
        }
        let element_size = shape.element_size();
        let mut out = Vec::new();
        match accessor.buffer_view {
            Some(view) => {
                let stride = if strided {
                    self.view(view.value())?.1
                } else {
                    None
                };
                let offset = accessor.byte_offset.map_or(0, |o| o.0);
                let span = Span {
                    view: view.value(),
                    offset,
                    stride,
                    element_size,
                    count: shape.count,
                };
                self.gather(&what, span, &mut out)?;
            }
            None => {
                // §3.6.2.3: without a bufferView a sparse accessor starts as zeros.
                let bytes = shape
                    .count
                    .checked_mul(element_size)
                    .filter(|&b| b <= MAX_ZERO_FILLED_BYTES)
                    .ok_or_else(|| {
                        Problem::Unsupported(format!(
                            "{what}: {} zero-initialised elements is more than rastra allocates",
                            shape.count
                        ))
                    })?;
                out.resize(bytes, 0);
            }
        }
        if let Some(sparse) = &accessor.sparse {
            self.apply_sparse(&what, sparse, shape, &mut out)?;
        }
        Ok(out)
    }

    /// §3.6.2.3: overwrite the elements named by `sparse.indices` with `sparse.values`.
    fn apply_sparse(
        &self,
        what: &str,
        sparse: &json::accessor::sparse::Sparse,
        shape: &Shape,
        out: &mut [u8],
    ) -> Result<(), Problem> {
        let what = format!("{what} sparse");
        let count = usize::try_from(sparse.count.0).unwrap_or(usize::MAX);
        if count > shape.count {
            return invalid!(
                "{what}: count {count} exceeds the accessor's {} elements",
                shape.count
            );
        }
        let Checked::Valid(index_type) = &sparse.indices.component_type else {
            return invalid!("{what}: invalid indices componentType");
        };
        let index_component = index_type.0;
        if !matches!(
            index_component,
            ComponentType::U8 | ComponentType::U16 | ComponentType::U32
        ) {
            return invalid!("{what}: indices must be unsigned byte, short or int");
        }
        let mut index_bytes = Vec::new();
        let span = Span {
            view: sparse.indices.buffer_view.value(),
            offset: sparse.indices.byte_offset.0,
            stride: None,
            element_size: index_component.size(),
            count,
        };
        self.gather(&what, span, &mut index_bytes)?;
        let element_size = shape.element_size();
        let mut values = Vec::new();
        let span = Span {
            view: sparse.values.buffer_view.value(),
            offset: sparse.values.byte_offset.0,
            stride: None,
            element_size,
            count,
        };
        self.gather(&what, span, &mut values)?;
        let mut previous: Option<u32> = None;
        for (k, raw) in index_bytes.chunks_exact(index_component.size()).enumerate() {
            let target = decode_uint(index_component, raw);
            if previous.is_some_and(|p| target <= p) || target as usize >= shape.count {
                return invalid!(
                    "{what}: index {target} (entry {k}) is out of order or not below the \
                     accessor's {} elements",
                    shape.count
                );
            }
            previous = Some(target);
            let at = target as usize * element_size;
            out[at..at + element_size]
                .copy_from_slice(&values[k * element_size..(k + 1) * element_size]);
        }
        Ok(())
    }
}

/// One component as a float: §3.6.2.2 for floats, the normalisation equations for `normalized`
/// integers (signed values clamp at −1), plain conversion otherwise.
fn decode_float(component: ComponentType, normalized: bool, b: &[u8]) -> f32 {
    let (value, scale, signed) = match component {
        ComponentType::F32 => return f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        ComponentType::I8 => (b[0] as i8 as f32, 127.0, true),
        ComponentType::U8 => (b[0] as f32, 255.0, false),
        ComponentType::I16 => (i16::from_le_bytes([b[0], b[1]]) as f32, 32767.0, true),
        ComponentType::U16 => (u16::from_le_bytes([b[0], b[1]]) as f32, 65535.0, false),
        ComponentType::U32 => (
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
            u32::MAX as f32,
            false,
        ),
    };
    match (normalized, signed) {
        (false, _) => value,
        (true, true) => (value / scale).max(-1.0),
        (true, false) => value / scale,
    }
}

/// One unsigned integer component (indices, sparse indices).
fn decode_uint(component: ComponentType, b: &[u8]) -> u32 {
    match component {
        ComponentType::U8 | ComponentType::I8 => b[0] as u32,
        ComponentType::U16 | ComponentType::I16 => u16::from_le_bytes([b[0], b[1]]) as u32,
        ComponentType::U32 | ComponentType::F32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_integers_follow_the_spec_equations() {
        assert_eq!(decode_float(ComponentType::U8, true, &[255]), 1.0);
        assert_eq!(decode_float(ComponentType::U8, true, &[0]), 0.0);
        assert_eq!(decode_float(ComponentType::I8, true, &[0x80]), -1.0); // -128/127 clamps
        assert_eq!(decode_float(ComponentType::I8, true, &[0x81]), -1.0);
        assert_eq!(decode_float(ComponentType::U16, true, &[0xff, 0xff]), 1.0);
        assert_eq!(decode_float(ComponentType::I16, true, &[0xff, 0x7f]), 1.0);
        assert_eq!(decode_float(ComponentType::U16, false, &[2, 1]), 258.0);
        assert_eq!(
            decode_float(ComponentType::F32, false, &1.5f32.to_le_bytes()),
            1.5
        );
        assert_eq!(decode_uint(ComponentType::U16, &[1, 1]), 257);
    }
}
