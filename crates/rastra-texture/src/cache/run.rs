//! The texel cache's runs of 2×2 fetches ([`FetchRun`]): the quad path's way of making a
//! quad's requests with the L1's hot state held in locals (T4 "Texture cache"; the
//! accesses, their order and their results are the cache's own, `cache`).

use super::*;

/// The lines a quad's footprints on one level touch, as a grid ([`TexelCache::access_grid`]):
/// line columns `x0` to `x0 + w − 1` and rows `y0` to `y0 + h − 1` (w · h ≤ [`GRID_LINES`]),
/// and in `mask` bit `row · w + column` set for each line to access.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LineGrid {
    pub x0: u32,
    pub y0: u32,
    pub w: u32,
    pub h: u32,
    pub mask: u64,
}

/// Lines a [`LineGrid`] can name: the bits of its mask.
pub(crate) const GRID_LINES: usize = 64;

impl TexelCache {
    /// Accesses every line of grid `g` of surface `s` once, row by row, left to right, and
    /// copies each line's texels, as it is accessed, to `staged` at its grid index times
    /// the texels of a line — what a hardware texture unit's tag stage and data read do for
    /// a quad: its taps' addresses coalesced into the distinct lines, each looked up once
    /// and read out to the filter (so a later line of the grid may evict an earlier one).
    /// `staged` holds [`GRID_LINES`] lines; a line is the L1's ([`TexelCache::line_texels`]).
    #[inline(always)]
    pub(crate) fn access_grid(&mut self, s: &Surface, g: &LineGrid, staged: &mut [[u32; 4]]) {
        debug_assert!(g.w >= 1 && g.h >= 1 && (g.w * g.h) as usize <= GRID_LINES);
        let lt = self.line_texels;
        assert!(staged.len() >= GRID_LINES * lt);
        let mut run = self.run();
        let row_bits = u64::MAX >> (64 - g.w.clamp(1, 64));
        for row in 0..g.h.min(GRID_LINES as u32) {
            // (row · w < 64: w · h ≤ 64.)
            let mut m = g.mask >> ((row * g.w) & 63) & row_bits;
            while m != 0 {
                let column = m.trailing_zeros();
                m &= m - 1;
                let way = run.access(s, g.x0 + column, g.y0 + row);
                let at = (row * g.w + column) as usize & (GRID_LINES - 1);
                run.copy_line(way, &mut staged[at * lt..at * lt + lt]);
            }
        }
    }

    /// Texels per L1 line (a power of two: line sides are).
    #[inline(always)]
    pub(crate) fn line_texels(&self) -> usize {
        self.line_texels
    }

    /// A run of 2×2 fetches that keeps the L1's hot state in the run ([`FetchRun`]).
    #[inline(always)]
    pub fn run(&mut self) -> FetchRun<'_> {
        let (tags, hints, data) = self.places();
        FetchRun {
            tags,
            hints,
            data,
            line_texels: self.line_texels,
            clock: self.clock,
            cache: self,
        }
    }

    /// Where the tags, the hints and the texels are (fresh pointers, made after every
    /// other use of the arrays: nothing else touches them while a run holds them).
    #[inline(always)]
    fn places(&mut self) -> (*mut (LineKey, u64), *const u32, *const [u32; 4]) {
        (
            self.tags.as_mut_ptr(),
            self.hints.as_ptr(),
            self.data.as_ptr(),
        )
    }
}

/// A run of 2×2 fetches ([`TexelCache::run`]): each footprint's one, two or four lines
/// accessed as [`TexelCache::access_hashed`] accesses a line, in the order its taps name
/// them, every tap in a line read right away — but with the L1's hot state — where its
/// tags, way hints and texels are, and its clock — held in the run, so a hit through its
/// way hint reads and writes nothing of the cache but the hint, the tag's use time and the
/// texels. Every access advances the clock by one, so the accesses are the clock's advance
/// since it was last given back, and every one of them hit through its hint but those that
/// went on to a set search (which counts its own hit or miss). The run gives the clock and
/// the counts back before each set search (which stamps with the clock, counts itself and
/// may fill) and when it ends (dropped).
pub(crate) struct FetchRun<'c> {
    tags: *mut (LineKey, u64),
    hints: *const u32,
    data: *const [u32; 4],
    line_texels: usize,
    clock: u64,
    cache: &'c mut TexelCache,
}

