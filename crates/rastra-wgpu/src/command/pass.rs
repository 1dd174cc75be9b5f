//! Render passes, compute passes and render bundle encoders: each records wgpu's calls as
//! commands on rastra objects (checking bind group layouts against the pipeline's at every
//! draw and dispatch) and hands them to its encoder when dropped; bundles hand theirs to the
//! passes that execute them.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use wgpu::custom::*;

use super::{ComputeCmd, Op, PassCmd, Recording, RenderPassRecord, buffer_of};
use crate::binding::{LayoutData, RastraBindGroup};

/// A pipeline's bind group layouts, by group index (None: the group is not used).
type GroupLayouts = [Option<Arc<LayoutData>>];

/// Bind groups a pipeline has (WebGPU's default `maxBindGroups`).
const MAX_BIND_GROUPS: usize = 4;
use crate::convert;
use crate::device::{DeviceShared, lock};
use crate::pipeline::{RastraComputePipeline, RastraRenderPipeline};
use crate::resource::{RastraQuerySet, Uses};

/// The rastra query set behind a wgpu one, or why there is none.
fn query_set_of(set: &DispatchQuerySet) -> Result<rastra::QuerySet, String> {
    set.as_custom::<RastraQuerySet>()
        .ok_or("a query set of another backend")?
        .resolve()
}

/// The bind group layouts WebGPU compares at every draw and dispatch: group by group, the
/// layout a bound group was created with must match the current pipeline's layout.
#[derive(Default)]
pub(super) struct LayoutCheck {
    pub(super) pipeline: Vec<Option<Arc<LayoutData>>>,
    pub(super) groups: Vec<Option<Arc<LayoutData>>>,
}

impl LayoutCheck {
    fn set_pipeline(&mut self, layouts: &GroupLayouts) {
        self.pipeline = layouts.to_vec();
    }

    /// Notes the layout of the group bound at `index`; Err for an index past the limit.
    fn set_group(&mut self, index: u32, layout: Option<Arc<LayoutData>>) -> Result<(), String> {
        let i = index as usize;
        if i >= MAX_BIND_GROUPS {
            return Err(format!(
                "set_bind_group: index {index} (the limit is {MAX_BIND_GROUPS})"
            ));
        }
        if self.groups.len() <= i {
            self.groups.resize(i + 1, None);
        }
        self.groups[i] = layout;
        Ok(())
    }

    /// Why the bound groups do not fit the pipeline, if they do not. Groups not set are
    /// left to rastra, which reports the ones the shaders use.
    fn check(&self, call: &str) -> Result<(), String> {
        for (i, want) in self.pipeline.iter().enumerate() {
            let Some(want) = want else {
                continue;
            };
            match self.groups.get(i) {
                Some(Some(have)) if Arc::ptr_eq(want, have) || **want == **have => {}
                Some(Some(_)) => {
                    return Err(format!(
                        "{call}: the bind group at index {i} was created with a layout that \
                         does not match the pipeline's layout for group {i}"
                    ));
                }
                // WebGPU wants every group of the pipeline layout set, used or not.
                _ => return Err(format!("{call}: the pipeline's bind group {i} is not set")),
            }
        }
        Ok(())
    }
}

/// State shared by render passes and render bundle encoders: resolving wgpu objects into
/// recorded commands.
struct CmdSink<'a> {
    cmds: &'a mut Vec<PassCmd>,
    uses: &'a mut Uses,
    error: &'a mut Option<String>,
    layouts: &'a mut LayoutCheck,
}

