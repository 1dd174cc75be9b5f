//! The pixel pipe's early-Z intake for the commonest opaque pipeline in AVX2 (T7 "Early
//! Z/Stencil": a quad's depths computed and tested before shading): one sample per pixel,
//! Depth32Float, compare `Less`, depth written at the test — a block's quads two at a time,
//! 256-bit registers holding both quads' four depths, then each quad on into the pending
//! warp, or held for hidden-surface removal ([`crate::hidden`]) with its passing pixels
//! marked in the tile's owners by masked vector stores.

use super::*;

/// [`push_for_cpu`]'s quads on the commonest early-Z pipeline — one sample per pixel, depth
/// tested and written at the early test by a Depth32Float `Less` unit
/// ([`DepthUnit::is_plain_less`]) — two at a time: both quads' depths
/// ([`depth_at_quad`]'s operations per pixel) and their depth tests (the unit's quad test:
/// clamp to the depth range, `<`, covered pixels only, passing depths merged into the
/// stored ones) side by side in 256-bit registers — the same operations per pixel, so the
/// same bits — then each quad on into the pending warp in order, as [`push_quad`] sends it.
/// A call's quads are at different places (one block's, from the rasterizer), and in this
/// depth mode depth is written here only, so testing a quad before the one ahead of it is
/// shaded changes no result. An odd last quad takes the lower halves alone.
///
/// # Safety
/// The CPU must have AVX2, FMA, POPCNT, BMI1/2 and LZCNT ([`rastra_texture::cpu::wide`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,popcnt,bmi1,bmi2,lzcnt")]
pub(super) unsafe fn push_early_pairs_avx2<'a, 'fb, 's>(
    pipe: &'s mut PixelPipe<'a, 'fb>,
    tri: &'a Triangle,
    attrs: &'a [u32],
    quads: &'s [Quad],
    owners: &'s mut TileOwners,
    budget: &'s mut u64,
    counters: &'s mut Counters,
) -> Result<(), rastra_shader::ExecError> {
    use std::arch::x86_64::*;
    let depth = pipe
        .depth
        .as_ref()
        .expect("depth mode implies a depth target");
    debug_assert!(depth.is_plain_less() && pipe.pattern.count == 1);
    let (surface, layout, [lo, hi]) = (depth.data, depth.layout, depth.range);
    let sample_mask = (pipe.pipeline.desc.multisample.mask as u8 as u32) * 0x0101_0101;
    let p = &tri.planes;
    let [ox, oy] = pipe.pattern.offsets[0];
    let one = 1i32 << SUBPIXEL_BITS;
    let (z0, dzdx, dzdy) = (
        _mm256_set1_ps(tri.z[0]),
        _mm256_set1_ps(p.z[0]),
        _mm256_set1_ps(p.z[1]),
    );
    let (lo, hi) = (_mm256_set1_ps(lo), _mm256_set1_ps(hi));
    // Pixel i of each quad: (i & 1, i >> 1), its coverage in byte i.
    let step_x = _mm256_setr_epi32(0, one, 0, one, 0, one, 0, one);
    let step_y = _mm256_setr_epi32(0, 0, one, one, 0, 0, one, one);
    let lane = _mm256_setr_epi32(1, 1 << 8, 1 << 16, 1 << 24, 1, 1 << 8, 1 << 16, 1 << 24);
    // A quad's top-left pixel's offset from the plane's origin (32 bits, as
    // `depth_at_quad` has it).
    let offset = |q: &Quad| {
        let dx = ((q.x as Fixed) << SUBPIXEL_BITS) + ox - p.origin[0];
        let dy = ((q.y as Fixed) << SUBPIXEL_BITS) + oy - p.origin[1];
        debug_assert!(
            [dx, dy, dx + one as Fixed, dy + one as Fixed]
                .iter()
                .all(|&v| i32::try_from(v).is_ok())
        );
        [dx as i32, dy as i32]
    };
    // The quads are one block's (the rasterizer hands a block over at a time), and a block
    // is one of the surfaces' 8×8 tiles: the tile's place and bytes are found (and checked
    // against the surface) once, each quad's by its Morton offset inside the tile.
    let Some(first) = quads.first() else {
        return Ok(());
    };
    let block = (first.x & !(BLOCK_SIZE - 1), first.y & !(BLOCK_SIZE - 1));
    let tile = tiled_element(pipe.tiles_x, block.0, block.1);
    let tile_bytes = surface.range_ptr(
        layout.element_offset(tile),
        (BLOCK_SIZE * BLOCK_SIZE) as usize * layout.pixel_bytes,
    );
    // A quad's place inside the tile (its top-left pixel's; the quad is the four from it).
    let place = |q: &Quad| {
        debug_assert_eq!(
            (q.x & !(BLOCK_SIZE - 1), q.y & !(BLOCK_SIZE - 1)),
            block,
            "one block's quads"
        );
        // (A quad's corner is at even coordinates, so its place is a multiple of four, at
        // most 60; the mask keeps that true whatever a caller passes, and with it every
        // quad's 16 bytes inside the tile checked above — 4-byte depths.)
        morton8(q.x, q.y) as usize & 0x3c
    };
    assert!(layout.pixel_bytes >= 4, "a quad's depths are 16 bytes");
    let texels_at = |place: usize| {
        tile_bytes
            .wrapping_add(place * layout.pixel_bytes)
            .cast::<f32>()
    };
    // A holding pipe marks the pixels each quad passed as the quad's in the tile's owners
    // (the block's words at the same Morton places as its depths), numbering the quads
    // that passed some pixel in order.
    let holds = pipe.holds;
    let mut number = *owners.numbers();
    let owned = owners
        .block_mut(TileOwners::block_base(block.0, block.1))
        .as_mut_ptr();
    let mut k = 0;
    while k + 1 < quads.len() {
        let pair = [quads[k], quads[k + 1]];
        let coverage = pair.map(|q| u32::from_le_bytes(q.coverage) & sample_mask);
        let places = pair.map(|q| place(&q));
        debug_assert_ne!(
            places[0], places[1],
            "a pair's quads are at different places"
        );
        let elements = places.map(|p| tile + p);
        let texels = places.map(texels_at);
        let [[x0, y0], [x1, y1]] = pair.map(|q| offset(&q));
        let dx = _mm256_add_epi32(_mm256_setr_epi32(x0, x0, x0, x0, x1, x1, x1, x1), step_x);
        let dy = _mm256_add_epi32(_mm256_setr_epi32(y0, y0, y0, y0, y1, y1, y1, y1), step_y);
        let z = _mm256_add_ps(
            _mm256_add_ps(z0, _mm256_mul_ps(dzdx, _mm256_cvtepi32_ps(dx))),
            _mm256_mul_ps(dzdy, _mm256_cvtepi32_ps(dy)),
        );
        let new = _mm256_min_ps(hi, _mm256_max_ps(lo, z));
        let [c0, c1] = coverage.map(|c| c as i32);
        let cov = _mm256_setr_epi32(c0, c0, c0, c0, c1, c1, c1, c1);
        let covered = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(cov, lane), lane));
        // SAFETY: each pointer is its quad's 16 bytes, in the surface (`quad_ptr` checks)
        // and in the tile this worker owns (SharedSurface invariant); the two quads are at
        // different places, and no reference to their bytes is live.
        let (bits, pass) = unsafe {
            let old = _mm256_loadu2_m128(texels[1], texels[0]);
            let pass = _mm256_and_ps(_mm256_cmp_ps::<_CMP_LT_OS>(new, old), covered);
            // Stored even when no pixel passed (the same bytes back), as the quad test does.
            _mm256_storeu2_m128(texels[1], texels[0], _mm256_blendv_ps(old, new, pass));
            (_mm256_movemask_ps(pass) as u32, _mm256_castps_si256(pass))
        };
        if bits != 0
            && let Some(d) = pipe.depth.as_mut()
        {
            d.wrote = true;
        }
        let numbers = [number, number + (bits & 0xf != 0) as u32];
        if holds {
            number = numbers[1] + (bits >> 4 != 0) as u32;
            // SAFETY: each quad's four words at its place (a multiple of four, at most 60)
            // in the block's 64; a quad with no passing pixel stores nothing.
            unsafe {
                _mm_maskstore_epi32(
                    owned.add(places[0]).cast(),
                    _mm256_castsi256_si128(pass),
                    _mm_set1_epi32(numbers[0] as i32),
                );
                _mm_maskstore_epi32(
                    owned.add(places[1]).cast(),
                    _mm256_extracti128_si256::<1>(pass),
                    _mm_set1_epi32(numbers[1] as i32),
                );
            }
        }
        for i in 0..2 {
            // Bit i of the quad's four to bit 0 of byte i (as the quad test does).
            let pass = ((bits >> (4 * i)) & 0xf).wrapping_mul(0x0020_4081) & 0x0101_0101;
            let q = &pair[i];
            early_z_passed(
                pipe,
                tri,
                attrs,
                q,
                coverage[i],
                pass,
                elements[i],
                numbers[i],
                budget,
                counters,
            )?;
        }
        k += 2;
    }
    // An odd last quad: the same in the lower halves.
    if let Some(q) = quads.get(k) {
        let coverage = u32::from_le_bytes(q.coverage) & sample_mask;
        let element = tile + place(q);
        let texels = texels_at(element - tile);
        let [dx, dy] = offset(q);
        let low = _mm256_castps256_ps128;
        let dx = _mm_add_epi32(_mm_set1_epi32(dx), _mm256_castsi256_si128(step_x));
        let dy = _mm_add_epi32(_mm_set1_epi32(dy), _mm256_castsi256_si128(step_y));
        let z = _mm_add_ps(
            _mm_add_ps(low(z0), _mm_mul_ps(low(dzdx), _mm_cvtepi32_ps(dx))),
            _mm_mul_ps(low(dzdy), _mm_cvtepi32_ps(dy)),
        );
        let new = _mm_min_ps(low(hi), _mm_max_ps(low(lo), z));
        let lane = _mm256_castsi256_si128(lane);
        let cov = _mm_set1_epi32(coverage as i32);
        let covered = _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_and_si128(cov, lane), lane));
        // SAFETY: the quad's 16 bytes, as for a pair.
        let (bits, pass) = unsafe {
            let old = _mm_loadu_ps(texels);
            let pass = _mm_and_ps(_mm_cmplt_ps(new, old), covered);
            _mm_storeu_ps(texels, _mm_blendv_ps(old, new, pass));
            (_mm_movemask_ps(pass) as u32, _mm_castps_si128(pass))
        };
        if bits != 0
            && let Some(d) = pipe.depth.as_mut()
        {
            d.wrote = true;
        }
        let quad_number = number;
        if holds {
            number += (bits != 0) as u32;
            // SAFETY: the quad's four words in the block's, as for a pair.
            unsafe {
                let at = owned.add(element - tile).cast();
                _mm_maskstore_epi32(at, pass, _mm_set1_epi32(quad_number as i32));
            }
        }
        let pass = bits.wrapping_mul(0x0020_4081) & 0x0101_0101;
        early_z_passed(
            pipe,
            tri,
            attrs,
            q,
            coverage,
            pass,
            element,
            quad_number,
            budget,
            counters,
        )?;
    }
    *owners.numbers() = number;
    Ok(())
}

