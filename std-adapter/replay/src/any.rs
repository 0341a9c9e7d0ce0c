//! [`AnyReplayCache`]: the replay store chosen at run time.

use std::fmt;

use mrtr_core::TokenId;

use super::Readiness;
#[cfg(feature = "redis")]
use super::redis::RedisReplayCache;
use super::{AsyncReplayCache, MemoryReplayCache, NoReplayCache, ReplayCache, ReplayError};

/// A replay cache chosen at run time: none, in process, or (feature `redis`) Redis.
///
/// It is an [`AsyncReplayCache`] for every choice, so a server picks the store by
/// configuration and keeps one engine type
/// (`mrtr-std`'s `Engine<AnyReplayCache>` or `CipherEngine<C, AnyReplayCache>`) resuming with
/// `resume_async`.
///
/// It is also a synchronous [`ReplayCache`] for the choices that can answer without I/O (off
/// and in process). The Redis cache is asynchronous only: asked synchronously it refuses every
/// token ([`ReplayError::Unavailable`], fail closed) and logs an error. Use
/// [`AnyReplayCache::serves_sync`] to check a configuration at startup.
///
/// ```
/// use mrtr_core::TokenId;
/// use mrtr_core::replay::{ReplayCache, ReplayError};
/// use mrtr_replay::AnyReplayCache;
///
/// let cache = AnyReplayCache::memory(10_000);
/// assert_eq!(cache.name(), "in-process");
/// let id: TokenId = [7; 16];
/// assert_eq!(ReplayCache::check_and_record(&cache, &id, 2_000, 1_000), Ok(()));
/// assert_eq!(ReplayCache::check_and_record(&cache, &id, 2_000, 1_000), Err(ReplayError::Replayed));
/// ```
// Built once at startup and shared, never moved per request: variant sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Default)]
pub enum AnyReplayCache {
    /// Not recorded: a token can be resumed any number of times until it expires.
    #[default]
    Off,
    /// In this process only ([`MemoryReplayCache`]).
    Memory(MemoryReplayCache),
    /// In Redis, shared by every node using the same Redis and key prefix
    /// ([`RedisReplayCache`]; asynchronous only).
    #[cfg(feature = "redis")]
    Redis(RedisReplayCache),
}

impl AnyReplayCache {
    /// An in-process cache holding at most `max_entries` live token ids (see
    /// [`MemoryReplayCache::new`]).
    pub fn memory(max_entries: usize) -> Self {
        Self::Memory(MemoryReplayCache::new(max_entries))
    }

    /// A short name for logs: `"off"`, `"in-process"` or `"redis"`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Memory(_) => "in-process",
            #[cfg(feature = "redis")]
            Self::Redis(_) => "redis",
        }
    }

    /// Whether single use is enforced at all (every choice but [`AnyReplayCache::Off`]).
    pub fn enforces_single_use(&self) -> bool {
        !matches!(self, Self::Off)
    }

    /// Whether the synchronous [`ReplayCache`] path can answer (off and in process); the
    /// Redis cache answers only [`AsyncReplayCache`].
    pub fn serves_sync(&self) -> bool {
        match self {
            Self::Off | Self::Memory(_) => true,
            #[cfg(feature = "redis")]
            Self::Redis(_) => false,
        }
    }

    /// Whether resumes can be recorded now, from what the cache last saw (no I/O). Off and
    /// in process are always [`Readiness::Ready`]; see `RedisReplayCache::readiness`.
    pub fn readiness(&self) -> Readiness {
        match self {
            Self::Off | Self::Memory(_) => Readiness::Ready,
            #[cfg(feature = "redis")]
            Self::Redis(c) => c.readiness(),
        }
    }

    /// Like [`AnyReplayCache::readiness`], but asks the store first: the Redis cache connects
    /// if needed and re-reads its eviction policy (see `RedisReplayCache::probe`). For a
    /// startup check and a `/readyz` route.
    pub async fn probe(&self) -> Readiness {
        match self {
            Self::Off | Self::Memory(_) => Readiness::Ready,
            #[cfg(feature = "redis")]
            Self::Redis(c) => c.probe().await,
        }
    }
}

impl From<NoReplayCache> for AnyReplayCache {
    fn from(_: NoReplayCache) -> Self {
        Self::Off
    }
}

impl From<MemoryReplayCache> for AnyReplayCache {
    fn from(cache: MemoryReplayCache) -> Self {
        Self::Memory(cache)
    }
}

#[cfg(feature = "redis")]
impl From<RedisReplayCache> for AnyReplayCache {
    fn from(cache: RedisReplayCache) -> Self {
        Self::Redis(cache)
    }
}

impl AsyncReplayCache for AnyReplayCache {
    async fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        match self {
            Self::Off => Ok(()),
            Self::Memory(c) => ReplayCache::check_and_record(c, id, expires_at_ms, now_ms),
            #[cfg(feature = "redis")]
            // Boxed: Redis's future is about 2.5 KiB, and without the box every resume's
            // future (and the task rmcp spawns per request) would carry that size even with
            // the in-process cache. One allocation beside a network round trip.
            Self::Redis(c) => {
                Box::pin(AsyncReplayCache::check_and_record(
                    c,
                    id,
                    expires_at_ms,
                    now_ms,
                ))
                .await
            }
        }
    }
}

impl ReplayCache for AnyReplayCache {
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        match self {
            Self::Off => Ok(()),
            Self::Memory(c) => ReplayCache::check_and_record(c, id, expires_at_ms, now_ms),
            #[cfg(feature = "redis")]
            Self::Redis(_) => {
                tracing::error!(
                    target: "mrtr",
                    "the Redis replay cache cannot answer a synchronous check (use resume_async); token refused"
                );
                Err(ReplayError::Unavailable)
            }
        }
    }
}

impl fmt::Display for AnyReplayCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
