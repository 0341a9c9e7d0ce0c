//! [`MemoryReplayCache`]: the in-process replay cache.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use mrtr_core::TokenId;
use mrtr_core::replay::{ReplayCache, ReplayError};

/// Width of a generation: ids whose tokens expire within the same 1,024 ms are kept, and
/// dropped, together.
pub const GENERATION_MS: u64 = 1024;

/// Default number of shards.
pub const DEFAULT_SHARDS: usize = 64;

/// Bytes a memory budget reserves per live id: the worst case of a hash-set slot (38.9 bytes
/// just after its table doubled) plus a share of the generations' fixed costs.
pub const BUDGET_BYTES_PER_ID: usize = 48;

/// The default memory budget of the in-process store: 256 MiB, about 5.6 million live ids
/// (18,600 resumes a second at the 5-minute TTL).
pub const DEFAULT_MEMORY_BUDGET: usize = 256 << 20;

/// Most spans of forgotten expiries a shard keeps (closest spans merge beyond it).
const FORGOTTEN_SPANS: usize = 4;

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

type IdSet = HashSet<TokenId, BuildHasherDefault<IdHasher>>;

/// The ids of one shard whose tokens expire within one [`GENERATION_MS`] window.
struct Generation {
    /// `expiry / GENERATION_MS` of every id held.
    index: u64,
    /// Earliest and latest expiry held.
    earliest: u64,
    latest: u64,
    ids: IdSet,
}

/// Sorted, disjoint, inclusive spans of expiries a shard forgot; widened, never narrowed.
#[derive(Default)]
struct Forgotten {
    spans: Vec<(u64, u64)>,
}

impl Forgotten {
    fn covers(&self, expiry: u64) -> bool {
        self.spans
            .iter()
            .any(|&(lo, hi)| lo <= expiry && expiry <= hi)
    }

    /// Records that ids with expiries in `[lo, hi]` were forgotten.
    fn insert(&mut self, lo: u64, hi: u64) {
        let (mut lo, mut hi) = (lo.min(hi), lo.max(hi));
        // Absorb every span that overlaps or touches the new one.
        self.spans.retain(|&(a, b)| {
            let joins = a <= hi.saturating_add(1) && lo <= b.saturating_add(1);
            if joins {
                lo = lo.min(a);
                hi = hi.max(b);
            }
            !joins
        });
        let at = self.spans.partition_point(|&(a, _)| a < lo);
        self.spans.insert(at, (lo, hi));
        // Too many: merge the closest neighbours (covers more, never less).
        while self.spans.len() > FORGOTTEN_SPANS {
            let Some(i) =
                (0..self.spans.len() - 1).min_by_key(|&i| self.spans[i + 1].0 - self.spans[i].1)
            else {
                break;
            };
            self.spans[i].1 = self.spans[i + 1].1;
            self.spans.remove(i + 1);
        }
    }
}

#[derive(Default)]
struct Shard {
    /// In increasing `index` order.
    gens: VecDeque<Generation>,
    forgotten: Forgotten,
}

impl Shard {
    /// Drops every generation whose ids have all expired; returns how many ids it held. The
    /// generations are in expiry order, so the expired ones are at the front.
    fn evict(&mut self, now_ms: u64) -> usize {
        let mut released = 0;
        while let Some(g) = self.gens.front() {
            if g.latest > now_ms {
                break;
            }
            released += g.ids.len();
            self.forgotten.insert(g.earliest, g.latest);
            self.gens.pop_front();
        }
        released
    }

    fn len(&self) -> usize {
        self.gens.iter().map(|g| g.ids.len()).sum()
    }
}

