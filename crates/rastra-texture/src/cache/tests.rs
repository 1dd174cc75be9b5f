//! Tests of the texel cache: the way hints against searching models, the quick fills and
//! the 2×2 fetch against the general paths.

use super::*;
use crate::storage::TextureDesc;

/// The L2 tests' small geometry: 2 KiB of 64-byte lines, 4-way (8 sets).
fn small_l2() -> CacheConfig {
    CacheConfig {
        l2_bytes: 2048,
        l2_ways: 4,
        ..CacheConfig::default()
    }
}

/// The default L1, one small enough (16 lines, 2-way) that the tests' walks evict, one of two
/// one-way sets and one of three sets.
fn l1_geometries() -> [CacheConfig; 4] {
    [
        CacheConfig::default(),
        CacheConfig {
            l1_lines: 16,
            l1_ways: 2,
            ..CacheConfig::default()
        },
        // Two sets of one way: a footprint's later line can evict its earlier one.
        CacheConfig {
            l1_lines: 2,
            l1_ways: 1,
            ..CacheConfig::default()
        },
        // Three sets: not a power of two.
        CacheConfig {
            l1_lines: 6,
            l1_ways: 2,
            ..CacheConfig::default()
        },
    ]
}

/// A seeded xorshift stream of 32-bit values, the tests' inputs.
fn xorshift(mut s: u32) -> impl FnMut() -> u32 {
    move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    }
}

impl TexelCache {
    /// [`TexelCache::access_hashed`] without the way hints: every access searches its
    /// set (the model the hints shortcut).
    fn access_searching(
        &mut self,
        src: &Source,
        key: &LineKey,
        hash: u64,
        dims: (u32, u32),
    ) -> usize {
        self.stats.l1_accesses += 1;
        self.clock += 1;
        self.search(src, key, hash, dims)
    }
}

/// The L2 with its way hints gives the hits and misses, and ends with the tags and use
/// times, of a reference LRU model searching every access (the same set and victim
/// rules): addresses from a few textures and generations over a working set larger than
/// the L2, a small and the default geometry, with invalidations.
#[test]
fn l2_way_hints_equal_a_searching_model() {
    for config in [CacheConfig::default(), small_l2()] {
        let mut l2 = L2Cache::new(&config);
        // The reference: per way (tag, last use), searched in full on every access.
        let (ways, sets) = (l2.ways, l2.geometry.sets);
        let mut tags = vec![(L2Cache::EMPTY, 0u64); sets * ways];
        let mut clock = 0u64;
        let mut next = xorshift(0x9e37_79b9u32);
        for i in 0..300_000u32 {
            let r = next();
            let span = if r & 7 == 0 { 1 << 20 } else { 1 << 12 };
            let address = ((r >> 3 & 3) as u64) << 40 | ((next() % span) as u64) << 6;
            let generation = (r >> 5 & 1) as u64;
            let hit = l2.access(address, generation);
            let line = address >> 6;
            let mix = line.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let set = ((mix >> 32) ^ line) as usize % sets;
            let range = set * ways..(set + 1) * ways;
            clock += 1;
            let want = match tags[range.clone()]
                .iter()
                .position(|t| t.0 == (line, generation))
            {
                Some(w) => {
                    tags[range.start + w].1 = clock;
                    true
                }
                None => {
                    let victim = (range.clone()).min_by_key(|&w| tags[w].1).unwrap();
                    tags[victim] = ((line, generation), clock);
                    false
                }
            };
            assert_eq!(hit, want, "access {i}");
            if i % 100_000 == 99_999 {
                l2.invalidate();
                tags.fill((L2Cache::EMPTY, 0));
            }
        }
        assert_eq!(l2.tags, tags.iter().map(|t| t.0).collect::<Vec<_>>());
        assert_eq!(l2.last, tags.iter().map(|t| t.1).collect::<Vec<_>>());
    }
}

