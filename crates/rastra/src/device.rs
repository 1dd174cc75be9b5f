//! The device and its queue: resource creation, submission, readback and statistics.
//!
//! Submission is synchronous: when [`Queue::submit`] returns, the work is done and its
//! results are visible to readback. A shader that exhausts the device's instruction budget
//! loses the device (WebGPU "device lost"); every later call then reports it.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use rastra_stats::FrameStats;
use rastra_texture::CacheConfig as TexelCacheConfig;
use rastra_texture::MipBlend;

use crate::binding::{BindGroup, BindGroupDescriptor};
use crate::command::{CommandBuffer, CommandEncoder};
use crate::error::{Error, validation};
use crate::pipeline::{RenderPipeline, RenderPipelineDescriptor};
use crate::query::{QuerySet, QuerySetDescriptor};
use crate::resource::{Buffer, BufferDescriptor, BufferUsages, TextureUsages};
use crate::shader::{ShaderModule, ShaderModuleDescriptor};
use crate::texture::{
    CopyDirection, Extent3d, Sampler, SamplerDescriptor, TexelCopyBufferLayout,
    TexelCopyTextureInfo, Texture, TextureDescriptor, check_depth_stencil_copy, copy_size,
};

/// Device configuration.
#[derive(Clone, Debug)]
pub struct DeviceDescriptor {
    /// Shader instructions (counted per warp) one submission may execute before the device
    /// declares the shader runaway and reports itself lost.
    pub shader_instruction_budget: u64,
    /// Worker threads for the back end's tiles. None: the `RASTRA_THREADS` environment
    /// variable if set, else one per available core. Images and statistics are identical
    /// for any count.
    pub threads: Option<usize>,
    /// Bind each worker thread to its own CPU when there are as many workers as CPUs the
    /// process may run on (`rastra_pipeline::Workers::new`); otherwise, when false, or
    /// when the `RASTRA_PIN_WORKERS` environment variable is `0`, the OS places them.
    /// Never changes results.
    pub pin_workers: bool,
    /// Geometry of the texel caches: every shader core's L1 and the device's shared L2
    /// (sizes, line shape, associativity). Affects only the cache statistics, never results.
    pub texel_cache: TexelCacheConfig,
    /// How anisotropic samplers' probes blend mip levels (`rastra_texture::MipBlend`):
    /// only across the middle of a level by default (Vulkan leaves the anisotropic filter
    /// to the implementation); `Full` blends like a trilinear sampler. Samplers take it
    /// when they are made.
    pub anisotropic_mip_blend: MipBlend,
    /// Optional behaviours, all on by default.
    pub features: DeviceFeatures,
}

impl Default for DeviceDescriptor {
    fn default() -> Self {
        DeviceDescriptor {
            shader_instruction_budget: 1 << 32,
            threads: None,
            pin_workers: true,
            texel_cache: TexelCacheConfig::default(),
            anisotropic_mip_blend: MipBlend::default(),
            features: DeviceFeatures::default(),
        }
    }
}

/// Behaviours an API layer may switch off to match what its program asked for (Vulkan's
/// and WebGPU's optional device features), and rastra's own optional hardware behaviour.
/// rastra implements all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceFeatures {
    /// Indirect draws honour a non-zero `first_instance`; when off, such a draw is skipped
    /// (WebGPU without `indirect-first-instance`).
    pub indirect_first_instance: bool,
    /// Opaque draws' quads wait in their screen tile after early Z, and those that later
    /// quads overwrite are never shaded (`rastra_pipeline::hidden`). Images are the same
    /// either way; switched off, every quad that passes early Z is shaded, as an
    /// immediate-mode GPU does (fragment-shader invocation counts then match one).
    pub hidden_surface_removal: bool,
}

impl Default for DeviceFeatures {
    fn default() -> Self {
        DeviceFeatures {
            indirect_first_instance: true,
            hidden_surface_removal: true,
        }
    }
}

impl DeviceDescriptor {
    /// Whether workers are to be bound to CPUs: `pin_workers`, unless `RASTRA_PIN_WORKERS`
    /// is `0`.
    pub fn resolved_pinning(&self) -> bool {
        self.pin_workers && std::env::var("RASTRA_PIN_WORKERS").map_or(true, |v| v.trim() != "0")
    }

    /// The worker count this descriptor asks for.
    pub fn resolved_threads(&self) -> usize {
        self.threads
            .or_else(|| std::env::var("RASTRA_THREADS").ok()?.trim().parse().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1)
    }
}

