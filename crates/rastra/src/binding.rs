//! Bind groups: the buffers a pipeline's shaders read, grouped as WebGPU groups them
//! (`@group(g) @binding(b)`). Layouts are taken from the shaders themselves (WebGPU's
//! `layout: "auto"`); compatibility is checked when a draw is recorded.

use std::sync::Arc;

use crate::command::BufferRange;
use crate::error::{Error, validation};
use crate::resource::{Buffer, BufferUsages};

/// A buffer range bound to one binding.
#[derive(Clone, Debug)]
pub struct BufferBinding<'a> {
    pub buffer: &'a Buffer,
    pub offset: u64,
    /// None = to the end of the buffer.
    pub size: Option<u64>,
}

/// One entry of a bind group.
#[derive(Clone, Debug)]
pub struct BindGroupEntry<'a> {
    pub binding: u32,
    pub resource: BufferBinding<'a>,
}

/// Creation parameters of a bind group.
#[derive(Clone, Debug)]
pub struct BindGroupDescriptor<'a> {
    pub label: Option<&'a str>,
    pub entries: &'a [BindGroupEntry<'a>],
}

#[derive(Clone, Debug)]
pub(crate) struct BoundBuffer {
    pub binding: u32,
    pub range: BufferRange,
}

/// A set of resource bindings.
#[derive(Clone, Debug)]
pub struct BindGroup(pub(crate) Arc<Vec<BoundBuffer>>);

impl BindGroup {
    pub(crate) fn new(desc: &BindGroupDescriptor<'_>) -> Result<BindGroup, Error> {
        let mut entries: Vec<BoundBuffer> = Vec::new();
        for e in desc.entries {
            if entries.iter().any(|b| b.binding == e.binding) {
                return validation(format!(
                    "binding {} appears twice in the bind group",
                    e.binding
                ));
            }
            let r = &e.resource;
            let what = format!("binding {}", e.binding);
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
            entries.push(BoundBuffer {
                binding: e.binding,
                range,
            });
        }
        Ok(BindGroup(Arc::new(entries)))
    }

    pub(crate) fn entry(&self, binding: u32) -> Option<&BoundBuffer> {
        self.0.iter().find(|b| b.binding == binding)
    }
}
