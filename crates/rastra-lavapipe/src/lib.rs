//! lavapipe (Mesa's CPU Vulkan driver, llvmpipe underneath) as rastra's reference renderer:
//! runs a [`rastra_scene::Frame`] through wgpu's Vulkan backend on lavapipe, for the
//! differential tests (same frame on rastra and on lavapipe, compared pixel for pixel with
//! [`compare_rgba8`]) and for side-by-side benchmarks (submission times measured the way
//! [`rastra_scene::Frame::render`] measures rastra's). Compute jobs
//! ([`rastra_scene::compute::ComputeRecipe`]) run the same way through
//! [`Lavapipe::run_compute`], returning the output buffers.
//!
//! ```text
//! Frame ─► convert (rastra state → wgpu state) ─► render (wgpu resources, one render pass
//!          per run, timed submit → poll) ─► readback (256-byte rows → tightly packed)
//! ```
//!
//! API boundary: nothing in rastra depends on this crate; it only reads rastra's public
//! state types. When lavapipe is not installed, [`Lavapipe::new`] says so and callers skip.

use std::sync::Arc;

mod compute;
mod convert;
mod diff;
mod render;

pub use diff::{Diff, compare_rgba8};

/// A wgpu device on lavapipe.
pub struct Lavapipe {
    /// Kept alive for the adapter's and device's sake.
    _instance: wgpu::Instance,
    info: wgpu::AdapterInfo,
    /// Whether the adapter filters anisotropically (wgpu's downlevel flag, from Vulkan's
    /// `samplerAnisotropy`): without it a sampler's anisotropy clamp is ignored and
    /// samples are plain trilinear.
    anisotropic: bool,
    device: wgpu::Device,
    queue: wgpu::Queue,
}

/// An image rendered through wgpu (on lavapipe, or on any wgpu device with [`render_on`])
/// and the times of its submissions.
#[derive(Clone, Debug)]
pub struct WgpuRendered {
    /// The colour target after the last run: tightly packed rows in the frame's
    /// `color_format`, multisampled targets resolved.
    pub pixels: Vec<u8>,
    /// Wall-clock milliseconds of each run, from `queue.submit` to the completion of the
    /// submission.
    pub times_ms: Vec<f64>,
}

impl WgpuRendered {
    /// Median of the timed submissions.
    pub fn median_ms(&self) -> f64 {
        rastra_scene::median(&self.times_ms)
    }
}

/// The output buffers of a compute job run through wgpu (on lavapipe, or on any wgpu device
/// with [`run_compute_on`]) and the times of its submissions.
#[derive(Clone, Debug)]
pub struct WgpuComputed {
    /// Contents of the recipe's `outputs` after the last run, in order, each as long as
    /// the buffer's initial contents.
    pub outputs: Vec<Vec<u8>>,
    /// Wall-clock milliseconds of each run, from `queue.submit` to the completion of the
    /// submission (the buffer reset before it is not timed).
    pub times_ms: Vec<f64>,
}

impl WgpuComputed {
    /// Median of the timed submissions.
    pub fn median_ms(&self) -> f64 {
        rastra_scene::median(&self.times_ms)
    }
}

/// True for lavapipe's adapter (the llvmpipe driver exposed through Vulkan).
fn is_lavapipe(info: &wgpu::AdapterInfo) -> bool {
    let llvmpipe = |s: &str| s.to_ascii_lowercase().contains("llvmpipe");
    info.device_type == wgpu::DeviceType::Cpu && (llvmpipe(&info.name) || llvmpipe(&info.driver))
}