/// A concurrent, bounded, in-process [`ReplayCache`].
///
/// An in-process replay cache for many threads: sharded, bounded by a memory budget, evicted
/// a second of expiries at a time.
///
/// Each token id lives in one of a fixed number of shards (chosen by the id's random bytes),
/// each behind its own mutex, so threads resuming different tokens rarely contend. A shard
/// groups its ids into **generations** by expiry: generation `g` holds the ids whose token
/// expires in `[g × GENERATION_MS, (g + 1) × GENERATION_MS)` (about one second), as a plain
/// hash set of 16-byte ids. A token's expiry is authenticated with its id (both are sealed in
/// the token), so an id always comes back with the same expiry: the check looks in one set.
/// A generation is dropped whole (one deallocation, nothing per id) once its latest expiry has
/// passed. The sets hash the id's own random bytes (no SipHash): ids reach the cache only
/// after the AEAD has authenticated them, so a client cannot choose them.
///
/// * **Atomic**: the lookup and the insert happen under one shard lock, so of many racing
///   calls with one id exactly one succeeds.
/// * **Expiry**: an id is held until every id of its generation has expired (at most
///   [`GENERATION_MS`] after its own expiry; the token itself is refused as expired from its
///   own expiry on). The expiries a shard forgot are kept as a few spans: a token whose expiry
///   lies where ids were forgotten is refused, so a wall clock stepped back cannot revive a
///   spent token. Eviction follows the clock as it is (no remembered "latest time"), so after
///   a forward jump is corrected, fresh tokens are accepted at once.
/// * **Bounded**: at most `capacity` ids in all (one atomic counter across the shards), set
///   directly ([`MemoryReplayCache::new`]) or from a memory budget
///   ([`MemoryReplayCache::with_memory_budget`]). When the cache is full, the call drops the
///   expired generations of each other shard that is not locked at that moment (`try_lock`,
///   never waiting) until a slot is free; if every id is live it refuses the new one with
///   [`ReplayError::Full`] (fail closed): it never forgets a live id to make room.
/// * **No sweep**: every call drops the expired generations of its own shard, each in O(1).
///
/// ## Memory
///
/// An id costs one hash-set slot: 16 bytes and one control byte, at a load factor of at most
/// 7/8, in a table that grows by doubling: 19.4 bytes per id in a full table, 38.9 just after
/// it doubled. Each generation in use adds about 150 bytes (its table's smallest allocation
/// and its header): with 64 shards and a 5-minute TTL at most about 19,000 generations, 2.8 MB.
/// [`MemoryReplayCache::with_memory_budget`] turns a budget into a capacity at
/// [`BUDGET_BYTES_PER_ID`] bytes per id, which covers both. Measured in steady state at 10,000
/// resumes a second and a 5-minute TTL (3.0 million live ids; `cargo run --release -p
/// mrtr-std --example replay_budget`): 27.9 bytes per id on the heap (counting allocator),
/// 28.2 by resident set growth; see `docs/operations.md`, "Quotas and sizing".
///
/// ```
/// use mrtr_replay::MemoryReplayCache;
/// use mrtr_core::replay::{ReplayCache, ReplayError};
///
/// let cache = MemoryReplayCache::new(10_000);
/// let id = [9u8; 16];
/// assert_eq!(cache.check_and_record(&id, 2_000, 1_000), Ok(()));
/// assert_eq!(cache.check_and_record(&id, 2_000, 1_500), Err(ReplayError::Replayed));
/// assert_eq!(cache.check_and_record(&id, 2_000, 2_000), Err(ReplayError::Replayed)); // expired
/// let mut other = id;
/// other[15] = 1; // same shard (the first bytes choose it)
/// assert_eq!(cache.check_and_record(&other, 9_000, 3_100), Ok(())); // the first one's generation is gone
/// assert_eq!(cache.len(), 1);
/// ```
///
/// Single use within one process only: nodes behind a load balancer need a shared store,
/// such as the Redis cache.
pub struct MemoryReplayCache {
    shards: Box<[Mutex<Shard>]>,
    max_entries: usize,
    /// Ids held across all shards.
    used: AtomicUsize,
}

impl Default for MemoryReplayCache {
    /// A cache sized by [`DEFAULT_MEMORY_BUDGET`].
    fn default() -> Self {
        Self::with_memory_budget(DEFAULT_MEMORY_BUDGET)
    }
}

impl MemoryReplayCache {
    /// A cache holding at most `max_entries` live token ids (at least 1), in
    /// [`DEFAULT_SHARDS`] shards.
    pub fn new(max_entries: usize) -> Self {
        Self::with_shards(max_entries, DEFAULT_SHARDS)
    }

