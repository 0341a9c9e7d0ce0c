// The README's example seals with AES-256-GCM: a build without that backend leaves it out.
#![cfg_attr(feature = "aes-gcm", doc = include_str!("../README.md"))]
#![cfg_attr(
    not(feature = "aes-gcm"),
    doc = "The std adapter for hosted MCP servers (see `README.md`; this build has no AES-256-GCM backend)."
)]
//!
//! ## Map of the crate
//!
//! * [`caller`] ([`caller::Caller`], who sent a request, owned), [`clock`] ([`SystemClock`]), [`rng`] ([`OsRng`]), [`rng_fast`] (a reseeding, fork-aware
//!   userspace CSPRNG, for AES-256-GCM-SIV only), [`keys`] ([`keys::KeyConfig`]);
//! * [`engine`]: [`engine::Engine`], [`engine::AnyEngine`], [`engine::Step`];
//!   [`jsonrpc`]: [`jsonrpc::ResumeRequest`]; [`jcs`];
//! * [`quota`]: per-caller token buckets for pauses and resumes;
//! * the replay stores are the crate [`mrtr_replay`] (memory; Redis with feature `redis`), and
//!   the subscription runtime is `mrtr-subscriptions`, which builds on this crate's clocks;
//! * operations: [`health`] (readiness and the startup check), `reload` (feature `tokio`: key
//!   reloads on a watched file or SIGHUP), `metrics` (feature `metrics`; Prometheus text with
//!   feature `prometheus`); `docs/operations.md` is the operator's guide;
//! * [`core`]: mrtr-core itself, re-exported, with the backends' ciphers
//!   ([`Aes256Gcm`], [`ChaCha20Poly1305`], [`XChaCha20Poly1305`]) and [`Algorithm`].

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "aes-gcm")]
pub use mrtr_aes_gcm::Aes256Gcm;
#[cfg(feature = "aes-gcm-siv")]
pub use mrtr_aes_gcm_siv::Aes256GcmSiv;
#[cfg(feature = "chacha20poly1305")]
pub use mrtr_chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
pub use mrtr_core as core;
pub use mrtr_core::cipher::Algorithm;
/// The `rand_core` version whose `TryCryptoRng` [`mrtr_core::Codec::pause`] takes.
pub use rand_core;

pub use clock::SystemClock;
pub use rng::OsRng;

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
