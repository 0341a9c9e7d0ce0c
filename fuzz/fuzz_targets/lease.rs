//! The subscription lease state machine fed arbitrary event sequences (results for the check
//! in flight, for stale and unknown checks, polls, reconciliations, closes, checks held back
//! and issued later, clocks that jump either way) under arbitrary limits. After every event: `check_invariants` holds; nothing is
//! delivered while fenced, pending, ended or expired; the runtime never has two checks in
//! flight; a stale result changes nothing (in particular it never extends the lease); an ended
//! lease ignores every event.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mrtr_core::lease::{
    Action, CheckId, CheckResult, ContextHandle, EndReason, Era, Failure, Lease, LeaseConfig,
    Phase, TimeoutPhase,
};

#[derive(Arbitrary, Debug)]
enum Which {
    InFlight,
    Previous,
    Raw(u8),
}

#[derive(Arbitrary, Debug)]
enum Outcome {
    /// Allowed until `now + delta` (negative: already over).
    Allowed {
        delta: i32,
        context: Option<u8>,
    },
    Denied,
    Failed(u8),
}

#[derive(Arbitrary, Debug)]
enum Event {
    Result { which: Which, outcome: Outcome },
    Poll,
    Reconcile,
    Close,
    Hold(Which),
    Issue(Which),
}

#[derive(Arbitrary, Debug)]
struct Input {
    session_era: bool,
    max_authorization_ms: u32,
    max_lifetime_ms: u32,
    check_timeout_ms: u16,
    max_stagger_ms: u16,
    backoff: [u8; 2],
    max_failures: u8,
    stagger: u16,
    start: u32,
    /// Each event happens `step` ms after the previous one (negative: the clock stepped back).
    events: Vec<(i16, Event)>,
}

fn failure(n: u8) -> Failure {
    match n % 8 {
        0 => Failure::Error,
        1 => Failure::Missing,
        2 => Failure::Panicked,
        3 => Failure::TimedOut(TimeoutPhase::Queued),
        4 => Failure::TimedOut(TimeoutPhase::Running),
        5 => Failure::TimedOut(TimeoutPhase::Unknown),
        6 => Failure::Overloaded,
        _ => Failure::ExpiredGrant,
    }
}

/// Everything a stale result must leave as it was.
#[derive(Debug, PartialEq)]
struct Observable {
    phase: Phase,
    expires: Option<u64>,
    renew: Option<u64>,
    retry: Option<u64>,
    fenced: bool,
    failures: u8,
    context: Option<ContextHandle>,
    in_flight: Option<CheckId>,
}

fn observe(l: &Lease) -> Observable {
    Observable {
        phase: l.phase(),
        expires: l.expires_at_ms(),
        renew: l.renew_at_ms(),
        retry: l.retry_at_ms(),
        fenced: l.is_fenced(),
        failures: l.consecutive_failures(),
        context: l.context(),
        in_flight: l.in_flight().map(|f| f.id),
    }
}

/// The delivery gate, checked against the getters at a few instants around `now`.
fn assert_gate(l: &Lease, high_water: u64) {
    let mut probes = vec![0, high_water, high_water.saturating_add(1)];
    if let Some(e) = l.expires_at_ms() {
        probes.extend([e.saturating_sub(1), e, e.saturating_add(1)]);
    }
    for t in probes {
        if l.may_deliver(t) {
            assert_eq!(
                l.phase(),
                Phase::Established,
                "delivering outside Established"
            );
            assert!(!l.is_fenced(), "delivering while fenced");
            let e = l.expires_at_ms().expect("established lease has an expiry");
            assert!(t.max(high_water) < e, "delivering at/after expiry");
        }
    }
}