/// Logs replayed in shares of the sets ([`L2Cache::shares`], each share replaying every
/// log) find each log's misses one serial replay finds, and leave the same lines in the
/// same ways — and so do logs split by share ([`L2Split::split`]), each share replaying
/// only its runs, and the split logs replayed whole by one serial replay — for one to
/// five shares (more than the two sets of the smallest geometry), over rounds that keep
/// the L2's contents, with invalidations; four geometries, one with lines of a size that
/// is not a power of two.
#[test]
fn shared_replays_equal_one_replay() {
    for config in [
        CacheConfig::default(),
        small_l2(),
        CacheConfig {
            l2_bytes: 48 * 512,
            l2_ways: 2,
            l2_line_bytes: 48,
            ..CacheConfig::default()
        },
        CacheConfig {
            l2_bytes: 512,
            l2_ways: 4,
            ..CacheConfig::default()
        },
    ] {
        let geometry = L2Sets::new(&config);
        for parts in 1..=5 {
            let (mut serial, mut shared) = (L2Cache::new(&config), L2Cache::new(&config));
            let (mut split, mut split_serial) = (L2Cache::new(&config), L2Cache::new(&config));
            let mut next = xorshift(0x243f_6a88u32 ^ parts as u32);
            let (mut hits, mut misses) = (0u64, 0u64);
            for round in 0..12 {
                let logs: Vec<Vec<L2Request>> = (0..1 + next() % 9)
                    .map(|_| {
                        (0..next() % 3000)
                            .map(|_| {
                                let r = next();
                                let span = if r & 7 == 0 { 1 << 18 } else { 1 << 9 };
                                L2Request {
                                    address: (((r >> 3 & 3) as u64) << 40)
                                        | ((next() % span) as u64 * 4),
                                    generation: (r >> 5 & 1) as u64,
                                }
                            })
                            .collect()
                    })
                    .collect();
                let want: Vec<TexelCacheStats> = logs
                    .iter()
                    .map(|log| {
                        let mut stats = TexelCacheStats::default();
                        serial.replay(log, &mut stats);
                        stats
                    })
                    .collect();
                let lists: Vec<&[L2Request]> = logs.iter().map(|l| &l[..]).collect();
                let per_share: Vec<Vec<u64>> = shared
                    .shares(parts)
                    .iter_mut()
                    .map(|share| share.replay(&lists))
                    .collect();
                shared.advance(lists.iter().map(|l| l.len() as u64).sum());
                for (i, (log, want)) in logs.iter().zip(&want).enumerate() {
                    let m: u64 = per_share.iter().map(|p| p[i]).sum();
                    let mut got = TexelCacheStats::default();
                    shared.count(log.len(), m, &mut got);
                    assert_eq!(&got, want, "{parts} shares, round {round}, log {i}");
                    hits += got.l2_hits;
                    misses += got.l2_misses;
                }
                assert_eq!(shared.tags, serial.tags, "{parts} shares, round {round}");
                // Split by share: the same requests, each share's run to its share.
                let mut split_logs = logs.clone();
                let splitter = geometry.splitter(parts);
                let ends: Vec<Vec<usize>> = split_logs
                    .iter_mut()
                    .map(|log| splitter.split(log))
                    .collect();
                for (log, split_log) in logs.iter().zip(&split_logs) {
                    let key = |r: &L2Request| (r.address, r.generation);
                    let mut a: Vec<_> = log.iter().map(key).collect();
                    let mut b: Vec<_> = split_log.iter().map(key).collect();
                    a.sort_unstable();
                    b.sort_unstable();
                    assert_eq!(a, b);
                }
                let per_share: Vec<Vec<u64>> = split
                    .shares(parts)
                    .iter_mut()
                    .enumerate()
                    .map(|(k, share)| {
                        let runs: Vec<&[L2Request]> = split_logs
                            .iter()
                            .zip(&ends)
                            .map(|(log, e)| &log[if k == 0 { 0 } else { e[k - 1] }..e[k]])
                            .collect();
                        share.replay(&runs)
                    })
                    .collect();
                split.advance(lists.iter().map(|l| l.len() as u64).sum());
                for (i, (log, want)) in split_logs.iter().zip(&want).enumerate() {
                    assert_eq!(ends[i].len(), per_share.len());
                    let m: u64 = per_share.iter().map(|p| p[i]).sum();
                    let mut got = TexelCacheStats::default();
                    split.count(log.len(), m, &mut got);
                    assert_eq!(&got, want, "{parts} split shares, round {round}, log {i}");
                    let mut whole = TexelCacheStats::default();
                    split_serial.replay(log, &mut whole);
                    assert_eq!(&whole, want, "{parts} split, replayed whole, log {i}");
                }
                assert_eq!(
                    split.tags, serial.tags,
                    "{parts} split shares, round {round}"
                );
                assert_eq!(
                    split_serial.tags, serial.tags,
                    "{parts} split, round {round}"
                );
                if round % 5 == 4 {
                    serial.invalidate();
                    shared.invalidate();
                    split.invalidate();
                    split_serial.invalidate();
                }
            }
            assert!(
                hits > 1_000 && misses > 1_000,
                "{config:?}, {parts} shares: {hits} {misses}"
            );
        }
    }
}

