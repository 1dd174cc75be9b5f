//! Query sets: slots the command processor writes results into while a command buffer
//! executes, and `resolve_query_set` copies into a buffer (WebGPU §20 "Queries", Vulkan
//! §18 "Queries").
//!
//! Two query types. **Occlusion**: the number of samples that passed every per-sample test
//! (scissor, sample mask, depth, the shader's discard) between `begin_occlusion_query` and
//! `end_occlusion_query`; the depth unit and output merger count them as they decide
//! coverage (`rastra_pipeline::DrawOutput::samples_passed`), a result kept apart from the
//! statistics. **Pipeline statistics**: the Vulkan pipeline statistics the units count
//! anyway (vertex shader invocations, clipper primitives in and out, fragment and compute
//! shader invocations), summed over the draws or dispatches between
//! `begin_pipeline_statistics_query` and its end — the statistics reported to the program.

use std::sync::{Arc, Mutex};

use rastra_stats::Counters;

use crate::error::{Error, validation};

/// The most queries one set may hold (WebGPU's limit).
pub const MAX_QUERIES_PER_SET: u32 = 4096;

/// Which pipeline statistics a pipeline-statistics query records, in result order (bit
/// order: the order of the constants below).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PipelineStatistics(u8);

impl PipelineStatistics {
    pub const VERTEX_SHADER_INVOCATIONS: PipelineStatistics = PipelineStatistics(1);
    pub const CLIPPER_INVOCATIONS: PipelineStatistics = PipelineStatistics(2);
    pub const CLIPPER_PRIMITIVES_OUT: PipelineStatistics = PipelineStatistics(4);
    pub const FRAGMENT_SHADER_INVOCATIONS: PipelineStatistics = PipelineStatistics(8);
    pub const COMPUTE_SHADER_INVOCATIONS: PipelineStatistics = PipelineStatistics(16);
    pub const ALL: PipelineStatistics = PipelineStatistics(31);

    pub fn contains(self, other: PipelineStatistics) -> bool {
        self.0 & other.0 == other.0
    }

    /// Values each query stores.
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// The selected statistics of `c`, in result order.
    pub(crate) fn values(self, c: &Counters) -> Vec<u64> {
        [
            (Self::VERTEX_SHADER_INVOCATIONS, c.vertex_shader_invocations),
            (Self::CLIPPER_INVOCATIONS, c.clipping_invocations),
            (Self::CLIPPER_PRIMITIVES_OUT, c.clipping_primitives),
            (
                Self::FRAGMENT_SHADER_INVOCATIONS,
                c.fragment_shader_invocations,
            ),
            (
                Self::COMPUTE_SHADER_INVOCATIONS,
                c.compute_shader_invocations,
            ),
        ]
        .into_iter()
        .filter(|(s, _)| self.contains(*s))
        .map(|(_, v)| v)
        .collect()
    }
}

impl std::ops::BitOr for PipelineStatistics {
    type Output = PipelineStatistics;

    fn bitor(self, rhs: PipelineStatistics) -> PipelineStatistics {
        PipelineStatistics(self.0 | rhs.0)
    }
}

/// What a query set's queries measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryType {
    /// Samples passing the per-sample tests.
    Occlusion,
    /// The selected pipeline statistics (at least one).
    PipelineStatistics(PipelineStatistics),
}

impl QueryType {
    /// 64-bit values one query stores.
    fn values(self) -> u32 {
        match self {
            QueryType::Occlusion => 1,
            QueryType::PipelineStatistics(s) => s.count(),
        }
    }
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
    count: u32,
    /// `ty.values()` 64-bit results per query; zero until a query writes them.
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
        if desc.ty.values() == 0 {
            return validation("a pipeline-statistics query set must record some statistic");
        }
        Ok(QuerySet(Arc::new(Inner {
            label: desc.label.unwrap_or("").to_string(),
            ty: desc.ty,
            count: desc.count,
            results: Mutex::new(vec![0; (desc.count * desc.ty.values()) as usize]),
        })))
    }

    pub fn ty(&self) -> QueryType {
        self.0.ty
    }

    pub fn count(&self) -> u32 {
        self.0.count
    }

    /// Bytes one query's results take in a resolve destination.
    pub fn result_size(&self) -> u64 {
        8 * self.0.ty.values() as u64
    }

    fn results(&self) -> std::sync::MutexGuard<'_, Vec<u64>> {
        self.0.results.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores query `index`'s results (the index was validated when recorded).
    pub(crate) fn write(&self, index: u32, values: &[u64]) {
        let n = self.0.ty.values() as usize;
        self.results()[index as usize * n..][..n].copy_from_slice(values);
    }

    /// The results of queries `first..first + count` as little-endian `u64`s.
    pub(crate) fn read_bytes(&self, first: u32, count: u32) -> Vec<u8> {
        let n = self.0.ty.values() as usize;
        self.results()[first as usize * n..(first + count) as usize * n]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    }
}