fuzz_target!(|input: Input| {
    let cfg = LeaseConfig {
        max_authorization_ms: u64::from(input.max_authorization_ms % 600_000),
        max_lifetime_ms: u64::from(input.max_lifetime_ms),
        check_timeout_ms: u64::from(input.check_timeout_ms),
        max_stagger_ms: u64::from(input.max_stagger_ms),
        retry_backoff_ms: input.backoff.map(u64::from),
        max_consecutive_failures: input.max_failures % 6,
    };
    let era = if input.session_era {
        Era::Session
    } else {
        Era::Listen
    };
    let mut now = u64::from(input.start);
    let mut high_water = now;
    let (mut lease, first) = Lease::new(cfg, era, u64::from(input.stagger), now);
    let Action::StartCheck(first) = first else {
        panic!("a new lease must start its initial check, got {first:?}");
    };
    let mut outstanding = Some(first.id);
    let mut newest = first.id;
    let mut previous: Option<CheckId> = None;
    assert_eq!(lease.check_invariants(now), Ok(()));

    for (step, event) in input.events {
        now = now.saturating_add_signed(i64::from(step));
        high_water = high_water.max(now);
        let ended = lease.is_ended();
        let before = observe(&lease);
        let mut stale = false;
        let action = match event {
            Event::Result { which, outcome } => {
                let id = match which {
                    Which::InFlight => outstanding.unwrap_or(newest),
                    Which::Previous => previous.unwrap_or(CheckId::from_raw(u64::MAX)),
                    Which::Raw(n) => CheckId::from_raw(u64::from(n)),
                };
                stale = lease.in_flight().map(|f| f.id) != Some(id);
                let result = match outcome {
                    Outcome::Allowed { delta, context } => CheckResult::Allowed {
                        valid_until_ms: now.saturating_add_signed(i64::from(delta)),
                        context: context.map(|c| ContextHandle(u64::from(c))),
                    },
                    Outcome::Denied => CheckResult::Denied,
                    Outcome::Failed(n) => CheckResult::Failed(failure(n)),
                };
                lease.on_check_result(now, id, result)
            }
            Event::Hold(ref which) | Event::Issue(ref which) if !ended => {
                let id = match which {
                    Which::InFlight => outstanding.unwrap_or(newest),
                    Which::Previous => previous.unwrap_or(CheckId::from_raw(u64::MAX)),
                    Which::Raw(n) => CheckId::from_raw(u64::from(*n)),
                };
                let current = lease.in_flight().map(|f| f.id) == Some(id);
                if matches!(event, Event::Hold(_)) {
                    assert_eq!(
                        lease.hold(now, id),
                        current,
                        "hold of a check not in flight"
                    );
                } else if let Some(deadline) = lease.issue(now, id) {
                    assert!(current, "issued a check not in flight");
                    assert!(deadline >= high_water, "issued with a past deadline");
                }
                assert_eq!(observe(&lease), before, "hold or issue changed the lease");
                None
            }
            Event::Hold(_) | Event::Issue(_) => None,
            Event::Poll => lease.poll(now),
            Event::Reconcile => lease.reconcile(now),
            Event::Close => lease.close(now),
        };

        if ended {
            assert_eq!(action, None, "an ended lease acted");
            assert_eq!(observe(&lease), before, "an ended lease changed");
        }
        if stale {
            assert_eq!(action, None, "a stale result produced an action");
            assert_eq!(observe(&lease), before, "a stale result changed the lease");
        }
        match action {
            Some(Action::StartCheck(req)) => {
                assert_eq!(req.supersedes, outstanding, "a second check in flight");
                assert!(req.id > newest, "check ids must grow");
                assert!(req.deadline_ms >= high_water);
                previous = outstanding.or(Some(newest));
                newest = req.id;
                outstanding = Some(req.id);
            }
            Some(
                Action::Reject { cancel, .. }
                | Action::EndStream { cancel, .. }
                | Action::RetireSession { cancel, .. }
                | Action::Release { cancel },
            ) => {
                assert!(
                    cancel.is_none() || cancel == outstanding,
                    "cancels an unknown check"
                );
                assert!(lease.is_ended(), "terminal action on a live lease");
                outstanding = None;
            }
            Some(Action::Acknowledge { expires_at_ms }) => {
                assert_eq!(lease.expires_at_ms(), Some(expires_at_ms));
                assert!(expires_at_ms > high_water, "acknowledged an expired lease");
            }
            None => {}
        }
        if !lease.in_flight().map(|f| f.id).eq(&outstanding) {
            // A result for the check in flight consumes it.
            assert_eq!(lease.in_flight(), None, "the machine and runtime disagree");
            outstanding = None;
        }
        if era == Era::Listen
            && let Some(EndReason::RetriesExhausted(f)) = lease.end_reason()
        {
            assert!(
                f.never_ran(),
                "listen leases retry only checks that never ran"
            );
        }
        assert_gate(&lease, high_water);
        if let Err(broken) = lease.check_invariants(now) {
            panic!("invariant broken: {broken}; {lease:?}");
        }
    }
});