/// Accesses through the way hints find the ways, hits, misses and LRU victims a search
/// of every access finds: random lines of three mips and two textures, many more than
/// the L1 holds (so hints go stale and slots collide), a small and a two-way geometry,
/// with invalidations.
#[test]
fn way_hints_equal_searching_every_access() {
    let textures: Vec<Texture> = (0..2)
        .map(|_| {
            Texture::new(TextureDesc::d2(256, 256, TextureFormat::Rgba8Unorm).with_mips(3)).unwrap()
        })
        .collect();
    let mut next = xorshift(0x2545_f491u32);
    for config in l1_geometries() {
        let (mut hinted, mut searching) = (
            TexelCache::new(config, false),
            TexelCache::new(config, false),
        );
        for i in 0..200_000u32 {
            let r = next();
            let tex = &textures[(r & 1) as usize];
            let src = Source {
                texture: tex,
                format: TextureFormat::Rgba8Unorm,
                aspect: TextureAspect::All,
            };
            let level = (r >> 1) % 3;
            // Mostly a small neighbourhood (hits), sometimes anywhere on the level.
            let span = if r >> 3 & 7 == 0 { 64 >> level } else { 3 };
            let (lx, ly) = ((r >> 6) % span, (r >> 14) % span);
            let (a, b) = (
                hinted.surface(&src, level, 0),
                searching.surface(&src, level, 0),
            );
            let wa = hinted.access_hashed(&src, &a.key.at(lx, ly), a.hash, a.dims);
            let wb = searching.access_searching(&src, &b.key.at(lx, ly), b.hash, b.dims);
            assert_eq!(wa, wb, "access {i}");
            if i % 50_000 == 49_999 {
                hinted.invalidate();
                searching.invalidate();
            }
        }
        assert_eq!(hinted.stats, searching.stats);
        assert_eq!(hinted.tags, searching.tags);
    }
}

