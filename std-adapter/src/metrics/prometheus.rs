//! [`Prometheus`]: a Prometheus recorder for a server's `/metrics` route.

use std::fmt;
use std::time::Duration;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use super::names;

/// Histogram buckets for the replay-store latency, in seconds: 0.5 ms to 1 s (a Redis call
/// is bounded by its command timeout, 100 ms by default).
const STORE_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// How often the recorder drains histogram samples when nobody scrapes.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The process's Prometheus recorder: [`Prometheus::render`] is the body of `/metrics`.
/// Cheap to clone (one handle).
#[derive(Clone)]
pub struct Prometheus {
    handle: PrometheusHandle,
}

/// The recorder could not be installed (another recorder is already installed).
#[derive(Debug)]
pub struct PrometheusError(String);

impl fmt::Display for PrometheusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot install the Prometheus metrics recorder: {}",
            self.0
        )
    }
}

impl std::error::Error for PrometheusError {}

impl Prometheus {
    /// The `content-type` of [`Prometheus::render`]'s text.
    pub const CONTENT_TYPE: &'static str = "text/plain; version=0.0.4; charset=utf-8";

    /// Installs a Prometheus recorder as the global `metrics` recorder, with histogram
    /// buckets for the replay-store latency, describes every mrtr metric ([`super::describe`])
    /// and starts a background thread that drains histogram samples every 5 s. Call once, at
    /// startup, before the engine serves. Fails if a recorder is already installed.
    pub fn install() -> Result<Self, PrometheusError> {
        Self::install_with(PrometheusBuilder::new())
    }

    /// [`Prometheus::install`] from a builder the server configured (global labels, more
    /// buckets); mrtr adds its own buckets for the replay-store latency.
    pub fn install_with(builder: PrometheusBuilder) -> Result<Self, PrometheusError> {
        let handle = builder
            .set_buckets_for_metric(
                Matcher::Full(names::REPLAY_STORE_DURATION.to_owned()),
                &STORE_BUCKETS,
            )
            .and_then(PrometheusBuilder::install_recorder)
            .map_err(|e| PrometheusError(e.to_string()))?;
        super::describe();
        let upkeep = handle.clone();
        std::thread::Builder::new()
            .name("mrtr-metrics-upkeep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(UPKEEP_EVERY);
                    upkeep.run_upkeep();
                }
            })
            .map_err(|e| PrometheusError(e.to_string()))?;
        Ok(Self { handle })
    }

    /// Every metric of the process in Prometheus text format (version 0.0.4).
    pub fn render(&self) -> String {
        self.handle.run_upkeep();
        self.handle.render()
    }

    /// The exporter's handle, for what [`Prometheus::render`] does not cover.
    pub fn handle(&self) -> &PrometheusHandle {
        &self.handle
    }
}

impl fmt::Debug for Prometheus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prometheus").finish_non_exhaustive()
    }
}
