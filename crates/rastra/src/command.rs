//! Command encoding (T2 "command buffers"): the API records work as a closed list of
//! [`Command`]s; render-pass state and draws are validated while they are recorded, so the
//! command processor executes a command buffer without checking it again. The first
//! validation error poisons the encoder and is returned by [`CommandEncoder::finish`], as
//! WebGPU does.

use std::ops::Range;

use rastra_shader::Program;

use crate::binding::BindGroup;
use crate::error::{Error, validation};
use crate::pipeline::{MAX_BIND_GROUPS, RenderPipeline};
use crate::query::{QuerySet, QueryType};
use crate::resource::{Buffer, BufferUsages, TextureUsages};
use crate::texture::{
    CopyDirection, Extent3d, TexelCopyBufferLayout, TexelCopyTextureInfo, Texture, TextureView,
    check_depth_stencil_copy, copy_size,
};
use crate::{IndexFormat, VertexStepMode};
use rastra_texture::TextureCopy;

pub use rastra_pipeline::state::Color;

/// What a pass does with an attachment's old contents.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadOp<V> {
    Clear(V),
    Load,
}

/// What a pass does with an attachment's new contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreOp {
    Store,
    /// The contents become zero (WebGPU's "discard").
    Discard,
}

/// Load and store operations of one attachment aspect.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Operations<V> {
    pub load: LoadOp<V>,
    pub store: StoreOp,
}

/// A colour attachment of a render pass.
#[derive(Clone, Debug)]
pub struct RenderPassColorAttachment<'a> {
    pub view: &'a TextureView,
    /// Single-sample texture the multisampled `view` is resolved into at the end of the pass.
    pub resolve_target: Option<&'a TextureView>,
    pub ops: Operations<Color>,
}

/// The depth/stencil attachment of a render pass.
#[derive(Clone, Debug)]
pub struct RenderPassDepthStencilAttachment<'a> {
    pub view: &'a TextureView,
    pub depth_ops: Option<Operations<f32>>,
    pub stencil_ops: Option<Operations<u32>>,
}

/// Creation parameters of a render pass.
#[derive(Clone, Debug, Default)]
pub struct RenderPassDescriptor<'a> {
    pub label: Option<&'a str>,
    pub color_attachments: &'a [Option<RenderPassColorAttachment<'a>>],
    pub depth_stencil_attachment: Option<RenderPassDepthStencilAttachment<'a>>,
    /// The set `begin_occlusion_query` indexes into.
    pub occlusion_query_set: Option<&'a QuerySet>,
}

#[derive(Clone, Debug)]
pub(crate) struct ColorAttachment {
    pub view: TextureView,
    pub resolve: Option<TextureView>,
    pub ops: Operations<Color>,
}

#[derive(Clone, Debug)]
pub(crate) struct DepthAttachment {
    pub view: TextureView,
    pub depth_ops: Option<Operations<f32>>,
    pub stencil_ops: Option<Operations<u32>>,
}

/// A bound buffer range.
#[derive(Clone, Debug)]
pub(crate) struct BufferRange {
    pub buffer: Buffer,
    pub offset: u64,
    pub size: u64,
}

/// The closed vocabulary between the API and the command processor.
#[derive(Clone, Debug)]
pub(crate) enum Command {
    BeginRenderPass {
        label: String,
        colors: Vec<Option<ColorAttachment>>,
        depth: Option<DepthAttachment>,
        width: u32,
        height: u32,
        samples: u32,
    },
    SetPipeline(RenderPipeline),
    SetBindGroup(u32, BindGroup),
    SetVertexBuffer(u32, BufferRange),
    SetIndexBuffer(BufferRange, IndexFormat),
    SetViewport(rastra_pipeline::state::Viewport),
    SetScissor(rastra_pipeline::state::ScissorRect),
    SetBlendConstant(Color),
    Draw {
        range: rastra_pipeline::DrawRange,
        instances: Range<u32>,
    },
    /// A draw whose arguments are read from `buffer` at `offset` when it executes
    /// ([`DrawIndirectArgs`] or [`DrawIndexedIndirectArgs`]).
    DrawIndirect {
        buffer: Buffer,
        offset: u64,
        indexed: bool,
    },
    BeginOcclusionQuery {
        set: QuerySet,
        index: u32,
    },
    EndOcclusionQuery,
    /// Begins a pipeline-statistics query (render or compute pass).
    BeginPipelineStatistics {
        set: QuerySet,
        index: u32,
    },
    EndPipelineStatistics,
    EndRenderPass,
    ResolveQuerySet {
        set: QuerySet,
        first: u32,
        count: u32,
        buffer: Buffer,
        offset: u64,
    },
    CopyBufferToBuffer {
        src: Buffer,
        src_offset: u64,
        dst: Buffer,
        dst_offset: u64,
        size: u64,
    },
    ClearBuffer {
        buffer: Buffer,
        offset: u64,
        size: u64,
    },
    CopyTextureToBuffer {
        src: Texture,
        at: TextureCopy,
        dst: Buffer,
        layout: TexelCopyBufferLayout,
        size: [u32; 3],
    },
    CopyBufferToTexture {
        src: Buffer,
        layout: TexelCopyBufferLayout,
        dst: Texture,
        at: TextureCopy,
        size: [u32; 3],
    },
    CopyTextureToTexture {
        src: Texture,
        src_at: TextureCopy,
        dst: Texture,
        dst_at: TextureCopy,
        size: [u32; 3],
    },
    BeginComputePass {
        label: String,
    },
    SetComputePipeline(crate::compute::ComputePipeline),
    Dispatch([u32; 3]),
    DispatchIndirect {
        buffer: Buffer,
        offset: u64,
    },
    EndComputePass,
}

