//! Bind groups: the buffers, texture views and samplers a pipeline's shaders use, grouped
//! as WebGPU groups them (`@group(g) @binding(b)`). Layouts are taken from the shaders
//! themselves (WebGPU's `layout: "auto"`); compatibility is checked when a draw or dispatch
//! is recorded.

use std::sync::Arc;

use crate::command::BufferRange;
use crate::error::{Error, validation};
use crate::resource::{Buffer, BufferUsages, TextureUsages};
use crate::texture::{Sampler, TextureView};

/// A buffer range bound to one binding.
#[derive(Clone, Debug)]
pub struct BufferBinding<'a> {
    pub buffer: &'a Buffer,
    pub offset: u64,
    /// None = to the end of the buffer.
    pub size: Option<u64>,
}

/// What one binding holds.
#[derive(Clone, Debug)]
pub enum BindingResource<'a> {
    Buffer(BufferBinding<'a>),
    TextureView(&'a TextureView),
    Sampler(&'a Sampler),
}

/// One entry of a bind group.
#[derive(Clone, Debug)]
pub struct BindGroupEntry<'a> {
    pub binding: u32,
    pub resource: BindingResource<'a>,
}

/// Creation parameters of a bind group.
#[derive(Clone, Debug)]
pub struct BindGroupDescriptor<'a> {
    pub label: Option<&'a str>,
    pub entries: &'a [BindGroupEntry<'a>],
}

/// What a bind group holds for one binding.
#[derive(Clone, Debug)]
pub(crate) enum Bound {
    Buffer(BufferRange),
    Texture(TextureView),
    Sampler(Sampler),
}

#[derive(Clone, Debug)]
pub(crate) struct BoundEntry {
    pub binding: u32,
    pub bound: Bound,
}

/// A set of resource bindings.
#[derive(Clone, Debug)]
pub struct BindGroup(pub(crate) Arc<Vec<BoundEntry>>);

impl BindGroup {
    pub(crate) fn new(desc: &BindGroupDescriptor<'_>) -> Result<BindGroup, Error> {
        let mut entries: Vec<BoundEntry> = Vec::new();
        for e in desc.entries {
            if entries.iter().any(|b| b.binding == e.binding) {
                return validation(format!(
                    "binding {} appears twice in the bind group",
                    e.binding
                ));
            }
            let what = format!("binding {}", e.binding);
            let r = match &e.resource {
                BindingResource::Buffer(r) => r,
                BindingResource::TextureView(v) => {
                    // Which of the two a binding needs depends on how the shader declares
                    // it, checked when a draw or dispatch uses the group.
                    let usage = v.texture().usage();
                    if !usage.contains(TextureUsages::TEXTURE_BINDING)
                        && !usage.contains(TextureUsages::STORAGE_BINDING)
                    {
                        return validation(format!(
                            "{what}: texture has neither TEXTURE_BINDING nor STORAGE_BINDING \
                             usage"
                        ));
                    }
                    entries.push(BoundEntry {
                        binding: e.binding,
                        bound: Bound::Texture((*v).clone()),
                    });
                    continue;
                }
                BindingResource::Sampler(s) => {
                    entries.push(BoundEntry {
                        binding: e.binding,
                        bound: Bound::Sampler((*s).clone()),
                    });
                    continue;
                }
            };
            let range = crate::command::buffer_range(r.buffer, r.offset, r.size, &what)?;
            if range.size == 0 {
                return validation(format!("{what}: the bound range is empty"));
            }
            if !r.offset.is_multiple_of(256) {
                return validation(format!(
                    "{what}: offset {} is not a multiple of 256",
                    r.offset
                ));
            }
            let usage = r.buffer.usage();
            if !usage.contains(BufferUsages::UNIFORM) && !usage.contains(BufferUsages::STORAGE) {
                return validation(format!(
                    "{what}: buffer has neither UNIFORM nor STORAGE usage"
                ));
            }
            entries.push(BoundEntry {
                binding: e.binding,
                bound: Bound::Buffer(range),
            });
        }
        Ok(BindGroup(Arc::new(entries)))
    }

    pub(crate) fn entry(&self, binding: u32) -> Option<&Bound> {
        self.0
            .iter()
            .find(|b| b.binding == binding)
            .map(|b| &b.bound)
    }
}

