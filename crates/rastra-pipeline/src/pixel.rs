//! Pixel processing (T8 "Going wide", "helper pixels", T7 early/late Z, T9 join): quads from
//! the rasterizer go through the early depth test, are packed into warps of
//! `WARP_LANES / 4` quads, shaded on the shader cores with every lane of a quad active
//! (uncovered pixels run as helper lanes so derivatives exist), then pass the late depth test
//! and the output merger — lane by lane in the order the quads arrived, which is API order.
//! A whole 8×8 block with nothing to test (no depth test, one sample kept per pixel) and no
//! pending quad inside it is exactly `4 / ROWS_PER_WARP` such warps, rows of quads each: they
//! are shaded straight from the block ([`shade_rows_for_cpu`]) with the same lanes and
//! operations, without gathering the quads one by one, ahead of the pending quads (which
//! cover other pixels, so no pixel's writes change order).
//!
//! Ordering invariant: with [`DepthMode::EarlyTestLateWrite`] a quad is tested before
//! shading but its depth is written after; a warp therefore never holds two quads at the
//! same position (the pending warp is flushed first), so a later quad's early test always
//! sees the earlier quad's depth write (T7's early/late write race).

use rastra_shader::{Interpolation, Mask, Resources, Sampling, WARP_LANES, Warp, lane_mask};
use rastra_stats::Counters;
use rastra_texture::{CacheConfig, TextureUnit, morton8, tiled_element};

use crate::depth::DepthUnit;
use crate::hidden::{MAX_SAMPLES, TileOwners};
use crate::interpolate::{
    ROWS_PER_WARP, WarpPoints, WarpWeights, depth_at, depth_at_quad, interpolate_lanes,
    interpolate_quads,
};
use crate::link::{DepthMode, RenderPipeline};
use crate::memory::{SharedSurface, SurfaceLayout};
use crate::output_merger::{QuadColors, Rop};
use crate::raster::BLOCK_SIZE;
use crate::raster::{BLOCK_QUADS, Quad, Rasterized, SamplePattern};
use crate::setup::{Fixed, SUBPIXEL_BITS, Triangle};
use crate::state::Viewport;

#[cfg(target_arch = "x86_64")]
mod early_pairs;
#[cfg(target_arch = "x86_64")]
use early_pairs::push_early_pairs_avx2;

const QUADS_PER_WARP: usize = WARP_LANES / 4;

/// For a warp of a block's rows (`shade_rows_for_cpu`), pair `k` of its quads (quads 2k and
/// 2k + 1, side by side): where the pair's first quad lies in the 8×8 Morton tile, in quads
/// from the warp's first. Quad (qx, qy) of the rows (2 bits each) is Morton quad
/// qx₀ + 2 qy₀ + 4 qx₁ + 8 qy₁, and quad 2k is (2 (k mod 2), ⌊k / 2⌋).
const ROW_PAIR_QUADS: [usize; QUADS_PER_WARP / 2] = {
    let mut u = [0; QUADS_PER_WARP / 2];
    let mut k = 0;
    while k < u.len() {
        u[k] = ((k >> 1) & 1) << 1 | (k & 1) << 2 | (k >> 2) << 3;
        k += 1;
    }
    u
};

/// A quad waiting for a warp.
#[derive(Clone, Copy)]
struct Pending<'a> {
    tri: &'a Triangle,
    /// The varying words of the triangle's three vertices.
    attrs: &'a [u32],
    /// The quad with its live coverage: samples that survived the early depth test.
    quad: Quad,
    /// The quad's top-left pixel's place in the attachments' tiled order
    /// ([`rastra_texture::tiled_element`]), found once for the depth and colour targets.
    element: u32,
    /// The rasterizer's coverage (after the sample mask, before any depth test): what
    /// `@builtin(sample_mask)` and centroid sampling see, since early Z must be invisible to
    /// the shader.
    raster: [u8; 4],
    /// A held quad's number in the tile's [`TileOwners`] (0 for a quad that is not held).
    number: u32,
}

/// A colour target as the output merger sees it.
pub struct ColorSurface<'fb> {
    pub rop: Rop,
    pub data: &'fb SharedSurface<'fb>,
    pub layout: SurfaceLayout,
}

/// The pixel pipeline of one draw: early Z, pixel shading, late Z, output merger.
pub struct PixelPipe<'a, 'fb> {
    pub pipeline: &'a RenderPipeline,
    pub resources: Resources<'a>,
    pub pattern: SamplePattern,
    pub viewport: Viewport,
    pub width: u32,
    /// The attachments' width in 8×8 memory tiles (they are one size: validated when the
    /// pass begins).
    tiles_x: u32,
    pub colors: Vec<Option<ColorSurface<'fb>>>,
    pub depth: Option<DepthUnit<'fb>>,
    pub warp: Option<Warp>,
    /// The texture unit of the shader core this pipe's warps run on.
    pub unit: TextureUnit,
    /// Samples that passed every per-sample test (scissor, sample mask, depth, the
    /// shader's discard) — the occlusion-query counter, a result the API reads back, not a
    /// statistic.
    pub samples_passed: u64,
    pending: Vec<Pending<'a>>,
    /// Per pending quad, the depth of each sample of each pixel — kept only for the depth
    /// modes that test or write depth after shading ([`DepthMode::Late`],
    /// [`DepthMode::EarlyTestLateWrite`]); the others finish with depth at intake, and
    /// copying 64 bytes per quad for nothing was a third of a pending quad's size.
    pending_z: [[[f32; 4]; 4]; QUADS_PER_WARP],
    /// Whether a whole block with no pending quad inside it is shaded as its four rows of
    /// four quads, [`ROWS_PER_WARP`] to a warp, straight from the block
    /// ([`shade_rows_for_cpu`]): no depth test, one sample per pixel kept by the sample
    /// mask, no shader depth.
    block_rows: bool,
    /// The pending warp's shading points and their weights, kept between warps (every
    /// lane a warp uses is written before it is read).
    center: WarpPoints,
    center_weights: WarpWeights,
    /// Whether an input is interpolated linearly (`@interpolate(linear)`): only then are the
    /// screen-space weights computed.
    linear_weights: bool,
    /// The attribute words of the constant triangle whose values the warp's input
    /// registers hold in every lane ([`shade_rows_for_cpu`] gave them, the shader keeps
    /// them: `RenderPipeline::varyings_kept`), or `None`: the next warp of a constant
    /// triangle with the same words needs no inputs written.
    kept_inputs: Option<Vec<u32>>,
    /// Whether quads take [`push_early_pairs_avx2`]: the CPU has AVX2
    /// ([`rastra_texture::cpu::wide`]) and the pipeline is the commonest early-Z one (one
    /// sample, depth tested and written at intake by a [`DepthUnit::is_plain_less`] unit).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    early_pairs: bool,
    /// Whether quads that pass early Z are held for hidden-surface removal
    /// ([`crate::hidden`]) rather than shaded: see [`PixelPipe::holds`].
    holds: bool,
    /// The held quads, in API order, until [`PixelPipe::release_held`].
    held: Vec<Pending<'a>>,
}

