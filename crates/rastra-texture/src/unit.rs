//! The texture unit (T4, and T8's quads): takes a 2×2 quad's texture coordinates from the
//! shader core and returns four results, reading texels only through its texel cache.
//!
//! The pipeline of one request, as T4 lists it:
//! 1. **Gradients.** `Lod::Implicit` and `Lod::Bias` take the quad's coarse differences —
//!    lane i is pixel (i & 1, i >> 1); lanes 1 − 0 give ∂/∂x and lanes 2 − 0 give ∂/∂y for
//!    the whole quad (Vulkan lets implicit derivatives be coarse or fine; lavapipe's are per
//!    quad too), so a quad's lanes share their LOD but for a per-lane bias; `Lod::Grad`
//!    takes the shader's gradients per lane; `Lod::Level` needs none.
//!    Cube maps project the direction gradients onto each lane's face (Vulkan §16.5.5).
//! 2. **LOD** (Vulkan §16.6.7): gradients scaled to texels of the view's base level,
//!    ρx = |∂(u,v,w)/∂x|, ρy likewise; isotropic λ = log2(max(ρx, ρy)). With anisotropy
//!    (sampler `max_anisotropy` > 1, implicit / bias / grad LOD), the footprint's major and
//!    minor axes are ρmax and ρmin, the ratio of anisotropy η = min(ρmax / ρmin,
//!    max_anisotropy), N = ⌈η⌉ probes, and λ = log2(ρmax / η) — the LOD of the minor axis
//!    unless η hits the cap (the spec's formula; it allows N for η, a finer LOD that reads
//!    the same number of texels from up to a level further down). Then bias, the
//!    sampler's [lod_min, lod_max] clamp (NaN → lod_min). λ ≤ 0 magnifies (mag filter), else
//!    minifies (min filter). Levels: d = clamp(λ, 0, q); nearest mip = ⌈d + ½⌉ − 1,
//!    linear mip blends ⌊d⌋ and ⌊d⌋ + 1 by the fraction (trilinear); an anisotropic
//!    sampler by default only across the fraction's middle 0.3, one level outside it
//!    ([`crate::sampler::MipBlend`]).
//! 3. **Anisotropic probes.** N probes spaced evenly along the major-axis gradient (the
//!    screen axis with the longer texel-space footprint), at offsets ((k + ½)/N − ½) of its
//!    length, equally weighted, each a full bilinear/trilinear sample at λ's levels — so
//!    the probes tile the pixel's footprint along its length, each covering a
//!    minor-axis-wide square.
//! 4. **Addressing** on integer texel coordinates (§16.7): repeat, mirror-repeat,
//!    clamp-to-edge, clamp-to-border (border texels read the border colour). Cube maps
//!    select a face and are always seamless (`cube`).
//! 5. **Texel fetch** through the cache, one request per footprint (`cache`).
//! 6. **Filtering** in f32 with exact weights: for linear, u' = u·size − ½, weights frac(u')
//!    and 1 − frac(u'). Unorm8 textures are filtered on their exact decoded values, more
//!    precisely than lavapipe's 8-bit fixed-point weights (differences up to ~1/255 of the
//!    texel difference are expected against it). Depth compares happen per texel, before
//!    filtering (percentage-closer filtering); the result is the filtered 0/1 fraction.
//!
//! Requests that are invalid for the view (a view of another texture, filtering an integer
//! texture, compare on a colour texture, sampling a multisampled texture) are errors;
//! everything about coordinates (NaN, infinities, far out of range) has a defined result.

use std::cell::Cell;

use crate::cache::{
    CacheConfig, GRID_LINES, L2Port, L2Request, LineGrid, Source, Surface, TexelAddr, TexelCache,
    TexelCacheStats,
};
use crate::cube;
use crate::format::{SampleType, TextureFormat};
use crate::sampler::{AddressMode, FilterMode, Sampler};
use crate::storage::Texture;
use crate::view::{TextureView, TextureViewDimension};
use crate::{TextureError, invalid};

mod address;
use address::*;
mod lod;
use lod::*;
mod quad;
use quad::*;

/// One quad's texture coordinates: lane i is pixel (i & 1, i >> 1) of the quad.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quad {
    /// Normalised (u, v, w) for 1D/2D/3D views (unused components ignored); a direction
    /// for cube views.
    pub coords: [[f32; 3]; 4],
    /// Array layer (2D arrays) or cube index (cube arrays), clamped to the view's range.
    pub array_index: [i32; 4],
    /// Constant texel offset added to the integer texel coordinates (not for cube views).
    pub offset: [i32; 3],
    /// Lanes that want a result (bit i = lane i); the others still supply coordinates for
    /// the quad's gradients but read no texels and get zeros.
    pub lanes: u8,
}

impl Quad {
    /// A quad of 3-component coordinates, array index 0, no offset.
    pub fn new(coords: [[f32; 3]; 4]) -> Quad {
        Quad {
            coords,
            array_index: [0; 4],
            offset: [0; 3],
            lanes: 0xF,
        }
    }

    /// A quad of 2D coordinates.
    pub fn uv(c: [[f32; 2]; 4]) -> Quad {
        Quad::new(c.map(|[u, v]| [u, v, 0.0]))
    }

    /// The quad of pixels (x, y)…(x + 1, y + 1) for a screen-aligned mapping
    /// u = (px + ½)·du, v = (py + ½)·dv (pixel centres).
    pub fn screen(x: u32, y: u32, du: f32, dv: f32) -> Quad {
        Quad::uv(std::array::from_fn(|i| {
            let px = x.saturating_add(i as u32 & 1) as f32 + 0.5;
            let py = y.saturating_add(i as u32 >> 1) as f32 + 0.5;
            [px * du, py * dv]
        }))
    }

    pub fn with_array_index(mut self, index: [i32; 4]) -> Quad {
        self.array_index = index;
        self
    }

    pub fn with_offset(mut self, offset: [i32; 3]) -> Quad {
        self.offset = offset;
        self
    }

    /// Only the lanes in `mask` (bit i = lane i) read texels.
    pub fn with_lanes(mut self, mask: u8) -> Quad {
        self.lanes = mask & 0xF;
        self
    }
}

/// Quads sampled together ([`TextureUnit::sample_run`]): `quads[i]` chooses its LOD as
/// `lods[i]` — or `lods[0]`, for every quad, when that is the only one — and compares with
/// `depth_refs[i]` if the run compares.
#[derive(Clone, Copy, Debug)]
pub struct QuadRun<'a> {
    pub quads: &'a [Quad],
    pub lods: &'a [Lod],
    pub depth_refs: Option<&'a [[f32; 4]]>,
}

