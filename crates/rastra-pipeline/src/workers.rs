//! The back end's workers (BRIEF "Parallelism"; T8 "Going wide during rasterization";
//! OpenSWR's tile workers): screen tiles are independent units of work, so worker threads
//! claim them — each its own share first, then what is left of the others' — and each tile
//! is processed by one worker in API order. Results come back in tile order, so merged
//! statistics and images do not depend on the number of threads or on which worker ran
//! which tile. With one worker per CPU the process may use, each is bound to its own CPU
//! (as OpenSWR binds its workers), so the OS cannot stack two on one CPU.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// A pool of worker threads (or none: work runs on the calling thread).
pub struct Workers {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
    /// The CPU each worker is bound to, worker by worker, when they are.
    pinned: Option<Vec<usize>>,
}

impl Workers {
    /// `threads` workers; 1 runs everything on the calling thread. A pool that cannot be
    /// created (the OS refuses threads) falls back to the calling thread. With `pin`, and
    /// as many workers as CPUs the process may run on ([`allowed_cpus`]), worker i is
    /// bound to the i-th of them, as OpenSWR binds its workers when it picks their number
    /// itself. Unbound, Linux may wake a frame's workers onto the same CPU while the
    /// other is idle, and leave them sharing it for several scheduler ticks: on the model
    /// workload at two threads, 13–16 ms of a 30 ms frame in some rounds (`perf` with
    /// `sched:sched_switch` and `sched:sched_wakeup`: the second worker woken with
    /// `target_cpu` the first's, the two then preempting each other every 4 ms). Binding
    /// changes where work runs, never what it computes.
    pub fn new(threads: usize, pin: bool) -> Workers {
        let threads = threads.max(1);
        let cpus = (pin && threads > 1)
            .then(allowed_cpus)
            .flatten()
            .filter(|cpus| cpus.len() == threads);
        let pool = (threads > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("rastra-worker-{i}"))
                    .build()
                    .ok()
            })
            .flatten();
        let threads = if pool.is_some() { threads } else { 1 };
        // Each worker binds itself (worker i to the i-th CPU) and says whether the OS let
        // it; the binding is reported only when every worker's held.
        let pinned = match (&pool, cpus) {
            (Some(pool), Some(cpus)) => {
                let bound = pool.broadcast(|ctx| bind_current_thread(cpus[ctx.index()]));
                bound.iter().all(|&b| b).then_some(cpus)
            }
            _ => None,
        };
        Workers {
            pool,
            threads,
            pinned,
        }
    }

    /// Worker threads the pool runs.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The CPU each worker is bound to, when [`Workers::new`] bound them.
    pub fn pinned_cpus(&self) -> Option<&[usize]> {
        self.pinned.as_deref()
    }

    /// Runs `f` on one of the workers (or on the calling thread when there is only one),
    /// returning its result. Work `f` hands to the workers ([`Workers::map_init`]) then
    /// starts on that worker at once — it takes jobs itself while another worker wakes up —
    /// and when the last job is done the worker that called goes on, instead of a thread
    /// outside the pool being woken up (tens of microseconds a call, measured, on each of a
    /// frame's groups of front-end chunks).
    pub fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }

    /// Runs `job(&mut state, i)` for every `i` in `0..n` and returns the results in index
    /// order. Each worker makes its `state` with `init` once, when it claims its first index,
    /// and then claims indices one at a time until none is left (OpenSWR's workers claiming
    /// macrotiles): first its own contiguous share of `0..n` in increasing order, then the
    /// last unclaimed indices of the others' (`Claims`), so a worker that finishes early
    /// takes work rather than waiting while another works through a long share: a worker
    /// idles at most while the others finish their last items.
    pub fn map_init<S, T: Send>(
        &self,
        n: usize,
        init: impl Fn() -> S + Sync + Send,
        job: impl Fn(&mut S, usize) -> T + Sync + Send,
    ) -> Vec<T> {
        if n == 0 {
            return Vec::new();
        }
        let Some(pool) = &self.pool else {
            let mut state = init();
            return (0..n).map(|i| job(&mut state, i)).collect();
        };
        let claims = Claims::new(n, self.threads);
        // One claiming loop per worker, handed to the pool as parallel work rather than
        // broadcast: a worker still asleep when the others have claimed everything is not
        // waited for (the loop left for it finds nothing and returns at once) — a broadcast
        // waited for every thread to wake, on each of a frame's hundreds of small groups of
        // front-end chunks.
        let claimed: Vec<Vec<(usize, T)>> = pool.install(|| {
            use rayon::prelude::*;
            (0..self.threads)
                .into_par_iter()
                .map(|_| {
                    let mut state = None;
                    let mut done = Vec::new();
                    let home = rayon::current_thread_index().unwrap_or(0);
                    while let Some(i) = claims.claim(home) {
                        let state = state.get_or_insert_with(&init);
                        done.push((i, job(state, i)));
                    }
                    done
                })
                .collect()
        });
        let mut results: Vec<Option<T>> = (0..n).map(|_| None).collect();
        for (i, t) in claimed.into_iter().flatten() {
            results[i] = Some(t);
        }
        results
            .into_iter()
            .map(|t| t.expect("every index is claimed by exactly one worker"))
            .collect()
    }

    /// Runs `job(&mut state, i, &mut items[i])` for every item, the items claimed one at a
    /// time as in [`Workers::map_init`] (`state` made once per worker).
    pub fn for_each_mut<S, T: Send>(
        &self,
        items: &mut [T],
        init: impl Fn() -> S + Sync + Send,
        job: impl Fn(&mut S, usize, &mut T) + Sync + Send,
    ) {
        if items.is_empty() {
            return;
        }
        if self.pool.is_none() {
            let mut state = init();
            for (i, item) in items.iter_mut().enumerate() {
                job(&mut state, i, item);
            }
            return;
        }
        // Each item behind a lock only its claimant takes (never contended), which hands
        // the worker its `&mut`.
        let items: Vec<Mutex<&mut T>> = items.iter_mut().map(Mutex::new).collect();
        self.map_init(items.len(), init, |state, i| {
            let mut item = items[i].lock().unwrap_or_else(PoisonError::into_inner);
            job(state, i, &mut item)
        });
    }
}

