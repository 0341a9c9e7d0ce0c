//! Helpers for the subscription-registry tests: drive a registry until its worker threads are
//! idle, and a latch that holds authorizers until the test releases them.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use mrtr_std::clock::ManualClock;
use mrtr_subscriptions::{Event, Registry};

/// The longest any test waits for a real worker thread.
pub const REAL_WAIT: Duration = Duration::from_secs(20);

/// Drives `reg` until no check is queued or running, and returns the events. Fails the test if
/// a check does not finish within [`REAL_WAIT`].
pub fn settle(reg: &mut Registry<ManualClock>) -> Vec<Event> {
    let mut events = Vec::new();
    loop {
        reg.drive(&mut events);
        if reg.pending_checks() == 0 {
            return events;
        }
        assert!(
            reg.wait_for_completions(REAL_WAIT),
            "a check never finished"
        );
    }
}

/// A latch tests open to release blocked authorizers; waits are bounded by [`REAL_WAIT`].
#[derive(Default)]
pub struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    /// Releases every waiter, now and later.
    pub fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    /// Waits until the gate opens (or [`REAL_WAIT`] passes).
    pub fn wait(&self) {
        let guard = self.open.lock().unwrap();
        let _ = self
            .cv
            .wait_timeout_while(guard, REAL_WAIT, |open| !*open)
            .unwrap();
    }
}
