//! Entry-point interface: flattens the entry point's arguments and result into [`IoVar`]s with
//! their registers, collects the buffer bindings it uses, and drives the lowering of its body
//! (T3 vertex shading inputs/outputs, T8 pixel shading inputs/outputs).

use naga::{AddressSpace, ArraySize, Binding, TypeInner};

use super::types::{self, unsupported};
use super::{Lowerer, R, Scope, TySource, Value};
use crate::ir::{Inst, Node, Reg};
use crate::{
    BindingKind, BindingVar, Builtin, EarlyDepthTest, Interpolation, IoBinding, IoType, IoVar,
    Program, SamplerVar, Sampling, ScalarKind, Stage, StorageAccess, StorageTextureVar,
    TextureSampleKind, TextureVar,
};
use rastra_texture::{TextureFormat, TextureViewDimension};

pub(crate) fn lower_entry_point(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    index: usize,
    stage: Stage,
) -> R<Program> {
    let ep = &module.entry_points[index];
    let finfo = info.get_entry_point(index);
    let slots = buffer_bindings(module, finfo)?;
    let (textures, samplers, images) = handle_bindings(module, finfo)?;
    let mut lw = Lowerer {
        module,
        info,
        next_reg: 0,
        out: Vec::new(),
        global_code: Vec::new(),
        global_scope: Some(Scope {
            exprs: &module.global_expressions,
            tys: TySource::Global,
            values: vec![Value::Undef; module.global_expressions.len()],
            args: Vec::new(),
            locals: Vec::new(),
            result: None,
        }),
        privates: Default::default(),
        workgroup_vars: Default::default(),
        workgroup_bytes: 0,
        entry_code: Vec::new(),
        slots,
        textures,
        samplers,
        images,
        uses_derivatives: false,
        uses_discard: false,
        scratch: Vec::new(),
        inlined_calls: 0,
    };

    let mut inputs = Vec::new();
    let mut args = Vec::new();
    for arg in &ep.function.arguments {
        let words = types::words(module, &module.types[arg.ty].inner)?;
        let first = lw.alloc(words)?;
        flatten(
            module,
            arg.ty,
            arg.binding.as_ref(),
            first,
            &mut inputs,
            &mut lw.entry_code,
        )?;
        args.push(Value::Regs { first, words });
    }
    let mut outputs = Vec::new();
    let result = match ep.function.result {
        Some(ref res) => {
            let words = types::words(module, &module.types[res.ty].inner)?;
            let first = lw.alloc(words)?;
            flatten(
                module,
                res.ty,
                res.binding.as_ref(),
                first,
                &mut outputs,
                &mut Vec::new(),
            )?;
            Some((first, words))
        }
        None => None,
    };

    let body = lw.nested(|lw| lw.function(&ep.function, finfo, args, result))?;
    let mut code = std::mem::take(&mut lw.entry_code);
    code.append(&mut lw.global_code);
    code.push(Node::Region(body));
    let invocations = ep.workgroup_size.iter().fold(1u64, |a, &s| a * s as u64);
    if stage == Stage::Compute && invocations > crate::MAX_WORKGROUP_INVOCATIONS as u64 {
        return unsupported("workgroups of more than 1024 invocations");
    }
    let simt = crate::simt::Code::new(&code);
    let output_regs: Vec<u32> = outputs
        .iter()
        .flat_map(|o| o.first_reg..o.first_reg + o.ty.components as u32)
        .collect();
    let writes_depth = outputs
        .iter()
        .any(|o: &IoVar| o.binding == IoBinding::Builtin(Builtin::FragDepth));
    Ok(Program {
        stage,
        entry: ep.name.clone(),
        inputs,
        outputs,
        bindings: lw.slots.into_iter().map(|(_, b)| b).collect(),
        textures: lw.textures.into_iter().map(|(_, t)| t).collect(),
        samplers: lw.samplers.into_iter().map(|(_, s)| s).collect(),
        storage_textures: lw.images.into_iter().map(|(_, i)| i).collect(),
        uses_derivatives: lw.uses_derivatives,
        uses_discard: lw.uses_discard,
        writes_depth,
        early_depth_test: ep.early_depth_test.map(|e| match e {
            naga::EarlyDepthTest::Force => EarlyDepthTest::Force,
            naga::EarlyDepthTest::Allow { .. } => EarlyDepthTest::Conservative,
        }),
        workgroup_size: ep.workgroup_size,
        workgroup_memory: lw.workgroup_bytes,
        num_regs: lw.next_reg.max(1),
        code,
        compiled: crate::jit::compile(&simt, &output_regs).map(std::sync::Arc::new),
        simt,
    })
}

