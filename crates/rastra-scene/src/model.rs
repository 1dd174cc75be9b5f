//! Loaded models as frames: every mesh of a [`rastra_assets::Scene`] drawn with the lit
//! material — textured where the file gives a base-colour texture, back faces culled unless
//! the mesh is double-sided (glTF 2.0 §3.9.5) — seen through the file's
//! camera or, when it has none, a camera framing its bounds, lit by one directional light over
//! the viewer's shoulder.
//!
//! Base-colour images become `Rgba8UnormSrgb` textures (glTF §3.9.2: the texture is sRGB
//! encoded) with a full mip chain built by box filtering in linear space
//! ([`TextureData::srgb_with_mips`]), so minified textures are filtered the way the file's
//! sampler asks.

use rastra::{AddressMode, Error, FilterMode, SamplerDescriptor};
use rastra_assets::{Filter, Sampler, Scene, Wrap};

use crate::lit::{Material, MeshData, Textures, View, frame};
use crate::math::{add, normalize, sub};
use crate::{Frame, TextureData};

/// A frame showing `scene` at the given size. Fails only when an image cannot become a
/// texture (its texel count does not match its size).
pub fn frame_for(
    name: &str,
    scene: &Scene,
    width: u32,
    height: u32,
    samples: u32,
) -> Result<Frame, Error> {
    let aspect = width as f32 / height as f32;
    let camera = scene.camera.unwrap_or_else(|| scene.framing_camera(aspect));
    let forward = normalize(sub(camera.target, camera.eye));
    let light = normalize(add(sub([0.0; 3], forward), [0.3, 0.8, 0.2]));
    let view = View {
        eye: camera.eye,
        target: camera.target,
        up: camera.up,
        yfov: camera.yfov_radians,
        near: camera.znear,
        far: camera.zfar,
        light,
    };
    let mut textures = Textures {
        textures: scene
            .images
            .iter()
            .map(|image| {
                TextureData::srgb_with_mips(
                    &image.name,
                    image.width,
                    image.height,
                    image.rgba8.clone(),
                )
            })
            .collect::<Result<_, _>>()?,
        samplers: Vec::new(),
    };
    let meshes: Vec<(MeshData, Material)> = scene
        .meshes
        .iter()
        .map(|m| {
            let mut data = MeshData::default();
            for i in 0..m.positions.len() {
                data.vertex(m.positions[i], m.normals[i], m.colors[i], m.texcoords[i]);
            }
            data.indices = m.indices.clone();
            // Back faces culled where the file says its material is single-sided (glTF's
            // default); OBJ meshes, which promise no winding, show both faces.
            let material = match m.base_color_texture {
                Some(t) => Material::Textured {
                    texture: t.image,
                    sampler: sampler_index(&mut textures.samplers, t.sampler),
                    two_sided: m.double_sided,
                },
                None if m.double_sided => Material::LitTwoSided,
                None => Material::Lit,
            };
            (data, material)
        })
        .collect();
    Ok(frame(
        name, width, height, samples, &view, &meshes, textures,
    ))
}

/// The index of `sampler` in `samplers`, adding it if new.
fn sampler_index(samplers: &mut Vec<SamplerDescriptor>, sampler: Sampler) -> usize {
    let filter = |f: Filter| match f {
        Filter::Nearest => FilterMode::Nearest,
        Filter::Linear => FilterMode::Linear,
    };
    let address = |w: Wrap| match w {
        Wrap::Repeat => AddressMode::Repeat,
        Wrap::MirroredRepeat => AddressMode::MirrorRepeat,
        Wrap::ClampToEdge => AddressMode::ClampToEdge,
    };
    let desc = SamplerDescriptor {
        address_mode_u: address(sampler.wrap_u),
        address_mode_v: address(sampler.wrap_v),
        mag_filter: filter(sampler.mag_filter),
        min_filter: filter(sampler.min_filter),
        mipmap_filter: filter(sampler.mipmap_filter.unwrap_or(Filter::Nearest)),
        // Minification without a mipmap mode samples level 0 only. The clamp is 0.25, not 0:
        // the min/mag choice follows the clamped LOD, so 0 would always magnify (Vulkan's
        // note on emulating non-mipmapped minification); with nearest mip selection 0.25
        // still rounds to level 0.
        lod_max_clamp: if sampler.mipmap_filter.is_some() {
            32.0
        } else {
            0.25
        },
        ..SamplerDescriptor::default()
    };
    match samplers.iter().position(|s| *s == desc) {
        Some(i) => i,
        None => {
            samplers.push(desc);
            samplers.len() - 1
        }
    }
}

#[cfg(test)]
mod tests {
    use rastra::CullMode;
    use rastra_assets::Mesh;

    use super::*;

    /// A unit quad facing +Z, single- or double-sided.
    fn quad(double_sided: bool) -> Mesh {
        Mesh {
            positions: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0],
                [0.0, 1.0, 0.0],
            ],
            normals: vec![[0.0, 0.0, 1.0]; 4],
            colors: vec![[1.0; 4]; 4],
            texcoords: vec![[0.0; 2]; 4],
            indices: vec![0, 1, 2, 0, 2, 3],
            base_color_texture: None,
            double_sided,
        }
    }

    /// A single-sided mesh is drawn with back faces culled, a double-sided one without.
    #[test]
    fn single_sided_meshes_cull_back_faces() {
        let scene = Scene {
            meshes: vec![quad(false), quad(true)],
            bounds_min: [0.0; 3],
            bounds_max: [1.0, 1.0, 0.0],
            camera: None,
            skipped_primitives: Vec::new(),
            images: Vec::new(),
        };
        let frame = frame_for("quads", &scene, 64, 64, 1).unwrap();
        let culls: Vec<CullMode> = frame
            .draws
            .iter()
            .map(|d| frame.pipelines[d.pipeline].primitive.cull_mode)
            .collect();
        assert_eq!(culls, [CullMode::Back, CullMode::None]);
    }
}
