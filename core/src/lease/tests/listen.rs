//! Listen-era rules and the rules common to both eras.

use super::*;

#[test]
fn initial_check_is_started_on_creation() {
    let (lease, first) = new_lease(Era::Listen, 100);
    assert_eq!(first.kind, CheckKind::Initial);
    assert_eq!(first.deadline_ms, 100 + CFG.check_timeout_ms);
    assert_eq!(first.previous_expiry_ms, None);
    assert_eq!(first.supersedes, None);
    assert_eq!(lease.phase(), Phase::Pending);
}

#[test]
fn no_delivery_before_acknowledgment() {
    let (lease, _) = new_lease(Era::Listen, 0);
    assert!(!lease.may_deliver(0));
    assert_eq!(lease.check_invariants(0), Ok(()));
}

#[test]
fn initial_denial_sends_no_acknowledgment() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    let action = lease.on_check_result(5, first.id, CheckResult::Denied);
    assert_eq!(
        action,
        Some(Action::Reject {
            reason: EndReason::Denied,
            cancel: None
        })
    );
    assert!(!lease.may_deliver(5));
    assert_eq!(lease.end_reason(), Some(EndReason::Denied));
    assert_eq!(lease.next_deadline(), None);
}

#[test]
fn initial_failure_rejects() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    let action = lease.on_check_result(5, first.id, CheckResult::Failed(Failure::Error));
    assert_eq!(
        action,
        Some(Action::Reject {
            reason: EndReason::CheckFailed(Failure::Error),
            cancel: None
        })
    );
}

#[test]
fn initial_check_without_result_times_out_and_rejects() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    assert_eq!(lease.next_deadline(), Some(first.deadline_ms));
    assert_eq!(lease.poll(first.deadline_ms - 1), None);
    let action = lease.poll(first.deadline_ms);
    assert_eq!(
        action,
        Some(Action::Reject {
            reason: EndReason::CheckFailed(Failure::TimedOut(TimeoutPhase::Unknown)),
            cancel: Some(first.id)
        })
    );
}

#[test]
fn result_at_the_deadline_counts_as_timeout() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    let action = lease.on_check_result(first.deadline_ms, first.id, allow(60_000));
    assert_eq!(
        action,
        Some(Action::Reject {
            reason: EndReason::CheckFailed(Failure::TimedOut(TimeoutPhase::Unknown)),
            cancel: None
        })
    );
}

#[test]
fn late_failure_keeps_its_own_reason() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    let queued = CheckResult::Failed(Failure::TimedOut(TimeoutPhase::Queued));
    let action = lease.on_check_result(first.deadline_ms, first.id, queued);
    assert_eq!(
        action,
        Some(Action::Reject {
            reason: EndReason::CheckFailed(Failure::TimedOut(TimeoutPhase::Queued)),
            cancel: None
        })
    );
}

#[test]
fn initial_allowed_acknowledges_and_delivers() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    let action = lease.on_check_result(20, first.id, allow(30_000));
    assert_eq!(
        action,
        Some(Action::Acknowledge {
            expires_at_ms: 30_000
        })
    );
    assert!(lease.may_deliver(20));
    assert!(lease.may_deliver(29_999));
    assert!(!lease.may_deliver(30_000));
}

#[test]
fn clipped_lease_by_max_authorization() {
    let lease = established(Era::Listen, 1_000, u64::MAX);
    assert_eq!(
        lease.expires_at_ms(),
        Some(1_000 + CFG.max_authorization_ms)
    );
}