    /// A cache whose ids take at most about `bytes` of memory: a capacity of
    /// `bytes / BUDGET_BYTES_PER_ID` ids (see [`MemoryReplayCache`] for what an id costs).
    /// Memory is taken as ids arrive, not up front.
    pub fn with_memory_budget(bytes: usize) -> Self {
        Self::new(Self::capacity_for_budget(bytes))
    }

    /// The capacity [`MemoryReplayCache::with_memory_budget`] gives `bytes`.
    pub const fn capacity_for_budget(bytes: usize) -> usize {
        bytes / BUDGET_BYTES_PER_ID
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

    /// Entries held now, including expired ones whose generation is not yet dropped. Locks
    /// each shard in turn.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().map(|s| s.len()).unwrap_or(0))
            .sum()
    }

    /// Entries held now, read from the counter without taking any lock (for metrics and
    /// reports).
    pub fn occupancy(&self) -> usize {
        self.used.load(Ordering::Relaxed)
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

    /// The cache is full: drops expired generations of the shards other than `own_index` that
    /// are not locked right now (`try_lock`: never waits, never deadlocks), until a slot is
    /// reserved. `false` when every reachable id is live.
    fn reserve_after_eviction(&self, own_index: usize, now_ms: u64) -> bool {
        let n = self.shards.len();
        for step in 1..n {
            let i = (own_index + step) & (n - 1);
            if let Ok(mut other) = self.shards[i].try_lock() {
                self.release(other.evict(now_ms));
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
        self.release(shard.evict(now_ms));
        // Already expired (it could not be recorded), or possibly recorded and forgotten.
        if expires_at_ms <= now_ms || shard.forgotten.covers(expires_at_ms) {
            return Err(ReplayError::Replayed);
        }
        let generation = expires_at_ms / GENERATION_MS;
        let at = shard.gens.binary_search_by_key(&generation, |g| g.index);
        if let Ok(i) = at
            && shard.gens[i].ids.contains(id)
        {
            return Err(ReplayError::Replayed);
        }
        if !self.reserve() && !self.reserve_after_eviction(index, now_ms) {
            return Err(ReplayError::Full);
        }
        match at {
            Ok(i) => {
                let g = &mut shard.gens[i];
                g.ids.insert(*id);
                g.earliest = g.earliest.min(expires_at_ms);
                g.latest = g.latest.max(expires_at_ms);
            }
            Err(i) => {
                let mut ids = IdSet::default();
                ids.insert(*id);
                shard.gens.insert(
                    i,
                    Generation {
                        index: generation,
                        earliest: expires_at_ms,
                        latest: expires_at_ms,
                        ids,
                    },
                );
            }
        }
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
    fn full_of_live_entries_refuses_then_recovers_when_a_generation_expires() {
        let c = MemoryReplayCache::with_shards(4, 1);
        // Two generations: expiries 1000..1001 (generation 0) and 2050..2051 (generation 2).
        for (n, exp) in [(0, 1_000), (1, 1_001), (2, 2_050), (3, 2_051)] {
            assert_eq!(c.check_and_record(&id(n), exp, 0), Ok(()));
        }
        assert_eq!(
            c.check_and_record(&id(99), 5_000, 10),
            Err(ReplayError::Full)
        );
        // Live ids are still remembered while full.
        assert_eq!(
            c.check_and_record(&id(2), 2_050, 10),
            Err(ReplayError::Replayed)
        );
        // Generation 0 is dropped once its latest expiry passed: its two slots free up.
        assert_eq!(
            c.check_and_record(&id(99), 5_000, 1_000),
            Err(ReplayError::Full)
        );
        assert_eq!(c.check_and_record(&id(99), 5_000, 1_001), Ok(()));
        assert_eq!(c.check_and_record(&id(98), 5_000, 1_001), Ok(()));
        assert_eq!(
            c.check_and_record(&id(97), 5_000, 1_001),
            Err(ReplayError::Full)
        );
        assert_eq!(c.len(), 4);
        assert_eq!(c.occupancy(), 4);
    }

    #[test]
    fn an_expired_token_is_refused_and_a_forgotten_one_stays_refused() {
        let c = MemoryReplayCache::new(16);
        assert_eq!(c.check_and_record(&id(1), 500, 100), Ok(()));
        assert_eq!(
            c.check_and_record(&id(1), 500, 499),
            Err(ReplayError::Replayed)
        );
        // At its expiry it is refused (the engine refuses it as expired before asking).
        assert_eq!(
            c.check_and_record(&id(1), 500, 500),
            Err(ReplayError::Replayed)
        );
        // Forgotten at 600 (its generation dropped); a clock stepped back to 100 still refuses
        // it.
        assert_eq!(c.check_and_record(&id(2), 5_000, 600), Ok(()));
        assert_eq!(c.len(), 1);
        assert_eq!(
            c.check_and_record(&id(1), 500, 100),
            Err(ReplayError::Replayed)
        );
        // A fresh token expiring after the forgotten span is accepted at once.
        assert_eq!(c.check_and_record(&id(3), 900, 100), Ok(()));
    }

    #[test]
    fn generations_are_dropped_whole_and_counted_back() {
        let c = MemoryReplayCache::with_shards(1_000, 1);
        for n in 0..100 {
            c.check_and_record(&id(n), 10 + u64::from(n), 0).unwrap();
        }
        for n in 100..150 {
            c.check_and_record(&id(n), 3_000, 0).unwrap();
        }
        assert_eq!(c.len(), 150);
        // At 108 one id of generation 0 is still live: nothing is dropped.
        c.check_and_record(&id(1_000), 5_000, 108).unwrap();
        assert_eq!(c.len(), 151);
        // At 109 the whole generation (100 ids) goes, in one step.
        c.check_and_record(&id(1_001), 5_000, 109).unwrap();
        assert_eq!((c.len(), c.occupancy()), (52, 52));
    }

    #[test]
    fn forgotten_spans_widen_and_never_narrow() {
        let mut f = Forgotten::default();
        f.insert(100, 200);
        f.insert(201, 300); // touches: one span
        assert_eq!(f.spans, vec![(100, 300)]);
        for k in 1..=5u64 {
            f.insert(k * 10_000, k * 10_000 + 10);
        }
        assert_eq!(f.spans.len(), FORGOTTEN_SPANS);
        for e in [100, 250, 300, 10_000, 30_005, 50_010] {
            assert!(f.covers(e), "{e}");
        }
        assert!(!f.covers(99) && !f.covers(50_011));
    }

    #[test]
    fn shard_count_is_a_power_of_two_and_the_budget_sets_the_capacity() {
        assert_eq!(MemoryReplayCache::with_shards(1_000, 48).shards(), 64);
        assert_eq!(MemoryReplayCache::with_shards(3, 0).shards(), 1);
        assert_eq!(MemoryReplayCache::with_shards(3, 5_000).shards(), 1024);
        assert_eq!(MemoryReplayCache::with_shards(0, 8).capacity(), 1);
        let c = MemoryReplayCache::with_shards(1_000, 64);
        assert_eq!(c.capacity(), 1_000);
        assert!(format!("{c:?}").contains("capacity: 1000"));
        let budget = MemoryReplayCache::with_memory_budget(48_000);
        assert_eq!(budget.capacity(), 1_000);
        // The default budget holds 10,000 resumes a second for a 5-minute TTL, with room.
        let default = MemoryReplayCache::default();
        assert!(default.capacity() >= 10_000 * 300 * 3 / 2, "{default:?}");
        assert_eq!(default.occupancy(), 0);
    }

    #[test]
    fn capacity_is_global_and_a_full_cache_frees_expired_generations_of_other_shards() {
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
        assert_eq!(
            c.check_and_record(&fresh, 5_000, 50),
            Err(ReplayError::Full)
        );
        // At 100 they have all expired; the new id lands in shard 0 and may free any shard.
        assert_eq!(c.check_and_record(&fresh, 5_000, 100), Ok(()));
        for n in 1..4u8 {
            let mut i = [0u8; 16];
            i[0] = n;
            i[15] = 2;
            assert_eq!(c.check_and_record(&i, 5_000, 100), Ok(()), "shard {n}");
        }
        assert_eq!(c.used.load(Ordering::SeqCst), 4);
    }
}
