//! Command encoders and command buffers (passes and bundles: `command/pass.rs`).
//!
//! wgpu's encoder hands out passes that live apart from it, while rastra's passes borrow
//! their encoder; so recording keeps wgpu's calls as a list of operations on rastra
//! objects (resolved, with invalid objects noted as errors), and `finish` replays the list
//! through rastra's own encoder, which validates every call the way it does for rastra
//! programs. The first error of either kind makes the command buffer invalid and is
//! reported by `finish`, as WebGPU reports encoding errors.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use wgpu::custom::*;

use crate::convert;
use crate::device::{DeviceShared, lock};
use crate::resource::{
    RastraBuffer, RastraQuerySet, RastraTextureView, TextureAt, Uses, buffer_layout,
    copy_texture_info, extent,
};

mod pass;
use pass::LayoutCheck;
pub use pass::{RastraComputePass, RastraRenderBundleEncoder, RastraRenderPass};

/// One recorded render-pass command.
#[derive(Clone, Debug)]
enum PassCmd {
    SetPipeline(rastra::RenderPipeline),
    SetBindGroup(u32, rastra::BindGroup),
    SetVertexBuffer(u32, rastra::Buffer, u64, Option<u64>),
    SetIndexBuffer(rastra::Buffer, rastra::IndexFormat, u64, Option<u64>),
    SetViewport([f32; 6]),
    SetScissor([u32; 4]),
    SetBlendConstant(rastra::Color),
    Draw(Range<u32>, Range<u32>),
    DrawIndexed(Range<u32>, i32, Range<u32>),
    /// Arguments at an offset of a buffer; indexed or not.
    DrawIndirect(rastra::Buffer, u64, bool),
    BeginOcclusionQuery(u32),
    EndOcclusionQuery,
    /// WebGPU's state reset around render bundles.
    ResetState,
    BeginStatistics(rastra::QuerySet, u32),
    EndStatistics,
}

/// One recorded compute-pass command.
#[derive(Clone, Debug)]
enum ComputeCmd {
    SetPipeline(rastra::ComputePipeline),
    SetBindGroup(u32, rastra::BindGroup),
    Dispatch([u32; 3]),
    DispatchIndirect(rastra::Buffer, u64),
    BeginStatistics(rastra::QuerySet, u32),
    EndStatistics,
}

struct ColorAttachment {
    view: rastra::TextureView,
    resolve: Option<rastra::TextureView>,
    ops: rastra::Operations<rastra::Color>,
}

struct DepthAttachment {
    view: rastra::TextureView,
    depth_ops: Option<rastra::Operations<f32>>,
    stencil_ops: Option<rastra::Operations<u32>>,
}

struct RenderPassRecord {
    label: String,
    colors: Vec<Option<ColorAttachment>>,
    depth: Option<DepthAttachment>,
    occlusion: Option<rastra::QuerySet>,
    cmds: Vec<PassCmd>,
}

/// One recorded encoder operation.
enum Op {
    CopyBufferToBuffer {
        src: rastra::Buffer,
        src_offset: u64,
        dst: rastra::Buffer,
        dst_offset: u64,
        size: u64,
    },
    CopyBufferToTexture {
        src: rastra::Buffer,
        layout: rastra::TexelCopyBufferLayout,
        dst: TextureAt,
        size: rastra::Extent3d,
    },
    CopyTextureToBuffer {
        src: TextureAt,
        dst: rastra::Buffer,
        layout: rastra::TexelCopyBufferLayout,
        size: rastra::Extent3d,
    },
    CopyTextureToTexture {
        src: TextureAt,
        dst: TextureAt,
        size: rastra::Extent3d,
    },
    ClearBuffer {
        buffer: rastra::Buffer,
        offset: u64,
        size: Option<u64>,
    },
    ResolveQuerySet {
        set: rastra::QuerySet,
        queries: Range<u32>,
        destination: rastra::Buffer,
        offset: u64,
    },
    Render(RenderPassRecord),
    Compute(String, Vec<ComputeCmd>),
}

