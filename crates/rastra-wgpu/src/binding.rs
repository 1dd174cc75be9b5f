//! Bind group layouts, bind groups and pipeline layouts (WebGPU §"Resource Binding").
//!
//! rastra binds resources by (group, binding) and checks them against the shaders when a
//! draw or dispatch is recorded, so it has no layout objects of its own. Layouts live here:
//! bind groups are checked against their layout when created (kinds, usages, sizes, view
//! dimensions, sampler types), pipelines against their explicit layout, and automatic
//! layouts (`layout: None`) are built from rastra's reflection of the pipeline's shaders.
//! A layout entry with `has_dynamic_offset` takes its offset at `set_bind_group`, in
//! binding-number order, as WebGPU specifies.

use std::fmt;
use std::sync::Arc;

use wgpu::custom::*;

use crate::device::DeviceShared;
use crate::resource::{RastraBuffer, RastraSampler, RastraTextureView, Uses};

/// A bind group layout: entries sorted by binding number.
#[derive(Debug, PartialEq)]
pub(crate) struct LayoutData {
    pub entries: Vec<wgpu::BindGroupLayoutEntry>,
}

impl LayoutData {
    /// Binding numbers of the entries that take dynamic offsets, in the order offsets are
    /// given.
    pub fn dynamic_bindings(&self) -> Vec<u32> {
        self.entries
            .iter()
            .filter(|e| {
                matches!(
                    e.ty,
                    wgpu::BindingType::Buffer {
                        has_dynamic_offset: true,
                        ..
                    }
                )
            })
            .map(|e| e.binding)
            .collect()
    }
}

/// A wgpu bind group layout on rastra (None when creation failed).
#[derive(Clone)]
pub struct RastraBindGroupLayout {
    pub(crate) label: String,
    pub(crate) data: Option<Arc<LayoutData>>,
}

impl fmt::Debug for RastraBindGroupLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RastraBindGroupLayout({:?})", self.label)
    }
}

impl RastraBindGroupLayout {
    pub(crate) fn new(
        device: &Arc<DeviceShared>,
        desc: &wgpu::BindGroupLayoutDescriptor<'_>,
    ) -> Self {
        let label = desc.label.unwrap_or("");
        let data = check_layout(desc.entries).map(|mut entries| {
            entries.sort_by_key(|e| e.binding);
            Arc::new(LayoutData { entries })
        });
        RastraBindGroupLayout {
            label: label.to_string(),
            data: device.check("Device::create_bind_group_layout", label, data),
        }
    }
}

fn check_layout(
    entries: &[wgpu::BindGroupLayoutEntry],
) -> Result<Vec<wgpu::BindGroupLayoutEntry>, rastra::Error> {
    let unsupported = |what: String| Err(rastra::Error::Unsupported(what));
    for (i, e) in entries.iter().enumerate() {
        if entries[..i].iter().any(|o| o.binding == e.binding) {
            return Err(rastra::Error::Validation(format!(
                "binding {} appears twice in the layout",
                e.binding
            )));
        }
        if e.count.is_some() {
            return unsupported(format!("binding arrays (binding {})", e.binding));
        }
        match e.ty {
            wgpu::BindingType::StorageTexture {
                access: wgpu::StorageTextureAccess::Atomic,
                ..
            } => {
                return unsupported(format!("texture atomics (binding {})", e.binding));
            }
            wgpu::BindingType::StorageTexture { format, .. }
                if crate::convert::texture_format_from(format)
                    .is_none_or(|f| !f.is_storage_format()) =>
            {
                return Err(rastra::Error::Validation(format!(
                    "binding {}: {format:?} cannot be a storage texture",
                    e.binding
                )));
            }
            wgpu::BindingType::StorageTexture {
                format,
                access,
                view_dimension,
            } => {
                let f = crate::convert::texture_format_from(format).expect("checked above");
                let why = if matches!(
                    view_dimension,
                    wgpu::TextureViewDimension::Cube | wgpu::TextureViewDimension::CubeArray
                ) {
                    Some("storage textures cannot be cube views".to_string())
                } else if access == wgpu::StorageTextureAccess::ReadWrite
                    && !f.is_read_write_storage_format()
                {
                    Some(format!("{format:?} cannot be read-write"))
                } else if access != wgpu::StorageTextureAccess::ReadOnly
                    && e.visibility.contains(wgpu::ShaderStages::VERTEX)
                {
                    Some("vertex shaders may not write storage textures".to_string())
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(rastra::Error::Validation(format!(
                        "binding {}: {why}",
                        e.binding
                    )));
                }
            }
            wgpu::BindingType::Buffer { .. }
            | wgpu::BindingType::Sampler(_)
            | wgpu::BindingType::Texture { .. } => {}
            ty => return unsupported(format!("{ty:?} bindings (binding {})", e.binding)),
        }
    }
    Ok(entries.to_vec())
}