impl BindGroup {
    /// The same bindings with the buffer ranges of `offsets` (binding number, bytes) moved
    /// forward by their offsets: WebGPU's dynamic offsets, applied when the group is set.
    /// Each offset is a multiple of 256 and the moved range stays inside its buffer.
    pub fn with_dynamic_offsets(&self, offsets: &[(u32, u64)]) -> Result<BindGroup, Error> {
        let mut entries: Vec<BoundEntry> = self.0.as_ref().clone();
        for &(binding, offset) in offsets {
            if !offset.is_multiple_of(256) {
                return validation(format!(
                    "dynamic offset {offset} of binding {binding} is not a multiple of 256"
                ));
            }
            let Some(Bound::Buffer(range)) = entries
                .iter_mut()
                .find(|e| e.binding == binding)
                .map(|e| &mut e.bound)
            else {
                return validation(format!(
                    "dynamic offset for binding {binding}, which is not a buffer binding"
                ));
            };
            let moved = range.offset.checked_add(offset);
            *range = crate::command::buffer_range(
                &range.buffer,
                moved.unwrap_or(u64::MAX),
                Some(range.size),
                &format!("binding {binding} with dynamic offset {offset}"),
            )?;
        }
        Ok(BindGroup(Arc::new(entries)))
    }
}

/// A resource binding a pipeline's shaders use, as reflection reports it: what an
/// automatic layout (WebGPU `layout: "auto"`) is built from.
#[derive(Clone, Debug, PartialEq)]
pub struct ShaderBinding {
    pub group: u32,
    pub binding: u32,
    /// The stages whose entry points use it.
    pub stages: Vec<rastra_shader::Stage>,
    pub kind: ShaderBindingKind,
}

/// What a [`ShaderBinding`] holds, as the shader declares it.
#[derive(Clone, Debug, PartialEq)]
pub enum ShaderBindingKind {
    Buffer {
        kind: rastra_shader::BindingKind,
        /// Smallest size in bytes that holds the variable.
        min_size: u64,
    },
    Texture {
        dimension: crate::TextureViewDimension,
        sample_kind: rastra_shader::TextureSampleKind,
        multisampled: bool,
    },
    Sampler {
        comparison: bool,
    },
    StorageTexture {
        dimension: crate::TextureViewDimension,
        format: crate::TextureFormat,
        access: rastra_shader::StorageAccess,
    },
}

/// The bindings of `programs`, merged by (group, binding) and sorted.
pub(crate) fn shader_bindings(programs: &[&rastra_shader::Program]) -> Vec<ShaderBinding> {
    let mut out: Vec<ShaderBinding> = Vec::new();
    for p in programs {
        let buffers = p.bindings.iter().map(|b| {
            let kind = ShaderBindingKind::Buffer {
                kind: b.kind,
                min_size: b.min_size,
            };
            (b.group, b.binding, kind)
        });
        let textures = p.textures.iter().map(|t| {
            let kind = ShaderBindingKind::Texture {
                dimension: t.dimension,
                sample_kind: t.sample_kind,
                multisampled: t.multisampled,
            };
            (t.group, t.binding, kind)
        });
        let samplers = p.samplers.iter().map(|s| {
            let kind = ShaderBindingKind::Sampler {
                comparison: s.comparison,
            };
            (s.group, s.binding, kind)
        });
        let images = p.storage_textures.iter().map(|t| {
            let kind = ShaderBindingKind::StorageTexture {
                dimension: t.dimension,
                format: t.format,
                access: t.access,
            };
            (t.group, t.binding, kind)
        });
        for (group, binding, kind) in buffers.chain(textures).chain(samplers).chain(images) {
            match out
                .iter_mut()
                .find(|b| b.group == group && b.binding == binding)
            {
                Some(b) => {
                    if !b.stages.contains(&p.stage) {
                        b.stages.push(p.stage);
                    }
                    // A buffer one stage writes is read-write for the whole pipeline.
                    if let (
                        ShaderBindingKind::Buffer {
                            kind: have,
                            min_size: a,
                        },
                        ShaderBindingKind::Buffer {
                            kind: want,
                            min_size: c,
                        },
                    ) = (&mut b.kind, &kind)
                    {
                        *a = (*a).max(*c);
                        if *want == (rastra_shader::BindingKind::Storage { read_only: false }) {
                            *have = *want;
                        }
                    }
                }
                None => out.push(ShaderBinding {
                    group,
                    binding,
                    stages: vec![p.stage],
                    kind,
                }),
            }
        }
    }
    out.sort_by_key(|b| (b.group, b.binding));
    out
}