impl Lavapipe {
    /// Finds lavapipe through wgpu's Vulkan backend and opens a device on it with the
    /// adapter's own limits. `Err` (with the adapters that were found) when lavapipe is not
    /// installed; callers then skip, saying so.
    pub fn new() -> Result<Lavapipe, String> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            // No validation layers: they are rarely installed and only slow lavapipe down.
            flags: wgpu::InstanceFlags::empty(),
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
        let found: Vec<String> = adapters
            .iter()
            .map(|a| {
                let i = a.get_info();
                format!("{} ({:?}, driver {:?})", i.name, i.device_type, i.driver)
            })
            .collect();
        let adapter = adapters
            .into_iter()
            .find(|a| is_lavapipe(&a.get_info()))
            .ok_or_else(|| {
                format!(
                    "lavapipe not found through wgpu's Vulkan backend (install mesa-vulkan-drivers \
                     and libvulkan1); Vulkan adapters found: [{}]",
                    found.join(", ")
                )
            })?;
        let info = adapter.get_info();
        let anisotropic = adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::ANISOTROPIC_FILTERING);
        // Unclipped depth (PrimitiveState::unclipped_depth) needs depth-clip control.
        let features = adapter.features()
            & (wgpu::Features::DEPTH_CLIP_CONTROL
                | wgpu::Features::ADDRESS_MODE_CLAMP_TO_BORDER
                | wgpu::Features::ADDRESS_MODE_CLAMP_TO_ZERO
                | wgpu::Features::TEXTURE_COMPRESSION_BC
                | wgpu::Features::TEXTURE_COMPRESSION_ETC2
                | wgpu::Features::TEXTURE_COMPRESSION_ASTC
                | wgpu::Features::FLOAT32_FILTERABLE
                | wgpu::Features::TEXTURE_FORMAT_16BIT_NORM);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("rastra-lavapipe"),
            required_features: features,
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::default(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| format!("lavapipe ({}): request_device failed: {e}", info.name))?;
        // Errors are caught by error scopes around each step; anything escaping them is
        // reported rather than panicking the caller.
        device.on_uncaptured_error(Arc::new(|e| eprintln!("rastra-lavapipe: wgpu error: {e}")));
        Ok(Lavapipe {
            _instance: instance,
            info,
            anisotropic,
            device,
            queue,
        })
    }

    /// The adapter and driver, e.g. "llvmpipe (LLVM 15.0.6, 256 bits), Mesa 22.3.6 (LLVM
    /// 15.0.6)".
    pub fn description(&self) -> String {
        let i = &self.info;
        if i.driver_info.is_empty() {
            format!("{} ({})", i.name, i.driver)
        } else {
            format!("{}, {}", i.name, i.driver_info)
        }
    }

    /// Whether lavapipe filters anisotropically (wgpu's `ANISOTROPIC_FILTERING` downlevel
    /// flag): when not, the benchmark's 16× anisotropic sampler runs trilinear there.
    pub fn anisotropic(&self) -> bool {
        self.anisotropic
    }

    /// The wgpu device and queue on lavapipe, for running wgpu programs directly.
    pub fn wgpu(&self) -> (&wgpu::Device, &wgpu::Queue) {
        (&self.device, &self.queue)
    }

    /// Renders `frame` `runs` times (at least once), timing each submission from
    /// `queue.submit` to its completion; resource and pipeline creation and the readback are
    /// not timed. Returns the last image and the times.
    pub fn render(&self, frame: &rastra_scene::Frame, runs: usize) -> Result<WgpuRendered, String> {
        render_on(&self.device, &self.queue, frame, runs)
            .map_err(|e| format!("lavapipe, frame {:?}: {e}", frame.name))
    }

    /// Runs the compute job `runs` times (at least once), resetting its buffers to their
    /// initial contents before each run (not timed) and timing each run from `queue.submit`
    /// to its completion, as [`ComputeRecipe::run`] does on rastra. Pipelines use automatic
    /// layouts, one group-0 bind group per step; every buffer is STORAGE | COPY_SRC |
    /// COPY_DST plus the recipe's usages (mapping usages dropped). Returns the output
    /// buffers of the last run; wgpu validation errors (bad WGSL, unknown entry points,
    /// bindings that do not match the shader, dispatches over the limits) and out-of-range
    /// buffer indices come back as `Err`.
    ///
    /// [`ComputeRecipe::run`]: rastra_scene::compute::ComputeRecipe::run
    pub fn run_compute(
        &self,
        recipe: &rastra_scene::compute::ComputeRecipe,
        runs: usize,
    ) -> Result<WgpuComputed, String> {
        run_compute_on(&self.device, &self.queue, recipe, runs)
            .map_err(|e| format!("lavapipe, compute job {:?}: {e}", recipe.name))
    }
}

/// Renders `frame` as a wgpu program on any wgpu device (what [`Lavapipe::render`] does on
/// lavapipe) — e.g. on rastra through `rastra_wgpu`, to measure rastra as wgpu programs
/// see it.
pub fn render_on(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    frame: &rastra_scene::Frame,
    runs: usize,
) -> Result<WgpuRendered, String> {
    render::render(device, queue, frame, runs)
}

/// Runs a compute job as a wgpu program on any wgpu device (what [`Lavapipe::run_compute`]
/// does on lavapipe).
pub fn run_compute_on(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    recipe: &rastra_scene::compute::ComputeRecipe,
    runs: usize,
) -> Result<WgpuComputed, String> {
    compute::run(device, queue, recipe, runs)
}