/// The end of a quad's early Z in [`push_early_pairs_avx2`], as [`push_quad`] ends it: its
/// samples counted (killed, depth written), then, if any passed, the quad on into the
/// pending warp with its passing pixels (`pass`, bit 0 of byte i for pixel i) — or held as
/// quad `number` by a holding pipe (the caller marked its pixels), or, with no fragment
/// shader, its passing samples counted for occlusion queries.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn early_z_passed<'a, 'fb, 's>(
    pipe: &'s mut PixelPipe<'a, 'fb>,
    tri: &'a Triangle,
    attrs: &'a [u32],
    q: &Quad,
    coverage: u32,
    pass: u32,
    element: usize,
    number: u32,
    budget: &'s mut u64,
    counters: &'s mut Counters,
) -> Result<(), rastra_shader::ExecError> {
    let (before, after) = (coverage.count_ones(), pass.count_ones());
    counters.early_z_killed += (before - after) as u64;
    counters.depth_samples_written += after as u64;
    if pass == 0 {
        return Ok(());
    }
    if pipe.warp.is_none() {
        pipe.samples_passed += after as u64;
        return Ok(());
    }
    let quad = Quad {
        x: q.x,
        y: q.y,
        coverage: pass.to_le_bytes(),
    };
    let pending = Pending {
        tri,
        attrs,
        quad,
        element: element as u32,
        raster: coverage.to_le_bytes(),
        number,
    };
    if pipe.holds {
        pipe.held.push(pending);
        return Ok(());
    }
    enqueue(pipe, pending, budget, counters)
}