struct Shared {
    desc: DeviceDescriptor,
    workers: rastra_pipeline::Workers,
    lost: Mutex<Option<String>>,
    stats: Mutex<FrameStats>,
    /// The texture L2 every texture unit shares (T4; its model is in `rastra_texture`).
    texture_l2: Mutex<rastra_texture::L2Cache>,
    /// The front end's chunk buffers, reused by every submission.
    chunks: Mutex<rastra_pipeline::ChunkPool>,
    /// The memory region the next texture takes (`rastra_texture::Texture::memory_base`):
    /// the device's textures are numbered in the order it makes them, from 1.
    next_texture_region: AtomicU64,
}

/// A rastra GPU.
#[derive(Clone)]
pub struct Device(Arc<Shared>);

/// The device's queue.
#[derive(Clone)]
pub struct Queue(Arc<Shared>);

impl Device {
    /// Creates a device and its queue.
    pub fn new(desc: &DeviceDescriptor) -> (Device, Queue) {
        let shared = Arc::new(Shared {
            workers: rastra_pipeline::Workers::new(
                desc.resolved_threads(),
                desc.resolved_pinning(),
            ),
            desc: desc.clone(),
            lost: Mutex::new(None),
            stats: Mutex::new(FrameStats::default()),
            texture_l2: Mutex::new(rastra_texture::L2Cache::new(&desc.texel_cache)),
            chunks: Mutex::new(rastra_pipeline::ChunkPool::default()),
            next_texture_region: AtomicU64::new(1),
        });
        (Device(shared.clone()), Queue(shared))
    }

    fn alive(&self) -> Result<(), Error> {
        check_alive(&self.0)
    }

    pub fn create_buffer(&self, desc: &BufferDescriptor<'_>) -> Result<Buffer, Error> {
        self.alive()?;
        Buffer::new(desc)
    }

    /// Creates a buffer holding `contents` (its size rounded up to a multiple of 4).
    pub fn create_buffer_init(
        &self,
        label: Option<&str>,
        contents: &[u8],
        usage: BufferUsages,
    ) -> Result<Buffer, Error> {
        let size = (contents.len() as u64).div_ceil(4) * 4;
        let buffer = self.create_buffer(&BufferDescriptor { label, size, usage })?;
        buffer.write_bytes(0, contents);
        Ok(buffer)
    }

    pub fn create_texture(&self, desc: &TextureDescriptor<'_>) -> Result<Texture, Error> {
        self.alive()?;
        Texture::new(desc, &self.0.next_texture_region)
    }

    pub fn create_sampler(&self, desc: &SamplerDescriptor) -> Result<Sampler, Error> {
        self.alive()?;
        Sampler::new(desc, self.0.desc.anisotropic_mip_blend)
    }

    pub fn create_shader_module(
        &self,
        desc: &ShaderModuleDescriptor<'_>,
    ) -> Result<ShaderModule, Error> {
        self.alive()?;
        ShaderModule::new(desc)
    }

    pub fn create_render_pipeline(
        &self,
        desc: &RenderPipelineDescriptor<'_>,
    ) -> Result<RenderPipeline, Error> {
        self.alive()?;
        RenderPipeline::new(desc)
    }

    pub fn create_compute_pipeline(
        &self,
        desc: &crate::ComputePipelineDescriptor<'_>,
    ) -> Result<crate::ComputePipeline, Error> {
        self.alive()?;
        crate::ComputePipeline::new(desc)
    }

    pub fn create_bind_group(&self, desc: &BindGroupDescriptor<'_>) -> Result<BindGroup, Error> {
        self.alive()?;
        BindGroup::new(desc)
    }

    pub fn create_query_set(&self, desc: &QuerySetDescriptor<'_>) -> Result<QuerySet, Error> {
        self.alive()?;
        QuerySet::new(desc)
    }

    pub fn create_command_encoder(&self) -> CommandEncoder {
        CommandEncoder::new()
    }

    /// The CPU each worker thread is bound to, worker by worker, when the device bound
    /// them ([`DeviceDescriptor::pin_workers`]).
    pub fn pinned_cpus(&self) -> Option<Vec<usize>> {
        self.0.workers.pinned_cpus().map(<[usize]>::to_vec)
    }

