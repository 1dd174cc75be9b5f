//! The texel cache model (T4 "Texture cache"): a small per-unit L1 that holds *decoded*
//! texels, backed by an L2 of raw texture memory, backed by memory.
//!
//! - **L1** lines are `line_width`×`line_height` texel squares of one mip slice (default 4×4,
//!   the size of a BC block, so one BC/ETC/ASTC-4×4 block fills exactly one line). A line is
//!   tagged by (texture, texture generation, view format and aspect, mip, slice, line x/y):
//!   decoded texels depend on the view's interpretation (sRGB or not), and a write to the
//!   texture bumps its generation so stale lines never hit (the tag holds those four as the
//!   L1's index for them, numbered per L1 until it is invalidated). Each texel is held as four
//!   32-bit register values (f32 bits or integers), 16 bytes — T4's "fatter" decoded texels.
//!   **Decoding happens at fill**: compressed blocks are decoded (each distinct block once
//!   per fill) and sRGB converted to linear there, never per sample. LRU replacement within
//!   a set (sets: see below).
//! - **L2** lines are `l2_line_bytes` of texture memory (in the tiled layout of `storage`),
//!   tagged by address and generation; a miss fetches the whole line from memory
//!   (`bytes_from_memory`). The L2 keeps tags only — its data would equal memory.
//!
//! Default geometry (`CacheConfig::default`): L1 256 lines × 16 texels × 16 B = 64 KiB of
//! decoded texels — as many texels as a 16 KiB cache of 4-byte texels holds, GCN's L1 per
//! compute unit (the 64-line L1 of earlier versions missed 46% more often on
//! textured_cubes, whose 16× anisotropic footprints sweep many lines per tile) — 4-way (64
//! sets); L2 256 KiB of 64-byte lines, 16-way (256 sets). With `storage`'s 8×8
//! Morton tiles a 64-byte L2 line holds a 4×4 square of 4-byte texels, or 4×2 BC1 / 2×2
//! BC3 blocks. L1 sets are indexed by the Morton interleave of the line coordinates (plus a
//! hash of texture, mip and slice), so neighbouring lines never compete for a set.
//!
//! **Determinism.** The L1 belongs to one texture unit (`TextureUnit`). The L2 is either the
//! unit's own (standalone use: looked up as fills happen) or shared by many units running on
//! different threads: then the unit only *logs* the L2 lines its fills read
//! ([`L2Request`]), and the owner of the shared L2 replays the logs in a fixed order
//! ([`L2Cache::replay`]) — so the L2's figures do not depend on thread timing. A long run of
//! logs is replayed by several threads at once, each owning a share of the L2's sets
//! ([`L2Cache::shares`]): a line's set alone decides its hits, misses and replacements, so
//! each share replaying every log in order, looking up only its own sets' lines, finds what
//! one serial replay finds (tested). A log can be split by share where it is made
//! ([`L2Split`]: each share's requests together, in their order), so that each share reads
//! only its own. Texel values
//! never depend on cache state: a line holds exactly what decoding the current memory
//! through the same view would produce.
//!
//! A *request* (T4's unit of "misses per request") is one filter footprint: the 1, 2×2 or
//! 2×2×2 texels of a point or (bi/tri)linear tap. Each distinct L1 line a footprint touches
//! is one L1 access.
//!
//! **Lookups.** Both levels find a line through *way hints* before searching its set: a
//! small table, indexed by a hash of the line's tag, that remembers the way the line was
//! last found or placed in. A tag lives in one way at most, so a hinted way that holds the
//! tag is the way the search would find — same hit, same LRU update; a stale hint only costs
//! the search. Hints are a property of this simulator, not of the modelled hardware: every
//! hit, miss and statistic is the set-associative LRU cache's (tested against caches that
//! search every access).

use crate::compressed::{MAX_BLOCK_TEXELS, decode_block};
use crate::format::{TextureAspect, TextureFormat, Unorm8Decoder};
use crate::storage::{TILE, Texture, TextureDimension, demorton8, morton8};

mod run;
pub(crate) use run::{GRID_LINES, LineGrid};

/// Texel-cache geometry. Every field is clamped to at least 1 (ways to at most the line
/// count, L1 lines to 65536, L2 lines to `MAX_LINES`; line sides rounded down to powers
/// of two ≤ 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// L1 capacity in lines.
    pub l1_lines: u32,
    pub l1_ways: u32,
    /// Texels per L1 line across and down.
    pub line_width: u32,
    pub line_height: u32,
    /// L2 capacity in bytes.
    pub l2_bytes: u32,
    pub l2_line_bytes: u32,
    pub l2_ways: u32,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            l1_lines: 256,
            l1_ways: 4,
            line_width: 4,
            line_height: 4,
            l2_bytes: 256 * 1024,
            l2_line_bytes: 64,
            l2_ways: 16,
        }
    }
}

/// Largest L2 line count a configuration may ask for (bounds the model's memory).
pub const MAX_LINES: u32 = 1 << 20;

impl CacheConfig {
    fn sanitized(self) -> CacheConfig {
        let pow2 = |v: u32| {
            let v = v.clamp(1, 16);
            1 << (31 - v.leading_zeros())
        };
        let l1_lines = self.l1_lines.clamp(1, 1 << 16);
        let l2_line_bytes = self.l2_line_bytes.clamp(1, 1 << 16);
        let l2_lines = (self.l2_bytes / l2_line_bytes).clamp(1, MAX_LINES);
        CacheConfig {
            l1_lines,
            l1_ways: self.l1_ways.clamp(1, l1_lines),
            line_width: pow2(self.line_width),
            line_height: pow2(self.line_height),
            l2_bytes: l2_lines * l2_line_bytes,
            l2_line_bytes,
            l2_ways: self.l2_ways.clamp(1, l2_lines),
        }
    }
}

/// What the texel cache did. Read with `TextureUnit::stats`, reset with `reset_stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TexelCacheStats {
    /// Filter footprints looked up (one per point, bilinear or trilinear-in-3D tap).
    pub requests: u64,
    /// Texels read by those footprints.
    pub texel_reads: u64,
    /// Line lookups: one per distinct line of a footprint, or on the quad path
    /// (`unit/quad.rs`) one per distinct line of a quad's level, its taps coalesced.
    pub l1_accesses: u64,
    pub l1_hits: u64,
    pub l1_misses: u64,
    /// Texels brought into L1 by fills (misses × line texels).
    pub l1_texels_filled: u64,
    pub l2_accesses: u64,
    pub l2_hits: u64,
    pub l2_misses: u64,
    pub bytes_from_memory: u64,
    /// Compressed blocks decoded by L1 fills.
    pub blocks_decoded: u64,
}

impl TexelCacheStats {
    /// Adds another unit's counts.
    pub fn merge(&mut self, o: &TexelCacheStats) {
        self.requests += o.requests;
        self.texel_reads += o.texel_reads;
        self.l1_accesses += o.l1_accesses;
        self.l1_hits += o.l1_hits;
        self.l1_misses += o.l1_misses;
        self.l1_texels_filled += o.l1_texels_filled;
        self.l2_accesses += o.l2_accesses;
        self.l2_hits += o.l2_hits;
        self.l2_misses += o.l2_misses;
        self.bytes_from_memory += o.bytes_from_memory;
        self.blocks_decoded += o.blocks_decoded;
    }

    /// L1 line misses per request.
    pub fn line_misses_per_request(&self) -> f64 {
        self.l1_misses as f64 / self.requests.max(1) as f64
    }