/// Uniform and storage globals the entry point uses, sorted by (group, binding).
fn buffer_bindings(
    module: &naga::Module,
    finfo: &naga::valid::FunctionInfo,
) -> R<Vec<(naga::Handle<naga::GlobalVariable>, BindingVar)>> {
    let mut layouter = naga::proc::Layouter::default();
    if layouter.update(module.to_ctx()).is_err() {
        return unsupported("type layout");
    }
    let mut slots = Vec::new();
    for (h, gv) in module.global_variables.iter() {
        if finfo[h].is_empty() {
            continue;
        }
        let kind = match gv.space {
            AddressSpace::Uniform => BindingKind::Uniform,
            AddressSpace::Storage { access } => BindingKind::Storage {
                read_only: !access.contains(naga::StorageAccess::STORE),
            },
            _ => continue,
        };
        let Some(rb) = gv.binding else {
            return unsupported("buffer without @group/@binding");
        };
        let min_size = match module.types[gv.ty].inner {
            TypeInner::Array {
                size: ArraySize::Dynamic,
                stride,
                ..
            } => stride,
            TypeInner::Struct { ref members, .. } => match members.last() {
                Some(last) => match module.types[last.ty].inner {
                    TypeInner::Array {
                        size: ArraySize::Dynamic,
                        stride,
                        ..
                    } => layouter[gv.ty].alignment.round_up(last.offset + stride),
                    _ => layouter[gv.ty].size,
                },
                None => layouter[gv.ty].size,
            },
            _ => layouter[gv.ty].size,
        };
        slots.push((
            h,
            BindingVar {
                group: rb.group,
                binding: rb.binding,
                kind,
                min_size: min_size as u64,
                name: gv.name.clone().unwrap_or_default(),
            },
        ));
    }
    slots.sort_by_key(|(_, b)| (b.group, b.binding));
    Ok(slots)
}

type Handles<T> = Vec<(naga::Handle<naga::GlobalVariable>, T)>;

/// Sampled textures, samplers and storage textures the entry point uses, each sorted by
/// (group, binding). External textures are left out: using one lowers to an
/// `Unsupported` error.
#[allow(clippy::type_complexity)]
fn handle_bindings(
    module: &naga::Module,
    finfo: &naga::valid::FunctionInfo,
) -> R<(
    Handles<TextureVar>,
    Handles<SamplerVar>,
    Handles<StorageTextureVar>,
)> {
    use naga::{ImageClass, ImageDimension as D};
    let mut textures = Vec::new();
    let mut samplers = Vec::new();
    let mut images = Vec::new();
    for (h, gv) in module.global_variables.iter() {
        if finfo[h].is_empty() || gv.space != AddressSpace::Handle {
            continue;
        }
        let Some(rb) = gv.binding else {
            return unsupported("texture or sampler without @group/@binding");
        };
        let name = gv.name.clone().unwrap_or_default();
        match module.types[gv.ty].inner {
            TypeInner::Image {
                dim,
                arrayed,
                class,
            } => {
                let dimension = match (dim, arrayed) {
                    (D::D1, _) => TextureViewDimension::D1,
                    (D::D2, false) => TextureViewDimension::D2,
                    (D::D2, true) => TextureViewDimension::D2Array,
                    (D::D3, _) => TextureViewDimension::D3,
                    (D::Cube, false) => TextureViewDimension::Cube,
                    (D::Cube, true) => TextureViewDimension::CubeArray,
                };
                if let ImageClass::Storage { format, access } = class {
                    use naga::StorageAccess as A;
                    if access.contains(A::ATOMIC) {
                        return unsupported("texture atomics");
                    }
                    let access = if !access.contains(A::STORE) {
                        StorageAccess::ReadOnly
                    } else if access.contains(A::LOAD) {
                        StorageAccess::ReadWrite
                    } else {
                        StorageAccess::WriteOnly
                    };
                    images.push((
                        h,
                        StorageTextureVar {
                            group: rb.group,
                            binding: rb.binding,
                            dimension,
                            format: storage_format(format)?,
                            access,
                            name,
                        },
                    ));
                    continue;
                }
                let (sample_kind, multisampled) = match class {
                    ImageClass::Sampled { kind, multi } => (
                        match kind {
                            naga::ScalarKind::Sint => TextureSampleKind::Sint,
                            naga::ScalarKind::Uint => TextureSampleKind::Uint,
                            _ => TextureSampleKind::Float,
                        },
                        multi,
                    ),
                    ImageClass::Depth { multi } => (TextureSampleKind::Depth, multi),
                    ImageClass::Storage { .. } | ImageClass::External => continue,
                };
                textures.push((
                    h,
                    TextureVar {
                        group: rb.group,
                        binding: rb.binding,
                        dimension,
                        sample_kind,
                        multisampled,
                        name,
                    },
                ));
            }
            TypeInner::Sampler { comparison } => samplers.push((
                h,
                SamplerVar {
                    group: rb.group,
                    binding: rb.binding,
                    comparison,
                    name,
                },
            )),
            _ => continue,
        }
    }
    textures.sort_by_key(|(_, t)| (t.group, t.binding));
    samplers.sort_by_key(|(_, s)| (s.group, s.binding));
    images.sort_by_key(|(_, i)| (i.group, i.binding));
    Ok((textures, samplers, images))
}

