//! The metric hooks of the subscription runtime, called where events happen. Each is a no-op
//! unless the `metrics` feature is on; with it, each is one call into the `metrics` facade.
//! The names are `mrtr-std`'s `metrics::names`; `docs/operations.md` documents the labels.

// Without the feature every hook ignores its arguments.
#![cfg_attr(not(feature = "metrics"), allow(unused_variables, dead_code))]

use mrtr_core::lease::{CheckKind, EndReason, Failure, TimeoutPhase};
#[cfg(feature = "metrics")]
use mrtr_std::metrics::names;

/// The `target` label of a subscription: `listen` or `resource`.
pub(crate) fn grant_added(target: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::gauge!(names::SUBSCRIPTION_GRANTS_ACTIVE, "target" => target).increment(1.0);
}

/// A subscription left the registry.
pub(crate) fn grant_removed(target: &'static str, n: usize) {
    #[cfg(feature = "metrics")]
    metrics::gauge!(names::SUBSCRIPTION_GRANTS_ACTIVE, "target" => target).decrement(n as f64);
}

const fn check_kind(kind: CheckKind) -> &'static str {
    match kind {
        CheckKind::Initial => "initial",
        CheckKind::Renewal => "renewal",
        CheckKind::Reconciliation => "reconciliation",
    }
}

/// An authorization check started.
pub(crate) fn check_started(kind: CheckKind) {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::SUBSCRIPTION_CHECKS, "kind" => check_kind(kind)).increment(1);
}

/// An authorization check answered `allowed` or `denied`.
pub(crate) fn check_answered(outcome: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::SUBSCRIPTION_CHECK_ANSWERS, "outcome" => outcome).increment(1);
}

/// The `failure` label.
pub(crate) const fn failure_label(f: Failure) -> &'static str {
    match f {
        Failure::Error => "error",
        Failure::Missing => "missing",
        Failure::Panicked => "panicked",
        Failure::TimedOut(TimeoutPhase::Queued) => "timed_out_queued",
        Failure::TimedOut(TimeoutPhase::Running) => "timed_out_running",
        Failure::TimedOut(TimeoutPhase::Unknown) => "timed_out",
        Failure::Overloaded => "overloaded",
        Failure::ExpiredGrant => "expired_grant",
    }
}

/// An authorization check failed.
pub(crate) fn check_failed(f: Failure) {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::SUBSCRIPTION_CHECK_FAILURES, "failure" => failure_label(f))
        .increment(1);
}

/// A reconciliation was held back for lack of executor room.
pub(crate) fn check_held() {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::SUBSCRIPTION_CHECKS_HELD).increment(1);
}

/// A stuck authorizer worker was given up on.
pub(crate) fn worker_abandoned() {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::SUBSCRIPTION_WORKERS_ABANDONED).increment(1);
}

/// A subscription was acknowledged (`true`) or rejected by its initial check.
pub(crate) fn subscription_admitted(acknowledged: bool) {
    #[cfg(feature = "metrics")]
    {
        let name = if acknowledged {
            names::SUBSCRIPTIONS_ACKNOWLEDGED
        } else {
            names::SUBSCRIPTIONS_REJECTED
        };
        metrics::counter!(name).increment(1);
    }
}

/// A subscription ended (listen), was retired (2025 era) or closed.
pub(crate) fn subscription_ended(reason: EndReason) {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::SUBSCRIPTION_ENDS, "reason" => reason.as_str()).increment(1);
}

/// A 2025-era session was retired.
pub(crate) fn session_retired(reason: EndReason) {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::SUBSCRIPTION_SESSIONS_RETIRED, "reason" => reason.as_str())
        .increment(1);
}