impl CmdSink<'_> {
    fn push(&mut self, cmd: Result<PassCmd, String>) {
        if self.error.is_some() {
            return;
        }
        match cmd {
            Ok(PassCmd::ResetState) => {
                *self.layouts = LayoutCheck::default();
                self.cmds.push(PassCmd::ResetState);
            }
            Ok(c) => self.cmds.push(c),
            Err(e) => *self.error = Some(e),
        }
    }

    /// Records a draw after checking the bound groups' layouts against the pipeline's.
    fn draw(&mut self, call: &str, cmd: PassCmd) {
        let checked = self.layouts.check(call).map(|()| cmd);
        self.push(checked);
    }

    fn set_pipeline(&mut self, pipeline: &DispatchRenderPipeline) {
        let p = pipeline.as_custom::<RastraRenderPipeline>();
        let p = pipeline_at(
            self.layouts,
            p.map(|p| (&p.inner, &p.layouts[..])),
            "render",
        );
        self.push(p.map(PassCmd::SetPipeline));
    }

    fn set_bind_group(
        &mut self,
        index: u32,
        group: Option<&DispatchBindGroup>,
        offsets: &[wgpu::DynamicOffset],
    ) {
        let Some(group) = group else {
            // An unset group is simply not bound; draws that need it fail their checks.
            return;
        };
        let g = bind_group_at(self.layouts, self.uses, index, group, offsets);
        self.push(g.map(|g| PassCmd::SetBindGroup(index, g)));
    }

    fn set_vertex_buffer(
        &mut self,
        slot: u32,
        buffer: &DispatchBuffer,
        offset: u64,
        size: Option<wgpu::BufferSize>,
    ) {
        let cmd = buffer_of(buffer).map(|(rb, b)| {
            self.uses.buffer(&rb.0);
            PassCmd::SetVertexBuffer(slot, b, offset, size.map(|s| s.get()))
        });
        self.push(cmd.map_err(|e| format!("set_vertex_buffer: {e}")));
    }

    fn set_index_buffer(
        &mut self,
        buffer: &DispatchBuffer,
        format: wgpu::IndexFormat,
        offset: u64,
        size: Option<wgpu::BufferSize>,
    ) {
        let cmd = buffer_of(buffer).map(|(rb, b)| {
            self.uses.buffer(&rb.0);
            let format = convert::index_format_from(format).expect("both index formats");
            PassCmd::SetIndexBuffer(b, format, offset, size.map(|s| s.get()))
        });
        self.push(cmd.map_err(|e| format!("set_index_buffer: {e}")));
    }
}

impl CmdSink<'_> {
    /// Records `count` indirect draws whose arguments are packed from `offset` on.
    fn draw_indirect(
        &mut self,
        call: &str,
        buffer: &DispatchBuffer,
        offset: u64,
        count: u32,
        indexed: bool,
    ) {
        let stride = if indexed {
            rastra::DrawIndexedIndirectArgs::SIZE
        } else {
            rastra::DrawIndirectArgs::SIZE
        };
        match buffer_of(buffer) {
            Ok((_, b))
                if (count as u64)
                    .checked_mul(stride)
                    .and_then(|bytes| offset.checked_add(bytes))
                    .is_none_or(|end| end > b.size()) =>
            {
                self.push(Err(format!(
                    "{call}: {count} draws of {stride} bytes from offset {offset} do not fit \
                     the {}-byte buffer",
                    b.size()
                )));
            }
            Ok((rb, b)) => {
                self.uses.buffer(&rb.0);
                for k in 0..count as u64 {
                    let cmd = PassCmd::DrawIndirect(b.clone(), offset + k * stride, indexed);
                    self.draw(call, cmd);
                }
            }
            Err(e) => self.push(Err(format!("{call}: {e}"))),
        }
    }
}

/// The rastra pipeline `set_pipeline` sets (`found`: its rastra pipeline, if valid, and
/// its bind group layouts, noted for the draw-time check).
fn pipeline_at<P: Clone>(
    layouts: &mut LayoutCheck,
    found: Option<(&Option<P>, &GroupLayouts)>,
    kind: &str,
) -> Result<P, String> {
    let invalid = || format!("set_pipeline: the {kind} pipeline is invalid");
    let (inner, group_layouts) = found.ok_or_else(invalid)?;
    let inner = inner.clone().ok_or_else(invalid)?;
    layouts.set_pipeline(group_layouts);
    Ok(inner)
}

/// The rastra bind group `set_bind_group` binds at `index` (its layout noted for the
/// draw-time check, its resources in `uses`).
fn bind_group_at(
    layouts: &mut LayoutCheck,
    uses: &mut Uses,
    index: u32,
    group: &DispatchBindGroup,
    offsets: &[wgpu::DynamicOffset],
) -> Result<rastra::BindGroup, String> {
    let layout = group
        .as_custom::<RastraBindGroup>()
        .and_then(|g| g.layout.clone());
    layouts.set_group(index, layout)?;
    resolve_bind_group(group, offsets, uses)
}

