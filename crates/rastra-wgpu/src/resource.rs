//! Buffers (with WebGPU's mapping state machine), textures, texture views, samplers and
//! query sets on rastra's memory.
//!
//! Mapping: rastra buffers are device memory the shader cores share, so a mapping is a
//! host-side copy of the mapped range: filled from the buffer when the map completes (at
//! the next poll or submission: WebGPU never completes a map inside `map_async`), handed
//! out by `get_mapped_range` (the copy does not move while mapped, so every view stays
//! valid), and written back at `unmap` for write mappings and `mapped_at_creation`.
//! A mapped or pending buffer cannot be used by a submission or `write_buffer`.

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use wgpu::custom::*;

use crate::convert;
use crate::device::{DeviceShared, lock};

/// The mapping state of a buffer (WebGPU `GPUBufferMapState` plus the mapped bytes).
enum MapState {
    Unmapped,
    Pending {
        range: Range<u64>,
    },
    Mapped {
        write_back: bool,
        range: Range<u64>,
        data: Box<[u8]>,
    },
}

pub(crate) struct BufferShared {
    device: Arc<DeviceShared>,
    label: String,
    /// None when creation failed.
    inner: Option<rastra::Buffer>,
    usage: wgpu::BufferUsages,
    map: Mutex<MapState>,
    destroyed: AtomicBool,
}

/// A wgpu buffer on rastra.
#[derive(Clone)]
pub struct RastraBuffer(pub(crate) Arc<BufferShared>);

impl fmt::Debug for RastraBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RastraBuffer({:?})", self.0.label)
    }
}

impl RastraBuffer {
    pub(crate) fn new(device: &Arc<DeviceShared>, desc: &wgpu::BufferDescriptor<'_>) -> Self {
        const CALL: &str = "Device::create_buffer";
        let label = desc.label.unwrap_or("");
        let inner = (|| {
            if desc.mapped_at_creation && !desc.size.is_multiple_of(4) {
                return Err(rastra::Error::Validation(format!(
                    "a buffer mapped at creation needs a size that is a multiple of 4 ({} given)",
                    desc.size
                )));
            }
            if desc.size > device.limits.max_buffer_size {
                return Err(rastra::Error::Validation(format!(
                    "size {} exceeds max_buffer_size {}",
                    desc.size, device.limits.max_buffer_size
                )));
            }
            let usage = convert::buffer_usages_from(desc.usage).map_err(|unknown| {
                rastra::Error::Unsupported(format!("buffer usages {unknown:?}"))
            })?;
            let mapping = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::MAP_WRITE;
            let others = desc.usage - mapping;
            if desc.usage.contains(wgpu::BufferUsages::MAP_READ)
                && !(wgpu::BufferUsages::COPY_DST).contains(others)
            {
                return Err(rastra::Error::Validation(
                    "MAP_READ may only be combined with COPY_DST".into(),
                ));
            }
            if desc.usage.contains(wgpu::BufferUsages::MAP_WRITE)
                && !(wgpu::BufferUsages::COPY_SRC).contains(others)
            {
                return Err(rastra::Error::Validation(
                    "MAP_WRITE may only be combined with COPY_SRC".into(),
                ));
            }
            device.device.create_buffer(&rastra::BufferDescriptor {
                label: desc.label,
                size: desc.size,
                usage,
            })
        })();
        let inner = device.check(CALL, label, inner);
        let map = match (&inner, desc.mapped_at_creation) {
            (Some(_), true) => MapState::Mapped {
                write_back: true,
                range: 0..desc.size,
                data: vec![0; desc.size as usize].into_boxed_slice(),
            },
            // An invalid buffer mapped at creation still hands out writable memory (none
            // when the size itself was the problem).
            (None, true) => {
                let len = if desc.size <= device.limits.max_buffer_size {
                    desc.size
                } else {
                    0
                };
                MapState::Mapped {
                    write_back: false,
                    range: 0..len,
                    data: vec![0; len as usize].into_boxed_slice(),
                }
            }
            (_, false) => MapState::Unmapped,
        };
        RastraBuffer(Arc::new(BufferShared {
            device: device.clone(),
            label: label.to_string(),
            inner,
            usage: desc.usage,
            map: Mutex::new(map),
            destroyed: AtomicBool::new(false),
        }))
    }

