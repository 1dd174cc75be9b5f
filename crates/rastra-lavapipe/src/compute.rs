//! A [`ComputeRecipe`] executed on a wgpu device, the way [`ComputeRecipe::run`] executes it
//! on rastra: one shader module, the recipe's buffers (STORAGE | COPY_SRC | COPY_DST plus the
//! recipe's own usages), one compute pipeline with an automatic layout and one group-0 bind
//! group per step, all steps in one compute pass per run, then the output buffers copied to
//! MAP_READ staging buffers and mapped.
//!
//! ```text
//! recipe ─► resources (module, buffers, pipelines, bind groups; validated in one scope)
//!        ─► per run: reset buffers (write_buffer + empty submit, waited, untimed)
//!                    ─► encode pass ─► timed submit → poll
//!        ─► readback (copy outputs → staging, map, truncate to the recipe's lengths)
//! ```
//!
//! Invariants: every wgpu validation error is caught by an error scope and returned as
//! `Err`, and the recipe's indices (bindings, outputs) are checked before use, so a bad
//! recipe never panics; every run starts from the initial contents, so every run computes
//! the same thing and the last run's outputs are returned.

use std::time::Instant;

use rastra::BufferUsages;
use rastra_scene::compute::ComputeRecipe;

use crate::WgpuComputed;
use crate::convert;

/// Runs `recipe` `runs` times (at least once); see [`crate::Lavapipe::run_compute`].
pub fn run(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    recipe: &ComputeRecipe,
    runs: usize,
) -> Result<WgpuComputed, String> {
    check_indices(recipe)?;

    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let resources = Resources::new(device, recipe);
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(format!("creating resources: {e}"));
    }

    let mut times_ms = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        resources.reset(device, queue, recipe)?;
        let commands = resources.encode_pass(device, recipe);
        let start = Instant::now();
        queue.submit([commands]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| format!("waiting for the compute pass: {e}"))?;
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(format!("compute pass: {e}"));
        }
    }

    let outputs = read_back(device, queue, recipe, &resources.buffers)?;
    Ok(WgpuComputed { outputs, times_ms })
}

/// Every buffer index the recipe names must exist (wgpu would not see these; indexing
/// would panic).
fn check_indices(recipe: &ComputeRecipe) -> Result<(), String> {
    let n = recipe.buffers.len();
    for step in &recipe.steps {
        if let Some(&(binding, b)) = step.bindings.iter().find(|&&(_, b)| b >= n) {
            return Err(format!(
                "step {:?} binds buffer {b} at binding {binding}; the recipe has {n} buffers",
                step.entry
            ));
        }
    }
    if let Some(&b) = recipe.outputs.iter().find(|&&b| b >= n) {
        return Err(format!("output buffer {b}; the recipe has {n} buffers"));
    }
    Ok(())
}

/// A buffer's size on the device: its contents rounded up to whole 4-byte words (wgpu's
/// copy and storage-binding granularity; rastra's buffers are words too), at least one word.
fn device_size(data: &[u8]) -> u64 {
    (data.len() as u64)
        .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
        .max(4)
}

/// Everything the job uses, created once for all runs.
struct Resources {
    buffers: Vec<wgpu::Buffer>,
    /// Per step: its pipeline and its group-0 bind group (None when it binds nothing).
    steps: Vec<(wgpu::ComputePipeline, Option<wgpu::BindGroup>)>,
}

