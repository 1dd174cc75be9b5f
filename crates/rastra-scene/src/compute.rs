//! Compute recipes: a compute job described as plain data — one WGSL module, buffers with
//! initial contents, group-0 bindings and a list of dispatches — so the same job runs on
//! rastra ([`ComputeRecipe::run`]) and on lavapipe, and the buffers it writes can be compared.

use std::time::Instant;

use rastra::{
    BufferUsages, ComputePipelineDescriptor, Device, DeviceDescriptor, Error, FrameStats,
};

use crate::BufferData;

/// One compute pipeline and its dispatches, in order, in one compute pass.
#[derive(Clone, Debug)]
pub struct ComputeStep {
    pub entry: String,
    /// `@group(0) @binding(b)` → buffer index (whole buffer bound).
    pub bindings: Vec<(u32, usize)>,
    pub workgroups: [u32; 3],
}

/// A compute job.
#[derive(Clone, Debug)]
pub struct ComputeRecipe {
    pub name: String,
    pub shader: String,
    /// Initial contents; every buffer is also COPY_SRC and COPY_DST for upload and readback.
    pub buffers: Vec<BufferData>,
    pub steps: Vec<ComputeStep>,
    /// Buffers read back after the job.
    pub outputs: Vec<usize>,
}

/// What a compute job produced.
#[derive(Clone, Debug)]
pub struct ComputeResult {
    /// Contents of `ComputeRecipe::outputs`, in order.
    pub outputs: Vec<Vec<u8>>,
    pub stats: FrameStats,
    /// Wall-clock milliseconds of each timed submission.
    pub times_ms: Vec<f64>,
}

impl ComputeResult {
    pub fn median_ms(&self) -> f64 {
        crate::median(&self.times_ms)
    }
}

impl ComputeRecipe {
    /// Runs the job on a new rastra device `runs` times (at least once); buffers are reset
    /// to their initial contents before each run (not timed).
    pub fn run(&self, device_desc: &DeviceDescriptor, runs: usize) -> Result<ComputeResult, Error> {
        let (device, queue) = Device::new(device_desc);
        self.run_on(&device, &queue, runs)
    }

    /// [`ComputeRecipe::run`] on an existing device (the job's buffers and pipelines made on
    /// it and dropped, the device kept).
    pub fn run_on(
        &self,
        device: &Device,
        queue: &rastra::Queue,
        runs: usize,
    ) -> Result<ComputeResult, Error> {
        let module = device.create_shader_module(&rastra::ShaderModuleDescriptor {
            label: Some(&self.name),
            source: rastra::ShaderSource::Wgsl(&self.shader),
        })?;
        let buffers = self
            .buffers
            .iter()
            .map(|b| {
                let usage = b.usage | BufferUsages::COPY_SRC | BufferUsages::COPY_DST;
                device.create_buffer_init(Some(&b.label), &b.data, usage)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut steps = Vec::new();
        for step in &self.steps {
            let pipeline = device.create_compute_pipeline(&ComputePipelineDescriptor {
                label: Some(&step.entry),
                module: &module,
                entry_point: Some(&step.entry),
                constants: &[],
            })?;
            let entries: Vec<rastra::BindGroupEntry<'_>> = step
                .bindings
                .iter()
                .map(|&(binding, b)| rastra::BindGroupEntry {
                    binding,
                    resource: rastra::BindingResource::Buffer(rastra::BufferBinding {
                        buffer: &buffers[b],
                        offset: 0,
                        size: None,
                    }),
                })
                .collect();
            let group = device.create_bind_group(&rastra::BindGroupDescriptor {
                label: None,
                entries: &entries,
            })?;
            steps.push((pipeline, group, step.workgroups));
        }
        let mut times = Vec::new();
        for _ in 0..runs.max(1) {
            for (buffer, data) in buffers.iter().zip(&self.buffers) {
                let mut padded = data.data.clone();
                padded.resize(buffer.size() as usize, 0);
                queue.write_buffer(buffer, 0, &padded)?;
            }
            queue.take_stats();
            let mut encoder = device.create_command_encoder();
            {
                let mut pass = encoder.begin_compute_pass(Some(&self.name));
                for (pipeline, group, [x, y, z]) in &steps {
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, group);
                    pass.dispatch_workgroups(*x, *y, *z);
                }
            }
            let commands = encoder.finish()?;
            let start = Instant::now();
            queue.submit([commands])?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        let stats = queue.take_stats();
        let mut outputs = Vec::new();
        for &i in &self.outputs {
            let staging = device.create_buffer(&rastra::BufferDescriptor {
                label: None,
                size: buffers[i].size(),
                usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
            })?;
            let mut encoder = device.create_command_encoder();
            encoder.copy_buffer_to_buffer(&buffers[i], 0, &staging, 0, buffers[i].size());
            queue.submit([encoder.finish()?])?;
            let mut bytes = staging.read()?;
            bytes.truncate(self.buffers[i].data.len());
            outputs.push(bytes);
        }
        Ok(ComputeResult {
            outputs,
            stats,
            times_ms: times,
        })
    }
}