    pub(crate) fn label(&self) -> &str {
        &self.0.label
    }

    /// The rastra buffer if it is valid and not destroyed (reported otherwise); the
    /// mapping state is checked at submission.
    pub(crate) fn resolve(&self, call: &'static str) -> Option<&rastra::Buffer> {
        let why = match &self.0.inner {
            None => "the buffer is invalid (its creation failed)",
            Some(_) if self.0.destroyed.load(Ordering::Acquire) => "the buffer was destroyed",
            Some(b) => return Some(b),
        };
        self.0.device.invalid(call, &self.0.label, why);
        None
    }

    /// The rastra buffer if it is valid and not destroyed; Err says why not (for recording,
    /// whose errors surface at `finish`).
    pub(crate) fn resolve_quiet(&self) -> Result<rastra::Buffer, String> {
        match &self.0.inner {
            None => Err(format!(
                "buffer '{}' is invalid (its creation failed)",
                self.0.label
            )),
            Some(_) if self.0.destroyed.load(Ordering::Acquire) => {
                Err(format!("buffer '{}' was destroyed", self.0.label))
            }
            Some(b) => Ok(b.clone()),
        }
    }

    /// The rastra buffer if it can be used right now: valid, not destroyed, not mapped.
    pub(crate) fn usable(&self, call: &'static str) -> Option<&rastra::Buffer> {
        let b = self.resolve(call)?;
        match self.0.submit_problem() {
            None => Some(b),
            Some(why) => {
                self.0.device.invalid(call, &self.0.label, why);
                None
            }
        }
    }
}

impl BufferShared {
    /// Why a submission may not use the buffer now, if it may not.
    pub(crate) fn submit_problem(&self) -> Option<String> {
        if self.destroyed.load(Ordering::Acquire) {
            return Some(format!("buffer '{}' was destroyed", self.label));
        }
        match &*lock(&self.map) {
            MapState::Unmapped => None,
            _ => Some(format!(
                "buffer '{}' is mapped or has a pending map; unmap it first",
                self.label
            )),
        }
    }
}

impl BufferInterface for RastraBuffer {
    fn map_async(
        &self,
        mode: wgpu::MapMode,
        range: Range<wgpu::BufferAddress>,
        callback: BufferMapCallback,
    ) {
        const CALL: &str = "Buffer::map_async";
        let fail = |why: String, callback: BufferMapCallback| {
            self.0.device.invalid(CALL, &self.0.label, why);
            self.0
                .device
                .defer(Box::new(move || callback(Err(wgpu::BufferAsyncError))));
        };
        let Some(buffer) = self.resolve(CALL) else {
            self.0
                .device
                .defer(Box::new(move || callback(Err(wgpu::BufferAsyncError))));
            return;
        };
        let need = match mode {
            wgpu::MapMode::Read => wgpu::BufferUsages::MAP_READ,
            wgpu::MapMode::Write => wgpu::BufferUsages::MAP_WRITE,
        };
        if !self.0.usage.contains(need) {
            return fail(
                format!("mapping for {mode:?} needs {need:?} usage"),
                callback,
            );
        }
        if !range.start.is_multiple_of(8) || !(range.end - range.start).is_multiple_of(4) {
            return fail(
                format!(
                    "map range {range:?}: the offset must be a multiple of 8 and the size of 4"
                ),
                callback,
            );
        }
        if range.start > range.end || range.end > buffer.size() {
            return fail(
                format!(
                    "map range {range:?} exceeds the {}-byte buffer",
                    buffer.size()
                ),
                callback,
            );
        }
        {
            let mut map = lock(&self.0.map);
            if !matches!(*map, MapState::Unmapped) {
                drop(map);
                return fail(
                    "the buffer is already mapped or has a pending map".into(),
                    callback,
                );
            }
            *map = MapState::Pending {
                range: range.clone(),
            };
        }
        let shared = self.0.clone();
        self.0.device.defer(Box::new(move || {
            let result = {
                let mut map = lock(&shared.map);
                match &*map {
                    // Unmapped (or remapped) before the map completed: WebGPU aborts it.
                    MapState::Pending { range: r } if *r == range => {
                        let mut data = vec![0; (range.end - range.start) as usize];
                        let read = shared
                            .inner
                            .as_ref()
                            .map(|b| b.host_read(range.start, &mut data));
                        match read {
                            Some(Ok(())) => {
                                *map = MapState::Mapped {
                                    write_back: mode == wgpu::MapMode::Write,
                                    range,
                                    data: data.into_boxed_slice(),
                                };
                                Ok(())
                            }
                            _ => {
                                *map = MapState::Unmapped;
                                Err(wgpu::BufferAsyncError)
                            }
                        }
                    }
                    _ => Err(wgpu::BufferAsyncError),
                }
            };
            callback(result);
        }));
    }

