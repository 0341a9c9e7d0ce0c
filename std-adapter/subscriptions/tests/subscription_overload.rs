//! A full executor: a held reconciliation's timeout counts from its issue, and a renewal that
//! never ran is a transient failure (fenced, retried after 50 then 100 ms, at most three
//! times) for a listen and for a 2025-era grant alike. The executor is filled by authorizers
//! blocked on a gate; lease time is a manual clock.

mod support;
use support::registry::{Gate, REAL_WAIT, settle};

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr_std::clock::ManualClock;
use mrtr_std::core::lease::{EndReason, Failure, TimeoutPhase};
use mrtr_subscriptions::{
    Admission, Authorization, AuthorizationContext, Event, Grant, InvocationFeatures,
    NotificationFilter, Registry, RegistryConfig, RequestId, SubscriptionKey, Target,
};

/// Listen ids whose checks block on the gate (until it opens).
const BLOCKERS: [i64; 2] = [100, 101];

struct Harness {
    clock: ManualClock,
    reg: Registry<ManualClock>,
    gate: Arc<Gate>,
    started: mpsc::Receiver<i64>,
}

impl Harness {
    /// One worker, no spares, a queue of one: two blocked checks fill the executor.
    fn new() -> Self {
        Self::with_queue(1)
    }

    fn with_queue(queue_capacity: usize) -> Self {
        let gate = Arc::new(Gate::default());
        let (tx, started) = mpsc::channel();
        let (g, tx) = (gate.clone(), Mutex::new(tx));
        let authorizer = move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
            if let Target::Listen(RequestId::Number(id)) = ctx.target()
                && BLOCKERS.contains(id)
            {
                let _ = tx.lock().unwrap().send(*id);
                g.wait();
            }
            Ok(Authorization::Allowed(Grant::for_duration(
                ctx,
                Duration::from_secs(60),
            )))
        };
        let cfg = RegistryConfig {
            workers: 1,
            queue_capacity,
            max_spare_workers: 0,
            ..Default::default()
        };
        let clock = ManualClock::new(1_000);
        let reg = Registry::new(clock.clone(), Arc::new(authorizer), cfg);
        Self {
            clock,
            reg,
            gate,
            started,
        }
    }

    fn listen(&mut self, id: i64) -> SubscriptionKey {
        let filter = NotificationFilter::default();
        self.reg
            .listen(RequestId::Number(id), filter, Admission::anonymous())
            .unwrap()
    }

    /// An established subscription.
    fn established(&mut self, key: SubscriptionKey) -> SubscriptionKey {
        let events = settle(&mut self.reg);
        assert!(matches!(events.as_slice(), [Event::Acknowledged { key: k, .. }] if *k == key));
        key
    }

    /// Occupies the only worker and the only queue slot with blocked checks.
    fn fill_executor(&mut self) -> SubscriptionKey {
        self.listen(BLOCKERS[0]);
        assert_eq!(self.started.recv_timeout(REAL_WAIT), Ok(BLOCKERS[0]));
        let queued = self.listen(BLOCKERS[1]);
        assert_eq!(self.reg.queued_checks(), 1);
        queued
    }

    /// Moves the clock and drives once, without waiting for workers.
    fn drive_at(&mut self, t: u64) -> Vec<Event> {
        self.clock.set(t);
        let mut events = Vec::new();
        self.reg.drive(&mut events);
        events
    }

    fn renew_at(&self, key: SubscriptionKey) -> u64 {
        self.reg.lease(key).unwrap().renew_at_ms().unwrap()
    }

    fn retry_at(&self, key: SubscriptionKey) -> Option<u64> {
        self.reg.lease(key).unwrap().retry_at_ms()
    }

    fn failures(&self, key: SubscriptionKey) -> u8 {
        self.reg.lease(key).unwrap().consecutive_failures()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.gate.open();
    }
}

fn ended(events: &[Event], key: SubscriptionKey) -> Option<EndReason> {
    events.iter().find_map(|e| match e {
        Event::Ended { key: k, reason, .. } if *k == key => Some(*reason),
        Event::SessionRetired {
            trigger, reason, ..
        } if *trigger == key => Some(*reason),
        _ => None,
    })
}

#[test]
fn a_held_reconciliation_times_out_from_its_issue_not_its_request() {
    let mut h = Harness::new();
    let a = h.listen(1);
    let a = h.established(a);
    h.clock.set(10_000);
    h.fill_executor(); // initial checks due at 15,000
    assert!(h.reg.reconcile(a));
    assert!(!h.reg.may_deliver(a), "fenced at once");
    assert_eq!(h.reg.held_checks(), 1);
    assert_eq!(h.reg.counters().held, 1);

    // The blocked checks time out at 15,000; that frees the queue and A is issued then.
    let events = h.drive_at(15_000);
    assert_eq!(events.len(), 2, "both blockers refused: {events:?}");
    assert!(events.iter().all(|e| matches!(e, Event::Rejected { .. })));
    assert_eq!(h.reg.held_checks(), 0);
    let check = h.reg.lease(a).unwrap().in_flight().unwrap();
    assert_eq!(check.deadline_ms, 20_000, "5 s from its issue");

    // The worker comes back and runs A, 5 s after A was requested: still in time.
    h.gate.open();
    let events = settle(&mut h.reg);
    assert_eq!(ended(&events, a), None, "{events:?}");
    assert!(h.reg.may_deliver(a));
    assert_eq!(h.reg.counters().overloaded, 0);
}