/// Recorded work, ready for [`Queue::submit`](crate::Queue::submit).
#[derive(Debug)]
pub struct CommandBuffer {
    pub(crate) commands: Vec<Command>,
}

/// Records commands.
pub struct CommandEncoder {
    pub(crate) commands: Vec<Command>,
    error: Option<Error>,
}

impl CommandEncoder {
    pub(crate) fn new() -> CommandEncoder {
        CommandEncoder {
            commands: Vec::new(),
            error: None,
        }
    }

    pub(crate) fn fail(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Starts a render pass. Attachment errors are reported by `finish`.
    pub fn begin_render_pass<'e>(&'e mut self, desc: &RenderPassDescriptor<'_>) -> RenderPass<'e> {
        let mut pass = RenderPass {
            encoder: self,
            state: PassState::default(),
            ended: false,
        };
        match validate_attachments(desc) {
            Ok((cmd, width, height, samples, formats, depth_format, attachments)) => {
                pass.state = PassState {
                    width,
                    height,
                    samples,
                    formats,
                    depth_format,
                    attachments,
                    occlusion_query_set: desc.occlusion_query_set.cloned(),
                    ..PassState::default()
                };
                pass.encoder.commands.push(cmd);
                if desc
                    .occlusion_query_set
                    .is_some_and(|q| q.ty() != QueryType::Occlusion)
                {
                    pass.encoder.fail(Error::Validation(
                        "the render pass's occlusion query set is not of occlusion queries".into(),
                    ));
                    pass.state.invalid = true;
                }
            }
            Err(e) => {
                pass.encoder.fail(e);
                pass.state.invalid = true;
            }
        }
        pass
    }

    /// Writes the results of queries `queries` of `set` as little-endian `u64`s into
    /// `destination` from `offset` on (WebGPU `resolveQuerySet`).
    pub fn resolve_query_set(
        &mut self,
        set: &QuerySet,
        queries: Range<u32>,
        destination: &Buffer,
        offset: u64,
    ) {
        let check = || {
            if queries.start > queries.end || queries.end > set.count() {
                return validation(format!(
                    "queries {queries:?} are outside the {}-query set",
                    set.count()
                ));
            }
            if !destination.usage().contains(BufferUsages::QUERY_RESOLVE) {
                return validation("the query resolve destination lacks QUERY_RESOLVE usage");
            }
            let bytes = set.result_size() * queries.len() as u64;
            if !offset.is_multiple_of(256)
                || offset
                    .checked_add(bytes)
                    .is_none_or(|e| e > destination.size())
            {
                return validation(format!(
                    "{bytes} bytes of query results at offset {offset} do not fit the {}-byte \
                     buffer (or the offset is not a multiple of 256)",
                    destination.size()
                ));
            }
            Ok(Command::ResolveQuerySet {
                set: set.clone(),
                first: queries.start,
                count: queries.len() as u32,
                buffer: destination.clone(),
                offset,
            })
        };
        match check() {
            Ok(cmd) => self.commands.push(cmd),
            Err(e) => self.fail(e),
        }
    }

    /// Copies `size` bytes between buffers.
    pub fn copy_buffer_to_buffer(
        &mut self,
        src: &Buffer,
        src_offset: u64,
        dst: &Buffer,
        dst_offset: u64,
        size: u64,
    ) {
        let check = || -> Result<(), Error> {
            if !src.usage().contains(BufferUsages::COPY_SRC) {
                return validation("copy source buffer lacks COPY_SRC usage");
            }
            if !dst.usage().contains(BufferUsages::COPY_DST) {
                return validation("copy destination buffer lacks COPY_DST usage");
            }
            if !src_offset.is_multiple_of(4)
                || !dst_offset.is_multiple_of(4)
                || !size.is_multiple_of(4)
            {
                return validation("buffer copy offsets and size must be multiples of 4");
            }
            if src_offset.checked_add(size).is_none_or(|e| e > src.size())
                || dst_offset.checked_add(size).is_none_or(|e| e > dst.size())
            {
                return validation("buffer copy range is out of bounds");
            }
            if src.same(dst) {
                return validation("buffer copy source and destination are the same buffer");
            }
            Ok(())
        };
        match check() {
            Ok(()) => self.commands.push(Command::CopyBufferToBuffer {
                src: src.clone(),
                src_offset,
                dst: dst.clone(),
                dst_offset,
                size,
            }),
            Err(e) => self.fail(e),
        }
    }

    /// Sets `size` bytes (None = to the end) of `buffer` from `offset` to zero (WebGPU
    /// `clearBuffer`: COPY_DST usage, offset and size multiples of 4).
    pub fn clear_buffer(&mut self, buffer: &Buffer, offset: u64, size: Option<u64>) {
        let check = || -> Result<BufferRange, Error> {
            if !buffer.usage().contains(BufferUsages::COPY_DST) {
                return validation("clear_buffer target lacks COPY_DST usage");
            }
            let range = buffer_range(buffer, offset, size, "clear_buffer")?;
            if !range.offset.is_multiple_of(4) || !range.size.is_multiple_of(4) {
                return validation("clear_buffer offset and size must be multiples of 4");
            }
            Ok(range)
        };
        match check() {
            Ok(r) => self.commands.push(Command::ClearBuffer {
                buffer: r.buffer,
                offset: r.offset,
                size: r.size,
            }),
            Err(e) => self.fail(e),
        }
    }

    /// Copies mip level 0, layer 0 of a single-sample 2D texture into a buffer, rows
    /// `bytes_per_row` apart (a multiple of 256, as WebGPU requires).
    pub fn copy_texture_to_buffer(
        &mut self,
        src: &Texture,
        dst: &Buffer,
        offset: u64,
        bytes_per_row: u32,
    ) {
        let [w, h, _] = src.mip_size(0);
        self.copy_texture_to_buffer_region(
            &TexelCopyTextureInfo::whole(src),
            dst,
            TexelCopyBufferLayout {
                offset,
                bytes_per_row: Some(bytes_per_row),
                rows_per_image: None,
            },
            Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
        );
    }

    /// Copies a region of a texture into a buffer (WebGPU `copyTextureToBuffer`).
    pub fn copy_texture_to_buffer_region(
        &mut self,
        src: &TexelCopyTextureInfo<'_>,
        dst: &Buffer,
        layout: TexelCopyBufferLayout,
        size: Extent3d,
    ) {
        let size = copy_size(size);
        let check = || -> Result<(), Error> {
            if !src.texture.usage().contains(TextureUsages::COPY_SRC) {
                return validation("copy source texture lacks COPY_SRC usage");
            }
            if !dst.usage().contains(BufferUsages::COPY_DST) {
                return validation("copy destination buffer lacks COPY_DST usage");
            }
            check_buffer_copy(src.texture, &layout)?;
            check_depth_stencil_copy(
                src.texture.format(),
                src.aspect,
                CopyDirection::OutOfTexture,
            )?;
            src.texture.read_lock().validate_copy(
                &src.at(),
                size,
                Some((&layout, dst.size() as usize)),
            )?;
            Ok(())
        };
        match check() {
            Ok(()) => self.commands.push(Command::CopyTextureToBuffer {
                src: src.texture.clone(),
                at: src.at(),
                dst: dst.clone(),
                layout,
                size,
            }),
            Err(e) => self.fail(e),
        }
    }

    /// Copies buffer data into a region of a texture (WebGPU `copyBufferToTexture`).
    pub fn copy_buffer_to_texture(
        &mut self,
        src: &Buffer,
        layout: TexelCopyBufferLayout,
        dst: &TexelCopyTextureInfo<'_>,
        size: Extent3d,
    ) {
        let size = copy_size(size);
        let check = || -> Result<(), Error> {
            if !src.usage().contains(BufferUsages::COPY_SRC) {
                return validation("copy source buffer lacks COPY_SRC usage");
            }
            if !dst.texture.usage().contains(TextureUsages::COPY_DST) {
                return validation("copy destination texture lacks COPY_DST usage");
            }
            check_buffer_copy(dst.texture, &layout)?;
            check_depth_stencil_copy(dst.texture.format(), dst.aspect, CopyDirection::IntoTexture)?;
            dst.texture.read_lock().validate_copy(
                &dst.at(),
                size,
                Some((&layout, src.size() as usize)),
            )?;
            Ok(())
        };
        match check() {
            Ok(()) => self.commands.push(Command::CopyBufferToTexture {
                src: src.clone(),
                layout,
                dst: dst.texture.clone(),
                at: dst.at(),
                size,
            }),
            Err(e) => self.fail(e),
        }
    }

    /// Copies a region between textures of the same format (or sRGB siblings) and sample
    /// count (WebGPU `copyTextureToTexture`).
    pub fn copy_texture_to_texture(
        &mut self,
        src: &TexelCopyTextureInfo<'_>,
        dst: &TexelCopyTextureInfo<'_>,
        size: Extent3d,
    ) {
        let size = copy_size(size);
        let check = || -> Result<(), Error> {
            if !src.texture.usage().contains(TextureUsages::COPY_SRC) {
                return validation("copy source texture lacks COPY_SRC usage");
            }
            if !dst.texture.usage().contains(TextureUsages::COPY_DST) {
                return validation("copy destination texture lacks COPY_DST usage");
            }
            let (fs, fd) = (src.texture.format(), dst.texture.format());
            if fs != fd && fs.srgb_sibling() != Some(fd) {
                return validation(format!("texture copy from {fs:?} to {fd:?}"));
            }
            if src.texture.sample_count() != dst.texture.sample_count() {
                return validation("texture copy between different sample counts");
            }
            src.texture
                .read_lock()
                .validate_copy(&src.at(), size, None)?;
            dst.texture
                .read_lock()
                .validate_copy(&dst.at(), size, None)?;
            Ok(())
        };
        match check() {
            Ok(()) => self.commands.push(Command::CopyTextureToTexture {
                src: src.texture.clone(),
                src_at: src.at(),
                dst: dst.texture.clone(),
                dst_at: dst.at(),
                size,
            }),
            Err(e) => self.fail(e),
        }
    }

    /// Finishes recording.
    pub fn finish(self) -> Result<CommandBuffer, Error> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(CommandBuffer {
                commands: self.commands,
            }),
        }
    }
}