/// How the LOD is chosen (WGSL textureSample / SampleBias / SampleLevel / SampleGrad).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lod {
    /// From per-pixel gradients inside the quad.
    Implicit,
    /// Implicit plus a per-lane bias.
    Bias([f32; 4]),
    /// Explicit per-lane LOD (no anisotropy).
    Level([f32; 4]),
    /// Explicit per-lane gradients of the coordinates along screen x and y.
    Grad {
        ddx: [[f32; 3]; 4],
        ddy: [[f32; 3]; 4],
    },
}

/// A texture unit: the sampling pipeline plus its texel cache.
#[derive(Debug)]
pub struct TextureUnit {
    cache: TexelCache,
    /// The quad path's slots (`quad`), made by its first request.
    quad_slots: Option<Box<QuadSlots>>,
}

/// A sample position at one level: normalised flat coordinates, or a cube face position.
#[derive(Clone, Copy, Debug)]
enum Pos {
    Flat([f32; 3]),
    Cube { face: u32, s: f32, t: f32 },
}

/// What one lane needs besides its position.
#[derive(Clone, Copy, Debug)]
struct LaneCtx<'r> {
    /// First storage slice of the lane's layer (or cube) — unused by 3D views.
    slice: u32,
    depth_ref: Option<f32>,
    /// The texel cache's index for the request's source, once a lane has looked it up
    /// (`TexelCache::source_index`): one request reads one source, so its lanes and levels
    /// share the lookup.
    source: &'r Cell<Option<u32>>,
}

/// Per-lane LOD outcome.
#[derive(Clone, Copy, Debug)]
struct LaneLod {
    lambda: f32,
    /// Anisotropic probes and the major axis (in the position's coordinate space).
    probes: u32,
    axis: [f32; 3],
}

impl LaneLod {
    /// What a lane the quad does not sample keeps (never read).
    const UNSAMPLED: LaneLod = LaneLod {
        lambda: 0.0,
        probes: 1,
        axis: [0.0; 3],
    };
}

/// A 2D level as bilinear footprints on it see it ([`TextureUnit::level_2d`]).
struct Level2d<'t> {
    surface: Surface<'t>,
    size: [u32; 2],
    modes: [AddressMode; 2],
    /// The border colour as register bits.
    border: [u32; 4],
}

/// Border results per tap.
enum Tap {
    Texel(TexelAddr),
    Border,
    /// A cube corner: replaced by the mean of the other taps.
    Corner,
}

impl Default for TextureUnit {
    /// The default cache geometry with its own L2.
    fn default() -> Self {
        TextureUnit::new(CacheConfig::default())
    }
}

impl TextureUnit {
    /// A unit with its own L1 and its own L2 of `config`'s geometry.
    pub fn new(config: CacheConfig) -> TextureUnit {
        TextureUnit {
            cache: TexelCache::new(config, false),
            quad_slots: None,
        }
    }

    /// A unit whose L1 sits in front of a shared L2: its fills log their L2 requests
    /// (`take_l2_requests`) for the L2's owner to replay in a deterministic order; the
    /// L2 hit/miss counters stay zero here.
    pub fn with_shared_l2(config: CacheConfig) -> TextureUnit {
        TextureUnit {
            cache: TexelCache::new(config, true),
            quad_slots: None,
        }
    }

    /// The L2 requests logged since the last call (empty for a unit with its own L2). The
    /// next log starts with room for as many (a tile's log grew from nothing, doubling
    /// about ten times, in every tile).
    pub fn take_l2_requests(&mut self) -> Vec<L2Request> {
        match &mut self.cache.l2 {
            L2Port::Log(log) => {
                let room = Vec::with_capacity(log.len());
                std::mem::replace(log, room)
            }
            L2Port::Own(_) => Vec::new(),
        }
    }

    /// Empties the L1, as a shader core starting on new work would find it.
    pub fn invalidate_l1(&mut self) {
        self.cache.invalidate();
    }

    /// The cache geometry in use (after clamping).
    pub fn config(&self) -> &CacheConfig {
        self.cache.config()
    }

    /// The texel cache's counters since the last reset.
    pub fn stats(&self) -> TexelCacheStats {
        self.cache.stats
    }

    /// Zeroes the counters (the cache contents stay).
    pub fn reset_stats(&mut self) {
        self.cache.stats = TexelCacheStats::default();
    }

    // ---- sampling entry points ---------------------------------------------------------

    /// textureSample: implicit LOD from the quad.
    pub fn sample(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
    ) -> Result<[[f32; 4]; 4], TextureError> {
        self.sample_with(tex, view, sampler, quad, Lod::Implicit, None)
    }

    /// textureSampleBias.
    pub fn sample_bias(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        bias: [f32; 4],
    ) -> Result<[[f32; 4]; 4], TextureError> {
        self.sample_with(tex, view, sampler, quad, Lod::Bias(bias), None)
    }

    /// textureSampleLevel.
    pub fn sample_level(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        level: [f32; 4],
    ) -> Result<[[f32; 4]; 4], TextureError> {
        self.sample_with(tex, view, sampler, quad, Lod::Level(level), None)
    }

    /// textureSampleGrad.
    pub fn sample_grad(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        ddx: [[f32; 3]; 4],
        ddy: [[f32; 3]; 4],
    ) -> Result<[[f32; 4]; 4], TextureError> {
        self.sample_with(tex, view, sampler, quad, Lod::Grad { ddx, ddy }, None)
    }

    /// textureSampleCompare: implicit LOD, per-texel compare then filtering (PCF). The
    /// result is in `.x` (`[v, 0, 0, 1]`).
    pub fn sample_compare(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        depth_ref: [f32; 4],
    ) -> Result<[[f32; 4]; 4], TextureError> {
        self.sample_with(tex, view, sampler, quad, Lod::Implicit, Some(depth_ref))
    }

    /// textureSampleCompareLevel (WGSL samples level 0: pass `[0.0; 4]`).
    pub fn sample_compare_level(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        depth_ref: [f32; 4],
        level: [f32; 4],
    ) -> Result<[[f32; 4]; 4], TextureError> {
        self.sample_with(tex, view, sampler, quad, Lod::Level(level), Some(depth_ref))
    }

    /// Every sampling operation: `lod` chooses the level, `depth_ref` makes it a compare.
    pub fn sample_with(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        lod: Lod,
        depth_ref: Option<[f32; 4]>,
    ) -> Result<[[f32; 4]; 4], TextureError> {
        let mut out = [[[0.0; 4]; 4]];
        let refs = depth_ref.map(|r| [r]);
        let run = QuadRun {
            quads: std::slice::from_ref(quad),
            lods: &[lod],
            depth_refs: refs.as_ref().map(|r| &r[..]),
        };
        sample_for_cpu(self, tex, view, sampler, &run, &mut out)?;
        Ok(out[0])
    }