#[test]
fn clipped_lease_by_subscription_lifetime() {
    let cfg = LeaseConfig {
        max_lifetime_ms: 10_000,
        ..CFG
    };
    let (mut lease, first) = Lease::new(cfg, Era::Listen, 0, 0);
    let first = started(Some(first));
    lease.on_check_result(0, first.id, allow(u64::MAX));
    assert_eq!(lease.expires_at_ms(), Some(10_000));
    // A renewal capped at the lifetime does not extend: no further renewal, then the end.
    let (at, req) = renew(&mut lease);
    assert_eq!(lease.on_check_result(at, req.id, allow(u64::MAX)), None);
    assert_eq!(lease.expires_at_ms(), Some(10_000));
    assert_eq!(lease.renew_at_ms(), None);
    assert_eq!(
        lease.poll(10_000),
        Some(Action::EndStream {
            reason: EndReason::LifetimeEnded,
            cancel: None
        })
    );
    assert!(!lease.may_deliver(10_000));
}

#[test]
fn already_expired_grant_is_a_failure() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    let action = lease.on_check_result(500, first.id, allow(500));
    assert_eq!(
        action,
        Some(Action::Reject {
            reason: EndReason::CheckFailed(Failure::ExpiredGrant),
            cancel: None
        })
    );
}

#[test]
fn renewal_at_half_lease() {
    let mut lease = established(Era::Listen, 0, 60_000);
    assert_eq!(lease.renew_at_ms(), Some(30_000 + STAGGER));
    assert_eq!(lease.next_deadline(), Some(30_000 + STAGGER));
    assert_eq!(lease.poll(30_000 + STAGGER - 1), None);
    let req = started(lease.poll(30_000 + STAGGER));
    assert_eq!(req.kind, CheckKind::Renewal);
    assert_eq!(req.previous_expiry_ms, Some(60_000));
}

#[test]
fn stagger_never_reaches_past_a_quarter_of_a_short_lease() {
    let mut lease = established(Era::Listen, 0, 1_000);
    // 500 + min(400, 250)
    assert_eq!(lease.renew_at_ms(), Some(750));
    let (at, req) = renew(&mut lease);
    assert!(at < 1_000);
    assert_eq!(req.kind, CheckKind::Renewal);
}

#[test]
fn stagger_is_deterministic_and_bounded() {
    assert_eq!(stagger_ms(b"abc", 1_000), stagger_ms(b"abc", 1_000));
    let mut buckets = [0u32; 10];
    for i in 0u32..1_000 {
        let s = stagger_ms(&i.to_be_bytes(), 999);
        assert!(s <= 999);
        buckets[(s / 100) as usize] += 1;
    }
    // Sequential ids spread over the whole range: no 100 ms bucket gets more than twice
    // its fair share.
    assert!(buckets.iter().all(|&b| b > 50 && b < 200), "{buckets:?}");
    assert_eq!(stagger_ms(b"x", 0), 0);
    assert!(stagger_ms(b"x", u64::MAX) > 0 || stagger_ms(b"y", u64::MAX) > 0);
}

#[test]
fn stagger_is_capped_by_config() {
    let (lease, _) = Lease::new(CFG, Era::Listen, 5_000, 0);
    assert_eq!(lease.stagger(), CFG.max_stagger_ms);
}

#[test]
fn ordinary_renewal_keeps_delivering() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let (at, req) = renew(&mut lease);
    assert!(lease.may_deliver(at));
    assert!(!lease.is_fenced());
    assert_eq!(
        lease.on_check_result(at + 10, req.id, allow(at + 70_000)),
        None
    );
    assert_eq!(lease.expires_at_ms(), Some(at + 10 + 60_000));
    assert!(lease.may_deliver(at + 10));
    assert!(lease.renew_at_ms().unwrap() > at);
}

#[test]
fn same_expiry_renewal_does_not_reschedule() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let (at, req) = renew(&mut lease);
    assert_eq!(lease.on_check_result(at, req.id, allow(60_000)), None);
    assert_eq!(lease.renew_at_ms(), None);
    assert_eq!(lease.next_deadline(), Some(60_000));
    assert!(lease.may_deliver(59_999));
    assert_eq!(
        lease.poll(60_000),
        Some(Action::EndStream {
            reason: EndReason::Expired,
            cancel: None
        })
    );
}