type Attachments = (
    Command,
    u32,
    u32,
    u32,
    Vec<Option<crate::TextureFormat>>,
    Option<crate::TextureFormat>,
    Vec<TextureView>,
);

fn validate_attachments(desc: &RenderPassDescriptor<'_>) -> Result<Attachments, Error> {
    let mut size: Option<(u32, u32, u32)> = None;
    let mut check_size = |v: &TextureView, what: &str| -> Result<(), Error> {
        v.check_attachment(what)?;
        let (w, h) = v.size();
        let s = (w, h, v.texture().sample_count());
        match size {
            None => size = Some(s),
            Some(prev) if prev != s => {
                return validation(format!(
                    "{what} is {}×{} with {} samples; other attachments are {}×{} with {}",
                    s.0, s.1, s.2, prev.0, prev.1, prev.2
                ));
            }
            _ => {}
        }
        if !v
            .texture()
            .usage()
            .contains(TextureUsages::RENDER_ATTACHMENT)
        {
            return validation(format!("{what} lacks RENDER_ATTACHMENT usage"));
        }
        Ok(())
    };
    let mut colors = Vec::new();
    let mut formats = Vec::new();
    for (i, a) in desc.color_attachments.iter().enumerate() {
        let Some(a) = a else {
            colors.push(None);
            formats.push(None);
            continue;
        };
        let t = a.view.texture();
        check_size(a.view, &format!("colour attachment {i}"))?;
        if t.format().is_depth() {
            return validation(format!(
                "colour attachment {i} has depth format {:?}",
                t.format()
            ));
        }
        if let Some(r) = a.resolve_target {
            let what = format!("resolve target of colour attachment {i}");
            r.check_attachment(&what)?;
            let rt = r.texture();
            if t.sample_count() == 1 {
                return validation(format!(
                    "colour attachment {i} has a resolve target but is not multisampled"
                ));
            }
            if rt.sample_count() != 1 || rt.format() != t.format() || r.size() != a.view.size() {
                return validation(format!(
                    "{what} must be single-sampled with the same format and size"
                ));
            }
            if !rt.usage().contains(TextureUsages::RENDER_ATTACHMENT) {
                return validation(format!("{what} lacks RENDER_ATTACHMENT usage"));
            }
        }
        formats.push(Some(t.format()));
        colors.push(Some(ColorAttachment {
            view: a.view.clone(),
            resolve: a.resolve_target.cloned(),
            ops: a.ops,
        }));
    }
    let mut depth = None;
    let mut depth_format = None;
    if let Some(d) = &desc.depth_stencil_attachment {
        let t = d.view.texture();
        check_size(d.view, "depth attachment")?;
        if !t.format().is_depth() {
            return validation(format!(
                "depth attachment has colour format {:?}",
                t.format()
            ));
        }
        if let Some(ops) = &d.depth_ops
            && let LoadOp::Clear(z) = ops.load
            && !(0.0..=1.0).contains(&z)
        {
            return validation(format!("depth clear value {z} is outside [0, 1]"));
        }
        if d.stencil_ops.is_some() && !t.format().has_stencil() {
            return validation("stencil operations on a depth attachment without stencil");
        }
        depth_format = Some(t.format());
        depth = Some(DepthAttachment {
            view: d.view.clone(),
            depth_ops: d.depth_ops,
            stencil_ops: d.stencil_ops,
        });
    }
    let Some((width, height, samples)) = size else {
        return validation("a render pass needs at least one attachment");
    };
    // One texture must not be attached twice (its memory is locked once per pass).
    let mut all: Vec<&Texture> = colors.iter().flatten().map(|c| c.view.texture()).collect();
    all.extend(
        colors
            .iter()
            .flatten()
            .filter_map(|c| c.resolve.as_ref().map(|r| r.texture())),
    );
    all.extend(depth.iter().map(|d| d.view.texture()));
    for (i, a) in all.iter().enumerate() {
        if all[..i].iter().any(|b| a.same(b)) {
            return validation("a texture is attached to the render pass twice");
        }
    }
    let mut attachments: Vec<TextureView> =
        colors.iter().flatten().map(|c| c.view.clone()).collect();
    attachments.extend(colors.iter().flatten().filter_map(|c| c.resolve.clone()));
    attachments.extend(depth.iter().map(|d| d.view.clone()));
    Ok((
        Command::BeginRenderPass {
            label: desc.label.unwrap_or("").to_string(),
            colors,
            depth,
            width,
            height,
            samples,
        },
        width,
        height,
        samples,
        formats,
        depth_format,
        attachments,
    ))
}