/// The rastra bind group for `set_bind_group`, with its dynamic offsets applied.
fn resolve_bind_group(
    group: &DispatchBindGroup,
    offsets: &[wgpu::DynamicOffset],
    uses: &mut Uses,
) -> Result<rastra::BindGroup, String> {
    let g = group
        .as_custom::<RastraBindGroup>()
        .ok_or("set_bind_group: a bind group of another backend")?;
    let inner = g
        .inner
        .as_ref()
        .ok_or_else(|| format!("set_bind_group: bind group '{}' is invalid", g.label))?;
    if offsets.len() != g.dynamic.len() {
        return Err(format!(
            "set_bind_group: {} dynamic offsets for a group with {} dynamic bindings",
            offsets.len(),
            g.dynamic.len()
        ));
    }
    uses.extend(&g.uses);
    if offsets.is_empty() {
        return Ok(inner.clone());
    }
    let pairs: Vec<(u32, u64)> = g
        .dynamic
        .iter()
        .zip(offsets)
        .map(|(&b, &o)| (b, o as u64))
        .collect();
    inner
        .with_dynamic_offsets(&pairs)
        .map_err(|e| format!("set_bind_group: {e}"))
}

/// The state-setting methods render passes and render bundle encoders share: both resolve
/// wgpu objects into recorded commands through their `CmdSink`, and set draws and draw
/// indexed the same way.
macro_rules! recording_methods {
    () => {
        fn set_pipeline(&mut self, pipeline: &DispatchRenderPipeline) {
            self.sink().set_pipeline(pipeline);
        }

        fn set_bind_group(
            &mut self,
            index: u32,
            bind_group: Option<&DispatchBindGroup>,
            offsets: &[wgpu::DynamicOffset],
        ) {
            self.sink().set_bind_group(index, bind_group, offsets);
        }

        fn set_index_buffer(
            &mut self,
            buffer: &DispatchBuffer,
            index_format: wgpu::IndexFormat,
            offset: wgpu::BufferAddress,
            size: Option<wgpu::BufferSize>,
        ) {
            self.sink()
                .set_index_buffer(buffer, index_format, offset, size);
        }

        fn set_vertex_buffer(
            &mut self,
            slot: u32,
            buffer: Option<&DispatchBuffer>,
            offset: wgpu::BufferAddress,
            size: Option<wgpu::BufferSize>,
        ) {
            if let Some(buffer) = buffer {
                self.sink().set_vertex_buffer(slot, buffer, offset, size);
            }
        }

        fn draw(&mut self, vertices: Range<u32>, instances: Range<u32>) {
            self.sink().draw("draw", PassCmd::Draw(vertices, instances));
        }

        fn draw_indexed(&mut self, indices: Range<u32>, base_vertex: i32, instances: Range<u32>) {
            self.sink().draw(
                "draw_indexed",
                PassCmd::DrawIndexed(indices, base_vertex, instances),
            );
        }

        fn draw_indirect(&mut self, buffer: &DispatchBuffer, offset: wgpu::BufferAddress) {
            self.sink()
                .draw_indirect("draw_indirect", buffer, offset, 1, false);
        }

        fn draw_indexed_indirect(&mut self, buffer: &DispatchBuffer, offset: wgpu::BufferAddress) {
            self.sink()
                .draw_indirect("draw_indexed_indirect", buffer, offset, 1, true);
        }
    };
}

/// A wgpu render pass on rastra: records until dropped, then hands its commands to the
/// encoder.
pub struct RastraRenderPass {
    pub(super) rec: Arc<Mutex<Recording>>,
    pub(super) pass: Option<RenderPassRecord>,
    pub(super) uses: Uses,
    pub(super) error: Option<String>,
    pub(super) debug_depth: u32,
    pub(super) layouts: LayoutCheck,
}

impl fmt::Debug for RastraRenderPass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RastraRenderPass")
    }
}

impl RastraRenderPass {
    fn sink(&mut self) -> CmdSink<'_> {
        let pass = self.pass.as_mut().expect("the pass records until dropped");
        CmdSink {
            cmds: &mut pass.cmds,
            uses: &mut self.uses,
            error: &mut self.error,
            layouts: &mut self.layouts,
        }
    }

    fn unsupported(&mut self, what: &str) {
        self.error.get_or_insert_with(|| what.to_string());
    }
}

