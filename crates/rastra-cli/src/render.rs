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
    let mut frame = frame_for(&args.scene, width, height, args.msaa)?;
    if let Some(clamp) = args.max_anisotropy {
        set_anisotropy(&mut frame, clamp);
    }
    let built = start.elapsed();
    let rendered = frame
        .render(
            &DeviceDescriptor {
                threads: args.threads,
                features: rastra::DeviceFeatures {
                    hidden_surface_removal: !args.no_hidden_surface_removal,
                    ..Default::default()
                },
                anisotropic_mip_blend: crate::mip_blend(args.full_anisotropic_mip_blend),
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

/// Sets the anisotropy clamp of every sampler of `frame` (`--max-anisotropy`) to `clamp`,
/// but to 1 for a sampler with a filter that is not linear (anisotropic filtering needs all
/// three linear).
pub fn set_anisotropy(frame: &mut Frame, clamp: u16) {
    for sampler in &mut frame.samplers {
        sampler.max_anisotropy = anisotropy_for(sampler, clamp);
    }
}

/// The clamp [`set_anisotropy`] gives `sampler`.
fn anisotropy_for(sampler: &rastra::SamplerDescriptor, clamp: u16) -> u16 {
    let linear = [
        sampler.mag_filter,
        sampler.min_filter,
        sampler.mipmap_filter,
    ]
    .iter()
    .all(|&f| f == rastra::FilterMode::Linear);
    if linear { clamp } else { 1 }
}

/// Writes tightly packed RGBA8 rows as a PNG.
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), String> {
    image::save_buffer(path, rgba, width, height, image::ExtendedColorType::Rgba8)
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rastra::{FilterMode, SamplerDescriptor};

    #[test]
    fn anisotropy_goes_only_to_all_linear_samplers() {
        let trilinear = SamplerDescriptor::trilinear();
        assert_eq!(anisotropy_for(&trilinear, 8), 8);
        assert_eq!(anisotropy_for(&trilinear, 1), 1);
        let nearest_mips = SamplerDescriptor {
            mipmap_filter: FilterMode::Nearest,
            ..SamplerDescriptor::trilinear()
        };
        assert_eq!(anisotropy_for(&nearest_mips, 8), 1);
        let point = SamplerDescriptor::default();
        assert_eq!(anisotropy_for(&point, 16), 1);
    }
}
