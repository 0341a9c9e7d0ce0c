#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::future::Future;
use std::sync::Arc;

use mrtr_core::TokenId;
use mrtr_core::replay::{NoReplayCache, ReplayCache, ReplayError};

mod any;
mod memory;
#[cfg(feature = "metrics")]
pub mod names;
mod readiness;
#[cfg(feature = "redis")]
pub mod redis;

pub use any::AnyReplayCache;
pub use memory::{
    BUDGET_BYTES_PER_ID, DEFAULT_MEMORY_BUDGET, DEFAULT_SHARDS, GENERATION_MS, MemoryReplayCache,
};
pub use readiness::{EvictionPolicy, NotReadyCause, Readiness};

/// Atomically checks that a token id is new and records it until `expires_at_ms`, without
/// blocking the async runtime. Of many concurrent calls with one id (on any node sharing the
/// store), exactly one may succeed; a store that cannot answer must refuse
/// ([`ReplayError::Unavailable`]).
pub trait AsyncReplayCache: Send + Sync {
    /// Records `id` until `expires_at_ms`, or refuses it.
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> impl Future<Output = Result<(), ReplayError>> + Send;
}

impl AsyncReplayCache for NoReplayCache {
    async fn check_and_record(&self, _: &TokenId, _: u64, _: u64) -> Result<(), ReplayError> {
        Ok(())
    }
}

/// The in-process cache never waits on I/O (one short shard lock), so it serves both paths.
impl AsyncReplayCache for MemoryReplayCache {
    async fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        ReplayCache::check_and_record(self, id, expires_at_ms, now_ms)
    }
}

impl<T: AsyncReplayCache + ?Sized> AsyncReplayCache for &T {
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> impl Future<Output = Result<(), ReplayError>> + Send {
        (**self).check_and_record(id, expires_at_ms, now_ms)
    }
}

impl<T: AsyncReplayCache + ?Sized> AsyncReplayCache for Arc<T> {
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> impl Future<Output = Result<(), ReplayError>> + Send {
        (**self).check_and_record(id, expires_at_ms, now_ms)
    }
}
