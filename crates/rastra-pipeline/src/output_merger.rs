//! The output merger / ROP (T9 "Blend and late Z", Z "ROPs"): blends a shaded sample with the
//! colour already in the target and writes the channels the write mask allows, in the
//! target's format. Blending follows WebGPU §23.3.5 (blend factors and operations); for
//! normalized formats the source colour and the blend constant are clamped to [0, 1] first,
//! and sRGB targets blend in linear space.

use crate::format::TextureFormat;
use crate::state::{BlendComponent, BlendFactor, BlendOperation, BlendState, ColorTargetState};

/// Whether the format's values are normalized to [0, 1] (so blend inputs are clamped).
fn is_normalized(format: TextureFormat) -> bool {
    use TextureFormat::*;
    matches!(
        format,
        R8Unorm | Rg8Unorm | Rgba8Unorm | Rgba8UnormSrgb | Bgra8Unorm | Bgra8UnormSrgb
    )
}

#[inline]
fn factor(
    f: BlendFactor,
    src: &[f32; 4],
    dst: &[f32; 4],
    constant: &[f32; 4],
    alpha: bool,
) -> [f32; 4] {
    let splat = |v: f32| [v; 4];
    match f {
        BlendFactor::Zero => splat(0.0),
        BlendFactor::One => splat(1.0),
        BlendFactor::Src => *src,
        BlendFactor::OneMinusSrc => src.map(|v| 1.0 - v),
        BlendFactor::SrcAlpha => splat(src[3]),
        BlendFactor::OneMinusSrcAlpha => splat(1.0 - src[3]),
        BlendFactor::Dst => *dst,
        BlendFactor::OneMinusDst => dst.map(|v| 1.0 - v),
        BlendFactor::DstAlpha => splat(dst[3]),
        BlendFactor::OneMinusDstAlpha => splat(1.0 - dst[3]),
        BlendFactor::SrcAlphaSaturated => {
            if alpha {
                splat(1.0)
            } else {
                splat(src[3].min(1.0 - dst[3]))
            }
        }
        BlendFactor::Constant => *constant,
        BlendFactor::OneMinusConstant => constant.map(|v| 1.0 - v),
    }
}

#[inline]
fn apply(
    c: &BlendComponent,
    src: &[f32; 4],
    dst: &[f32; 4],
    constant: &[f32; 4],
    alpha: bool,
    out: &mut [f32; 4],
) {
    let fs = factor(c.src_factor, src, dst, constant, alpha);
    let fd = factor(c.dst_factor, src, dst, constant, alpha);
    let range = if alpha { 3..4 } else { 0..3 };
    for i in range {
        out[i] = match c.operation {
            BlendOperation::Add => src[i] * fs[i] + dst[i] * fd[i],
            BlendOperation::Subtract => src[i] * fs[i] - dst[i] * fd[i],
            BlendOperation::ReverseSubtract => dst[i] * fd[i] - src[i] * fs[i],
            BlendOperation::Min => src[i].min(dst[i]),
            BlendOperation::Max => src[i].max(dst[i]),
        };
    }
}

/// Blends `src` over `dst` (both linear RGBA).
pub fn blend(state: &BlendState, src: [f32; 4], dst: [f32; 4], constant: [f32; 4]) -> [f32; 4] {
    let mut out = [0.0; 4];
    apply(&state.color, &src, &dst, &constant, false, &mut out);
    apply(&state.alpha, &src, &dst, &constant, true, &mut out);
    out
}

/// Blends and writes one sample's colour into `texel` (the target's bytes for that sample).
/// Returns true when the blender was used.
#[inline]
pub fn write_sample(
    target: &ColorTargetState,
    texel: &mut [u8],
    src: [f32; 4],
    constant: [f32; 4],
) -> bool {
    let format = target.format;
    let mut src = src;
    let mut constant = constant;
    if is_normalized(format) {
        src = src.map(|v| v.clamp(0.0, 1.0));
        constant = constant.map(|v| v.clamp(0.0, 1.0));
    }
    let full_mask = target.write_mask.0 & 0xf == 0xf;
    match target.blend {
        None if full_mask => {
            format.encode_color(src, texel);
            false
        }
        blend_state => {
            let dst = format.decode_color(texel);
            let mut out = match blend_state {
                Some(b) => blend(&b, src, dst, constant),
                None => src,
            };
            for (i, v) in out.iter_mut().enumerate() {
                if !target.write_mask.writes(i) {
                    *v = dst[i];
                }
            }
            format.encode_color(out, texel);
            blend_state.is_some()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_blending() {
        let out = blend(
            &BlendState::ALPHA_BLENDING,
            [1.0, 0.0, 0.0, 0.25],
            [0.0, 0.0, 1.0, 1.0],
            [0.0; 4],
        );
        assert_eq!(out, [0.25, 0.0, 0.75, 0.25 + 0.75]);
    }

    #[test]
    fn min_max_ignore_factors() {
        let state = BlendState {
            color: BlendComponent {
                src_factor: BlendFactor::Zero,
                dst_factor: BlendFactor::Zero,
                operation: BlendOperation::Max,
            },
            alpha: BlendComponent {
                src_factor: BlendFactor::Zero,
                dst_factor: BlendFactor::Zero,
                operation: BlendOperation::Min,
            },
        };
        assert_eq!(
            blend(&state, [0.2, 0.8, 0.5, 0.3], [0.4, 0.1, 0.5, 0.9], [0.0; 4]),
            [0.4, 0.8, 0.5, 0.3]
        );
    }

    #[test]
    fn write_mask_keeps_destination_channels() {
        let target = ColorTargetState {
            format: TextureFormat::Rgba8Unorm,
            blend: None,
            write_mask: crate::state::ColorWrites::RED | crate::state::ColorWrites::ALPHA,
        };
        let mut texel = [10u8, 20, 30, 40];
        write_sample(&target, &mut texel, [1.0, 1.0, 1.0, 1.0], [0.0; 4]);
        assert_eq!(texel, [255, 20, 30, 255]);
    }
}