/// What an encoder has recorded so far.
#[derive(Default)]
struct Recording {
    ops: Vec<Op>,
    /// The first encoding error.
    error: Option<String>,
    /// Buffers and textures the commands use (checked at submission).
    uses: Uses,
    /// A pass is open: the encoder itself may not record.
    open_pass: bool,
    debug_depth: u32,
    finished: bool,
}

impl Recording {
    fn fail(&mut self, message: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some(message.into());
        }
    }

    /// Whether the encoder itself may record now (errors when a pass is open).
    fn ready(&mut self, call: &str) -> bool {
        if self.finished {
            self.fail(format!("{call} after finish"));
            return false;
        }
        if self.open_pass {
            self.fail(format!("{call} while a pass is open"));
            return false;
        }
        true
    }
}

/// A wgpu command encoder on rastra.
pub struct RastraCommandEncoder {
    device: Arc<DeviceShared>,
    label: String,
    rec: Arc<Mutex<Recording>>,
}

impl fmt::Debug for RastraCommandEncoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RastraCommandEncoder({:?})", self.label)
    }
}

impl RastraCommandEncoder {
    pub(crate) fn new(device: &Arc<DeviceShared>, label: Option<&str>) -> Self {
        RastraCommandEncoder {
            device: device.clone(),
            label: label.unwrap_or("").to_string(),
            rec: Arc::default(),
        }
    }

    /// Records `op` and the buffers it uses if the encoder may record and every resource
    /// resolved.
    fn record(&self, call: &str, op: Result<(Op, Uses), String>) {
        let mut rec = lock(&self.rec);
        if !rec.ready(call) {
            return;
        }
        match op {
            Ok((op, uses)) => {
                rec.ops.push(op);
                rec.uses.extend(&uses);
            }
            Err(e) => rec.fail(format!("{call}: {e}")),
        }
    }

    /// Records the failure of a call rastra cannot perform.
    fn refuse(&self, call: &str, why: &str) {
        self.record(call, Err(why.to_string()));
    }
}

/// The rastra buffer behind a wgpu buffer, or why there is none.
fn buffer_of(b: &DispatchBuffer) -> Result<(&RastraBuffer, rastra::Buffer), String> {
    let rb = b
        .as_custom::<RastraBuffer>()
        .ok_or("a buffer of another backend")?;
    let inner = rb.resolve_quiet()?;
    Ok((rb, inner))
}

fn api_buffer_of(b: &wgpu::Buffer) -> Result<(&RastraBuffer, rastra::Buffer), String> {
    let rb = b
        .as_custom::<RastraBuffer>()
        .ok_or("a buffer of another backend")?;
    let inner = rb.resolve_quiet()?;
    Ok((rb, inner))
}

/// The rastra view behind a wgpu view (its texture noted in `uses`), or why there is none.
fn view_of(v: &wgpu::TextureView, uses: &mut Uses) -> Result<rastra::TextureView, String> {
    let rv = v
        .as_custom::<RastraTextureView>()
        .ok_or("a texture view of another backend")?;
    uses.texture(&rv.texture);
    rv.get().cloned()
}

fn texture_at(
    device: &DeviceShared,
    call: &'static str,
    info: &wgpu::TexelCopyTextureInfo<'_>,
) -> Result<TextureAt, String> {
    copy_texture_info(device, call, info).ok_or_else(|| "the texture is invalid".to_string())
}

fn operations<V: Copy, W>(
    ops: &wgpu::Operations<V>,
    value: impl Fn(V) -> W,
) -> rastra::Operations<W> {
    rastra::Operations {
        load: match ops.load {
            wgpu::LoadOp::Clear(v) => rastra::LoadOp::Clear(value(v)),
            _ => rastra::LoadOp::Load,
        },
        store: match ops.store {
            wgpu::StoreOp::Store => rastra::StoreOp::Store,
            wgpu::StoreOp::Discard => rastra::StoreOp::Discard,
        },
    }
}