    fn get_mapped_range(
        &self,
        sub_range: Range<wgpu::BufferAddress>,
    ) -> Result<DispatchBufferMappedRange, wgpu::MapRangeError> {
        let mut map = lock(&self.0.map);
        if let MapState::Mapped { range, data, .. } = &mut *map
            && range.start <= sub_range.start
            && sub_range.start <= sub_range.end
            && sub_range.end <= range.end
        {
            let start = (sub_range.start - range.start) as usize;
            let len = (sub_range.end - sub_range.start) as usize;
            let ptr = data[start..start + len].as_mut_ptr();
            return Ok(DispatchBufferMappedRange::custom(RastraMappedRange {
                _buffer: self.0.clone(),
                ptr,
                len,
                _detached: None,
            }));
        }
        drop(map);
        // WebGPU throws here; wgpu's API cannot, so the error is reported and the caller
        // gets detached zeroed memory whose writes go nowhere.
        self.0.device.invalid(
            "Buffer::get_mapped_range",
            &self.0.label,
            format!("range {sub_range:?} is not mapped (is the map still pending?)"),
        );
        let len = sub_range.end.saturating_sub(sub_range.start);
        let len = if len <= self.0.device.limits.max_buffer_size {
            len as usize
        } else {
            0
        };
        let mut detached = vec![0u8; len].into_boxed_slice();
        let ptr = detached.as_mut_ptr();
        Ok(DispatchBufferMappedRange::custom(RastraMappedRange {
            _buffer: self.0.clone(),
            ptr,
            len,
            _detached: Some(detached),
        }))
    }

    fn unmap(&self) {
        let previous = std::mem::replace(&mut *lock(&self.0.map), MapState::Unmapped);
        if let MapState::Mapped {
            write_back: true,
            range,
            data,
        } = previous
            && let Some(b) = &self.0.inner
            && !self.0.destroyed.load(Ordering::Acquire)
        {
            let result = b.host_write(range.start, &data);
            self.0.device.check("Buffer::unmap", &self.0.label, result);
        }
    }

    fn destroy(&self) {
        self.unmap();
        self.0.destroyed.store(true, Ordering::Release);
    }
}

/// A view of mapped bytes: points into the buffer's mapping, which stays where it is until
/// `unmap` (wgpu's API drops every view before unmapping).
pub struct RastraMappedRange {
    /// Keeps the mapping alive.
    _buffer: Arc<BufferShared>,
    ptr: *mut u8,
    len: usize,
    /// Backing memory for a view of a range that was not mapped.
    _detached: Option<Box<[u8]>>,
}

// SAFETY: the pointer targets memory owned by `_buffer`'s mapping (or `_detached`), which
// is neither moved nor freed while this view exists; wgpu's API hands out non-overlapping
// mutable views only, so sharing the view across threads is like sharing a `&mut [u8]`.
unsafe impl Send for RastraMappedRange {}
// SAFETY: as above.
unsafe impl Sync for RastraMappedRange {}

impl fmt::Debug for RastraMappedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RastraMappedRange({} bytes)", self.len)
    }
}

impl BufferMappedRangeInterface for RastraMappedRange {
    fn len(&self) -> usize {
        self.len
    }

    unsafe fn read_slice(&self) -> &[u8] {
        // SAFETY: see the Send impl: live, unmoved memory of `len` bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    unsafe fn write_slice(&mut self) -> wgpu::WriteOnly<'_, [u8]> {
        // SAFETY: as for `read_slice`; `&mut self` makes this view's access exclusive.
        let slice = unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) };
        wgpu::WriteOnly::from(slice)
    }
}

/// Whether a texture is still alive: shared by the texture, its views, and whatever uses
/// them (WebGPU checks at submission that no destroyed texture is used).
#[derive(Clone, Debug)]
pub(crate) struct TextureLife {
    label: String,
    destroyed: Arc<AtomicBool>,
}

