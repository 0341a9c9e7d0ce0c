//! An in-process replay cache for many threads: sharded, bounded, incrementally evicted.
//!
//! Each token id lives in one of a fixed number of shards (chosen by the id's random bytes),
//! each behind its own mutex, so threads resuming different tokens rarely contend. A shard
//! keeps a hash map from token id to expiry, for the atomic check-and-record, and a min-heap
//! of expiries, for eviction.
//!
//! * **Atomic**: the lookup and the insert happen under one shard lock, so of many racing
//!   calls with one id exactly one succeeds.
//! * **Expiry**: an entry lives until its token expires (`expires_at > now`); after that the
//!   id is forgotten (the token itself is then refused as expired anyway).
//! * **Bounded**: at most `max_entries` entries in all, split evenly across the shards. A
//!   shard full of live entries refuses new ids with [`ReplayError::Full`] (fail closed); it
//!   never forgets a live id to make room.
//! * **No stop-the-world sweep**: every call first evicts at most [`EVICT_PER_CALL`] expired
//!   entries of its own shard (the earliest expiries, from the heap), and a full shard evicts
//!   whatever has expired before refusing. Work per call is bounded and amortized O(log n),
//!   and only one shard is ever locked.
//!
//! ## Memory
//!
//! Each entry costs one map slot (16-byte id + 8-byte expiry + 1 control byte, at a load factor
//! of at most 7/8) and one heap slot (8 + 16 bytes). Both are allocated up front for
//! `max_entries`, so the cache never reallocates and its size is fixed: measured about 60 bytes per
//! entry (see `examples/replay_memory.rs`; `cargo run --release -p mrtr-std --example
//! replay_memory`). One million entries take about 60 MB.
//!
//! ```
//! use mrtr_std::replay_mem::MemoryReplayCache;
//! use mrtr_std::core::replay::{ReplayCache, ReplayError};
//!
//! let cache = MemoryReplayCache::new(10_000);
//! let id = [9u8; 16];
//! assert_eq!(cache.check_and_record(&id, 2_000, 1_000), Ok(()));
//! assert_eq!(cache.check_and_record(&id, 2_000, 1_500), Err(ReplayError::Replayed));
//! assert_eq!(cache.check_and_record(&id, 3_000, 2_000), Ok(())); // the first entry expired
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::sync::Mutex;

use mrtr_core::TokenId;
use mrtr_core::replay::{ReplayCache, ReplayError};

/// Most expired entries one call evicts from its shard when the shard is not full.
pub const EVICT_PER_CALL: usize = 8;

/// Default number of shards.
pub const DEFAULT_SHARDS: usize = 64;

struct Shard {
    live: HashMap<TokenId, u64>,
    by_expiry: BinaryHeap<Reverse<(u64, TokenId)>>,
    capacity: usize,
}

impl Shard {
    fn new(capacity: usize) -> Self {
        Self {
            live: HashMap::with_capacity(capacity),
            by_expiry: BinaryHeap::with_capacity(capacity),
            capacity,
        }
    }

    /// Pops the earliest expiry if it is past; `false` when nothing has expired.
    fn evict_one(&mut self, now_ms: u64) -> bool {
        match self.by_expiry.peek() {
            Some(Reverse((exp, _))) if *exp <= now_ms => {}
            _ => return false,
        }
        if let Some(Reverse((exp, id))) = self.by_expiry.pop() {
            // The id may have been recorded again with a later expiry: keep that one.
            if self.live.get(&id) == Some(&exp) {
                self.live.remove(&id);
            }
        }
        true
    }

    fn check_and_record(
        &mut self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        for _ in 0..EVICT_PER_CALL {
            if !self.evict_one(now_ms) {
                break;
            }
        }
        if let Some(&exp) = self.live.get(id) {
            if exp > now_ms {
                return Err(ReplayError::Replayed);
            }
        }
        // Heap slots bound memory (the heap may briefly hold a stale slot for a re-recorded id).
        while self.by_expiry.len() >= self.capacity {
            if !self.evict_one(now_ms) {
                return Err(ReplayError::Full);
            }
        }
        self.live.insert(*id, expires_at_ms);
        self.by_expiry.push(Reverse((expires_at_ms, *id)));
        Ok(())
    }
}

/// A concurrent, bounded, in-process [`ReplayCache`] (see the [module docs](self)).
///
/// Single use within one process only: nodes behind a load balancer need a shared store,
/// such as the Redis cache.
pub struct MemoryReplayCache {
    shards: Box<[Mutex<Shard>]>,
    max_entries: usize,
}

impl MemoryReplayCache {
    /// A cache holding at most `max_entries` live token ids (at least one per shard), in
    /// [`DEFAULT_SHARDS`] shards.
    pub fn new(max_entries: usize) -> Self {
        Self::with_shards(max_entries, DEFAULT_SHARDS)
    }