    /// Texels filled into L1 per request — T4's "misses per request" counted in texels
    /// (about 1.25 for mip-mapped, screen-aligned bilinear access).
    pub fn texel_misses_per_request(&self) -> f64 {
        self.l1_texels_filled as f64 / self.requests.max(1) as f64
    }

    /// L1 hit rate over accesses.
    pub fn l1_hit_rate(&self) -> f64 {
        self.l1_hits as f64 / self.l1_accesses.max(1) as f64
    }
}

/// Taps of one footprint the cache resolves together: a bilinear footprint on two levels.
const MAX_FOOTPRINT: usize = 8;

/// Slots of the way-hint table ([`TexelCache::access_hashed`]): four times the default
/// L1's 256 lines, so resident lines rarely share a slot.
const HINT_BITS: u32 = 10;
const HINT_SLOTS: usize = 1 << HINT_BITS;

/// Sources one L1 can tell apart between invalidations (a tag's source field is 24 bits;
/// the all-ones value marks an empty way). Reaching it empties the L1 (a cold start).
const MAX_SOURCES: usize = (1 << 24) - 1;

/// What decoded texels depend on besides their position: the texture and its generation
/// (a write bumps it, so stale lines never hit) and the view's interpretation of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SourceKey {
    tex: u64,
    generation: u64,
    format: TextureFormat,
    aspect: TextureAspect,
}

/// An L1 line tag as two words: the line's position (line x, line y) and its surface —
/// the L1's index for the source ([`TexelCache::source_index`]), the absolute mip level and
/// the storage slice. Equal tags name the same decoded texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineKey {
    // Compared in this order: the line's position first, as it differs most often.
    pos: u64,
    surface: u64,
}

/// The hash of a tag's fields other than the line position (fixed for a footprint's level
/// and slice, so [`Surface`] computes it once).
fn surface_hash(tex: u64, generation: u64, level: u32, slice: u32) -> u64 {
    let mut h = tex.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for v in [generation, level as u64, slice as u64] {
        h = (h ^ v).wrapping_mul(0x100_0000_01B3).rotate_left(23);
    }
    h
}

/// The way-hint slot of line (`lx`, `ly`) of a surface whose [`surface_hash`] is `hash`:
/// the position mixed with the hash in 32-bit multiplies (cheap enough to take on every
/// access of a run, [`run::FetchRun`]).
#[inline(always)]
pub(crate) fn hint_slot(lx: u32, ly: u32, hash: u64) -> usize {
    let seed = (hash ^ hash >> 32) as u32;
    let h = (lx ^ seed).wrapping_mul(0x9E37_79B1) ^ ly.wrapping_mul(0x85EB_CA77);
    (h.wrapping_mul(0xC2B2_AE3D) >> (32 - HINT_BITS)) as usize
}

impl LineKey {
    /// The tag of no line (an empty way).
    const EMPTY: LineKey = LineKey {
        pos: u64::MAX,
        surface: u64::MAX,
    };

    #[inline]
    fn new(source: u32, level: u32, slice: u32, lx: u32, ly: u32) -> LineKey {
        debug_assert!((source as usize) < MAX_SOURCES && level < 256);
        LineKey {
            pos: lx as u64 | (ly as u64) << 32,
            surface: (source as u64) << 40 | (level as u64) << 32 | slice as u64,
        }
    }

    /// The same surface's line (lx, ly).
    #[inline]
    fn at(self, lx: u32, ly: u32) -> LineKey {
        LineKey {
            pos: lx as u64 | (ly as u64) << 32,
            ..self
        }
    }

    fn lx(&self) -> u32 {
        self.pos as u32
    }

    fn ly(&self) -> u32 {
        (self.pos >> 32) as u32
    }

    fn level(&self) -> u32 {
        (self.surface >> 32) as u32 & 0xff
    }

    fn slice(&self) -> u32 {
        self.surface as u32
    }

    /// Set index: the Morton interleave of the line's x and y (so any square of
    /// neighbouring lines spreads over distinct sets, as texture caches index by tile
    /// coordinate bits), offset by `h`, the hash of the rest of the tag
    /// ([`surface_hash`]), so different mips, slices and textures do not all start
    /// in set 0.
    #[inline]
    fn set(&self, h: u64, sets: usize) -> usize {
        // The low 16 bits of `v` with a zero bit put after each, a byte at a time.
        let spread = |v: u32| {
            let byte = |b: u32| SPREAD_BYTE[(b & 0xff) as usize] as u64;
            byte(v) | byte(v >> 8) << 16
        };
        let morton = spread(self.lx()) | spread(self.ly()) << 1;
        let v = morton ^ (h >> 40);
        // The default geometry has a power-of-two set count: a mask, not a division.
        if sets.is_power_of_two() {
            (v & (sets as u64 - 1)) as usize
        } else {
            (v % sets as u64) as usize
        }
    }
}

/// Byte `i` with its bits spread to the even bit positions (bit k to bit 2k): half a Morton
/// interleave, looked up instead of computed by shifts and masks.
const SPREAD_BYTE: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut k = 0;
        while k < 8 {
            t[i] |= ((i as u16 >> k) & 1) << (2 * k);
            k += 1;
        }
        i += 1;
    }
    t
};

/// A set's search: the way whose tag is `key`, if one is (a tag lives in one way at most),
/// and the way a miss replaces — the first empty one (last use 0), else the least recently
/// used, the first of equals. Every way is compared without a branch per way (which way
/// holds a line is unpredictable).
#[inline(always)]
fn find_in_set<S: AsRef<[(LineKey, u64)]> + ?Sized>(
    set: &S,
    key: &LineKey,
) -> (Option<usize>, usize) {
    let set = set.as_ref();
    let mut found = None;
    let (mut oldest, mut oldest_use) = (0, u64::MAX);
    for (w, &(tag, used)) in set.iter().enumerate() {
        let hit = (tag.pos == key.pos) & (tag.surface == key.surface);
        found = if hit { Some(w) } else { found };
        let older = used < oldest_use;
        oldest = if older { w } else { oldest };
        oldest_use = if older { used } else { oldest_use };
    }
    (found, oldest)
}

/// The shared L2: tags of memory lines, LRU.
#[derive(Debug)]
pub struct L2Cache {
    /// The geometry of the whole cache model (L1 fields included), as given.
    config: CacheConfig,
    /// Line size and set count: which set an address's line lives in.
    geometry: L2Sets,
    ways: usize,
    /// (line address, generation) per way, `sets × ways`; [`L2Cache::EMPTY`] in a way that
    /// holds nothing.
    tags: Vec<(u64, u64)>,
    /// Last use of each way (0: never used — empty ways are taken first).
    last: Vec<u64>,
    clock: u64,
    /// Way hints, as the L1's ([`TexelCache::access_hashed`]): per slot (a hash of the line
    /// address), the way that line was last found or placed in; `hint_shift` picks a slot.
    hints: Vec<u32>,
    hint_shift: u32,
    /// The way hints of [`L2Cache::shares`] past the first (which uses `hints`).
    share_hints: Vec<Vec<u32>>,
}

impl L2Cache {
    /// An empty L2 of `config`'s L2 geometry.
    pub fn new(config: &CacheConfig) -> L2Cache {
        let c = config.sanitized();
        let geometry = L2Sets::new(config);
        let (ways, sets) = (c.l2_ways as usize, geometry.sets);
        L2Cache {
            config: *config,
            geometry,
            ways,
            tags: vec![L2Cache::EMPTY; sets * ways],
            last: vec![0; sets * ways],
            clock: 0,
            // Twice as many slots as lines (a power of two), so lines rarely share one.
            hints: vec![0; 2 * (sets * ways).next_power_of_two()],
            hint_shift: 64 - (2 * (sets * ways).next_power_of_two()).trailing_zeros(),
            share_hints: Vec::new(),
        }
    }