/// The buffers and textures a command buffer, pass, bundle or bind group uses: a submission
/// needs every buffer alive and unmapped and every texture alive.
#[derive(Clone, Default)]
pub(crate) struct Uses {
    buffers: Vec<Arc<BufferShared>>,
    textures: Vec<TextureLife>,
}

impl Uses {
    pub fn buffer(&mut self, b: &Arc<BufferShared>) {
        self.buffers.push(b.clone());
    }

    pub fn texture(&mut self, t: &TextureLife) {
        self.textures.push(t.clone());
    }

    pub fn with_buffer(mut self, b: &Arc<BufferShared>) -> Uses {
        self.buffer(b);
        self
    }

    pub fn with_texture(mut self, t: &TextureLife) -> Uses {
        self.texture(t);
        self
    }

    pub fn extend(&mut self, other: &Uses) {
        self.buffers.extend(other.buffers.iter().cloned());
        self.textures.extend(other.textures.iter().cloned());
    }

    /// Why a submission may not use these resources now, if it may not.
    pub fn submit_problem(&self) -> Option<String> {
        self.buffers
            .iter()
            .find_map(|b| b.submit_problem())
            .or_else(|| {
                self.textures
                    .iter()
                    .find(|t| t.destroyed.load(Ordering::Acquire))
                    .map(|t| format!("texture '{}' was destroyed", t.label))
            })
    }
}

/// A wgpu texture on rastra.
#[derive(Clone)]
pub struct RastraTexture {
    device: Arc<DeviceShared>,
    label: String,
    pub(crate) inner: Option<rastra::Texture>,
    destroyed: Arc<AtomicBool>,
}

impl fmt::Debug for RastraTexture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RastraTexture({:?})", self.label)
    }
}

impl RastraTexture {
    pub(crate) fn new(device: &Arc<DeviceShared>, desc: &wgpu::TextureDescriptor<'_>) -> Self {
        let label = desc.label.unwrap_or("");
        let inner = (|| {
            let format = format_from(desc.format)?;
            for vf in desc.view_formats {
                if vf.remove_srgb_suffix() != desc.format.remove_srgb_suffix() {
                    return Err(rastra::Error::Unsupported(format!(
                        "view format {vf:?} of a {:?} texture (only the sRGB sibling)",
                        desc.format
                    )));
                }
            }
            let usage = convert::texture_usages_from(desc.usage).map_err(|unknown| {
                rastra::Error::Unsupported(format!("texture usages {unknown:?}"))
            })?;
            device.device.create_texture(&rastra::TextureDescriptor {
                label: desc.label,
                size: extent(desc.size),
                mip_level_count: desc.mip_level_count,
                sample_count: desc.sample_count,
                dimension: convert::texture_dimension_from(desc.dimension)
                    .expect("rastra has every texture dimension"),
                format,
                usage,
            })
        })();
        RastraTexture {
            device: device.clone(),
            label: label.to_string(),
            inner: device.check("Device::create_texture", label, inner),
            destroyed: Arc::default(),
        }
    }

    pub(crate) fn label(&self) -> &str {
        &self.label
    }

    pub(crate) fn life(&self) -> TextureLife {
        TextureLife {
            label: self.label.clone(),
            destroyed: self.destroyed.clone(),
        }
    }

    /// The rastra texture if it is valid and not destroyed (reported otherwise).
    pub(crate) fn resolve(&self, call: &'static str) -> Option<&rastra::Texture> {
        let why = match &self.inner {
            None => "the texture is invalid (its creation failed)",
            Some(_) if self.destroyed.load(Ordering::Acquire) => "the texture was destroyed",
            Some(t) => return Some(t),
        };
        self.device.invalid(call, &self.label, why);
        None
    }
}

/// A wgpu format as rastra's, or Unsupported naming it.
pub(crate) fn format_from(f: wgpu::TextureFormat) -> Result<rastra::TextureFormat, rastra::Error> {
    convert::texture_format_from(f)
        .ok_or_else(|| rastra::Error::Unsupported(format!("texture format {f:?}")))
}