impl<'a, 'fb> PixelPipe<'a, 'fb> {
    /// `remove_hidden`: the device removes hidden surfaces and the pipeline has a target
    /// state for every colour surface of the framebuffer (`colors` has a `None` only where
    /// the framebuffer has no surface). Whether this pipe then holds its quads is decided
    /// here ([`PixelPipe::holds`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        pipeline: &'a RenderPipeline,
        resources: Resources<'a>,
        viewport: Viewport,
        width: u32,
        colors: Vec<Option<ColorSurface<'fb>>>,
        depth: Option<DepthUnit<'fb>>,
        texel_cache: CacheConfig,
        remove_hidden: bool,
    ) -> Self {
        let pattern = SamplePattern::for_count(pipeline.samples());
        let full = pattern.full_mask();
        let block_rows = pipeline.desc.fragment.is_some()
            && pipeline.depth_mode == DepthMode::Off
            && pattern.count == 1
            && pipeline.desc.multisample.mask as u8 & full == full
            && pipeline.frag_depth_reg.is_none();
        let mut layouts = colors
            .iter()
            .flatten()
            .map(|c| c.layout)
            .chain(depth.as_ref().map(|d| d.layout));
        let tiles_x = layouts.next().map_or(0, |l| l.tiles_x);
        let early_pairs = cfg!(target_arch = "x86_64")
            && rastra_texture::cpu::wide()
            && pipeline.depth_mode == DepthMode::EarlyTestWrite
            && pattern.count == 1
            && depth.as_ref().is_some_and(|d| d.is_plain_less());
        assert!(
            layouts.all(|l| l.tiles_x == tiles_x),
            "a pass's attachments are one size (validated when it begins)"
        );
        // A held quad's sample is dropped where a later held quad passed depth, so every
        // held quad must write every channel of every colour surface, with nothing but its
        // outputs (which depend on its own quad only), and keep each sample it passed early
        // Z at.
        let holds = remove_hidden
            && pipeline
                .desc
                .fragment
                .as_deref()
                .is_some_and(|f| !f.uses_discard && f.is_quad_local())
            && pipeline.depth_mode == DepthMode::EarlyTestWrite
            && pipeline.frag_depth_reg.is_none()
            && pattern.count as usize <= MAX_SAMPLES
            && depth.as_ref().is_some_and(|d| d.write_enabled)
            && colors.iter().enumerate().all(|(k, c)| {
                c.as_ref().is_none_or(|c| {
                    c.rop.replaces() && pipeline.color_outputs.iter().any(|o| o.target == k)
                })
            });
        PixelPipe {
            pipeline,
            resources,
            pattern,
            viewport,
            width,
            tiles_x,
            colors,
            depth,
            warp: pipeline.desc.fragment.as_deref().map(Warp::new),
            unit: TextureUnit::with_shared_l2(texel_cache),
            samples_passed: 0,
            pending: Vec::with_capacity(QUADS_PER_WARP),
            pending_z: [[[0.0; 4]; 4]; QUADS_PER_WARP],
            block_rows,
            center: WarpPoints::default(),
            center_weights: WarpWeights::default(),
            linear_weights: pipeline
                .varyings
                .iter()
                .any(|v| v.interpolation == Interpolation::Linear),
            kept_inputs: None,
            early_pairs,
            holds,
            held: Vec::new(),
        }
    }

    /// Whether this pipe holds the quads that pass early Z for hidden-surface removal
    /// ([`crate::hidden`]) instead of shading them at once: the device removes hidden
    /// surfaces, depth is tested and written before shading (no discard, no shader depth),
    /// every colour surface of the framebuffer is replaced whole
    /// by a shader output (no blending, every channel written), and the fragment program
    /// has no effect but its outputs ([`rastra_shader::Program::is_quad_local`]).
    pub fn holds(&self) -> bool {
        self.holds
    }

    /// Drops the held quads unshaded (their tile failed).
    pub fn abandon_held(&mut self) {
        self.held.clear();
    }

    /// Whether quads are held, waiting for [`PixelPipe::release_held`].
    pub fn is_holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// Shades the held quads, in the order they were held, each with only the samples it
    /// still owns in `owners` (the others are overwritten by later held quads, of this pipe
    /// or a later one): a pixel left with none is a helper lane, a quad left with none is
    /// not shaded. The samples left out passed every test: they count for occlusion
    /// queries.
    pub fn release_held(
        &mut self,
        owners: &TileOwners,
        budget: &mut u64,
        counters: &mut Counters,
    ) -> Result<(), rastra_shader::ExecError> {
        debug_assert!(
            self.pending.is_empty(),
            "a holding pipe queues nothing else"
        );
        let mut held = std::mem::take(&mut self.held);
        let samples = self.pattern.count as usize;
        // The quads that still own samples, moved down in place with only those samples;
        // the samples and the pixels (every sample gone) left out. (The loop made for one
        // sample per pixel, the usual pattern, and for any.)
        let (kept_quads, removed, removed_pixels) = if samples == 1 {
            keep_owned::<true>(&mut held, owners, 1)
        } else {
            keep_owned::<false>(&mut held, owners, samples)
        };
        counters.hidden_pixels_removed += removed_pixels as u64;
        counters.hidden_quads_removed += (held.len() - kept_quads) as u64;
        self.samples_passed += removed as u64;
        let mut result = Ok(());
        for warp in held[..kept_quads].chunks(QUADS_PER_WARP) {
            // Shaded where they are (as the pending warp would be).
            result = flush_for_cpu(self, warp, budget, counters);
            if result.is_err() {
                break;
            }
        }
        held.clear();
        self.held = held;
        result
    }

    /// Takes rasterized quads of triangle `tri`, whose vertices' varying words are `attrs`,
    /// in order: a partly covered block's quads in one call, not a call per quad. A call's
    /// quads are one 8×8 block's (the early-Z pair path finds the block's place once).
    /// `owners` is the tile's, for a pipe that [holds](PixelPipe::holds) its quads.
    #[inline(always)]
    pub fn push(
        &mut self,
        tri: &'a Triangle,
        attrs: &'a [u32],
        quads: &[Quad],
        owners: &mut TileOwners,
        budget: &mut u64,
        counters: &mut Counters,
    ) -> Result<(), rastra_shader::ExecError> {
        #[cfg(target_arch = "x86_64")]
        if self.early_pairs {
            // SAFETY: `early_pairs` holds only when the CPU has the features it is compiled
            // for, and the pipeline is the one it serves.
            return unsafe {
                push_early_pairs_avx2(self, tri, attrs, quads, owners, budget, counters)
            };
        }
        push_for_cpu(self, tri, attrs, quads, owners, budget, counters)
    }

    /// Takes the whole 8×8 block at pixel (bx, by) of triangle `tri`, every sample covered:
    /// its sixteen quads in raster order, as [`PixelPipe::push`] would take them one by one.
    /// With no depth test and every sample kept by the sample mask, a quad goes straight
    /// into the pending warp (nothing of `push` would change it).
    #[allow(clippy::too_many_arguments)]
    pub fn push_block(
        &mut self,
        tri: &'a Triangle,
        attrs: &'a [u32],
        bx: u32,
        by: u32,
        owners: &mut TileOwners,
        budget: &mut u64,
        counters: &mut Counters,
    ) -> Result<(), rastra_shader::ExecError> {
        // Quads pending from partly covered blocks stay pending unless one lies in this
        // block (its pixels must then reach the output merger first): the block's pixels are
        // others, so shading them ahead changes no pixel's order of writes. Waiting for the
        // pending warp to empty instead sent every later block of the tile down the
        // quad-by-quad path (a quarter of blended_layers' pixels).
        let overlaps = || {
            self.pending
                .iter()
                .any(|p| (p.quad.x & !(BLOCK_SIZE - 1), p.quad.y & !(BLOCK_SIZE - 1)) == (bx, by))
        };
        if self.block_rows && !overlaps() {
            // The block's warps are its rows of quads, `ROWS_PER_WARP` each, as below.
            for row in (0..4).step_by(ROWS_PER_WARP) {
                shade_rows_for_cpu(self, tri, attrs, bx, by + 2 * row as u32, budget, counters)?;
            }
            return Ok(());
        }
        let full = self.pattern.full_mask();
        let direct = self.warp.is_some()
            && self.pipeline.depth_mode == DepthMode::Off
            && self.pipeline.desc.multisample.mask as u8 & full == full;
        let mut result = Ok(());
        let pattern = self.pattern;
        if !direct {
            // The block's quads through early Z together, in order.
            let mut quads = [Quad::NONE; BLOCK_QUADS];
            let mut n = 0;
            Rasterized::Block { x: bx, y: by }.for_each_quad(&pattern, |quad| {
                quads[n] = quad;
                n += 1;
            });
            return self.push(tri, attrs, &quads[..n], owners, budget, counters);
        }
        Rasterized::Block { x: bx, y: by }.for_each_quad(&pattern, |quad| {
            if result.is_err() {
                return;
            }
            self.pending.push(Pending {
                tri,
                attrs,
                quad,
                element: tiled_element(self.tiles_x, quad.x, quad.y) as u32,
                raster: quad.coverage,
                number: 0,
            });
            if self.pending.len() == QUADS_PER_WARP {
                result = self.flush(budget, counters);
            }
        });
        result
    }

    /// Shades the pending quads and sends their results through late Z and the output merger.
    /// (The work is [`flush_for_cpu`], compiled for the baseline and for AVX2.)
    pub fn flush(
        &mut self,
        budget: &mut u64,
        counters: &mut Counters,
    ) -> Result<(), rastra_shader::ExecError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut pending = std::mem::take(&mut self.pending);
        let result = flush_for_cpu(self, &pending, budget, counters);
        pending.clear();
        self.pending = pending;
        result
    }
}

