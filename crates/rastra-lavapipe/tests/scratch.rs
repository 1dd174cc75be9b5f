//! Scratch (to be deleted).
mod common;
use common::*;

#[test]
fn scratch() {
    let lp = lavapipe().unwrap();
    let t = [
        [-0.9873127f32, 0.08679395, 0.5, 1.0],
        [-0.7136235, 0.28106594, 0.5, 1.0],
        [-93669.9, 8280.637, 0.5, 1.0],
    ];
    let v: Vec<Vertex> = t
        .iter()
        .map(|&pos| Vertex {
            pos,
            color: [255; 4],
        })
        .collect();
    let f = frame("one", 64, &v, pipeline(Shading::Flat));
    let b = render_both(&lp, &f);
    for y in 0..64u32 {
        let mut row = String::new();
        for x in 0..64u32 {
            let i = (y * 64 + x) as usize;
            let o = oracle::ideal_covers(&t, oracle::pixel_ndc(64, x, y));
            let r = b.rastra[4 * i] != 0;
            let l = b.lavapipe[4 * i] != 0;
            row.push(match (o, r, l) {
                (false, false, false) => '.',
                (true, true, true) => '#',
                (true, false, true) => 'R',
                (false, true, false) => 'r',
                (_, _, _) => '?',
            });
        }
        if row.contains(|c| c != '.') {
            eprintln!("{y:2} {row}");
        }
    }
}
