//! The metric hooks, called where events happen. Each is a no-op unless the `metrics` feature
//! is on; with it, each is one call into the `metrics` facade (which does nothing until a
//! recorder is installed). The names and labels are documented in [`crate::metrics`] and
//! `docs/operations.md`.

// Without the feature every hook ignores its arguments.
#![cfg_attr(not(feature = "metrics"), allow(unused_variables, dead_code))]

use mrtr_core::cipher::Algorithm;

use mrtr_core::{Reason, SealError};

use crate::jsonrpc::Method;
#[cfg(feature = "metrics")]
use crate::metrics::names;

/// The `backend` label of a typed engine: its algorithm, named as [`crate::engine::Backend`]
/// names the RustCrypto providers.
pub(crate) const fn algorithm_label(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Aes256Gcm => "aes-256-gcm",
        Algorithm::ChaCha20Poly1305 => "chacha20-poly1305",
        Algorithm::XChaCha20Poly1305 => "xchacha20-poly1305",
        Algorithm::Aes256GcmSiv => "aes-256-gcm-siv",
        _ => a.name(),
    }
}

/// The metric handles an engine uses on every request, registered once when the engine is
/// built: the seal counter and budget gauge of its sealing key, and the `fresh` and `resumed`
/// outcome counters of each method. The hot path then only adds and sets (no label strings,
/// no registry lookup). Rarer events (rejections, refusals) go through the facade.
pub(crate) struct EngineMetrics {
    /// The sealing key's id, its seal counter and its budget gauge.
    #[cfg(feature = "metrics")]
    key: (String, metrics::Counter, metrics::Gauge),
    /// `[method][resumed]`, methods in [`Method::ALL`] order.
    #[cfg(feature = "metrics")]
    outcomes: [[metrics::Counter; 2]; 3],
}

impl EngineMetrics {
    /// The handles for `key_id` (seals labelled `backend`) and every method's outcomes, from
    /// the recorder installed now.
    pub(crate) fn new(backend: &'static str, key_id: &str) -> Self {
        Self {
            #[cfg(feature = "metrics")]
            key: (
                key_id.to_owned(),
                metrics::counter!(names::SEALS, "backend" => backend, "key_id" => key_id.to_owned()),
                metrics::gauge!(names::KEY_SEALS_REMAINING, "key_id" => key_id.to_owned()),
            ),
            #[cfg(feature = "metrics")]
            outcomes: Method::ALL.map(|m| {
                ["fresh", "resumed"].map(|outcome| {
                    metrics::counter!(names::RESUMES, "method" => m.as_str(), "outcome" => outcome)
                })
            }),
        }
    }

    /// A token was sealed under `key_id` (see [`sealed`]).
    pub(crate) fn sealed(&self, backend: &'static str, key_id: &str, remaining: u32) {
        #[cfg(feature = "metrics")]
        {
            let (id, seals, left) = &self.key;
            if id == key_id {
                seals.increment(1);
                left.set(f64::from(remaining));
                return;
            }
        }
        sealed(backend, key_id, remaining);
    }

    /// A request of `method` passed: fresh, or `resumed` from its token.
    pub(crate) fn passed(&self, method: Method, resumed: bool) {
        #[cfg(feature = "metrics")]
        {
            let m = Method::ALL.iter().position(|&x| x == method).unwrap_or(0);
            if let Some(counter) = self
                .outcomes
                .get(m)
                .and_then(|o| o.get(usize::from(resumed)))
            {
                counter.increment(1);
            }
        }
    }
}

/// A token was sealed under `key_id`, which has `remaining` seals left.
pub(crate) fn sealed(backend: &'static str, key_id: &str, remaining: u32) {
    #[cfg(feature = "metrics")]
    {
        let id = key_id.to_owned();
        metrics::counter!(names::SEALS, "backend" => backend, "key_id" => id.clone()).increment(1);
        metrics::gauge!(names::KEY_SEALS_REMAINING, "key_id" => id).set(f64::from(remaining));
    }
}

/// A key of a freshly built engine: its seals left and whether it seals.
pub(crate) fn key_loaded(key_id: &str, remaining: u32, current: bool) {
    #[cfg(feature = "metrics")]
    {
        let id = key_id.to_owned();
        metrics::gauge!(names::KEY_SEALS_REMAINING, "key_id" => id.clone())
            .set(f64::from(remaining));
        metrics::gauge!(names::KEY_CONFIGURED, "key_id" => id.clone()).set(1.0);
        metrics::gauge!(names::KEY_CURRENT, "key_id" => id).set(if current { 1.0 } else { 0.0 });
    }
}

/// A key left the ring on a reload.
pub(crate) fn key_removed(key_id: &str) {
    #[cfg(feature = "metrics")]
    {
        let id = key_id.to_owned();
        metrics::gauge!(names::KEY_CONFIGURED, "key_id" => id.clone()).set(0.0);
        metrics::gauge!(names::KEY_CURRENT, "key_id" => id).set(0.0);
    }
}

/// A key reload was applied (`true`) or refused.
pub(crate) fn key_reload(applied: bool) {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::KEY_RELOADS, "result" => if applied { "applied" } else { "refused" })
        .increment(1);
}

/// A request's `requestState` check ended: `outcome` is `fresh`, `resumed`, or a reason.
pub(crate) fn resume(method: &'static str, outcome: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::RESUMES, "method" => method, "outcome" => outcome).increment(1);
}

/// A rejection, as a resume outcome.
pub(crate) fn rejected(method: &'static str, reason: Reason) {
    resume(method, reason.as_str());
}

/// Why a pause issued no token, as the `cause` label.
pub(crate) fn pause_refused(method: &'static str, cause: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!(names::PAUSE_REFUSALS, "method" => method, "cause" => cause).increment(1);
}

/// The `cause` label of a pause refused by the core.
pub(crate) const fn seal_error_cause(e: &SealError) -> &'static str {
    match e {
        SealError::RoundsExhausted => "round_cap",
        SealError::KeyExhausted => "key_exhausted",
        SealError::Binding(_) => "unbindable",
        _ => "seal_fault",
    }
}

/// The readiness summary was computed: ready or not.
pub(crate) fn ready(ready: bool) {
    #[cfg(feature = "metrics")]
    metrics::gauge!(names::READY).set(if ready { 1.0 } else { 0.0 });
}