impl Drop for RastraRenderPass {
    fn drop(&mut self) {
        let mut rec = lock(&self.rec);
        rec.open_pass = false;
        if self.debug_depth != 0 {
            self.error
                .get_or_insert_with(|| "render pass ended with debug groups open".into());
        }
        match self.error.take() {
            Some(e) => rec.fail(format!("render pass: {e}")),
            None => {
                if let Some(p) = self.pass.take() {
                    rec.ops.push(Op::Render(p));
                    rec.uses.extend(&std::mem::take(&mut self.uses));
                }
            }
        }
    }
}

impl RenderPassInterface for RastraRenderPass {
    recording_methods!();

    fn set_immediates(&mut self, _offset: u32, _data: &[u8]) {
        self.unsupported("set_immediates needs the IMMEDIATES feature");
    }

    fn set_blend_constant(&mut self, color: wgpu::Color) {
        self.sink()
            .push(Ok(PassCmd::SetBlendConstant(convert::color_from(color))));
    }

    fn set_scissor_rect(&mut self, x: u32, y: u32, width: u32, height: u32) {
        self.sink()
            .push(Ok(PassCmd::SetScissor([x, y, width, height])));
    }

    fn set_viewport(
        &mut self,
        x: f32,
        y: f32,
        width: f32,
        height: f32,
        min_depth: f32,
        max_depth: f32,
    ) {
        self.sink().push(Ok(PassCmd::SetViewport([
            x, y, width, height, min_depth, max_depth,
        ])));
    }

    fn set_stencil_reference(&mut self, _reference: u32) {
        // Pipelines with stencil tests are refused, so the reference has no reader.
    }

    fn draw_mesh_tasks(&mut self, _x: u32, _y: u32, _z: u32) {
        self.unsupported("mesh shaders are not supported through wgpu yet");
    }

    fn draw_mesh_tasks_indirect(&mut self, _buffer: &DispatchBuffer, _offset: wgpu::BufferAddress) {
        self.unsupported("mesh shaders are not supported through wgpu yet");
    }

    fn multi_draw_indirect(&mut self, buffer: &DispatchBuffer, offset: u64, count: u32) {
        self.sink()
            .draw_indirect("multi_draw_indirect", buffer, offset, count, false);
    }

    fn multi_draw_indexed_indirect(&mut self, buffer: &DispatchBuffer, offset: u64, count: u32) {
        self.sink()
            .draw_indirect("multi_draw_indexed_indirect", buffer, offset, count, true);
    }

    fn multi_draw_indirect_count(
        &mut self,
        _buffer: &DispatchBuffer,
        _offset: u64,
        _count_buffer: &DispatchBuffer,
        _count_offset: u64,
        _max_count: u32,
    ) {
        self.unsupported("multi_draw_indirect_count needs MULTI_DRAW_INDIRECT_COUNT");
    }

    fn multi_draw_mesh_tasks_indirect(
        &mut self,
        _buffer: &DispatchBuffer,
        _offset: u64,
        _count: u32,
    ) {
        self.unsupported("mesh shaders are not supported through wgpu yet");
    }

    fn multi_draw_indexed_indirect_count(
        &mut self,
        _buffer: &DispatchBuffer,
        _offset: u64,
        _count_buffer: &DispatchBuffer,
        _count_offset: u64,
        _max_count: u32,
    ) {
        self.unsupported("multi_draw_indexed_indirect_count needs MULTI_DRAW_INDIRECT_COUNT");
    }

    fn multi_draw_mesh_tasks_indirect_count(
        &mut self,
        _buffer: &DispatchBuffer,
        _offset: u64,
        _count_buffer: &DispatchBuffer,
        _count_offset: u64,
        _max_count: u32,
    ) {
        self.unsupported("mesh shaders are not supported through wgpu yet");
    }

    fn insert_debug_marker(&mut self, _label: &str) {}

    fn push_debug_group(&mut self, _group_label: &str) {
        self.debug_depth += 1;
    }

    fn pop_debug_group(&mut self) {
        match self.debug_depth.checked_sub(1) {
            Some(d) => self.debug_depth = d,
            None => self.unsupported("pop_debug_group without a pushed group"),
        }
    }

    fn write_timestamp(&mut self, _query_set: &DispatchQuerySet, _query_index: u32) {
        self.unsupported("write_timestamp needs TIMESTAMP_QUERY_INSIDE_PASSES");
    }

    fn begin_occlusion_query(&mut self, query_index: u32) {
        self.sink()
            .push(Ok(PassCmd::BeginOcclusionQuery(query_index)));
    }