impl CommandEncoderInterface for RastraCommandEncoder {
    fn copy_buffer_to_buffer(
        &self,
        source: &DispatchBuffer,
        source_offset: wgpu::BufferAddress,
        destination: &DispatchBuffer,
        destination_offset: wgpu::BufferAddress,
        copy_size: Option<wgpu::BufferAddress>,
    ) {
        let op = (|| {
            let (s, src) = buffer_of(source)?;
            let (d, dst) = buffer_of(destination)?;
            let size = copy_size.unwrap_or_else(|| src.size().saturating_sub(source_offset));
            Ok((
                Op::CopyBufferToBuffer {
                    src,
                    src_offset: source_offset,
                    dst,
                    dst_offset: destination_offset,
                    size,
                },
                Uses::default().with_buffer(&s.0).with_buffer(&d.0),
            ))
        })();
        self.record("copy_buffer_to_buffer", op);
    }

    fn copy_buffer_to_texture(
        &self,
        source: wgpu::TexelCopyBufferInfo<'_>,
        destination: wgpu::TexelCopyTextureInfo<'_>,
        copy_size: wgpu::Extent3d,
    ) {
        const CALL: &str = "copy_buffer_to_texture";
        let op = (|| {
            let (b, src) = api_buffer_of(source.buffer)?;
            let dst = texture_at(&self.device, CALL, &destination)?;
            let uses = Uses::default().with_buffer(&b.0).with_texture(&dst.life);
            Ok((
                Op::CopyBufferToTexture {
                    src,
                    layout: buffer_layout(source.layout),
                    dst,
                    size: extent(copy_size),
                },
                uses,
            ))
        })();
        self.record(CALL, op);
    }

    fn copy_texture_to_buffer(
        &self,
        source: wgpu::TexelCopyTextureInfo<'_>,
        destination: wgpu::TexelCopyBufferInfo<'_>,
        copy_size: wgpu::Extent3d,
    ) {
        const CALL: &str = "copy_texture_to_buffer";
        let op = (|| {
            let src = texture_at(&self.device, CALL, &source)?;
            let (b, dst) = api_buffer_of(destination.buffer)?;
            let uses = Uses::default().with_buffer(&b.0).with_texture(&src.life);
            Ok((
                Op::CopyTextureToBuffer {
                    src,
                    dst,
                    layout: buffer_layout(destination.layout),
                    size: extent(copy_size),
                },
                uses,
            ))
        })();
        self.record(CALL, op);
    }

    fn copy_texture_to_texture(
        &self,
        source: wgpu::TexelCopyTextureInfo<'_>,
        destination: wgpu::TexelCopyTextureInfo<'_>,
        copy_size: wgpu::Extent3d,
    ) {
        const CALL: &str = "copy_texture_to_texture";
        let op = (|| {
            let src = texture_at(&self.device, CALL, &source)?;
            let dst = texture_at(&self.device, CALL, &destination)?;
            let uses = Uses::default()
                .with_texture(&src.life)
                .with_texture(&dst.life);
            let op = Op::CopyTextureToTexture {
                src,
                dst,
                size: extent(copy_size),
            };
            Ok((op, uses))
        })();
        self.record(CALL, op);
    }

    fn begin_compute_pass(&self, desc: &wgpu::ComputePassDescriptor<'_>) -> DispatchComputePass {
        let mut error = None;
        {
            let mut rec = lock(&self.rec);
            if rec.ready("begin_compute_pass") {
                rec.open_pass = true;
            } else {
                error = Some("the encoder could not open a pass".to_string());
            }
        }
        if desc.timestamp_writes.is_some() {
            error.get_or_insert_with(|| {
                "timestamp writes need TIMESTAMP_QUERY, which rastra does not advertise".into()
            });
        }
        DispatchComputePass::custom(RastraComputePass {
            rec: self.rec.clone(),
            label: desc.label.unwrap_or("").to_string(),
            cmds: Vec::new(),
            uses: Uses::default(),
            error,
            debug_depth: 0,
            layouts: LayoutCheck::default(),
        })
    }