/// The texture format of a WGSL storage texel format.
fn storage_format(f: naga::StorageFormat) -> R<TextureFormat> {
    use TextureFormat as T;
    use naga::StorageFormat as S;
    Ok(match f {
        S::R8Unorm => T::R8Unorm,
        S::R8Snorm => T::R8Snorm,
        S::R8Uint => T::R8Uint,
        S::R8Sint => T::R8Sint,
        S::R16Uint => T::R16Uint,
        S::R16Sint => T::R16Sint,
        S::R16Float => T::R16Float,
        S::Rg8Unorm => T::Rg8Unorm,
        S::Rg8Snorm => T::Rg8Snorm,
        S::Rg8Uint => T::Rg8Uint,
        S::Rg8Sint => T::Rg8Sint,
        S::R32Uint => T::R32Uint,
        S::R32Sint => T::R32Sint,
        S::R32Float => T::R32Float,
        S::Rg16Uint => T::Rg16Uint,
        S::Rg16Sint => T::Rg16Sint,
        S::Rg16Float => T::Rg16Float,
        S::Rgba8Unorm => T::Rgba8Unorm,
        S::Rgba8Snorm => T::Rgba8Snorm,
        S::Rgba8Uint => T::Rgba8Uint,
        S::Rgba8Sint => T::Rgba8Sint,
        S::Bgra8Unorm => T::Bgra8Unorm,
        S::Rgb10a2Uint => T::Rgb10a2Uint,
        S::Rgb10a2Unorm => T::Rgb10a2Unorm,
        S::Rg11b10Ufloat => T::Rg11b10Ufloat,
        S::Rg32Uint => T::Rg32Uint,
        S::Rg32Sint => T::Rg32Sint,
        S::Rg32Float => T::Rg32Float,
        S::Rgba16Uint => T::Rgba16Uint,
        S::Rgba16Sint => T::Rgba16Sint,
        S::Rgba16Float => T::Rgba16Float,
        S::Rgba32Uint => T::Rgba32Uint,
        S::Rgba32Sint => T::Rgba32Sint,
        S::Rgba32Float => T::Rgba32Float,
        S::R16Unorm => T::R16Unorm,
        S::R16Snorm => T::R16Snorm,
        S::Rg16Unorm => T::Rg16Unorm,
        S::Rg16Snorm => T::Rg16Snorm,
        S::Rgba16Unorm => T::Rgba16Unorm,
        S::Rgba16Snorm => T::Rgba16Snorm,
        S::R64Uint => return unsupported("64-bit storage texel formats"),
    })
}