    /// [`TextureUnit::sample_with`] for a run of quads on one texture, view and sampler (a
    /// warp's texture instruction: T4's quads, sent together): quad `i` of `run` gives
    /// `out[i]`. The run is checked once; a run invalid for the view (see
    /// [`TextureUnit::sample_with`]) is an error and writes nothing. (The work is
    /// `sample_for_cpu`, compiled for the baseline and for AVX2: the same bits.)
    pub fn sample_run(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        run: &QuadRun,
        out: &mut [[[f32; 4]; 4]],
    ) -> Result<(), TextureError> {
        let n = run.quads.len();
        if out.len() < n
            || !(run.lods.len() == 1 || run.lods.len() >= n)
            || run.depth_refs.is_some_and(|r| r.len() < n)
        {
            return invalid!(
                "{n} sampling requests need as many results and depth references, and one LOD \
                 choice or one each"
            );
        }
        sample_for_cpu(self, tex, view, sampler, run, out)
    }

    /// textureGather: component `component` (0–3) of the four texels of the bilinear
    /// footprint at the view's base level, as register bits, in the order
    /// (u0, v1), (u1, v1), (u1, v0), (u0, v0) (Vulkan §16.10 "Texel Gathering").
    pub fn gather(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        component: u32,
    ) -> Result<[[u32; 4]; 4], TextureError> {
        if component > 3 {
            return invalid!("gather component {component} is not 0–3");
        }
        check_compare(view, sampler, false)?;
        let vals = self.gather_texels(tex, view, sampler, quad, None)?;
        let c = component as usize;
        Ok(vals.map(|texels| texels.map(|t| t[c])))
    }

    /// textureGatherCompare: the four compare results (0 or 1) of the footprint.
    pub fn gather_compare(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        depth_ref: [f32; 4],
    ) -> Result<[[f32; 4]; 4], TextureError> {
        check_compare(view, sampler, true)?;
        let vals = self.gather_texels(tex, view, sampler, quad, Some(depth_ref))?;
        Ok(vals.map(|texels| texels.map(|t| f32::from_bits(t[0]))))
    }

    /// textureLoad (texelFetch): integer texel coordinates at view level `level`, array
    /// layer (or cube face for cube views) and sample, as register bits. Anything out of
    /// bounds reads zero (robust access).
    pub fn load(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        coords: [[i32; 3]; 4],
        array_index: [i32; 4],
        level: [i32; 4],
        sample_index: [i32; 4],
    ) -> Result<[[u32; 4]; 4], TextureError> {
        check_view(tex, view)?;
        let src = Source {
            texture: tex,
            format: view.format,
            aspect: view.aspect,
        };
        let samples = tex.desc().sample_count as i64;
        let mut out = [[0u32; 4]; 4];
        for lane in 0..4 {
            let lv = level[lane] as i64;
            if lv < 0 || lv >= view.mip_level_count as i64 {
                continue;
            }
            let size = view.level_size(lv as u32);
            let [x, y, z] = coords[lane].map(|v| v as i64);
            let (w, h) = (size[0] as i64, size[1] as i64);
            let is3d = view.dimension == TextureViewDimension::D3;
            let h = if view.dimension == TextureViewDimension::D1 {
                1
            } else {
                h
            };
            if x < 0 || x >= w || y < 0 || y >= h {
                continue;
            }
            let s = sample_index[lane] as i64;
            if s < 0 || s >= samples {
                continue;
            }
            let slice = if is3d {
                if z < 0 || z >= size[2] as i64 {
                    continue;
                }
                z as u32
            } else {
                let a = array_index[lane] as i64;
                if a < 0 || a >= view.array_layer_count as i64 {
                    continue;
                }
                ((view.base_array_layer as i64 + a) * samples + s) as u32
            };
            let addr = TexelAddr {
                level: view.base_mip_level + lv as u32,
                slice,
                x: x as u32,
                y: y as u32,
            };
            let mut v = [[0u32; 4]; 1];
            self.cache.fetch(&src, &[addr], &mut v);
            out[lane] = v[0];
        }
        Ok(out)
    }

    // ---- queries -----------------------------------------------------------------------

    /// textureDimensions at view level `level`: width, height, depth (3D) or layers
    /// (arrays; cube arrays count cubes). A level outside the view gives zeros.
    pub fn dimensions(view: &TextureView, level: u32) -> [u32; 3] {
        if level >= view.mip_level_count {
            return [0; 3];
        }
        let [w, h, d] = view.level_size(level);
        match view.dimension {
            TextureViewDimension::D1 => [w, 1, 1],
            TextureViewDimension::D2 | TextureViewDimension::Cube => [w, h, 1],
            TextureViewDimension::D2Array | TextureViewDimension::CubeArray => {
                [w, h, view.layers()]
            }
            TextureViewDimension::D3 => [w, h, d],
        }
    }

    /// textureNumLevels.
    pub fn num_levels(view: &TextureView) -> u32 {
        view.mip_level_count
    }

    /// textureNumLayers (cube arrays count cubes).
    pub fn num_layers(view: &TextureView) -> u32 {
        view.layers()
    }

    /// textureNumSamples.
    pub fn num_samples(view: &TextureView) -> u32 {
        view.texture.sample_count
    }

    // ---- the pipeline ------------------------------------------------------------------

    /// Per-lane positions (faces projected for cubes) and LODs (the LODs of the lanes that
    /// want results; the others keep a placeholder).
    #[inline(always)]
    fn setup(
        &self,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        lod: Lod,
    ) -> ([Pos; 4], [LaneLod; 4]) {
        let (pos, lods) = Self::lods_of(view, sampler, quad, lod);
        (pos.unwrap_or_else(|| positions(view, quad)), lods)
    }

    /// [`TextureUnit::setup`]'s LODs, and its positions when the LODs needed them: a flat
    /// view's implicit LOD does not (then the positions are the coordinates themselves, made
    /// only for a quad that goes lane by lane).
    #[inline(always)]
    fn lods_of(
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        lod: Lod,
    ) -> (Option<[Pos; 4]>, [LaneLod; 4]) {
        if !view.is_cube()
            && let Lod::Implicit | Lod::Bias(_) = lod
        {
            let bias = match lod {
                Lod::Bias(b) => b,
                _ => [0.0; 4],
            };
            let (size0, dims) = (view.level_size(0), view_dims(view));
            return (
                None,
                flat_implicit_lods(quad.coords, quad.lanes, size0, dims, sampler, bias),
            );
        }
        let pos = positions(view, quad);
        let lods = Self::lane_lods(view, sampler, quad, lod, &pos);
        (Some(pos), lods)
    }

