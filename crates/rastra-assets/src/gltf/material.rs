//! Materials (glTF 2.0 §3.9): the base colour a primitive is drawn with — the
//! `baseColorFactor` and the `baseColorTexture` (§3.9.2), its texture's sampler (§3.8.4) and
//! image (§3.8.3), and the `KHR_texture_transform` of the texture reference — and whether
//! it is double-sided (§3.9.5).
//!
//! Images are decoded once, on first use by a drawn primitive, and shared by every mesh that
//! samples them; images no base-colour texture refers to (normal, occlusion, emissive maps)
//! are not decoded at all. The rest of the material model (metallic-roughness, normal,
//! occlusion and emissive textures, alpha modes) is not applied.

use std::collections::HashMap;
use std::path::Path;

use ::gltf::json;
use json::texture::{MagFilter, MinFilter, WrappingMode};
use json::validation::Checked;

use super::accessor::Reader;
use super::container;
use crate::error::{Problem, invalid};
use crate::image::{self, BaseColorTexture, Filter, Image, Sampler, Wrap};

/// What a primitive's material says about its base colour, and which faces it shows.
pub(crate) struct BaseColor {
    /// Linear RGBA factor (white for the default material, §3.9.6).
    pub factor: [f32; 4],
    pub texture: Option<TextureUse>,
    /// `doubleSided` (§3.9.5): when false — the default, and the default material's — back
    /// faces are culled.
    pub double_sided: bool,
}

/// A base-colour texture as a primitive uses it.
pub(crate) struct TextureUse {
    pub texture: BaseColorTexture,
    /// The `TEXCOORD_n` set it is sampled with (after the transform's override).
    pub tex_coord: u32,
    pub transform: Option<UvTransform>,
}

/// `KHR_texture_transform`: `uv' = T · R · S · uv`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct UvTransform {
    pub offset: [f32; 2],
    /// Radians, counter-clockwise in UV space.
    pub rotation: f32,
    pub scale: [f32; 2],
}

impl UvTransform {
    /// The extension's 3×3 matrix applied to one coordinate pair. The rotation matrix has
    /// rows `(cos, sin)` and `(-sin, cos)` — the sign that maps the extension's example
    /// (offset `[0, 1]`, rotation π/2, scale ½) onto the image's lower-left quadrant.
    pub fn apply(&self, [u, v]: [f32; 2]) -> [f32; 2] {
        let (sin, cos) = self.rotation.sin_cos();
        let (su, sv) = (u * self.scale[0], v * self.scale[1]);
        [
            cos * su + sin * sv + self.offset[0],
            -sin * su + cos * sv + self.offset[1],
        ]
    }
}

/// Resolves materials and owns the images decoded so far.
pub(crate) struct Materials<'a> {
    reader: &'a Reader<'a>,
    base_dir: &'a Path,
    /// Decoded images, in first-use order: the scene's `images`.
    pub images: Vec<Image>,
    /// glTF image index → index into `images`.
    decoded: HashMap<usize, usize>,
}

