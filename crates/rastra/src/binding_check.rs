//! Binding validation at draw and dispatch time: every buffer, texture, storage texture and
//! sampler a program declares must be bound, of the kind, usage, size, dimension and format
//! it declares (WebGPU's compatibility rules for `layout: "auto"`), and the same memory may
//! not be written through one binding while used through another in the same draw or
//! dispatch (WebGPU's usage scopes).

use rastra_shader::{BindingKind, Program, StorageAccess, TextureSampleKind};
use rastra_texture::SampleType;

use crate::binding::{BindGroup, Bound};
use crate::command::BufferRange;
use crate::error::{Error, validation};
use crate::pipeline::MAX_BIND_GROUPS;
use crate::resource::{BufferUsages, TextureUsages};
use crate::texture::TextureView;

/// Checks that every binding the programs use is present, of the right kind, usage and
/// size, that a buffer a shader may write is bound nowhere else in the same draw or
/// dispatch (`fixed` lists the draw's vertex and index buffer ranges), and that no texture
/// a shader samples is one of the pass's `attachments`.
pub(crate) fn validate_bindings(
    programs: &[&Program],
    bind_groups: &[Option<BindGroup>],
    fixed: &[&BufferRange],
    attachments: &[TextureView],
) -> Result<(), Error> {
    let mut used: Vec<(&BufferRange, bool)> = fixed.iter().map(|r| (*r, false)).collect();
    for program in programs {
        validate_texture_bindings(program, bind_groups, attachments)?;
        for b in &program.bindings {
            let Some(group) = &bind_groups[b.group as usize] else {
                return validation(format!(
                    "`{}` needs @group({}), which is not set",
                    b.name, b.group
                ));
            };
            let Some(entry) = group.entry(b.binding) else {
                return validation(format!(
                    "`{}` needs @group({}) @binding({}), which the bind group does not have",
                    b.name, b.group, b.binding
                ));
            };
            let Bound::Buffer(range) = entry else {
                return validation(format!(
                    "`{}` (@group({}) @binding({})) is a buffer; the bind group holds a texture or sampler there",
                    b.name, b.group, b.binding
                ));
            };
            let usage = range.buffer.usage();
            let (needed, name) = match b.kind {
                BindingKind::Uniform => (BufferUsages::UNIFORM, "UNIFORM"),
                BindingKind::Storage { .. } => (BufferUsages::STORAGE, "STORAGE"),
            };
            if !usage.contains(needed) {
                return validation(format!(
                    "`{}` (@group({}) @binding({})) needs a buffer with {name} usage",
                    b.name, b.group, b.binding
                ));
            }
            if range.size < b.min_size {
                return validation(format!(
                    "`{}` (@group({}) @binding({})) needs at least {} bytes; {} are bound",
                    b.name, b.group, b.binding, b.min_size, range.size
                ));
            }
            let writable = matches!(b.kind, BindingKind::Storage { read_only: false });
            // The same binding seen by both stages is one use.
            let same_binding = |r: &BufferRange| std::ptr::eq(r, range);
            if !used.iter().any(|(r, _)| same_binding(r)) {
                used.push((range, writable));
            } else if writable {
                for u in used.iter_mut().filter(|(r, _)| same_binding(r)) {
                    u.1 = true;
                }
            }
        }
    }
    check_texture_conflicts(programs, bind_groups)?;
    for (i, (a, a_writes)) in used.iter().enumerate() {
        for (b, b_writes) in &used[..i] {
            if (*a_writes || *b_writes) && a.buffer.same(&b.buffer) {
                return validation(
                    "a buffer a shader may write is also bound another way in the same draw or \
                     dispatch",
                );
            }
        }
    }
    Ok(())
}

