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
                    if !v.texture().usage().contains(TextureUsages::TEXTURE_BINDING) {
                        return validation(format!("{what}: texture lacks TEXTURE_BINDING usage"));
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