    /// [`TextureUnit::setup`]'s LODs lane by lane: every kind of position and LOD (the
    /// commonest, a flat position with implicit LOD, takes [`flat_implicit_lods`]).
    #[inline(always)]
    fn lane_lods(
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        lod: Lod,
        pos: &[Pos; 4],
    ) -> [LaneLod; 4] {
        let size0 = view.level_size(0);
        let dims = view_dims(view);
        let c = quad.coords;
        // Lane `l`'s gradients, computed where the lane needs them (an array of all four
        // lanes' would be stored value by value and read back in wider pieces — a stall per
        // quad).
        let grads = |l: usize| -> Option<([f32; 3], [f32; 3])> {
            match lod {
                Lod::Level(_) => None,
                Lod::Grad { ddx, ddy } => Some((ddx[l], ddy[l])),
                // Coarse: the quad's top row and left column, the same for every lane.
                Lod::Implicit | Lod::Bias(_) => Some((sub3(c[1], c[0]), sub3(c[2], c[0]))),
            }
        };
        // A loop rather than `array::from_fn`: the closure `from_fn` takes was compiled on
        // its own, for the baseline CPU, outside the AVX2 body this function is inlined into.
        let mut lods = [LaneLod::UNSAMPLED; 4];
        for (l, out) in lods.iter_mut().enumerate() {
            // A lane that wants no result samples nothing: its LOD is never read (its
            // coordinates still enter the other lanes' gradients).
            if quad.lanes >> l & 1 == 0 {
                continue;
            }
            *out = 'lane: {
                let Some((dx, dy)) = grads(l) else {
                    let lambda = match lod {
                        Lod::Level(v) => v[l],
                        _ => 0.0,
                    };
                    break 'lane LaneLod {
                        lambda: clamp_lod(lambda, sampler),
                        probes: 1,
                        axis: [0.0; 3],
                    };
                };
                // Gradients in the position's space (face s,t for cubes) and in texels.
                let (gx, gy) = match pos[l] {
                    Pos::Cube { face, .. } => {
                        let a = cube::project_derivative(c[l], dx, face);
                        let b = cube::project_derivative(c[l], dy, face);
                        ([a[0], a[1], 0.0], [b[0], b[1], 0.0])
                    }
                    Pos::Flat(_) => (mask(dx, dims), mask(dy, dims)),
                };
                let (log, probes, axis) = footprint_lod(gx, gy, size0, sampler);
                let bias = match lod {
                    Lod::Bias(b) => b[l],
                    _ => 0.0,
                };
                LaneLod {
                    lambda: clamp_lod(log + bias, sampler),
                    probes,
                    axis,
                }
            };
        }
        lods
    }

    /// One lane: mag/min choice, mip selection, anisotropic probes, filtering. `FINITE`:
    /// every texel of the source is finite and not negative ([`weighted_sum`]).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn sample_lane<const FINITE: bool>(
        &mut self,
        src: &Source,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        pos: Pos,
        lod: LaneLod,
        ctx: &LaneCtx,
    ) -> [f32; 4] {
        let d = sampler.desc();
        let filter = if lod.lambda <= 0.0 {
            d.mag_filter
        } else {
            d.min_filter
        };
        let levels = lane_levels(view, sampler, lod.lambda);
        let levels: &[(u32, f32)] = if levels[1].1 == 0.0 {
            &levels[..1]
        } else {
            &levels[..]
        };
        let n = lod.probes.max(1);
        if levels.len() == 1 && n == 1 {
            // Exactly the footprint's value (no 1.0 × v products for NaN/∞ texels).
            let level = levels[0].0;
            return self.footprint::<FINITE>(
                src,
                view,
                sampler,
                quad.offset,
                level,
                pos,
                filter,
                ctx,
            );
        }
        // Bilinear 2D footprints (what `footprint` would pick for every probe) share their
        // level's set-up.
        let flat = match pos {
            Pos::Flat(c) => Some(c),
            Pos::Cube { .. } => None,
        };
        let bilinear = flat.filter(|_| {
            filter == FilterMode::Linear && ctx.depth_ref.is_none() && view_dims(view) == 2
        });
        let mut acc = [0.0f32; 4];
        let probe = |k: u32| {
            if n == 1 {
                pos
            } else {
                offset_pos(pos, lod.axis, probe_offset(k, n))
            }
        };
        for &(level, lw) in levels {
            // Every probe of a level has the same weight.
            let w = lw / n as f32;
            // The two kinds of footprint in loops of their own: merged into one loop, their
            // results met in memory, stored value by value and read back as a vector.
            if let Some(c0) = bilinear {
                let l = self.level_2d(src, view, sampler, level, ctx.slice, ctx.source);
                // Most lanes take few probes: their slots fit one 8-lane vector.
                if n <= 8 {
                    if let Some(f) = probe_footprints::<8>(&l, quad.offset, c0, lod.axis, n) {
                        self.probes_2d::<8, FINITE>(&l, &f, n as usize, w, &mut acc);
                        continue;
                    }
                } else if let Some(f) =
                    probe_footprints::<TABLED_PROBES>(&l, quad.offset, c0, lod.axis, n)
                {
                    self.probes_2d::<TABLED_PROBES, FINITE>(&l, &f, n as usize, w, &mut acc);
                    continue;
                }
                for k in 0..n {
                    let c = if n == 1 {
                        c0
                    } else {
                        offset_flat(c0, lod.axis, probe_offset(k, n))
                    };
                    let v = self.bilinear_2d::<FINITE>(&l, quad.offset, c);
                    for c in 0..4 {
                        acc[c] += w * v[c];
                    }
                }
            } else {
                for k in 0..n {
                    let v = self.footprint::<FINITE>(
                        src,
                        view,
                        sampler,
                        quad.offset,
                        level,
                        probe(k),
                        filter,
                        ctx,
                    );
                    for c in 0..4 {
                        acc[c] += w * v[c];
                    }
                }
            }
        }
        acc
    }

    /// Taps of a point or linear footprint at view level `level`, with their weights.
    #[allow(clippy::too_many_arguments)]
    fn taps(
        view: &TextureView,
        sampler: &Sampler,
        offset: [i32; 3],
        level: u32,
        pos: Pos,
        filter: FilterMode,
        slice: u32,
        taps: &mut [(Tap, f32); 8],
    ) -> usize {
        let size = view.level_size(level);
        let abs = view.base_mip_level + level;
        let d = sampler.desc();
        match pos {
            Pos::Flat(c) => {
                let dims = view_dims(view);
                let modes = [d.address_mode_u, d.address_mode_v, d.address_mode_w];
                // Per axis: up to two (coordinate, weight) pairs.
                let mut axes = [[(Some(0u32), 1.0f32); 2]; 3];
                let mut count = [1usize; 3];
                for a in 0..dims {
                    let n = size[a];
                    let u = c[a] * n as f32;
                    match filter {
                        FilterMode::Nearest => {
                            let i = sat_add(floor_i64(u), offset[a]);
                            axes[a][0] = (address(i, n, modes[a]), 1.0);
                        }
                        FilterMode::Linear => {
                            axes[a] = linear_axis(u, n, offset[a], modes[a]);
                            count[a] = 2;
                        }
                    }
                }
                let is3d = view.dimension == TextureViewDimension::D3;
                let mut k = 0;
                for iz in 0..count[2] {
                    for iy in 0..count[1] {
                        for ix in 0..count[0] {
                            let (x, wx) = axes[0][ix];
                            let (y, wy) = axes[1][iy];
                            let (z, wz) = axes[2][iz];
                            let tap = match (x, y, z) {
                                (Some(x), Some(y), Some(z)) => Tap::Texel(TexelAddr {
                                    level: abs,
                                    slice: if is3d { z } else { slice },
                                    x,
                                    y,
                                }),
                                _ => Tap::Border,
                            };
                            taps[k] = (tap, wx * wy * wz);
                            k += 1;
                        }
                    }
                }
                k
            }
            Pos::Cube { face, s, t } => {
                let n = size[0];
                let resolve = |f: u32, i: i64, j: i64| {
                    let clamp = |v: i64| v.clamp(-1, n as i64) as i32;
                    match cube::resolve_texel(f, clamp(i), clamp(j), n) {
                        Some((f, x, y)) => Tap::Texel(TexelAddr {
                            level: abs,
                            slice: slice + f,
                            x,
                            y,
                        }),
                        None => Tap::Corner,
                    }
                };
                match filter {
                    FilterMode::Nearest => {
                        let i = floor_i64(s * n as f32).clamp(0, n as i64 - 1);
                        let j = floor_i64(t * n as f32).clamp(0, n as i64 - 1);
                        taps[0] = (resolve(face, i, j), 1.0);
                        1
                    }
                    FilterMode::Linear => {
                        let (u, v) = (s * n as f32 - 0.5, t * n as f32 - 0.5);
                        let (fu, fv) = (u - floor_f32(u), v - floor_f32(v));
                        let (i0, j0) = (floor_i64(u), floor_i64(v));
                        let mut k = 0;
                        for (dj, wy) in [(0, 1.0 - fv), (1, fv)] {
                            for (di, wx) in [(0, 1.0 - fu), (1, fu)] {
                                taps[k] = (resolve(face, i0 + di, j0 + dj), wx * wy);
                                k += 1;
                            }
                        }
                        4
                    }
                }
            }
        }
    }

    /// Fetches a footprint's taps through the cache; border taps read the border colour
    /// and cube corners the mean of the other taps. Values are register bits.
    fn fetch_taps(
        &mut self,
        src: &Source,
        sampler: &Sampler,
        integer: bool,
        taps: &[(Tap, f32)],
        out: &mut [[u32; 4]; 8],
    ) {
        let mut addrs = [TexelAddr {
            level: 0,
            slice: 0,
            x: 0,
            y: 0,
        }; 8];
        let mut n = 0;
        for (t, _) in taps {
            if let Tap::Texel(a) = t {
                addrs[n] = *a;
                n += 1;
            }
        }
        let mut vals = [[0u32; 4]; 8];
        if n > 0 {
            self.cache.fetch(src, &addrs[..n], &mut vals[..n]);
        }
        let border = sampler.desc().border_color.rgba();
        let border = if integer {
            border.map(|v| v as u32)
        } else {
            border.map(f32::to_bits)
        };
        let mut k = 0;
        for (i, (t, _)) in taps.iter().enumerate() {
            out[i] = match t {
                Tap::Texel(_) => {
                    k += 1;
                    vals[k - 1]
                }
                Tap::Border => border,
                Tap::Corner => [0; 4],
            };
        }
        // Cube corners: the mean of the available taps of the footprint.
        for i in 0..taps.len() {
            if matches!(taps[i].0, Tap::Corner) {
                let mut sum = [0.0f64; 4];
                let mut cnt = 0.0;
                for (j, (t, _)) in taps.iter().enumerate() {
                    if !matches!(t, Tap::Corner) {
                        for c in 0..4 {
                            sum[c] += if integer {
                                out[j][c] as f64
                            } else {
                                f32::from_bits(out[j][c]) as f64
                            };
                        }
                        cnt += 1.0;
                    }
                }
                let mean = sum.map(|s| s / f64::max(cnt, 1.0));
                out[i] = if integer {
                    mean.map(|m| m.round() as u32)
                } else {
                    mean.map(|m| (m as f32).to_bits())
                };
            }
        }
    }

    /// One point or linear footprint at view level `level`, compared and filtered. The
    /// commonest footprint — bilinear on a 2D (or 2D-array) level, no compare — takes
    /// [`TextureUnit::bilinear_2d`]; the rest the general path.
    #[allow(clippy::too_many_arguments)]
    fn footprint<const FINITE: bool>(
        &mut self,
        src: &Source,
        view: &TextureView,
        sampler: &Sampler,
        offset: [i32; 3],
        level: u32,
        pos: Pos,
        filter: FilterMode,
        ctx: &LaneCtx,
    ) -> [f32; 4] {
        if let Pos::Flat(c) = pos
            && filter == FilterMode::Linear
            && ctx.depth_ref.is_none()
            && view_dims(view) == 2
        {
            let l = self.level_2d(src, view, sampler, level, ctx.slice, ctx.source);
            return self.bilinear_2d::<FINITE>(&l, offset, c);
        }
        self.footprint_general(src, view, sampler, offset, level, pos, filter, ctx)
    }

    /// What a bilinear footprint on 2D level `level` (of the view) and storage slice
    /// `slice` needs besides its coordinates: made once per level a lane samples, not per
    /// anisotropic probe. `source` memoises the source's cache index for the request.
    fn level_2d<'t>(
        &mut self,
        src: &Source<'t>,
        view: &TextureView,
        sampler: &Sampler,
        level: u32,
        slice: u32,
        source: &Cell<Option<u32>>,
    ) -> Level2d<'t> {
        let (surface, size) = self.surface_2d(src, view, level, slice, source);
        let d = sampler.desc();
        Level2d {
            surface,
            size,
            modes: [d.address_mode_u, d.address_mode_v],
            border: d.border_color.rgba().map(f32::to_bits),
        }
    }

    /// [`TextureUnit::level_2d`]'s surface and level size (all the quad path needs).
    #[inline(always)]
    fn surface_2d<'t>(
        &mut self,
        src: &Source<'t>,
        view: &TextureView,
        level: u32,
        slice: u32,
        source: &Cell<Option<u32>>,
    ) -> (Surface<'t>, [u32; 2]) {
        let index = match source.get() {
            Some(i) => i,
            None => {
                let i = self.cache.source_index(src);
                source.set(Some(i));
                i
            }
        };
        // (A view level's width and height are its texture level's.)
        self.cache
            .surface_sized(src, index, view.base_mip_level + level, slice)
    }

    /// Adds `w ×` the bilinear footprints of the first `n` probes of `f` (on level `l`) to
    /// `acc`, each fetched and weighted as [`TextureUnit::bilinear_2d`] does.
    #[inline(always)]
    fn probes_2d<const S: usize, const FINITE: bool>(
        &mut self,
        l: &Level2d,
        f: &ProbeFootprints<S>,
        n: usize,
        w: f32,
        acc: &mut [f32; 4],
    ) {
        for k in 0..n.min(S) {
            let vals =
                self.cache
                    .fetch_2x2(&l.surface, [f.x[0][k], f.x[1][k]], [f.y[0][k], f.y[1][k]]);
            let (wx, wy) = ([1.0 - f.fx[k], f.fx[k]], [1.0 - f.fy[k], f.fy[k]]);
            let weights = [wx[0] * wy[0], wx[1] * wy[0], wx[0] * wy[1], wx[1] * wy[1]];
            let v = weighted_sum::<FINITE>(weights, &vals);
            for c in 0..4 {
                acc[c] += w * v[c];
            }
        }
    }

    /// The bilinear footprint of a 2D level: [`TextureUnit::taps`]'s four taps (the same
    /// [`linear_axis`] per axis; x fastest, then y; weights `wx · wy · 1`), fetched and
    /// weighted exactly as the general path does, without its tap list for every shape of
    /// footprint (tested against it). Four texels in range are one 2×2 fetch; a footprint
    /// with border taps fetches the others.
    #[inline(always)]
    fn bilinear_2d<const FINITE: bool>(
        &mut self,
        l: &Level2d,
        offset: [i32; 3],
        c: [f32; 3],
    ) -> [f32; 4] {
        let axes = [
            linear_axis(c[0] * l.size[0] as f32, l.size[0], offset[0], l.modes[0]),
            linear_axis(c[1] * l.size[1] as f32, l.size[1], offset[1], l.modes[1]),
        ];
        let weights: [f32; 4] = std::array::from_fn(|k| axes[0][k & 1].1 * axes[1][k >> 1].1 * 1.0);
        let vals = match (axes[0][0].0, axes[0][1].0, axes[1][0].0, axes[1][1].0) {
            (Some(x0), Some(x1), Some(y0), Some(y1)) => {
                self.cache.fetch_2x2(&l.surface, [x0, x1], [y0, y1])
            }
            _ => self.bilinear_with_border(l, axes),
        };
        // A tap of weight zero adds nothing (not even 0 · ∞ = NaN). Adding +0 instead of
        // skipping it gives the same bits: the sum starts at +0 and round-to-nearest never
        // makes it −0, and x + 0 = x for every other x — so the loop has no branch.
        weighted_sum::<FINITE>(weights, &vals)
    }

    /// [`TextureUnit::bilinear_2d`]'s texels when some taps are border texels: the others
    /// fetched as one request, the border colour in place of the rest.
    #[cold]
    fn bilinear_with_border(
        &mut self,
        l: &Level2d,
        axes: [[(Option<u32>, f32); 2]; 2],
    ) -> [[u32; 4]; 4] {
        let mut addrs = [TexelAddr {
            level: 0,
            slice: 0,
            x: 0,
            y: 0,
        }; 4];
        // Per tap: its place among the fetched texels, or none for a border texel.
        let mut fetched = [None; 4];
        let mut n = 0;
        for k in 0..4 {
            if let (Some(x), Some(y)) = (axes[0][k & 1].0, axes[1][k >> 1].0) {
                addrs[n] = l.surface.texel(x, y);
                fetched[k] = Some(n);
                n += 1;
            }
        }
        let mut vals = [[0u32; 4]; 4];
        if n > 0 {
            self.cache
                .fetch(l.surface.source(), &addrs[..n], &mut vals[..n]);
        }
        fetched.map(|f| f.map_or(l.border, |i| vals[i]))
    }

    /// Any point or linear footprint: [`TextureUnit::taps`], fetched, compared, filtered.
    #[allow(clippy::too_many_arguments)]
    fn footprint_general(
        &mut self,
        src: &Source,
        view: &TextureView,
        sampler: &Sampler,
        offset: [i32; 3],
        level: u32,
        pos: Pos,
        filter: FilterMode,
        ctx: &LaneCtx,
    ) -> [f32; 4] {
        let mut taps: [(Tap, f32); 8] = std::array::from_fn(|_| (Tap::Border, 0.0));
        let n = Self::taps(
            view, sampler, offset, level, pos, filter, ctx.slice, &mut taps,
        );
        let mut vals = [[0u32; 4]; 8];
        self.fetch_taps(src, sampler, false, &taps[..n], &mut vals);
        let cmp = sampler.desc().compare;
        if n == 1 && ctx.depth_ref.is_none() {
            return vals[0].map(f32::from_bits);
        }
        let mut acc = [0.0f32; 4];
        for i in 0..n {
            let w = taps[i].1;
            if w == 0.0 {
                continue;
            }
            let v = match (ctx.depth_ref, cmp) {
                (Some(r), Some(f)) => [f.test(r, f32::from_bits(vals[i][0])), 0.0, 0.0, 1.0],
                _ => vals[i].map(f32::from_bits),
            };
            for c in 0..4 {
                acc[c] += w * v[c];
            }
        }
        if ctx.depth_ref.is_some() {
            acc[1] = 0.0;
            acc[2] = 0.0;
            acc[3] = 1.0;
        }
        acc
    }

    /// The four texels of each lane's bilinear footprint at the view's base level, in
    /// gather order, as bits (compared to 0/1 floats when `depth_ref` is given).
    fn gather_texels(
        &mut self,
        tex: &Texture,
        view: &TextureView,
        sampler: &Sampler,
        quad: &Quad,
        depth_ref: Option<[f32; 4]>,
    ) -> Result<[[[u32; 4]; 4]; 4], TextureError> {
        check_view(tex, view)?;
        if tex.desc().sample_count > 1 {
            return invalid!("multisampled textures cannot be gathered");
        }
        if matches!(
            view.dimension,
            TextureViewDimension::D1 | TextureViewDimension::D3
        ) {
            return invalid!("gather needs a 2D, 2D-array, cube or cube-array view");
        }
        let integer = matches!(view.sample_type(), SampleType::Uint | SampleType::Sint);
        let src = Source {
            texture: tex,
            format: view.format,
            aspect: view.aspect,
        };
        let (pos, _) = self.setup(view, sampler, quad, Lod::Level([0.0; 4]));
        let cmp = sampler.desc().compare;
        let mut out = [[[0u32; 4]; 4]; 4];
        for lane in 0..4 {
            if quad.lanes >> lane & 1 == 0 {
                continue;
            }
            let slice = lane_slice(view, quad.array_index[lane]);
            let mut taps: [(Tap, f32); 8] = std::array::from_fn(|_| (Tap::Border, 0.0));
            let n = Self::taps(
                view,
                sampler,
                quad.offset,
                0,
                pos[lane],
                FilterMode::Linear,
                slice,
                &mut taps,
            );
            let mut vals = [[0u32; 4]; 8];
            self.fetch_taps(&src, sampler, integer, &taps[..n], &mut vals);
            // Taps are (i0,j0), (i1,j0), (i0,j1), (i1,j1); gather wants
            // (i0,j1), (i1,j1), (i1,j0), (i0,j0).
            let order = [2, 3, 1, 0];
            for (k, &o) in order.iter().enumerate() {
                out[lane][k] = match (depth_ref, cmp) {
                    (Some(r), Some(f)) => {
                        let r = clamp_ref(view.format, r[lane]);
                        [f.test(r, f32::from_bits(vals[o][0])).to_bits(), 0, 0, 0]
                    }
                    _ => vals[o],
                };
            }
        }
        Ok(out)
    }
}