/// Checks a program's textures and samplers against the bound views and samplers (WebGPU's
/// binding-type compatibility for `layout: "auto"`).
fn validate_texture_bindings(
    program: &Program,
    bind_groups: &[Option<BindGroup>],
    attachments: &[TextureView],
) -> Result<(), Error> {
    let find = |group: u32, binding: u32, name: &str| -> Result<&Bound, Error> {
        let Some(g) = &bind_groups[group as usize] else {
            return validation(format!("`{name}` needs @group({group}), which is not set"));
        };
        g.entry(binding).ok_or_else(|| {
            Error::Validation(format!(
                "`{name}` needs @group({group}) @binding({binding}), which the bind group does \
                 not have"
            ))
        })
    };
    for t in &program.textures {
        let at = format!("`{}` (@group({}) @binding({}))", t.name, t.group, t.binding);
        let Bound::Texture(view) = find(t.group, t.binding, &t.name)? else {
            return validation(format!(
                "{at} is a texture; the bind group holds something else"
            ));
        };
        if !view
            .texture()
            .usage()
            .contains(TextureUsages::TEXTURE_BINDING)
        {
            return validation(format!("{at} needs a texture with TEXTURE_BINDING usage"));
        }
        if view.dimension() != t.dimension {
            return validation(format!(
                "{at} is a {:?} texture; a {:?} view is bound",
                t.dimension,
                view.dimension()
            ));
        }
        if (view.texture().sample_count() > 1) != t.multisampled {
            return validation(format!(
                "{at}: multisampling of the bound texture does not match the declaration"
            ));
        }
        let st = view.view.sample_type();
        let ok = match t.sample_kind {
            TextureSampleKind::Float => {
                matches!(
                    st,
                    SampleType::Float | SampleType::UnfilterableFloat | SampleType::Depth
                )
            }
            TextureSampleKind::Depth => st == SampleType::Depth,
            TextureSampleKind::Sint => st == SampleType::Sint,
            TextureSampleKind::Uint => st == SampleType::Uint,
        };
        if !ok {
            return validation(format!(
                "{at} expects {:?} texels; the bound {:?} view has {st:?} texels",
                t.sample_kind,
                view.format()
            ));
        }
        // Sampling other subresources of an attached texture is allowed (rendering a mip
        // chain level by level); the attached subresource itself is not.
        if let Some(a) = attachments.iter().find(|a| {
            a.texture().same(view.texture())
                && view.covers(a.base_mip_level(), a.base_array_layer())
        }) {
            return validation(format!(
                "{at}: the view includes mip level {} layer {}, which the render pass renders into",
                a.base_mip_level(),
                a.base_array_layer()
            ));
        }
    }
    for st in &program.storage_textures {
        let at = format!(
            "`{}` (@group({}) @binding({}))",
            st.name, st.group, st.binding
        );
        let Bound::Texture(view) = find(st.group, st.binding, &st.name)? else {
            return validation(format!(
                "{at} is a storage texture; the bind group holds something else"
            ));
        };
        if !view
            .texture()
            .usage()
            .contains(TextureUsages::STORAGE_BINDING)
        {
            return validation(format!("{at} needs a texture with STORAGE_BINDING usage"));
        }
        if view.view.mip_level_count != 1 {
            return validation(format!(
                "{at}: a storage view has one mip level; the bound view has {}",
                view.view.mip_level_count
            ));
        }
        if view.dimension() != st.dimension {
            return validation(format!(
                "{at} is a {:?} storage texture; a {:?} view is bound",
                st.dimension,
                view.dimension()
            ));
        }
        if view.format() != st.format {
            return validation(format!(
                "{at} is declared {:?}; the bound view is {:?}",
                st.format,
                view.format()
            ));
        }
        if st.access == StorageAccess::ReadWrite && !st.format.is_read_write_storage_format() {
            return validation(format!(
                "{at}: read_write access needs r32float, r32uint or r32sint, not {:?}",
                st.format
            ));
        }
        if st.access != StorageAccess::ReadOnly && program.stage == rastra_shader::Stage::Vertex {
            return validation(format!(
                "{at}: vertex shaders may not write storage textures"
            ));
        }
        if let Some(a) = attachments.iter().find(|a| overlaps(a, view)) {
            return validation(format!(
                "{at}: the view includes mip level {} layer {}, which the render pass renders into",
                a.base_mip_level(),
                a.base_array_layer()
            ));
        }
        // Other subresources are legal in WebGPU, but the pass holds the attached texture's
        // memory for writing, and a storage binding needs it a second time.
        if attachments.iter().any(|a| a.texture().same(view.texture())) {
            return Err(Error::Unsupported(format!(
                "{at}: a storage binding of a texture the render pass renders into (another \
                 mip level or layer of it)"
            )));
        }
    }
    for s in &program.samplers {
        let at = format!("`{}` (@group({}) @binding({}))", s.name, s.group, s.binding);
        let Bound::Sampler(sampler) = find(s.group, s.binding, &s.name)? else {
            return validation(format!(
                "{at} is a sampler; the bind group holds something else"
            ));
        };
        if sampler.desc().compare.is_some() != s.comparison {
            return validation(format!(
                "{at}: a {} sampler is bound",
                if s.comparison {
                    "non-comparison"
                } else {
                    "comparison"
                }
            ));
        }
    }
    Ok(())
}