    /// The tag of a way holding nothing: no line address reaches `u64::MAX` (addresses are
    /// a memory region above bit 40 and an offset; lines are at least a byte).
    const EMPTY: (u64, u64) = (u64::MAX, u64::MAX);

    /// The cache geometry this L2 was made with; the units in front of it use its L1 fields.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// Replays L2 requests logged by a unit's fills (in the log's order), counting hits,
    /// misses and memory traffic into `stats`. `l2_accesses` was counted at fill time.
    pub fn replay(&mut self, log: &[L2Request], stats: &mut TexelCacheStats) {
        let misses = self.whole().replay_log(log);
        self.clock += log.len() as u64;
        self.count(log.len(), misses, stats);
    }

    /// Adds the figures of `requests` replayed requests of which `misses` missed to `stats`.
    pub fn count(&self, requests: usize, misses: u64, stats: &mut TexelCacheStats) {
        stats.l2_hits += requests as u64 - misses;
        stats.l2_misses += misses;
        stats.bytes_from_memory += misses * self.geometry.line_bytes;
    }

    /// Splits the L2 into `n` shares of consecutive sets (fewer when it has fewer sets),
    /// each with its own way hints, for replaying logs on several threads at once: a line
    /// lives in one set, and a set's hits, misses and replacements depend only on the order
    /// of the requests to that set, so shares that each replay every log in order — looking
    /// up only their sets' requests — find the hits and misses one serial replay finds.
    /// After the shares' replays, [`L2Cache::advance`] by the requests replayed.
    pub fn shares(&mut self, n: usize) -> Vec<L2Share<'_>> {
        let n = n.clamp(1, self.geometry.sets);
        while self.share_hints.len() < n - 1 {
            self.share_hints.push(vec![0; self.hints.len()]);
        }
        let (ways, clock, hint_shift) = (self.ways, self.clock, self.hint_shift);
        let geometry = self.geometry;
        let (mut tags, mut last) = (&mut self.tags[..], &mut self.last[..]);
        let hints = std::iter::once(&mut self.hints).chain(&mut self.share_hints);
        let bound = geometry.share_bounds(n);
        let mut first_set = 0;
        let mut out = Vec::with_capacity(n);
        for (k, hints) in hints.take(n).enumerate() {
            let end_set = bound(k + 1);
            let count = (end_set - first_set) * ways;
            let (t, rest_t) = std::mem::take(&mut tags).split_at_mut(count);
            let (l, rest_l) = std::mem::take(&mut last).split_at_mut(count);
            (tags, last) = (rest_t, rest_l);
            out.push(L2Share {
                sets: first_set..end_set,
                view: SetsView {
                    first_way: first_set * ways,
                    ways,
                    tags: t,
                    last: l,
                    hints,
                    hint_shift,
                    clock,
                },
                geometry,
            });
            first_set = end_set;
        }
        out
    }

    /// The whole L2 as one share (what `shares(1)` holds, without a list).
    fn whole(&mut self) -> L2Share<'_> {
        L2Share {
            sets: 0..self.geometry.sets,
            view: SetsView {
                first_way: 0,
                ways: self.ways,
                tags: &mut self.tags,
                last: &mut self.last,
                hints: &mut self.hints,
                hint_shift: self.hint_shift,
                clock: self.clock,
            },
            geometry: self.geometry,
        }
    }

    /// Moves the clock past `requests` requests the shares replayed (every later use is
    /// then later than theirs).
    pub fn advance(&mut self, requests: u64) {
        self.clock += requests;
    }

    /// Forgets every line (a cold L2).
    pub fn invalidate(&mut self) {
        self.tags.fill(L2Cache::EMPTY);
        self.last.fill(0);
    }

    /// One access outside a replay (the tests'): a one-request replay of `address`.
    #[cfg(test)]
    fn access(&mut self, address: u64, generation: u64) -> bool {
        let log = [L2Request {
            address,
            generation,
        }];
        let mut stats = TexelCacheStats::default();
        self.replay(&log, &mut stats);
        stats.l2_hits == 1
    }
}

/// A share of an L2's sets ([`L2Cache::shares`]): their tags and use times, its own way
/// hints and clock.
pub struct L2Share<'a> {
    sets: std::ops::Range<usize>,
    view: SetsView<'a>,
    geometry: L2Sets,
}

impl L2Share<'_> {
    /// Replays `logs` in order, looking up the requests whose line falls in this share's
    /// sets; returns each log's misses among them. (A log may be just this share's part of
    /// a split one, [`L2Split::split`].)
    pub fn replay(&mut self, logs: &[&[L2Request]]) -> Vec<u64> {
        logs.iter().map(|log| self.replay_log(log)).collect()
    }

    /// [`L2Share::replay`] of one log.
    fn replay_log(&mut self, log: &[L2Request]) -> u64 {
        match self.geometry.locator() {
            Locator::Pow2(l) => self.replay_with(log, l),
            Locator::Div(l) => self.replay_with(log, l),
        }
    }

    /// The replay's loop with the line and set of an address found by `at` (chosen once
    /// per log); returns the misses.
    #[inline(always)]
    fn replay_with(&mut self, log: &[L2Request], at: impl Locate) -> u64 {
        let sets = self.sets.clone();
        let mut misses = 0;
        for r in log {
            let (line, mix, set) = at.locate(r.address);
            if sets.contains(&set) {
                misses += !self.view.lookup(line, r.generation, mix, set) as u64;
            }
        }
        misses
    }
}

/// Where the L2 keeps an address: its line (`l2_line_bytes` of memory) and that line's set
/// among the L2's sets — one function for the replay and for logs split by share
/// ([`L2Split::split`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L2Sets {
    line_bytes: u64,
    sets: usize,
}

impl L2Sets {
    /// The L2 geometry of `config` (as [`L2Cache::new`] makes it).
    pub fn new(config: &CacheConfig) -> L2Sets {
        let c = config.sanitized();
        let lines = (c.l2_bytes / c.l2_line_bytes) as usize;
        L2Sets {
            line_bytes: c.l2_line_bytes as u64,
            sets: (lines / c.l2_ways as usize).max(1),
        }
    }

    /// The way to locate addresses: shifts and masks for power-of-two sizes (the default),
    /// else divisions.
    #[inline(always)]
    fn locator(&self) -> Locator {
        if self.line_bytes.is_power_of_two() && self.sets.is_power_of_two() {
            Locator::Pow2(Pow2 {
                shift: self.line_bytes.trailing_zeros(),
                mask: self.sets - 1,
            })
        } else {
            Locator::Div(Div {
                line_bytes: self.line_bytes,
                sets: self.sets,
            })
        }
    }

    /// Share `k` of `parts` holds sets `sets·k/parts ..< sets·(k+1)/parts` (`parts` clamped
    /// to `1..=sets`, as [`L2Cache::shares`] does).
    fn share_bounds(&self, parts: usize) -> impl Fn(usize) -> usize {
        let (sets, parts) = (self.sets, parts.clamp(1, self.sets));
        move |k| sets * k / parts
    }