    fn begin_render_pass(&self, desc: &wgpu::RenderPassDescriptor<'_>) -> DispatchRenderPass {
        let mut error = None;
        {
            let mut rec = lock(&self.rec);
            if rec.ready("begin_render_pass") {
                rec.open_pass = true;
            } else {
                error = Some("the encoder could not open a pass".to_string());
            }
        }
        let mut uses = Uses::default();
        let attachments = (|| -> Result<_, String> {
            if desc.timestamp_writes.is_some() {
                return Err(
                    "timestamp writes need TIMESTAMP_QUERY, which rastra does not \
                            advertise"
                        .into(),
                );
            }
            if desc.multiview_mask.is_some() {
                return Err("multiview is not supported".into());
            }
            let mut colors = Vec::with_capacity(desc.color_attachments.len());
            for (i, c) in desc.color_attachments.iter().enumerate() {
                let Some(c) = c else {
                    colors.push(None);
                    continue;
                };
                if c.depth_slice.is_some() {
                    return Err(format!(
                        "colour attachment {i}: rendering into 3D slices is not supported yet"
                    ));
                }
                colors.push(Some(ColorAttachment {
                    view: view_of(c.view, &mut uses)?,
                    resolve: c
                        .resolve_target
                        .map(|r| view_of(r, &mut uses))
                        .transpose()?,
                    ops: operations(&c.ops, convert::color_from),
                }));
            }
            let depth = match &desc.depth_stencil_attachment {
                None => None,
                Some(d) => Some(DepthAttachment {
                    view: view_of(d.view, &mut uses)?,
                    depth_ops: d.depth_ops.as_ref().map(|o| operations(o, |v| v)),
                    stencil_ops: d.stencil_ops.as_ref().map(|o| operations(o, |v| v)),
                }),
            };
            let occlusion = desc
                .occlusion_query_set
                .map(|q| {
                    q.as_custom::<RastraQuerySet>()
                        .ok_or("a query set of another backend")?
                        .resolve()
                })
                .transpose()?;
            Ok((colors, depth, occlusion))
        })();
        let (colors, depth, occlusion) = match attachments {
            Ok(a) => a,
            Err(e) => {
                error.get_or_insert(e);
                (Vec::new(), None, None)
            }
        };
        DispatchRenderPass::custom(RastraRenderPass {
            rec: self.rec.clone(),
            pass: Some(RenderPassRecord {
                label: desc.label.unwrap_or("").to_string(),
                colors,
                depth,
                occlusion,
                cmds: Vec::new(),
            }),
            uses,
            error,
            debug_depth: 0,
            layouts: LayoutCheck::default(),
        })
    }

    fn finish(&mut self) -> DispatchCommandBuffer {
        let rec = std::mem::take(&mut *lock(&self.rec));
        lock(&self.rec).finished = true;
        let result = (|| {
            let invalid = |m: String| Err(rastra::Error::Validation(m));
            if rec.finished {
                return invalid("the encoder was already finished".into());
            }
            if let Some(e) = rec.error {
                return invalid(e);
            }
            if rec.open_pass {
                return invalid("a pass is still open".into());
            }
            if rec.debug_depth != 0 {
                return invalid(format!(
                    "{} debug groups pushed and never popped",
                    rec.debug_depth
                ));
            }
            replay(&self.device, rec.ops)
        })();
        let (inner, error) = match result {
            Ok(cb) => (Some(cb), None),
            Err(e) => {
                let message = e.to_string();
                self.device.report("CommandEncoder::finish", &self.label, e);
                (None, Some(message))
            }
        };
        DispatchCommandBuffer::custom(RastraCommandBuffer {
            label: self.label.clone(),
            inner: Mutex::new(inner),
            error,
            uses: rec.uses,
        })
    }

    fn clear_texture(
        &self,
        _texture: &DispatchTexture,
        _subresource_range: &wgpu::ImageSubresourceRange,
    ) {
        self.refuse(
            "clear_texture",
            "needs the CLEAR_TEXTURE feature, which rastra does not advertise yet",
        );
    }

    fn clear_buffer(
        &self,
        buffer: &DispatchBuffer,
        offset: wgpu::BufferAddress,
        size: Option<wgpu::BufferAddress>,
    ) {
        let op = buffer_of(buffer).map(|(b, inner)| {
            let op = Op::ClearBuffer {
                buffer: inner,
                offset,
                size,
            };
            (op, Uses::default().with_buffer(&b.0))
        });
        self.record("clear_buffer", op);
    }

    fn insert_debug_marker(&self, _label: &str) {
        lock(&self.rec).ready("insert_debug_marker");
    }