/// [`PixelPipe::release_held`]'s filter: each held quad's coverage cut to the samples it
/// still owns in `owners`, the quads left with any moved down in place, in order. Returns
/// how many quads are left, and the samples and the pixels (every sample gone) left out.
/// `ONE_SAMPLE`: one sample per pixel (`samples` is 1), as a constant.
#[inline(always)]
fn keep_owned<const ONE_SAMPLE: bool>(
    held: &mut [Pending<'_>],
    owners: &TileOwners,
    samples: usize,
) -> (usize, u32, u32) {
    debug_assert!(!ONE_SAMPLE || samples == 1);
    let (mut kept_quads, mut removed, mut removed_pixels) = (0, 0u32, 0u32);
    for i in 0..held.len() {
        let h = &held[i];
        let passed = u32::from_le_bytes(h.quad.coverage);
        let place = TileOwners::block_base(h.quad.x, h.quad.y) + (h.element & 0x3c) as usize;
        let kept = if ONE_SAMPLE {
            let kept = owners.still_owned(place, h.number, passed);
            // (One sample per pixel: a passing pixel's byte is 1, so the multiply's top
            // byte sums them.)
            let gone = (passed & !kept).wrapping_mul(0x0101_0101) >> 24;
            removed += gone;
            removed_pixels += gone;
            kept
        } else {
            let kept = owners.samples_still_owned(place, h.number, passed, samples);
            removed += (passed & !kept).count_ones();
            removed_pixels += uncovered_pixels(kept.to_le_bytes()).count_ones()
                - uncovered_pixels(passed.to_le_bytes()).count_ones();
            kept
        };
        // (Most quads keep every pixel and stay where they are.)
        if kept != passed || kept_quads != i {
            let mut moved = *h;
            moved.quad.coverage = kept.to_le_bytes();
            held[kept_quads] = moved;
        }
        kept_quads += (kept != 0) as usize;
    }
    (kept_quads, removed, removed_pixels)
}

/// The pixels of a quad with no covered sample, as bits 0–3 (a helper lane each): the
/// coverage bytes tested all at once — a byte's high bit set when it is not zero (its low
/// seven bits plus 0x7f carry into bit 7 unless they are all 0; or its own bit 7), then
/// the four high bits gathered by one multiply into bits 28–31 (the partial products land
/// on distinct bits, so nothing carries into them).
#[inline(always)]
fn uncovered_pixels(coverage: [u8; 4]) -> u32 {
    let w = u32::from_le_bytes(coverage);
    let nonzero = (((w & 0x7f7f_7f7f) + 0x7f7f_7f7f) | w) & 0x8080_8080;
    let covered = (nonzero >> 7).wrapping_mul(0x1020_4080) >> 28;
    !covered & 0xf
}

rastra_texture::multiversion! {
/// [`PixelPipe::push`]: each quad through [`push_quad`], compiled for the baseline and for
/// AVX2 (the same bits).
fn push_for_cpu<'a, 'fb, 's>(
    pipe: &'s mut PixelPipe<'a, 'fb>,
    tri: &'a Triangle,
    attrs: &'a [u32],
    quads: &'s [Quad],
    owners: &'s mut TileOwners,
    budget: &'s mut u64,
    counters: &'s mut Counters,
) -> Result<(), rastra_shader::ExecError> {
    // The loop made for the pipeline's depth mode, sample count and depth unit, the usual
    // ones written out as constants so each quad's path has no test of them: one sample
    // per pixel with no depth, or with early test-and-write (most opaque pipelines) on the
    // commonest depth unit or any other.
    macro_rules! quads_with {
        ($mode:expr, $single:expr, $plain_less:expr) => {
            for q in quads {
                let coverage = u32::from_le_bytes(q.coverage);
                let kind = ($mode, $single, $plain_less);
                push_quad(pipe, tri, attrs, q.x, q.y, coverage, kind, owners, budget, counters)?;
            }
        };
    }
    let single = pipe.pattern.count == 1;
    let plain_less = pipe.depth.as_ref().is_some_and(|d| d.is_plain_less());
    match (pipe.pipeline.depth_mode, single, plain_less) {
        (DepthMode::Off, true, _) => quads_with!(DepthMode::Off, true, false),
        (DepthMode::EarlyTestWrite, true, true) => {
            quads_with!(DepthMode::EarlyTestWrite, true, true)
        }
        (DepthMode::EarlyTestWrite, true, false) => {
            quads_with!(DepthMode::EarlyTestWrite, true, false)
        }
        (mode, single, _) => quads_with!(mode, single, false),
    }
    Ok(())
}
}