impl FetchRun<'_> {
    /// The texels of footprint `f` on surface `s`, taps in its order: the line of the first
    /// tap accessed, every tap in it read; then each further line the same way.
    #[inline(always)]
    pub fn fetch(&mut self, s: &Surface, f: &Lines2x2) -> [[u32; 4]; 4] {
        let (lx, ly) = (f.lx, f.ly);
        let at = f.at.map(|a| a as usize);
        let w = self.access(s, lx[0], ly[0]);
        if (lx[0] == lx[1]) & (ly[0] == ly[1]) {
            return at.map(|a| self.texel(w, a));
        }
        self.further_lines(s, w, lx, ly, at)
    }

    /// The rest of a footprint whose first line (`lx[0]`, `ly[0]`) was accessed already, in
    /// way `w`, and is not its only line: its taps read, each further line accessed and
    /// its taps read.
    #[inline(always)]
    fn further_lines(
        &mut self,
        s: &Surface,
        w: usize,
        lx: [u32; 2],
        ly: [u32; 2],
        at: [usize; 4],
    ) -> [[u32; 4]; 4] {
        let (same_x, same_y) = (lx[0] == lx[1], ly[0] == ly[1]);
        let mut out = [[0u32; 4]; 4];
        out[0] = self.texel(w, at[0]);
        if same_x {
            out[1] = self.texel(w, at[1]);
        }
        if same_y {
            out[2] = self.texel(w, at[2]);
        }
        if !same_x {
            let w = self.access(s, lx[1], ly[0]);
            out[1] = self.texel(w, at[1]);
            if same_y {
                out[3] = self.texel(w, at[3]);
            }
        }
        if !same_y {
            let w = self.access(s, lx[0], ly[1]);
            out[2] = self.texel(w, at[2]);
            if same_x {
                out[3] = self.texel(w, at[3]);
            }
            if !same_x {
                let w = self.access(s, lx[1], ly[1]);
                out[3] = self.texel(w, at[3]);
            }
        }
        out
    }

    /// [`TexelCache::access_hashed`] of line (lx, ly) of `s`.
    #[inline(always)]
    fn access(&mut self, s: &Surface, lx: u32, ly: u32) -> usize {
        self.access_at(s, lx, ly, s.hint_of(lx, ly) as usize)
    }

    /// [`FetchRun::access`] with the line's way-hint slot, `slot`, found already.
    #[inline(always)]
    fn access_at(&mut self, s: &Surface, lx: u32, ly: u32, slot: usize) -> usize {
        let key = s.key.at(lx, ly);
        self.clock += 1;
        // SAFETY: `hints` and `tags` are the cache's arrays, made after their last other
        // use ([`TexelCache::places`]) and never resized; a slot is below `HINT_SLOTS`
        // (the hash's top bits), a hint is a way `search` returned or its initial 0, and
        // ways index `tags` (see `access_hashed`).
        let w = unsafe { *self.hints.add(slot) } as usize;
        debug_assert!(w < self.cache.tags.len());
        let t = unsafe { &mut *self.tags.add(w) };
        if t.0 == key {
            t.1 = self.clock;
            return w;
        }
        self.search(s, &key, slot)
    }

    /// [`TexelCache::access_hashed`] past the hint, with the run's state given back to the
    /// cache for the search and taken again after it.
    #[inline(always)]
    fn search(&mut self, s: &Surface, key: &LineKey, slot: usize) -> usize {
        // (Fields passed by value, so the run itself never leaves registers for the call.)
        let w = search_given_back(self.cache, self.clock, s, *key, slot);
        // (The cache has the clock now: taken back from it, not kept across the call.)
        self.clock = self.cache.clock;
        (self.tags, self.hints, self.data) = self.cache.places();
        w
    }

    /// Puts the clock and the counts so far into the cache ([`give_back`]).
    #[inline(always)]
    fn give_back(&mut self, searching: u64) {
        give_back(self.cache, self.clock, searching);
    }

    /// The texels of the line way `way` holds, copied to `out` (one line's worth): a 4×4
    /// line, the default, as one fixed-size copy.
    #[inline(always)]
    fn copy_line(&self, way: usize, out: &mut [[u32; 4]]) {
        debug_assert!(way < self.cache.tags.len() && out.len() == self.line_texels);
        debug_assert_eq!(
            self.cache.data.len(),
            self.cache.tags.len() * self.line_texels
        );
        // SAFETY: as `texel`'s: way `way` holds a line, so its `line_texels` texels lie in
        // `data`.
        let line = unsafe {
            std::slice::from_raw_parts(self.data.add(way * self.line_texels), self.line_texels)
        };
        match (
            <&[_; 16]>::try_from(line),
            <&mut [_; 16]>::try_from(&mut *out),
        ) {
            (Ok(line), Ok(out)) => *out = *line,
            _ => out.copy_from_slice(line),
        }
    }

    /// Texel `offset` (row offset plus column, inside the line) of the line way `way` holds.
    #[inline(always)]
    fn texel(&self, way: usize, offset: usize) -> [u32; 4] {
        debug_assert!(way < self.cache.tags.len() && offset < self.line_texels);
        debug_assert_eq!(
            self.cache.data.len(),
            self.cache.tags.len() * self.line_texels
        );
        // SAFETY: `data` holds `line_texels` texels for each of the `tags.len()` ways: the
        // first fill sizes it so (and `data` was taken after the last fill). A way an
        // access returns holds a line — a hit's was filled before, a miss's just now —
        // and indexes `tags`; a place inside a line (column below the line's width, row
        // offset below its height times its width) is below `line_texels`.
        unsafe { *self.data.add(way * self.line_texels + offset) }
    }
}

impl Drop for FetchRun<'_> {
    fn drop(&mut self) {
        self.give_back(0);
    }
}

/// Puts a run's clock and its counts so far into `cache`: the accesses since the last
/// give-back are the clock's advance, and all of them but the last `searching` hit through
/// their hints.
#[inline(always)]
fn give_back(cache: &mut TexelCache, clock: u64, searching: u64) {
    let accesses = clock - cache.clock;
    cache.stats.l1_accesses += accesses;
    cache.stats.l1_hits += accesses - searching;
    cache.clock = clock;
}

/// [`FetchRun::search`] out of line: the run's clock given back (the access searching now
/// is the one since the last give-back that did not hit through its hint), the set
/// searched, the hint set.
#[inline(never)]
fn search_given_back(
    cache: &mut TexelCache,
    clock: u64,
    s: &Surface,
    key: LineKey,
    slot: usize,
) -> usize {
    give_back(cache, clock, 1);
    let w = cache.search(&s.src, &key, s.hash, s.dims);
    cache.hints[slot] = w as u32;
    w
}
