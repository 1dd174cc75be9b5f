//! The back end's workers (BRIEF "Parallelism"; T8 "Going wide during rasterization";
//! OpenSWR's tile workers): screen tiles are independent units of work, so worker threads
//! claim them from a shared queue, each tile processed by one worker in API order. Results
//! come back in tile order, so merged statistics and images do not depend on the number of
//! threads or on which worker ran which tile.

/// A pool of worker threads (or none: work runs on the calling thread).
pub struct Workers {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
}

impl Workers {
    /// `threads` workers; 1 runs everything on the calling thread. A pool that cannot be
    /// created (the OS refuses threads) falls back to the calling thread.
    pub fn new(threads: usize) -> Workers {
        let threads = threads.max(1);
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
        Workers { pool, threads }
    }

    /// Worker threads the pool runs.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `job(&mut state, i)` for every `i` in `0..n`, `state` made by `init` once per
    /// chunk of work a worker takes, and returns the results in index order.
    pub fn map_init<S, T: Send>(
        &self,
        n: usize,
        init: impl Fn() -> S + Sync + Send,
        job: impl Fn(&mut S, usize) -> T + Sync + Send,
    ) -> Vec<T> {
        match &self.pool {
            Some(pool) => pool.install(|| {
                use rayon::prelude::*;
                (0..n)
                    .into_par_iter()
                    .map_init(&init, |s, i| job(s, i))
                    .collect()
            }),
            None => {
                let mut state = init();
                (0..n).map(|i| job(&mut state, i)).collect()
            }
        }
    }
}

impl Workers {
    /// Runs `job(&mut state, i, &mut items[i])` for every item, `state` made by `init` once
    /// per chunk of work a worker takes.
    pub fn for_each_mut<S, T: Send>(
        &self,
        items: &mut [T],
        init: impl Fn() -> S + Sync + Send,
        job: impl Fn(&mut S, usize, &mut T) + Sync + Send,
    ) {
        match &self.pool {
            Some(pool) => pool.install(|| {
                use rayon::prelude::*;
                items
                    .par_iter_mut()
                    .enumerate()
                    .for_each_init(&init, |s, (i, item)| job(s, i, item))
            }),
            None => {
                let mut state = init();
                for (i, item) in items.iter_mut().enumerate() {
                    job(&mut state, i, item);
                }
            }
        }
    }
}

impl Default for Workers {
    /// One worker per available core.
    fn default() -> Workers {
        Workers::new(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}
