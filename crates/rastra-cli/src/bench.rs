//! `rastra bench`: the reference workloads (graphics frames and a compute job) on rastra and,
//! when installed, on lavapipe in the same run. One line per workload:
//! `<name> rastra_ms=<median> lavapipe_ms=<median> ratio=<rastra/lavapipe>`.

use rastra::DeviceDescriptor;
use rastra_scene::{Frame, workloads};

use crate::BenchArgs;

/// The model workload's file (Debian's assimp-testmodels).
const MODEL: &str =
    "/usr/share/assimp/models/glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb";

pub fn run(args: &BenchArgs) -> Result<(), String> {
    let (width, height) = args.size;
    let mut frames: Vec<Frame> = vec![
        workloads::small_triangles(width, height, 200_000),
        workloads::blended_layers(width, height, 32),
    ];
    match crate::render::frame_for(MODEL, width, height, 1) {
        Ok(mut f) => {
            f.name = "model_2cylinderengine".into();
            frames.push(f);
        }
        Err(e) => eprintln!("rastra bench: skipping the model workload: {e}"),
    }
    let lavapipe = if args.no_lavapipe {
        None
    } else {
        match rastra_lavapipe::Lavapipe::new() {
            Ok(l) => {
                println!("# lavapipe: {}", l.description());
                Some(l)
            }
            Err(e) => {
                println!("# lavapipe not available ({e}); rastra only");
                None
            }
        }
    };
    println!(
        "# {width}x{height}, median of {} runs, machine threads available: {}",
        args.runs,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for frame in &frames {
        if args
            .only
            .as_deref()
            .is_some_and(|o| !frame.name.contains(o))
        {
            continue;
        }
        let rastra = frame
            .render(&DeviceDescriptor::default(), args.runs)
            .map_err(|e| format!("{}: {e}", frame.name))?;
        let rastra_ms = rastra.median_ms();
        match &lavapipe {
            Some(l) => {
                let reference = l
                    .render(frame, args.runs)
                    .map_err(|e| format!("{} on lavapipe: {e}", frame.name))?;
                let lavapipe_ms = reference.median_ms();
                println!(
                    "{} rastra_ms={rastra_ms:.2} lavapipe_ms={lavapipe_ms:.2} ratio={:.2}",
                    frame.name,
                    rastra_ms / lavapipe_ms
                );
            }
            None => println!(
                "{} rastra_ms={rastra_ms:.2} lavapipe_ms=n/a ratio=n/a",
                frame.name
            ),
        }
    }
    Ok(())
}