impl BindGroupLayoutInterface for RastraBindGroupLayout {}

/// A wgpu bind group on rastra.
#[derive(Clone)]
pub struct RastraBindGroup {
    pub(crate) label: String,
    pub(crate) inner: Option<rastra::BindGroup>,
    /// Entries taking dynamic offsets, in offset order.
    pub(crate) dynamic: Vec<u32>,
    /// The layout the group was created with (draws check it against the pipeline's).
    pub(crate) layout: Option<Arc<LayoutData>>,
    /// Buffers and textures a submission using the group must find usable.
    pub(crate) uses: Uses,
}

impl fmt::Debug for RastraBindGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RastraBindGroup({:?})", self.label)
    }
}

impl RastraBindGroup {
    pub(crate) fn new(device: &Arc<DeviceShared>, desc: &wgpu::BindGroupDescriptor<'_>) -> Self {
        let label = desc.label.unwrap_or("");
        let mut uses = Uses::default();
        let layout = desc
            .layout
            .as_custom::<RastraBindGroupLayout>()
            .and_then(|l| l.data.clone());
        let result = match &layout {
            None => Err(rastra::Error::Validation(
                "the bind group layout is invalid".into(),
            )),
            Some(layout) => build_group(device, layout, desc.entries, &mut uses),
        };
        RastraBindGroup {
            label: label.to_string(),
            inner: device.check("Device::create_bind_group", label, result),
            dynamic: layout
                .as_ref()
                .map(|l| l.dynamic_bindings())
                .unwrap_or_default(),
            layout,
            uses,
        }
    }
}

/// What a bind group entry resolved to.
enum Resolved {
    Buffer(rastra::Buffer, u64, Option<u64>),
    View(rastra::TextureView),
    Sampler(rastra::Sampler),
}