#[test]
fn shorter_renewal_grant_shortens_the_lease() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let (at, req) = renew(&mut lease);
    lease.on_check_result(at, req.id, allow(at + 1_000));
    assert_eq!(lease.expires_at_ms(), Some(at + 1_000));
    assert_eq!(lease.renew_at_ms(), None);
    assert!(!lease.may_deliver(at + 1_000));
}

#[test]
fn renewal_denial_ends_listen_stream() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let (at, req) = renew(&mut lease);
    let action = lease.on_check_result(at, req.id, CheckResult::Denied);
    assert_eq!(
        action,
        Some(Action::EndStream {
            reason: EndReason::Denied,
            cancel: None
        })
    );
    assert!(!lease.may_deliver(at));
}

#[test]
fn renewal_failure_ends_listen_stream() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let (at, req) = renew(&mut lease);
    let action = lease.on_check_result(at, req.id, CheckResult::Failed(Failure::Panicked));
    assert_eq!(
        action,
        Some(Action::EndStream {
            reason: EndReason::CheckFailed(Failure::Panicked),
            cancel: None
        })
    );
}

#[test]
fn renewal_timeout_ends_listen_stream_and_cancels_the_check() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let (_, req) = renew(&mut lease);
    let action = lease.poll(req.deadline_ms);
    assert_eq!(
        action,
        Some(Action::EndStream {
            reason: EndReason::CheckFailed(Failure::TimedOut(TimeoutPhase::Unknown)),
            cancel: Some(req.id)
        })
    );
}

#[test]
fn expiry_ends_listen_stream() {
    let mut lease = established(Era::Listen, 0, 10_000);
    lease.renew_at_ms.take();
    assert_eq!(lease.poll(9_999), None);
    assert_eq!(
        lease.poll(10_000),
        Some(Action::EndStream {
            reason: EndReason::Expired,
            cancel: None
        })
    );
}

#[test]
fn reconciliation_fences_and_discards_stale_result() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let (at, renewal) = renew(&mut lease);
    let recon = started(lease.reconcile(at + 5));
    assert_eq!(recon.kind, CheckKind::Reconciliation);
    assert_eq!(recon.supersedes, Some(renewal.id));
    assert!(lease.is_fenced());
    assert!(!lease.may_deliver(at + 5));

    // The superseded renewal's late result is stale: nothing changes.
    let before = lease.clone();
    assert_eq!(
        lease.on_check_result(at + 6, renewal.id, allow(u64::MAX)),
        None
    );
    assert_eq!(lease, before.clone_with_high_water(at + 6));
    assert!(!lease.may_deliver(at + 6));

    // The reconciliation's own result lifts the fence.
    assert_eq!(
        lease.on_check_result(at + 7, recon.id, allow(at + 50_000)),
        None
    );
    assert!(lease.may_deliver(at + 7));
    assert_eq!(lease.expires_at_ms(), Some(at + 50_000));
    assert_eq!(lease.check_invariants(at + 7), Ok(()));
}

#[test]
fn reconciliation_without_a_running_check_starts_one_at_once() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let recon = started(lease.reconcile(100));
    assert_eq!(recon.supersedes, None);
    assert_eq!(recon.deadline_ms, 100 + CFG.check_timeout_ms);
    assert!(!lease.may_deliver(100));
}

#[test]
fn reconciliation_failure_ends_listen_with_its_reason() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let recon = started(lease.reconcile(100));
    let action = lease.on_check_result(200, recon.id, CheckResult::Failed(Failure::Error));
    assert_eq!(
        action,
        Some(Action::EndStream {
            reason: EndReason::ReconciliationFailed(Failure::Error),
            cancel: None
        })
    );
}

#[test]
fn reconciliation_keeps_a_scheduled_renewal_when_not_extending() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let renew_at = lease.renew_at_ms().unwrap();
    let recon = started(lease.reconcile(100));
    lease.on_check_result(100, recon.id, allow(60_000));
    assert_eq!(lease.renew_at_ms(), Some(renew_at));
}

