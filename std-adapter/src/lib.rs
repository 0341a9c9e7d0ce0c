// The README's example seals with AES-256-GCM: a build without that backend leaves it out.
#![cfg_attr(feature = "aes-gcm", doc = include_str!("../README.md"))]
#![cfg_attr(
    not(feature = "aes-gcm"),
    doc = "The std adapter for hosted MCP servers (see `README.md`; this build has no AES-256-GCM backend)."
)]
//!
//! ## Map of the crate
//!
//! * [`caller`] ([`caller::Caller`], who sent a request, owned), [`clock`] ([`clock::SystemClock`]), [`rng`] ([`rng::OsRng`]), [`rng_fast`] (a reseeding, fork-aware
//!   userspace CSPRNG, for AES-256-GCM-SIV only), [`keys`] ([`keys::KeyConfig`]);
//! * [`engine`]: [`engine::CipherEngine`], [`engine::AnyEngine`], [`engine::Step`];
//!   [`jsonrpc`]: [`jsonrpc::ResumeRequest`]; [`jcs`];
//! * [`quota`]: per-caller token buckets for pauses and resumes;
//! * the replay stores are the crate [`mrtr_replay`] (memory; Redis with feature `redis`), and
//!   the subscription runtime is `mrtr-subscriptions`, which builds on this crate's clocks;
//! * operations: [`health`] (readiness and the startup check), `reload` (feature `tokio`: key
//!   reloads on a watched file or SIGHUP), `metrics` (feature `metrics`; Prometheus text with
//!   feature `prometheus`); `docs/operations.md` is the operator's guide;
//! * [`core`]: mrtr-core itself, re-exported (the algorithms are
//!   [`core::cipher::Algorithm`]; each backend's cipher type is in its own crate, and
//!   [`engine::Backend`] names them for configuration).
//!
//! Each public type has one path: a module declares it and exports it, and no other module
//! of this crate re-exports it (`ci/import-paths.py` checks every crate).

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use mrtr_core as core;
/// The `rand_core` version whose `TryCryptoRng` [`mrtr_core::Codec::pause`] takes.
pub use rand_core;

pub mod caller;
pub mod clock;
pub mod engine;
pub mod health;
pub mod ijson;
pub mod jcs;
pub mod jsonrpc;
pub mod keys;
#[cfg(feature = "metrics")]
pub mod metrics;
mod obs;
pub mod quota;
#[cfg(feature = "tokio")]
pub mod reload;
pub mod rng;
pub mod rng_fast;
