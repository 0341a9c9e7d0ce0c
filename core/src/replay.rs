//! Single-use enforcement: the replay-cache trait and a fixed-capacity replay set.
//!
//! With no replay cache (the default) a token may be resumed any number of times until it
//! expires. A replay cache records each accepted token id until the token's own expiry and
//! refuses it afterwards. A cache that cannot answer, or is full of live entries, refuses:
//! it fails closed.

use core::cell::RefCell;

use crate::ct;
use critical_section::Mutex;
use heapless::Vec;

use crate::state::TokenId;

/// Why a replay cache refused a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ReplayError {
    /// The token id was already recorded and has not expired.
    Replayed,
    /// Full of live entries: refuse rather than forget one.
    Full,
    /// The store could not be reached or failed.
    Unavailable,
}

/// Atomically checks that a token id is new and records it until `expires_at_ms`.
///
/// Implementations must make check-and-record one atomic step: of many concurrent calls with
/// the same id, exactly one may succeed.
pub trait ReplayCache {
    /// Records `id` until `expires_at_ms`, or refuses it.
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError>;
}

impl<T: ReplayCache + ?Sized> ReplayCache for &T {
    fn check_and_record(&self, id: &TokenId, exp: u64, now: u64) -> Result<(), ReplayError> {
        (**self).check_and_record(id, exp, now)
    }
}

/// No replay cache: tokens are multi-use within their TTL (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoReplayCache;

impl ReplayCache for NoReplayCache {
    fn check_and_record(&self, _: &TokenId, _: u64, _: u64) -> Result<(), ReplayError> {
        Ok(())
    }
}

#[derive(Clone, Copy)]
struct Entry {
    id: TokenId,
    expires_at_ms: u64,
}

/// Up to `N` live token ids in a fixed array. Expired entries are evicted on every call; when
/// all `N` are live, a new id is refused with [`ReplayError::Full`]. Time is the latest `now`
/// seen, so a token already expired by then is refused ([`ReplayError::Replayed`]): its entry
/// may have been evicted before the clock stepped back.
///
/// Needs `&mut self`; [`SharedReplaySet`] wraps it for sharing.
pub struct ReplaySet<const N: usize> {
    entries: Vec<Entry, N>,
    /// The latest time seen: a wall clock stepped back must not revive an evicted id.
    high_water_ms: u64,
}

impl<const N: usize> ReplaySet<N> {
    /// An empty set.
    pub const fn new() -> Self {
        Self {
            entries: Vec::new(),
            high_water_ms: 0,
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

    /// Evicts expired entries, then records `id` unless it is present or the set is full.
    pub fn check_and_record(
        &mut self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        self.high_water_ms = self.high_water_ms.max(now_ms);
        let now_ms = self.high_water_ms;
        self.entries.retain(|e| e.expires_at_ms > now_ms);
        // Expired by the latest time seen: its entry may already be gone, so refuse it.
        if expires_at_ms <= now_ms {
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