/// The indices `0..n` of one [`Workers::map_init`], split into one contiguous range per
/// worker (its *home*): a worker claims its own range from the front, in increasing order,
/// and when it is empty takes the last unclaimed index of another's. A worker so meets the
/// same part of the work in every step — the same screen tiles in each of a frame's back-end
/// runs, whose colour and depth lines its own cache then still holds — while none idles
/// as long as another has work left. (More indices than a range's 32-bit halves hold — a
/// compute dispatch may have that many runs of workgroups — are claimed from one shared
/// counter in increasing order instead.)
enum Claims {
    /// Per home: its next index (low half) and its end (high half), claimed from both ends.
    Homes(Vec<AtomicU64>),
    /// The next index, and the end.
    Shared(AtomicUsize, usize),
}

impl Claims {
    fn new(n: usize, parts: usize) -> Claims {
        if n > u32::MAX as usize {
            return Claims::Shared(AtomicUsize::new(0), n);
        }
        let n = n as u64;
        let parts = parts.max(1) as u64;
        Claims::Homes(
            (0..parts)
                .map(|h| AtomicU64::new((n * h / parts) | ((n * (h + 1) / parts) << 32)))
                .collect(),
        )
    }

    /// The next index for the worker whose home is `home`: its own range's first, else
    /// another range's last (the next ranges in turn), else none.
    fn claim(&self, home: usize) -> Option<usize> {
        let ranges = match self {
            Claims::Homes(ranges) => ranges,
            Claims::Shared(next, n) => {
                let i = next.fetch_add(1, Ordering::Relaxed);
                return (i < *n).then_some(i);
            }
        };
        let parts = ranges.len();
        let home = home % parts;
        Self::take(&ranges[home], true)
            .or_else(|| (1..parts).find_map(|k| Self::take(&ranges[(home + k) % parts], false)))
    }

    /// Takes the first (`front`) or the last index of a range, if it has one.
    fn take(range: &AtomicU64, front: bool) -> Option<usize> {
        let mut v = range.load(Ordering::Relaxed);
        loop {
            let (first, end) = (v & 0xffff_ffff, v >> 32);
            if first >= end {
                return None;
            }
            let (next, i) = if front {
                (v + 1, first)
            } else {
                (v - (1 << 32), end - 1)
            };
            match range.compare_exchange_weak(v, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(i as usize),
                Err(now) => v = now,
            }
        }
    }
}

impl Default for Workers {
    /// One worker per available core, unbound.
    fn default() -> Workers {
        Workers::new(
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            false,
        )
    }
}

