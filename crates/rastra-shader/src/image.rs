//! The shader core's storage-image port: `textureLoad`, `textureStore` and the size
//! queries of storage textures, executed lane by lane (no quads: storage accesses take no
//! derivatives) straight against texture memory ([`rastra_texture::StorageImage`]).
//! Stores are side effects, so only lanes allowed side effects store, in lane order, like
//! buffer stores. An image the pipeline did not supply reads zeros and drops stores — API
//! validation keeps that from happening.

use crate::Resources;
use crate::ir::{ImageInst, ImageOp, Reg};

/// What one lane's instruction writes back: `words` results from register `dst` on.
pub(crate) struct LaneResult {
    pub dst: Reg,
    pub values: [u32; 4],
    pub words: usize,
}

/// Runs `inst` for one lane whose registers `get` reads; `effects` says whether the lane
/// may store. Returns the registers to write, if the instruction writes any.
pub(crate) fn run_lane(
    inst: &ImageInst,
    res: &Resources,
    get: impl Fn(Reg) -> u32,
    effects: bool,
) -> Option<LaneResult> {
    let image = res.images.get(inst.image as usize);
    let coords = |first: Reg, count: u32, layer: Option<Reg>| -> [i32; 3] {
        let mut c = [0i32; 3];
        for (k, v) in c.iter_mut().enumerate().take(count.min(3) as usize) {
            *v = get(first.offset(k as u32)) as i32;
        }
        if let Some(l) = layer {
            c[2] = get(l) as i32;
        }
        c
    };
    match inst.op {
        ImageOp::Load {
            dst,
            coords: first,
            coord_count,
            layer,
        } => {
            let [x, y, z] = coords(first, coord_count, layer);
            let values = image.map_or([0; 4], |i| i.load(x, y, z));
            Some(LaneResult {
                dst,
                values,
                words: 4,
            })
        }
        ImageOp::Store {
            coords: first,
            coord_count,
            layer,
            value,
        } => {
            if effects && let Some(i) = image {
                let [x, y, z] = coords(first, coord_count, layer);
                let v = std::array::from_fn(|k| get(value.offset(k as u32)));
                i.store(x, y, z, v);
            }
            None
        }
        ImageOp::Size { dst, components } => {
            let size = image.map_or([0; 3], |i| i.layout.size());
            Some(LaneResult {
                dst,
                values: [size[0], size[1], size[2], 0],
                words: components.min(3) as usize,
            })
        }
        ImageOp::NumLayers { dst } => Some(LaneResult {
            dst,
            values: [image.map_or(0, |i| i.layout.size()[2]), 0, 0, 0],
            words: 1,
        }),
    }
}

/// Runs `inst` for the lanes in `mask` (stores only for those in `effects`), in lane
/// order.
pub(crate) fn execute(
    regs: &mut [[u32; crate::WARP_LANES]],
    inst: &ImageInst,
    mask: crate::Mask,
    effects: crate::Mask,
    res: &Resources,
) {
    for l in (0..crate::WARP_LANES).filter(|l| mask >> l & 1 != 0) {
        let out = run_lane(inst, res, |r| regs[r.0 as usize][l], effects >> l & 1 != 0);
        if let Some(out) = out {
            for (k, v) in out.values[..out.words].iter().enumerate() {
                regs[out.dst.0 as usize + k][l] = *v;
            }
        }
    }
}
