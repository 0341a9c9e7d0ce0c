//! The caller table: one pair of token buckets per tracked caller, in independently locked
//! parts, bounded in size.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Mutex, PoisonError};

use super::{Action, Exceeded, ExceededKind, Limit, QuotaConfig, QuotaKey};
use crate::clock::{MonotonicClock, StdMonotonicClock};

/// Number of independently locked parts of the caller table.
const SHARDS: usize = 16;

/// How long a full table waits before sweeping for idle callers again, when a sweep freed
/// little (so that a table full of active callers is not swept at every new caller).
pub(super) const SWEEP_BACKOFF_MS: u64 = 1_000;

/// One token bucket, kept as the time at which it is full again (the generic cell rate
/// algorithm): whole nanoseconds, so that the rate holds exactly over any span (no drift from
/// fractional tokens).
#[derive(Clone, Copy)]
struct Bucket {
    /// When the bucket is full again, in ns of the clock (at or before now: full).
    full_at_ns: u64,
}

const NS_PER_MS: u64 = 1_000_000;

impl Limit {
    /// Nanoseconds for one token to come back.
    fn interval_ns(&self) -> u64 {
        ((1e9 / self.per_second).round() as u64).max(1)
    }
}

impl Bucket {
    fn full(now_ms: u64) -> Self {
        Self {
            full_at_ns: now_ms.saturating_mul(NS_PER_MS),
        }
    }

    /// Takes one token, or says in how many ms one is back (at least 1).
    fn take(&mut self, limit: Limit, now_ms: u64) -> Result<(), u64> {
        let now = now_ms.saturating_mul(NS_PER_MS);
        let interval = limit.interval_ns();
        // How far ahead of now the bucket's debt may run: all but one token of the burst.
        let tolerance = interval.saturating_mul(u64::from(limit.burst) - 1);
        let due = self.full_at_ns.max(now);
        let ahead = due - now;
        if ahead > tolerance {
            return Err((ahead - tolerance).div_ceil(NS_PER_MS).max(1));
        }
        self.full_at_ns = due.saturating_add(interval);
        Ok(())
    }

    fn is_full(&self, now_ms: u64) -> bool {
        self.full_at_ns <= now_ms.saturating_mul(NS_PER_MS)
    }
}

#[derive(Clone, Copy)]
struct Buckets {
    pause: Bucket,
    resume: Bucket,
}

struct Table {
    callers: HashMap<QuotaKey, Buckets>,
    /// No sweep for idle callers before this time (after one that freed little).
    next_sweep_ms: u64,
}

/// Per-caller quotas (see the [module docs](crate::quota)). Share it (`Arc`) between the requests it
/// limits.
pub struct Quotas<C = StdMonotonicClock> {
    config: QuotaConfig,
    clock: C,
    hasher: RandomState,
    per_shard: usize,
    shards: Box<[Mutex<Table>]>,
}

impl<C> fmt::Debug for Quotas<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Quotas")
            .field("config", &self.config)
            .field("tracked", &self.tracked())
            .finish_non_exhaustive()
    }
}

impl<C> Quotas<C> {
    /// Callers tracked now (locks each part of the table in turn).
    pub fn tracked(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                s.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .callers
                    .len()
            })
            .sum()
    }
}

impl Quotas {
    /// Quotas timed by the process's monotonic clock.
    pub fn new(config: QuotaConfig) -> Self {
        Self::with_clock(config, StdMonotonicClock::new())
    }
}

impl<C: MonotonicClock> Quotas<C> {
    /// Quotas timed by `clock`.
    pub fn with_clock(config: QuotaConfig, clock: C) -> Self {
        let max = config.max_callers.max(SHARDS);
        Self {
            config: QuotaConfig {
                max_callers: max,
                ..config
            },
            clock,
            hasher: RandomState::new(),
            per_shard: max / SHARDS,
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Table {
                        callers: HashMap::new(),
                        next_sweep_ms: 0,
                    })
                })
                .collect(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &QuotaConfig {
        &self.config
    }

    /// The limit of `action`, if any.
    pub fn limit(&self, action: Action) -> Option<Limit> {
        match action {
            Action::Pause => self.config.pauses,
            Action::Resume => self.config.resumes,
        }
    }

    /// Charges `key` one `action`: `Ok` if it had a token, else which limit refused it.
    pub fn charge(&self, key: &QuotaKey, action: Action) -> Result<(), Exceeded> {
        let Some(limit) = self.limit(action) else {
            return Ok(());
        };
        let now = self.clock.now_ms();
        let shard = (self.hasher.hash_one(key) as usize) % self.shards.len();
        let mut table = self.shards[shard]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !table.callers.contains_key(key) {
            if table.callers.len() >= self.per_shard {
                self.sweep(&mut table, now);
            }
            if table.callers.len() >= self.per_shard {
                return Err(Exceeded {
                    kind: ExceededKind::Callers(self.config.max_callers),
                    retry_after_ms: SWEEP_BACKOFF_MS,
                });
            }
            let fresh = Buckets {
                pause: Bucket::full(now),
                resume: Bucket::full(now),
            };
            table.callers.insert(key.clone(), fresh);
        }
        let Some(buckets) = table.callers.get_mut(key) else {
            return Ok(());
        };
        let bucket = match action {
            Action::Pause => &mut buckets.pause,
            Action::Resume => &mut buckets.resume,
        };
        bucket.take(limit, now).map_err(|retry_after_ms| Exceeded {
            kind: ExceededKind::Rate(action, limit),
            retry_after_ms,
        })
    }

    /// Drops the callers whose buckets are all full again (the same as not tracked).
    fn sweep(&self, table: &mut Table, now: u64) {
        if now < table.next_sweep_ms {
            return;
        }
        let before = table.callers.len();
        table
            .callers
            .retain(|_, b| !(b.pause.is_full(now) && b.resume.is_full(now)));
        if before - table.callers.len() < self.per_shard / 8 + 1 {
            table.next_sweep_ms = now.saturating_add(SWEEP_BACKOFF_MS);
        }
    }
}