    /// How to split logs into `parts` shares ([`L2Split::split`]), `parts` clamped as
    /// [`L2Cache::shares`] clamps it (and to 65,535: a share is a 16-bit number per set).
    /// Logs split into a number of shares the replay does not use are replayed whole.
    pub fn splitter(&self, parts: usize) -> L2Split {
        let parts = parts.clamp(1, self.sets.min(u16::MAX as usize));
        let bound = self.share_bounds(parts);
        let mut share_of_set = vec![0u16; self.sets];
        for k in 0..parts {
            share_of_set[bound(k)..bound(k + 1)].fill(k as u16);
        }
        L2Split {
            geometry: *self,
            parts,
            share_of_set,
        }
    }
}

/// Splits L2 logs by share of the L2's sets ([`L2Sets::splitter`]): the geometry, and
/// which share holds each set.
#[derive(Clone, Debug)]
pub struct L2Split {
    geometry: L2Sets,
    parts: usize,
    share_of_set: Vec<u16>,
}

impl L2Split {
    /// Puts `log`'s requests in order of the share ([`L2Cache::shares`]) whose sets hold
    /// their lines, each share's in their order in the log, and returns where each share's
    /// run ends. A set's requests keep their order, and a set's hits, misses and
    /// replacements depend on nothing else, so replaying the split log — whole, or each run
    /// by its share — finds what replaying the log finds (tested); a share then reads only
    /// its own requests.
    pub fn split(&self, log: &mut Vec<L2Request>) -> Vec<usize> {
        if self.parts == 1 {
            return vec![log.len()];
        }
        let shares: Vec<u16> = match self.geometry.locator() {
            Locator::Pow2(l) => self.shares_of(log, l),
            Locator::Div(l) => self.shares_of(log, l),
        };
        let mut runs: Vec<Vec<L2Request>> = vec![Vec::new(); self.parts];
        for (r, &k) in log.iter().zip(&shares) {
            runs[k as usize].push(*r);
        }
        log.clear();
        let mut ends = Vec::with_capacity(self.parts);
        for run in &runs {
            log.extend_from_slice(run);
            ends.push(log.len());
        }
        ends
    }

    #[inline(always)]
    fn shares_of(&self, log: &[L2Request], at: impl Locate) -> Vec<u16> {
        log.iter()
            .map(|r| self.share_of_set[at.locate(r.address).2])
            .collect()
    }
}

/// How [`L2Sets`] finds an address's line and set.
enum Locator {
    Pow2(Pow2),
    Div(Div),
}

/// An address's line, that line's hash (which picks its way hint) and its set.
trait Locate: Copy {
    fn line(&self, address: u64) -> u64;
    fn set_of_hash(&self, hash: usize) -> usize;

    #[inline(always)]
    fn locate(&self, address: u64) -> (u64, u64, usize) {
        let line = self.line(address);
        let mix = line.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (line, mix, self.set_of_hash(((mix >> 32) ^ line) as usize))
    }
}

#[derive(Clone, Copy)]
struct Pow2 {
    shift: u32,
    mask: usize,
}

impl Locate for Pow2 {
    #[inline(always)]
    fn line(&self, address: u64) -> u64 {
        address >> self.shift
    }
    #[inline(always)]
    fn set_of_hash(&self, hash: usize) -> usize {
        hash & self.mask
    }
}

#[derive(Clone, Copy)]
struct Div {
    line_bytes: u64,
    sets: usize,
}

impl Locate for Div {
    #[inline(always)]
    fn line(&self, address: u64) -> u64 {
        address / self.line_bytes
    }
    #[inline(always)]
    fn set_of_hash(&self, hash: usize) -> usize {
        hash % self.sets
    }
}

/// What an L2 lookup touches: the tags and use times of a run of sets (`tags[0]` is way
/// `first_way` of the whole cache), way hints, and the clock.
struct SetsView<'a> {
    first_way: usize,
    ways: usize,
    tags: &'a mut [(u64, u64)],
    last: &'a mut [u64],
    hints: &'a mut [u32],
    hint_shift: u32,
    clock: u64,
}

impl SetsView<'_> {
    /// Looks up memory line `line` (hash `mix`) in its set `set`; true on a hit. A miss
    /// allocates it in the set's least recently used way (the first empty one, if any).
    #[inline(always)]
    fn lookup(&mut self, line: u64, generation: u64, mix: u64, set: usize) -> bool {
        let ways = set * self.ways - self.first_way..(set + 1) * self.ways - self.first_way;
        self.clock += 1;
        // The hinted way first: a line lives in one way at most, so a way holding it is the
        // one the search would find (a hint outside this run of sets is stale).
        let slot = (mix >> self.hint_shift) as usize;
        let hinted = (self.hints[slot] as usize).wrapping_sub(self.first_way);
        if self.tags.get(hinted) == Some(&(line, generation)) {
            self.last[hinted] = self.clock;
            return true;
        }
        let tags = &self.tags[ways.clone()];
        if let Some(w) = tags.iter().position(|&t| t == (line, generation)) {
            self.last[ways.start + w] = self.clock;
            self.hints[slot] = (self.first_way + ways.start + w) as u32;
            return true;
        }
        let last = &self.last[ways.clone()];
        let victim = last
            .iter()
            .enumerate()
            .min_by_key(|&(_, &used)| used)
            .map_or(0, |(i, _)| i);
        self.tags[ways.start + victim] = (line, generation);
        self.last[ways.start + victim] = self.clock;
        self.hints[slot] = (self.first_way + ways.start + victim) as u32;
        false
    }
}

/// A texel position the unit wants: absolute mip level, storage slice, texel x, y — all in
/// range (the unit resolves addressing and borders first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TexelAddr {
    pub level: u32,
    pub slice: u32,
    pub x: u32,
    pub y: u32,
}

/// How the texels are read: which texture and which interpretation of it.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub texture: &'a Texture,
    pub format: TextureFormat,
    pub aspect: TextureAspect,
}

/// One level and slice of a source as the L1 sees it: everything in a line tag but the
/// line's position, its set hash, and the line shape — fixed for every footprint a lane
/// takes on that level, so made once per level rather than per request.
#[derive(Clone, Copy)]
pub(crate) struct Surface<'a> {
    src: Source<'a>,
    /// The tag with line position (0, 0).
    key: LineKey,
    hash: u64,
    dims: (u32, u32),
}

impl<'a> Surface<'a> {
    /// The texels' source.
    pub fn source(&self) -> &Source<'a> {
        &self.src
    }

    /// Texel (x, y) of this level and slice.
    pub fn texel(&self, x: u32, y: u32) -> TexelAddr {
        TexelAddr {
            level: self.key.level(),
            slice: self.key.slice(),
            x,
            y,
        }
    }

    /// The way-hint slot of line (`lx`, `ly`) ([`hint_slot`]), for [`run::FetchRun`]'s accesses.
    #[inline(always)]
    pub fn hint_of(&self, lx: u32, ly: u32) -> u32 {
        hint_slot(lx, ly, self.hash) as u32
    }

    /// The line shape as the shifts of its sides (powers of two, `CacheConfig`): the same
    /// for every level and slice of a texture.
    #[inline(always)]
    pub fn line_shifts(&self) -> [u32; 2] {
        [self.dims.0.trailing_zeros(), self.dims.1.trailing_zeros()]
    }

    /// The lines and places of the 2×2 footprint of columns `xs` and rows `ys`.
    #[inline(always)]
    pub fn footprint_2x2(&self, xs: [u32; 2], ys: [u32; 2]) -> Lines2x2 {
        let [sx, sy] = self.line_shifts();
        let (lw, lh) = self.dims;
        let (px, py) = (xs.map(|x| x & (lw - 1)), ys.map(|y| (y & (lh - 1)) << sx));
        Lines2x2 {
            lx: xs.map(|x| x >> sx),
            ly: ys.map(|y| y >> sy),
            at: [py[0] + px[0], py[0] + px[1], py[1] + px[0], py[1] + px[1]],
        }
    }
}

