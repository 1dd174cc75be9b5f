//! `rastra bench`: the reference workloads (graphics frames and a compute job) on rastra and,
//! when installed, on lavapipe in the same run. One line per workload:
//! `<name> rastra_ms=<median> lavapipe_ms=<median> ratio=<rastra/lavapipe>`. With `--wgpu`,
//! a second line per workload, `<name>/wgpu …`, times rastra running the workload as the
//! same wgpu program lavapipe runs (through `rastra_wgpu`), API translation included.
//! When rastra runs on more than one thread, each workload also runs on one thread and a
//! line `<name> threads=<N> speedup=<1-thread time / N-thread time> rastra_1thread_ms=…`
//! gives the scaling (`--no-scaling` skips it).
//!
//! The timings are taken in interleaved rounds: each round renders the workload on rastra,
//! on lavapipe and on rastra with one thread, each time a warm-up run and then the timed
//! run; a figure is the median over the rounds. A machine whose speed drifts (a shared
//! virtual machine) then slows the runs that are compared with each other alike. Each side
//! keeps one device for the whole bench — lavapipe's wgpu device, rastra's device of N
//! threads and its one-thread device — and makes a workload's resources on it each round,
//! as a program rendering frame after frame does: a round's frames do not pay for a new
//! device's worker threads and their memory being touched for the first time.
//! `--each-round` prints every round's times too (`# <name> round <k>: rastra_ms=<warm-up>,
//! <timed> …`), to see how far they move.

use rastra::{Device, DeviceDescriptor, Queue};
use rastra_lavapipe::Lavapipe;
use rastra_scene::{Frame, median, workloads};

use crate::BenchArgs;

/// The model workload's file (Debian's assimp-testmodels).
const MODEL: &str =
    "/usr/share/assimp/models/glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb";

/// Invocations of the compute workload (issue 3: 4M invocations of 64 dependent FMAs).
const COMPUTE_INVOCATIONS: u32 = 1 << 22;

pub fn run(args: &BenchArgs) -> Result<(), String> {
    let (width, height) = args.size;
    let wanted = |name: &str| args.only.as_deref().is_none_or(|o| name.contains(o));
    let mut frames: Vec<Frame> = Vec::new();
    for name in workloads::REFERENCE_FRAMES {
        if wanted(name)
            && let Some(frame) = workloads::reference_frame(name, width, height)
        {
            frames.push(frame);
        }
    }
    if wanted("model_2cylinderengine") {
        match crate::render::frame_for(MODEL, width, height, 1) {
            Ok(mut f) => {
                f.name = "model_2cylinderengine".into();
                frames.push(f);
            }
            Err(e) => eprintln!("rastra bench: skipping the model workload: {e}"),
        }
    }
    if let Some(clamp) = args.max_anisotropy {
        println!("# every workload sampler's anisotropy clamp set to {clamp}");
        for frame in &mut frames {
            crate::render::set_anisotropy(frame, clamp);
        }
    }
    println!(
        "# rastra's anisotropic samplers blend mip levels {}",
        if args.full_anisotropic_mip_blend {
            "by λ's whole fraction (--full-anisotropic-mip-blend)".to_string()
        } else {
            format!(
                "across the middle {} of a level (the default, narrowed blend)",
                rastra::MipBlend::NARROW_WIDTH
            )
        }
    );
    let lavapipe = if args.no_lavapipe {
        None
    } else {
        match Lavapipe::new() {
            Ok(l) => {
                println!("# lavapipe: {}", l.description());
                println!(
                    "# lavapipe anisotropic filtering: {}",
                    if l.anisotropic() {
                        "yes"
                    } else {
                        "no (its samplers ignore the anisotropy clamp: trilinear)"
                    }
                );
                Some(l)
            }
            Err(e) => {
                println!("# lavapipe not available ({e}); rastra only");
                None
            }
        }
    };
    let device = DeviceDescriptor {
        threads: args.threads,
        anisotropic_mip_blend: crate::mip_blend(args.full_anisotropic_mip_blend),
        pin_workers: !args.no_pin_workers,
        ..DeviceDescriptor::default()
    };
    let threads = device.resolved_threads();
    let rastra_device = Device::new(&device);
    println!(
        "# rastra's workers: {}",
        match rastra_device.0.pinned_cpus() {
            Some(cpus) => format!("each bound to its own CPU ({cpus:?})"),
            None => "placed by the OS".to_string(),
        }
    );
    // The one-thread device of the scaling lines, when there is something to compare.
    let single = (threads > 1 && !args.no_scaling).then(|| {
        Device::new(&DeviceDescriptor {
            threads: Some(1),
            ..device.clone()
        })
    });
    println!(
        "# {width}x{height}, median of {} interleaved rounds (each: a warm-up and a timed run), rastra threads: {threads}, machine threads available: {}",
        args.runs,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let through_wgpu = if args.wgpu {
        println!("# --wgpu: `<name>/wgpu` lines run rastra through rastra_wgpu::instance()");
        Some(rastra_wgpu_device(device.clone())?)
    } else {
        None
    };
    for frame in &frames {
        let name = &frame.name;
        let times = Rounds::measure(
            name,
            args.each_round,
            args.runs,
            |(d, q)| {
                frame
                    .render_on(d, q, 2)
                    .map(|r| r.times_ms)
                    .map_err(|e| e.to_string())
            },
            lavapipe
                .as_ref()
                .map(|l| move || l.render(frame, 2).map(|r| r.times_ms)),
            &rastra_device,
            single.as_ref(),
        )
        .map_err(|e| format!("{name}: {e}"))?;
        times.report(name, threads);
        let reference = times.lavapipe_ms();
        if let Some((device, queue)) = &through_wgpu {
            let ms = rastra_lavapipe::render_on(device, queue, frame, args.runs)
                .map_err(|e| format!("{name} through wgpu: {e}"))?
                .median_ms();
            report(&format!("{name}/wgpu"), ms, reference);
        }
    }
    // (Its input, 16 MiB, is made only when the workload is wanted.)
    if wanted(workloads::FMA_THEN_REDUCE) {
        let compute = workloads::fma_then_reduce(COMPUTE_INVOCATIONS);
        let name = &compute.name;
        let times = Rounds::measure(
            name,
            args.each_round,
            args.runs,
            |(d, q)| {
                compute
                    .run_on(d, q, 2)
                    .map(|r| r.times_ms)
                    .map_err(|e| e.to_string())
            },
            lavapipe
                .as_ref()
                .map(|l| || l.run_compute(&compute, 2).map(|r| r.times_ms)),
            &rastra_device,
            single.as_ref(),
        )
        .map_err(|e| format!("{name}: {e}"))?;
        times.report(name, threads);
        let reference = times.lavapipe_ms();
        if let Some((device, queue)) = &through_wgpu {
            let ms = rastra_lavapipe::run_compute_on(device, queue, &compute, args.runs)
                .map_err(|e| format!("{name} through wgpu: {e}"))?
                .median_ms();
            report(&format!("{name}/wgpu"), ms, reference);
        }
    }
    Ok(())
}

/// A wgpu device on rastra (configured by `config`) with every feature its adapter advertises.
fn rastra_wgpu_device(config: DeviceDescriptor) -> Result<(wgpu::Device, wgpu::Queue), String> {
    let instance = rastra_wgpu::instance_with(config);
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .map_err(|e| format!("rastra's wgpu adapter: {e}"))?;
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("rastra bench"),
        required_features: adapter.features(),
        ..Default::default()
    }))
    .map_err(|e| format!("a wgpu device on rastra: {e}"))
}

