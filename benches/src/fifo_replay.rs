//! A sketch of the in-process replay cache this report proposes for `mrtr-std`, measured beside
//! `mrtr_std::replay::MemoryReplayCache` by the `replay` binary. Benchmark code only: it
//! exists to put a number on the proposal, not to be used.
//!
//! Three changes against `MemoryReplayCache`:
//!
//! 1. **Expiry order by FIFO, not a binary heap.** Ids are recorded with `expires_at = now +
//!    ttl`, so within a shard they arrive in (nearly) expiry order: a `VecDeque` popped from
//!    the front while the front has expired evicts in O(1) with sequential memory, where the
//!    heap's `pop` walks log2(n) scattered levels. An id recorded out of order (a shorter TTL,
//!    a clock step back) is still never forgotten early: it only waits behind the front.
//! 2. **Per-shard capacity, no global counter.** One `AtomicUsize` written by every call is a
//!    cache line bouncing between cores; a per-shard bound keeps each call on its own shard.
//! 3. **No SipHash.** Ids are 16 random bytes from the server's CSPRNG and reach the cache only
//!    after the AEAD authenticated them, so a client cannot choose them: hashing can take 8 of
//!    their bytes as they are.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use mrtr_core::TokenId;
use mrtr_core::replay::{ReplayCache, ReplayError};

/// Takes the hash from bytes 4..12 of the id (bytes 0..4 pick the shard).
#[derive(Default)]
pub struct IdHasher(u64);

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

struct Shard {
    live: HashMap<TokenId, u64, BuildHasherDefault<IdHasher>>,
    queue: VecDeque<(u64, TokenId)>,
}

impl Shard {
    fn evict(&mut self, now_ms: u64, max: usize) {
        for _ in 0..max {
            match self.queue.front() {
                Some(&(exp, id)) if exp <= now_ms => {
                    self.queue.pop_front();
                    if self.live.get(&id) == Some(&exp) {
                        self.live.remove(&id);
                    }
                }
                _ => break,
            }
        }
    }
}

/// The proposed cache: `shards` shards of `max_entries / shards` ids each.
pub struct FifoReplayCache {
    shards: Box<[Mutex<Shard>]>,
    per_shard: usize,
}

impl FifoReplayCache {
    /// A cache for `max_entries` ids in 64 shards, tables sized up front.
    pub fn new(max_entries: usize) -> Self {
        let n = 64;
        let per_shard = max_entries.div_ceil(n);
        let shards = (0..n)
            .map(|_| {
                Mutex::new(Shard {
                    live: HashMap::with_capacity_and_hasher(per_shard, Default::default()),
                    queue: VecDeque::with_capacity(per_shard),
                })
            })
            .collect();
        Self { shards, per_shard }
    }

    /// Ids held now.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().map(|s| s.live.len()).unwrap_or(0))
            .sum()
    }

    /// Whether no id is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ReplayCache for FifoReplayCache {
    fn check_and_record(&self, id: &TokenId, exp: u64, now: u64) -> Result<(), ReplayError> {
        let h = u32::from_le_bytes([id[0], id[1], id[2], id[3]]) as usize;
        let mut shard = self.shards[h % self.shards.len()]
            .lock()
            .map_err(|_| ReplayError::Unavailable)?;
        shard.evict(now, 8);
        if let Some(&e) = shard.live.get(id)
            && e > now
        {
            return Err(ReplayError::Replayed);
        }
        if shard.queue.len() >= self.per_shard {
            shard.evict(now, 64);
            if shard.queue.len() >= self.per_shard {
                return Err(ReplayError::Full);
            }
        }
        shard.live.insert(*id, exp);
        shard.queue.push_back((exp, *id));
        Ok(())
    }
}
