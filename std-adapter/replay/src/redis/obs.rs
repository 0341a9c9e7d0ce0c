//! The metric hooks of the Redis stores (no-ops unless the `metrics` feature is on): one
//! histogram sample per check-and-record, one counter per error, and the readiness gauges.
//! The names and labels are documented in `names` (feature `metrics`) and `docs/operations.md`.

#![cfg_attr(not(feature = "metrics"), allow(unused_variables, dead_code))]

use std::time::Duration;

use mrtr_core::replay::ReplayError;

use crate::Readiness;
#[cfg(feature = "metrics")]
use crate::names;

/// One check-and-record against a Redis store took `took`, and answered `answer`.
pub(crate) fn replay_store_call(
    store: &'static str,
    answer: &Result<(), ReplayError>,
    took: Duration,
) {
    #[cfg(feature = "metrics")]
    {
        let outcome = match answer {
            Ok(()) => "recorded",
            Err(ReplayError::Replayed) => "replayed",
            Err(_) => "unavailable",
        };
        metrics::histogram!(names::REPLAY_STORE_DURATION, "store" => store, "outcome" => outcome)
            .record(took.as_secs_f64());
    }
}

/// A Redis store error of `kind` (connect, timeout, command, out_of_memory, policy,
/// replicas_unacknowledged, backoff).
pub(crate) fn replay_store_error(store: &'static str, kind: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::REPLAY_STORE_ERRORS, "store" => store, "kind" => kind).increment(1);
}

/// Every `not_ready` cause code, so that each has a series (0 or 1).
#[cfg(feature = "metrics")]
const CAUSES: [&str; 6] = [
    "not_connected",
    "unreachable",
    "evicting_policy",
    "policy_unreadable",
    "replicas_unacknowledged",
    "out_of_memory",
];

/// A Redis store's readiness changed.
pub(crate) fn replay_store_readiness(store: &'static str, prefix: &str, readiness: Readiness) {
    #[cfg(feature = "metrics")]
    {
        let prefix = prefix.to_owned();
        let ready = if readiness.is_ready() { 1.0 } else { 0.0 };
        metrics::gauge!(names::REPLAY_STORE_READY, "store" => store, "prefix" => prefix.clone())
            .set(ready);
        let now = readiness.cause().map(|c| c.code());
        for cause in CAUSES {
            let on = if now == Some(cause) { 1.0 } else { 0.0 };
            metrics::gauge!(names::REPLAY_STORE_NOT_READY, "store" => store,
                "prefix" => prefix.clone(), "cause" => cause)
            .set(on);
        }
    }
}
