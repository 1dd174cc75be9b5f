//! rastra, a GPU that runs on the CPU: the public Rust API (the "driver").
//!
//! The API follows WebGPU's shape — a [`Device`] creates resources and pipelines, a
//! [`CommandEncoder`] records render passes into a [`CommandBuffer`], and the [`Queue`]
//! submits command buffers to the command processor ([`processor`]), which runs every draw
//! through the fixed-function pipeline (`rastra-pipeline`) and the shader cores
//! (`rastra-shader`). Every call is validated here; misuse returns [`Error::Validation`],
//! never a panic, and stages below trust what passed.
//!
//! ```text
//! Device ─► Buffer / Texture (views) / Sampler / ShaderModule / RenderPipeline / BindGroup
//! CommandEncoder ─► RenderPass (state + draws) ─► CommandBuffer (a list of `Command`s)
//! Queue::submit ─► processor: one Command at a time, a pass's draws queued and run in
//!                  batches → rastra_pipeline::draw_batch
//! ```

mod error;
pub use error::Error;

mod resource;
pub use resource::{Buffer, BufferDescriptor, BufferUsages, TextureUsages};

mod texture;
pub use texture::{
    AddressMode, BorderColor, Extent3d, FilterMode, Sampler, SamplerDescriptor,
    TexelCopyBufferLayout, TexelCopyTextureInfo, Texture, TextureAspect, TextureDescriptor,
    TextureDimension, TextureView, TextureViewDescriptor, TextureViewDimension,
};

mod shader;
pub use shader::{ShaderModule, ShaderModuleDescriptor, ShaderSource};

mod binding;
pub use binding::{
    BindGroup, BindGroupDescriptor, BindGroupEntry, BindingResource, BufferBinding, ShaderBinding,
    ShaderBindingKind,
};

mod binding_check;

mod pipeline;
pub use pipeline::{FragmentState, RenderPipeline, RenderPipelineDescriptor, VertexState};

mod command;
pub use command::{
    Color, CommandBuffer, CommandEncoder, DrawIndexedIndirectArgs, DrawIndirectArgs, LoadOp,
    Operations, RenderPass, RenderPassColorAttachment, RenderPassDepthStencilAttachment,
    RenderPassDescriptor, StoreOp,
};

mod compute;
pub use compute::{
    ComputePass, ComputePipeline, ComputePipelineDescriptor, MAX_INVOCATIONS_PER_WORKGROUP,
    MAX_WORKGROUP_SIZE, MAX_WORKGROUPS_PER_DIMENSION,
};

mod query;
pub use query::{MAX_QUERIES_PER_SET, PipelineStatistics, QuerySet, QuerySetDescriptor, QueryType};

mod processor;

mod device;
pub use device::{Device, DeviceDescriptor, DeviceFeatures, Queue};

pub use rastra_pipeline::format::{IndexFormat, TextureFormat, VertexFormat};
pub use rastra_pipeline::format::{Unrenderable, check_renderable};
pub use rastra_pipeline::state::{
    BlendComponent, BlendFactor, BlendOperation, BlendState, ColorTargetState, ColorWrites,
    CompareFunction, CullMode, DepthBias, DepthStencilState, FrontFace, MultisampleState,
    PrimitiveState, PrimitiveTopology, VertexAttribute, VertexBufferLayout, VertexStepMode,
};
/// Lanes in a warp of the shader cores: the subgroup size shaders see.
pub use rastra_shader::WARP_LANES;
pub use rastra_shader::{
    BindingKind, CompileError, Stage as ShaderStage, StorageAccess, TextureSampleKind,
};
pub use rastra_stats::{Counters, DrawStats, FrameStats};
/// Texel-cache geometry (`DeviceDescriptor::texel_cache`).
pub use rastra_texture::CacheConfig as TexelCacheConfig;
/// How anisotropic samplers blend mip levels (`DeviceDescriptor::anisotropic_mip_blend`).
pub use rastra_texture::MipBlend;
/// The host CPU's vector units: whether the hot loops run their AVX2+FMA versions, and the
/// switch that forces the baseline ones (`RASTRA_SIMD=baseline` does it for a process).
pub use rastra_texture::cpu;
pub use rastra_texture::format::{AstcBlock, AstcChannel};
/// Mip-chain generation for texture uploads (box filter in linear space).
pub use rastra_texture::mipmap;
