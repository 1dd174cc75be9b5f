//! Scene tests: the built-in scene rendered at small sizes, compared exactly with golden
//! images, and its statistics compared with a snapshot — so a change in the work the GPU does
//! (twice the fragment invocations after an early-Z bug) fails even when the pixels match.
//! Bless new goldens with `RASTRA_BLESS=1 cargo test -p rastra-scene --test golden`; a
//! failure writes `target/golden/<name>-actual.png` next to the expectation.

use std::path::PathBuf;

use rastra::DeviceDescriptor;
use rastra_scene::{Frame, builtin};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn check(name: &str, frame: &Frame) {
    let rendered = frame
        .render(&DeviceDescriptor::default(), 1)
        .expect("the scene renders");
    let png = golden_dir().join(format!("{name}.png"));
    let stats_path = golden_dir().join(format!("{name}.stats.json"));
    let stats = serde_json::to_string_pretty(&rendered.stats.to_json()["frame"]).unwrap() + "\n";
    if std::env::var_os("RASTRA_BLESS").is_some() {
        image::save_buffer(
            &png,
            &rendered.pixels,
            frame.width,
            frame.height,
            image::ExtendedColorType::Rgba8,
        )
        .unwrap();
        std::fs::write(&stats_path, &stats).unwrap();
        return;
    }
    let expected = image::open(&png)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with RASTRA_BLESS=1)", png.display()));
    let expected = expected.to_rgba8();
    if expected.as_raw() != &rendered.pixels {
        let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/golden");
        std::fs::create_dir_all(&out).unwrap();
        let actual = out.join(format!("{name}-actual.png"));
        image::save_buffer(
            &actual,
            &rendered.pixels,
            frame.width,
            frame.height,
            image::ExtendedColorType::Rgba8,
        )
        .unwrap();
        let differing = expected
            .as_raw()
            .chunks(4)
            .zip(rendered.pixels.chunks(4))
            .filter(|(a, b)| a != b)
            .count();
        panic!(
            "{name}: {differing} pixels differ from {}; actual image in {}",
            png.display(),
            actual.display()
        );
    }
    let expected_stats = std::fs::read_to_string(&stats_path).unwrap();
    assert_eq!(stats, expected_stats, "{name}: statistics changed");
}

#[test]
fn builtin_scene() {
    check("builtin-256x144", &builtin::scene(256, 144, 1));
}

#[test]
fn builtin_scene_msaa4() {
    check("builtin-msaa4-192x108", &builtin::scene(192, 108, 4));
}

/// Images and statistics are bit-identical whatever the number of worker threads — the
/// front end's batch groups and the back end's tiles alike (the workloads put thousands of
/// batches through the front end's workers).
#[test]
fn identical_for_any_thread_count() {
    let mut shared_replays = 0;
    for frame in [
        builtin::scene(200, 120, 1),
        builtin::scene(160, 96, 4),
        // More than one group of front-end chunks.
        rastra_scene::workloads::small_triangles(128, 96, 18_000),
        rastra_scene::workloads::textured_cubes(128, 72, 900),
        // Enough texel L2 requests for the replay's shares on every worker, each reading
        // its run of the tiles' split logs (checked below).
        rastra_scene::workloads::textured_cubes(960, 540, 2500),
        rastra_scene::workloads::blended_layers(96, 64, 6),
        many_small_draws(),
    ] {
        let render = |threads| {
            frame
                .render(
                    &DeviceDescriptor {
                        threads: Some(threads),
                        ..Default::default()
                    },
                    1,
                )
                .expect("the scene renders")
        };
        let one = render(1);
        let l2_requests = one.stats.total().texel_l2_accesses;
        // (`cores::SHARED_REPLAY_REQUESTS`: from there on the replay is shared.)
        shared_replays += (l2_requests >= 1 << 14) as u32;
        for threads in [2, 3, 8] {
            let many = render(threads);
            assert!(
                one.pixels == many.pixels,
                "{threads} threads changed the image"
            );
            assert_eq!(
                one.stats, many.stats,
                "{threads} threads changed the statistics"
            );
        }
    }
    assert!(
        shared_replays >= 1,
        "no frame's texel log was long enough to replay in shares"
    );
}

