//! The instance and the adapter: what rastra tells a wgpu program about itself. One CPU
//! adapter; its features, limits and format capabilities are what rastra implements and
//! nothing more (a feature rastra lacks is not advertised, so wgpu programs that check
//! take their fallback path instead of failing later).

use std::future::ready;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};

use wgpu::custom::{
    AdapterInterface, DispatchAdapter, DispatchSurface, EnumerateAdapterFuture, InstanceInterface,
    RequestAdapterFuture, RequestDeviceFuture,
};

use crate::device::{DeviceShared, RastraDevice, RastraQueue};

/// Devices an instance created, for `Instance::poll_all`.
type DeviceList = Arc<Mutex<Vec<Weak<DeviceShared>>>>;

/// The wgpu instance of rastra.
#[derive(Debug)]
pub struct RastraInstance {
    config: rastra::DeviceDescriptor,
    devices: DeviceList,
}

impl RastraInstance {
    /// An instance whose devices use `config` (threads, instruction budget, texel caches).
    pub fn with_config(config: rastra::DeviceDescriptor) -> RastraInstance {
        RastraInstance {
            config,
            devices: Arc::default(),
        }
    }

    fn adapter(&self) -> DispatchAdapter {
        DispatchAdapter::custom(RastraAdapter {
            config: self.config.clone(),
            devices: self.devices.clone(),
        })
    }
}

impl InstanceInterface for RastraInstance {
    fn new(_desc: wgpu::InstanceDescriptor) -> Self {
        RastraInstance::with_config(rastra::DeviceDescriptor::default())
    }

    unsafe fn create_surface(
        &self,
        target: wgpu::SurfaceTargetUnsafe,
    ) -> Result<DispatchSurface, wgpu::CreateSurfaceError> {
        Ok(DispatchSurface::custom(crate::surface::RastraSurface::new(
            target,
        )))
    }

    fn request_adapter(
        &self,
        _options: &wgpu::RequestAdapterOptions<'_, '_>,
    ) -> Pin<Box<dyn RequestAdapterFuture>> {
        Box::pin(ready(Ok(self.adapter())))
    }

    fn poll_all_devices(&self, _force_wait: bool) -> bool {
        let devices: Vec<Arc<DeviceShared>> = {
            let mut list = self.devices.lock().unwrap_or_else(|e| e.into_inner());
            list.retain(|d| d.strong_count() > 0);
            list.iter().filter_map(Weak::upgrade).collect()
        };
        for d in devices {
            d.fire_callbacks();
        }
        // Submissions finish inside `Queue::submit`: no queue has work in flight.
        true
    }

    fn wgsl_language_features(&self) -> wgpu::WgslLanguageFeatures {
        wgpu::WgslLanguageFeatures::empty()
    }

    fn enumerate_adapters(&self, backends: wgpu::Backends) -> Pin<Box<dyn EnumerateAdapterFuture>> {
        let _ = backends;
        Box::pin(ready(vec![self.adapter()]))
    }
}

/// rastra's one adapter.
#[derive(Debug)]
pub struct RastraAdapter {
    config: rastra::DeviceDescriptor,
    devices: DeviceList,
}

/// The optional wgpu features rastra implements.
pub(crate) fn features() -> wgpu::Features {
    wgpu::Features::DEPTH_CLIP_CONTROL
        | wgpu::Features::DEPTH32FLOAT_STENCIL8
        | wgpu::Features::TEXTURE_COMPRESSION_BC
        | wgpu::Features::TEXTURE_COMPRESSION_ETC2
        | wgpu::Features::TEXTURE_COMPRESSION_ASTC
        | wgpu::Features::ADDRESS_MODE_CLAMP_TO_BORDER
        | wgpu::Features::ADDRESS_MODE_CLAMP_TO_ZERO
        | wgpu::Features::FLOAT32_FILTERABLE
        | wgpu::Features::TEXTURE_FORMAT_16BIT_NORM
        | wgpu::Features::INDIRECT_FIRST_INSTANCE
        | wgpu::Features::PIPELINE_STATISTICS_QUERY
}

/// The limits rastra advertises: WebGPU's defaults (every wgpu program asks for them).
pub(crate) fn limits() -> wgpu::Limits {
    wgpu::Limits {
        max_compute_invocations_per_workgroup: rastra::MAX_INVOCATIONS_PER_WORKGROUP,
        max_compute_workgroup_size_x: rastra::MAX_WORKGROUP_SIZE[0],
        max_compute_workgroup_size_y: rastra::MAX_WORKGROUP_SIZE[1],
        max_compute_workgroup_size_z: rastra::MAX_WORKGROUP_SIZE[2],
        max_compute_workgroups_per_dimension: rastra::MAX_WORKGROUPS_PER_DIMENSION,
        ..wgpu::Limits::defaults()
    }
}

pub(crate) fn adapter_info() -> wgpu::AdapterInfo {
    wgpu::AdapterInfo {
        name: "rastra".into(),
        vendor: 0,
        device: 0,
        device_type: wgpu::DeviceType::Cpu,
        device_pci_bus_id: String::new(),
        driver: "rastra".into(),
        driver_info: format!("rastra {}", env!("CARGO_PKG_VERSION")),
        backend: wgpu::Backend::Noop,
        // Informative only (subgroup operations are not advertised): rastra's warp width.
        subgroup_min_size: rastra::WARP_LANES as u32,
        subgroup_max_size: rastra::WARP_LANES as u32,
        transient_saves_memory: Some(false),
        limit_bucket: None,
    }
}