impl Resources {
    fn new(device: &wgpu::Device, recipe: &ComputeRecipe) -> Resources {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&recipe.name),
            source: wgpu::ShaderSource::Wgsl(recipe.shader.as_str().into()),
        });
        let buffers = recipe
            .buffers
            .iter()
            .map(|b| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&b.label),
                    size: device_size(&b.data),
                    usage: convert::buffer_usages(
                        b.usage
                            | BufferUsages::STORAGE
                            | BufferUsages::COPY_SRC
                            | BufferUsages::COPY_DST,
                    ),
                    mapped_at_creation: false,
                })
            })
            .collect::<Vec<_>>();
        let steps = recipe
            .steps
            .iter()
            .map(|step| {
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&step.entry),
                    layout: None,
                    module: &module,
                    entry_point: Some(&step.entry),
                    compilation_options: wgpu::PipelineCompilationOptions::default(),
                    cache: None,
                });
                let group = (!step.bindings.is_empty()).then(|| {
                    let layout = pipeline.get_bind_group_layout(0);
                    let entries: Vec<wgpu::BindGroupEntry<'_>> = step
                        .bindings
                        .iter()
                        .map(|&(binding, b)| wgpu::BindGroupEntry {
                            binding,
                            resource: buffers[b].as_entire_binding(),
                        })
                        .collect();
                    device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some(&step.entry),
                        layout: &layout,
                        entries: &entries,
                    })
                });
                (pipeline, group)
            })
            .collect();
        Resources { buffers, steps }
    }

    /// Writes every buffer's initial contents (zero-padded to its device size) and waits for
    /// the writes to land, so the timed submission holds the compute pass alone.
    fn reset(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        recipe: &ComputeRecipe,
    ) -> Result<(), String> {
        for (buffer, data) in self.buffers.iter().zip(&recipe.buffers) {
            let mut padded = data.data.clone();
            padded.resize(buffer.size() as usize, 0);
            queue.write_buffer(buffer, 0, &padded);
        }
        queue.submit([]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| format!("waiting for the buffer reset: {e}"))?;
        Ok(())
    }

    /// Records one run: every step's pipeline, bind group and dispatch, in one pass.
    fn encode_pass(&self, device: &wgpu::Device, recipe: &ComputeRecipe) -> wgpu::CommandBuffer {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(&recipe.name),
                timestamp_writes: None,
            });
            for (step, (pipeline, group)) in recipe.steps.iter().zip(&self.steps) {
                pass.set_pipeline(pipeline);
                if let Some(g) = group {
                    pass.set_bind_group(0, g, &[]);
                }
                let [x, y, z] = step.workgroups;
                pass.dispatch_workgroups(x, y, z);
            }
        }
        encoder.finish()
    }
}

/// Copies the output buffers to MAP_READ staging buffers, maps them and returns their
/// contents truncated to the recipe's lengths.
fn read_back(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    recipe: &ComputeRecipe,
    buffers: &[wgpu::Buffer],
) -> Result<Vec<Vec<u8>>, String> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    let staging: Vec<wgpu::Buffer> = recipe
        .outputs
        .iter()
        .map(|&i| {
            let size = buffers[i].size();
            let s = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            encoder.copy_buffer_to_buffer(&buffers[i], 0, &s, 0, size);
            s
        })
        .collect();
    queue.submit([encoder.finish()]);
    let (tx, rx) = std::sync::mpsc::channel();
    for (k, s) in staging.iter().enumerate() {
        let tx = tx.clone();
        s.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send((k, r));
        });
    }
    drop(tx);
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| format!("waiting for the readback: {e}"))?;
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(format!("readback: {e}"));
    }
    let mut mapped = 0;
    for (k, r) in rx.try_iter() {
        r.map_err(|e| format!("readback of output {k}: mapping failed: {e}"))?;
        mapped += 1;
    }
    if mapped != staging.len() {
        return Err("readback: a map callback never ran".to_string());
    }
    let mut outputs = Vec::with_capacity(staging.len());
    for (s, &i) in staging.iter().zip(&recipe.outputs) {
        let mut bytes = s
            .slice(..)
            .get_mapped_range()
            .map_err(|e| format!("readback: {e}"))?
            .to_vec();
        s.unmap();
        bytes.truncate(recipe.buffers[i].data.len());
        outputs.push(bytes);
    }
    Ok(outputs)
}
