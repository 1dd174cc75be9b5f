//! The device and its queue (WebGPU `GPUDevice`, `GPUQueue`) on a rastra device.
//!
//! rastra executes a submission to completion inside `Queue::submit`, so nothing is ever in
//! flight: `poll` only runs the callbacks that became due (buffer maps, work-done
//! notifications), which WebGPU never runs inside the call that requested them. Every
//! object creation is infallible in wgpu's API; a failure is reported to the error sink and
//! the object comes back invalid, so using it later is reported again (WebGPU's "invalid
//! object" rule). A runaway shader loses the device: the device-lost callback runs once and
//! every later submission is dropped silently, as WebGPU specifies.

use std::fmt;
use std::future::ready;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use wgpu::custom::*;

use crate::binding::{RastraBindGroup, RastraBindGroupLayout, RastraPipelineLayout};
use crate::command::{RastraCommandBuffer, RastraCommandEncoder, RastraRenderBundleEncoder};
use crate::error::ErrorSink;
use crate::pipeline::{RastraComputePipeline, RastraRenderPipeline, RastraShaderModule};
use crate::resource::{RastraBuffer, RastraQuerySet, RastraSampler, RastraTexture};
use crate::unsupported::Inert;

/// A callback that became due; run by `poll` or after a submission, outside every lock.
pub(crate) type Callback = Box<dyn FnOnce() + Send>;

/// Locks a mutex, recovering the data if a panicking thread poisoned it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a device and its queue share.
pub(crate) struct DeviceShared {
    pub device: rastra::Device,
    pub queue: rastra::Queue,
    pub label: String,
    pub features: wgpu::Features,
    pub limits: wgpu::Limits,
    errors: Mutex<ErrorSink>,
    due: Mutex<Vec<Callback>>,
    lost_callback: Mutex<Option<BoxDeviceLostCallback>>,
    lost: AtomicBool,
    /// Statistics of the last submission (`rastra_wgpu::last_report`).
    pub last_report: Mutex<Option<rastra::FrameStats>>,
    submissions: AtomicU64,
}

impl fmt::Debug for DeviceShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RastraDevice")
            .field("label", &self.label)
            .field("lost", &self.lost.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl DeviceShared {
    pub fn new(
        config: &rastra::DeviceDescriptor,
        label: &str,
        features: wgpu::Features,
        limits: wgpu::Limits,
    ) -> Arc<DeviceShared> {
        let config = rastra::DeviceDescriptor {
            features: rastra::DeviceFeatures {
                indirect_first_instance: features.contains(wgpu::Features::INDIRECT_FIRST_INSTANCE),
                ..config.features
            },
            ..config.clone()
        };
        let (device, queue) = rastra::Device::new(&config);
        Arc::new(DeviceShared {
            device,
            queue,
            label: label.to_string(),
            features,
            limits,
            errors: Mutex::default(),
            due: Mutex::default(),
            lost_callback: Mutex::default(),
            lost: AtomicBool::new(false),
            last_report: Mutex::default(),
            submissions: AtomicU64::new(0),
        })
    }

    /// Reports a failed call (nothing once the device is lost).
    pub fn report(&self, call: &'static str, label: &str, error: rastra::Error) {
        if let rastra::Error::DeviceLost(reason) = &error {
            self.lose(wgpu::DeviceLostReason::Unknown, reason.clone());
            return;
        }
        if self.lost.load(Ordering::Acquire) {
            return;
        }
        let Some(e) = crate::error::to_wgpu(call, label, error) else {
            return;
        };
        let delivery = lock(&self.errors).deliver(e);
        delivery.run();
    }

    /// Reports a validation error with `message`.
    pub fn invalid(&self, call: &'static str, label: &str, message: impl Into<String>) {
        self.report(call, label, rastra::Error::Validation(message.into()));
    }

    /// Reports the error of `result`, if any, and passes the value on.
    pub fn check<T>(
        &self,
        call: &'static str,
        label: &str,
        result: Result<T, rastra::Error>,
    ) -> Option<T> {
        result.map_err(|e| self.report(call, label, e)).ok()
    }

    /// Queues a callback for the next poll (or the end of the next submission).
    pub fn defer(&self, callback: Callback) {
        lock(&self.due).push(callback);
    }

    /// Runs the callbacks that are due, in the order they became due.
    pub fn fire_callbacks(&self) {
        loop {
            let due = std::mem::take(&mut *lock(&self.due));
            if due.is_empty() {
                return;
            }
            for callback in due {
                callback();
            }
        }
    }

    /// Marks the device lost and runs the lost callback (once).
    pub fn lose(&self, reason: wgpu::DeviceLostReason, message: String) {
        if self.lost.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(callback) = lock(&self.lost_callback).take() {
            callback(reason, message);
        }
    }

    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }
}