/// Checks that every binding of `program` is in one of the bind groups a pipeline has
/// (`@group(0)` … `@group(MAX_BIND_GROUPS - 1)`).
pub(crate) fn check_group_limit(program: &Program) -> Result<(), Error> {
    let used = (program.bindings.iter().map(|b| (b.group, &b.name)))
        .chain(program.textures.iter().map(|t| (t.group, &t.name)))
        .chain(program.samplers.iter().map(|s| (s.group, &s.name)))
        .chain(program.storage_textures.iter().map(|t| (t.group, &t.name)));
    for (group, name) in used {
        if group >= MAX_BIND_GROUPS {
            return validation(format!(
                "`{name}` uses @group({group}); the limit is {MAX_BIND_GROUPS} groups"
            ));
        }
    }
    Ok(())
}

/// Whether `view` includes the subresource attachment view `a` renders into.
fn overlaps(a: &TextureView, view: &TextureView) -> bool {
    a.texture().same(view.texture()) && view.covers(a.base_mip_level(), a.base_array_layer())
}

/// Checks that no subresource a shader may write through a storage binding is used through
/// any other texture binding of the same draw or dispatch (a storage view is one mip level,
/// so overlap is one of its layers at its level).
fn check_texture_conflicts(
    programs: &[&Program],
    bind_groups: &[Option<BindGroup>],
) -> Result<(), Error> {
    let view_at = |group: u32, binding: u32| match bind_groups[group as usize]
        .as_ref()
        .and_then(|g| g.entry(binding))
    {
        Some(Bound::Texture(v)) => Some(v),
        _ => None,
    };
    // (group, binding, view, writes) of every texture binding, once per binding.
    let mut uses: Vec<(u32, u32, &TextureView, bool)> = Vec::new();
    for program in programs {
        let sampled = program.textures.iter().map(|t| (t.group, t.binding, false));
        let storage = program
            .storage_textures
            .iter()
            .map(|t| (t.group, t.binding, t.access != StorageAccess::ReadOnly));
        for (group, binding, writes) in sampled.chain(storage) {
            let Some(view) = view_at(group, binding) else {
                continue;
            };
            match uses.iter_mut().find(|u| u.0 == group && u.1 == binding) {
                Some(u) => u.3 |= writes,
                None => uses.push((group, binding, view, writes)),
            }
        }
    }
    for (i, a) in uses.iter().enumerate() {
        for b in &uses[..i] {
            let (w, other) = match (a.3, b.3) {
                (true, _) => (a.2, b.2),
                (false, true) => (b.2, a.2),
                (false, false) => continue,
            };
            let level = w.base_mip_level();
            let layers = w.base_array_layer()..w.base_array_layer() + w.view.array_layer_count;
            if w.texture().same(other.texture())
                && layers.clone().any(|layer| other.covers(level, layer))
            {
                return validation(format!(
                    "mip level {level} of a texture a shader writes as a storage texture is \
                     also bound another way in the same draw or dispatch (@group({}) \
                     @binding({}) and @group({}) @binding({}))",
                    b.0, b.1, a.0, a.1
                ));
            }
        }
    }
    Ok(())
}