    /// A cache holding at most `max_entries` live token ids in `shards` shards (rounded up to
    /// a power of two, at least 1, and at most `max_entries`). Each shard holds
    /// `max_entries / shards`, so the total may round down by fewer than `shards` entries.
    pub fn with_shards(max_entries: usize, shards: usize) -> Self {
        let max_entries = max_entries.max(1);
        let mut n = shards.clamp(1, max_entries).next_power_of_two();
        if n > max_entries {
            n /= 2;
        }
        let per_shard = max_entries / n;
        let shards = (0..n).map(|_| Mutex::new(Shard::new(per_shard))).collect();
        Self {
            shards,
            max_entries: per_shard * n,
        }
    }

    /// The most entries the cache holds.
    pub fn capacity(&self) -> usize {
        self.max_entries
    }

    /// The number of shards.
    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// Entries held now, including expired ones not yet evicted. Locks each shard in turn.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().map(|s| s.live.len()).unwrap_or(0))
            .sum()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn shard(&self, id: &TokenId) -> &Mutex<Shard> {
        // Token ids are uniformly random, so their first bytes spread ids evenly.
        let h = u32::from_le_bytes([id[0], id[1], id[2], id[3]]) as usize;
        &self.shards[h & (self.shards.len() - 1)]
    }
}

impl ReplayCache for MemoryReplayCache {
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        match self.shard(id).lock() {
            Ok(mut shard) => shard.check_and_record(id, expires_at_ms, now_ms),
            // A panic while the lock was held: the shard may be inconsistent. Fail closed.
            Err(_) => Err(ReplayError::Unavailable),
        }
    }
}

impl fmt::Debug for MemoryReplayCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryReplayCache")
            .field("capacity", &self.max_entries)
            .field("shards", &self.shards.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> TokenId {
        let mut id = [0u8; 16];
        id[..4].copy_from_slice(&n.to_le_bytes());
        id[12..].copy_from_slice(&n.to_be_bytes());
        id
    }

    #[test]
    fn full_of_live_entries_refuses_then_recovers_after_expiry() {
        let c = MemoryReplayCache::with_shards(4, 1);
        for n in 0..4 {
            assert_eq!(c.check_and_record(&id(n), 1_000 + n as u64, 0), Ok(()));
        }
        assert_eq!(
            c.check_and_record(&id(99), 5_000, 10),
            Err(ReplayError::Full)
        );
        // Live ids are still remembered while full.
        assert_eq!(
            c.check_and_record(&id(2), 1_002, 10),
            Err(ReplayError::Replayed)
        );
        // Once the earliest expires, exactly one slot frees up.
        assert_eq!(c.check_and_record(&id(99), 5_000, 1_000), Ok(()));
        assert_eq!(
            c.check_and_record(&id(98), 5_000, 1_000),
            Err(ReplayError::Full)
        );
        assert_eq!(
            c.check_and_record(&id(0), 5_000, 1_000),
            Err(ReplayError::Full)
        );
        assert_eq!(c.len(), 4);
    }

    #[test]
    fn expiry_boundary_matches_the_token() {
        let c = MemoryReplayCache::new(16);
        assert_eq!(c.check_and_record(&id(1), 500, 100), Ok(()));
        assert_eq!(
            c.check_and_record(&id(1), 500, 499),
            Err(ReplayError::Replayed)
        );
        assert_eq!(c.check_and_record(&id(1), 900, 500), Ok(()));
        assert_eq!(
            c.check_and_record(&id(1), 900, 899),
            Err(ReplayError::Replayed)
        );
    }

    #[test]
    fn re_recorded_id_is_not_evicted_by_its_stale_heap_slot() {
        let c = MemoryReplayCache::with_shards(8, 1);
        assert_eq!(c.check_and_record(&id(1), 100, 0), Ok(()));
        // Expired but not yet evicted (no call in between): recorded again with a later expiry.
        let mut shard = c.shards[0].lock().unwrap();
        assert_eq!(shard.check_and_record(&id(1), 1_000, 100), Ok(()));
        drop(shard);
        // The stale (100, id) slot is popped now; the live entry must survive it.
        assert_eq!(c.check_and_record(&id(2), 1_000, 200), Ok(()));
        assert_eq!(
            c.check_and_record(&id(1), 1_000, 300),
            Err(ReplayError::Replayed)
        );
    }

    #[test]
    fn eviction_is_incremental() {
        let c = MemoryReplayCache::with_shards(1_000, 1);
        for n in 0..100 {
            c.check_and_record(&id(n), 10, 0).unwrap();
        }
        // All 100 expired; one call evicts at most EVICT_PER_CALL of them (plus nothing else).
        c.check_and_record(&id(1_000), 100, 50).unwrap();
        assert_eq!(c.len(), 100 - EVICT_PER_CALL + 1);
    }

    #[test]
    fn shard_count_is_a_power_of_two_within_capacity() {
        assert_eq!(MemoryReplayCache::with_shards(1_000, 48).shards(), 64);
        assert_eq!(MemoryReplayCache::with_shards(3, 64).shards(), 2);
        assert_eq!(MemoryReplayCache::with_shards(0, 0).capacity(), 1);
        let c = MemoryReplayCache::with_shards(1_000, 64);
        assert_eq!(c.capacity(), 15 * 64);
        assert!(format!("{c:?}").contains("capacity: 960"));
    }
}