/// A wgpu device on rastra.
#[derive(Clone, Debug)]
pub struct RastraDevice(pub(crate) Arc<DeviceShared>);

/// The device's queue.
#[derive(Clone, Debug)]
pub struct RastraQueue(pub(crate) Arc<DeviceShared>);

impl RastraDevice {
    /// Statistics of the last submission, per draw and dispatch.
    pub fn last_report(&self) -> Option<rastra::FrameStats> {
        lock(&self.0.last_report).clone()
    }
}

impl DeviceInterface for RastraDevice {
    fn features(&self) -> wgpu::Features {
        self.0.features
    }

    fn limits(&self) -> wgpu::Limits {
        self.0.limits.clone()
    }

    fn adapter_info(&self) -> wgpu::AdapterInfo {
        crate::instance::adapter_info()
    }

    fn create_shader_module(
        &self,
        desc: wgpu::ShaderModuleDescriptor<'_>,
        _shader_bound_checks: wgpu::ShaderRuntimeChecks,
    ) -> DispatchShaderModule {
        DispatchShaderModule::custom(RastraShaderModule::new(&self.0, desc))
    }

    unsafe fn create_shader_module_passthrough(
        &self,
        desc: &wgpu::ShaderModuleDescriptorPassthrough<'_>,
    ) -> DispatchShaderModule {
        let label = desc.label.unwrap_or("");
        DispatchShaderModule::custom(RastraShaderModule::unsupported(
            &self.0,
            label,
            "passthrough shader modules (EXPERIMENTAL_PASSTHROUGH_SHADERS is not advertised)",
        ))
    }

    fn create_bind_group_layout(
        &self,
        desc: &wgpu::BindGroupLayoutDescriptor<'_>,
    ) -> DispatchBindGroupLayout {
        DispatchBindGroupLayout::custom(RastraBindGroupLayout::new(&self.0, desc))
    }

    fn create_bind_group(&self, desc: &wgpu::BindGroupDescriptor<'_>) -> DispatchBindGroup {
        DispatchBindGroup::custom(RastraBindGroup::new(&self.0, desc))
    }

    fn create_pipeline_layout(
        &self,
        desc: &wgpu::PipelineLayoutDescriptor<'_>,
    ) -> DispatchPipelineLayout {
        DispatchPipelineLayout::custom(RastraPipelineLayout::new(&self.0, desc))
    }

    fn create_render_pipeline(
        &self,
        desc: &wgpu::RenderPipelineDescriptor<'_>,
    ) -> DispatchRenderPipeline {
        DispatchRenderPipeline::custom(RastraRenderPipeline::new(&self.0, desc))
    }

    fn create_mesh_pipeline(
        &self,
        desc: &wgpu::MeshPipelineDescriptor<'_>,
    ) -> DispatchRenderPipeline {
        let label = desc.label.unwrap_or("");
        self.0.report(
            "Device::create_mesh_pipeline",
            label,
            rastra::Error::Unsupported("mesh pipelines (EXPERIMENTAL_MESH_SHADER)".into()),
        );
        DispatchRenderPipeline::custom(RastraRenderPipeline::invalid())
    }

    fn create_compute_pipeline(
        &self,
        desc: &wgpu::ComputePipelineDescriptor<'_>,
    ) -> DispatchComputePipeline {
        DispatchComputePipeline::custom(RastraComputePipeline::new(&self.0, desc))
    }

    unsafe fn create_pipeline_cache(
        &self,
        desc: &wgpu::PipelineCacheDescriptor<'_>,
    ) -> DispatchPipelineCache {
        self.0.report(
            "Device::create_pipeline_cache",
            desc.label.unwrap_or(""),
            rastra::Error::Unsupported("pipeline caches (PIPELINE_CACHE)".into()),
        );
        DispatchPipelineCache::custom(Inert)
    }

    fn create_buffer(&self, desc: &wgpu::BufferDescriptor<'_>) -> DispatchBuffer {
        DispatchBuffer::custom(RastraBuffer::new(&self.0, desc))
    }

    fn create_texture(&self, desc: &wgpu::TextureDescriptor<'_>) -> DispatchTexture {
        DispatchTexture::custom(RastraTexture::new(&self.0, desc))
    }

    fn create_external_texture(
        &self,
        desc: &wgpu::ExternalTextureDescriptor<'_>,
        _planes: &[&wgpu::TextureView],
    ) -> DispatchExternalTexture {
        self.0.report(
            "Device::create_external_texture",
            desc.label.unwrap_or(""),
            rastra::Error::Unsupported("external textures (EXTERNAL_TEXTURE)".into()),
        );
        DispatchExternalTexture::custom(Inert)
    }