/// Render pass state tracked for validation while recording.
#[derive(Default)]
struct PassState {
    invalid: bool,
    width: u32,
    height: u32,
    samples: u32,
    formats: Vec<Option<crate::TextureFormat>>,
    depth_format: Option<crate::TextureFormat>,
    /// Every view attached to the pass (resolve targets included).
    attachments: Vec<TextureView>,
    pipeline: Option<RenderPipeline>,
    bind_groups: [Option<BindGroup>; MAX_BIND_GROUPS as usize],
    vertex_buffers: Vec<Option<BufferRange>>,
    index: Option<(BufferRange, IndexFormat)>,
    occlusion_query_set: Option<QuerySet>,
    /// The occlusion query between begin and end, if any.
    active_query: Option<u32>,
    /// Queries this pass has begun (each may be begun once per pass).
    used_queries: Vec<u32>,
    /// The pipeline-statistics query between begin and end, if any.
    active_statistics: Option<u32>,
}

/// Records the state changes and draws of one render pass.
pub struct RenderPass<'e> {
    encoder: &'e mut CommandEncoder,
    state: PassState,
    ended: bool,
}

impl RenderPass<'_> {
    fn record(&mut self, check: impl FnOnce(&mut PassState) -> Result<Option<Command>, Error>) {
        if self.state.invalid {
            return;
        }
        match check(&mut self.state) {
            Ok(Some(cmd)) => self.encoder.commands.push(cmd),
            Ok(None) => {}
            Err(e) => {
                self.encoder.fail(e);
                self.state.invalid = true;
            }
        }
    }

    pub fn set_pipeline(&mut self, pipeline: &RenderPipeline) {
        self.record(|s| {
            let p = &pipeline.0;
            let formats = p.target_formats();
            let n = formats.len().max(s.formats.len());
            for i in 0..n {
                let want = formats.get(i).copied().flatten();
                let have = s.formats.get(i).copied().flatten();
                if want != have {
                    return validation(format!(
                        "pipeline colour target {i} is {want:?} but the pass attachment is {have:?}"
                    ));
                }
            }
            let want_depth = p.desc.depth_stencil.map(|d| d.format);
            if want_depth != s.depth_format {
                return validation(format!(
                    "pipeline depth format {want_depth:?} does not match the pass's {:?}",
                    s.depth_format
                ));
            }
            if p.samples() != s.samples {
                return validation(format!(
                    "pipeline sample count {} does not match the pass's {}",
                    p.samples(),
                    s.samples
                ));
            }
            s.pipeline = Some(pipeline.clone());
            Ok(Some(Command::SetPipeline(pipeline.clone())))
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
            Ok(Some(Command::SetBindGroup(index, group.clone())))
        });
    }

    /// Binds `buffer[offset..offset + size]` (None = to the end) to vertex buffer `slot`.
    pub fn set_vertex_buffer(
        &mut self,
        slot: u32,
        buffer: &Buffer,
        offset: u64,
        size: Option<u64>,
    ) {
        self.record(|s| {
            if slot >= 8 {
                return validation(format!("vertex buffer slot {slot} (the limit is 8)"));
            }
            if !buffer.usage().contains(BufferUsages::VERTEX) {
                return validation(format!(
                    "buffer bound to vertex slot {slot} lacks VERTEX usage"
                ));
            }
            let range = buffer_range(buffer, offset, size, "vertex buffer")?;
            if s.vertex_buffers.len() <= slot as usize {
                s.vertex_buffers.resize(slot as usize + 1, None);
            }
            s.vertex_buffers[slot as usize] = Some(range.clone());
            Ok(Some(Command::SetVertexBuffer(slot, range)))
        });
    }

    pub fn set_index_buffer(
        &mut self,
        buffer: &Buffer,
        format: IndexFormat,
        offset: u64,
        size: Option<u64>,
    ) {
        self.record(|s| {
            if !buffer.usage().contains(BufferUsages::INDEX) {
                return validation("index buffer lacks INDEX usage");
            }
            if !offset.is_multiple_of(format.size() as u64) {
                return validation("index buffer offset is not aligned to the index size");
            }
            let range = buffer_range(buffer, offset, size, "index buffer")?;
            s.index = Some((range.clone(), format));
            Ok(Some(Command::SetIndexBuffer(range, format)))
        });
    }

    pub fn set_viewport(
        &mut self,
        x: f32,
        y: f32,
        width: f32,
        height: f32,
        min_depth: f32,
        max_depth: f32,
    ) {
        self.record(|s| {
            let finite = [x, y, width, height, min_depth, max_depth]
                .iter()
                .all(|v| v.is_finite());
            if !finite || width < 0.0 || height < 0.0 {
                return validation("viewport must be finite with a non-negative size");
            }
            if x < 0.0 || y < 0.0 || x + width > s.width as f32 || y + height > s.height as f32 {
                return validation(format!(
                    "viewport ({x}, {y}, {width}, {height}) exceeds the {}×{} attachments",
                    s.width, s.height
                ));
            }
            if !(0.0..=1.0).contains(&min_depth)
                || !(0.0..=1.0).contains(&max_depth)
                || min_depth > max_depth
            {
                return validation("viewport depth range must satisfy 0 ≤ min ≤ max ≤ 1");
            }
            Ok(Some(Command::SetViewport(
                rastra_pipeline::state::Viewport {
                    x,
                    y,
                    width,
                    height,
                    min_depth,
                    max_depth,
                },
            )))
        });
    }

    pub fn set_scissor_rect(&mut self, x: u32, y: u32, width: u32, height: u32) {
        self.record(|s| {
            if x as u64 + width as u64 > s.width as u64
                || y as u64 + height as u64 > s.height as u64
            {
                return validation(format!(
                    "scissor ({x}, {y}, {width}, {height}) exceeds the {}×{} attachments",
                    s.width, s.height
                ));
            }
            Ok(Some(Command::SetScissor(
                rastra_pipeline::state::ScissorRect {
                    x,
                    y,
                    width,
                    height,
                },
            )))
        });
    }

    pub fn set_blend_constant(&mut self, color: Color) {
        self.record(|_| Ok(Some(Command::SetBlendConstant(color))));
    }

    /// Non-indexed draw.
    pub fn draw(&mut self, vertices: Range<u32>, instances: Range<u32>) {
        self.record(|s| {
            if vertices.start > vertices.end {
                return validation("vertex range is reversed");
            }
            validate_draw(s, false, &instances, None)?;
            let p = s.pipeline.as_ref().expect("validate_draw checked the pipeline");
            // WebGPU validates non-indexed reads against the bound ranges up front.
            for (slot, layout) in p.0.desc.vertex_buffers.iter().enumerate() {
                let bound = s.vertex_buffers[slot].as_ref().expect("checked");
                let count = match layout.step_mode {
                    VertexStepMode::Vertex => vertices.end,
                    VertexStepMode::Instance => instances.end,
                } as u64;
                if count > element_limit(layout, bound.size) {
                    return validation(format!(
                        "draw reads {count} elements from vertex buffer {slot}, which holds fewer ({} bytes)",
                        bound.size
                    ));
                }
            }
            Ok(Some(Command::Draw {
                range: rastra_pipeline::DrawRange::Vertices {
                    first: vertices.start,
                    count: vertices.end - vertices.start,
                },
                instances,
            }))
        });
    }

    /// Indexed draw.
    pub fn draw_indexed(&mut self, indices: Range<u32>, base_vertex: i32, instances: Range<u32>) {
        self.record(|s| {
            if indices.start > indices.end {
                return validation("index range is reversed");
            }
            validate_draw(s, true, &instances, None)?;
            let (range, format) = s
                .index
                .as_ref()
                .expect("validate_draw checked the index buffer");
            let available = range.size / format.size() as u64;
            if indices.end as u64 > available {
                return validation(format!(
                    "draw_indexed reads indices up to {} but the index buffer holds {available}",
                    indices.end
                ));
            }
            Ok(Some(Command::Draw {
                range: rastra_pipeline::DrawRange::Indexed {
                    first: indices.start,
                    count: indices.end - indices.start,
                    base_vertex,
                },
                instances,
            }))
        });
    }

    /// Draws with the [`DrawIndirectArgs`] stored at `offset` in `buffer` when the draw
    /// executes. As WebGPU's indirect-draw validation does, a draw whose arguments read past
    /// the bound vertex or instance data is skipped.
    pub fn draw_indirect(&mut self, buffer: &Buffer, offset: u64) {
        self.record(|s| {
            let cmd = indirect_command(buffer, offset, false)?;
            let args = BufferRange {
                buffer: buffer.clone(),
                offset,
                size: DrawIndirectArgs::SIZE,
            };
            validate_draw(s, false, &(0..0), Some(&args))?;
            Ok(cmd)
        });
    }

    /// Draws with the [`DrawIndexedIndirectArgs`] stored at `offset` in `buffer` when the
    /// draw executes; a draw whose index range passes the end of the index buffer, or whose
    /// instances pass the bound instance data, is skipped.
    pub fn draw_indexed_indirect(&mut self, buffer: &Buffer, offset: u64) {
        self.record(|s| {
            let cmd = indirect_command(buffer, offset, true)?;
            let args = BufferRange {
                buffer: buffer.clone(),
                offset,
                size: DrawIndexedIndirectArgs::SIZE,
            };
            validate_draw(s, true, &(0..0), Some(&args))?;
            Ok(cmd)
        });
    }

    /// Forgets the pipeline, bind groups, vertex and index buffers, so later draws must set
    /// them again (WebGPU clears them around executing render bundles); viewport, scissor
    /// and blend constant stay.
    pub fn reset_state(&mut self) {
        let s = &mut self.state;
        s.pipeline = None;
        s.bind_groups = Default::default();
        s.vertex_buffers.clear();
        s.index = None;
    }

    /// Starts counting the samples that pass into query `index` of the pass's occlusion
    /// query set.
    pub fn begin_occlusion_query(&mut self, index: u32) {
        self.record(|s| {
            let Some(set) = &s.occlusion_query_set else {
                return validation(
                    "begin_occlusion_query in a pass without an occlusion query set",
                );
            };
            if index >= set.count() {
                return validation(format!(
                    "occlusion query {index} is outside the {}-query set",
                    set.count()
                ));
            }
            if let Some(active) = s.active_query {
                return validation(format!(
                    "begin_occlusion_query({index}) while query {active} is active"
                ));
            }
            if s.used_queries.contains(&index) {
                return validation(format!(
                    "occlusion query {index} was already used in this pass"
                ));
            }
            s.active_query = Some(index);
            s.used_queries.push(index);
            Ok(Some(Command::BeginOcclusionQuery {
                set: set.clone(),
                index,
            }))
        });
    }

    /// Stops the active occlusion query and stores its count.
    pub fn end_occlusion_query(&mut self) {
        self.record(|s| {
            if s.active_query.take().is_none() {
                return validation("end_occlusion_query without an active query");
            }
            Ok(Some(Command::EndOcclusionQuery))
        });
    }

    /// Starts summing the pipeline statistics of the following draws into query `index`
    /// of `set` (a pipeline-statistics query set).
    pub fn begin_pipeline_statistics_query(&mut self, set: &QuerySet, index: u32) {
        self.record(|s| {
            let cmd = begin_statistics(set, index, &mut s.active_statistics)?;
            Ok(Some(cmd))
        });
    }

    /// Stops the active pipeline-statistics query and stores its sums.
    pub fn end_pipeline_statistics_query(&mut self) {
        self.record(|s| Ok(Some(end_statistics(&mut s.active_statistics)?)));
    }

    /// Ends the pass (also happens when the pass is dropped).
    pub fn end(mut self) {
        self.finish_pass();
    }

    fn finish_pass(&mut self) {
        if let Some(index) = self.state.active_query.take() {
            self.record(|_| {
                validation(format!(
                    "the pass ended while occlusion query {index} was active"
                ))
            });
        }
        if let Some(index) = self.state.active_statistics.take() {
            self.record(|_| {
                validation(format!(
                    "the pass ended while pipeline-statistics query {index} was active"
                ))
            });
        }
        if !self.ended {
            self.ended = true;
            if !self.state.invalid {
                self.encoder.commands.push(Command::EndRenderPass);
            }
        }
    }
}