/// One quad of [`PixelPipe::push`]: the quad at pixel (x, y) with coverage bytes `coverage`
/// (pixel `i` in byte `i`) through early Z into the pending warp. `kind` is the pipeline's
/// depth mode, whether its pattern has one sample, and whether its depth unit is of the
/// commonest kind (`DepthUnit::is_plain_less`) — given by the caller, which makes them
/// constants where it can.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn push_quad<'a, 'fb, 's>(
    pipe: &'s mut PixelPipe<'a, 'fb>,
    tri: &'a Triangle,
    attrs: &'a [u32],
    x: u32,
    y: u32,
    coverage: u32,
    (mode, single_sample, plain_less): (DepthMode, bool, bool),
    owners: &'s mut TileOwners,
    budget: &'s mut u64,
    counters: &'s mut Counters,
) -> Result<(), rastra_shader::ExecError> {
    debug_assert_eq!(
        (mode, single_sample),
        (pipe.pipeline.depth_mode, pipe.pattern.count == 1)
    );
    debug_assert!(!plain_less || pipe.depth.as_ref().is_some_and(|d| d.is_plain_less()));
    let mut quad = Quad {
        x,
        y,
        coverage: coverage.to_le_bytes(),
    };
    // The multisample state's sample mask removes samples before any test (all four
    // pixels at once, as one word: bytes written one by one and then compared as a
    // word stall the store buffer).
    let sample_mask = (pipe.pipeline.desc.multisample.mask as u8 as u32) * 0x0101_0101;
    let coverage = u32::from_le_bytes(quad.coverage) & sample_mask;
    if coverage == 0 {
        return Ok(());
    }
    quad.coverage = coverage.to_le_bytes();
    let element = tiled_element(pipe.tiles_x, x, y);
    if mode == DepthMode::EarlyTestLateWrite
        && pipe
            .pending
            .iter()
            .any(|p| p.quad.x == quad.x && p.quad.y == quad.y)
    {
        pipe.flush(budget, counters)?;
    }
    let raster = quad.coverage;
    let t = tri;
    let mut z = [[0.0f32; 4]; 4];
    // One sample per pixel: the quad's four depths at once (uncovered pixels' depths are
    // never read), tested as values.
    let single = (mode != DepthMode::Off && single_sample)
        .then(|| depth_at_quad(t, quad.x, quad.y, pipe.pattern.offsets[0]));
    if single.is_none() && mode != DepthMode::Off {
        for i in 0..4 {
            let cov = quad.coverage[i];
            if cov == 0 {
                continue;
            }
            let px = (quad.x + (i as u32 & 1)) as i64;
            let py = (quad.y + (i as u32 >> 1)) as i64;
            for s in 0..pipe.pattern.count as usize {
                if cov & (1 << s) != 0 {
                    let [ox, oy] = pipe.pattern.offsets[s];
                    z[i][s] = depth_at(t, (px << SUBPIXEL_BITS) + ox, (py << SUBPIXEL_BITS) + oy);
                }
            }
        }
    }
    if matches!(
        mode,
        DepthMode::EarlyTestWrite | DepthMode::EarlyTestLateWrite
    ) {
        let depth = pipe
            .depth
            .as_mut()
            .expect("depth mode implies a depth target");
        let write = mode == DepthMode::EarlyTestWrite;
        let pass = match single {
            Some(zq) if plain_less && write => {
                depth.test_quad_1x_plain_less(element, quad.coverage, zq)
            }
            Some(zq) => depth.test_quad_1x(quad.x, quad.y, element, quad.coverage, zq, write),
            None => depth.test_quad(quad.x, quad.y, quad.coverage, &z, write),
        };
        let (before, after) = (
            u32::from_le_bytes(quad.coverage).count_ones(),
            u32::from_le_bytes(pass).count_ones(),
        );
        counters.early_z_killed += (before - after) as u64;
        if write && (plain_less || depth.write_enabled) {
            counters.depth_samples_written += after as u64;
        }
        quad.coverage = pass;
        if quad.is_empty() {
            return Ok(());
        }
    }
    if pipe.warp.is_none() {
        // No fragment shader: depth-only rendering ends at the depth unit.
        pipe.samples_passed += quad
            .coverage
            .iter()
            .map(|c| c.count_ones() as u64)
            .sum::<u64>();
        return Ok(());
    }
    if mode == DepthMode::EarlyTestWrite && pipe.holds {
        let number = owners.take_number();
        let (place, pass) = (
            TileOwners::place(quad.x, quad.y),
            u32::from_le_bytes(quad.coverage),
        );
        owners.mark_samples(place, number, pass, pipe.pattern.count as usize);
        pipe.held.push(Pending {
            tri,
            attrs,
            quad,
            element: element as u32,
            raster,
            number,
        });
        return Ok(());
    }
    if matches!(mode, DepthMode::Late | DepthMode::EarlyTestLateWrite) {
        // (With one sample per pixel the depths are the quad's four, sample 0 of each.)
        if let Some(zq) = single {
            for i in 0..4 {
                z[i][0] = zq[i];
            }
        }
        pipe.pending_z[pipe.pending.len()] = z;
    }
    enqueue(
        pipe,
        Pending {
            tri,
            attrs,
            quad,
            element: element as u32,
            raster,
            number: 0,
        },
        budget,
        counters,
    )
}

/// Adds a quad that passed early Z to the pending warp, shading the warp when it is full.
#[inline(always)]
fn enqueue<'a, 'fb, 's>(
    pipe: &'s mut PixelPipe<'a, 'fb>,
    quad: Pending<'a>,
    budget: &'s mut u64,
    counters: &'s mut Counters,
) -> Result<(), rastra_shader::ExecError> {
    pipe.pending.push(quad);
    if pipe.pending.len() == QUADS_PER_WARP {
        pipe.flush(budget, counters)?;
    }
    Ok(())
}

