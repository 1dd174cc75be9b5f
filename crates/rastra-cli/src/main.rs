//! `rastra`, the command-line face of the software GPU.
//!
//! - `rastra render` draws the built-in scene, a benchmark workload, a glTF (.gltf/.glb) or an
//!   OBJ file to a PNG and
//!   prints the per-stage statistics report (`--stats` also writes it as JSON).
//! - `rastra bench` renders the reference workloads on rastra and, when it is installed, on
//!   lavapipe in the same run, printing one line per workload.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod render;

#[derive(Parser)]
#[command(name = "rastra", version, about = "rastra: a GPU that runs on the CPU")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Render a scene to PNG and print the per-stage report.
    Render(RenderArgs),
    /// Run the reference workloads on rastra and lavapipe and print the timings.
    Bench(BenchArgs),
}

#[derive(clap::Args, Default)]
pub struct RenderArgs {
    /// `builtin`, a benchmark workload (`textured_cubes`, `small_triangles`,
    /// `blended_layers`), or a .gltf/.glb/.obj file.
    #[arg(long, default_value = "builtin")]
    scene: String,
    /// Image size as WxH.
    #[arg(long, default_value = "1280x720", value_parser = parse_size)]
    size: (u32, u32),
    /// Samples per pixel: 1 or 4.
    #[arg(long, default_value_t = 1, value_parser = parse_msaa)]
    msaa: u32,
    /// Output PNG.
    #[arg(long, default_value = "rastra.png")]
    out: PathBuf,
    /// Also write the statistics as JSON here.
    #[arg(long)]
    stats: Option<PathBuf>,
    /// Worker threads (default: `RASTRA_THREADS`, else one per core). The image and the
    /// statistics are the same for any count.
    #[arg(long, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Shade every quad that passes early Z, as an immediate-mode GPU does, instead of
    /// leaving out those later opaque quads of the same tile overwrite. The image is the
    /// same; the shading statistics show what the removal saves.
    #[arg(long)]
    no_hidden_surface_removal: bool,
    /// Set every sampler's anisotropy clamp to this (1–16; 1 = no anisotropic filtering).
    /// Clamps above 1 go only to samplers whose filters are all linear.
    #[arg(long, value_parser = parse_anisotropy)]
    max_anisotropy: Option<u16>,
    /// Let anisotropic samplers blend mip levels by λ's whole fraction, as trilinear
    /// samplers do, instead of only across the middle 0.3 of a level (rastra's default;
    /// Vulkan leaves the anisotropic filter to the implementation).
    #[arg(long)]
    full_anisotropic_mip_blend: bool,
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Timed runs per workload (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Frame size as WxH.
    #[arg(long, default_value = "1920x1080", value_parser = parse_size)]
    size: (u32, u32),
    /// Skip lavapipe even if it is installed.
    #[arg(long)]
    no_lavapipe: bool,
    /// Run only workloads whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// Run rastra's side as wgpu programs too (through `rastra_wgpu::instance()`, the same
    /// wgpu code lavapipe runs), reported as a second line per workload.
    #[arg(long)]
    wgpu: bool,
    /// rastra's worker threads (default: `RASTRA_THREADS`, else one per core).
    #[arg(long, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Skip the one-thread runs that measure rastra's speed-up from 1 to N threads.
    #[arg(long)]
    no_scaling: bool,
    /// Also print every round's times (warm-up and timed run of each side) as `#` lines,
    /// to judge how much the machine's speed moves between runs.
    #[arg(long)]
    each_round: bool,
    /// Set every workload sampler's anisotropy clamp to this (1–16; 1 = no anisotropic
    /// filtering, e.g. textured_cubes as plain trilinear), on rastra and lavapipe alike.
    /// Clamps above 1 go only to samplers whose filters are all linear.
    #[arg(long, value_parser = parse_anisotropy)]
    max_anisotropy: Option<u16>,
    /// Let rastra's anisotropic samplers blend mip levels by λ's whole fraction, as
    /// trilinear samplers do (lavapipe's probes read one level either way).
    #[arg(long)]
    full_anisotropic_mip_blend: bool,
    /// Leave rastra's worker threads to the OS's placement instead of binding each to its
    /// own CPU (which rastra does when there are as many workers as CPUs).
    #[arg(long)]
    no_pin_workers: bool,
}

/// The mip blend anisotropic samplers get: narrowed unless `full`.
fn mip_blend(full: bool) -> rastra::MipBlend {
    if full {
        rastra::MipBlend::Full
    } else {
        rastra::MipBlend::Narrow
    }
}

fn parse_anisotropy(s: &str) -> Result<u16, String> {
    match s.parse::<u16>() {
        Ok(n) if (1..=16).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{s}` is not an anisotropy clamp (a whole number from 1 to 16)"
        )),
    }
}

fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "`{s}` is not a thread count (a whole number, at least 1)"
        )),
    }
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{s}` is not WxH"))?;
    let w: u32 = w.parse().map_err(|_| format!("bad width in `{s}`"))?;
    let h: u32 = h.parse().map_err(|_| format!("bad height in `{s}`"))?;
    if w == 0 || h == 0 || w > 8192 || h > 8192 {
        return Err(format!("size {w}x{h} must be between 1x1 and 8192x8192"));
    }
    Ok((w, h))
}

fn parse_msaa(s: &str) -> Result<u32, String> {
    match s {
        "1" => Ok(1),
        "4" => Ok(4),
        _ => Err(format!("--msaa must be 1 or 4, not `{s}`")),
    }
}

/// mimalloc, which backs its arenas with transparent huge pages: the front end's set-up
/// triangles (tens of MB, read in tile order, which is not the order they were written)
/// then cost far fewer page-table walks. small_triangles, one thread, five alternating
/// rounds: 137–145 ms with the C library's allocator, 127–131 ms with this one.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (v3's `mimalloc.h`, the version
/// `libmimalloc-sys` builds): how long freed memory stays committed before mimalloc
/// returns it to the system.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

unsafe extern "C" {
    /// mimalloc's option setter, linked in with the allocator (`libmimalloc-sys` declares
    /// it only behind a feature whose extra crate this workspace does not otherwise need).
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    #[cfg(test)]
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
}

/// Keeps freed memory committed for the life of the process (purge delay −1), unless
/// `MIMALLOC_PURGE_DELAY` says otherwise. By default mimalloc returns memory that stayed
/// free past its purge delay (1,000 ms in this version) to the system; buffers a frame
/// frees (set-up triangles, bins, vertex chunks) and a later frame allocates again then
/// fault in fresh, zeroed (often huge) pages inside that frame's timing. All five
/// workloads, two threads: the kernel's page clearing 4.8% of `perf record`'s samples of
/// a `bench --runs 2`, 2.2% with purging off; over a `--runs 3` run, page faults about
/// 8,000–10,000 → about 650, system time 0.15 and 0.25 s → 0.08 and 0.09 s (of about 8 s
/// of CPU time).
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: mimalloc's own entry point with an option number of its enum and a
        // value that option accepts (−1: never purge); it is thread-safe.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
}

fn main() -> ExitCode {
    keep_freed_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        None => render::run(&RenderArgs {
            scene: "builtin".into(),
            size: (1280, 720),
            msaa: 1,
            out: "rastra.png".into(),
            stats: None,
            threads: None,
            no_hidden_surface_removal: false,
            max_anisotropy: None,
            full_anisotropic_mip_blend: false,
        }),
        Some(Command::Render(args)) => render::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rastra: error: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option number names the purge delay: mimalloc v3 gives it 1000 ms by default,
    /// and no neighbouring option defaults to that; `keep_freed_memory` then turns it off.
    #[test]
    fn purge_delay_option() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: mimalloc's option getter with an option number of its enum.
        let default = unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(default, 1000);
        keep_freed_memory();
        // SAFETY: as above.
        assert_eq!(unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }, -1);
    }
}
