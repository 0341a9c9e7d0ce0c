//! [`ReplaySet`] and [`SharedReplaySet`]: single use in fixed memory.

use core::cell::RefCell;

use crate::ct;
use critical_section::Mutex;
use heapless::Vec;

use super::{DEFAULT_SPANS, EvictedSpans, ReplayCache, ReplayError};
use crate::token::state::TokenId;

#[derive(Clone, Copy)]
struct Entry {
    id: TokenId,
    expires_at_ms: u64,
}

/// Up to `N` live token ids in a fixed array. Expired entries are evicted on every call; when
/// all `N` are live, a new id is refused with [`ReplayError::Full`]. Evicted ids leave their
/// expiry in [`EvictedSpans`], so a token whose expiry lies where ids were forgotten is refused
/// ([`ReplayError::Replayed`]) even if the wall clock later steps back behind it; eviction
/// itself follows the clock as it is, so a corrected forward jump leaves fresh tokens usable.
///
/// Needs `&mut self`; [`SharedReplaySet`] wraps it for sharing.
pub struct ReplaySet<const N: usize> {
    entries: Vec<Entry, N>,
    /// Where forgotten ids expired: a wall clock stepped back must not revive one.
    evicted: EvictedSpans<DEFAULT_SPANS>,
}

impl<const N: usize> ReplaySet<N> {
    /// An empty set.
    pub const fn new() -> Self {
        Self {
            entries: Vec::new(),
            evicted: EvictedSpans::new(),
        }
    }

    /// Live and not-yet-evicted entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the set holds no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The expiries of the ids this set has forgotten.
    pub fn evicted(&self) -> &EvictedSpans<DEFAULT_SPANS> {
        &self.evicted
    }

    /// Evicts expired entries, then records `id` unless it is present, its expiry lies where
    /// ids were forgotten, or the set is full.
    pub fn check_and_record(
        &mut self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        let evicted = &mut self.evicted;
        self.entries.retain(|e| {
            let live = e.expires_at_ms > now_ms;
            if !live {
                evicted.insert(e.expires_at_ms);
            }
            live
        });
        // Already expired (it could not be recorded), or possibly recorded and forgotten.
        if expires_at_ms <= now_ms || self.evicted.covers(expires_at_ms) {
            return Err(ReplayError::Replayed);
        }
        // Compare against every entry, without early exit, in constant time per entry.
        let seen = self
            .entries
            .iter()
            .fold(subtle::Choice::from(0), |acc, e| acc | ct::eq(&e.id, id));
        if bool::from(seen) {
            return Err(ReplayError::Replayed);
        }
        self.entries
            .push(Entry {
                id: *id,
                expires_at_ms,
            })
            .map_err(|_| ReplayError::Full)
    }
}

impl<const N: usize> Default for ReplaySet<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> core::fmt::Debug for ReplaySet<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ReplaySet")
            .field("len", &self.len())
            .field("capacity", &N)
            .finish()
    }
}

/// A [`ReplaySet`] shared between contexts (main loop and interrupt handlers, or threads)
/// through a `critical-section` mutex. Can be a `static`.
///
/// ```
/// use mrtr_core::replay::{ReplayCache, ReplayError, SharedReplaySet};
/// static SEEN: SharedReplaySet<8> = SharedReplaySet::new();
/// assert_eq!(SEEN.check_and_record(&[7; 16], 2_000, 1_000), Ok(()));
/// assert_eq!(SEEN.check_and_record(&[7; 16], 2_000, 1_500), Err(ReplayError::Replayed));
/// // Once the token has expired its entry is evicted.
/// assert_eq!(SEEN.check_and_record(&[7; 16], 3_000, 2_000), Ok(()));
/// ```
pub struct SharedReplaySet<const N: usize> {
    inner: Mutex<RefCell<ReplaySet<N>>>,
}

impl<const N: usize> SharedReplaySet<N> {
    /// An empty set.
    pub const fn new() -> Self {
        Self {
            inner: Mutex::new(RefCell::new(ReplaySet::new())),
        }
    }

    /// Entries currently held.
    pub fn len(&self) -> usize {
        critical_section::with(|cs| self.inner.borrow_ref(cs).len())
    }

    /// Whether the set holds no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<const N: usize> Default for SharedReplaySet<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> ReplayCache for SharedReplaySet<N> {
    fn check_and_record(&self, id: &TokenId, exp: u64, now: u64) -> Result<(), ReplayError> {
        critical_section::with(|cs| {
            // A RefCell borrow cannot be held across this closure, and critical sections do
            // not nest re-entrantly into this one, so the borrow always succeeds; if it ever
            // did not, refusing is the fail-closed answer.
            match self.inner.borrow(cs).try_borrow_mut() {
                Ok(mut set) => set.check_and_record(id, exp, now),
                Err(_) => Err(ReplayError::Unavailable),
            }
        })
    }
}

impl<const N: usize> core::fmt::Debug for SharedReplaySet<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SharedReplaySet")
            .field("capacity", &N)
            .finish_non_exhaustive()
    }
}