/// Prints one workload's scaling line: its one-thread time over its `threads`-thread time.
fn report_scaling(name: &str, threads: usize, one_ms: f64, n_ms: f64) {
    println!(
        "{name} threads={threads} speedup={:.2} rastra_1thread_ms={one_ms:.2}",
        one_ms / n_ms
    );
}

/// Prints one workload's line.
fn report(name: &str, rastra_ms: f64, lavapipe_ms: Option<f64>) {
    match lavapipe_ms {
        Some(l) => println!(
            "{name} rastra_ms={rastra_ms:.2} lavapipe_ms={l:.2} ratio={:.2}",
            rastra_ms / l
        ),
        None => println!("{name} rastra_ms={rastra_ms:.2} lavapipe_ms=n/a ratio=n/a"),
    }
}

/// One workload's timed runs, one per round.
#[derive(Default)]
struct Rounds {
    rastra: Vec<f64>,
    lavapipe: Vec<f64>,
    single: Vec<f64>,
}

impl Rounds {
    /// `runs` rounds of: `rastra` on `device`, `lavapipe` (when given), `rastra` on
    /// `single` (when given) — each returning the times of a warm-up and a timed run. With
    /// `each_round`, a `#` line per round gives those times (workload `name`).
    fn measure(
        name: &str,
        each_round: bool,
        runs: usize,
        rastra: impl Fn(&(Device, Queue)) -> Result<Vec<f64>, String>,
        lavapipe: Option<impl Fn() -> Result<Vec<f64>, String>>,
        device: &(Device, Queue),
        single: Option<&(Device, Queue)>,
    ) -> Result<Rounds, String> {
        let mut times = Rounds::default();
        for round in 0..runs.max(1) {
            let mut line = format!("# {name} round {round}:");
            let mut keep = |side: &str, runs: Vec<f64>, into: &mut Vec<f64>| {
                let all: Vec<String> = runs.iter().map(|t| format!("{t:.2}")).collect();
                line += &format!(" {side}_ms={}", all.join(","));
                into.push(timed(runs));
            };
            keep("rastra", rastra(device)?, &mut times.rastra);
            if let Some(l) = &lavapipe {
                let runs = l().map_err(|e| format!("on lavapipe: {e}"))?;
                keep("lavapipe", runs, &mut times.lavapipe);
            }
            if let Some(single) = single {
                let runs = rastra(single).map_err(|e| format!("on one thread: {e}"))?;
                keep("rastra_1thread", runs, &mut times.single);
            }
            if each_round {
                println!("{line}");
            }
        }
        Ok(times)
    }

    /// lavapipe's median, when it ran.
    fn lavapipe_ms(&self) -> Option<f64> {
        (!self.lavapipe.is_empty()).then(|| median(&self.lavapipe))
    }

    /// Prints the workload's line and, when measured, its scaling line.
    fn report(&self, name: &str, threads: usize) {
        let rastra = median(&self.rastra);
        report(name, rastra, self.lavapipe_ms());
        if !self.single.is_empty() {
            report_scaling(name, threads, median(&self.single), rastra);
        }
    }
}

/// The timed (last) run of a warm-up and a timed run.
fn timed(times_ms: Vec<f64>) -> f64 {
    times_ms.last().copied().unwrap_or(0.0)
}