// ---- helpers -----------------------------------------------------------------------------

fn check_view(tex: &Texture, view: &TextureView) -> Result<(), TextureError> {
    if view.texture_id() != tex.id() {
        return invalid!("the view belongs to another texture");
    }
    Ok(())
}

fn check_compare(view: &TextureView, sampler: &Sampler, compare: bool) -> Result<(), TextureError> {
    let has = sampler.desc().compare.is_some();
    if compare && !has {
        return invalid!("a depth-compare operation needs a comparison sampler");
    }
    if !compare && has {
        return invalid!("a comparison sampler can only be used by compare operations");
    }
    if compare && view.sample_type() != SampleType::Depth {
        return invalid!("depth compare on a view of {:?}", view.format);
    }
    Ok(())
}

/// Coordinate dimensions a view filters over.
fn view_dims(view: &TextureView) -> usize {
    match view.dimension {
        TextureViewDimension::D1 => 1,
        TextureViewDimension::D3 => 3,
        _ => 2,
    }
}

/// First storage slice for a lane: the base layer plus the clamped array (or cube) index.
/// (Always inlined: as a call it was compiled for the baseline CPU, out of the AVX2 body.)
#[inline(always)]
fn lane_slice(view: &TextureView, index: i32) -> u32 {
    let clamp = |n: u32| (index.max(0) as u32).min(n.saturating_sub(1));
    view.base_array_layer
        + match view.dimension {
            TextureViewDimension::D2Array => clamp(view.array_layer_count),
            TextureViewDimension::CubeArray => 6 * clamp(view.array_layer_count / 6),
            _ => 0,
        }
}

