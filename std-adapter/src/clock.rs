//! Clocks: wall-clock time for token expiry, monotonic time for subscription leases, and a
//! manual clock that drives both exactly in tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use std::time::{SystemTime, UNIX_EPOCH};

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
///
/// On Linux it reads the kernel's coarse real-time clock (`CLOCK_REALTIME_COARSE`): the time of
/// the last timer tick, a few nanoseconds to read instead of a few tens, and at most one tick
/// (1 to 4 ms) behind, which token lifetimes of minutes and a clock-skew allowance of seconds
/// do not notice. Elsewhere, or where the kernel refuses that clock (a sandbox filtering it), it
/// reads `SystemTime`; no read panics.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        wall_ms()
    }
}

/// Reads a Linux clock without panicking: `None` where the kernel refuses it (a sandbox that
/// filters the clock, a kernel without the coarse clocks), and the caller falls back to std.
/// The vDSO is used when the kernel offers one, the system call otherwise.
#[cfg(target_os = "linux")]
#[inline]
fn linux_clock(id: rustix::time::ClockId) -> Option<(u64, u32)> {
    let t = rustix::time::clock_gettime_dynamic(rustix::time::DynamicClockId::Known(id)).ok()?;
    match (u64::try_from(t.tv_sec), u32::try_from(t.tv_nsec)) {
        (Ok(secs), Ok(nanos)) if nanos < 1_000_000_000 => Some((secs, nanos)),
        _ => None,
    }
}

/// Milliseconds since the Unix epoch. A clock set before 1970 reads as 0, which makes every
/// token look expired: fail closed.
#[cfg(target_os = "linux")]
#[inline]
fn wall_ms() -> u64 {
    match linux_clock(rustix::time::ClockId::RealtimeCoarse) {
        Some((secs, nanos)) => secs
            .saturating_mul(1000)
            .saturating_add(u64::from(nanos / 1_000_000)),
        None => std_wall_ms(),
    }
}

#[cfg(not(target_os = "linux"))]
#[inline]
fn wall_ms() -> u64 {
    std_wall_ms()
}

#[cold]
fn std_wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Time since an arbitrary origin, never going backwards, for coarse intervals (the fast
/// generator's key age): on Linux the kernel's coarse monotonic clock (at most one tick
/// behind), elsewhere `Instant`.
#[cfg(target_os = "linux")]
pub(crate) fn coarse_monotonic() -> Duration {
    match linux_clock(rustix::time::ClockId::MonotonicCoarse) {
        Some((secs, nanos)) => Duration::new(secs, nanos),
        None => std_monotonic(),
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn coarse_monotonic() -> Duration {
    std_monotonic()
}

/// `Instant` since the first call. Its origin differs from the coarse clock's, but the two do
/// not mix: a kernel that refuses the coarse clock refuses it on every call (`EINVAL`).
#[cold]
fn std_monotonic() -> Duration {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed()
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
    fn system_clock_agrees_with_std() {
        let std_ms = std_wall_ms();
        let ours = Clock::now_ms(&SystemClock);
        // The coarse clock is at most one tick behind; allow a generous second either way.
        assert!(ours.abs_diff(std_ms) < 1000, "{ours} vs {std_ms}");
        assert!(ours > 1_700_000_000_000, "{ours} is not a current time");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_coarse_clocks_are_read_without_the_fallback() {
        assert!(linux_clock(rustix::time::ClockId::RealtimeCoarse).is_some());
        assert!(linux_clock(rustix::time::ClockId::MonotonicCoarse).is_some());
        let a = coarse_monotonic();
        let b = coarse_monotonic();
        assert!(b >= a);
    }

    #[test]
    fn monotonic_clock_does_not_go_backwards() {
        let c = StdMonotonicClock::new();
        let t1 = c.now_ms();
        let t2 = c.now_ms();
        assert!(t2 >= t1);
    }
}
