//! Fixed-function render state: the settings each unit of the pipeline is configured with for
//! a draw. Names and meaning follow WebGPU (`GPUPrimitiveState`, `GPUDepthStencilState`,
//! `GPUBlendState`, …) so the API layer and the wgpu backend map them one to one.

use crate::format::{TextureFormat, VertexFormat};

/// How vertices are assembled into primitives (T5 primitive assembly).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PrimitiveTopology {
    PointList,
    LineList,
    LineStrip,
    #[default]
    TriangleList,
    TriangleStrip,
}

/// Which winding counts as front-facing, seen in normalized device coordinates (y up), as
/// WebGPU defines it; in framebuffer space (y down) a counter-clockwise triangle has a
/// negative area.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FrontFace {
    #[default]
    Ccw,
    Cw,
}

/// Which faces the cull unit drops (T5 "Back-face and other triangle culling").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CullMode {
    #[default]
    None,
    Front,
    Back,
}

/// Primitive assembly and culling settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PrimitiveState {
    pub topology: PrimitiveTopology,
    pub front_face: FrontFace,
    pub cull_mode: CullMode,
    /// Clamp depth to the viewport range instead of clipping at near/far.
    pub unclipped_depth: bool,
}

/// Comparison used by the depth test (the texture units' definition).
pub use rastra_texture::CompareFunction;

/// Depth test and write settings (T7). Stencil arrives with a later issue; a depth-stencil
/// target's stencil is kept, cleared and stored but not tested.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DepthStencilState {
    pub format: TextureFormat,
    pub depth_write_enabled: bool,
    pub depth_compare: CompareFunction,
    pub bias: DepthBias,
}

/// Depth bias (polygon offset): every fragment depth of a triangle moves by `constant`
/// times the depth format's minimum resolvable difference plus `slope_scale` times the
/// triangle's steepest depth slope per pixel, limited to `clamp` when it is non-zero
/// (Vulkan §28.10 "Depth Bias", WebGPU `depthBias`, `depthBiasSlopeScale`,
/// `depthBiasClamp`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DepthBias {
    pub constant: i32,
    pub slope_scale: f32,
    pub clamp: f32,
}

impl DepthBias {
    pub fn is_enabled(&self) -> bool {
        self.constant != 0 || self.slope_scale != 0.0
    }

    /// The offset for a triangle whose depth has slope `max_slope` (the larger of |∂z/∂x|
    /// and |∂z/∂y|, per pixel) and whose largest vertex depth magnitude is `max_z`, in a
    /// depth buffer of `format`.
    pub fn offset(&self, format: TextureFormat, max_slope: f32, max_z: f32) -> f32 {
        // The minimum resolvable difference: one unit of the last place of a unorm format;
        // for float formats, one mantissa unit at the triangle's largest exponent.
        let r = match format {
            TextureFormat::Depth16Unorm => 1.0 / 65536.0,
            TextureFormat::Depth24Plus | TextureFormat::Depth24PlusStencil8 => 1.0 / 16_777_216.0,
            _ => {
                let exponent = if max_z == 0.0 {
                    -126
                } else {
                    max_z.abs().log2().floor() as i32
                };
                2f32.powi(exponent - 23)
            }
        };
        let o = max_slope * self.slope_scale + r * self.constant as f32;
        if self.clamp > 0.0 {
            o.min(self.clamp)
        } else if self.clamp < 0.0 {
            o.max(self.clamp)
        } else {
            o
        }
    }
}

/// Blend factors (WebGPU `GPUBlendFactor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlendFactor {
    Zero,
    One,
    Src,
    OneMinusSrc,
    SrcAlpha,
    OneMinusSrcAlpha,
    Dst,
    OneMinusDst,
    DstAlpha,
    OneMinusDstAlpha,
    SrcAlphaSaturated,
    Constant,
    OneMinusConstant,
}

/// Blend operations (WebGPU `GPUBlendOperation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlendOperation {
    Add,
    Subtract,
    ReverseSubtract,
    Min,
    Max,
}

/// Blending of either the colour or the alpha channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlendComponent {
    pub src_factor: BlendFactor,
    pub dst_factor: BlendFactor,
    pub operation: BlendOperation,
}

impl BlendComponent {
    /// `src × 1 + dst × 0`: blending that changes nothing.
    pub const REPLACE: BlendComponent = BlendComponent {
        src_factor: BlendFactor::One,
        dst_factor: BlendFactor::Zero,
        operation: BlendOperation::Add,
    };
    /// `src × 1 + dst × (1 − src.a)`.
    pub const OVER: BlendComponent = BlendComponent {
        src_factor: BlendFactor::One,
        dst_factor: BlendFactor::OneMinusSrcAlpha,
        operation: BlendOperation::Add,
    };
}

/// Blend state of one colour target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlendState {
    pub color: BlendComponent,
    pub alpha: BlendComponent,
}

impl BlendState {
    pub const REPLACE: BlendState = BlendState {
        color: BlendComponent::REPLACE,
        alpha: BlendComponent::REPLACE,
    };
    /// Classic non-premultiplied alpha blending.
    pub const ALPHA_BLENDING: BlendState = BlendState {
        color: BlendComponent {
            src_factor: BlendFactor::SrcAlpha,
            dst_factor: BlendFactor::OneMinusSrcAlpha,
            operation: BlendOperation::Add,
        },
        alpha: BlendComponent::OVER,
    };
    pub const PREMULTIPLIED_ALPHA_BLENDING: BlendState = BlendState {
        color: BlendComponent::OVER,
        alpha: BlendComponent::OVER,
    };
}