#[test]
fn a_held_reconciliation_of_a_pending_listen_keeps_its_deadline() {
    let mut h = Harness::with_queue(2);
    let pending = h.fill_executor();
    let other = h.listen(2); // queued too: the queue is full
    assert!(h.reg.reconcile(pending)); // its queued initial check is replaced by a held one
    assert_eq!(h.reg.held_checks(), 1);
    assert!(h.drive_at(5_999).is_empty());
    let events = h.drive_at(6_000);
    let rejected = |key| {
        events.iter().find_map(|e| match e {
            Event::Rejected { key: k, reason, .. } if *k == key => Some(*reason),
            _ => None,
        })
    };
    let queued = EndReason::CheckFailed(Failure::TimedOut(TimeoutPhase::Queued));
    assert_eq!(
        rejected(pending),
        Some(queued),
        "an admission never waits forever"
    );
    assert_eq!(rejected(other), Some(queued));
    assert_eq!(h.reg.len(), 0);
}

#[test]
fn an_overloaded_listen_renewal_is_retried_then_ends_the_stream() {
    let mut h = Harness::new();
    let a = h.listen(1);
    let a = h.established(a);
    let renew = h.renew_at(a);
    h.clock.set(renew - 10);
    h.fill_executor();

    assert!(h.drive_at(renew).is_empty());
    assert_eq!(h.reg.counters().overloaded, 1);
    assert!(
        !h.reg.may_deliver(a),
        "a check that never ran fences delivery"
    );
    assert_eq!((h.failures(a), h.retry_at(a)), (1, Some(renew + 50)));
    assert!(h.drive_at(renew + 49).is_empty());
    assert!(h.drive_at(renew + 50).is_empty());
    assert_eq!((h.failures(a), h.retry_at(a)), (2, Some(renew + 150)));
    let events = h.drive_at(renew + 150);
    assert_eq!(
        ended(&events, a),
        Some(EndReason::RetriesExhausted(Failure::Overloaded))
    );
    let c = h.reg.counters();
    assert_eq!((c.overloaded, c.ended_retries_exhausted), (3, 1));
}

#[test]
fn a_success_after_overload_lifts_the_listen_fence_and_resets_the_count() {
    let mut h = Harness::new();
    let a = h.listen(1);
    let a = h.established(a);
    let renew = h.renew_at(a);
    h.clock.set(renew - 10);
    h.fill_executor();
    assert!(h.drive_at(renew).is_empty());
    assert_eq!(h.failures(a), 1);

    h.gate.open();
    settle(&mut h.reg); // the blockers finish: the executor has room again
    h.clock.set(renew + 50);
    let events = settle(&mut h.reg);
    assert_eq!(ended(&events, a), None, "{events:?}");
    assert!(h.reg.may_deliver(a));
    assert_eq!(h.failures(a), 0);
    assert!(h.reg.lease(a).unwrap().expires_at_ms() > Some(renew + 30_000));
}

#[test]
fn overload_counts_against_the_2025_retry_budget() {
    let mut h = Harness::new();
    let g = h
        .reg
        .subscribe_resource("sess", "file:///a", Admission::anonymous())
        .unwrap();
    let g = h.established(g);
    let renew = h.renew_at(g);
    h.clock.set(renew - 10);
    h.fill_executor();

    assert!(h.drive_at(renew).is_empty());
    assert!(!h.reg.may_deliver(g));
    assert_eq!((h.failures(g), h.retry_at(g)), (1, Some(renew + 50)));
    assert!(h.drive_at(renew + 50).is_empty());
    assert_eq!((h.failures(g), h.retry_at(g)), (2, Some(renew + 150)));
    let events = h.drive_at(renew + 150);
    assert_eq!(
        ended(&events, g),
        Some(EndReason::RetriesExhausted(Failure::Overloaded))
    );
    assert_eq!(h.reg.counters().sessions_retired, 1);
}

#[test]
fn a_2025_grant_survives_two_overloads_and_a_success_resets_the_count() {
    let mut h = Harness::new();
    let g = h
        .reg
        .subscribe_resource("sess", "file:///a", Admission::anonymous())
        .unwrap();
    let g = h.established(g);
    let renew = h.renew_at(g);
    h.clock.set(renew - 10);
    h.fill_executor();
    h.drive_at(renew);
    h.drive_at(renew + 50);
    assert_eq!(h.failures(g), 2);

    h.gate.open();
    settle(&mut h.reg);
    h.clock.set(renew + 150);
    let events = settle(&mut h.reg);
    assert_eq!(ended(&events, g), None, "{events:?}");
    assert!(h.reg.may_deliver(g));
    assert_eq!(h.failures(g), 0);
}
