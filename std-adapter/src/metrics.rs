//! Metrics (feature `metrics`): what mrtr counts, through the `metrics` facade.
//!
//! mrtr-std records each event where it happens: a seal in [`CipherEngine::pause`], a resume
//! outcome in [`CipherEngine::verify`] and [`CipherEngine::commit`], a Redis call in the replay caches,
//! a check in the subscription registry. The facade sends them to whichever recorder the
//! server installed, and costs one call that does nothing when none is installed. The names
//! follow the Prometheus conventions: an `mrtr_` prefix, counters ending in `_total`, units in
//! the name (`_seconds`). [`names`] lists them; `docs/operations.md` documents each one
//! (type, labels, meaning, what to alert on).
//!
//! Labels hold only bounded, public values: method names, reasons
//! ([`Reason::as_str`](mrtr_core::Reason::as_str)), key ids (public: they are in every token
//! header), backend names, cause codes, the Redis key prefix. Never a token, a target, a
//! principal or a URL. The precise rejection reason is a label here for operators; clients
//! still see only the uniform error.
//!
//! # Serving `/metrics` in Prometheus text format (feature `prometheus`)
//!
//! [`Prometheus::install`] installs a Prometheus recorder as the process's global recorder
//! and describes every mrtr metric; [`Prometheus::render`] is the body of a `/metrics`
//! response. Install it before building engines: an engine registers the counters it moves
//! on every request (seals, fresh and resumed outcomes) once, when it is built, with the
//! recorder installed then (a key reload builds new engines, which register again). With
//! axum:
//!
//! ```no_run
//! # #[cfg(feature = "prometheus")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mrtr_std::metrics::Prometheus;
//!
//! let prometheus = Prometheus::install()?; // once, at startup
//! // router.route("/metrics", get(move || {
//! //     let body = prometheus.render();
//! //     async move { ([("content-type", Prometheus::CONTENT_TYPE)], body) }
//! // }))
//! let body = prometheus.render();
//! # let _ = body; Ok(()) }
//! # #[cfg(not(feature = "prometheus"))] fn main() {}
//! ```
//!
//! A server with another recorder (OpenTelemetry, StatsD) installs its own and calls
//! [`describe`] once so that the recorder knows each metric's unit and help text.
//!
//! [`CipherEngine::pause`]: crate::engine::CipherEngine::pause
//! [`CipherEngine::verify`]: crate::engine::CipherEngine::verify
//! [`CipherEngine::commit`]: crate::engine::CipherEngine::commit

use ::metrics::{Unit, describe_counter, describe_gauge, describe_histogram};

#[cfg(feature = "prometheus")]
mod prometheus;
/// The Prometheus exporter crate, for servers that configure their own recorder.
#[cfg(feature = "prometheus")]
pub use metrics_exporter_prometheus;
#[cfg(feature = "prometheus")]
pub use prometheus::{Prometheus, PrometheusError};

/// The name of every metric mrtr records.
pub mod names {
    /// Counter `{backend, key_id}`: tokens sealed.
    pub const SEALS: &str = "mrtr_seals_total";
    /// Gauge `{key_id}`: seals the key may still perform in this process before its budget
    /// runs out (then every pause fails with `key_exhausted`).
    pub const KEY_SEALS_REMAINING: &str = "mrtr_key_seals_remaining";
    /// Gauge `{key_id}`: 1 while the key is in the ring, 0 once a reload removed it.
    pub const KEY_CONFIGURED: &str = "mrtr_key_configured";
    /// Gauge `{key_id}`: 1 for the key that seals, 0 for the others.
    pub const KEY_CURRENT: &str = "mrtr_key_current";
    /// Counter `{result}`: key reloads, `applied` or `refused`.
    pub const KEY_RELOADS: &str = "mrtr_key_reloads_total";
    /// Counter `{method, outcome}`: requests whose `requestState` was checked; `outcome` is
    /// `fresh`, `resumed`, or the rejection reason.
    pub const RESUMES: &str = "mrtr_resumes_total";
    /// Counter `{method, cause}`: pauses that issued no token (`round_cap`, `unbindable`,
    /// `key_exhausted`, `seal_fault`).
    pub const PAUSE_REFUSALS: &str = "mrtr_pause_refusals_total";
    #[doc(inline)]
    pub use mrtr_replay::names::{
        REPLAY_STORE_DURATION, REPLAY_STORE_ERRORS, REPLAY_STORE_NOT_READY, REPLAY_STORE_READY,
    };
    /// Gauge: 1 when the last readiness summary was ready.
    pub const READY: &str = "mrtr_ready";
    /// Gauge `{target}`: subscriptions held (pending or established).
    pub const SUBSCRIPTION_GRANTS_ACTIVE: &str = "mrtr_subscription_grants_active";
    /// Counter `{kind}`: authorization checks started (`initial`, `renewal`,
    /// `reconciliation`).
    pub const SUBSCRIPTION_CHECKS: &str = "mrtr_subscription_checks_total";
    /// Counter `{outcome}`: checks the authorizer answered (`allowed`, `denied`).
    pub const SUBSCRIPTION_CHECK_ANSWERS: &str = "mrtr_subscription_check_answers_total";
    /// Counter `{failure}`: checks that failed.
    pub const SUBSCRIPTION_CHECK_FAILURES: &str = "mrtr_subscription_check_failures_total";
    /// Counter: reconciliations held back until the executor had room.
    pub const SUBSCRIPTION_CHECKS_HELD: &str = "mrtr_subscription_checks_held_total";
    /// Counter: stuck authorizer workers given up on and replaced.
    pub const SUBSCRIPTION_WORKERS_ABANDONED: &str = "mrtr_subscription_workers_abandoned_total";
    /// Counter: subscriptions acknowledged.
    pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "mrtr_subscriptions_acknowledged_total";
    /// Counter: subscriptions rejected by their initial check.
    pub const SUBSCRIPTIONS_REJECTED: &str = "mrtr_subscriptions_rejected_total";
    /// Counter `{reason}`: subscriptions that ended, were retired or closed.
    pub const SUBSCRIPTION_ENDS: &str = "mrtr_subscription_ends_total";
    /// Counter `{reason}`: 2025-era sessions retired.
    pub const SUBSCRIPTION_SESSIONS_RETIRED: &str = "mrtr_subscription_sessions_retired_total";