fn build_group(
    device: &DeviceShared,
    layout: &LayoutData,
    entries: &[wgpu::BindGroupEntry<'_>],
    uses: &mut Uses,
) -> Result<rastra::BindGroup, rastra::Error> {
    let invalid = |m: String| Err(rastra::Error::Validation(m));
    if entries.len() != layout.entries.len() {
        return invalid(format!(
            "{} entries for a layout with {}",
            entries.len(),
            layout.entries.len()
        ));
    }
    let mut resolved = Vec::with_capacity(entries.len());
    for e in entries {
        let Some(l) = layout.entries.iter().find(|l| l.binding == e.binding) else {
            return invalid(format!("binding {} is not in the layout", e.binding));
        };
        let what = format!("binding {}", e.binding);
        let r = match (&l.ty, &e.resource) {
            (
                wgpu::BindingType::Buffer {
                    ty,
                    min_binding_size,
                    ..
                },
                wgpu::BindingResource::Buffer(b),
            ) => {
                let Some(rb) = b.buffer.as_custom::<RastraBuffer>() else {
                    return invalid(format!("{what}: not a rastra buffer"));
                };
                let Some(buffer) = rb.resolve("Device::create_bind_group") else {
                    return invalid(format!("{what}: the buffer is invalid"));
                };
                let (need, limit) = match ty {
                    wgpu::BufferBindingType::Uniform => (
                        wgpu::BufferUsages::UNIFORM,
                        device.limits.max_uniform_buffer_binding_size,
                    ),
                    wgpu::BufferBindingType::Storage { .. } => (
                        wgpu::BufferUsages::STORAGE,
                        device.limits.max_storage_buffer_binding_size,
                    ),
                };
                if !crate::convert::buffer_usages(buffer.usage()).contains(need) {
                    return invalid(format!("{what}: the buffer lacks {need:?} usage"));
                }
                let size = b
                    .size
                    .map(|s| s.get())
                    .unwrap_or_else(|| buffer.size().saturating_sub(b.offset));
                if let Some(min) = min_binding_size
                    && size < min.get()
                {
                    return invalid(format!(
                        "{what}: {size} bytes bound, the layout needs at least {min}"
                    ));
                }
                if size > limit {
                    return invalid(format!(
                        "{what}: {size} bytes exceed the binding limit {limit}"
                    ));
                }
                uses.buffer(&rb.0);
                Resolved::Buffer(buffer.clone(), b.offset, b.size.map(|s| s.get()))
            }
            (wgpu::BindingType::Sampler(ty), wgpu::BindingResource::Sampler(s)) => {
                let Some(rs) = s.as_custom::<RastraSampler>() else {
                    return invalid(format!("{what}: not a rastra sampler"));
                };
                let Some(s) = rs.inner.clone() else {
                    return invalid(format!("{what}: sampler '{}' is invalid", rs.label));
                };
                let d = s.desc();
                match ty {
                    wgpu::SamplerBindingType::Comparison if d.compare.is_none() => {
                        return invalid(format!("{what}: the layout wants a comparison sampler"));
                    }
                    wgpu::SamplerBindingType::Filtering
                    | wgpu::SamplerBindingType::NonFiltering
                        if d.compare.is_some() =>
                    {
                        return invalid(format!(
                            "{what}: a comparison sampler for a non-comparison binding"
                        ));
                    }
                    wgpu::SamplerBindingType::NonFiltering
                        if [d.mag_filter, d.min_filter, d.mipmap_filter]
                            .contains(&rastra::FilterMode::Linear) =>
                    {
                        return invalid(format!(
                            "{what}: a filtering sampler for a non-filtering binding"
                        ));
                    }
                    _ => {}
                }
                Resolved::Sampler(s)
            }
            (
                wgpu::BindingType::Texture {
                    view_dimension,
                    multisampled,
                    ..
                },
                wgpu::BindingResource::TextureView(v),
            ) => {
                let Some(rv) = v.as_custom::<RastraTextureView>() else {
                    return invalid(format!("{what}: not a rastra texture view"));
                };
                let view = rv.get().map_err(rastra::Error::Validation)?;
                if Some(view.dimension()) != crate::convert::view_dimension_from(*view_dimension) {
                    return invalid(format!(
                        "{what}: a {:?} view for a {view_dimension:?} binding",
                        view.dimension()
                    ));
                }
                if (view.texture().sample_count() > 1) != *multisampled {
                    return invalid(format!(
                        "{what}: the view's sample count {} does not match multisampled = \
                         {multisampled}",
                        view.texture().sample_count()
                    ));
                }
                uses.texture(&rv.texture);
                Resolved::View(view.clone())
            }
            (
                wgpu::BindingType::StorageTexture {
                    format,
                    view_dimension,
                    ..
                },
                wgpu::BindingResource::TextureView(v),
            ) => {
                let Some(rv) = v.as_custom::<RastraTextureView>() else {
                    return invalid(format!("{what}: not a rastra texture view"));
                };
                let view = rv.get().map_err(rastra::Error::Validation)?;
                if Some(view.dimension()) != crate::convert::view_dimension_from(*view_dimension) {
                    return invalid(format!(
                        "{what}: a {:?} view for a {view_dimension:?} binding",
                        view.dimension()
                    ));
                }
                if Some(view.format()) != crate::convert::texture_format_from(*format) {
                    return invalid(format!(
                        "{what}: a {:?} view for a {format:?} storage binding",
                        view.format()
                    ));
                }
                if !view
                    .texture()
                    .usage()
                    .contains(rastra::TextureUsages::STORAGE_BINDING)
                {
                    return invalid(format!("{what}: the texture lacks STORAGE_BINDING usage"));
                }
                if view.mip_level_count() != 1 {
                    return invalid(format!(
                        "{what}: a storage view has one mip level, not {}",
                        view.mip_level_count()
                    ));
                }
                uses.texture(&rv.texture);
                Resolved::View(view.clone())
            }
            (ty, _) => {
                return invalid(format!(
                    "{what}: the resource does not match the layout's {ty:?}"
                ));
            }
        };
        resolved.push((e.binding, r));
    }
    let entries: Vec<rastra::BindGroupEntry<'_>> = resolved
        .iter()
        .map(|(binding, r)| rastra::BindGroupEntry {
            binding: *binding,
            resource: match r {
                Resolved::Buffer(buffer, offset, size) => {
                    rastra::BindingResource::Buffer(rastra::BufferBinding {
                        buffer,
                        offset: *offset,
                        size: *size,
                    })
                }
                Resolved::View(v) => rastra::BindingResource::TextureView(v),
                Resolved::Sampler(s) => rastra::BindingResource::Sampler(s),
            },
        })
        .collect();
    device
        .device
        .create_bind_group(&rastra::BindGroupDescriptor {
            label: None,
            entries: &entries,
        })
}

impl BindGroupInterface for RastraBindGroup {}

/// A wgpu pipeline layout on rastra: the bind group layouts by group index.
#[derive(Clone, Debug)]
pub struct RastraPipelineLayout {
    pub(crate) groups: Option<Vec<Option<Arc<LayoutData>>>>,
}

impl RastraPipelineLayout {
    pub(crate) fn new(
        device: &Arc<DeviceShared>,
        desc: &wgpu::PipelineLayoutDescriptor<'_>,
    ) -> Self {
        let label = desc.label.unwrap_or("");
        let groups = (|| {
            if desc.immediate_size > 0 {
                return Err(rastra::Error::Validation(
                    "immediate data needs the IMMEDIATES feature, which rastra does not have"
                        .into(),
                ));
            }
            if desc.bind_group_layouts.len() > device.limits.max_bind_groups as usize {
                return Err(rastra::Error::Validation(format!(
                    "{} bind group layouts (the limit is {})",
                    desc.bind_group_layouts.len(),
                    device.limits.max_bind_groups
                )));
            }
            desc.bind_group_layouts
                .iter()
                .enumerate()
                .map(|(i, l)| match l {
                    None => Ok(None),
                    Some(l) => l
                        .as_custom::<RastraBindGroupLayout>()
                        .and_then(|l| l.data.clone())
                        .map(Some)
                        .ok_or_else(|| {
                            rastra::Error::Validation(format!("bind group layout {i} is invalid"))
                        }),
                })
                .collect()
        })();
        RastraPipelineLayout {
            groups: device.check("Device::create_pipeline_layout", label, groups),
        }
    }
}

impl PipelineLayoutInterface for RastraPipelineLayout {}

/// The layout entry a shader binding needs, as an automatic layout declares it.
pub(crate) fn auto_entry(b: &rastra::ShaderBinding) -> wgpu::BindGroupLayoutEntry {
    let mut visibility = wgpu::ShaderStages::NONE;
    for s in &b.stages {
        visibility |= match s {
            rastra::ShaderStage::Vertex => wgpu::ShaderStages::VERTEX,
            rastra::ShaderStage::Fragment => wgpu::ShaderStages::FRAGMENT,
            rastra::ShaderStage::Compute => wgpu::ShaderStages::COMPUTE,
        };
    }
    let ty = match &b.kind {
        rastra::ShaderBindingKind::Buffer { kind, min_size } => wgpu::BindingType::Buffer {
            ty: match kind {
                rastra::BindingKind::Uniform => wgpu::BufferBindingType::Uniform,
                rastra::BindingKind::Storage { read_only } => wgpu::BufferBindingType::Storage {
                    read_only: *read_only,
                },
            },
            has_dynamic_offset: false,
            min_binding_size: wgpu::BufferSize::new(*min_size),
        },
        rastra::ShaderBindingKind::Texture {
            dimension,
            sample_kind,
            multisampled,
        } => wgpu::BindingType::Texture {
            sample_type: match sample_kind {
                rastra::TextureSampleKind::Float => wgpu::TextureSampleType::Float {
                    filterable: !*multisampled,
                },
                rastra::TextureSampleKind::Depth => wgpu::TextureSampleType::Depth,
                rastra::TextureSampleKind::Sint => wgpu::TextureSampleType::Sint,
                rastra::TextureSampleKind::Uint => wgpu::TextureSampleType::Uint,
            },
            view_dimension: crate::convert::view_dimension(*dimension),
            multisampled: *multisampled,
        },
        rastra::ShaderBindingKind::Sampler { comparison } => {
            wgpu::BindingType::Sampler(if *comparison {
                wgpu::SamplerBindingType::Comparison
            } else {
                wgpu::SamplerBindingType::Filtering
            })
        }
        rastra::ShaderBindingKind::StorageTexture {
            dimension,
            format,
            access,
        } => wgpu::BindingType::StorageTexture {
            access: match access {
                rastra::StorageAccess::ReadOnly => wgpu::StorageTextureAccess::ReadOnly,
                rastra::StorageAccess::WriteOnly => wgpu::StorageTextureAccess::WriteOnly,
                rastra::StorageAccess::ReadWrite => wgpu::StorageTextureAccess::ReadWrite,
            },
            format: crate::convert::texture_format(*format),
            view_dimension: crate::convert::view_dimension(*dimension),
        },
    };
    wgpu::BindGroupLayoutEntry {
        binding: b.binding,
        visibility,
        ty,
        count: None,
    }
}

/// Whether a layout entry can serve what the shader declares (WebGPU's pipeline-layout
/// validation: same kind, a read-only binding may serve read-only use, the stage is
/// visible).
pub(crate) fn entry_serves(entry: &wgpu::BindGroupLayoutEntry, b: &rastra::ShaderBinding) -> bool {
    let want = auto_entry(b);
    if !entry.visibility.contains(want.visibility) {
        return false;
    }
    match (&entry.ty, &want.ty) {
        (
            wgpu::BindingType::Buffer {
                ty: have,
                min_binding_size: have_min,
                ..
            },
            wgpu::BindingType::Buffer {
                ty: need,
                min_binding_size: need_min,
                ..
            },
        ) => {
            let kind_ok = match (have, need) {
                (wgpu::BufferBindingType::Uniform, wgpu::BufferBindingType::Uniform) => true,
                (
                    wgpu::BufferBindingType::Storage { read_only: h },
                    wgpu::BufferBindingType::Storage { read_only: n },
                ) => h == n || (!*h && *n),
                _ => false,
            };
            let size_ok = match (have_min, need_min) {
                (Some(h), Some(n)) => h.get() >= n.get(),
                _ => true,
            };
            kind_ok && size_ok
        }
        (
            wgpu::BindingType::Texture {
                sample_type: have,
                view_dimension: hd,
                multisampled: hm,
            },
            wgpu::BindingType::Texture {
                sample_type: need,
                view_dimension: nd,
                multisampled: nm,
            },
        ) => {
            let sample_ok = match (have, need) {
                (wgpu::TextureSampleType::Float { .. }, wgpu::TextureSampleType::Float { .. }) => {
                    true
                }
                (h, n) => h == n,
            };
            sample_ok && hd == nd && hm == nm
        }
        (h @ wgpu::BindingType::StorageTexture { .. }, n) => h == n,
        (wgpu::BindingType::Sampler(h), wgpu::BindingType::Sampler(n)) => {
            (*h == wgpu::SamplerBindingType::Comparison)
                == (*n == wgpu::SamplerBindingType::Comparison)
        }
        _ => false,
    }
}
