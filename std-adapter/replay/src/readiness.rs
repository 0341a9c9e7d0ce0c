//! Whether a replay cache can record tokens right now, and if not, why.
//!
//! The in-process cache and "off" are always [`Readiness::Ready`]. The Redis caches are ready
//! once connected to a Redis whose `maxmemory-policy` is `noeviction`, and stop being ready
//! while Redis is unreachable, runs an evicting policy, is out of memory, or (with
//! [`wait_for_replicas`](crate::redis::RedisReplayCacheBuilder::wait_for_replicas))
//! leaves writes unacknowledged by its replicas. A server maps this to its readiness probe
//! (`/readyz`); liveness is another matter.
//!
//! No cause ever holds the Redis URL (it may hold a password).
//!
//! ```
//! use mrtr_replay::{AnyReplayCache, NotReadyCause, Readiness};
//!
//! assert_eq!(AnyReplayCache::memory(1_000).readiness(), Readiness::Ready);
//! let not_ready = Readiness::NotReady(NotReadyCause::Unreachable);
//! assert!(!not_ready.is_ready());
//! assert_eq!(not_ready.cause().map(NotReadyCause::code), Some("unreachable"));
//! ```

use std::fmt;

/// Whether a replay cache can record tokens now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Resumes can be recorded.
    Ready,
    /// Every resume is refused as "store unavailable" (fail closed), for this cause.
    NotReady(NotReadyCause),
}

impl Readiness {
    /// Whether it is [`Readiness::Ready`].
    pub fn is_ready(self) -> bool {
        matches!(self, Self::Ready)
    }

    /// The cause, when not ready.
    pub fn cause(self) -> Option<NotReadyCause> {
        match self {
            Self::Ready => None,
            Self::NotReady(cause) => Some(cause),
        }
    }
}

impl fmt::Display for Readiness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ready => f.write_str("ready"),
            Self::NotReady(cause) => cause.fmt(f),
        }
    }
}

/// Why a replay cache is not ready.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotReadyCause {
    /// No connection has been attempted yet (the first resume or probe connects).
    NotConnected,
    /// The last connection attempt failed or timed out, or the connection broke.
    Unreachable,
    /// Redis runs an eviction policy that can drop live replay entries, after which a spent
    /// token would be accepted again. The fix: `maxmemory-policy noeviction`.
    EvictingPolicy(EvictionPolicy),
    /// Redis refused both `INFO memory` and `CONFIG GET maxmemory-policy`, so the eviction
    /// policy is unknown.
    PolicyUnreadable,
    /// Fewer replicas than required acknowledged the last write within the timeout (`WAIT`).
    ReplicasUnacknowledged,
    /// Redis refused the last write with `OOM` (its `maxmemory` is reached under
    /// `noeviction`); it recovers as entries expire or memory is raised.
    OutOfMemory,
}

impl NotReadyCause {
    /// A stable snake_case code for metrics and alerts.
    pub fn code(self) -> &'static str {
        match self {
            Self::NotConnected => "not_connected",
            Self::Unreachable => "unreachable",
            Self::EvictingPolicy(_) => "evicting_policy",
            Self::PolicyUnreadable => "policy_unreadable",
            Self::ReplicasUnacknowledged => "replicas_unacknowledged",
            Self::OutOfMemory => "out_of_memory",
        }
    }
}

impl fmt::Display for NotReadyCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotConnected => f.write_str("replay store: not connected yet"),
            Self::Unreachable => f.write_str("replay store: Redis unreachable"),
            Self::EvictingPolicy(p) => write!(
                f,
                "replay store: Redis maxmemory-policy is {p}, which can evict live entries \
                 (needs noeviction)"
            ),
            Self::PolicyUnreadable => f.write_str(
                "replay store: cannot read Redis maxmemory-policy (INFO and CONFIG GET refused)",
            ),
            Self::ReplicasUnacknowledged => {
                f.write_str("replay store: Redis replicas did not acknowledge the last write")
            }
            Self::OutOfMemory => f.write_str("replay store: Redis is out of memory (maxmemory)"),
        }
    }
}

/// A Redis `maxmemory-policy` that can evict keys (every policy but `noeviction`).
///
/// The `volatile-*` policies evict only keys with an expiry, but every replay entry has one,
/// so they are as unsafe here as the `allkeys-*` ones.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvictionPolicy {
    /// `volatile-lru`
    VolatileLru,
    /// `volatile-lfu`
    VolatileLfu,
    /// `volatile-random`
    VolatileRandom,
    /// `volatile-ttl`
    VolatileTtl,
    /// `allkeys-lru`
    AllkeysLru,
    /// `allkeys-lfu`
    AllkeysLfu,
    /// `allkeys-random`
    AllkeysRandom,
    /// A policy name this version does not know (treated as evicting: fail closed).
    Unrecognized,
}

impl EvictionPolicy {
    /// The policy named `name` as Redis reports it, or `None` for `noeviction`, the one policy
    /// that never evicts. Unknown names are [`EvictionPolicy::Unrecognized`].
    ///
    /// ```
    /// use mrtr_replay::EvictionPolicy;
    ///
    /// assert_eq!(EvictionPolicy::from_name("noeviction"), None);
    /// assert_eq!(EvictionPolicy::from_name("allkeys-lru"), Some(EvictionPolicy::AllkeysLru));
    /// assert_eq!(EvictionPolicy::from_name("lru-someday"), Some(EvictionPolicy::Unrecognized));
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.trim() {
            "noeviction" => return None,
            "volatile-lru" => Self::VolatileLru,
            "volatile-lfu" => Self::VolatileLfu,
            "volatile-random" => Self::VolatileRandom,
            "volatile-ttl" => Self::VolatileTtl,
            "allkeys-lru" => Self::AllkeysLru,
            "allkeys-lfu" => Self::AllkeysLfu,
            "allkeys-random" => Self::AllkeysRandom,
            _ => Self::Unrecognized,
        })
    }

    /// The Redis name (`"unrecognized"` for an unknown one).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::VolatileLru => "volatile-lru",
            Self::VolatileLfu => "volatile-lfu",
            Self::VolatileRandom => "volatile-random",
            Self::VolatileTtl => "volatile-ttl",
            Self::AllkeysLru => "allkeys-lru",
            Self::AllkeysLfu => "allkeys-lfu",
            Self::AllkeysRandom => "allkeys-random",
            Self::Unrecognized => "unrecognized",
        }
    }
}

impl fmt::Display for EvictionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