rastra_texture::multiversion! {
/// [`PixelPipe::flush`]: the pending quads' shading points, inputs and shading, then late Z
/// and the output merger. Compiled for the baseline and for AVX2 (the same bits: its lane
/// loops are IEEE-exact multiplies and adds, its bit counts exact either way).
fn flush_for_cpu<'a, 'fb, 's>(
    pipe: &'s mut PixelPipe<'a, 'fb>,
    pending: &'s [Pending<'a>],
    budget: &'s mut u64,
    counters: &'s mut Counters,
) -> Result<(), rastra_shader::ExecError> {
    if pending.is_empty() {
        return Ok(());
    }
    let Some(warp) = pipe.warp.as_mut() else {
        return Ok(());
    };
    let p = pipe.pipeline;
    let words = p.varying_words as usize;
    let lanes = pending.len() * 4;
    // This warp's inputs are written below: the registers no longer hold a block's.
    if let Some(kept) = &mut pipe.kept_inputs {
        kept.clear();
    }
    // Per lane: the point it is shaded at (its pixel centre and, when a varying asks
    // for it, its centroid sample); per quad: its triangle's planes. The weights and
    // interpolated values are then computed for all lanes at once.
    let mut helpers: Mask = 0;
    let center = &mut pipe.center;
    // Quads of one triangle (a big triangle's blocks): its planes and vertex values
    // are used once for the whole warp.
    let first = pending[0];
    let shared = pending
        .iter()
        .all(|p| std::ptr::eq(p.tri, first.tri) && std::ptr::eq(p.attrs, first.attrs));
    let groups = if shared { 1 } else { pending.len() };
    // Weights only when some quad's triangle has an attribute that is not constant (a
    // constant one is its value everywhere, `interpolate::constant_word`) or the shader
    // reads 1 / w; shading points only for the weights or the depth.
    let [_, _, z_read, w_read] = p.frag_position_read;
    let all_constant = pending[..groups]
        .iter()
        .all(|pend| pend.tri.constant_attrs);
    let weighted = w_read || !all_constant;
    for (q, pend) in pending.iter().enumerate() {
        helpers |= (uncovered_pixels(pend.quad.coverage) as Mask) << (q * 4);
    }
    if weighted || z_read {
        center.begin(shared.then_some(first.tri));
        for (q, pend) in pending.iter().enumerate() {
            center.set_quad(q, pend.tri, pend.quad.x, pend.quad.y);
        }
    }
    let wants_centroid =
        weighted && p.varyings.iter().any(|v| v.sampling == Sampling::Centroid);
    let centroid_weights = wants_centroid.then(|| {
        // Partly covered pixels move to their first covered sample.
        let full = pipe.pattern.full_mask();
        let mut centroid = *center;
        for (q, pend) in pending.iter().enumerate() {
            for (i, &cov) in pend.raster.iter().enumerate() {
                if cov != 0 && cov != full {
                    let [ox, oy] = pipe.pattern.offsets[cov.trailing_zeros() as usize];
                    let px = (pend.quad.x + (i as u32 & 1)) as i64;
                    let py = (pend.quad.y + (i as u32 >> 1)) as i64;
                    centroid.set_point(
                        q * 4 + i,
                        (px << SUBPIXEL_BITS) + ox,
                        (py << SUBPIXEL_BITS) + oy,
                    );
                }
            }
        }
        centroid.weights()
    });
    if weighted {
        center.weights_into(&mut pipe.center_weights, pipe.linear_weights);
    }
    let center_weights = &pipe.center_weights;
    if let Some(reg) = p.frag_position_reg {
        // The components the shader reads (`frag_position_read`).
        let [x_read, y_read, z_read, w_read] = p.frag_position_read;
        let r = warp.regs_mut(reg, 4);
        if x_read || y_read {
            for (q, pend) in pending.iter().enumerate() {
                // Pixel centres of whole pixels below 2²⁴: exact whichever way they are
                // added.
                let x = pend.quad.x as f32 + 0.5;
                let y = pend.quad.y as f32 + 0.5;
                let lanes = q * 4..q * 4 + 4;
                r[0][lanes.clone()].copy_from_slice(&[x, x + 1.0, x, x + 1.0].map(f32::to_bits));
                r[1][lanes].copy_from_slice(&[y, y, y + 1.0, y + 1.0].map(f32::to_bits));
            }
        }
        if z_read {
            r[2] = center.depths().map(f32::to_bits);
        }
        if w_read {
            r[3] = center_weights.inv_w.map(f32::to_bits);
        }
    }
    if let Some(reg) = p.front_facing_reg {
        let r = &mut warp.regs_mut(reg, 1)[0];
        for (q, pend) in pending.iter().enumerate() {
            let facing = pend.tri.front_facing as u32;
            r[q * 4..q * 4 + 4].fill(facing);
        }
    }
    if let Some(reg) = p.sample_mask_in_reg {
        let r = &mut warp.regs_mut(reg, 1)[0];
        for (q, pend) in pending.iter().enumerate() {
            for i in 0..4 {
                r[q * 4 + i] = pend.raster[i] as u32;
            }
        }
    }
    // The inputs, register by register. A quad's four lanes share a triangle: a constant
    // triangle's inputs are its vertices' value (`interpolate::constant_word`), one 4-lane
    // store per quad; another's three vertex values of the word are weighted per lane.
    // When every quad shares the triangle, the whole register at once (lanes past `lanes`
    // are not shaded). A warp of constant triangles only (small ones, flat-coloured) takes
    // a loop without the per-quad choice.
    if all_constant {
        for v in &p.varyings {
            let regs = warp.regs_mut(v.fs_reg, v.components);
            for (c, reg) in regs.iter_mut().enumerate() {
                let word = v.word as usize + c;
                if shared {
                    *reg = [pending[0].attrs[word]; WARP_LANES];
                    continue;
                }
                for (quad, pend) in reg.chunks_exact_mut(4).zip(pending) {
                    quad.fill(pend.attrs[word]);
                }
            }
        }
    } else {
        // Runs of consecutive quads of one triangle (a small triangle's quads arrive
        // together): its vertex values are read once per run and word, not per quad.
        let mut runs = [(0u8, 0u8); QUADS_PER_WARP];
        let mut run_count = 0;
        if !shared {
            let mut start = 0;
            while start < pending.len() {
                let first = &pending[start];
                let end = start
                    + 1
                    + pending[start + 1..]
                        .iter()
                        .take_while(|p| {
                            std::ptr::eq(p.tri, first.tri) && std::ptr::eq(p.attrs, first.attrs)
                        })
                        .count();
                runs[run_count] = (start as u8, end as u8);
                run_count += 1;
                start = end;
            }
        }
        let runs = &runs[..run_count];
        for v in &p.varyings {
            let weights = match &centroid_weights {
                Some(w) if v.sampling == Sampling::Centroid => w,
                _ => center_weights,
            };
            let regs = warp.regs_mut(v.fs_reg, v.components);
            for (c, reg) in regs.iter_mut().enumerate() {
                let word = v.word as usize + c;
                if shared {
                    // (Its one triangle is not constant: the warp would be all constant.)
                    let a = pending[0].attrs;
                    let values = [a[word], a[words + word], a[2 * words + word]];
                    interpolate_lanes(v.interpolation, weights, lanes, values, reg);
                    continue;
                }
                for &(start, end) in runs {
                    let pend = pending[start as usize];
                    let a = pend.attrs;
                    let quads = start as usize..end as usize;
                    if pend.tri.constant_attrs {
                        reg[quads.start * 4..quads.end * 4].fill(a[word]);
                    } else {
                        let values = [a[word], a[words + word], a[2 * words + word]];
                        interpolate_quads(v.interpolation, weights, quads, values, reg);
                    }
                }
            }
        }
    }
    let info = shade(
        p,
        warp,
        lanes,
        helpers,
        &pipe.resources,
        &mut pipe.unit,
        budget,
        counters,
    )?;

    let samples = pipe.pattern.count;
    let [dmin, dmax] = pipe.viewport.depth_range();
    // No test or write after shading and no shader depth: a quad's surviving coverage
    // is its coverage without the lanes that discarded, all four pixels at once.
    let no_late_stage = matches!(p.depth_mode, DepthMode::Off | DepthMode::EarlyTestWrite)
        && p.frag_depth_reg.is_none();
    // Per quad: its position and surviving coverage.
    let mut quads = [(0u32, [0u8; 4]); QUADS_PER_WARP];
    for (q, pend) in pending.iter().enumerate() {
        // The quad's surviving coverage, one byte per pixel, built in a register (bytes
        // stored one by one and read back as a word stall the store buffer).
        let mut cov_word = 0u32;
        if no_late_stage {
            // Discarded lanes 0–3 of the quad → bytes 0–3 all ones (the four bits spread
            // 7 apart land on bits 0, 8, 16, 24).
            cov_word = u32::from_le_bytes(pend.quad.coverage);
            if info.discarded != 0 {
                cov_word &= !discarded_pixels(info.discarded, q);
            }
            pipe.samples_passed += cov_word.count_ones() as u64;
        } else {
            for i in 0..4 {
                let lane = q * 4 + i;
                let mut cov = pend.quad.coverage[i];
                if cov == 0 || info.discarded & (1 << lane) != 0 {
                    continue;
                }
                let px = pend.quad.x + (i as u32 & 1);
                let py = pend.quad.y + (i as u32 >> 1);
                // (Only the late modes read it, and only they kept it.)
                let mut z = pipe.pending_z[q][i];
                if let Some(reg) = p.frag_depth_reg {
                    let d = f32::from_bits(warp.regs(reg, 1)[0][lane]).clamp(dmin, dmax);
                    z = [d; 4];
                }
                match p.depth_mode {
                    DepthMode::Late => {
                        let depth = pipe.depth.as_mut().expect("late Z implies a depth target");
                        let pass = depth.test(px, py, cov, &z, true);
                        counters.late_z_killed += (cov.count_ones() - pass.count_ones()) as u64;
                        cov = pass;
                    }
                    DepthMode::EarlyTestLateWrite => {
                        pipe.depth
                            .as_mut()
                            .expect("depth mode implies a depth target")
                            .write(px, py, cov, &z);
                    }
                    DepthMode::EarlyTestWrite | DepthMode::Off => {}
                }
                if cov == 0 {
                    continue;
                }
                pipe.samples_passed += cov.count_ones() as u64;
                if matches!(
                    p.depth_mode,
                    DepthMode::Late | DepthMode::EarlyTestLateWrite
                ) && let Some(d) = &pipe.depth
                    && d.write_enabled
                {
                    counters.depth_samples_written += cov.count_ones() as u64;
                }
                cov_word |= (cov as u32) << (8 * i);
            }
        }
        quads[q] = (pend.element, cov_word.to_le_bytes());
    }
    let quads = &quads[..pending.len()];
    for (surface, regs) in color_writes(p, &pipe.colors, warp) {
        count_writes(counters, write_target(surface, samples as usize, quads, regs));
    }
    Ok(())
}
}