fn flatten(
    module: &naga::Module,
    ty: naga::Handle<naga::Type>,
    binding: Option<&Binding>,
    first: Reg,
    out: &mut Vec<IoVar>,
    computed: &mut Vec<Node>,
) -> R<()> {
    let inner = &module.types[ty].inner;
    // Builtins the shader core knows itself: computed at program start, not inputs.
    match binding {
        Some(Binding::BuiltIn(naga::BuiltIn::SubgroupSize)) => {
            computed.push(Node::Inst(Inst::Const {
                dst: first,
                value: crate::WARP_LANES as u32,
            }));
            return Ok(());
        }
        Some(Binding::BuiltIn(naga::BuiltIn::SubgroupInvocationId)) => {
            computed.push(Node::Inst(Inst::LaneId { dst: first }));
            return Ok(());
        }
        _ => {}
    }
    let Some(binding) = binding else {
        let TypeInner::Struct { ref members, .. } = *inner else {
            return unsupported("entry-point value without a binding");
        };
        for (i, m) in members.iter().enumerate() {
            let off = types::member_word_offset(module, members, i)?;
            flatten(
                module,
                m.ty,
                m.binding.as_ref(),
                first.offset(off),
                out,
                computed,
            )?;
        }
        return Ok(());
    };
    let (scalar, components) = match *inner {
        TypeInner::Scalar(s) => (s, 1),
        TypeInner::Vector { size, scalar } => (scalar, size as u8),
        _ => return unsupported("entry-point value of non-scalar, non-vector type"),
    };
    let scalar = match types::kind(&TypeInner::Scalar(scalar))? {
        types::Kind::F => ScalarKind::F32,
        types::Kind::S => ScalarKind::I32,
        types::Kind::U => ScalarKind::U32,
        types::Kind::B => ScalarKind::Bool,
    };
    let ty = IoType { scalar, components };
    let (binding, interpolation, sampling) = match *binding {
        Binding::BuiltIn(b) => (
            IoBinding::Builtin(builtin(b)?),
            Interpolation::Flat,
            Sampling::Center,
        ),
        Binding::Location {
            location,
            interpolation,
            sampling,
            blend_src,
            per_primitive,
        } => {
            if blend_src.is_some() {
                return unsupported("dual-source blending (@blend_src)");
            }
            if per_primitive {
                return unsupported("per-primitive inputs");
            }
            let interpolation = match interpolation {
                None if scalar != ScalarKind::F32 => Interpolation::Flat,
                None | Some(naga::Interpolation::Perspective) => Interpolation::Perspective,
                Some(naga::Interpolation::Linear) => Interpolation::Linear,
                Some(naga::Interpolation::Flat) => Interpolation::Flat,
                Some(naga::Interpolation::PerVertex) => {
                    return unsupported("per-vertex interpolation");
                }
            };
            let sampling = match sampling {
                Some(naga::Sampling::Centroid) => Sampling::Centroid,
                Some(naga::Sampling::Sample) => Sampling::Sample,
                _ => Sampling::Center,
            };
            (IoBinding::Location(location), interpolation, sampling)
        }
    };
    out.push(IoVar {
        binding,
        ty,
        interpolation,
        sampling,
        first_reg: first.0,
    });
    Ok(())
}

fn builtin(b: naga::BuiltIn) -> R<Builtin> {
    use naga::BuiltIn as B;
    Ok(match b {
        B::Position { .. } => Builtin::Position,
        B::VertexIndex => Builtin::VertexIndex,
        B::InstanceIndex => Builtin::InstanceIndex,
        B::FrontFacing => Builtin::FrontFacing,
        B::FragDepth => Builtin::FragDepth,
        B::SampleIndex => Builtin::SampleIndex,
        B::SampleMask => Builtin::SampleMask,
        B::LocalInvocationId => Builtin::LocalInvocationId,
        B::LocalInvocationIndex => Builtin::LocalInvocationIndex,
        B::GlobalInvocationId => Builtin::GlobalInvocationId,
        B::WorkGroupId => Builtin::WorkGroupId,
        B::NumWorkGroups => Builtin::NumWorkGroups,
        B::SubgroupId => Builtin::SubgroupId,
        B::NumSubgroups => Builtin::NumSubgroups,
        other => {
            return Err(crate::CompileError::Unsupported(format!(
                "builtin {other:?}"
            )));
        }
    })
}
