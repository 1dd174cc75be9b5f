//! Textured scenes on rastra and on lavapipe, compared pixel for pixel: glTF models from
//! Debian's `assimp-testmodels` as `rastra render` draws them (base-colour textures with the
//! file's sampler, generated mip chains, sRGB decode, lit and depth-tested), and the
//! benchmark's instanced textured cubes with and without anisotropic filtering.
//!
//! Skips, saying why, when lavapipe or the models are not installed (CI installs both).

#[allow(dead_code)] // Shared with differential.rs, which uses all of it.
mod common;

use std::path::Path;

use common::{lavapipe, render_both, write_images};
use rastra_lavapipe::Lavapipe;
use rastra_scene::Frame;

const GLTF2: &str = "/usr/share/assimp/models/glTF2";

/// Loads a model as the frame `rastra render` would draw.
fn model_frame(file: &str, name: &str, width: u32, height: u32) -> Option<rastra_scene::Frame> {
    let path = format!("{GLTF2}/{file}");
    if !Path::new(&path).exists() {
        eprintln!("skipping: {path} is not installed (scripts/setup.sh installs it)");
        return None;
    }
    let scene = rastra_assets::load(Path::new(&path)).expect("the model loads");
    Some(rastra_scene::model::frame_for(name, &scene, width, height, 1).expect("a frame"))
}

/// Renders `file`'s model and checks it with [`check_close`].
fn compare(file: &str, width: u32, height: u32, loose: u8, max_share: f64, max: u8) {
    let Some(lp) = lavapipe() else { return };
    let Some(frame) = model_frame(file, &file.replace('/', "-"), width, height) else {
        return;
    };
    assert!(!frame.textures.is_empty(), "{file}: the model is textured");
    check_close(&lp, &frame, loose, max_share, max);
}

/// Channel differences above `loose` may occur only at `max_share` of the pixels, and none
/// may exceed `max`.
fn check_close(lp: &Lavapipe, frame: &Frame, loose: u8, max_share: f64, max: u8) {
    let name = &frame.name;
    let both = render_both(lp, frame);
    let pixels = (frame.width * frame.height) as usize;
    let over_loose = both
        .rastra
        .chunks_exact(4)
        .zip(both.lavapipe.chunks_exact(4))
        .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > loose))
        .count();
    let share = over_loose as f64 / pixels as f64;
    eprintln!(
        "{name}: {}; {over_loose} pixels ({:.2}%) differ by more than {loose}",
        both.diff,
        share * 100.0
    );
    if share > max_share || both.diff.max_channel_diff > max {
        write_images(frame, &both.rastra, &both.lavapipe);
        panic!(
            "{name}: rastra vs lavapipe: {}; {:.2}% of pixels over {loose} (allowed {:.2}%), \
             max allowed {max}",
            both.diff,
            share * 100.0,
            max_share * 100.0
        );
    }
}

/// The sampler minifies with NEAREST_MIPMAP_LINEAR: where a pixel's coordinate lies within
/// rounding of a texel boundary the two pick different texels (as `sampling.rs` records for
/// nearest filtering), which shows at the logo's colour edges. Measured: 13 of 19,200
/// pixels over 4, at most 25; elsewhere within 4 (lavapipe's 8-bit filter weights and
/// sRGB conversion).
#[test]
fn box_textured_matches_lavapipe() {
    compare("BoxTextured-glTF/BoxTextured.gltf", 160, 120, 4, 0.005, 40);
}

/// Trilinear, magnified: within lavapipe's 8-bit weights (measured: at most 2).
#[test]
fn box_texcoords_matches_lavapipe() {
    compare("BoxTexcoords-glTF/boxTexcoords.gltf", 160, 120, 2, 0.0, 2);
}

/// The benchmark's textured-cube workload (10k instances, lit, 1024² bricks with a generated
/// mip chain, repeat addressing) at 480×270. Trilinear: within lavapipe's 8-bit filter
/// weights (measured: max 2). With 16× anisotropy the two place their extra samples
/// differently — Vulkan leaves the anisotropic footprint implementation-defined — so
/// oblique faces differ slightly (measured: 845 of 129,600 pixels over 16, max 26).
#[test]
fn textured_cubes_match_lavapipe() {
    let Some(lp) = lavapipe() else { return };
    for (anisotropy, loose, max_share, max) in [(1u16, 2, 0.0, 2), (16, 16, 0.01, 40)] {
        let mut frame = rastra_scene::workloads::textured_cubes(480, 270, 10_000);
        frame.samplers[0].max_anisotropy = anisotropy;
        frame.name = format!("textured_cubes-aniso{anisotropy}");
        check_close(&lp, &frame, loose, max_share, max);
    }
}
