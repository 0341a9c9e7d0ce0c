//! An in-process replay cache for many threads: sharded, bounded, incrementally evicted.
//!
//! Each token id lives in one of a fixed number of shards (chosen by the id's random bytes),
//! each behind its own mutex, so threads resuming different tokens rarely contend. A shard
//! keeps a hash map from token id to expiry, for the atomic check-and-record, and a FIFO queue
//! of (expiry, id) in recording order, for eviction. Ids are recorded with `expires_at = now +
//! ttl`, so a shard's queue is (nearly) in expiry order and eviction pops its front in O(1); an
//! id recorded out of order (a shorter TTL, a clock step) only waits behind the front: it is
//! never forgotten early. The map hashes the id's own random bytes (no SipHash): ids reach the
//! cache only after the AEAD has authenticated them, so a client cannot choose them.
//!
//! * **Atomic**: the lookup and the insert happen under one shard lock, so of many racing
//!   calls with one id exactly one succeeds.
//! * **Expiry**: an entry lives until its token expires (`expires_at > now`); after that the
//!   id is forgotten (the token itself is then refused as expired anyway), and its expiry is
//!   kept in the shard's [`EvictedSpans`]: a token whose expiry lies where ids were forgotten
//!   is refused, so a wall clock stepped back cannot revive a spent token. Eviction follows
//!   the clock as it is (no remembered "latest time"), so after a forward jump is corrected,
//!   fresh tokens are accepted at once.
//! * **Bounded**: at most `max_entries` entries in all (one atomic counter across the
//!   shards). When the cache is full, the call evicts up to [`EVICT_WHEN_FULL`] expired
//!   entries of its own shard, then of each other shard that is not locked at that moment
//!   (`try_lock`, never waiting), until a slot is free; if every entry is live it refuses the new id with [`ReplayError::Full`] (fail
//!   closed): it never forgets a live id to make room.
//! * **No stop-the-world sweep**: in passing, every call evicts at most [`EVICT_PER_CALL`]
//!   expired entries of its own shard (from the front of its queue), so expired entries drain
//!   steadily at amortized O(1) per call, and only one shard is ever waited for.
//!
//! ## Memory
//!
//! Each entry costs one hash-map slot (16-byte id + 8-byte expiry + 1 control byte, load
//! factor at most 7/8) and one queue slot (8 + 16 bytes); both tables grow by doubling, so an
//! entry costs 53 to 105 bytes depending on where the tables are in their growth. Measured
//! (resident set growth, cache full of live entries, `cargo run --release -p mrtr-std
//! --example replay_memory -- 10000 100000 1000000`): 101, 67 and 80 bytes per entry. Plan
//! on about 100 bytes per entry: 1 million live tokens take at most ~105 MB.
//!
//! ```
//! use mrtr_std::replay::MemoryReplayCache;
//! use mrtr_std::core::replay::{ReplayCache, ReplayError};
//!
//! let cache = MemoryReplayCache::new(10_000);
//! let id = [9u8; 16];
//! assert_eq!(cache.check_and_record(&id, 2_000, 1_000), Ok(()));
//! assert_eq!(cache.check_and_record(&id, 2_000, 1_500), Err(ReplayError::Replayed));
//! assert_eq!(cache.check_and_record(&id, 3_000, 2_000), Ok(())); // the first entry expired
//! ```

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use mrtr_core::TokenId;
use mrtr_core::replay::{DEFAULT_SPANS, EvictedSpans, ReplayCache, ReplayError};

/// Most expired entries one call evicts from a shard in passing.
pub const EVICT_PER_CALL: usize = 8;

/// Most expired entries a call evicts per shard when the cache is full.
pub const EVICT_WHEN_FULL: usize = 64;

/// Default number of shards.
pub const DEFAULT_SHARDS: usize = 64;

/// Hashes a token id by taking 8 of its random bytes as they are (bytes 4..12; bytes 0..4
/// choose the shard). Only for authenticated, server-generated ids.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        if let Some(b) = bytes.get(4..12) {
            let mut x = [0u8; 8];
            x.copy_from_slice(b);
            self.0 = u64::from_le_bytes(x);
        }
    }

    fn write_usize(&mut self, _: usize) {}

    fn finish(&self) -> u64 {
        self.0
    }
}

#[derive(Default)]
struct Shard {
    live: HashMap<TokenId, u64, BuildHasherDefault<IdHasher>>,
    /// (expiry, id) in recording order.
    queue: VecDeque<(u64, TokenId)>,
    /// Where the ids this shard forgot expired.
    evicted: EvictedSpans<DEFAULT_SPANS>,
}

impl Shard {
    /// Pops the front of the queue if it has expired; `false` when it has not (or the queue is
    /// empty). The caller releases the slot it held.
    fn evict_one(&mut self, now_ms: u64) -> bool {
        match self.queue.front() {
            Some((exp, _)) if *exp <= now_ms => {}
            _ => return false,
        }
        if let Some((exp, id)) = self.queue.pop_front() {
            // The id may have been recorded again with a later expiry: keep that one.
            if self.live.get(&id) == Some(&exp) {
                self.live.remove(&id);
                self.evicted.insert(exp);
            }
        }
        true
    }

    /// Evicts up to `max` expired entries; returns how many.
    fn evict(&mut self, now_ms: u64, max: usize) -> usize {
        let mut n = 0;
        while n < max && self.evict_one(now_ms) {
            n += 1;
        }
        n
    }
}

/// A concurrent, bounded, in-process [`ReplayCache`] (see the [module docs](self)).
///
/// Single use within one process only: nodes behind a load balancer need a shared store,
/// such as the Redis cache.
pub struct MemoryReplayCache {
    shards: Box<[Mutex<Shard>]>,
    max_entries: usize,
    /// Heap slots in use across all shards (each entry holds one).
    used: AtomicUsize,
}