impl TextureInterface for RastraTexture {
    fn create_view(&self, desc: &wgpu::TextureViewDescriptor<'_>) -> DispatchTextureView {
        const CALL: &str = "Texture::create_view";
        let label = desc.label.unwrap_or("");
        let inner = self.inner.as_ref().and_then(|t| {
            let view = (|| {
                let format = desc.format.map(format_from).transpose()?;
                let aspect = convert::texture_aspect_from(desc.aspect).ok_or_else(|| {
                    rastra::Error::Unsupported(format!("texture aspect {:?}", desc.aspect))
                })?;
                t.create_view_with(&rastra::TextureViewDescriptor {
                    format,
                    dimension: desc.dimension.and_then(convert::view_dimension_from),
                    aspect,
                    base_mip_level: desc.base_mip_level,
                    mip_level_count: desc.mip_level_count,
                    base_array_layer: desc.base_array_layer,
                    array_layer_count: desc.array_layer_count,
                })
            })();
            self.device.check(CALL, label, view)
        });
        if self.inner.is_none() {
            self.device
                .invalid(CALL, label, "the texture is invalid (its creation failed)");
        }
        DispatchTextureView::custom(RastraTextureView {
            label: label.to_string(),
            inner,
            texture: self.life(),
        })
    }

    fn destroy(&self) {
        self.destroyed.store(true, Ordering::Release);
    }
}

/// A wgpu texture view on rastra.
#[derive(Clone, Debug)]
pub struct RastraTextureView {
    pub(crate) label: String,
    inner: Option<rastra::TextureView>,
    /// The texture's liveness.
    pub(crate) texture: TextureLife,
}

impl RastraTextureView {
    /// The rastra view if it is valid and its texture not destroyed; Err says why not.
    pub(crate) fn get(&self) -> Result<&rastra::TextureView, String> {
        match &self.inner {
            None => Err(format!(
                "texture view '{}' is invalid (its creation failed)",
                self.label
            )),
            Some(_) if self.texture.destroyed.load(Ordering::Acquire) => Err(format!(
                "the texture of view '{}' was destroyed",
                self.label
            )),
            Some(v) => Ok(v),
        }
    }
}

impl TextureViewInterface for RastraTextureView {}

/// A wgpu sampler on rastra.
#[derive(Clone, Debug)]
pub struct RastraSampler {
    pub(crate) label: String,
    pub(crate) inner: Option<rastra::Sampler>,
}

impl RastraSampler {
    pub(crate) fn new(device: &Arc<DeviceShared>, desc: &wgpu::SamplerDescriptor<'_>) -> Self {
        let label = desc.label.unwrap_or("");
        let address = |m: wgpu::AddressMode| {
            convert::address_mode_from(m)
                .ok_or_else(|| rastra::Error::Unsupported(format!("address mode {m:?}")))
        };
        let inner = (|| {
            device.device.create_sampler(&rastra::SamplerDescriptor {
                address_mode_u: address(desc.address_mode_u)?,
                address_mode_v: address(desc.address_mode_v)?,
                address_mode_w: address(desc.address_mode_w)?,
                mag_filter: convert::filter_mode_from(desc.mag_filter)
                    .expect("rastra has every filter"),
                min_filter: convert::filter_mode_from(desc.min_filter)
                    .expect("rastra has every filter"),
                mipmap_filter: convert::mipmap_filter_from(desc.mipmap_filter),
                lod_min_clamp: desc.lod_min_clamp,
                lod_max_clamp: desc.lod_max_clamp,
                compare: desc
                    .compare
                    .map(|c| convert::compare_function_from(c).expect("rastra has every compare")),
                max_anisotropy: desc.anisotropy_clamp,
                border_color: convert::border_color_from(desc.border_color),
            })
        })();
        RastraSampler {
            label: label.to_string(),
            inner: device.check("Device::create_sampler", label, inner),
        }
    }
}

impl SamplerInterface for RastraSampler {}

/// A wgpu query set on rastra: occlusion or pipeline-statistics queries.
#[derive(Debug)]
pub struct RastraQuerySet {
    pub(crate) label: String,
    /// None when creation failed (reported then).
    pub(crate) inner: Option<rastra::QuerySet>,
}