/// Which channels of a colour target are written (WebGPU `GPUColorWrite`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColorWrites(pub u8);

impl ColorWrites {
    pub const RED: ColorWrites = ColorWrites(1);
    pub const GREEN: ColorWrites = ColorWrites(2);
    pub const BLUE: ColorWrites = ColorWrites(4);
    pub const ALPHA: ColorWrites = ColorWrites(8);
    pub const COLOR: ColorWrites = ColorWrites(7);
    pub const ALL: ColorWrites = ColorWrites(15);
    pub const NONE: ColorWrites = ColorWrites(0);

    /// Whether channel `i` (0 = red … 3 = alpha) is written.
    #[inline]
    pub fn writes(self, channel: usize) -> bool {
        self.0 & (1 << channel) != 0
    }
}

impl std::ops::BitOr for ColorWrites {
    type Output = ColorWrites;
    fn bitor(self, rhs: ColorWrites) -> ColorWrites {
        ColorWrites(self.0 | rhs.0)
    }
}

impl Default for ColorWrites {
    fn default() -> Self {
        ColorWrites::ALL
    }
}

/// One colour target of a render pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColorTargetState {
    pub format: TextureFormat,
    pub blend: Option<BlendState>,
    pub write_mask: ColorWrites,
}

/// Whether a vertex buffer advances per vertex or per instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum VertexStepMode {
    #[default]
    Vertex,
    Instance,
}

/// One attribute inside a vertex buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VertexAttribute {
    pub format: VertexFormat,
    /// Byte offset inside one element of the buffer.
    pub offset: u64,
    /// `@location` of the vertex shader input it feeds.
    pub shader_location: u32,
}

/// Layout of one vertex buffer slot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VertexBufferLayout {
    /// Bytes between consecutive elements.
    pub array_stride: u64,
    pub step_mode: VertexStepMode,
    pub attributes: Vec<VertexAttribute>,
}

/// Multisampling settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MultisampleState {
    /// 1 or 4.
    pub count: u32,
    /// Samples that may be written.
    pub mask: u32,
    pub alpha_to_coverage_enabled: bool,
}

impl Default for MultisampleState {
    fn default() -> Self {
        MultisampleState {
            count: 1,
            mask: !0,
            alpha_to_coverage_enabled: false,
        }
    }
}

/// The viewport transform's rectangle and depth range, in framebuffer pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
    pub min_depth: f32,
    pub max_depth: f32,
}

impl Viewport {
    /// The whole of a `width`×`height` target with depths 0 to 1: the viewport a render
    /// pass starts with (WebGPU).
    pub fn covering(width: u32, height: u32) -> Viewport {
        Viewport {
            x: 0.0,
            y: 0.0,
            width: width as f32,
            height: height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        }
    }

    /// The depth range fragment depths are clamped to, low end first (WebGPU allows
    /// `min_depth > max_depth`).
    pub fn depth_range(&self) -> [f32; 2] {
        [
            self.min_depth.min(self.max_depth),
            self.min_depth.max(self.max_depth),
        ]
    }
}

/// The scissor rectangle, in framebuffer pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScissorRect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl ScissorRect {
    /// The whole of a `width`×`height` target: the scissor a render pass starts with.
    pub fn covering(width: u32, height: u32) -> ScissorRect {
        ScissorRect {
            x: 0,
            y: 0,
            width,
            height,
        }
    }
}

/// An RGBA colour in double precision, as the API passes clear colours and blend constants.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Color {
    pub r: f64,
    pub g: f64,
    pub b: f64,
    pub a: f64,
}

impl Color {
    pub const BLACK: Color = Color {
        r: 0.0,
        g: 0.0,
        b: 0.0,
        a: 1.0,
    };
    pub const TRANSPARENT: Color = Color {
        r: 0.0,
        g: 0.0,
        b: 0.0,
        a: 0.0,
    };

    pub fn to_array(self) -> [f32; 4] {
        [self.r as f32, self.g as f32, self.b as f32, self.a as f32]
    }
}

#[cfg(test)]
mod depth_bias_tests {
    use super::*;

    #[test]
    fn units_are_the_formats_resolvable_difference() {
        let constant = |c| DepthBias {
            constant: c,
            ..Default::default()
        };
        assert_eq!(
            constant(3).offset(TextureFormat::Depth16Unorm, 0.0, 0.5),
            3.0 / 65536.0
        );
        assert_eq!(
            constant(-2).offset(TextureFormat::Depth24Plus, 0.0, 0.5),
            -2.0 / 16_777_216.0
        );
        // Float depth: one mantissa unit at the largest exponent (0.3 → 2⁻², so 2⁻²⁵).
        assert_eq!(
            constant(1).offset(TextureFormat::Depth32Float, 0.0, 0.3),
            2f32.powi(-25)
        );
        let sloped = DepthBias {
            constant: 0,
            slope_scale: 2.0,
            clamp: 0.001,
        };
        assert_eq!(sloped.offset(TextureFormat::Depth32Float, 0.25, 0.5), 0.001);
        assert_eq!(
            sloped.offset(TextureFormat::Depth32Float, 0.0004, 0.5),
            0.0008
        );
    }
}