impl MemoryReplayCache {
    /// A cache holding at most `max_entries` live token ids (at least 1), in
    /// [`DEFAULT_SHARDS`] shards.
    pub fn new(max_entries: usize) -> Self {
        Self::with_shards(max_entries, DEFAULT_SHARDS)
    }

    /// A cache holding at most `max_entries` live token ids (at least 1) in `shards` shards
    /// (rounded up to a power of two, between 1 and 1024).
    pub fn with_shards(max_entries: usize, shards: usize) -> Self {
        let n = shards.clamp(1, 1024).next_power_of_two();
        Self {
            shards: (0..n).map(|_| Mutex::new(Shard::default())).collect(),
            max_entries: max_entries.max(1),
            used: AtomicUsize::new(0),
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

    fn shard_index(&self, id: &TokenId) -> usize {
        // Token ids are uniformly random, so their first bytes spread ids evenly.
        let h = u32::from_le_bytes([id[0], id[1], id[2], id[3]]) as usize;
        h & (self.shards.len() - 1)
    }

    fn reserve(&self) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                (u < self.max_entries).then_some(u + 1)
            })
            .is_ok()
    }

    fn release(&self, n: usize) {
        if n > 0 {
            self.used.fetch_sub(n, Ordering::AcqRel);
        }
    }

    /// The cache is full: frees expired entries, first in the locked shard `own`, then in the
    /// others that are not locked right now (`try_lock`: never waits, never deadlocks), until a
    /// slot is reserved. `false` when every reachable entry is live.
    fn reserve_after_eviction(&self, own: &mut Shard, own_index: usize, now_ms: u64) -> bool {
        self.release(own.evict(now_ms, EVICT_WHEN_FULL));
        if self.reserve() {
            return true;
        }
        let n = self.shards.len();
        for step in 1..n {
            let i = (own_index + step) & (n - 1);
            if let Ok(mut other) = self.shards[i].try_lock() {
                self.release(other.evict(now_ms, EVICT_WHEN_FULL));
            }
            if self.reserve() {
                return true;
            }
        }
        false
    }
}

impl ReplayCache for MemoryReplayCache {
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        let index = self.shard_index(id);
        // A panic while a lock was held may have left the shard inconsistent: fail closed.
        let mut shard = self.shards[index]
            .lock()
            .map_err(|_| ReplayError::Unavailable)?;
        self.release(shard.evict(now_ms, EVICT_PER_CALL));
        // Already expired (it could not be recorded), or possibly recorded and forgotten.
        if expires_at_ms <= now_ms || shard.evicted.covers(expires_at_ms) {
            return Err(ReplayError::Replayed);
        }
        if let Some(&exp) = shard.live.get(id)
            && exp > now_ms
        {
            return Err(ReplayError::Replayed);
        }
        if !self.reserve() && !self.reserve_after_eviction(&mut shard, index, now_ms) {
            return Err(ReplayError::Full);
        }
        shard.live.insert(*id, expires_at_ms);
        shard.queue.push_back((expires_at_ms, *id));
        Ok(())
    }
}

impl fmt::Debug for MemoryReplayCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryReplayCache")
            .field("capacity", &self.max_entries)
            .field("used", &self.used.load(Ordering::Relaxed))
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
    fn re_recorded_id_is_not_evicted_by_its_stale_queue_slot() {
        let c = MemoryReplayCache::with_shards(8, 1);
        assert_eq!(c.check_and_record(&id(1), 100, 0), Ok(()));
        // Expired but not yet evicted (no call in between): recorded again with a later expiry.
        // Simulate the race: the earlier entry is still held when the id comes back.
        {
            let mut shard = c.shards[0].lock().unwrap();
            assert!(c.reserve());
            shard.live.insert(id(1), 1_000);
            shard.queue.push_back((1_000, id(1)));
        }
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
    fn shard_count_is_a_power_of_two() {
        assert_eq!(MemoryReplayCache::with_shards(1_000, 48).shards(), 64);
        assert_eq!(MemoryReplayCache::with_shards(3, 0).shards(), 1);
        assert_eq!(MemoryReplayCache::with_shards(3, 5_000).shards(), 1024);
        assert_eq!(MemoryReplayCache::with_shards(0, 8).capacity(), 1);
        let c = MemoryReplayCache::with_shards(1_000, 64);
        assert_eq!(c.capacity(), 1_000);
        assert!(format!("{c:?}").contains("capacity: 1000"));
    }

    #[test]
    fn capacity_is_global_and_a_full_cache_frees_expired_entries_of_other_shards() {
        let c = MemoryReplayCache::with_shards(4, 4);
        // Four ids, one per shard (the shard is the low bits of the first byte).
        for n in 0..4u8 {
            let mut i = [0u8; 16];
            i[0] = n;
            assert_eq!(c.check_and_record(&i, 100, 0), Ok(()));
        }
        let mut fresh = [0u8; 16];
        fresh[0] = 0;
        fresh[15] = 1;
        assert_eq!(c.check_and_record(&fresh, 500, 50), Err(ReplayError::Full));
        // At 100 they have all expired; the new id lands in shard 0 and may free any shard.
        assert_eq!(c.check_and_record(&fresh, 500, 100), Ok(()));
        for n in 1..4u8 {
            let mut i = [0u8; 16];
            i[0] = n;
            i[15] = 2;
            assert_eq!(c.check_and_record(&i, 500, 100), Ok(()), "shard {n}");
        }
        assert_eq!(c.used.load(Ordering::SeqCst), 4);
    }
}