/// Counts a pixel warp's execution: `lanes` lanes, `helpers` of them helper lanes.
#[inline(always)]
fn account_warp(
    info: &rastra_shader::ExecInfo,
    lanes: usize,
    helpers: Mask,
    counters: &mut Counters,
) {
    counters.pixel_warps += 1;
    counters.pixel_instructions += info.instructions;
    crate::cores::account(info, counters);
    counters.helper_lanes += helpers.count_ones() as u64;
    counters.fragment_shader_invocations += (lanes as u32 - helpers.count_ones()) as u64;
    counters.fragments_discarded += (info.discarded & !helpers).count_ones() as u64;
}

/// The coverage bytes of quad `q`'s pixels whose lanes discarded, all ones (lanes 0–3 of the
/// quad → bytes 0–3: the four bits spread 7 apart land on bits 0, 8, 16, 24).
#[inline(always)]
fn discarded_pixels(discarded: Mask, q: usize) -> u32 {
    let bits = ((discarded >> (q * 4)) & 0xf) as u32;
    ((bits * 0x0020_4081) & 0x0101_0101) * 0xff
}

/// The output merger's work for a shaded warp: each colour output that has a target, with
/// the output's registers, for the caller to write (a loop at the call site: a closure
/// handed to a helper here stayed a call of its own, per warp).
#[inline(always)]
fn color_writes<'w, 'fb>(
    p: &'w RenderPipeline,
    colors: &'w [Option<ColorSurface<'fb>>],
    warp: &'w Warp,
) -> impl Iterator<Item = (&'w ColorSurface<'fb>, &'w [[u32; WARP_LANES]])> {
    p.color_outputs.iter().filter_map(move |out| {
        let surface = colors[out.target].as_ref()?;
        Some((surface, warp.regs(out.reg, out.components)))
    })
}

/// Counts what the output merger did for one target: (samples written, samples blended).
#[inline(always)]
fn count_writes(counters: &mut Counters, (written, blended): (u64, u64)) {
    counters.samples_written += written;
    counters.samples_blended += blended;
}

