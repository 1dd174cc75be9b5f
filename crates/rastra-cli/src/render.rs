//! `rastra render`: scene → frame → rastra → PNG + report.

use std::path::Path;
use std::time::Instant;

use rastra::DeviceDescriptor;
use rastra_scene::Frame;

use crate::RenderArgs;

/// Builds the frame the arguments ask for.
pub fn frame_for(scene: &str, width: u32, height: u32, msaa: u32) -> Result<Frame, String> {
    if scene == "builtin" {
        return Ok(rastra_scene::builtin::scene(width, height, msaa));
    }
    let workload = rastra_scene::workloads::reference_frame(scene, width, height);
    if let Some(mut frame) = workload {
        frame.samples = msaa;
        return Ok(frame);
    }
    let path = Path::new(scene);
    let loaded = rastra_assets::load(path).map_err(|e| e.to_string())?;
    for skipped in &loaded.skipped_primitives {
        eprintln!("rastra: note: skipped {skipped}");
    }
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    rastra_scene::model::frame_for(name, &loaded, width, height, msaa)
        .map_err(|e| format!("{scene}: {e}"))
}

pub fn run(args: &RenderArgs) -> Result<(), String> {
    let (width, height) = args.size;
    let start = Instant::now();
    let frame = frame_for(&args.scene, width, height, args.msaa)?;
    let built = start.elapsed();
    let rendered = frame
        .render(
            &DeviceDescriptor {
                threads: args.threads,
                features: rastra::DeviceFeatures {
                    hidden_surface_removal: !args.no_hidden_surface_removal,
                    ..Default::default()
                },
                ..DeviceDescriptor::default()
            },
            1,
        )
        .map_err(|e| format!("rendering {}: {e}", args.scene))?;
    write_png(&args.out, width, height, &rendered.pixels)?;
    println!(
        "rastra render: {} at {width}x{height}, {}x MSAA, {} triangles submitted",
        args.scene,
        args.msaa,
        frame.triangle_count()
    );
    println!(
        "scene built in {:.1} ms, rendered in {:.1} ms, written to {}",
        built.as_secs_f64() * 1e3,
        rendered.median_ms(),
        args.out.display()
    );
    println!();
    print!("{}", rendered.stats.table());
    if let Some(path) = &args.stats {
        let json = serde_json::to_string_pretty(&rendered.stats.to_json())
            .map_err(|e| format!("encoding statistics: {e}"))?;
        std::fs::write(path, json).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Writes tightly packed RGBA8 rows as a PNG.
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), String> {
    image::save_buffer(path, rgba, width, height, image::ExtendedColorType::Rgba8)
        .map_err(|e| format!("writing {}: {e}", path.display()))
}
