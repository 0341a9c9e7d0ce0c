//! The names of the metrics the Redis store records (feature `metrics`), through the
//! [`metrics`](https://docs.rs/metrics) facade. `mrtr-std`'s `metrics::names` lists them with
//! every other mrtr metric and describes them; `docs/operations.md` documents the labels.

/// Histogram `{store, outcome}`: time of one check-and-record in a Redis store, seconds.
pub const REPLAY_STORE_DURATION: &str = "mrtr_replay_store_duration_seconds";
/// Counter `{store, kind}`: Redis store errors.
pub const REPLAY_STORE_ERRORS: &str = "mrtr_replay_store_errors_total";
/// Gauge `{store, prefix}`: 1 while the Redis store can record resumes.
pub const REPLAY_STORE_READY: &str = "mrtr_replay_store_ready";
/// Gauge `{store, prefix, cause}`: 1 for the cause the store is not ready for, else 0.
pub const REPLAY_STORE_NOT_READY: &str = "mrtr_replay_store_not_ready";
