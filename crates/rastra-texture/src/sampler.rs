//! Sampler state — T4's first piece of texture state: "filter mode, addressing mode, max
//! anisotropy, stuff like that". WebGPU's `GPUSamplerDescriptor` (§7.1) plus clamp-to-border
//! with the three Vulkan border colours. Validated once (`Sampler::new`); the texture unit
//! trusts a `Sampler`.

use crate::{TextureError, invalid};

/// What happens to coordinates outside [0, 1] (Vulkan §16.7 "Texel Coordinate Wrapping").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AddressMode {
    #[default]
    ClampToEdge,
    Repeat,
    MirrorRepeat,
    /// Texels outside the image read the sampler's border colour.
    ClampToBorder,
}

/// Border colours for `ClampToBorder` (float formats read them as floats, integer formats as
/// 0 / 1 integers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BorderColor {
    #[default]
    TransparentBlack,
    OpaqueBlack,
    OpaqueWhite,
}

impl BorderColor {
    /// The colour as RGBA values.
    pub fn rgba(self) -> [f32; 4] {
        match self {
            BorderColor::TransparentBlack => [0.0; 4],
            BorderColor::OpaqueBlack => [0.0, 0.0, 0.0, 1.0],
            BorderColor::OpaqueWhite => [1.0; 4],
        }
    }
}

/// Nearest or linear, for magnification, minification and between mips.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FilterMode {
    #[default]
    Nearest,
    Linear,
}

/// Depth comparison `new OP stored` (WebGPU `GPUCompareFunction`): used by the depth unit
/// and by comparison samplers, one definition for both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareFunction {
    Never,
    Less,
    Equal,
    LessEqual,
    Greater,
    NotEqual,
    GreaterEqual,
    Always,
}

impl CompareFunction {
    /// Every compare function.
    pub const ALL: [CompareFunction; 8] = [
        CompareFunction::Never,
        CompareFunction::Less,
        CompareFunction::Equal,
        CompareFunction::LessEqual,
        CompareFunction::Greater,
        CompareFunction::NotEqual,
        CompareFunction::GreaterEqual,
        CompareFunction::Always,
    ];

    /// 1.0 when `reference OP texel` holds, else 0.0.
    pub fn test(self, reference: f32, texel: f32) -> f32 {
        if self.passes(reference, texel) {
            1.0
        } else {
            0.0
        }
    }

    /// Whether `new OP stored` holds.
    #[inline]
    pub fn passes(self, new: f32, stored: f32) -> bool {
        match self {
            CompareFunction::Never => false,
            CompareFunction::Less => new < stored,
            CompareFunction::Equal => new == stored,
            CompareFunction::LessEqual => new <= stored,
            CompareFunction::Greater => new > stored,
            CompareFunction::NotEqual => new != stored,
            CompareFunction::GreaterEqual => new >= stored,
            CompareFunction::Always => true,
        }
    }
}

/// Sampler descriptor. Defaults are WebGPU's: clamp-to-edge, nearest everywhere, LOD clamp
/// [0, 32], no compare, anisotropy 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerDesc {
    pub address_mode_u: AddressMode,
    pub address_mode_v: AddressMode,
    pub address_mode_w: AddressMode,
    pub mag_filter: FilterMode,
    pub min_filter: FilterMode,
    pub mipmap_filter: FilterMode,
    pub lod_min_clamp: f32,
    pub lod_max_clamp: f32,
    pub compare: Option<CompareFunction>,
    /// 1 to 16 (WebGPU allows larger values and clamps them to the implementation's 16).
    pub max_anisotropy: u16,
    pub border_color: BorderColor,
}

impl Default for SamplerDesc {
    fn default() -> Self {
        SamplerDesc {
            address_mode_u: AddressMode::ClampToEdge,
            address_mode_v: AddressMode::ClampToEdge,
            address_mode_w: AddressMode::ClampToEdge,
            mag_filter: FilterMode::Nearest,
            min_filter: FilterMode::Nearest,
            mipmap_filter: FilterMode::Nearest,
            lod_min_clamp: 0.0,
            lod_max_clamp: 32.0,
            compare: None,
            max_anisotropy: 1,
            border_color: BorderColor::TransparentBlack,
        }
    }
}

impl SamplerDesc {
    /// Linear mag, min and mip filters (trilinear).
    pub fn trilinear() -> Self {
        SamplerDesc {
            mag_filter: FilterMode::Linear,
            min_filter: FilterMode::Linear,
            mipmap_filter: FilterMode::Linear,
            ..SamplerDesc::default()
        }
    }

    /// The same address mode on every axis.
    pub fn with_address(mut self, mode: AddressMode) -> Self {
        self.address_mode_u = mode;
        self.address_mode_v = mode;
        self.address_mode_w = mode;
        self
    }
}

/// Anisotropy the texture unit supports at most.
pub const MAX_ANISOTROPY: u16 = 16;

