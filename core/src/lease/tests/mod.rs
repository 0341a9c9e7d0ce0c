//! Behaviour of the lease machine, driven with explicit times.

mod listen;
mod overload;
mod session;
mod walk;

use super::*;

pub(super) const CFG: LeaseConfig = LeaseConfig::DEFAULT;
pub(super) const STAGGER: u64 = 400;

pub(super) fn allow(valid_until_ms: u64) -> CheckResult {
    CheckResult::Allowed {
        valid_until_ms,
        context: None,
    }
}

pub(super) fn started(action: Option<Action>) -> CheckRequest {
    match action {
        Some(Action::StartCheck(req)) => req,
        other => panic!("expected a check to start, got {other:?}"),
    }
}

pub(super) fn new_lease(era: Era, now: u64) -> (Lease, CheckRequest) {
    let (lease, first) = Lease::new(CFG, era, STAGGER, now);
    (lease, started(Some(first)))
}

/// A lease established at `now` with a grant for `valid_until`.
pub(super) fn established(era: Era, now: u64, valid_until: u64) -> Lease {
    let (mut lease, first) = new_lease(era, now);
    let ack = lease.on_check_result(now, first.id, allow(valid_until));
    assert!(matches!(ack, Some(Action::Acknowledge { .. })));
    lease
}

/// Polls at the renewal time and returns the renewal check.
pub(super) fn renew(lease: &mut Lease) -> (u64, CheckRequest) {
    let at = lease.renew_at_ms().expect("renewal scheduled");
    (at, started(lease.poll(at)))
}

impl Lease {
    /// The same lease having observed `now_ms` (for "nothing else changed" comparisons).
    pub(super) fn clone_with_high_water(&self, now_ms: u64) -> Self {
        let mut copy = self.clone();
        copy.high_water_ms = copy.high_water_ms.max(now_ms);
        copy
    }
}