/// Surfaces a texel cache keeps ([`TexelCache::surface_sized`]): a trilinear quad's two
/// levels.
const RECENT_SURFACES: usize = 2;

/// A surface [`TexelCache::surface_sized`] made: what it was made for (`source`, absolute
/// `level`, storage `slice`) and the parts of it that do not borrow the texture, with the
/// level's size.
#[derive(Clone, Copy, Debug)]
struct RecentSurface {
    source: u32,
    level: u32,
    slice: u32,
    key: LineKey,
    hash: u64,
    dims: (u32, u32),
    size: [u32; 2],
}

impl RecentSurface {
    /// No surface: no source has this index (sources are fewer than `MAX_SOURCES`).
    const NONE: RecentSurface = RecentSurface {
        source: u32::MAX,
        level: 0,
        slice: 0,
        key: LineKey::EMPTY,
        hash: 0,
        dims: (0, 0),
        size: [0, 0],
    };
}

/// Where a 2×2 footprint's taps lie in a surface's lines ([`Surface::footprint_2x2`]): the
/// line columns of its left and right taps, the line rows of its top and bottom taps, and
/// each tap's place in its line (row offset plus column), taps in fetch order — (x0, y0),
/// (x1, y0), (x0, y1), (x1, y1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lines2x2 {
    pub lx: [u32; 2],
    pub ly: [u32; 2],
    pub at: [u32; 4],
}

/// The memory line (of `lb` bytes, the L2's line size) holding byte address `a`: a shift
/// for the usual power-of-two size.
#[inline(always)]
fn l2_line_of(lb: u64, a: u64) -> u64 {
    if lb.is_power_of_two() {
        a >> lb.trailing_zeros()
    } else {
        a / lb
    }
}

/// A fill reads the L2 line at byte `address` (of a texture at `generation`): counted, and
/// looked up in the unit's own L2 or logged for the shared one.
#[inline]
fn request_l2(l2: &mut L2Port, stats: &mut TexelCacheStats, address: u64, generation: u64) {
    stats.l2_accesses += 1;
    let request = L2Request {
        address,
        generation,
    };
    match l2 {
        L2Port::Own(l2) => l2.replay(&[request], stats),
        L2Port::Log(log) => log.push(request),
    }
}

/// One L2 line read by an L1 fill: the line's address (the texture's memory region in the
/// top bits, `Texture::memory_base`, byte offset below) and the texture's generation at the time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L2Request {
    pub address: u64,
    pub generation: u64,
}

/// How a unit's L1 reaches its L2.
#[derive(Debug)]
pub(crate) enum L2Port {
    /// The unit's own L2, looked up at fill time.
    Own(L2Cache),
    /// A shared L2 elsewhere: fills log their requests for a later [`L2Cache::replay`].
    Log(Vec<L2Request>),
}

/// One texture unit's L1 plus its port to an L2.
#[derive(Debug)]
pub(crate) struct TexelCache {
    config: CacheConfig,
    sets: usize,
    ways: usize,
    line_texels: usize,
    /// (tag, last use) per way, `sets × ways`; an empty way is ([`LineKey::EMPTY`], 0).
    tags: Vec<(LineKey, u64)>,
    /// The sources the tags name, by index (cleared with the tags).
    sources: Vec<SourceKey>,
    /// The index [`TexelCache::source_index`] returned last.
    last_source: usize,
    /// Way hints: per slot (a hash of a line's tag), the way a search last found or
    /// filled a line of that slot in — checked before searching.
    hints: Box<[u32; HINT_SLOTS]>,
    /// Decoded texels, `line_texels` per way — allocated by the first fill (every
    /// access before it misses: the tags start empty), so a unit that never samples, as
    /// most pipelines' are, costs no texel storage.
    data: Vec<[u32; 4]>,
    clock: u64,
    /// L2 line size in bytes (the granularity fills read memory at).
    l2_line_bytes: u64,
    /// Scratch: the L2 lines the current fill has read.
    fill_lines: Vec<u64>,
    /// The surfaces the last fills of the commonest kind were for, and what those fills
    /// found out about them (see [`QuickFill`]), replaced in turn — kept so the next fill
    /// of such a surface skips the format and layout tests (a trilinear footprint fills
    /// from two levels, alternately). Cleared with the sources (their indices name
    /// surfaces). (Only x86-64 has the pair decode the plans serve.)
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    quick: [Option<QuickFill>; QUICK_SURFACES],
    /// The `quick` entry the next plan replaces.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    quick_next: usize,
    /// The last surfaces [`TexelCache::surface_sized`] made, handed out again while their
    /// source, level and slice are asked for (a quad's levels are mostly its neighbour's);
    /// forgotten with the sources (their indices name them).
    recent: [RecentSurface; RECENT_SURFACES],
    /// The `recent` entry the next new surface replaces.
    recent_next: usize,
    /// Scratch: the compressed block the current fill decoded last (kept here so a fill
    /// neither allocates nor clears a block-sized buffer).
    block: Box<[[f32; 4]; MAX_BLOCK_TEXELS]>,
    pub l2: L2Port,
    pub stats: TexelCacheStats,
}

impl TexelCache {
    /// An empty L1; `shared_l2` selects a logging port instead of an own L2.
    pub fn new(config: CacheConfig, shared_l2: bool) -> TexelCache {
        let config = config.sanitized();
        let l2 = if shared_l2 {
            L2Port::Log(Vec::new())
        } else {
            L2Port::Own(L2Cache::new(&config))
        };
        let ways = config.l1_ways as usize;
        let sets = (config.l1_lines as usize / ways).max(1);
        let line_texels = (config.line_width * config.line_height) as usize;
        TexelCache {
            config,
            sets,
            ways,
            line_texels,
            tags: vec![(LineKey::EMPTY, 0); sets * ways],
            sources: Vec::new(),
            last_source: 0,
            hints: Box::new([0; HINT_SLOTS]),
            data: Vec::new(),
            clock: 0,
            l2_line_bytes: config.l2_line_bytes as u64,
            fill_lines: Vec::new(),
            quick: [None; QUICK_SURFACES],
            quick_next: 0,
            recent: [RecentSurface::NONE; RECENT_SURFACES],
            recent_next: 0,
            block: Box::new([[0.0; 4]; MAX_BLOCK_TEXELS]),
            l2,
            stats: TexelCacheStats::default(),
        }
    }

    /// Empties the L1 (a cold start); the L2 keeps its contents.
    pub fn invalidate(&mut self) {
        self.tags.fill((LineKey::EMPTY, 0));
        self.sources.clear();
        self.quick = [None; QUICK_SURFACES];
        self.recent = [RecentSurface::NONE; RECENT_SURFACES];
    }