impl<'a> Materials<'a> {
    pub fn new(reader: &'a Reader<'a>, base_dir: &'a Path) -> Materials<'a> {
        Materials {
            reader,
            base_dir,
            images: Vec::new(),
            decoded: HashMap::new(),
        }
    }

    /// The base colour of `material` (the default material when `None`).
    pub fn base_color(&mut self, material: Option<usize>) -> Result<BaseColor, Problem> {
        let root = self.reader.root;
        let Some(index) = material else {
            return Ok(BaseColor {
                factor: [1.0; 4],
                texture: None,
                double_sided: false,
            });
        };
        let Some(json_material) = root.materials.get(index) else {
            return invalid!("material {index} does not exist");
        };
        let pbr = &json_material.pbr_metallic_roughness;
        let factor = pbr.base_color_factor.0;
        if factor.iter().any(|c| !c.is_finite()) {
            return invalid!("material {index} baseColorFactor {factor:?} is not finite");
        }
        let texture = match &pbr.base_color_texture {
            Some(info) => Some(
                self.texture_use(info)
                    .map_err(|p| p.context(format!("material {index} baseColorTexture")))?,
            ),
            None => None,
        };
        Ok(BaseColor {
            factor,
            texture,
            double_sided: json_material.double_sided,
        })
    }

    fn texture_use(&mut self, info: &json::texture::Info) -> Result<TextureUse, Problem> {
        let root = self.reader.root;
        let texture_index = info.index.value();
        let Some(texture) = root.textures.get(texture_index) else {
            return invalid!("texture {texture_index} does not exist");
        };
        let sampler = match texture.sampler {
            Some(s) => match root.samplers.get(s.value()) {
                Some(json_sampler) => sampler(json_sampler),
                None => {
                    return invalid!(
                        "texture {texture_index}: sampler {} does not exist",
                        s.value()
                    );
                }
            },
            None => Sampler::default(),
        };
        let image = self
            .image(texture.source.value())
            .map_err(|p| p.context(format!("texture {texture_index}")))?;
        let extension = info
            .extensions
            .as_ref()
            .and_then(|e| e.texture_transform.as_ref());
        let transform = match extension {
            Some(t) => {
                let transform = UvTransform {
                    offset: t.offset.0,
                    rotation: t.rotation.0,
                    scale: t.scale.0,
                };
                let values = [transform.offset, transform.scale, [transform.rotation; 2]];
                if values.iter().flatten().any(|v| !v.is_finite()) {
                    return invalid!("KHR_texture_transform {transform:?} is not finite");
                }
                Some(transform)
            }
            None => None,
        };
        Ok(TextureUse {
            texture: BaseColorTexture { image, sampler },
            tex_coord: extension
                .and_then(|t| t.tex_coord)
                .unwrap_or(info.tex_coord),
            transform,
        })
    }

    /// The scene image for glTF image `index`, decoding it on first use.
    fn image(&mut self, index: usize) -> Result<usize, Problem> {
        if let Some(&at) = self.decoded.get(&index) {
            return Ok(at);
        }
        let Some(json_image) = self.reader.root.images.get(index) else {
            return invalid!("image {index} does not exist");
        };
        let name = match (&json_image.name, &json_image.uri) {
            (Some(name), _) => name.clone(),
            (None, Some(uri)) if !uri.starts_with("data:") => uri.clone(),
            _ => format!("images[{index}]"),
        };
        let bytes = match (&json_image.uri, json_image.buffer_view) {
            (Some(uri), None) => container::read_uri(uri, self.base_dir)?,
            (None, Some(view)) => self.reader.view(view.value())?.0.to_vec(),
            (Some(_), Some(_)) => {
                return invalid!("image {index} has both a uri and a bufferView (§3.8.3)");
            }
            (None, None) => return invalid!("image {index} has neither a uri nor a bufferView"),
        };
        let image = image::decode(&bytes, &name)?;
        self.images.push(image);
        self.decoded.insert(index, self.images.len() - 1);
        Ok(self.images.len() - 1)
    }
}

/// A glTF sampler as rastra's; undefined filters are "auto" (trilinear, §3.8.4).
fn sampler(json: &json::texture::Sampler) -> Sampler {
    let auto = Sampler::default();
    let mag_filter = match json.mag_filter {
        Some(Checked::Valid(MagFilter::Nearest)) => Filter::Nearest,
        Some(Checked::Valid(MagFilter::Linear)) => Filter::Linear,
        _ => auto.mag_filter,
    };
    let (min_filter, mipmap_filter) = match json.min_filter {
        Some(Checked::Valid(min)) => match min {
            MinFilter::Nearest => (Filter::Nearest, None),
            MinFilter::Linear => (Filter::Linear, None),
            MinFilter::NearestMipmapNearest => (Filter::Nearest, Some(Filter::Nearest)),
            MinFilter::LinearMipmapNearest => (Filter::Linear, Some(Filter::Nearest)),
            MinFilter::NearestMipmapLinear => (Filter::Nearest, Some(Filter::Linear)),
            MinFilter::LinearMipmapLinear => (Filter::Linear, Some(Filter::Linear)),
        },
        _ => (auto.min_filter, auto.mipmap_filter),
    };
    let wrap = |mode: Checked<WrappingMode>| match mode {
        Checked::Valid(WrappingMode::ClampToEdge) => Wrap::ClampToEdge,
        Checked::Valid(WrappingMode::MirroredRepeat) => Wrap::MirroredRepeat,
        _ => Wrap::Repeat,
    };
    Sampler {
        mag_filter,
        min_filter,
        mipmap_filter,
        wrap_u: wrap(json.wrap_s),
        wrap_v: wrap(json.wrap_t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f32; 2], b: [f32; 2]) -> bool {
        (a[0] - b[0]).abs() < 1e-6 && (a[1] - b[1]).abs() < 1e-6
    }

    #[test]
    fn texture_transform_follows_the_extension_example() {
        // The extension's example: the lower-left quadrant of the image, rotated 90°.
        let t = UvTransform {
            offset: [0.0, 1.0],
            rotation: std::f32::consts::FRAC_PI_2,
            scale: [0.5, 0.5],
        };
        assert!(close(t.apply([0.0, 0.0]), [0.0, 1.0]));
        assert!(close(t.apply([1.0, 0.0]), [0.0, 0.5]));
        assert!(close(t.apply([0.0, 1.0]), [0.5, 1.0]));
        assert!(close(t.apply([1.0, 1.0]), [0.5, 0.5]));
        // The other example: T flipped to a bottom-left origin.
        let flip = UvTransform {
            offset: [0.0, 1.0],
            rotation: 0.0,
            scale: [1.0, -1.0],
        };
        assert!(close(flip.apply([0.25, 0.0]), [0.25, 1.0]));
        assert!(close(flip.apply([0.25, 1.0]), [0.25, 0.0]));
    }
}