/// Vulkan clamps the reference to [0, 1] for unorm depth formats.
fn clamp_ref(format: TextureFormat, r: f32) -> f32 {
    match format {
        TextureFormat::Depth16Unorm
        | TextureFormat::Depth24Plus
        | TextureFormat::Depth24PlusStencil8 => r.clamp(0.0, 1.0),
        _ => r,
    }
}

/// Each lane's position: its coordinates, or for a cube view its face and the coordinates
/// on it (T4 step 1).
#[inline(always)]
fn positions(view: &TextureView, quad: &Quad) -> [Pos; 4] {
    let cube = view.is_cube();
    std::array::from_fn(|l| {
        let c = quad.coords[l];
        if cube {
            let fc = cube::face_coord(c);
            Pos::Cube {
                face: fc.face,
                s: fc.s,
                t: fc.t,
            }
        } else {
            Pos::Flat(c)
        }
    })
}

/// [`TextureUnit::lane_lods`] for a flat position with implicit LOD (plus `bias`): the
/// quad's one pair of (coarse) gradients gives every lane the same probe count, axis and
/// footprint, so they and the footprint's logarithm are computed once; only the bias and
/// the clamp are per lane, for the lanes in `lanes` (the others, never read, keep a
/// default). The lane path's operations in its order (the same bits).
#[inline(always)]
fn flat_implicit_lods(
    c: [[f32; 3]; 4],
    lanes: u8,
    size0: [u32; 3],
    dims: usize,
    sampler: &Sampler,
    bias: [f32; 4],
) -> [LaneLod; 4] {
    let gx = mask(sub3(c[1], c[0]), dims);
    let gy = mask(sub3(c[2], c[0]), dims);
    let (log, probes, axis) = footprint_lod(gx, gy, size0, sampler);
    let mut lods = [LaneLod::UNSAMPLED; 4];
    for (l, out) in lods.iter_mut().enumerate() {
        if lanes >> l & 1 == 0 {
            continue;
        }
        *out = LaneLod {
            lambda: clamp_lod(log + bias[l], sampler),
            probes,
            axis,
        };
    }
    lods
}

