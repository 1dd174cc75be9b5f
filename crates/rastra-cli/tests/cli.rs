//! The `rastra` command end to end: real models render, broken files are rejected with a
//! clear message and a non-zero exit status (never a panic), bad arguments are refused.

use std::path::Path;
use std::process::{Command, Output};

fn rastra(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rastra"))
        .args(args)
        .output()
        .expect("rastra runs")
}

fn out_path(name: &str) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    dir.join(name).to_string_lossy().into_owned()
}

const GLTF: &str = "/usr/share/assimp/models/glTF2";

/// Skips (with a note) when Debian's asset packages are not installed.
fn asset(path: &str) -> Option<&str> {
    if Path::new(path).exists() {
        Some(path)
    } else {
        eprintln!("skipping: {path} is not installed (scripts/setup.sh installs it)");
        None
    }
}

fn assert_rendered(args: &[&str], png: &str) -> String {
    let out = rastra(args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = image::open(png).expect("a PNG was written").to_rgba8();
    // Something other than the clear colour was drawn.
    let first = *image.get_pixel(0, 0);
    assert!(
        image.pixels().any(|p| *p != first),
        "the image is a flat colour"
    );
    stdout
}

#[test]
fn builtin_scene_renders_with_report_and_json() {
    let png = out_path("builtin.png");
    let json = out_path("builtin.json");
    let stdout = assert_rendered(
        &[
            "render", "--size", "160x90", "--out", &png, "--stats", &json,
        ],
        &png,
    );
    assert!(stdout.contains("vertex_cache_hits"), "{stdout}");
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(
        stats["frame"]["fragment_shader_invocations"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(stats["draws"].as_array().unwrap().len() >= 4);
}

#[test]
fn real_models_render() {
    for (model, name) in [
        (
            format!("{GLTF}/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"),
            "engine.png",
        ),
        (
            "/usr/share/glmark2/models/bunny.obj".to_string(),
            "bunny.png",
        ),
        (
            format!("{GLTF}/BoxTextured-glTF/BoxTextured.gltf"),
            "box.png",
        ),
    ] {
        let Some(model) = asset(&model) else { continue };
        let png = out_path(name);
        let stdout = assert_rendered(
            &[
                "render", "--scene", model, "--size", "200x150", "--msaa", "4", "--out", &png,
            ],
            &png,
        );
        assert!(stdout.contains("triangles submitted"), "{stdout}");
    }
}

#[test]
fn broken_models_are_rejected_cleanly() {
    let mut files = vec![
        format!("{GLTF}/IndexOutOfRange/IndexOutOfRange.gltf"),
        format!("{GLTF}/BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb"),
    ];
    if let Ok(dir) = std::fs::read_dir(format!("{GLTF}/wrongTypes")) {
        files.extend(
            dir.flatten()
                .map(|e| e.path().to_string_lossy().into_owned())
                .filter(|p| p.ends_with(".gltf")),
        );
    }
    files.push("/nonexistent/model.glb".into());
    for file in &files {
        if !file.starts_with("/nonexistent") && asset(file).is_none() {
            continue;
        }
        let png = out_path("broken.png");
        let out = rastra(&["render", "--scene", file, "--size", "64x64", "--out", &png]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {stderr}");
        assert!(stderr.starts_with("rastra: error: "), "{file}: {stderr}");
        assert!(!stderr.contains("panicked"), "{file}: {stderr}");
        let name = Path::new(file).file_name().unwrap().to_string_lossy();
        assert!(
            stderr.contains(&*name),
            "the message names the file: {stderr}"
        );
    }
}

#[test]
fn bad_arguments_are_refused() {
    for args in [
        &["render", "--msaa", "3"][..],
        &["render", "--size", "0x10"],
        &["render", "--size", "big"],
        &["bench", "--max-anisotropy", "0"],
        &["render", "--max-anisotropy", "32"],
        &["bench", "--max-anisotropy", "17"],
    ] {
        let out = rastra(args);
        assert!(!out.status.success(), "{args:?}");
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    }
}

#[test]
fn bench_reports_each_workload_natively_and_through_wgpu() {
    let out = rastra(&[
        "bench",
        "--size",
        "64x36",
        "--runs",
        "2",
        "--no-lavapipe",
        "--only",
        "small_triangles",
        "--wgpu",
        "--each-round",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no `{name}` line in:\n{stdout}"))
            .to_string()
    };
    for name in ["small_triangles", "small_triangles/wgpu"] {
        let l = line(name);
        assert!(
            l.contains("rastra_ms=") && l.contains("lavapipe_ms=n/a"),
            "{l}"
        );
    }
    // `--each-round`: a line per round, each with the warm-up's and the timed run's times.
    for round in 0..2 {
        let prefix = format!("# small_triangles round {round}: rastra_ms=");
        let l = stdout
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no round {round} line in:\n{stdout}"));
        let times = l.split_whitespace().next().unwrap_or_default();
        let parsed: Vec<f64> = times.split(',').filter_map(|t| t.parse().ok()).collect();
        assert_eq!(parsed.len(), 2, "{l}");
    }
}

#[test]
fn bench_overrides_the_anisotropy_clamp() {
    let out = rastra(&[
        "bench",
        "--size",
        "64x36",
        "--runs",
        "1",
        "--no-lavapipe",
        "--no-scaling",
        "--only",
        "textured_cubes",
        "--max-anisotropy",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("# every workload sampler's anisotropy clamp set to 1"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("textured_cubes rastra_ms=")),
        "{stdout}"
    );
}

#[test]
fn render_overrides_the_anisotropy_clamp() {
    // textured_cubes' 16× sampler takes several bilinear requests a fragment; with the
    // clamp at 1 it is trilinear, at most two (one a level).
    let requests_per_fragment = |extra: &[&str]| {
        let (png, json) = (
            out_path(&format!("aniso{}.png", extra.len())),
            out_path(&format!("aniso{}.json", extra.len())),
        );
        let mut args = vec![
            "render",
            "--scene",
            "textured_cubes",
            "--size",
            "96x54",
            "--out",
            &png,
            "--stats",
            &json,
        ];
        args.extend_from_slice(extra);
        assert_rendered(&args, &png);
        let stats: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let frame = &stats["frame"];
        frame["texel_requests"].as_u64().unwrap() as f64
            / frame["fragment_shader_invocations"].as_u64().unwrap() as f64
    };
    let anisotropic = requests_per_fragment(&[]);
    let trilinear = requests_per_fragment(&["--max-anisotropy", "1"]);
    assert!(anisotropic > 2.5, "{anisotropic}");
    assert!(trilinear <= 2.0, "{trilinear}");
}
