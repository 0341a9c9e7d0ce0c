//! 2025-era rules: retries, retirement, unsubscribe.

use super::*;

#[test]
fn close_releases_without_check_and_cancels_the_running_one() {
    let mut lease = established(Era::Session, 0, 60_000);
    let (at, req) = renew(&mut lease);
    let action = lease.close(at + 1);
    assert_eq!(
        action,
        Some(Action::Release {
            cancel: Some(req.id)
        })
    );
    assert_eq!(lease.end_reason(), Some(EndReason::Closed));
    assert_eq!(lease.poll(u64::MAX), None);
    assert_eq!(lease.reconcile(u64::MAX), None);
    assert_eq!(lease.close(u64::MAX), None);
}

#[test]
fn renewal_failure_fences_2025_delivery_and_retries_after_50_then_100_ms() {
    let mut lease = established(Era::Session, 0, 60_000);
    let (at, first) = renew(&mut lease);
    let fail = CheckResult::Failed(Failure::Error);
    assert_eq!(lease.on_check_result(at, first.id, fail), None);
    assert!(lease.is_fenced());
    assert!(!lease.may_deliver(at));
    assert_eq!(lease.retry_at_ms(), Some(at + 50));
    assert_eq!(lease.poll(at + 49), None);
    let second = started(lease.poll(at + 50));
    assert_eq!(second.kind, CheckKind::Renewal);
    assert_eq!(lease.on_check_result(at + 50, second.id, fail), None);
    assert_eq!(lease.retry_at_ms(), Some(at + 150));
    let third = started(lease.poll(at + 150));
    assert_eq!(lease.check_invariants(at + 150), Ok(()));
    assert_eq!(third.kind, CheckKind::Renewal);
    assert_eq!(third.supersedes, None);
}

#[test]
fn three_consecutive_2025_failures_retire_session() {
    let mut lease = established(Era::Session, 0, 60_000);
    let (mut at, mut req) = renew(&mut lease);
    for attempt in 1..=3 {
        let timeout = CheckResult::Failed(Failure::TimedOut(TimeoutPhase::Running));
        let action = lease.on_check_result(at, req.id, timeout);
        if attempt < 3 {
            assert_eq!(action, None);
            at = lease.retry_at_ms().unwrap();
            req = started(lease.poll(at));
        } else {
            assert_eq!(
                action,
                Some(Action::RetireSession {
                    reason: EndReason::RetriesExhausted(Failure::TimedOut(TimeoutPhase::Running)),
                    cancel: None
                })
            );
        }
    }
    assert!(!lease.may_deliver(at));
}

#[test]
fn success_between_failures_resets_count() {
    let mut lease = established(Era::Session, 0, 60_000);
    let fail = CheckResult::Failed(Failure::Error);
    let mut failures_seen = 0;
    for round in 0..3 {
        let (at, req) = renew(&mut lease);
        assert_eq!(lease.on_check_result(at, req.id, fail), None);
        let retry_at = lease.retry_at_ms().unwrap();
        let retry = started(lease.poll(retry_at));
        assert_eq!(lease.on_check_result(retry_at, retry.id, fail), None);
        failures_seen += 2;
        assert_eq!(lease.consecutive_failures(), 2, "round {round}");
        let retry_at = lease.retry_at_ms().unwrap();
        let retry = started(lease.poll(retry_at));
        let ok = allow(retry_at + 60_000);
        assert_eq!(lease.on_check_result(retry_at, retry.id, ok), None);
        assert_eq!(lease.consecutive_failures(), 0);
        assert!(lease.may_deliver(retry_at));
    }
    assert_eq!(failures_seen, 6);
    assert!(!lease.is_ended());
}

#[test]
fn retries_stay_within_the_existing_2025_lease() {
    let mut lease = established(Era::Session, 0, 1_000);
    let (at, req) = renew(&mut lease);
    assert_eq!(at, 750);
    lease.on_check_result(990, req.id, CheckResult::Failed(Failure::Error));
    // The retry would be due at 1040, after the lease: the expiry retires the session first.
    assert_eq!(lease.next_deadline(), Some(1_000));
    assert_eq!(
        lease.poll(1_040),
        Some(Action::RetireSession {
            reason: EndReason::Expired,
            cancel: None
        })
    );
}

#[test]
fn explicit_2025_denial_retires_session() {
    let mut lease = established(Era::Session, 0, 60_000);
    let (at, req) = renew(&mut lease);
    assert_eq!(
        lease.on_check_result(at, req.id, CheckResult::Denied),
        Some(Action::RetireSession {
            reason: EndReason::Denied,
            cancel: None
        })
    );
}

#[test]
fn expired_2025_grant_retires_session() {
    let mut lease = established(Era::Session, 0, 10_000);
    let (_, req) = renew(&mut lease);
    lease.on_check_result(6_000, req.id, allow(10_000));
    assert_eq!(
        lease.poll(10_000),
        Some(Action::RetireSession {
            reason: EndReason::Expired,
            cancel: None
        })
    );
}

#[test]
fn initial_2025_rejection_does_not_retire_session() {
    for result in [CheckResult::Denied, CheckResult::Failed(Failure::Error)] {
        let (mut lease, first) = new_lease(Era::Session, 0);
        let action = lease.on_check_result(1, first.id, result);
        assert!(matches!(action, Some(Action::Reject { .. })), "{action:?}");
    }
}

#[test]
fn unsubscribe_never_calls_authorizer() {
    let mut lease = established(Era::Session, 0, 60_000);
    let action = lease.close(10);
    assert_eq!(action, Some(Action::Release { cancel: None }));
    assert_eq!(lease.next_deadline(), None);
    assert_eq!(
        lease.poll(u64::MAX),
        None,
        "no check is ever started after close"
    );
}

#[test]
fn failed_2025_reconciliation_retries_as_reconciliation() {
    let mut lease = established(Era::Session, 0, 60_000);
    let recon = started(lease.reconcile(100));
    lease.on_check_result(100, recon.id, CheckResult::Failed(Failure::Missing));
    let retry = started(lease.poll(150));
    assert_eq!(retry.kind, CheckKind::Reconciliation);
    assert!(!lease.may_deliver(150));
}