#[test]
fn reconciliation_during_initial_check_supersedes_it() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    let recon = started(lease.reconcile(10));
    assert_eq!(recon.supersedes, Some(first.id));
    assert_eq!(lease.on_check_result(11, first.id, allow(60_000)), None);
    assert_eq!(lease.phase(), Phase::Pending);
    let ack = lease.on_check_result(12, recon.id, allow(60_000));
    assert!(matches!(ack, Some(Action::Acknowledge { .. })));
}

#[test]
fn at_most_one_check_in_flight() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let renew_at = lease.renew_at_ms().unwrap();
    let recon = started(lease.reconcile(renew_at - 1));
    // The renewal falls due while the reconciliation runs: nothing new starts.
    assert_eq!(lease.poll(renew_at + 1), None);
    assert_eq!(lease.in_flight().map(|f| f.id), Some(recon.id));
    assert_eq!(lease.next_deadline(), Some(recon.deadline_ms));
}

#[test]
fn unknown_check_id_is_discarded() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let before = lease.clone();
    let action = lease.on_check_result(10, CheckId::from_raw(99), allow(u64::MAX));
    assert_eq!(action, None);
    assert_eq!(lease, before.clone_with_high_water(10));
}

#[test]
fn result_arriving_after_expiry_cannot_revive_the_lease() {
    let mut lease = established(Era::Listen, 0, 10_000);
    let (_, req) = renew(&mut lease);
    let action = lease.on_check_result(10_000, req.id, allow(70_000));
    assert_eq!(
        action,
        Some(Action::EndStream {
            reason: EndReason::Expired,
            cancel: Some(req.id)
        })
    );
    assert!(!lease.may_deliver(10_000));
}

#[test]
fn application_context_is_replaced_and_cleared_by_grants() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    let with = |h| CheckResult::Allowed {
        valid_until_ms: 60_000,
        context: Some(ContextHandle(h)),
    };
    lease.on_check_result(0, first.id, with(1));
    assert_eq!(lease.context(), Some(ContextHandle(1)));
    let (at, req) = renew(&mut lease);
    lease.on_check_result(at, CheckId::from_raw(77), with(2));
    assert_eq!(
        lease.context(),
        Some(ContextHandle(1)),
        "stale result kept out"
    );
    lease.on_check_result(at, req.id, allow(at + 60_000));
    assert_eq!(lease.context(), None, "absence clears the previous context");
}

#[test]
fn wall_clock_jump_cannot_stretch_lease() {
    // A caller feeding a time that jumped back (as a wall clock would) cannot win a longer
    // lease: the machine measures from the latest time it has seen.
    let mut lease = established(Era::Listen, 50_000, 110_000);
    let (at, req) = renew(&mut lease);
    let jumped_back = at - 40_000;
    lease.on_check_result(jumped_back, req.id, allow(jumped_back + 60_000));
    let expiry = lease.expires_at_ms().unwrap();
    assert!(expiry <= at + CFG.max_authorization_ms);
    assert_eq!(
        expiry,
        jumped_back + 60_000,
        "a grant dated in the past only shortens"
    );
    assert!(lease.may_deliver(jumped_back));
    assert!(!lease.may_deliver(expiry));
    assert!(matches!(lease.poll(expiry), Some(Action::EndStream { .. })));
    assert!(
        !lease.may_deliver(jumped_back),
        "an earlier time does not re-open the gate"
    );
    assert_eq!(lease.check_invariants(jumped_back), Ok(()));
}

#[test]
fn ended_lease_stays_closed_for_earlier_times() {
    let mut lease = established(Era::Listen, 0, 60_000);
    lease.renew_at_ms.take();
    assert!(matches!(lease.poll(60_000), Some(Action::EndStream { .. })));
    assert!(!lease.may_deliver(1_000));
}