/// A 2×2 request ([`TexelCache::fetch_2x2`]) reads the texels, and leaves the counts,
/// tags and last uses, that the general footprint fetch of its four taps does:
/// footprints within one line and across two and four, wrapping to the level's other
/// side, on a cache small enough to evict, with invalidations. So do the same requests
/// made through [`run::FetchRun`]s of one to eight requests each, on levels that change within
/// a run.
#[test]
fn fetch_2x2_equals_the_general_fetch() {
    let mut tex =
        Texture::new(TextureDesc::d2(128, 128, TextureFormat::Rgba8Unorm).with_mips(3)).unwrap();
    let mut next = xorshift(0x7f4a_7c15u32);
    for level in 0..3 {
        let [w, h, _] = tex.desc().mip_size(level);
        for y in 0..h {
            for x in 0..w {
                let v = next().to_le_bytes();
                tex.element_mut(level, 0, x, y).unwrap().copy_from_slice(&v);
            }
        }
    }
    let src = Source {
        texture: &tex,
        format: TextureFormat::Rgba8Unorm,
        aspect: TextureAspect::All,
    };
    for config in l1_geometries() {
        let (mut pairs, mut general, mut runs) = (
            TexelCache::new(config, false),
            TexelCache::new(config, false),
            TexelCache::new(config, false),
        );
        let (mut x, mut y) = (0u32, 0u32);
        // The requests of the current run: surface, footprint and what `pairs` read.
        let mut pending = Vec::new();
        for i in 0..200_000u32 {
            let r = next();
            let level = r % 3;
            let size = 128 >> level;
            // A walk (hits through the hints), sometimes a jump anywhere.
            if r >> 2 & 15 == 0 {
                (x, y) = (next() % size, next() % size);
            } else {
                x = (x + (r >> 6) % 3) % size;
                y = (y + (r >> 8) % 3) % size;
            }
            let (x, y) = (x % size, y % size);
            // The right and bottom neighbours, wrapping as repeat addressing does.
            let xs = [x, (x + 1) % size];
            let ys = [y, (y + 1) % size];
            let a = pairs.surface(&src, level, 0);
            let got = pairs.fetch_2x2(&a, xs, ys);
            let taps = [(0, 0), (1, 0), (0, 1), (1, 1)].map(|(i, j)| a.texel(xs[i], ys[j]));
            let mut want = [[0u32; 4]; 4];
            general.fetch(&src, &taps, &mut want);
            assert_eq!(got, want, "request {i}");
            pending.push((runs.surface(&src, level, 0), a.footprint_2x2(xs, ys), got));
            let invalidate = i % 70_000 == 69_999;
            if invalidate || i == 199_999 || pending.len() > (r >> 10 & 7) as usize {
                let mut run = runs.run();
                for (k, (s, f, want)) in pending.drain(..).enumerate() {
                    assert_eq!(run.fetch(&s, &f), want, "request {i}, run place {k}");
                }
                drop(run);
                assert_eq!(runs.clock, pairs.clock, "request {i}");
                assert_eq!(runs.tags, pairs.tags, "request {i}");
            }
            if invalidate {
                pairs.invalidate();
                general.invalidate();
                runs.invalidate();
            }
        }
        assert!(pairs.stats.l1_misses > 1_000, "{:?}", pairs.stats);
        assert_eq!(pairs.stats, general.stats);
        assert_eq!(pairs.tags, general.tags);
        // (A run counts its line accesses, not its requests: its caller does.)
        let mut counted = runs.stats;
        (counted.requests, counted.texel_reads) = (pairs.stats.requests, pairs.stats.texel_reads);
        assert_eq!(counted, pairs.stats);
    }
}