impl Drop for RenderPass<'_> {
    fn drop(&mut self) {
        self.finish_pass();
    }
}

/// The command beginning pipeline-statistics query `index` of `set`, checking that it may
/// begin (`active`: the pass's active statistics query, set on success).
pub(crate) fn begin_statistics(
    set: &QuerySet,
    index: u32,
    active: &mut Option<u32>,
) -> Result<Command, Error> {
    if !matches!(set.ty(), QueryType::PipelineStatistics(_)) {
        return validation("begin_pipeline_statistics_query with a set of another query type");
    }
    if index >= set.count() {
        return validation(format!(
            "pipeline-statistics query {index} is outside the {}-query set",
            set.count()
        ));
    }
    if let Some(a) = active {
        return validation(format!(
            "begin_pipeline_statistics_query({index}) while query {a} is active"
        ));
    }
    *active = Some(index);
    Ok(Command::BeginPipelineStatistics {
        set: set.clone(),
        index,
    })
}

/// The command ending the active pipeline-statistics query, if one is active.
pub(crate) fn end_statistics(active: &mut Option<u32>) -> Result<Command, Error> {
    match active.take() {
        Some(_) => Ok(Command::EndPipelineStatistics),
        None => validation("end_pipeline_statistics_query without an active query"),
    }
}