    fn push_debug_group(&self, _label: &str) {
        let mut rec = lock(&self.rec);
        if rec.ready("push_debug_group") {
            rec.debug_depth += 1;
        }
    }

    fn pop_debug_group(&self) {
        let mut rec = lock(&self.rec);
        if rec.ready("pop_debug_group") {
            match rec.debug_depth.checked_sub(1) {
                Some(d) => rec.debug_depth = d,
                None => rec.fail("pop_debug_group without a pushed group"),
            }
        }
    }

    fn write_timestamp(&self, _query_set: &DispatchQuerySet, _query_index: u32) {
        self.refuse(
            "write_timestamp",
            "needs TIMESTAMP_QUERY_INSIDE_ENCODERS, which rastra does not advertise",
        );
    }

    fn resolve_query_set(
        &self,
        query_set: &DispatchQuerySet,
        first_query: u32,
        query_count: u32,
        destination: &DispatchBuffer,
        destination_offset: wgpu::BufferAddress,
    ) {
        let op = (|| {
            let set = query_set
                .as_custom::<RastraQuerySet>()
                .ok_or("a query set of another backend")?
                .resolve()?;
            let (rb, destination) = buffer_of(destination)?;
            let op = Op::ResolveQuerySet {
                set,
                queries: first_query..first_query.saturating_add(query_count),
                destination,
                offset: destination_offset,
            };
            Ok((op, Uses::default().with_buffer(&rb.0)))
        })();
        self.record("resolve_query_set", op);
    }

    fn mark_acceleration_structures_built<'a>(
        &self,
        _blas: &mut dyn Iterator<Item = &'a wgpu::Blas>,
        _tlas: &mut dyn Iterator<Item = &'a wgpu::Tlas>,
    ) {
        self.refuse(
            "mark_acceleration_structures_built",
            "ray tracing is not supported",
        );
    }

    fn build_acceleration_structures<'a>(
        &self,
        _blas: &mut dyn Iterator<Item = &'a wgpu::BlasBuildEntry<'a>>,
        _tlas: &mut dyn Iterator<Item = &'a wgpu::Tlas>,
    ) {
        self.refuse(
            "build_acceleration_structures",
            "ray tracing is not supported",
        );
    }

    fn transition_resources<'a>(
        &mut self,
        _buffer_transitions: &mut dyn Iterator<
            Item = wgpu::wgt::BufferTransition<&'a DispatchBuffer>,
        >,
        _texture_transitions: &mut dyn Iterator<
            Item = wgpu::wgt::TextureTransition<&'a DispatchTexture>,
        >,
    ) {
        // rastra's memory has no layouts or caches to transition.
    }
}

/// Replays recorded operations through rastra's encoder, which validates them.
fn replay(device: &DeviceShared, ops: Vec<Op>) -> Result<rastra::CommandBuffer, rastra::Error> {
    let mut enc = device.device.create_command_encoder();
    for op in ops {
        match op {
            Op::CopyBufferToBuffer {
                src,
                src_offset,
                dst,
                dst_offset,
                size,
            } => enc.copy_buffer_to_buffer(&src, src_offset, &dst, dst_offset, size),
            Op::CopyBufferToTexture {
                src,
                layout,
                dst,
                size,
            } => enc.copy_buffer_to_texture(&src, layout, &dst.info(), size),
            Op::CopyTextureToBuffer {
                src,
                dst,
                layout,
                size,
            } => enc.copy_texture_to_buffer_region(&src.info(), &dst, layout, size),
            Op::CopyTextureToTexture { src, dst, size } => {
                enc.copy_texture_to_texture(&src.info(), &dst.info(), size)
            }
            Op::ClearBuffer {
                buffer,
                offset,
                size,
            } => enc.clear_buffer(&buffer, offset, size),
            Op::ResolveQuerySet {
                set,
                queries,
                destination,
                offset,
            } => enc.resolve_query_set(&set, queries, &destination, offset),
            Op::Render(r) => replay_render(&mut enc, r),
            Op::Compute(label, cmds) => {
                let mut pass = enc.begin_compute_pass(Some(&label));
                for c in cmds {
                    match c {
                        ComputeCmd::SetPipeline(p) => pass.set_pipeline(&p),
                        ComputeCmd::SetBindGroup(i, g) => pass.set_bind_group(i, &g),
                        ComputeCmd::Dispatch([x, y, z]) => pass.dispatch_workgroups(x, y, z),
                        ComputeCmd::DispatchIndirect(b, o) => {
                            pass.dispatch_workgroups_indirect(&b, o)
                        }
                        ComputeCmd::BeginStatistics(set, index) => {
                            pass.begin_pipeline_statistics_query(&set, index)
                        }
                        ComputeCmd::EndStatistics => pass.end_pipeline_statistics_query(),
                    }
                }
                pass.end();
            }
        }
    }
    enc.finish()
}