/// A device keeps its front end's chunk buffers from one submission to the next
/// (`ChunkPool`): a second frame on the same device, written into the first frame's buffers,
/// is the first frame exactly — pixels and statistics. (No textures here: the device's
/// texture L2 keeps its lines between submissions, as a GPU's does, and would count
/// differently.)
#[test]
fn second_frame_on_a_device_equals_the_first() {
    for frame in [
        // Several back-end runs of chunks per frame, and a second batch of fewer chunks.
        rastra_scene::workloads::small_triangles(200, 120, 120_000),
        rastra_scene::workloads::blended_layers(96, 64, 6),
        many_small_draws(),
    ] {
        let render = |runs| {
            frame
                .render(&DeviceDescriptor::default(), runs)
                .expect("the scene renders")
        };
        let (first, second) = (render(1), render(2));
        assert!(
            first.pixels == second.pixels,
            "{}: the second frame's image differs",
            frame.name
        );
        assert_eq!(
            first.stats, second.stats,
            "{}: the second frame's statistics differ",
            frame.name
        );
    }
}

/// The same work on a new device gives the same statistics, whatever textures earlier
/// devices of the process made: a device places its textures in the cache model's memory
/// itself. A texel cache far smaller than the frame's textures makes set conflicts, which
/// depend on where lines lie, decide the misses.
#[test]
fn a_new_device_counts_the_same() {
    let frame = rastra_scene::workloads::textured_cubes(128, 72, 900);
    let desc = DeviceDescriptor {
        texel_cache: rastra::TexelCacheConfig {
            l1_lines: 16,
            l1_ways: 2,
            l2_bytes: 2048,
            l2_line_bytes: 64,
            l2_ways: 2,
            ..Default::default()
        },
        ..Default::default()
    };
    let first = frame.render(&desc, 1).expect("the scene renders");
    let second = frame.render(&desc, 1).expect("the scene renders");
    assert!(first.stats.total().texel_l2_misses > 0);
    assert_eq!(first.stats, second.stats);
}

/// A frame rendered again on a device that rendered it before (`Frame::render_on`, as the
/// bench does round after round) makes the same image and the same statistics as on a new
/// device: each call makes the frame's textures anew, in memory regions of their own, so the
/// device-wide texture L2 — which keeps its lines from one submission to the next — holds
/// none of their texels when the frame starts.
#[test]
fn frames_on_one_device_render_the_same() {
    let frame = rastra_scene::workloads::textured_cubes(128, 72, 900);
    let desc = DeviceDescriptor::default();
    let fresh = frame.render(&desc, 1).expect("the scene renders");
    assert!(fresh.stats.total().texel_l2_accesses > 0);
    let (device, queue) = rastra::Device::new(&desc);
    for _ in 0..2 {
        let again = frame
            .render_on(&device, &queue, 1)
            .expect("the scene renders");
        assert!(
            again.pixels == fresh.pixels,
            "the same image on a reused device"
        );
        assert_eq!(again.stats, fresh.stats);
    }
}

/// The small-triangle workload cut into 120 draws of 50 triangles — a pass of many small
/// draws, run as batches whose front ends and tiles mix draws.
fn many_small_draws() -> Frame {
    let mut frame = rastra_scene::workloads::small_triangles(128, 96, 6_000);
    let template = frame.draws[0].clone();
    let rastra_scene::DrawKind::Vertices(all) = &template.kind else {
        panic!("the small-triangle workload draws vertices");
    };
    let per_draw = 150;
    frame.draws = (all.start..all.end)
        .step_by(per_draw as usize)
        .map(|first| {
            let mut d = template.clone();
            d.kind = rastra_scene::DrawKind::Vertices(first..(first + per_draw).min(all.end));
            d
        })
        .collect();
    assert_eq!(frame.draws.len(), 120);
    frame
}