    fn end_occlusion_query(&mut self) {
        self.sink().push(Ok(PassCmd::EndOcclusionQuery));
    }

    fn begin_pipeline_statistics_query(&mut self, query_set: &DispatchQuerySet, index: u32) {
        let cmd = query_set_of(query_set).map(|set| PassCmd::BeginStatistics(set, index));
        self.sink().push(cmd);
    }

    fn end_pipeline_statistics_query(&mut self) {
        self.sink().push(Ok(PassCmd::EndStatistics));
    }

    fn execute_bundles(&mut self, render_bundles: &mut dyn Iterator<Item = &DispatchRenderBundle>) {
        // Each bundle starts from empty state, and the pass's state is cleared afterwards.
        for b in render_bundles {
            let Some(bundle) = b.as_custom::<RastraRenderBundle>() else {
                continue;
            };
            match &bundle.cmds {
                Ok(cmds) => {
                    // The bundle's draws were checked when it was recorded.
                    let mut sink = self.sink();
                    sink.push(Ok(PassCmd::ResetState));
                    sink.cmds.extend(cmds.iter().cloned());
                    self.uses.extend(&bundle.uses);
                }
                Err(e) => self.unsupported(&format!("execute_bundles: the bundle is invalid: {e}")),
            }
        }
        self.sink().push(Ok(PassCmd::ResetState));
    }
}

/// A wgpu compute pass on rastra.
pub struct RastraComputePass {
    pub(super) rec: Arc<Mutex<Recording>>,
    pub(super) label: String,
    pub(super) cmds: Vec<ComputeCmd>,
    pub(super) uses: Uses,
    pub(super) error: Option<String>,
    pub(super) debug_depth: u32,
    pub(super) layouts: LayoutCheck,
}

impl fmt::Debug for RastraComputePass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RastraComputePass({:?})", self.label)
    }
}

impl RastraComputePass {
    fn push(&mut self, cmd: Result<ComputeCmd, String>) {
        if self.error.is_some() {
            return;
        }
        match cmd {
            Ok(c) => self.cmds.push(c),
            Err(e) => self.error = Some(e),
        }
    }
}

impl Drop for RastraComputePass {
    fn drop(&mut self) {
        let mut rec = lock(&self.rec);
        rec.open_pass = false;
        if self.debug_depth != 0 {
            self.error
                .get_or_insert_with(|| "compute pass ended with debug groups open".into());
        }
        match self.error.take() {
            Some(e) => rec.fail(format!("compute pass: {e}")),
            None => {
                let cmds = std::mem::take(&mut self.cmds);
                rec.ops
                    .push(Op::Compute(std::mem::take(&mut self.label), cmds));
                rec.uses.extend(&std::mem::take(&mut self.uses));
            }
        }
    }
}

impl ComputePassInterface for RastraComputePass {
    fn set_pipeline(&mut self, pipeline: &DispatchComputePipeline) {
        let p = pipeline.as_custom::<RastraComputePipeline>();
        let p = pipeline_at(
            &mut self.layouts,
            p.map(|p| (&p.inner, &p.layouts[..])),
            "compute",
        );
        self.push(p.map(ComputeCmd::SetPipeline));
    }

    fn set_bind_group(
        &mut self,
        index: u32,
        bind_group: Option<&DispatchBindGroup>,
        offsets: &[wgpu::DynamicOffset],
    ) {
        let Some(group) = bind_group else {
            return;
        };
        let g = bind_group_at(&mut self.layouts, &mut self.uses, index, group, offsets);
        self.push(g.map(|g| ComputeCmd::SetBindGroup(index, g)));
    }

    fn set_immediates(&mut self, _offset: u32, _data: &[u8]) {
        self.error
            .get_or_insert_with(|| "set_immediates needs the IMMEDIATES feature".into());
    }

    fn insert_debug_marker(&mut self, _label: &str) {}

    fn push_debug_group(&mut self, _group_label: &str) {
        self.debug_depth += 1;
    }

    fn pop_debug_group(&mut self) {
        match self.debug_depth.checked_sub(1) {
            Some(d) => self.debug_depth = d,
            None => self.push(Err("pop_debug_group without a pushed group".into())),
        }
    }