/// Fills through the kept plans ([`QuickFill`]) give what the general fill gives — the
/// same ways, decoded texels, L1 and L2 counts and tags — for sRGB and BGRA textures
/// with random texels, on levels whose lines lie inside them and on the small levels
/// whose lines do not, with invalidations between: one cache keeps its plans, the
/// other forgets them before every access.
#[test]
fn quick_fills_equal_the_general_fill() {
    use crate::storage::TextureCopy;
    let mut next = xorshift(0x9e37_79b9u32);
    let formats = [TextureFormat::Rgba8UnormSrgb, TextureFormat::Bgra8Unorm];
    let textures: Vec<Texture> = formats
        .iter()
        .map(|&f| {
            let mut t = Texture::new(TextureDesc::d2(64, 64, f).with_mips(7)).unwrap();
            for level in 0..7 {
                let side = 64 >> level;
                let bytes: Vec<u8> = (0..side * side * 4).map(|_| next() as u8).collect();
                let at = TextureCopy {
                    mip_level: level,
                    ..TextureCopy::default()
                };
                t.write_packed(at, &bytes, [side, side, 1]).unwrap();
            }
            t
        })
        .collect();
    let config = CacheConfig::default();
    let (mut kept, mut forgot) = (
        TexelCache::new(config, false),
        TexelCache::new(config, false),
    );
    let mut with_plans = 0;
    for i in 0..100_000u32 {
        let r = next();
        let k = (r & 1) as usize;
        let src = Source {
            texture: &textures[k],
            format: formats[k],
            aspect: TextureAspect::All,
        };
        let level = (r >> 1) % 7;
        let lines = (16 >> level).max(1) + 1;
        let (lx, ly) = ((r >> 4) % lines, (r >> 12) % lines);
        forgot.quick = [None; QUICK_SURFACES];
        let planned = kept.quick.iter().flatten().count();
        let (a, b) = (kept.surface(&src, level, 0), forgot.surface(&src, level, 0));
        let wa = kept.access_hashed(&src, &a.key.at(lx, ly), a.hash, a.dims);
        let wb = forgot.access_hashed(&src, &b.key.at(lx, ly), b.hash, b.dims);
        assert_eq!(wa, wb, "access {i}");
        let n = kept.line_texels;
        assert_eq!(
            kept.data[wa * n..(wa + 1) * n],
            forgot.data[wb * n..(wb + 1) * n],
            "access {i}"
        );
        with_plans += (planned > 0) as u32;
        if i % 20_000 == 19_999 {
            kept.invalidate();
            forgot.invalidate();
        }
    }
    assert_eq!(kept.stats, forgot.stats);
    assert_eq!(kept.tags, forgot.tags);
    if crate::cpu::wide() {
        assert!(with_plans > 10_000, "{with_plans}");
    }
}

/// The surfaces handed out again ([`TexelCache::surface_sized`]) are those made afresh —
/// the same tag, hash, line shape and level size — across two textures of different
/// sizes, two interpretations of one, their levels and layers, asked for in random order,
/// with invalidations (which renumber the sources).
#[test]
fn kept_surfaces_equal_fresh_ones() {
    let textures = [
        Texture::new(TextureDesc::d2(64, 32, TextureFormat::Rgba8Unorm).with_mips(4)).unwrap(),
        Texture::new(
            TextureDesc::d2(20, 48, TextureFormat::Rgba8Unorm)
                .with_mips(3)
                .with_layers(2),
        )
        .unwrap(),
    ];
    let mut next = xorshift(0x1b87_3593u32);
    let mut cache = TexelCache::new(CacheConfig::default(), false);
    let mut kept = 0;
    for i in 0..20_000u32 {
        let r = next();
        let texture = &textures[(r & 1) as usize];
        let src = Source {
            texture,
            format: [TextureFormat::Rgba8Unorm, TextureFormat::Rgba8UnormSrgb]
                [(r >> 1 & 1) as usize],
            aspect: TextureAspect::All,
        };
        let level = (r >> 2) % texture.desc().mip_level_count;
        let slice = (r >> 5) % texture.desc().size[2];
        let source = cache.source_index(&src);
        let recent = cache
            .recent
            .iter()
            .any(|m| m.source == source && m.level == level && m.slice == slice);
        kept += recent as u32;
        let (got, size) = cache.surface_sized(&src, source, level, slice);
        let want = cache.surface_of(&src, source, level, slice);
        let [w, h, _] = texture.desc().mip_size(level);
        assert_eq!(
            (got.key, got.hash, got.dims, size),
            (want.key, want.hash, want.dims, [w, h]),
            "request {i}"
        );
        if r >> 8 & 1023 == 0 {
            cache.invalidate();
        }
    }
    assert!(kept > 1_000 && kept < 19_000, "{kept}");
}