fn replay_render(enc: &mut rastra::CommandEncoder, r: RenderPassRecord) {
    let colors: Vec<Option<rastra::RenderPassColorAttachment<'_>>> = r
        .colors
        .iter()
        .map(|c| {
            c.as_ref().map(|c| rastra::RenderPassColorAttachment {
                view: &c.view,
                resolve_target: c.resolve.as_ref(),
                ops: c.ops,
            })
        })
        .collect();
    let mut pass = enc.begin_render_pass(&rastra::RenderPassDescriptor {
        label: Some(&r.label),
        color_attachments: &colors,
        depth_stencil_attachment: r.depth.as_ref().map(|d| {
            rastra::RenderPassDepthStencilAttachment {
                view: &d.view,
                depth_ops: d.depth_ops,
                stencil_ops: d.stencil_ops,
            }
        }),
        occlusion_query_set: r.occlusion.as_ref(),
    });
    for c in r.cmds {
        match c {
            PassCmd::SetPipeline(p) => pass.set_pipeline(&p),
            PassCmd::SetBindGroup(i, g) => pass.set_bind_group(i, &g),
            PassCmd::SetVertexBuffer(slot, b, offset, size) => {
                pass.set_vertex_buffer(slot, &b, offset, size)
            }
            PassCmd::SetIndexBuffer(b, format, offset, size) => {
                pass.set_index_buffer(&b, format, offset, size)
            }
            PassCmd::SetViewport([x, y, w, h, min, max]) => pass.set_viewport(x, y, w, h, min, max),
            PassCmd::SetScissor([x, y, w, h]) => pass.set_scissor_rect(x, y, w, h),
            PassCmd::SetBlendConstant(c) => pass.set_blend_constant(c),
            PassCmd::Draw(v, i) => pass.draw(v, i),
            PassCmd::DrawIndexed(idx, base, i) => pass.draw_indexed(idx, base, i),
            PassCmd::DrawIndirect(b, offset, false) => pass.draw_indirect(&b, offset),
            PassCmd::DrawIndirect(b, offset, true) => pass.draw_indexed_indirect(&b, offset),
            PassCmd::BeginOcclusionQuery(index) => pass.begin_occlusion_query(index),
            PassCmd::EndOcclusionQuery => pass.end_occlusion_query(),
            PassCmd::ResetState => pass.reset_state(),
            PassCmd::BeginStatistics(set, index) => {
                pass.begin_pipeline_statistics_query(&set, index)
            }
            PassCmd::EndStatistics => pass.end_pipeline_statistics_query(),
        }
    }
    pass.end();
}

/// A finished command buffer.
pub struct RastraCommandBuffer {
    pub(crate) label: String,
    inner: Mutex<Option<rastra::CommandBuffer>>,
    error: Option<String>,
    uses: Uses,
}

impl fmt::Debug for RastraCommandBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RastraCommandBuffer({:?})", self.label)
    }
}

impl RastraCommandBuffer {
    /// The rastra command buffer, if it is valid, not yet submitted, and every buffer it
    /// uses is unmapped and alive; Err says why not.
    pub(crate) fn take_for_submit(&self) -> Result<rastra::CommandBuffer, String> {
        if let Some(e) = &self.error {
            return Err(format!("the command buffer is invalid: {e}"));
        }
        if let Some(problem) = self.uses.submit_problem() {
            return Err(problem);
        }
        lock(&self.inner)
            .take()
            .ok_or_else(|| "the command buffer was already submitted".to_string())
    }
}

impl CommandBufferInterface for RastraCommandBuffer {}