/// The arguments of a non-indexed indirect draw, as four little-endian `u32` in a buffer
/// with INDIRECT usage (the layout of `VkDrawIndirectCommand` and WebGPU's `drawIndirect`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawIndirectArgs {
    pub vertex_count: u32,
    pub instance_count: u32,
    pub first_vertex: u32,
    pub first_instance: u32,
}

impl DrawIndirectArgs {
    /// Bytes the arguments occupy.
    pub const SIZE: u64 = 16;

    /// The arguments as the bytes a buffer holds.
    pub fn to_bytes(&self) -> [u8; 16] {
        le_words([
            self.vertex_count,
            self.instance_count,
            self.first_vertex,
            self.first_instance,
        ])
    }

    pub(crate) fn from_bytes(b: [u8; 16]) -> Self {
        let [vertex_count, instance_count, first_vertex, first_instance] = words_le(b);
        DrawIndirectArgs {
            vertex_count,
            instance_count,
            first_vertex,
            first_instance,
        }
    }
}

/// The arguments of an indexed indirect draw, as five little-endian 32-bit words
/// (`base_vertex` signed), the layout of `VkDrawIndexedIndirectCommand`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawIndexedIndirectArgs {
    pub index_count: u32,
    pub instance_count: u32,
    pub first_index: u32,
    pub base_vertex: i32,
    pub first_instance: u32,
}