    fn write_timestamp(&mut self, _query_set: &DispatchQuerySet, _query_index: u32) {
        self.push(Err(
            "write_timestamp needs TIMESTAMP_QUERY_INSIDE_PASSES".into()
        ));
    }

    fn begin_pipeline_statistics_query(&mut self, query_set: &DispatchQuerySet, index: u32) {
        let cmd = query_set_of(query_set).map(|set| ComputeCmd::BeginStatistics(set, index));
        self.push(cmd);
    }

    fn end_pipeline_statistics_query(&mut self) {
        self.push(Ok(ComputeCmd::EndStatistics));
    }

    fn dispatch_workgroups(&mut self, x: u32, y: u32, z: u32) {
        let cmd = self.layouts.check("dispatch_workgroups");
        self.push(cmd.map(|()| ComputeCmd::Dispatch([x, y, z])));
    }

    fn dispatch_workgroups_indirect(
        &mut self,
        indirect_buffer: &DispatchBuffer,
        indirect_offset: wgpu::BufferAddress,
    ) {
        const CALL: &str = "dispatch_workgroups_indirect";
        let cmd = self.layouts.check(CALL).and_then(|()| {
            buffer_of(indirect_buffer)
                .map(|(rb, b)| {
                    self.uses.buffer(&rb.0);
                    ComputeCmd::DispatchIndirect(b, indirect_offset)
                })
                .map_err(|e| format!("{CALL}: {e}"))
        });
        self.push(cmd);
    }

    fn transition_resources<'a>(
        &mut self,
        _buffer_transitions: &mut dyn Iterator<
            Item = wgpu::wgt::BufferTransition<&'a DispatchBuffer>,
        >,
        _texture_transitions: &mut dyn Iterator<
            Item = wgpu::wgt::TextureTransition<&'a DispatchTextureView>,
        >,
    ) {
    }
}

/// A wgpu render bundle encoder on rastra: records render-pass commands for replay.
pub struct RastraRenderBundleEncoder {
    pub(super) cmds: Vec<PassCmd>,
    pub(super) uses: Uses,
    pub(super) error: Option<String>,
    pub(super) layouts: LayoutCheck,
}

impl fmt::Debug for RastraRenderBundleEncoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RastraRenderBundleEncoder")
    }
}

impl RastraRenderBundleEncoder {
    pub(crate) fn new(
        _device: &Arc<DeviceShared>,
        desc: &wgpu::RenderBundleEncoderDescriptor<'_>,
    ) -> Self {
        let error = desc
            .multiview
            .map(|_| "multiview is not supported".to_string());
        RastraRenderBundleEncoder {
            cmds: Vec::new(),
            uses: Uses::default(),
            error,
            layouts: LayoutCheck::default(),
        }
    }

    fn sink(&mut self) -> CmdSink<'_> {
        CmdSink {
            cmds: &mut self.cmds,
            uses: &mut self.uses,
            error: &mut self.error,
            layouts: &mut self.layouts,
        }
    }

    fn unsupported(&mut self, what: &str) {
        self.error.get_or_insert_with(|| what.to_string());
    }

    fn into_bundle(self) -> RastraRenderBundle {
        RastraRenderBundle {
            cmds: match self.error {
                Some(e) => Err(e),
                None => Ok(self.cmds),
            },
            uses: self.uses,
        }
    }
}

impl RenderBundleEncoderInterface for RastraRenderBundleEncoder {
    recording_methods!();

    fn set_immediates(&mut self, _offset: u32, _data: &[u8]) {
        self.unsupported("set_immediates needs the IMMEDIATES feature");
    }

    fn finish(self, _desc: &wgpu::RenderBundleDescriptor<'_>) -> DispatchRenderBundle
    where
        Self: Sized,
    {
        DispatchRenderBundle::custom(self.into_bundle())
    }

    fn finish_boxed(
        self: Box<Self>,
        _desc: &wgpu::RenderBundleDescriptor<'_>,
    ) -> DispatchRenderBundle {
        DispatchRenderBundle::custom((*self).into_bundle())
    }
}

/// A finished render bundle: commands a render pass replays.
pub struct RastraRenderBundle {
    pub(super) cmds: Result<Vec<PassCmd>, String>,
    pub(super) uses: Uses,
}

impl fmt::Debug for RastraRenderBundle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RastraRenderBundle")
    }
}

impl RenderBundleInterface for RastraRenderBundle {}