impl RastraQuerySet {
    pub(crate) fn new(device: &Arc<DeviceShared>, desc: &wgpu::QuerySetDescriptor<'_>) -> Self {
        let label = desc.label.unwrap_or("");
        let inner = match desc.ty {
            wgpu::QueryType::Occlusion => device.check(
                "Device::create_query_set",
                label,
                device.device.create_query_set(&rastra::QuerySetDescriptor {
                    label: desc.label,
                    ty: rastra::QueryType::Occlusion,
                    count: desc.count,
                }),
            ),
            wgpu::QueryType::PipelineStatistics(types)
                if device
                    .features
                    .contains(wgpu::Features::PIPELINE_STATISTICS_QUERY) =>
            {
                use rastra::PipelineStatistics as R;
                use wgpu::PipelineStatisticsTypes as W;
                let ty = [
                    (W::VERTEX_SHADER_INVOCATIONS, R::VERTEX_SHADER_INVOCATIONS),
                    (W::CLIPPER_INVOCATIONS, R::CLIPPER_INVOCATIONS),
                    (W::CLIPPER_PRIMITIVES_OUT, R::CLIPPER_PRIMITIVES_OUT),
                    (
                        W::FRAGMENT_SHADER_INVOCATIONS,
                        R::FRAGMENT_SHADER_INVOCATIONS,
                    ),
                    (W::COMPUTE_SHADER_INVOCATIONS, R::COMPUTE_SHADER_INVOCATIONS),
                ]
                .into_iter()
                .filter(|(w, _)| types.contains(*w))
                .fold(R::default(), |acc, (_, r)| acc | r);
                device.check(
                    "Device::create_query_set",
                    label,
                    device.device.create_query_set(&rastra::QuerySetDescriptor {
                        label: desc.label,
                        ty: rastra::QueryType::PipelineStatistics(ty),
                        count: desc.count,
                    }),
                )
            }
            ty => {
                device.invalid(
                    "Device::create_query_set",
                    label,
                    format!("{ty:?} queries need a feature this device does not have"),
                );
                None
            }
        };
        RastraQuerySet {
            label: label.to_string(),
            inner,
        }
    }

    /// The rastra query set, or why there is none.
    pub(crate) fn resolve(&self) -> Result<rastra::QuerySet, String> {
        self.inner
            .clone()
            .ok_or_else(|| format!("query set '{}' is invalid", self.label))
    }
}

impl QuerySetInterface for RastraQuerySet {
    fn destroy(&self) {}
}

/// A texture location of a copy, resolved to rastra's texture.
pub(crate) struct TextureAt {
    pub texture: rastra::Texture,
    /// The wgpu texture's liveness, checked at submission.
    pub life: TextureLife,
    pub mip_level: u32,
    pub origin: [u32; 3],
    pub aspect: rastra::TextureAspect,
}

impl TextureAt {
    pub fn info(&self) -> rastra::TexelCopyTextureInfo<'_> {
        rastra::TexelCopyTextureInfo {
            texture: &self.texture,
            mip_level: self.mip_level,
            origin: self.origin,
            aspect: self.aspect,
        }
    }
}

/// Resolves a wgpu copy location (reporting an invalid texture or an unknown aspect).
pub(crate) fn copy_texture_info(
    device: &DeviceShared,
    call: &'static str,
    info: &wgpu::TexelCopyTextureInfo<'_>,
) -> Option<TextureAt> {
    let t = info.texture.as_custom::<RastraTexture>()?;
    let texture = t.resolve(call)?.clone();
    let Some(aspect) = convert::texture_aspect_from(info.aspect) else {
        device.report(
            call,
            t.label(),
            rastra::Error::Unsupported(format!("texture aspect {:?}", info.aspect)),
        );
        return None;
    };
    Some(TextureAt {
        texture,
        life: t.life(),
        mip_level: info.mip_level,
        origin: [info.origin.x, info.origin.y, info.origin.z],
        aspect,
    })
}

pub(crate) fn buffer_layout(l: wgpu::TexelCopyBufferLayout) -> rastra::TexelCopyBufferLayout {
    rastra::TexelCopyBufferLayout {
        offset: l.offset,
        bytes_per_row: l.bytes_per_row,
        rows_per_image: l.rows_per_image,
    }
}

pub(crate) fn extent(e: wgpu::Extent3d) -> rastra::Extent3d {
    rastra::Extent3d {
        width: e.width,
        height: e.height,
        depth_or_array_layers: e.depth_or_array_layers,
    }
}