impl DrawIndexedIndirectArgs {
    /// Bytes the arguments occupy.
    pub const SIZE: u64 = 20;

    /// The arguments as the bytes a buffer holds.
    pub fn to_bytes(&self) -> [u8; 20] {
        le_words([
            self.index_count,
            self.instance_count,
            self.first_index,
            self.base_vertex as u32,
            self.first_instance,
        ])
    }

    pub(crate) fn from_bytes(b: [u8; 20]) -> Self {
        let [
            index_count,
            instance_count,
            first_index,
            base_vertex,
            first_instance,
        ] = words_le(b);
        DrawIndexedIndirectArgs {
            index_count,
            instance_count,
            first_index,
            base_vertex: base_vertex as i32,
            first_instance,
        }
    }
}

fn le_words<const W: usize, const B: usize>(words: [u32; W]) -> [u8; B] {
    std::array::from_fn(|i| words[i / 4].to_le_bytes()[i % 4])
}

fn words_le<const W: usize, const B: usize>(bytes: [u8; B]) -> [u32; W] {
    std::array::from_fn(|k| u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap()))
}

/// The command for an indirect draw whose arguments sit at `offset` in `buffer`.
fn indirect_command(buffer: &Buffer, offset: u64, indexed: bool) -> Result<Option<Command>, Error> {
    let size = if indexed {
        DrawIndexedIndirectArgs::SIZE
    } else {
        DrawIndirectArgs::SIZE
    };
    if !buffer.usage().contains(BufferUsages::INDIRECT) {
        return validation("indirect draw buffer lacks INDIRECT usage");
    }
    if !offset.is_multiple_of(4) || offset.checked_add(size).is_none_or(|e| e > buffer.size()) {
        return validation(format!(
            "indirect draw arguments at offset {offset} ({size} bytes) do not fit the {}-byte \
             buffer (or are not 4-aligned)",
            buffer.size()
        ));
    }
    Ok(Some(Command::DrawIndirect {
        buffer: buffer.clone(),
        offset,
        indexed,
    }))
}

