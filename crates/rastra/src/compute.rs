//! Compute pipelines and compute passes (T13 "compute shaders"; WebGPU §"Compute Passes"):
//! a compute pipeline is one lowered compute entry point; a pass records pipeline and bind
//! group changes and dispatches (direct, or indirect from a buffer), validated as they are
//! recorded like render passes are.

use std::sync::Arc;

use rastra_shader::{Program, Stage};

use crate::binding::BindGroup;
use crate::binding_check::validate_bindings;
use crate::command::{BufferRange, Command, CommandEncoder, begin_statistics, end_statistics};
use crate::error::{Error, validation};
use crate::pipeline::MAX_BIND_GROUPS;
use crate::query::QuerySet;
use crate::resource::{Buffer, BufferUsages};
use crate::shader::ShaderModule;

/// WebGPU's default compute limits, which rastra advertises.
pub const MAX_WORKGROUP_SIZE: [u32; 3] = [256, 256, 64];
pub const MAX_INVOCATIONS_PER_WORKGROUP: u32 = 256;
pub const MAX_WORKGROUPS_PER_DIMENSION: u32 = 65_535;

/// Creation parameters of a compute pipeline.
#[derive(Clone, Debug)]
pub struct ComputePipelineDescriptor<'a> {
    pub label: Option<&'a str>,
    pub module: &'a ShaderModule,
    /// None picks the module's only compute entry point.
    pub entry_point: Option<&'a str>,
    /// Values of pipeline-overridable constants, by `@id` or name.
    pub constants: &'a [(&'a str, f64)],
}

/// A compute pipeline.
#[derive(Clone, Debug)]
pub struct ComputePipeline(pub(crate) Arc<Program>);

impl ComputePipeline {
    pub(crate) fn new(desc: &ComputePipelineDescriptor<'_>) -> Result<ComputePipeline, Error> {
        let program = desc
            .module
            .program(desc.entry_point, Stage::Compute, desc.constants)?;
        let size = program.workgroup_size;
        let total = size.iter().map(|&s| s as u64).product::<u64>();
        if size.iter().zip(MAX_WORKGROUP_SIZE).any(|(&s, max)| s > max)
            || total > MAX_INVOCATIONS_PER_WORKGROUP as u64
        {
            return validation(format!(
                "workgroup size {size:?} exceeds the limits ({MAX_WORKGROUP_SIZE:?}, \
                 {MAX_INVOCATIONS_PER_WORKGROUP} invocations)"
            ));
        }
        crate::binding_check::check_group_limit(&program)?;
        Ok(ComputePipeline(program))
    }

    /// The resources the shader uses (for automatic bind group layouts).
    pub fn shader_bindings(&self) -> Vec<crate::ShaderBinding> {
        crate::binding::shader_bindings(&[self.0.as_ref()])
    }

    /// The workgroup size the shader declares.
    pub fn workgroup_size(&self) -> [u32; 3] {
        self.0.workgroup_size
    }
}

/// Records the dispatches of one compute pass.
pub struct ComputePass<'e> {
    encoder: &'e mut CommandEncoder,
    pipeline: Option<ComputePipeline>,
    bind_groups: [Option<BindGroup>; MAX_BIND_GROUPS as usize],
    /// The pipeline-statistics query between begin and end, if any.
    active_statistics: Option<u32>,
    invalid: bool,
    ended: bool,
}

impl CommandEncoder {
    /// Starts a compute pass.
    pub fn begin_compute_pass(&mut self, label: Option<&str>) -> ComputePass<'_> {
        self.commands.push(Command::BeginComputePass {
            label: label.unwrap_or("").to_string(),
        });
        ComputePass {
            encoder: self,
            pipeline: None,
            bind_groups: Default::default(),
            active_statistics: None,
            invalid: false,
            ended: false,
        }
    }
}

