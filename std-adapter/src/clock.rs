//! Clocks: wall-clock time for token expiry, monotonic time for subscription leases, and a
//! manual clock that drives both exactly in tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use mrtr_core::Clock;

/// Monotonic time in milliseconds from an arbitrary origin. Never goes backwards, and a change
/// of the wall clock cannot move it: leases are measured with it.
pub trait MonotonicClock: Send + Sync {
    /// Milliseconds since this clock's origin.
    fn now_ms(&self) -> u64;
}

impl<T: MonotonicClock + ?Sized> MonotonicClock for Arc<T> {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
}

impl<T: MonotonicClock + ?Sized> MonotonicClock for &T {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
}

/// The system's wall clock (ms since the Unix epoch), for token expiry across nodes.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        // A clock set before 1970 reads as 0, which makes every token look expired: fail closed.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
}

/// `std::time::Instant`, as milliseconds since this clock was created.
#[derive(Clone, Copy, Debug)]
pub struct StdMonotonicClock {
    origin: Instant,
}

impl StdMonotonicClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }
}

impl Default for StdMonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl MonotonicClock for StdMonotonicClock {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// A thread-safe clock that moves only when told to. Cloning shares the same time.
/// Serves as both a wall clock ([`Clock`]) and a [`MonotonicClock`].
#[derive(Clone, Debug, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// A clock reading `now_ms`.
    pub fn new(now_ms: u64) -> Self {
        Self(Arc::new(AtomicU64::new(now_ms)))
    }

    /// Sets the time (may go backwards: for wall-clock-jump tests).
    pub fn set(&self, now_ms: u64) {
        self.0.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms`.
    pub fn advance(&self, ms: u64) {
        let _ = self
            .0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| {
                Some(t.saturating_add(ms))
            });
    }

    /// The current reading.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.get()
    }
}

impl MonotonicClock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_is_shared_between_clones() {
        let a = ManualClock::new(10);
        let b = a.clone();
        a.advance(5);
        assert_eq!(Clock::now_ms(&b), 15);
        b.set(3);
        assert_eq!(MonotonicClock::now_ms(&a), 3);
    }

    #[test]
    fn monotonic_clock_does_not_go_backwards() {
        let c = StdMonotonicClock::new();
        let t1 = c.now_ms();
        let t2 = c.now_ms();
        assert!(t2 >= t1);
    }
}
