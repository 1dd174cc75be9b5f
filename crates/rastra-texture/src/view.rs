//! Texture views — T4's shader resource view: how the sampler interprets a resource's bits.
//! A view picks a dimension (a 2D array seen as a cube, one layer of an array seen as 2D), a
//! format (the texture's own or its sRGB / non-sRGB sibling: "once as UNORM8_SRGB … and once
//! as UINT8"-style reinterpretation, limited to what WebGPU allows), an aspect of a
//! depth-stencil format, and a sub-range of mips and layers. All type checking happens once
//! here (WebGPU `createView`, §6.1.5), so the texture unit trusts a view it is given.

use crate::format::{SampleType, TextureAspect, TextureFormat};
use crate::storage::{Texture, TextureDesc, TextureDimension};
use crate::{TextureError, invalid};

/// How a view presents the texture to shaders (WebGPU `GPUTextureViewDimension`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureViewDimension {
    D1,
    D2,
    D2Array,
    Cube,
    CubeArray,
    D3,
}

/// What to create a view with; `None` fields take WebGPU's defaults (the texture's format,
/// its natural dimension, all remaining mips / layers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextureViewDesc {
    pub format: Option<TextureFormat>,
    pub dimension: Option<TextureViewDimension>,
    pub aspect: TextureAspect,
    pub base_mip_level: u32,
    pub mip_level_count: Option<u32>,
    pub base_array_layer: u32,
    pub array_layer_count: Option<u32>,
}

/// A validated view of one texture. It records the texture's id and descriptor; the texture
/// unit checks it is handed the same texture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureView {
    texture_id: u64,
    /// The descriptor of the texture the view was made from.
    pub texture: TextureDesc,
    pub format: TextureFormat,
    pub dimension: TextureViewDimension,
    pub aspect: TextureAspect,
    pub base_mip_level: u32,
    pub mip_level_count: u32,
    pub base_array_layer: u32,
    pub array_layer_count: u32,
}

impl TextureView {
    /// Creates a view of `texture`, checking the WebGPU `createView` rules.
    pub fn new(texture: &Texture, desc: &TextureViewDesc) -> Result<TextureView, TextureError> {
        let t = *texture.desc();
        let format = desc.format.unwrap_or(t.format);
        if format != t.format && t.format.srgb_sibling() != Some(format) {
            return invalid!(
                "view format {format:?} is neither {:?} nor its sRGB sibling",
                t.format
            );
        }
        if !t.format.has_aspect(desc.aspect) {
            return invalid!("{:?} has no {:?} aspect", t.format, desc.aspect);
        }
        let layers = t.array_layers();
        let dimension = desc.dimension.unwrap_or(match t.dimension {
            TextureDimension::D1 => TextureViewDimension::D1,
            TextureDimension::D3 => TextureViewDimension::D3,
            TextureDimension::D2 if layers == 1 => TextureViewDimension::D2,
            TextureDimension::D2 => TextureViewDimension::D2Array,
        });
        if desc.base_mip_level >= t.mip_level_count {
            return invalid!(
                "base mip level {} of a texture with {} levels",
                desc.base_mip_level,
                t.mip_level_count
            );
        }
        let mip_level_count = desc
            .mip_level_count
            .unwrap_or(t.mip_level_count - desc.base_mip_level);
        if mip_level_count == 0
            || desc.base_mip_level as u64 + mip_level_count as u64 > t.mip_level_count as u64
        {
            return invalid!(
                "mips {}..+{mip_level_count} outside the texture's {}",
                desc.base_mip_level,
                t.mip_level_count
            );
        }
        if desc.base_array_layer >= layers {
            return invalid!(
                "base array layer {} of a texture with {layers} layers",
                desc.base_array_layer
            );
        }
        let default_layers = match dimension {
            TextureViewDimension::D1 | TextureViewDimension::D2 | TextureViewDimension::D3 => 1,
            TextureViewDimension::Cube => 6,
            _ => layers - desc.base_array_layer,
        };
        let array_layer_count = desc.array_layer_count.unwrap_or(default_layers);
        if array_layer_count == 0
            || desc.base_array_layer as u64 + array_layer_count as u64 > layers as u64
        {
            return invalid!(
                "layers {}..+{array_layer_count} outside the texture's {layers}",
                desc.base_array_layer
            );
        }
        let want = match dimension {
            TextureViewDimension::D1 => TextureDimension::D1,
            TextureViewDimension::D3 => TextureDimension::D3,
            _ => TextureDimension::D2,
        };
        if t.dimension != want {
            return invalid!(
                "a {dimension:?} view needs a {want:?} texture, not {:?}",
                t.dimension
            );
        }
        match dimension {
            TextureViewDimension::D1 | TextureViewDimension::D2 | TextureViewDimension::D3
                if array_layer_count != 1 =>
            {
                return invalid!("a {dimension:?} view has exactly one layer");
            }
            TextureViewDimension::Cube if array_layer_count != 6 => {
                return invalid!("a cube view has exactly 6 layers, not {array_layer_count}");
            }
            TextureViewDimension::CubeArray if !array_layer_count.is_multiple_of(6) => {
                return invalid!("a cube-array view needs a multiple of 6 layers");
            }
            TextureViewDimension::Cube | TextureViewDimension::CubeArray
                if t.size[0] != t.size[1] =>
            {
                return invalid!(
                    "cube views need square textures, not {}×{}",
                    t.size[0],
                    t.size[1]
                );
            }
            _ => {}
        }
        if t.sample_count > 1 && dimension != TextureViewDimension::D2 {
            return invalid!("multisampled textures can only be viewed as 2D");
        }
        Ok(TextureView {
            texture_id: texture.id(),
            texture: t,
            format,
            dimension,
            aspect: desc.aspect,
            base_mip_level: desc.base_mip_level,
            mip_level_count,
            base_array_layer: desc.base_array_layer,
            array_layer_count,
        })
    }

    /// The default view of `texture` (`TextureViewDesc::default()`).
    pub fn whole(texture: &Texture) -> Result<TextureView, TextureError> {
        TextureView::new(texture, &TextureViewDesc::default())
    }

    /// Id of the texture this view was created from.
    pub fn texture_id(&self) -> u64 {
        self.texture_id
    }

    /// What shaders read through this view.
    pub fn sample_type(&self) -> SampleType {
        self.format.sample_type_of(self.aspect)
    }

    /// Size of view mip `level` (relative to the base): width, height, depth (3D) or layers.
    pub fn level_size(&self, level: u32) -> [u32; 3] {
        let [w, h, d] = self.texture.mip_size(self.base_mip_level + level);
        match self.dimension {
            TextureViewDimension::D3 => [w, h, d],
            _ => [w, h, self.array_layer_count],
        }
    }

    /// Array layers as a shader counts them (cube arrays count cubes).
    pub fn layers(&self) -> u32 {
        match self.dimension {
            TextureViewDimension::CubeArray => self.array_layer_count / 6,
            TextureViewDimension::D2Array => self.array_layer_count,
            _ => 1,
        }
    }

    /// True for cube and cube-array views.
    pub fn is_cube(&self) -> bool {
        matches!(
            self.dimension,
            TextureViewDimension::Cube | TextureViewDimension::CubeArray
        )
    }
}