/// Images, compute results and statistics do not depend on the CPU's vector units: the
/// AVX2+FMA versions of the hot loops compute what the baseline versions do (on a CPU
/// without AVX2 both runs take the baseline versions).
#[test]
fn identical_with_and_without_wide_simd() {
    let frames = [
        builtin::scene(200, 120, 1),
        rastra_scene::workloads::textured_cubes(128, 72, 900),
        rastra_scene::workloads::blended_layers(96, 64, 6),
        // (Small depth-tested triangles: the early-Z pairs' heaviest user.)
        rastra_scene::workloads::small_triangles(128, 96, 3_000),
    ];
    let job = rastra_scene::workloads::fma_then_reduce(1 << 14);
    let run_all = |wide: bool| {
        rastra::cpu::set_wide_allowed(wide);
        let desc = DeviceDescriptor::default();
        let images: Vec<_> = frames
            .iter()
            .map(|f| {
                let r = f.render(&desc, 1).expect("the scene renders");
                (r.pixels, r.stats)
            })
            .collect();
        let compute = job.run(&desc, 1).expect("the job runs");
        rastra::cpu::set_wide_allowed(true);
        (images, compute.outputs, compute.stats)
    };
    let baseline = run_all(false);
    let wide = run_all(true);
    for (k, (b, w)) in baseline.0.iter().zip(&wide.0).enumerate() {
        assert!(
            b.0 == w.0,
            "frame {k}: the image depends on the vector unit"
        );
        assert_eq!(
            b.1, w.1,
            "frame {k}: the statistics depend on the vector unit"
        );
    }
    assert_eq!(
        baseline.1, wide.1,
        "compute results depend on the vector unit"
    );
    assert_eq!(
        baseline.2, wide.2,
        "compute statistics depend on the vector unit"
    );
}

/// Compute results and statistics do not depend on the number of worker threads either.
#[test]
fn compute_identical_for_any_thread_count() {
    let job = rastra_scene::workloads::fma_then_reduce(1 << 15);
    let run = |threads| {
        job.run(
            &DeviceDescriptor {
                threads: Some(threads),
                ..Default::default()
            },
            1,
        )
        .expect("the job runs")
    };
    let one = run(1);
    for threads in [2, 5] {
        let many = run(threads);
        assert_eq!(
            one.outputs, many.outputs,
            "{threads} threads changed the results"
        );
        assert_eq!(
            one.stats, many.stats,
            "{threads} threads changed the statistics"
        );
    }
}

/// Hidden-surface removal changes no pixel of the scenes, only how many pixels are shaded:
/// every pixel it leaves out is one that shading every quad would have shaded (and a later
/// quad overwritten).
#[test]
fn identical_with_and_without_hidden_surface_removal() {
    let frames = [
        builtin::scene(200, 120, 1),
        // (4× MSAA: ownership per sample.)
        builtin::scene(160, 96, 4),
        rastra_scene::workloads::textured_cubes(128, 72, 900),
        rastra_scene::workloads::small_triangles(128, 96, 3_000),
        many_small_draws(),
    ];
    let mut removed = [0; 2];
    for (k, frame) in frames.iter().enumerate() {
        let render = |on: bool| {
            frame
                .render(
                    &DeviceDescriptor {
                        features: rastra::DeviceFeatures {
                            hidden_surface_removal: on,
                            ..Default::default()
                        },
                        ..Default::default()
                    },
                    1,
                )
                .expect("the scene renders")
        };
        let (with, without) = (render(true), render(false));
        assert!(
            with.pixels == without.pixels,
            "frame {k}: the image changed"
        );
        let (w, wo) = (with.stats.total(), without.stats.total());
        assert_eq!(wo.hidden_pixels_removed, 0);
        assert_eq!(
            w.fragment_shader_invocations + w.hidden_pixels_removed,
            wo.fragment_shader_invocations,
            "frame {k}"
        );
        // (One colour target: with one sample a removed pixel is one sample not written;
        // with four, some of a pixel's samples may be removed while it is still shaded.)
        if frame.samples == 1 {
            assert_eq!(
                w.samples_written + w.hidden_pixels_removed,
                wo.samples_written,
                "frame {k}"
            );
        } else {
            assert!(w.samples_written <= wo.samples_written, "frame {k}");
        }
        removed[(frame.samples > 1) as usize] += w.hidden_pixels_removed;
    }
    assert!(
        removed.iter().all(|&r| r > 0),
        "no hidden pixel removed at one sample, or at four: {removed:?}"
    );
}