impl ComputePass<'_> {
    fn record(&mut self, check: impl FnOnce(&mut Self) -> Result<Command, Error>) {
        if self.invalid {
            return;
        }
        match check(self) {
            Ok(cmd) => self.encoder.commands.push(cmd),
            Err(e) => {
                self.encoder.fail(e);
                self.invalid = true;
            }
        }
    }

    pub fn set_pipeline(&mut self, pipeline: &ComputePipeline) {
        self.record(|s| {
            s.pipeline = Some(pipeline.clone());
            Ok(Command::SetComputePipeline(pipeline.clone()))
        });
    }

    pub fn set_bind_group(&mut self, index: u32, group: &BindGroup) {
        self.record(|s| {
            if index >= MAX_BIND_GROUPS {
                return validation(format!(
                    "bind group index {index} (the limit is {MAX_BIND_GROUPS})"
                ));
            }
            s.bind_groups[index as usize] = Some(group.clone());
            Ok(Command::SetBindGroup(index, group.clone()))
        });
    }

    /// Checks a dispatch; `indirect` is the range its counts are read from.
    fn validate_dispatch(&self, indirect: Option<&BufferRange>) -> Result<(), Error> {
        let Some(p) = &self.pipeline else {
            return validation("dispatch without a compute pipeline");
        };
        let fixed: Vec<&BufferRange> = indirect.into_iter().collect();
        validate_bindings(&[&p.0], &self.bind_groups, &fixed, &[])
    }

    /// Dispatches `x × y × z` workgroups.
    pub fn dispatch_workgroups(&mut self, x: u32, y: u32, z: u32) {
        self.record(|s| {
            s.validate_dispatch(None)?;
            if [x, y, z].iter().any(|&n| n > MAX_WORKGROUPS_PER_DIMENSION) {
                return validation(format!(
                    "dispatch of {x}×{y}×{z} workgroups exceeds {MAX_WORKGROUPS_PER_DIMENSION} per \
                     dimension"
                ));
            }
            Ok(Command::Dispatch([x, y, z]))
        });
    }

    /// Dispatches the workgroup counts stored as three `u32` at `offset` in `buffer` when
    /// the dispatch executes (counts over the per-dimension limit skip the dispatch).
    pub fn dispatch_workgroups_indirect(&mut self, buffer: &Buffer, offset: u64) {
        self.record(|s| {
            if !buffer.usage().contains(BufferUsages::INDIRECT) {
                return validation("indirect dispatch buffer lacks INDIRECT usage");
            }
            if !offset.is_multiple_of(4) || offset.checked_add(12).is_none_or(|e| e > buffer.size())
            {
                return validation(format!(
                    "indirect dispatch at offset {offset} does not fit the {}-byte buffer (or is \
                     not 4-aligned)",
                    buffer.size()
                ));
            }
            s.validate_dispatch(Some(&BufferRange {
                buffer: buffer.clone(),
                offset,
                size: 12,
            }))?;
            Ok(Command::DispatchIndirect {
                buffer: buffer.clone(),
                offset,
            })
        });
    }

    /// Ends the pass (also happens when the pass is dropped).
    pub fn end(mut self) {
        self.finish_pass();
    }

    /// Starts summing the pipeline statistics of the following dispatches into query
    /// `index` of `set` (a pipeline-statistics query set).
    pub fn begin_pipeline_statistics_query(&mut self, set: &QuerySet, index: u32) {
        self.record(|s| begin_statistics(set, index, &mut s.active_statistics));
    }

    /// Stops the active pipeline-statistics query and stores its sums.
    pub fn end_pipeline_statistics_query(&mut self) {
        self.record(|s| end_statistics(&mut s.active_statistics));
    }

    fn finish_pass(&mut self) {
        if let Some(index) = self.active_statistics.take() {
            self.record(|_| {
                validation(format!(
                    "the pass ended while pipeline-statistics query {index} was active"
                ))
            });
        }
        if !self.ended {
            self.ended = true;
            self.encoder.commands.push(Command::EndComputePass);
        }
    }
}

impl Drop for ComputePass<'_> {
    fn drop(&mut self) {
        self.finish_pass();
    }
}