crate::multiversion! {
/// [`TextureUnit::sample_run`], compiled for the baseline and for AVX2+FMA (the same bits:
/// the filter's arithmetic is IEEE multiplies and adds, its conversions exact either way);
/// `out`, and the run's depth references (if any) and LODs (unless it has one), as long
/// as its quads at least.
fn sample_for_cpu(
    unit: &mut TextureUnit,
    tex: &Texture,
    view: &TextureView,
    sampler: &Sampler,
    run: &QuadRun,
    out: &mut [[[f32; 4]; 4]],
) -> Result<(), TextureError> {
    let QuadRun {
        quads,
        lods,
        depth_refs,
    } = *run;
    check_view(tex, view)?;
    if tex.desc().sample_count > 1 {
        return invalid!("multisampled textures can only be loaded, not sampled");
    }
    let st = view.sample_type();
    if matches!(st, SampleType::Uint | SampleType::Sint) {
        return invalid!(
            "integer texture {:?} cannot be sampled with a filter",
            view.format
        );
    }
    check_compare(view, sampler, depth_refs.is_some())?;
    let src = Source {
        texture: tex,
        format: view.format,
        aspect: view.aspect,
    };
    // A quad whose lanes all filter bilinearly on 2D levels takes the quad path, unless a
    // footprint there is not its short case. An 8-bit unorm source's texels are all finite:
    // it takes a copy of the loops whose weighted sums need no mask (one test per request,
    // none per texel).
    let finite = view.format.is_unorm8();
    let shared = lods.len() == 1;
    // The source's cache index, looked up when first needed and then kept for the run: a
    // run reads one source, and its index stays while no other source is looked up.
    let source = Cell::new(None);
    // The commonest run (a `textureSample`): the quad path's run of its own.
    if shared
        && lods[0] == Lod::Implicit
        && quad_path_applies(view, sampler, depth_refs.is_some())
    {
        if finite {
            quad::sample_implicit_run::<true>(unit, view, sampler, &src, &source, quads, out);
        } else {
            quad::sample_implicit_run::<false>(unit, view, sampler, &src, &source, quads, out);
        }
        return Ok(());
    }
    for (i, (quad, result)) in quads.iter().zip(out.iter_mut()).enumerate() {
        let depth_ref = depth_refs.map(|r| r[i]);
        let lod = if shared { lods[0] } else { lods[i] };
        let (pos, lods) = TextureUnit::lods_of(view, sampler, quad, lod);
        let at = QuadAt {
            src: &src,
            source: &source,
            pos: pos.as_ref(),
            lods: &lods,
        };
        *result = if finite {
            sample_quad_or_lanes::<true>(unit, view, sampler, quad, &at, depth_ref)
        } else {
            sample_quad_or_lanes::<false>(unit, view, sampler, quad, &at, depth_ref)
        };
    }
    Ok(())
}
}