/// How many elements (vertices or instances) a vertex buffer of `layout` with `bound` bytes
/// bound can feed: the last element's attributes must end inside the range. One rule for
/// direct draws (checked when recorded) and indirect ones (checked when executed).
pub(crate) fn element_limit(layout: &crate::VertexBufferLayout, bound: u64) -> u64 {
    let last_attr = layout
        .attributes
        .iter()
        .map(|a| a.offset + a.format.size() as u64)
        .max()
        .unwrap_or(0);
    match bound.checked_sub(last_attr) {
        None => 0,
        // A zero stride reads the same element for every index.
        Some(room) => room
            .checked_div(layout.array_stride)
            .map_or(u64::MAX, |n| n + 1),
    }
}

/// The validated range `offset..offset + size` (None = to the end) of `buffer`.
pub(crate) fn buffer_range(
    buffer: &Buffer,
    offset: u64,
    size: Option<u64>,
    what: &str,
) -> Result<BufferRange, Error> {
    let total = buffer.size();
    let size = match size {
        Some(s) => s,
        None if offset <= total => total - offset,
        None => {
            return validation(format!(
                "{what} offset {offset} is past the end ({total} bytes)"
            ));
        }
    };
    if offset.checked_add(size).is_none_or(|e| e > total) {
        return validation(format!(
            "{what} range {offset}+{size} exceeds the {total}-byte buffer"
        ));
    }
    Ok(BufferRange {
        buffer: buffer.clone(),
        offset,
        size,
    })
}

/// Checks a draw against the pass state; `indirect` is the range its arguments are read
/// from (part of the draw's buffer uses, like vertex and index buffers).
fn validate_draw(
    s: &PassState,
    indexed: bool,
    instances: &Range<u32>,
    indirect: Option<&BufferRange>,
) -> Result<(), Error> {
    let Some(p) = &s.pipeline else {
        return validation("draw without a pipeline");
    };
    if instances.start > instances.end {
        return validation("instance range is reversed");
    }
    for slot in 0..p.0.desc.vertex_buffers.len() {
        if s.vertex_buffers.get(slot).is_none_or(|b| b.is_none()) {
            return validation(format!(
                "the pipeline reads vertex buffer {slot}, which is not set"
            ));
        }
    }
    if indexed && s.index.is_none() {
        return validation("draw_indexed without an index buffer");
    }
    let programs: Vec<&Program> = std::iter::once(&*p.0.desc.vertex)
        .chain(p.0.desc.fragment.as_deref())
        .collect();
    let mut fixed: Vec<&BufferRange> = s.vertex_buffers.iter().flatten().collect();
    if indexed {
        fixed.extend(s.index.as_ref().map(|(r, _)| r));
    }
    fixed.extend(indirect);
    crate::binding_check::validate_bindings(&programs, &s.bind_groups, &fixed, &s.attachments)
}

/// The WebGPU rules for a buffer side of a texture copy: offset a multiple of the texel
/// block size, bytes per row a multiple of 256; multisampled textures take no buffer copies
/// (depth/stencil rules: `texture::check_depth_stencil_copy`).
fn check_buffer_copy(texture: &Texture, layout: &TexelCopyBufferLayout) -> Result<(), Error> {
    if texture.sample_count() != 1 {
        return validation("multisampled textures cannot be copied to or from buffers");
    }
    let block = texture.format().block_size() as u64;
    if texture.format().is_depth_stencil() && !layout.offset.is_multiple_of(4) {
        return validation(format!(
            "buffer offset {} of a depth/stencil texture copy is not a multiple of 4",
            layout.offset
        ));
    }
    if !layout.offset.is_multiple_of(block) {
        return validation(format!(
            "buffer offset {} of a texture copy is not a multiple of the block size {block}",
            layout.offset
        ));
    }
    if let Some(bpr) = layout.bytes_per_row
        && !bpr.is_multiple_of(256)
    {
        return validation(format!(
            "bytes_per_row {bpr} of a buffer-texture copy is not a multiple of 256"
        ));
    }
    Ok(())
}