    /// Why the device was lost, if it was.
    pub fn lost_reason(&self) -> Option<String> {
        self.0
            .lost
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

fn check_alive(shared: &Shared) -> Result<(), Error> {
    match &*shared.lost.lock().unwrap_or_else(|e| e.into_inner()) {
        Some(reason) => Err(Error::DeviceLost(reason.clone())),
        None => Ok(()),
    }
}

impl Queue {
    /// Executes command buffers in order; returns when they are complete.
    pub fn submit(&self, buffers: impl IntoIterator<Item = CommandBuffer>) -> Result<(), Error> {
        check_alive(&self.0)?;
        let mut budget = self.0.desc.shader_instruction_budget;
        let mut stats = self.0.stats.lock().unwrap_or_else(|e| e.into_inner());
        let mut l2 = self.0.texture_l2.lock().unwrap_or_else(|e| e.into_inner());
        let mut chunks = self.0.chunks.lock().unwrap_or_else(|e| e.into_inner());
        for cb in buffers {
            if let Err(reason) = crate::processor::execute(
                &cb.commands,
                &self.0.desc.features,
                &self.0.workers,
                &mut l2,
                &mut chunks,
                &mut budget,
                &mut stats,
            ) {
                *self.0.lost.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason.clone());
                return Err(Error::DeviceLost(reason));
            }
        }
        Ok(())
    }

    /// Writes `data` into `buffer` at `offset` (the buffer needs COPY_DST usage).
    pub fn write_buffer(&self, buffer: &Buffer, offset: u64, data: &[u8]) -> Result<(), Error> {
        check_alive(&self.0)?;
        if !buffer.usage().contains(BufferUsages::COPY_DST) {
            return validation("write_buffer target lacks COPY_DST usage");
        }
        if !offset.is_multiple_of(4) || !data.len().is_multiple_of(4) {
            return validation("write_buffer offset and size must be multiples of 4");
        }
        if offset
            .checked_add(data.len() as u64)
            .is_none_or(|e| e > buffer.size())
        {
            return validation("write_buffer range exceeds the buffer");
        }
        buffer.write_bytes(offset, data);
        Ok(())
    }

    /// Writes mip level 0 of a single-sample texture (all its layers) from tightly packed
    /// rows.
    pub fn write_texture(&self, texture: &Texture, data: &[u8]) -> Result<(), Error> {
        let [w, h, layers] = texture.mip_size(0);
        let layout = TexelCopyBufferLayout::packed(texture.format(), [w, h, layers]);
        self.write_texture_region(
            &TexelCopyTextureInfo::whole(texture),
            data,
            layout,
            Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: layers,
            },
        )
    }

    /// Writes a region of a texture from linear `data` laid out by `layout` (WebGPU
    /// `writeTexture`: any row pitch that holds a row).
    pub fn write_texture_region(
        &self,
        dst: &TexelCopyTextureInfo<'_>,
        data: &[u8],
        layout: TexelCopyBufferLayout,
        size: Extent3d,
    ) -> Result<(), Error> {
        check_alive(&self.0)?;
        if !dst.texture.usage().contains(TextureUsages::COPY_DST) {
            return validation("write_texture target lacks COPY_DST usage");
        }
        if dst.texture.sample_count() != 1 {
            return validation("multisampled textures cannot be written");
        }
        check_depth_stencil_copy(dst.texture.format(), dst.aspect, CopyDirection::IntoTexture)?;
        dst.texture
            .write_lock()
            .write(dst.at(), data, layout, copy_size(size))?;
        dst.texture.invalidate_hiz();
        Ok(())
    }

    /// Reads mip level 0 of a single-sample texture (all its layers) as tightly packed rows
    /// (the texture needs COPY_SRC usage).
    pub fn read_texture(&self, texture: &Texture) -> Result<Vec<u8>, Error> {
        self.read_texture_level(texture, 0)
    }

    /// Reads mip `level` of a single-sample texture (all its layers) as tightly packed rows.
    pub fn read_texture_level(&self, texture: &Texture, level: u32) -> Result<Vec<u8>, Error> {
        check_alive(&self.0)?;
        if !texture.usage().contains(TextureUsages::COPY_SRC) {
            return validation("read_texture source lacks COPY_SRC usage");
        }
        if texture.sample_count() != 1 {
            return validation("multisampled textures cannot be read back; resolve them first");
        }
        if level >= texture.mip_level_count() {
            return validation(format!("mip level {level} of a texture with fewer levels"));
        }
        let size = texture.mip_size(level);
        let size = match texture.dimension() {
            crate::TextureDimension::D3 => size,
            _ => [size[0], size[1], texture.depth_or_array_layers()],
        };
        Ok(texture.read_lock().read_packed(
            rastra_texture::TextureCopy {
                mip_level: level,
                ..Default::default()
            },
            size,
        )?)
    }

    /// Statistics of everything submitted since the last call, per draw.
    pub fn take_stats(&self) -> FrameStats {
        std::mem::take(&mut *self.0.stats.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