/// What [`sample_for_cpu`] hands on for one quad: the source, its memoised cache index,
/// and the quad's LODs and (when they were needed for them) positions from
/// [`TextureUnit::lods_of`].
#[derive(Clone, Copy)]
struct QuadAt<'r, 't> {
    src: &'r Source<'t>,
    source: &'r Cell<Option<u32>>,
    pos: Option<&'r [Pos; 4]>,
    lods: &'r [LaneLod; 4],
}

/// [`sample_for_cpu`]'s quad: the quad path when it applies and takes the quad, else the
/// lanes one by one; `FINITE` as [`weighted_sum`]'s. (No closures: a closure can be
/// compiled on its own, for the baseline CPU.)
#[inline(always)]
fn sample_quad_or_lanes<const FINITE: bool>(
    unit: &mut TextureUnit,
    view: &TextureView,
    sampler: &Sampler,
    quad: &Quad,
    at: &QuadAt,
    depth_ref: Option<[f32; 4]>,
) -> [[f32; 4]; 4] {
    if quad_path_applies(view, sampler, depth_ref.is_some())
        && let Some(out) = sample_quad::<FINITE>(unit, view, sampler, quad, at)
    {
        return out;
    }
    sample_lanes::<FINITE>(unit, view, sampler, quad, at, depth_ref)
}

/// [`sample_for_cpu`]'s lanes, each through [`TextureUnit::sample_lane`]; `FINITE` as
/// [`weighted_sum`]'s.
#[inline(always)]
fn sample_lanes<const FINITE: bool>(
    unit: &mut TextureUnit,
    view: &TextureView,
    sampler: &Sampler,
    quad: &Quad,
    at: &QuadAt,
    depth_ref: Option<[f32; 4]>,
) -> [[f32; 4]; 4] {
    let made;
    let pos = match at.pos {
        Some(pos) => pos,
        None => {
            made = positions(view, quad);
            &made
        }
    };
    let mut out = [[0.0; 4]; 4];
    for lane in 0..4 {
        if quad.lanes >> lane & 1 == 0 {
            continue;
        }
        let ctx = LaneCtx {
            slice: lane_slice(view, quad.array_index[lane]),
            depth_ref: depth_ref.map(|r| clamp_ref(view.format, r[lane])),
            source: at.source,
        };
        out[lane] =
            unit.sample_lane::<FINITE>(at.src, view, sampler, quad, pos[lane], at.lods[lane], &ctx);
    }
    out
}

/// `Σ weights[k] · texels[k]` channel by channel, taps in order, a tap of weight zero
/// adding +0 ([`TextureUnit::bilinear_2d`]): on x86-64 one 128-bit register per tap (its
/// four channels), the same multiplies and adds in the same order.
///
/// `FINITE` says every texel is finite and not negative, as an 8-bit unorm source's are
/// (weights are finite and not negative always): a tap of weight zero then contributes
/// ±0 unmasked, and adding ±0 leaves the sum as adding +0 does, because the sum is never
/// −0 — it starts at +0, and under round-to-nearest x + y is −0 only when both are — so
/// the mask (there only for 0 · ∞ and 0 · NaN) is left out. Nor does the sum need its
/// start: the first term is never −0 (a product of two values not negative is +0 when it
/// is zero), and +0 plus any other value is that value. Same bits.
#[inline(always)]
fn weighted_sum<const FINITE: bool>(weights: [f32; 4], texels: &[[u32; 4]; 4]) -> [f32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86-64 baseline; the loads read four-channel texels
        // and the store writes a four-float array.
        unsafe {
            let (mut acc, from) = if FINITE {
                let first = _mm_loadu_ps(texels[0].as_ptr().cast());
                (_mm_mul_ps(_mm_set1_ps(weights[0]), first), 1)
            } else {
                (_mm_setzero_ps(), 0)
            };
            for (k, &wk) in weights.iter().enumerate().skip(from) {
                let w = _mm_set1_ps(wk);
                let term = _mm_mul_ps(w, _mm_loadu_ps(texels[k].as_ptr().cast()));
                if FINITE {
                    acc = _mm_add_ps(acc, term);
                } else {
                    let live = _mm_cmpneq_ps(w, _mm_setzero_ps());
                    acc = _mm_add_ps(acc, _mm_and_ps(term, live));
                }
            }
            let mut out = [0.0f32; 4];
            _mm_storeu_ps(out.as_mut_ptr(), acc);
            out
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut acc = [0.0f32; 4];
        for k in 0..4 {
            let wk = weights[k];
            for ch in 0..4 {
                let term = wk * f32::from_bits(texels[k][ch]);
                acc[ch] += if FINITE || wk != 0.0 { term } else { 0.0 };
            }
        }
        acc
    }
}

#[cfg(test)]
mod tests;
