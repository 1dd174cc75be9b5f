//! Query sets: slots the command processor writes results into while a command buffer
//! executes, and `resolve_query_set` copies into a buffer (WebGPU §20 "Queries").
//!
//! The one query type is occlusion: the number of samples that passed every per-sample
//! test (scissor, sample mask, depth, the shader's discard) between
//! `begin_occlusion_query` and `end_occlusion_query`. The depth unit and output merger
//! count them as they decide coverage (`rastra_pipeline::DrawOutput::samples_passed`);
//! the count is a result handed back to the program, kept apart from the statistics.

use std::sync::{Arc, Mutex};

use crate::error::{Error, validation};

/// The most queries one set may hold (WebGPU's limit).
pub const MAX_QUERIES_PER_SET: u32 = 4096;

/// What a query set's queries measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryType {
    /// Samples passing the per-sample tests.
    Occlusion,
}

/// Creation parameters of a query set.
#[derive(Clone, Debug)]
pub struct QuerySetDescriptor<'a> {
    pub label: Option<&'a str>,
    pub ty: QueryType,
    pub count: u32,
}

struct Inner {
    label: String,
    ty: QueryType,
    /// One 64-bit result per query; zero until a query writes it.
    results: Mutex<Vec<u64>>,
}

/// A set of queries (cheap to clone; clones share the results).
#[derive(Clone)]
pub struct QuerySet(Arc<Inner>);

impl std::fmt::Debug for QuerySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "QuerySet({:?}, {:?} × {})",
            self.0.label,
            self.0.ty,
            self.count()
        )
    }
}

impl QuerySet {
    pub(crate) fn new(desc: &QuerySetDescriptor<'_>) -> Result<QuerySet, Error> {
        if desc.count > MAX_QUERIES_PER_SET {
            return validation(format!(
                "query set of {} queries (the limit is {MAX_QUERIES_PER_SET})",
                desc.count
            ));
        }
        Ok(QuerySet(Arc::new(Inner {
            label: desc.label.unwrap_or("").to_string(),
            ty: desc.ty,
            results: Mutex::new(vec![0; desc.count as usize]),
        })))
    }

    pub fn ty(&self) -> QueryType {
        self.0.ty
    }

    pub fn count(&self) -> u32 {
        self.results().len() as u32
    }

    fn results(&self) -> std::sync::MutexGuard<'_, Vec<u64>> {
        self.0.results.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores query `index`'s result (the index was validated when recorded).
    pub(crate) fn write(&self, index: u32, value: u64) {
        self.results()[index as usize] = value;
    }

    /// The results of queries `first..first + count` as little-endian `u64`s.
    pub(crate) fn read_bytes(&self, first: u32, count: u32) -> Vec<u8> {
        self.results()[first as usize..(first + count) as usize]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    }
}
