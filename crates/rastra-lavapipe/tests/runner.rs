//! The runner itself: device discovery, timed runs and readback on the frames the CLI and
//! benchmarks use (the built-in scene, multisampled with depth and uniforms, and the
//! workloads). Skips, saying why, when lavapipe is not installed.

use rastra_lavapipe::{Lavapipe, compare_rgba8};

fn lavapipe() -> Option<Lavapipe> {
    Lavapipe::new()
        .map_err(|why| eprintln!("skipping: {why}"))
        .ok()
}

#[test]
fn describes_the_driver() {
    let Some(lp) = lavapipe() else { return };
    let d = lp.description();
    eprintln!("{d}");
    assert!(d.to_ascii_lowercase().contains("llvmpipe"), "{d}");
}

#[test]
fn times_every_run_and_returns_packed_pixels() {
    let Some(lp) = lavapipe() else { return };
    // 100 px wide: 400-byte rows, padded to 512 in the readback buffer.
    let frame = rastra_scene::workloads::small_triangles(100, 60, 500);
    let out = lp.render(&frame, 3).expect("render");
    assert_eq!(out.times_ms.len(), 3);
    assert!(out.times_ms.iter().all(|&t| t > 0.0));
    assert!(out.median_ms() > 0.0);
    assert_eq!(out.pixels.len(), 100 * 60 * 4);
    assert!(
        out.pixels.chunks_exact(4).any(|p| p != &out.pixels[..4]),
        "the image is blank"
    );
}

/// The built-in scene and the workloads on both renderers, reported (their shaders and
/// tolerances are the scene's business; here the runner must render them at all, and they
/// should come out close).
#[test]
fn renders_the_scene_frames() {
    let Some(lp) = lavapipe() else { return };
    for frame in [
        rastra_scene::builtin::scene(96, 64, 4),
        rastra_scene::builtin::scene(96, 64, 1),
        rastra_scene::workloads::blended_layers(96, 64, 4),
    ] {
        let theirs = lp.render(&frame, 1).unwrap_or_else(|e| panic!("{e}"));
        let ours = frame.render(&Default::default(), 1).expect("rastra");
        let diff = compare_rgba8(&ours.pixels, &theirs.pixels, frame.width);
        eprintln!("{}: {diff}", frame.name);
    }
}

/// A frame wgpu rejects comes back as an error naming the frame, not a panic.
#[test]
fn invalid_frames_are_errors() {
    let Some(lp) = lavapipe() else { return };
    let mut frame = rastra_scene::workloads::small_triangles(32, 32, 10);
    frame.shader = "this is not WGSL".into();
    let err = lp.render(&frame, 1).expect_err("broken shader accepted");
    eprintln!("{err}");
    assert!(err.contains(&frame.name), "{err}");
}