    fn create_blas(
        &self,
        desc: &wgpu::CreateBlasDescriptor<'_>,
        _sizes: wgpu::BlasGeometrySizeDescriptors,
    ) -> (Option<u64>, DispatchBlas) {
        self.0.report(
            "Device::create_blas",
            desc.label.unwrap_or(""),
            rastra::Error::Unsupported("ray tracing acceleration structures".into()),
        );
        (None, DispatchBlas::custom(Inert))
    }

    fn create_tlas(&self, desc: &wgpu::CreateTlasDescriptor<'_>) -> DispatchTlas {
        self.0.report(
            "Device::create_tlas",
            desc.label.unwrap_or(""),
            rastra::Error::Unsupported("ray tracing acceleration structures".into()),
        );
        DispatchTlas::custom(Inert)
    }

    fn create_sampler(&self, desc: &wgpu::SamplerDescriptor<'_>) -> DispatchSampler {
        DispatchSampler::custom(RastraSampler::new(&self.0, desc))
    }

    fn create_query_set(&self, desc: &wgpu::QuerySetDescriptor<'_>) -> DispatchQuerySet {
        DispatchQuerySet::custom(RastraQuerySet::new(&self.0, desc))
    }

    fn create_command_encoder(
        &self,
        desc: &wgpu::CommandEncoderDescriptor<'_>,
    ) -> DispatchCommandEncoder {
        DispatchCommandEncoder::custom(RastraCommandEncoder::new(&self.0, desc.label))
    }

    fn create_render_bundle_encoder(
        &self,
        desc: &wgpu::RenderBundleEncoderDescriptor<'_>,
    ) -> DispatchRenderBundleEncoder {
        DispatchRenderBundleEncoder::custom(RastraRenderBundleEncoder::new(&self.0, desc))
    }

    fn set_device_lost_callback(&self, device_lost_callback: BoxDeviceLostCallback) {
        if self.0.is_lost() {
            device_lost_callback(
                wgpu::DeviceLostReason::Unknown,
                "the device was already lost".into(),
            );
            return;
        }
        *lock(&self.0.lost_callback) = Some(device_lost_callback);
    }

    fn on_uncaptured_error(&self, handler: Arc<dyn wgpu::UncapturedErrorHandler>) {
        lock(&self.0.errors).set_handler(handler);
    }

    fn push_error_scope(&self, filter: wgpu::ErrorFilter) -> u32 {
        lock(&self.0.errors).push(filter)
    }

    fn pop_error_scope(&self, index: u32) -> Pin<Box<dyn PopErrorScopeFuture>> {
        let popped = lock(&self.0.errors).pop(index);
        let result = match popped {
            Ok(error) => error,
            Err(message) => crate::error::to_wgpu(
                "Device::pop_error_scope",
                "",
                rastra::Error::Validation(message),
            ),
        };
        Box::pin(ready(result))
    }

    unsafe fn start_graphics_debugger_capture(&self) {}

    unsafe fn stop_graphics_debugger_capture(&self) {}

    fn poll(
        &self,
        poll_type: wgpu::wgt::PollType<u64>,
    ) -> Result<wgpu::PollStatus, wgpu::PollError> {
        let last = self.0.submissions.load(Ordering::Acquire);
        if let wgpu::wgt::PollType::Wait {
            submission_index: Some(index),
            ..
        } = poll_type
            && index > last
        {
            return Err(wgpu::PollError::WrongSubmissionIndex(index, last));
        }
        self.0.fire_callbacks();
        Ok(wgpu::PollStatus::QueueEmpty)
    }

    fn get_internal_counters(&self) -> wgpu::InternalCounters {
        wgpu::InternalCounters::default()
    }

    fn generate_allocator_report(&self) -> Option<wgpu::AllocatorReport> {
        None
    }

    fn destroy(&self) {
        self.0.lose(
            wgpu::DeviceLostReason::Destroyed,
            "Device::destroy was called".into(),
        );
    }
}

/// Bytes `write_buffer_with` hands out before they are written to the buffer.
#[derive(Debug)]
pub struct RastraStagingBuffer(Vec<u8>);

impl QueueWriteBufferInterface for RastraStagingBuffer {
    fn len(&self) -> usize {
        self.0.len()
    }

    unsafe fn write_slice(&mut self) -> wgpu::WriteOnly<'_, [u8]> {
        wgpu::WriteOnly::from(self.0.as_mut_slice())
    }
}

impl RastraQueue {
    fn write_buffer_checked(&self, buffer: &DispatchBuffer, offset: u64, data: &[u8]) {
        const CALL: &str = "Queue::write_buffer";
        let Some(b) = buffer.as_custom::<RastraBuffer>() else {
            return;
        };
        let Some(inner) = b.usable(CALL) else {
            return;
        };
        self.0.check(
            CALL,
            b.label(),
            self.0.queue.write_buffer(inner, offset, data),
        );
    }
}

