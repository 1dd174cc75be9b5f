//! The object handed back for wgpu features rastra does not have (ray tracing acceleration
//! structures, external textures, pipeline caches): creating one reports the feature as
//! unsupported, and the object itself does nothing.

use wgpu::custom::*;

/// An object of a feature rastra does not implement.
#[derive(Debug)]
pub struct Inert;

impl BlasInterface for Inert {
    fn prepare_compact_async(&self, callback: BlasCompactCallback) {
        callback(Err(wgpu::BlasAsyncError));
    }

    fn ready_for_compaction(&self) -> bool {
        false
    }
}

impl TlasInterface for Inert {}

impl ExternalTextureInterface for Inert {
    fn destroy(&self) {}
}

impl PipelineCacheInterface for Inert {
    fn get_data(&self) -> Option<Vec<u8>> {
        None
    }
}
