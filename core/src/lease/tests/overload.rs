//! Checks that never ran (overload) and checks held back by the runtime.

use super::*;

const OVERLOADED: CheckResult = CheckResult::Failed(Failure::Overloaded);

#[test]
fn overloaded_listen_renewal_fences_and_retries_after_50_then_100_ms() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let (at, first) = renew(&mut lease);
    assert_eq!(lease.on_check_result(at, first.id, OVERLOADED), None);
    assert!(lease.is_fenced());
    assert!(!lease.may_deliver(at));
    assert_eq!(lease.consecutive_failures(), 1);
    assert_eq!(lease.retry_at_ms(), Some(at + 50));
    assert_eq!(lease.check_invariants(at), Ok(()));
    assert_eq!(lease.poll(at + 49), None);
    let second = started(lease.poll(at + 50));
    assert_eq!(second.kind, CheckKind::Renewal);
    assert_eq!(lease.on_check_result(at + 50, second.id, OVERLOADED), None);
    assert_eq!(lease.retry_at_ms(), Some(at + 150));
    let third = started(lease.poll(at + 150));
    assert_eq!(
        lease.on_check_result(at + 150, third.id, OVERLOADED),
        Some(Action::EndStream {
            reason: EndReason::RetriesExhausted(Failure::Overloaded),
            cancel: None
        })
    );
    assert!(!lease.may_deliver(at + 150));
}

#[test]
fn a_success_after_overload_resets_the_listen_count() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let (at, first) = renew(&mut lease);
    lease.on_check_result(at, first.id, OVERLOADED);
    let retry = started(lease.poll(at + 50));
    lease.on_check_result(at + 50, retry.id, allow(at + 60_050));
    assert!(lease.may_deliver(at + 50));
    assert_eq!(lease.consecutive_failures(), 0);
    // The count starts over: two more overloads are survived, as at first.
    let (at, next) = renew(&mut lease);
    assert_eq!(lease.on_check_result(at, next.id, OVERLOADED), None);
    let again = started(lease.poll(at + 50));
    assert_eq!(lease.on_check_result(at + 50, again.id, OVERLOADED), None);
    assert_eq!(lease.consecutive_failures(), 2);
    assert_eq!(lease.check_invariants(at + 50), Ok(()));
}

#[test]
fn a_queued_timeout_is_transient_in_a_listen_a_running_one_is_not() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let (at, req) = renew(&mut lease);
    let queued = CheckResult::Failed(Failure::TimedOut(TimeoutPhase::Queued));
    assert_eq!(lease.on_check_result(at, req.id, queued), None);
    assert!(lease.is_fenced());
    let retry = started(lease.poll(at + 50));
    let running = CheckResult::Failed(Failure::TimedOut(TimeoutPhase::Running));
    assert_eq!(
        lease.on_check_result(at + 50, retry.id, running),
        Some(Action::EndStream {
            reason: EndReason::CheckFailed(Failure::TimedOut(TimeoutPhase::Running)),
            cancel: None
        })
    );
}

#[test]
fn an_overloaded_listen_reconciliation_stays_fenced_and_retries_as_one() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let recon = started(lease.reconcile(100));
    assert_eq!(lease.on_check_result(100, recon.id, OVERLOADED), None);
    let retry = started(lease.poll(150));
    assert_eq!(retry.kind, CheckKind::Reconciliation);
    assert!(!lease.may_deliver(150));
    // A failure of a retry that did run ends the stream with that failure.
    assert_eq!(
        lease.on_check_result(150, retry.id, CheckResult::Failed(Failure::Error)),
        Some(Action::EndStream {
            reason: EndReason::ReconciliationFailed(Failure::Error),
            cancel: None
        })
    );
}

#[test]
fn an_overloaded_initial_check_still_rejects() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    assert_eq!(
        lease.on_check_result(0, first.id, OVERLOADED),
        Some(Action::Reject {
            reason: EndReason::CheckFailed(Failure::Overloaded),
            cancel: None
        })
    );
}

#[test]
fn overload_shares_the_2025_retry_budget() {
    let mut lease = established(Era::Session, 0, 60_000);
    let (at, first) = renew(&mut lease);
    let error = CheckResult::Failed(Failure::Error);
    assert_eq!(lease.on_check_result(at, first.id, error), None);
    let second = started(lease.poll(at + 50));
    assert_eq!(lease.on_check_result(at + 50, second.id, OVERLOADED), None);
    let third = started(lease.poll(at + 150));
    let queued = CheckResult::Failed(Failure::TimedOut(TimeoutPhase::Queued));
    assert_eq!(
        lease.on_check_result(at + 150, third.id, queued),
        Some(Action::RetireSession {
            reason: EndReason::RetriesExhausted(Failure::TimedOut(TimeoutPhase::Queued)),
            cancel: None
        })
    );
}

#[test]
fn a_held_check_of_an_established_lease_times_from_its_issue() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let recon = started(lease.reconcile(100));
    assert!(lease.hold(100, recon.id));
    assert!(lease.is_held());
    // Waiting for room is not running: only the expiry bounds the wait.
    assert_eq!(lease.next_deadline(), lease.expires_at_ms());
    assert!(!lease.check_overdue(20_000));
    assert_eq!(lease.poll(20_000), None);
    assert!(!lease.may_deliver(20_000), "still fenced while held");
    assert_eq!(lease.check_invariants(20_000), Ok(()));
    assert_eq!(lease.issue(20_000, recon.id), Some(25_000));
    assert!(!lease.is_held());
    assert_eq!(lease.next_deadline(), Some(25_000));
    let action = lease.on_check_result(24_000, recon.id, allow(84_000));
    assert_eq!(action, None);
    assert!(lease.may_deliver(24_000));
}

#[test]
fn a_held_wait_that_outlasts_the_lease_ends_it_as_expired() {
    let mut lease = established(Era::Listen, 0, 10_000);
    let recon = started(lease.reconcile(100));
    assert!(lease.hold(100, recon.id));
    assert_eq!(
        lease.poll(10_000),
        Some(Action::EndStream {
            reason: EndReason::Expired,
            cancel: Some(recon.id)
        })
    );
    assert_eq!(lease.issue(10_000, recon.id), None);
}

#[test]
fn a_held_pending_check_keeps_its_deadline() {
    let (mut lease, first) = new_lease(Era::Listen, 0);
    assert!(lease.hold(0, first.id));
    assert_eq!(lease.next_deadline(), Some(first.deadline_ms));
    assert_eq!(lease.issue(first.deadline_ms, first.id), None, "too late");
    assert!(matches!(
        lease.poll(first.deadline_ms),
        Some(Action::Reject { .. })
    ));
}

#[test]
fn only_the_check_in_flight_can_be_held_and_issued() {
    let mut lease = established(Era::Listen, 0, 60_000);
    let recon = started(lease.reconcile(100));
    assert_eq!(lease.issue(100, recon.id), None, "not held");
    assert!(!lease.hold(100, CheckId::from_raw(recon.id.raw() + 1)));
    assert!(lease.hold(100, recon.id));
    // A newer reconciliation supersedes the held check: it is not held until held again.
    let newer = started(lease.reconcile(200));
    assert_eq!(newer.supersedes, Some(recon.id));
    assert!(!lease.is_held());
    assert_eq!(lease.issue(200, recon.id), None);
    assert_eq!(lease.next_deadline(), Some(newer.deadline_ms));
}
