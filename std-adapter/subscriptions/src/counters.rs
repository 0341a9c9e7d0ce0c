//! Counters a registry keeps: checks by kind and outcome, and terminations by reason.

use mrtr_core::lease::{CheckKind, EndReason, Failure, TimeoutPhase};

use crate::obs;

/// A snapshot of a registry's counters. All are totals since the registry was created,
/// except `active`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Subscriptions currently held (pending or established).
    pub active: u64,
    /// Initial checks started.
    pub initial_checks: u64,
    /// Renewal checks started (2025-era retries included).
    pub renewal_checks: u64,
    /// Reconciliation checks started.
    pub reconciliation_checks: u64,
    /// Checks answered "allowed" and applied.
    pub allowed: u64,
    /// Checks answered "denied".
    pub denied: u64,
    /// Checks whose authorizer returned an error.
    pub errors: u64,
    /// Checks whose authorizer panicked.
    pub panics: u64,
    /// Checks that timed out waiting for a worker.
    pub timed_out_queued: u64,
    /// Checks that timed out in the authorizer.
    pub timed_out_running: u64,
    /// Checks refused because the executor queue was full (initial checks: refused;
    /// renewals: a transient failure, retried). Reconciliations are never refused: see
    /// `held`.
    pub overloaded: u64,
    /// Reconciliation checks held back until the executor queue had room (fenced, waiting
    /// their turn; not a failure).
    pub held: u64,
    /// Results discarded as stale (superseded, cancelled or for a closed subscription).
    pub stale_results: u64,
    /// Workers given up on (stuck past a deadline) and replaced by a spare.
    pub abandoned_workers: u64,
    /// Subscriptions acknowledged.
    pub acknowledged: u64,
    /// Subscriptions rejected by their initial check.
    pub rejected: u64,
    /// Ended (listen) or retired (2025 era): explicit denial.
    pub ended_denied: u64,
    /// Ended or retired: the lease ran out.
    pub ended_expired: u64,
    /// Ended or retired: the subscription lifetime was reached.
    pub ended_lifetime: u64,
    /// Ended: a renewal check failed.
    pub ended_check_failed: u64,
    /// Ended: a reconciliation check failed.
    pub ended_reconciliation_failed: u64,
    /// Ended or retired: the retry budget for transient failures ran out (2025 era: any
    /// failed check; listen: checks that never ran).
    pub ended_retries_exhausted: u64,
    /// Closed by the client or server.
    pub closed: u64,
    /// 2025-era sessions retired.
    pub sessions_retired: u64,
}

// Each event is counted here and, with feature `metrics`, in the metrics (`crate::obs`).
impl Counters {
    pub(crate) fn on_acknowledged(&mut self) {
        self.acknowledged += 1;
        obs::subscription_admitted(true);
    }

    pub(crate) fn on_rejected(&mut self) {
        self.rejected += 1;
        obs::subscription_admitted(false);
    }

    pub(crate) fn on_held(&mut self) {
        self.held += 1;
        obs::check_held();
    }

    /// The authorizer answered: allowed, or denied.
    pub(crate) fn on_answer(&mut self, allowed: bool) {
        if allowed {
            self.allowed += 1;
            obs::check_answered("allowed");
        } else {
            self.denied += 1;
            obs::check_answered("denied");
        }
    }

    pub(crate) fn on_abandoned(&mut self) {
        self.abandoned_workers += 1;
        obs::worker_abandoned();
    }

    pub(crate) fn on_session_retired(&mut self, reason: EndReason) {
        self.sessions_retired += 1;
        obs::session_retired(reason);
    }

    pub(crate) fn check_started(&mut self, kind: CheckKind) {
        obs::check_started(kind);
        let c = match kind {
            CheckKind::Initial => &mut self.initial_checks,
            CheckKind::Renewal => &mut self.renewal_checks,
            CheckKind::Reconciliation => &mut self.reconciliation_checks,
        };
        *c += 1;
    }

    pub(crate) fn failure(&mut self, f: Failure) {
        obs::check_failed(f);
        match f {
            Failure::Error => self.errors += 1,
            Failure::Panicked => self.panics += 1,
            Failure::TimedOut(TimeoutPhase::Queued) => self.timed_out_queued += 1,
            Failure::TimedOut(_) => self.timed_out_running += 1,
            Failure::Overloaded => self.overloaded += 1,
            Failure::Missing | Failure::ExpiredGrant => {}
        }
    }

    pub(crate) fn ended(&mut self, reason: EndReason) {
        obs::subscription_ended(reason);
        let c = match reason {
            EndReason::Denied => &mut self.ended_denied,
            EndReason::Expired => &mut self.ended_expired,
            EndReason::LifetimeEnded => &mut self.ended_lifetime,
            EndReason::CheckFailed(_) => &mut self.ended_check_failed,
            EndReason::ReconciliationFailed(_) => &mut self.ended_reconciliation_failed,
            EndReason::RetriesExhausted(_) => &mut self.ended_retries_exhausted,
            EndReason::Closed => &mut self.closed,
        };
        *c += 1;
    }
}