    /// The L1's index for `src`: sources get indices in the order they are first seen
    /// after an invalidation, so equal indices mean equal sources.
    pub(crate) fn source_index(&mut self, src: &Source) -> u32 {
        let key = SourceKey {
            tex: src.texture.id(),
            generation: src.texture.generation(),
            format: src.format,
            aspect: src.aspect,
        };
        if self.sources.get(self.last_source) == Some(&key) {
            return self.last_source as u32;
        }
        let i = match self.sources.iter().rposition(|s| *s == key) {
            Some(i) => i,
            None => {
                if self.sources.len() >= MAX_SOURCES {
                    self.invalidate();
                }
                self.sources.push(key);
                self.sources.len() - 1
            }
        };
        self.last_source = i;
        i as u32
    }

    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// Line shape for a texture: 1D textures use one row of the same number of texels.
    fn line_dims(&self, tex: &Texture) -> (u32, u32) {
        if tex.desc().dimension == TextureDimension::D1 {
            (self.config.line_width * self.config.line_height, 1)
        } else {
            (self.config.line_width, self.config.line_height)
        }
    }

    /// The [`Surface`] of level `level` (absolute) and storage slice `slice` of `src`.
    #[cfg(test)]
    fn surface<'a>(&mut self, src: &Source<'a>, level: u32, slice: u32) -> Surface<'a> {
        let source = self.source_index(src);
        self.surface_of(src, source, level, slice)
    }

    /// The [`Surface`] of level `level` (absolute) and storage slice `slice` of `src`, whose
    /// [`TexelCache::source_index`] is `source` (an index stays a source's until a different
    /// source is looked up).
    pub(crate) fn surface_of<'a>(
        &self,
        src: &Source<'a>,
        source: u32,
        level: u32,
        slice: u32,
    ) -> Surface<'a> {
        let (tex, generation) = (src.texture.memory_region(), src.texture.generation());
        Surface {
            src: *src,
            key: LineKey::new(source, level, slice, 0, 0),
            hash: surface_hash(tex, generation, level, slice),
            dims: self.line_dims(src.texture),
        }
    }

    /// [`TexelCache::surface_of`] with the level's width and height (in texels) — one of
    /// the last surfaces made when it matches, so a run of quads sampling the same levels
    /// makes each once.
    #[inline(always)]
    pub(crate) fn surface_sized<'a>(
        &mut self,
        src: &Source<'a>,
        source: u32,
        level: u32,
        slice: u32,
    ) -> (Surface<'a>, [u32; 2]) {
        for r in &self.recent {
            if r.source == source && r.level == level && r.slice == slice {
                let surface = Surface {
                    src: *src,
                    key: r.key,
                    hash: r.hash,
                    dims: r.dims,
                };
                return (surface, r.size);
            }
        }
        self.make_surface(src, source, level, slice)
    }

    /// [`TexelCache::surface_sized`]'s new surface, remembered in place of the oldest.
    #[inline(never)]
    fn make_surface<'a>(
        &mut self,
        src: &Source<'a>,
        source: u32,
        level: u32,
        slice: u32,
    ) -> (Surface<'a>, [u32; 2]) {
        let surface = self.surface_of(src, source, level, slice);
        let [w, h, _] = src.texture.desc().mip_size(level);
        self.recent[self.recent_next] = RecentSurface {
            source,
            level,
            slice,
            key: surface.key,
            hash: surface.hash,
            dims: surface.dims,
            size: [w, h],
        };
        self.recent_next = (self.recent_next + 1) % RECENT_SURFACES;
        (surface, [w, h])
    }

    /// One bilinear request whose four taps are all texels of `s`: (x0, y0), (x1, y0),
    /// (x0, y1), (x1, y1) for `xs` = [x0, x1], `ys` = [y0, y1], read in that order.
    /// Exactly what [`TexelCache::fetch`] does with those taps (the same accesses in the
    /// same order: a line is accessed where a tap first names it, and every tap in it read
    /// right away), with the distinct lines known from the two line columns and rows.
    #[inline(always)]
    pub fn fetch_2x2(&mut self, s: &Surface, xs: [u32; 2], ys: [u32; 2]) -> [[u32; 4]; 4] {
        self.fetch_lines_2x2(s, &s.footprint_2x2(xs, ys))
    }

    /// [`TexelCache::fetch_2x2`] of a footprint whose lines and places are known.
    #[inline(always)]
    pub fn fetch_lines_2x2(&mut self, s: &Surface, f: &Lines2x2) -> [[u32; 4]; 4] {
        self.count_2x2_requests(1);
        self.fetch_lines_2x2_uncounted(s, f)
    }

    /// Counts `n` 2×2 requests (four texel reads each) that
    /// [`TexelCache::fetch_lines_2x2_uncounted`] makes — once for a run of requests rather
    /// than once per request.
    #[inline(always)]
    pub fn count_2x2_requests(&mut self, n: u64) {
        self.stats.requests += n;
        self.stats.texel_reads += 4 * n;
    }

    /// [`TexelCache::fetch_lines_2x2`] without counting the request (the caller counts it,
    /// [`TexelCache::count_2x2_requests`]); the line accesses count themselves. A run of one
    /// request ([`TexelCache::run`]).
    #[inline(always)]
    pub fn fetch_lines_2x2_uncounted(&mut self, s: &Surface, f: &Lines2x2) -> [[u32; 4]; 4] {
        self.run().fetch(s, f)
    }

    /// Reads one footprint's texels (one request) into `out`.
    pub fn fetch(&mut self, src: &Source, taps: &[TexelAddr], out: &mut [[u32; 4]]) {
        self.stats.requests += 1;
        self.stats.texel_reads += taps.len() as u64;
        let dims = self.line_dims(src.texture);
        let n = taps.len().min(out.len());
        let mut start = 0;
        while start < n {
            let end = (start + MAX_FOOTPRINT).min(n);
            self.fetch_footprint(src, dims, &taps[start..end], &mut out[start..end]);
            start = end;
        }
    }

    /// [`TexelCache::fetch`] for at most [`MAX_FOOTPRINT`] taps: one access per distinct
    /// line (level, slice, line x, line y), in the order the taps first name them, reading
    /// out every tap in that line right away (so a later access of the same footprint may
    /// evict the line without changing results).
    fn fetch_footprint(
        &mut self,
        src: &Source,
        (lw, lh): (u32, u32),
        taps: &[TexelAddr],
        out: &mut [[u32; 4]],
    ) {
        // Line sides are powers of two (`CacheConfig`): shifts and masks, no divisions.
        let (sx, sy) = (lw.trailing_zeros(), lh.trailing_zeros());
        let (tex, generation) = (src.texture.memory_region(), src.texture.generation());
        let source = self.source_index(src);
        let n = taps.len().min(out.len()).min(MAX_FOOTPRINT);
        // Per tap: its line (level, slice, line x, line y) as one word, and its texel's
        // place inside the line.
        let mut lines = [0u128; MAX_FOOTPRINT];
        let mut places = [0usize; MAX_FOOTPRINT];
        for (k, t) in taps[..n].iter().enumerate() {
            lines[k] = (t.level as u128) << 96
                | (t.slice as u128) << 64
                | ((t.x >> sx) as u128) << 32
                | (t.y >> sy) as u128;
            places[k] = (((t.y & (lh - 1)) << sx) | (t.x & (lw - 1))) as usize;
        }
        let mut done = 0u32;
        for i in 0..n {
            if done >> i & 1 != 0 {
                continue;
            }
            let t = &taps[i];
            let key = LineKey::new(source, t.level, t.slice, t.x >> sx, t.y >> sy);
            let hash = surface_hash(tex, generation, t.level, t.slice);
            let way = self.access_hashed(src, &key, hash, (lw, lh));
            let line = &self.data[way * self.line_texels..(way + 1) * self.line_texels];
            for j in i..n {
                if lines[j] == lines[i] {
                    out[j] = line[places[j]];
                    done |= 1 << j;
                }
            }
        }
    }

    /// One L1 access: returns the way holding `key` (whose [`surface_hash`] is `hash`),
    /// filling it on a miss. The way its hint slot names is checked first: a tag lives in
    /// one way only, so a way that holds `key` is the way the set's search would find (same
    /// hit, same LRU update), found without searching. A stale hint (the line moved on or
    /// the slot went to another line) only costs the search.
    #[inline(always)]
    fn access_hashed(&mut self, src: &Source, key: &LineKey, hash: u64, dims: (u32, u32)) -> usize {
        self.stats.l1_accesses += 1;
        self.clock += 1;
        let slot = hint_slot(key.lx(), key.ly(), hash);
        let w = self.hints[slot] as usize;
        debug_assert!(w < self.tags.len());
        // SAFETY: hints hold ways `search` returned (indices of `tags`) or their initial 0
        // (`tags` is never empty: `sets · ways` ≥ 1), and `tags` never changes length after
        // `new`.
        let t = unsafe { self.tags.get_unchecked_mut(w) };
        if t.0 == *key {
            t.1 = self.clock;
            self.stats.l1_hits += 1;
            return w;
        }
        let w = self.search(src, key, hash, dims);
        self.hints[slot] = w as u32;
        w
    }

    /// [`TexelCache::access_hashed`] past the hint: the set's search, and the fill
    /// on a miss.
    #[inline(never)]
    fn search(&mut self, src: &Source, key: &LineKey, hash: u64, dims: (u32, u32)) -> usize {
        let set = key.set(hash, self.sets);
        let base = set * self.ways;
        // The default four ways as a fixed-size array (the loops unrolled), else a slice.
        let ways = &self.tags[base..base + self.ways];
        let (found, oldest) = match <&[_; 4]>::try_from(ways) {
            Ok(four) => find_in_set(four, key),
            Err(_) => find_in_set(ways, key),
        };
        if let Some(w) = found {
            self.tags[base + w].1 = self.clock;
            self.stats.l1_hits += 1;
            return base + w;
        }
        self.stats.l1_misses += 1;
        self.stats.l1_texels_filled += self.line_texels as u64;
        let victim = base + oldest;
        self.tags[victim] = (*key, self.clock);
        self.fill(src, key, dims, victim);
        victim
    }

    /// Fills way `way` with the decoded texels of line `key`: reads the elements (texels or
    /// blocks) it covers through the L2, decodes each compressed block once.
    /// Out of line: misses are rare next to hits, and the hit path stays small.
    #[inline(never)]
    #[cold]
    fn fill(&mut self, src: &Source, key: &LineKey, (lw, lh): (u32, u32), way: usize) {
        if self.data.is_empty() {
            self.data = vec![[0; 4]; self.tags.len() * self.line_texels];
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(q) = self
            .quick
            .iter()
            .flatten()
            .find(|q| q.surface == key.surface)
            .copied()
            && self.fill_quick(&q, src, key, (lw, lh), way)
        {
            return;
        }
        let tex = src.texture;
        let format = src.format;
        let (bw, bh) = format.block_dims();
        let [ew, eh] = tex.mip_elements(key.level());
        let elem_bytes = format.block_size() as u64;
        // The L2 lines this fill has read (kept in `self` so fills do not allocate).
        let mut l2_lines = std::mem::take(&mut self.fill_lines);
        l2_lines.clear();
        let block: &mut [[f32; 4]; MAX_BLOCK_TEXELS] = &mut self.block;
        // The element `block` holds, for this fill.
        let mut decoded: Option<(u32, u32)> = None;
        // 8-bit unorm texels (the commonest) decode through tables picked once per fill.
        let unorm8 = format.unorm8_decoder();
        let decode = |t: &[u8], out: &mut [u32; 4]| match &unorm8 {
            Some(d) => d.decode_into(t, out),
            None => *out = format.decode_bits(src.aspect, t),
        };
        let line = &mut self.data[way * self.line_texels..(way + 1) * self.line_texels];
        // The common line: uncompressed texels of a single-sampled 2D (or 3D) level, the
        // line a square of at most a tile wholly inside the level — then it is an aligned
        // square of an 8×8 Morton tile (`storage`), its texels consecutive elements in
        // Morton order, read as one run. The same L2 lines in the same order and the same
        // values as the general walk below.
        let square = bw == 1
            && bh == 1
            && lw == lh
            && lw <= TILE
            && tex.desc().dimension != TextureDimension::D1
            && tex.desc().sample_count <= 1
            && (key.lx() + 1) * lw <= ew
            && (key.ly() + 1) * lh <= eh;
        let run = square
            .then(|| tex.element_offset(key.level(), key.slice(), key.lx() * lw, key.ly() * lh))
            .flatten()
            .and_then(|base| Some((base, tex.elements_at(base, (lw * lh) as usize)?)));
        if let Some((base, bytes)) = run {
            let eb = elem_bytes as usize;
            let lb = self.l2_line_bytes;
            let first_address = tex.memory_base() | base;
            let line_of = |a: u64| l2_line_of(lb, a);
            let n = (lw * lh) as usize;
            let single = line_of(first_address) == line_of(first_address + (n * eb) as u64 - 1);
            if single {
                // The run lies in one L2 line (a 4×4 line of 4-byte texels is one 64-byte
                // line): one request, then the texels in memory order, each to its place.
                let l = line_of(first_address);
                l2_lines.push(l);
                request_l2(&mut self.l2, &mut self.stats, l * lb, tex.generation());
                #[cfg(target_arch = "x86_64")]
                if let Some(d) = &unorm8
                    && d.four_channels()
                    && n.is_multiple_of(2)
                    && crate::cpu::wide()
                {
                    // SAFETY: `wide()` is true only when the CPU has AVX2 and FMA; the
                    // decoder takes four-byte texels.
                    unsafe { fill_pairs_avx2(d, &bytes[..n * eb], line, lw) };
                    self.fill_lines = l2_lines;
                    if let Some((origin, tiles_x)) = tex.slice_origin(key.level(), key.slice()) {
                        self.quick[self.quick_next] = Some(QuickFill {
                            surface: key.surface,
                            elems: [ew, eh],
                            origin,
                            tiles_x,
                            decoder: *d,
                        });
                        self.quick_next = (self.quick_next + 1) % QUICK_SURFACES;
                    }
                    return;
                }
                for (m, t) in bytes.chunks_exact(eb).take(n).enumerate() {
                    let (tx, ty) = demorton8(m as u32);
                    decode(t, &mut line[(ty * lw + tx) as usize]);
                }
                self.fill_lines = l2_lines;
                return;
            }
            let mut last_line = None;
            for ty in 0..lh {
                for tx in 0..lw {
                    let m = morton8(tx, ty) as usize;
                    let address = first_address + (m * eb) as u64;
                    let (first, last) = (line_of(address), line_of(address + elem_bytes - 1));
                    for l in first..=last {
                        if last_line != Some(l) && !l2_lines.contains(&l) {
                            l2_lines.push(l);
                            request_l2(&mut self.l2, &mut self.stats, l * lb, tex.generation());
                        }
                        last_line = Some(l);
                    }
                    let t = &bytes[m * eb..(m + 1) * eb];
                    decode(t, &mut line[(ty * lw + tx) as usize]);
                }
            }
            self.fill_lines = l2_lines;
            return;
        }
        for ty in 0..lh {
            for tx in 0..lw {
                let (x, y) = (key.lx() * lw + tx, key.ly() * lh + ty);
                let (ex, ey) = if bw == 1 && bh == 1 {
                    (x, y)
                } else {
                    (x / bw, y / bh)
                };
                let out = &mut line[(ty * lw + tx) as usize];
                *out = [0; 4];
                if ex >= ew || ey >= eh {
                    continue;
                }
                let Some(offset) = tex.element_offset(key.level(), key.slice(), ex, ey) else {
                    continue;
                };
                let address = tex.memory_base() | offset;
                if decoded != Some((ex, ey)) {
                    // A new element: its bytes come through the L2.
                    let lb = self.l2_line_bytes;
                    let line_of = |a: u64| l2_line_of(lb, a);
                    let first = line_of(address);
                    let last = line_of(address + elem_bytes - 1);
                    for l in first..=last {
                        if !l2_lines.contains(&l) {
                            l2_lines.push(l);
                            request_l2(&mut self.l2, &mut self.stats, l * lb, tex.generation());
                        }
                    }
                }
                let Some(bytes) = tex.element_at(offset) else {
                    continue;
                };
                if format.is_compressed() {
                    if decoded != Some((ex, ey)) {
                        if decode_block(format, bytes, block).is_err() {
                            *block = [[0.0; 4]; MAX_BLOCK_TEXELS];
                        }
                        decoded = Some((ex, ey));
                        self.stats.blocks_decoded += 1;
                    }
                    let c = block[((y % bh) * bw + x % bw) as usize];
                    *out = c.map(f32::to_bits);
                } else {
                    decoded = Some((ex, ey));
                    decode(bytes, out);
                }
            }
        }
        self.fill_lines = l2_lines;
    }
}