    /// Every name above.
    pub const ALL: [&str; 22] = [
        SEALS,
        KEY_SEALS_REMAINING,
        KEY_CONFIGURED,
        KEY_CURRENT,
        KEY_RELOADS,
        RESUMES,
        PAUSE_REFUSALS,
        REPLAY_STORE_DURATION,
        REPLAY_STORE_ERRORS,
        REPLAY_STORE_READY,
        REPLAY_STORE_NOT_READY,
        READY,
        SUBSCRIPTION_GRANTS_ACTIVE,
        SUBSCRIPTION_CHECKS,
        SUBSCRIPTION_CHECK_ANSWERS,
        SUBSCRIPTION_CHECK_FAILURES,
        SUBSCRIPTION_CHECKS_HELD,
        SUBSCRIPTION_WORKERS_ABANDONED,
        SUBSCRIPTIONS_ACKNOWLEDGED,
        SUBSCRIPTIONS_REJECTED,
        SUBSCRIPTION_ENDS,
        SUBSCRIPTION_SESSIONS_RETIRED,
    ];
}

/// Tells the installed recorder the unit and help text of every mrtr metric. Call it once
/// after installing a recorder ([`Prometheus::install`] does).
pub fn describe() {
    use names::*;
    describe_counter!(SEALS, Unit::Count, "requestState tokens sealed");
    describe_gauge!(
        KEY_SEALS_REMAINING,
        Unit::Count,
        "seals the key may still perform in this process before its budget runs out"
    );
    describe_gauge!(KEY_CONFIGURED, "1 while the key is in the key ring");
    describe_gauge!(KEY_CURRENT, "1 for the key that seals new tokens");
    describe_counter!(KEY_RELOADS, Unit::Count, "key reloads, applied or refused");
    describe_counter!(
        RESUMES,
        Unit::Count,
        "requests whose requestState was checked, by outcome (fresh, resumed, or the reason)"
    );
    describe_counter!(
        PAUSE_REFUSALS,
        Unit::Count,
        "pauses that issued no token, by cause"
    );
    describe_histogram!(
        REPLAY_STORE_DURATION,
        Unit::Seconds,
        "time of one check-and-record in the Redis replay store"
    );
    describe_counter!(
        REPLAY_STORE_ERRORS,
        Unit::Count,
        "Redis replay store errors, by kind"
    );
    describe_gauge!(
        REPLAY_STORE_READY,
        "1 while the Redis replay store can record resumes"
    );
    describe_gauge!(
        REPLAY_STORE_NOT_READY,
        "1 for the cause the Redis replay store is not ready for"
    );
    describe_gauge!(READY, "1 when the last readiness summary was ready");
    describe_gauge!(
        SUBSCRIPTION_GRANTS_ACTIVE,
        Unit::Count,
        "subscriptions held, pending or established"
    );
    describe_counter!(
        SUBSCRIPTION_CHECKS,
        Unit::Count,
        "subscription authorization checks started, by kind"
    );
    describe_counter!(
        SUBSCRIPTION_CHECK_ANSWERS,
        Unit::Count,
        "subscription checks the authorizer answered, allowed or denied"
    );
    describe_counter!(
        SUBSCRIPTION_CHECK_FAILURES,
        Unit::Count,
        "subscription checks that failed, by failure"
    );
    describe_counter!(
        SUBSCRIPTION_CHECKS_HELD,
        Unit::Count,
        "reconciliations held back until the executor had room"
    );
    describe_counter!(
        SUBSCRIPTION_WORKERS_ABANDONED,
        Unit::Count,
        "stuck authorizer workers given up on and replaced"
    );
    describe_counter!(
        SUBSCRIPTIONS_ACKNOWLEDGED,
        Unit::Count,
        "subscriptions acknowledged"
    );
    describe_counter!(
        SUBSCRIPTIONS_REJECTED,
        Unit::Count,
        "subscriptions rejected by their initial check"
    );
    describe_counter!(
        SUBSCRIPTION_ENDS,
        Unit::Count,
        "subscriptions ended, retired or closed, by reason"
    );
    describe_counter!(
        SUBSCRIPTION_SESSIONS_RETIRED,
        Unit::Count,
        "2025-era sessions retired, by reason"
    );
}