/// The CPUs the calling thread may run on (its affinity mask), in increasing order; `None`
/// where the OS does not say (or is not Linux).
pub fn allowed_cpus() -> Option<Vec<usize>> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `set` is a plain bit set the call fills; its size is passed with it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
        if ok != 0 {
            return None;
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `cpu` is below CPU_SETSIZE, the set's size in bits.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect();
        (!cpus.is_empty()).then_some(cpus)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Binds the calling thread to `cpu`; whether the OS did (Linux; elsewhere, or refused, the
/// thread stays unbound: binding only places work, so nothing else depends on it).
fn bind_current_thread(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        if cpu >= libc::CPU_SETSIZE as usize {
            return false;
        }
        // SAFETY: as in `allowed_cpus`; `cpu` is below CPU_SETSIZE.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With as many workers as allowed CPUs, each worker runs bound to its own CPU (the
    /// affinity a job sees is that one CPU) and the work is done as unbound; with another
    /// count, or without `pin`, nothing is bound.
    #[test]
    fn workers_are_pinned_one_per_allowed_cpu() {
        let Some(cpus) = allowed_cpus() else {
            return;
        };
        let n = cpus.len();
        let jobs = 4 * n.max(2);
        let unbound = Workers::new(n.max(2), false);
        assert_eq!(unbound.pinned_cpus(), None);
        let want = unbound.map_init(jobs, || (), |_, i| i * i);
        if n > 1 {
            let pinned = Workers::new(n, true);
            // (An OS that refuses the binding leaves the workers unbound, and says so.)
            let Some(bound) = pinned.pinned_cpus() else {
                return;
            };
            assert_eq!(bound, &cpus[..]);
            let seen = pinned.map_init(jobs, || (), |_, i| (i * i, allowed_cpus()));
            for (i, (v, affinity)) in seen.into_iter().enumerate() {
                assert_eq!(v, want[i]);
                let affinity = affinity.expect("a worker's affinity");
                assert_eq!(affinity.len(), 1, "job {i} ran on {affinity:?}");
                assert!(cpus.contains(&affinity[0]));
            }
        }
        assert_eq!(Workers::new(n + 1, true).pinned_cpus(), None);
        assert_eq!(Workers::new(1, true).pinned_cpus(), None);
    }

    /// Every index is run exactly once, results come back in index order, a worker's state
    /// is its own (made once per worker that claims work), and `for_each_mut` hands each item
    /// to exactly one job — for no pool, and pools of two, three and eight workers.
    #[test]
    fn claimed_work_runs_once_in_index_order() {
        for threads in [1, 2, 3, 8] {
            let workers = Workers::new(threads, false);
            for n in [0, 1, 2, 7, 300] {
                let inits = AtomicUsize::new(0);
                let results = workers.map_init(
                    n,
                    || {
                        inits.fetch_add(1, Ordering::Relaxed);
                        0usize
                    },
                    |runs, i| {
                        *runs += 1;
                        (i * i, *runs)
                    },
                );
                assert_eq!(results.len(), n);
                for (i, &(square, _)) in results.iter().enumerate() {
                    assert_eq!(square, i * i, "{threads} threads, {n} items");
                }
                // Each worker's state counts its own jobs from 1: one first job per state
                // made, at most one state per worker.
                let made = inits.load(Ordering::Relaxed);
                let firsts = results.iter().filter(|&&(_, runs)| runs == 1).count();
                assert_eq!(firsts, made, "{threads} threads, {n} items");
                assert!(made <= threads && (n == 0) == (made == 0));
                let mut items: Vec<u32> = (0..n as u32).collect();
                workers.for_each_mut(&mut items, || (), |_, i, item| *item += 1000 + i as u32);
                for (i, &item) in items.iter().enumerate() {
                    assert_eq!(item, 2 * i as u32 + 1000);
                }
            }
        }
    }

    /// A worker claims its own share front to back, then the other shares' last indices,
    /// the next share first; every index once.
    #[test]
    fn claims_take_the_home_share_then_steal_from_the_back() {
        let claims = Claims::new(10, 3);
        let order: Vec<usize> = std::iter::from_fn(|| claims.claim(0)).collect();
        assert_eq!(order, [0, 1, 2, 5, 4, 3, 9, 8, 7, 6]);
        let claims = Claims::new(10, 3);
        assert_eq!(claims.claim(2), Some(6));
        assert_eq!(claims.claim(1), Some(3));
        let rest: Vec<usize> = std::iter::from_fn(|| claims.claim(1)).collect();
        assert_eq!(rest, [4, 5, 9, 8, 7, 2, 1, 0]);
        // Fewer items than workers: empty shares steal at once.
        let claims = Claims::new(1, 4);
        assert_eq!(claims.claim(0), Some(0));
        assert_eq!(claims.claim(3), None);
        // More than the ranges hold: one counter, in increasing order.
        let claims = Claims::new(u32::MAX as usize + 2, 2);
        assert_eq!([claims.claim(1), claims.claim(0)], [Some(0), Some(1)]);
    }

    #[test]
    fn work_handed_out_from_a_worker_runs_once_in_index_order() {
        for threads in [1, 2, 3, 8] {
            let workers = Workers::new(threads, false);
            // Nested as a draw batch is: groups handed out one after another from inside
            // `run`, each a map over its items.
            let groups = workers.run(|| {
                (0..5)
                    .map(|g| workers.map_init(40 + g, || (), |_, i| i * 3 + g))
                    .collect::<Vec<_>>()
            });
            for (g, results) in groups.iter().enumerate() {
                let want: Vec<usize> = (0..40 + g).map(|i| i * 3 + g).collect();
                assert_eq!(results, &want, "{threads} threads, group {g}");
            }
        }
    }
}