/// Surfaces [`TexelCache`] keeps fill plans for.
const QUICK_SURFACES: usize = 4;

/// What a fill of the commonest kind — a square line of four-byte unorm8 texels (one
/// texel per element, single-sampled, not 1D, the line inside the level) read from one L2
/// line and decoded in pairs on an AVX2 CPU — found out about its surface: the level's
/// size in elements and the format's decoder. The next fill of the same surface
/// ([`TexelCache::fill_quick`]) only redoes what depends on the line.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct QuickFill {
    surface: u64,
    elems: [u32; 2],
    /// The surface's first byte and its level's 8×8 tiles across
    /// ([`Texture::slice_origin`]).
    origin: u64,
    tiles_x: u32,
    decoder: Unorm8Decoder,
}

impl TexelCache {
    /// [`TexelCache::fill`] of line `key` on the surface `q` was made for, when the line is
    /// inside the level and its texels lie in one L2 line: the L2 request and the pair
    /// decode the general path makes for such a line (so the same accesses and the same
    /// values). Returns false, having done nothing, for any other line.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn fill_quick(
        &mut self,
        q: &QuickFill,
        src: &Source,
        key: &LineKey,
        (lw, lh): (u32, u32),
        way: usize,
    ) -> bool {
        let tex = src.texture;
        if (key.lx() + 1) * lw > q.elems[0] || (key.ly() + 1) * lh > q.elems[1] {
            return false;
        }
        let n = (lw * lh) as usize;
        // `Texture::element_offset` of the line's first texel, with the surface's part
        // known: its tile's four-byte texels, then its Morton place in the tile.
        let (ex, ey) = (key.lx() * lw, key.ly() * lh);
        let tile = (ey / TILE) as u64 * q.tiles_x as u64 + (ex / TILE) as u64;
        let base =
            q.origin + 4 * (tile * (TILE * TILE) as u64 + morton8(ex % TILE, ey % TILE) as u64);
        debug_assert_eq!(
            Some(base),
            tex.element_offset(key.level(), key.slice(), ex, ey)
        );
        let Some(bytes) = tex.elements_at(base, n) else {
            return false;
        };
        let lb = self.l2_line_bytes;
        let first_address = tex.memory_base() | base;
        let line_of = |a: u64| l2_line_of(lb, a);
        let l = line_of(first_address);
        if l != line_of(first_address + 4 * n as u64 - 1) {
            return false;
        }
        request_l2(&mut self.l2, &mut self.stats, l * lb, tex.generation());
        let line = &mut self.data[way * self.line_texels..(way + 1) * self.line_texels];
        // SAFETY: the plan is only made on a CPU with AVX2 and FMA (`wide()`), for a
        // decoder of four-byte texels.
        unsafe { fill_pairs_avx2(&q.decoder, bytes, line, lw) };
        true
    }
}

