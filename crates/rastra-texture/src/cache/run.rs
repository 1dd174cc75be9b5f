//! The texel cache's runs of 2×2 fetches ([`FetchRun`]): the quad path's way of making a
//! quad's requests with the L1's hot state held in locals (T4 "Texture cache"; the
//! accesses, their order and their results are the cache's own, `cache`).

use super::*;

impl TexelCache {
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
        let (same_x, same_y) = (lx[0] == lx[1], ly[0] == ly[1]);
        let mut out = [[0u32; 4]; 4];
        let w = self.access(s, lx[0], ly[0]);
        out[0] = self.texel(w, at[0]);
        if same_x {
            out[1] = self.texel(w, at[1]);
        }
        if same_y {
            out[2] = self.texel(w, at[2]);
            if same_x {
                out[3] = self.texel(w, at[3]);
            }
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
        let key = s.key.at(lx, ly);
        let slot = hint_slot(&key, s.hash);
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
    #[inline(never)]
    fn search(&mut self, s: &Surface, key: &LineKey, slot: usize) -> usize {
        // (The access searching now is the one since the last give-back that did not hit
        // through its hint.)
        self.give_back(1);
        let c = &mut *self.cache;
        let w = c.search(&s.src, key, s.hash, s.dims);
        c.hints[slot] = w as u32;
        (self.tags, self.hints, self.data) = c.places();
        w
    }

    /// Puts the clock and the counts so far into the cache: the accesses since the last
    /// give-back are the clock's advance, and all of them but the last `searching` hit
    /// through their hints.
    #[inline(always)]
    fn give_back(&mut self, searching: u64) {
        let accesses = self.clock - self.cache.clock;
        self.cache.stats.l1_accesses += accesses;
        self.cache.stats.l1_hits += accesses - searching;
        self.cache.clock = self.clock;
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