/// How an anisotropic sampler's probes blend the two mip levels either side of λ. T4: an
/// elongated footprint loops through "the full bilinear/trilinear pipeline several times",
/// and how its probes are placed and weighted is each vendor's own; Vulkan's "Texel
/// Anisotropic Filtering" leaves the scheme to the implementation (lavapipe's probes each
/// read one level). The choice is the sampler's: it holds for every lookup through an
/// anisotropic sampler, one with an explicit LOD or an isotropic footprint included.
/// Samplers without anisotropy always blend by λ's whole fraction, as Vulkan's linear
/// mipmap mode requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MipBlend {
    /// Blend only while λ's fraction lies in the middle [`MipBlend::NARROW_WIDTH`] of a level
    /// (the coarser level's weight ramps from 0 to 1 across it); below, probes read the
    /// finer level alone, above, the coarser one. The result still moves continuously with
    /// λ; textured_cubes' 16× frame looks up about a third fewer texels (3.97M bilinear
    /// requests instead of 6.13M) in about a fifth fewer instructions.
    #[default]
    Narrow,
    /// Blend by λ's whole fraction, like a trilinear sampler: every probe of a footprint
    /// whose λ is not a whole level reads both levels.
    Full,
}

impl MipBlend {
    /// The part of a level, centred on its middle, across which [`MipBlend::Narrow`] blends.
    /// Chosen by measurement (textured_cubes at 1920×1080, its 16× sampler, on a build that
    /// read the width from the environment): widths 1 (full), 0.5 and 0.3 take 1,524.8M,
    /// 1,284.1M and 1,194.8M instructions a frame, and the
    /// anisotropic footprint tests' mean errors against exact footprint averages go 0.0201 →
    /// 0.0210 → 0.0225 (perspective plane) and 0.0156 → 0.0176 → 0.0212 (cube_aniso's
    /// second footprint) — 0.3 keeps both within their tests' bounds.
    pub const NARROW_WIDTH: f32 = 0.3;

    /// The coarser level's weight for λ's fraction `frac` (in [0, 1)).
    #[inline(always)]
    pub fn weight(self, frac: f32) -> f32 {
        match self {
            MipBlend::Full => frac,
            MipBlend::Narrow => {
                let start = 0.5 - Self::NARROW_WIDTH / 2.0;
                ((frac - start) / Self::NARROW_WIDTH).clamp(0.0, 1.0)
            }
        }
    }
}

/// A validated sampler.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampler {
    desc: SamplerDesc,
    /// `max_anisotropy` clamped to `MAX_ANISOTROPY`.
    anisotropy: u16,
    /// How probes blend mip levels: [`MipBlend::Full`] unless anisotropy > 1.
    mip_blend: MipBlend,
}

impl Sampler {
    /// Checks WebGPU `createSampler`: 0 ≤ lod_min ≤ lod_max (no NaN), anisotropy ≥ 1, and
    /// linear mag/min/mip filters whenever anisotropy > 1. An anisotropic sampler blends
    /// mip levels the default way ([`MipBlend::Narrow`]).
    pub fn new(desc: SamplerDesc) -> Result<Sampler, TextureError> {
        Sampler::with_mip_blend(desc, MipBlend::default())
    }

    /// [`Sampler::new`] with anisotropic probes blending mip levels as `blend` says (a
    /// sampler without anisotropy blends fully whatever `blend` is).
    pub fn with_mip_blend(desc: SamplerDesc, blend: MipBlend) -> Result<Sampler, TextureError> {
        #[allow(clippy::neg_cmp_op_on_partial_ord)] // rejects NaN too
        if !(desc.lod_min_clamp >= 0.0) || !(desc.lod_max_clamp >= desc.lod_min_clamp) {
            return invalid!(
                "LOD clamp [{}, {}] must satisfy 0 ≤ min ≤ max",
                desc.lod_min_clamp,
                desc.lod_max_clamp
            );
        }
        if desc.max_anisotropy == 0 {
            return invalid!("max_anisotropy must be at least 1");
        }
        if desc.max_anisotropy > 1
            && (desc.mag_filter != FilterMode::Linear
                || desc.min_filter != FilterMode::Linear
                || desc.mipmap_filter != FilterMode::Linear)
        {
            return invalid!("max_anisotropy > 1 needs linear mag, min and mipmap filters");
        }
        let anisotropy = desc.max_anisotropy.min(MAX_ANISOTROPY);
        Ok(Sampler {
            desc,
            anisotropy,
            mip_blend: if anisotropy > 1 {
                blend
            } else {
                MipBlend::Full
            },
        })
    }

    pub fn desc(&self) -> &SamplerDesc {
        &self.desc
    }

    /// The anisotropy the unit will use (1–16).
    pub fn anisotropy(&self) -> u16 {
        self.anisotropy
    }

    /// How the sampler's probes blend mip levels.
    pub fn mip_blend(&self) -> MipBlend {
        self.mip_blend
    }
}