impl AdapterInterface for RastraAdapter {
    fn request_device(
        &self,
        desc: &wgpu::DeviceDescriptor<'_>,
    ) -> Pin<Box<dyn RequestDeviceFuture>> {
        let missing = desc.required_features - features();
        if !missing.is_empty() {
            return Box::pin(ready(Err(wgpu::RequestDeviceError::from_message(format!(
                "rastra does not support the features {missing:?}"
            )))));
        }
        let mut over = Vec::new();
        desc.required_limits
            .check_limits_with_fail_fn(&limits(), false, |name, want, have| {
                over.push(format!("{name} = {want} (rastra: {have})"))
            });
        if !over.is_empty() {
            return Box::pin(ready(Err(wgpu::RequestDeviceError::from_message(format!(
                "limits beyond rastra's: {}",
                over.join(", ")
            )))));
        }
        let shared = DeviceShared::new(
            &self.config,
            desc.label.unwrap_or(""),
            desc.required_features,
            desc.required_limits.clone(),
        );
        self.devices
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::downgrade(&shared));
        let device = wgpu::custom::DispatchDevice::custom(RastraDevice(shared.clone()));
        let queue = wgpu::custom::DispatchQueue::custom(RastraQueue(shared));
        Box::pin(ready(Ok((device, queue))))
    }

    fn is_surface_supported(&self, _surface: &DispatchSurface) -> bool {
        false
    }

    fn features(&self) -> wgpu::Features {
        features()
    }

    fn limits(&self) -> wgpu::Limits {
        limits()
    }

    fn downlevel_capabilities(&self) -> wgpu::DownlevelCapabilities {
        use wgpu::DownlevelFlags as F;
        wgpu::DownlevelCapabilities {
            flags: F::COMPUTE_SHADERS
                | F::FRAGMENT_WRITABLE_STORAGE
                | F::BASE_VERTEX
                | F::NON_POWER_OF_TWO_MIPMAPPED_TEXTURES
                | F::CUBE_ARRAY_TEXTURES
                | F::COMPARISON_SAMPLERS
                | F::INDEPENDENT_BLEND
                | F::VERTEX_STORAGE
                | F::ANISOTROPIC_FILTERING
                | F::FRAGMENT_STORAGE
                | F::DEPTH_TEXTURE_AND_BUFFER_COPIES
                | F::UNRESTRICTED_INDEX_BUFFER
                | F::TEXTURE_COMPRESSION
                | F::INDIRECT_EXECUTION,
            limits: wgpu::DownlevelLimits::default(),
            shader_model: wgpu::ShaderModel::Sm5,
        }
    }

    fn get_info(&self) -> wgpu::AdapterInfo {
        adapter_info()
    }

    fn get_texture_format_features(
        &self,
        format: wgpu::TextureFormat,
    ) -> wgpu::TextureFormatFeatures {
        format_features(format)
    }

    fn get_presentation_timestamp(&self) -> wgpu::PresentationTimestamp {
        wgpu::PresentationTimestamp::INVALID_TIMESTAMP
    }

    fn cooperative_matrix_properties(&self) -> Vec<wgpu::wgt::CooperativeMatrixProperties> {
        Vec::new()
    }
}

/// What rastra can do with a format: WebGPU's guaranteed capabilities for the features
/// rastra has (storage binding for WebGPU's core storage formats, read-write for the r32
/// ones, no texture atomics), minus render attachment where rastra's output merger cannot
/// write the format, and nothing for formats rastra does not know.
pub(crate) fn format_features(format: wgpu::TextureFormat) -> wgpu::TextureFormatFeatures {
    use wgpu::TextureFormatFeatureFlags as Flags;
    use wgpu::TextureUsages as U;
    let Some(f) = crate::convert::texture_format_from(format) else {
        return wgpu::TextureFormatFeatures {
            allowed_usages: U::empty(),
            flags: Flags::empty(),
        };
    };
    let mut out = format.guaranteed_format_features(features());
    out.allowed_usages -= U::STORAGE_ATOMIC;
    out.flags -= Flags::STORAGE_ATOMIC;
    if !f.is_storage_format() {
        out.allowed_usages -= U::STORAGE_BINDING;
        out.flags -=
            Flags::STORAGE_READ_ONLY | Flags::STORAGE_WRITE_ONLY | Flags::STORAGE_READ_WRITE;
    }
    if !f.is_read_write_storage_format() {
        out.flags -= Flags::STORAGE_READ_WRITE;
    }
    if rastra::check_renderable(f).is_ok() {
        out.allowed_usages |= U::RENDER_ATTACHMENT;
        out.flags |= Flags::MULTISAMPLE_X4 | Flags::MULTISAMPLE_RESOLVE;
    } else {
        out.allowed_usages -= U::RENDER_ATTACHMENT;
        out.flags -= Flags::MULTISAMPLE_X2
            | Flags::MULTISAMPLE_X4
            | Flags::MULTISAMPLE_X8
            | Flags::MULTISAMPLE_X16
            | Flags::MULTISAMPLE_RESOLVE
            | Flags::BLENDABLE;
    }
    out.flags -= Flags::MULTISAMPLE_X2 | Flags::MULTISAMPLE_X8 | Flags::MULTISAMPLE_X16;
    if f.is_depth_stencil() {
        out.flags -= Flags::MULTISAMPLE_RESOLVE;
    }
    out
}