/// Runs the fragment program on `warp` (`active` lanes, `helpers` among them) and counts
/// the execution.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn shade(
    p: &RenderPipeline,
    warp: &mut Warp,
    lanes: usize,
    helpers: Mask,
    resources: &Resources<'_>,
    unit: &mut TextureUnit,
    budget: &mut u64,
    counters: &mut Counters,
) -> Result<rastra_shader::ExecInfo, rastra_shader::ExecError> {
    let program = p
        .desc
        .fragment
        .as_deref()
        .expect("a warp implies a fragment shader");
    let info = rastra_shader::execute(
        program,
        warp,
        lane_mask(lanes),
        helpers,
        resources,
        unit,
        budget,
    )?;
    account_warp(&info, lanes, helpers, counters);
    Ok(info)
}

rastra_texture::multiversion! {
/// [`ROWS_PER_WARP`] rows of a whole block as one warp: quad `q` at pixel
/// (x + 2 (q mod 4), y + 2 ⌊q / 4⌋), every sample of `tri` covered, through shading and the
/// output merger — what [`PixelPipe::push_block`] and [`flush_for_cpu`] do for such a warp
/// (the same lanes, the same operations per lane, the same counts), without gathering the
/// quads one by one.
/// Only for a pipe whose `block_rows` holds. Compiled for the baseline and for AVX2.
fn shade_rows_for_cpu<'a, 'fb, 's>(
    pipe: &'s mut PixelPipe<'a, 'fb>,
    tri: &'a Triangle,
    attrs: &'a [u32],
    x: u32,
    y: u32,
    budget: &'s mut u64,
    counters: &'s mut Counters,
) -> Result<(), rastra_shader::ExecError> {
    let warp = pipe.warp.as_mut().expect("block rows imply a fragment shader");
    let p = pipe.pipeline;
    let words = p.varying_words as usize;
    let center = &mut pipe.center;
    let (v0, rest) = attrs.split_at(words);
    let (v1, v2) = rest.split_at(words);
    // As in `flush_for_cpu`: weights only for an input that varies over the triangle or
    // for 1 / w, shading points only for them or the depth.
    let [_, _, z_read, w_read] = p.frag_position_read;
    let weighted = w_read || !tri.constant_attrs;
    if weighted || z_read {
        center.begin(Some(tri));
        center.set_rows(tri, x, y);
    }
    // Every pixel is covered, so a centroid is the pixel centre: one set of weights.
    if weighted {
        center.weights_into(&mut pipe.center_weights, pipe.linear_weights);
    }
    let weights = &pipe.center_weights;
    if let Some(reg) = p.frag_position_reg {
        // The components the shader reads (`frag_position_read`).
        let [x_read, y_read, z_read, w_read] = p.frag_position_read;
        let r = warp.regs_mut(reg, 4);
        // The values `flush_for_cpu` computes (each quad's first centre, plus one), as the
        // row's first pixel plus each lane's offset from it: whole pixels and halves below
        // 2²⁴ are exact whichever way they are added.
        if x_read {
            let x = x as f32;
            r[0] = std::array::from_fn(|l| {
                let dx = (2 * (l / 4 % 4) + (l & 1)) as f32 + 0.5;
                (x + dx).to_bits()
            });
        }
        if y_read {
            let y = y as f32;
            r[1] = std::array::from_fn(|l| {
                let dy = (2 * (l / 16) + (l >> 1 & 1)) as f32 + 0.5;
                (y + dy).to_bits()
            });
        }
        if z_read {
            r[2] = center.depths().map(f32::to_bits);
        }
        if w_read {
            r[3] = weights.inv_w.map(f32::to_bits);
        }
    }
    if let Some(reg) = p.front_facing_reg {
        warp.regs_mut(reg, 1)[0] = [tri.front_facing as u32; WARP_LANES];
    }
    let full = pipe.pattern.full_mask();
    if let Some(reg) = p.sample_mask_in_reg {
        warp.regs_mut(reg, 1)[0] = [full as u32; WARP_LANES];
    }
    // A constant triangle's inputs are its vertices' values (`interpolate::constant_word`),
    // component by component, in every lane — already there when the last warp's were the
    // same words and the shader kept them.
    let kept = match &pipe.kept_inputs {
        Some(kept) => tri.constant_attrs && kept[..] == v0[..],
        None => false,
    };
    if !kept {
        for v in &p.varyings {
            let base = v.word as usize;
            let regs = warp.regs_mut(v.fs_reg, v.components);
            if tri.constant_attrs {
                let words = &v0[base..base + regs.len()];
                for (reg, &word) in regs.iter_mut().zip(words) {
                    *reg = [word; WARP_LANES];
                }
                continue;
            }
            for (c, reg) in regs.iter_mut().enumerate() {
                let values = [v0[base + c], v1[base + c], v2[base + c]];
                interpolate_lanes(v.interpolation, weights, WARP_LANES, values, reg);
            }
        }
        if p.varyings_kept {
            let kept = pipe.kept_inputs.get_or_insert_with(Vec::new);
            kept.clear();
            if tri.constant_attrs {
                kept.extend_from_slice(v0);
            }
        }
    }
    let info = shade(
        p,
        warp,
        WARP_LANES,
        0,
        &pipe.resources,
        &mut pipe.unit,
        budget,
        counters,
    )?;
    let covered = full as u32 * 0x0101_0101;
    // Each quad's surviving coverage (without a discarding lane — the usual case — every
    // quad keeps all its samples); positions are only made if the general path needs them.
    // (Filled, not built by `array::from_fn`: its closure is compiled out of line, for the
    // baseline CPU.)
    let mut covs = [covered.to_le_bytes(); QUADS_PER_WARP];
    if info.discarded != 0 {
        for (q, cov) in covs.iter_mut().enumerate() {
            *cov = (covered & !discarded_pixels(info.discarded, q)).to_le_bytes();
        }
    }
    pipe.samples_passed += match info.discarded {
        0 => (QUADS_PER_WARP as u32 * covered.count_ones()) as u64,
        _ => covs
            .iter()
            .map(|c| u32::from_le_bytes(*c).count_ones() as u64)
            .sum::<u64>(),
    };
    // Every pixel of the warp covered (the usual case): the ROP need not look.
    let all = info.discarded == 0 && covered == 0x0101_0101;
    for (surface, regs) in color_writes(p, &pipe.colors, warp) {
        count_writes(counters, write_row_target(surface, x, y, &covs, all, regs));
    }
    Ok(())
}
}