/// The single-L2-line fill's decode for 4-byte unorm8 texels: `bytes` holds a square line's
/// texels in Morton order (`storage`), two at a time through
/// [`Unorm8Decoder::decode_pair_avx2`] — the values the per-texel decode gives — each pair
/// stored at its row-major place in `line` (`lw` texels a row). Morton elements 2k and
/// 2k + 1 differ only in bit 0 of x: the same row, columns x and x + 1 (x even), so a pair
/// is one 32-byte store.
///
/// # Safety
/// The CPU must support AVX2 and FMA, and `d` must decode four-byte texels.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fill_pairs_avx2(d: &Unorm8Decoder, bytes: &[u8], line: &mut [[u32; 4]], lw: u32) {
    // The default line, 4×4 texels (exactly: a line four wide and another height takes the
    // loop below): the eight pairs' places are constants.
    if let (4, Ok(bytes), Ok(line)) = (
        lw,
        <&[u8; 64]>::try_from(bytes),
        <&mut [[u32; 4]; 16]>::try_from(&mut *line),
    ) {
        /// Where pair p (Morton elements 2p, 2p + 1) starts in a 4×4 line, row-major.
        const AT: [usize; 8] = {
            let mut at = [0; 8];
            let mut p = 0;
            while p < 8 {
                let (x, y) = demorton8(2 * p as u32);
                at[p] = (4 * y + x) as usize;
                p += 1;
            }
            at
        };
        for (p, &at) in AT.iter().enumerate() {
            let pair = bytes[8 * p..8 * p + 8].try_into().expect("eight bytes");
            // SAFETY: AVX2 and FMA (this function's contract); four-byte texels.
            unsafe { decode_pair_to(d, pair, line, at) };
        }
        return;
    }
    for (p, pair) in bytes.chunks_exact(8).enumerate() {
        let (tx, ty) = demorton8(2 * p as u32);
        debug_assert!(tx % 2 == 0 && tx + 1 < lw);
        let pair = pair.try_into().expect("chunks of eight bytes");
        // SAFETY: AVX2 and FMA (this function's contract); four-byte texels.
        unsafe { decode_pair_to(d, pair, line, (ty * lw + tx) as usize) };
    }
}

/// [`fill_pairs_avx2`]'s step: a texel pair decoded and stored as one 32-byte store at
/// texels `at` and `at + 1` of `line`.
///
/// # Safety
/// The CPU must support AVX2 and FMA, and `d` must decode four-byte texels.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn decode_pair_to(d: &Unorm8Decoder, pair: &[u8; 8], line: &mut [[u32; 4]], at: usize) {
    use std::arch::x86_64::*;
    // SAFETY: AVX2 and FMA, four-byte texels (this function's contract).
    let v = unsafe { d.decode_pair_avx2(pair) };
    let texels: &mut [[u32; 4]; 2] = (&mut line[at..at + 2]).try_into().expect("two texels");
    // SAFETY: a 32-byte store into two four-word texels.
    unsafe { _mm256_storeu_ps(texels.as_mut_ptr().cast(), v) };
}

#[cfg(test)]
mod tests;
