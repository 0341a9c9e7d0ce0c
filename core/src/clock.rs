//! Time sources.
//!
//! Token expiry uses wall-clock milliseconds since the Unix epoch, because a token sealed on
//! one node is checked on another. (Subscription leases use a monotonic clock instead; see
//! [`crate::lease`].)

use core::cell::Cell;

/// Wall-clock time in milliseconds since the Unix epoch.
pub trait Clock {
    /// The current time.
    fn now_ms(&self) -> u64;
}

impl<T: Clock + ?Sized> Clock for &T {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
}

/// A clock that moves only when told to: exact, sleep-free expiry tests.
///
/// Single-threaded (`Cell`); `mrtr-std` has a thread-safe one.
#[derive(Debug, Default)]
pub struct ManualClock(Cell<u64>);

impl ManualClock {
    /// A clock reading `now_ms`.
    pub const fn new(now_ms: u64) -> Self {
        Self(Cell::new(now_ms))
    }

    /// Sets the time.
    pub fn set(&self, now_ms: u64) {
        self.0.set(now_ms);
    }

    /// Moves the time forward.
    pub fn advance(&self, ms: u64) {
        self.0.set(self.0.get().saturating_add(ms));
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.get()
    }
}