/// [`write_target`] for rows of four quads, quad `q` at pixel (x + 2 (q mod 4),
/// y + 2 ⌊q / 4⌋) with the coverage `covs[q]` (every pixel when `all_covered`), x a multiple of 8 and y of
/// 2 · [`ROWS_PER_WARP`] (a block's rows a warp holds: the whole block with 64-lane warps),
/// one sample per pixel. In the surface's 8×8 Morton tiles quads 2k and 2k + 1 are 32
/// adjacent bytes (the second quad of each pair is the first one with bit 1 of x set: four
/// pixels on), and the pairs lie at fixed Morton offsets from the first
/// ([`ROW_PAIR_QUADS`]): on the ROP's eight-lane path each pair is one range, all found
/// with one address computation.
#[inline(always)]
fn write_row_target(
    surface: &ColorSurface<'_>,
    x: u32,
    y: u32,
    covs: &[[u8; 4]; QUADS_PER_WARP],
    all_covered: bool,
    regs: &[[u32; WARP_LANES]],
) -> (u64, u64) {
    // Quad `q`'s top-left pixel, and its tiled place: quad pair q / 2 at its fixed Morton
    // offset from the first quad (four places a quad), the pair's second quad next.
    let at = |q: usize| (x + 2 * (q % 4) as u32, y + 2 * (q / 4) as u32);
    let first = surface.layout.element(x, y);
    let place = |q: usize| first + 4 * (ROW_PAIR_QUADS[q / 2] + (q & 1));
    for q in 0..QUADS_PER_WARP {
        debug_assert_eq!(place(q), surface.layout.element(at(q).0, at(q).1));
    }
    #[cfg(target_arch = "x86_64")]
    if surface.rop.has_pair_path(1) && rastra_texture::cpu::wide() {
        // The rows start at a block's left edge, on a row of the 8×8 tile that is a
        // multiple of the warp's rows, so the warp's quads are the 16 · QUADS_PER_WARP
        // bytes from the first pixel on (4 bytes a pixel on this path), 16 bytes a quad.
        debug_assert_eq!(surface.layout.pixel_bytes, 4);
        let first = surface.layout.element_offset(first);
        // SAFETY: the quads belong to the tile this worker owns (SharedSurface invariant).
        let texels = unsafe { surface.data.texels_mut(first, 16 * QUADS_PER_WARP) };
        let quad = texels.as_mut_ptr().cast::<[u8; 16]>();
        let coverage = (!all_covered).then_some(&covs[..]);
        // SAFETY: `wide()` is true only when the CPU has AVX2, FMA and POPCNT; the pairs
        // name different quads 0..QUADS_PER_WARP of `texels`, which nothing else uses
        // meanwhile.
        return unsafe {
            surface
                .rop
                .write_quad_pairs_avx2(quad, &ROW_PAIR_QUADS, coverage, regs, 0)
        };
    }
    let quads: [(u32, [u8; 4]); QUADS_PER_WARP] =
        std::array::from_fn(|q| (place(q) as u32, covs[q]));
    write_target(surface, 1, &quads, regs)
}

rastra_texture::multiversion! {
/// The output merger's work for one colour target of a warp: each quad with any surviving
/// coverage is blended into the target, quad by quad in the order they arrived (API order),
/// its colours read from `regs` (channel-major, as the shader left them; channels the
/// shader does not write are (0, 0, 0, 1)). A quad is its top-left pixel's tiled place
/// ([`rastra_texture::tiled_element`]) and its coverage. Compiled for the baseline and for
/// AVX2 (the same bits). Returns (samples written, samples blended).
fn write_target<'s, 'fb>(
    surface: &'s ColorSurface<'fb>,
    samples: usize,
    quads: &'s [(u32, [u8; 4])],
    regs: &'s [[u32; WARP_LANES]],
) -> (u64, u64) {
    let mut sum = (0, 0);
    let pairs = surface.rop.has_pair_path(samples) && rastra_texture::cpu::wide();
    let mut q = 0;
    while q < quads.len() {
        let (element, covs) = quads[q];
        #[cfg(target_arch = "x86_64")]
        if pairs {
            // The run of pairs from quad `q` on — quads q + 2k and q + 2k + 1 at different
            // positions (so their order does not matter) — through the ROP's eight-lane
            // path in one call; a quad may repeat in a later pair, which the ROP then
            // writes after the earlier one, as the quads' order asks.
            let mut texels = [[std::ptr::null_mut(); 2]; QUADS_PER_WARP / 2];
            let mut coverage = [[0u8; 4]; QUADS_PER_WARP];
            let mut n = 0;
            while n < texels.len() && q + 2 * n + 1 < quads.len() {
                let (e0, c0) = quads[q + 2 * n];
                let (e1, c1) = quads[q + 2 * n + 1];
                if e0 == e1 {
                    break;
                }
                texels[n] = [e0, e1]
                    .map(|e| surface.data.quad_ptr(surface.layout.element_offset(e as usize)));
                coverage[2 * n] = c0;
                coverage[2 * n + 1] = c1;
                n += 1;
            }
            if n > 0 {
                // SAFETY: `wide()` is true only when the CPU has AVX2, FMA and POPCNT; the
                // quads belong to the tile this worker owns (SharedSurface invariant), no
                // reference to their bytes is live, and a pair's two are at different
                // positions, so different bytes.
                let (written, blended) = unsafe {
                    surface.rop.write_quad_pair_run_avx2(
                        &texels[..n],
                        &coverage[..2 * n],
                        regs,
                        q * 4,
                    )
                };
                sum = (sum.0 + written, sum.1 + blended);
                q += 2 * n;
                continue;
            }
        }
        q += 1;
        if covs == [0; 4] {
            continue;
        }
        let q = q - 1;
        let mut colors: QuadColors = [[0.0; 4], [0.0; 4], [0.0; 4], [1.0; 4]];
        for (color, reg) in colors.iter_mut().zip(regs) {
            *color = std::array::from_fn(|i| f32::from_bits(reg[q * 4 + i]));
        }
        // A quad's four pixels are adjacent in the surface (8×8 tiles in Morton order,
        // quads aligned), so its texels are one range.
        let at = surface.layout.element_offset(element as usize);
        // SAFETY: the quad belongs to the tile this worker owns (SharedSurface invariant).
        let texels = unsafe { surface.data.texels_mut(at, 4 * surface.layout.pixel_bytes) };
        let (written, blended) = surface.rop.write_quad(texels, samples, covs, &colors);
        sum = (sum.0 + written, sum.1 + blended);
    }
    sum
}
}

#[cfg(test)]
mod tests {
    /// The helper-lane bits equal the per-byte test for every coverage byte value in
    /// every position.
    #[test]
    fn uncovered_pixels_are_the_zero_bytes() {
        let mut x = 0x9e37_79b9u32;
        let mut words: Vec<[u8; 4]> = (0..=255u8)
            .flat_map(|b| {
                (0..4).map(move |i| {
                    let mut c = [0u8; 4];
                    c[i] = b;
                    c
                })
            })
            .collect();
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            // Bytes that are often zero.
            words.push((x & 0x0f0f_0f0f & (x >> 4)).to_le_bytes());
        }
        for c in words {
            let want = (0..4).fold(0, |m, i| m | ((c[i] == 0) as u32) << i);
            assert_eq!(super::uncovered_pixels(c), want, "{c:?}");
        }
    }
}