impl QueueInterface for RastraQueue {
    fn write_buffer(&self, buffer: &DispatchBuffer, offset: wgpu::BufferAddress, data: &[u8]) {
        self.write_buffer_checked(buffer, offset, data);
    }

    fn create_staging_buffer(&self, size: wgpu::BufferSize) -> Option<DispatchQueueWriteBuffer> {
        let Ok(len) = usize::try_from(size.get()) else {
            self.0.report(
                "Queue::write_buffer_with",
                "",
                rastra::Error::OutOfMemory(format!("a staging buffer of {size} bytes")),
            );
            return None;
        };
        Some(DispatchQueueWriteBuffer::custom(RastraStagingBuffer(
            vec![0; len],
        )))
    }

    fn validate_write_buffer(
        &self,
        buffer: &DispatchBuffer,
        offset: wgpu::BufferAddress,
        size: wgpu::BufferSize,
    ) -> Option<()> {
        const CALL: &str = "Queue::write_buffer_with";
        let b = buffer.as_custom::<RastraBuffer>()?;
        let inner = b.usable(CALL)?;
        let problem = if !inner.usage().contains(rastra::BufferUsages::COPY_DST) {
            Some("the buffer lacks COPY_DST usage".to_string())
        } else if !offset.is_multiple_of(4) || !size.get().is_multiple_of(4) {
            Some("offset and size must be multiples of 4".to_string())
        } else if offset
            .checked_add(size.get())
            .is_none_or(|end| end > inner.size())
        {
            Some(format!(
                "range {offset}+{size} exceeds the {}-byte buffer",
                inner.size()
            ))
        } else {
            None
        };
        match problem {
            Some(m) => {
                self.0.invalid(CALL, b.label(), m);
                None
            }
            None => Some(()),
        }
    }

    fn write_staging_buffer(
        &self,
        buffer: &DispatchBuffer,
        offset: wgpu::BufferAddress,
        staging_buffer: &DispatchQueueWriteBuffer,
    ) {
        if let Some(staging) = staging_buffer.as_custom::<RastraStagingBuffer>() {
            self.write_buffer_checked(buffer, offset, &staging.0);
        }
    }

    fn write_texture(
        &self,
        texture: wgpu::TexelCopyTextureInfo<'_>,
        data: &[u8],
        data_layout: wgpu::TexelCopyBufferLayout,
        size: wgpu::Extent3d,
    ) {
        const CALL: &str = "Queue::write_texture";
        let Some(t) = texture.texture.as_custom::<RastraTexture>() else {
            return;
        };
        let Some(at) = crate::resource::copy_texture_info(&self.0, CALL, &texture) else {
            return;
        };
        let result = self.0.queue.write_texture_region(
            &at.info(),
            data,
            crate::resource::buffer_layout(data_layout),
            crate::resource::extent(size),
        );
        self.0.check(CALL, t.label(), result);
    }

    fn submit(&self, command_buffers: &mut dyn Iterator<Item = DispatchCommandBuffer>) -> u64 {
        const CALL: &str = "Queue::submit";
        let buffers: Vec<DispatchCommandBuffer> = command_buffers.collect();
        let index = self.0.submissions.fetch_add(1, Ordering::AcqRel) + 1;
        let mut work = Vec::with_capacity(buffers.len());
        let mut valid = true;
        for cb in &buffers {
            let Some(cb) = cb.as_custom::<RastraCommandBuffer>() else {
                continue;
            };
            match cb.take_for_submit() {
                Ok(b) => work.push(b),
                Err(message) => {
                    self.0.invalid(CALL, &cb.label, message);
                    valid = false;
                }
            }
        }
        if valid && !self.0.is_lost() {
            match self.0.queue.submit(work) {
                Ok(()) => {
                    *lock(&self.0.last_report) = Some(self.0.queue.take_stats());
                }
                Err(e) => self.0.report(CALL, "", e),
            }
        }
        self.0.fire_callbacks();
        index
    }

    fn get_timestamp_period(&self) -> f32 {
        1.0
    }

    fn on_submitted_work_done(&self, callback: BoxSubmittedWorkDoneCallback) {
        // Everything submitted so far has finished; the callback runs at the next poll.
        self.0.defer(callback);
    }

    fn compact_blas(&self, _blas: &DispatchBlas) -> (Option<u64>, DispatchBlas) {
        self.0.report(
            "Queue::compact_blas",
            "",
            rastra::Error::Unsupported("ray tracing acceleration structures".into()),
        );
        (None, DispatchBlas::custom(Inert))
    }

    fn present(&self, detail: &DispatchSurfaceOutputDetail) {
        let Some(output) = detail.as_custom::<crate::surface::RastraSurfaceOutput>() else {
            return;
        };
        if let Err(e) = output.present(&self.0) {
            self.0.report("Queue::present", "", e);
        }
    }
}
