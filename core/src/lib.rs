//! # mrtr-core
//!
//! Sealed, resumable `requestState` for MCP servers (protocol revision 2026-07-28, SEP-2322
//! Multi-Round-Trip Requests), and subscription-authorization leases. `no_std`, no `alloc`,
//! no `unsafe`: everything runs on fixed buffers, on microcontrollers and servers alike.
//!
//! When a `tools/call`, `prompts/get` or `resources/read` handler needs input, the server
//! answers `resultType: "input_required"` with a `requestState` string, and the client retries
//! with that string. The string is a bearer credential and attacker input. mrtr
//!
//! * **seals** the paused state with an AEAD ([`cipher::Cipher`], provided by a backend crate:
//!   `mrtr-aes-gcm` or `mrtr-chacha20poly1305`), bound to the method, protocol version,
//!   target, key id and caller ([`Binding`], [`Principal`]) and to a digest of the arguments;
//! * bounds each token's lifetime (TTL, injected [`Clock`]) and the depth of a resume chain
//!   (max rounds), and optionally enforces single use ([`replay::ReplayCache`]);
//! * rotates keys by key id ([`key::KeyRing`]): no trial decryption;
//! * never panics or allocates on untrusted input: every bad token gets the same uniform
//!   [`Rejection`] on the wire, with the precise [`Reason`] kept for the server's logs.
//!
//! Start at [`Mrtr`]. The byte format is in [`token`] and [`state`], and specified in full in
//! `docs/token-format.md`.
//!
//! ## Features
//! * `defmt`: derive `defmt::Format` for public, non-secret types (firmware logging).
//! * `simd` (std hosts): base64url by the `base64` crate's runtime-detected SIMD engine
//!   instead of its portable scalar one ([`b64`]). It links `std` for CPU feature detection;
//!   core's own code stays free of `unsafe` either way.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod b64;
pub mod binding;
pub mod cipher;
pub mod clock;
mod ct;
pub mod engine;
pub mod error;
pub mod key;
pub mod lease;
pub mod replay;
pub mod state;
pub mod token;

pub use binding::{Binding, BindingError, Principal};
pub use clock::{Clock, ManualClock};
pub use engine::{Builder, DEFAULT_MAX_ROUNDS, DEFAULT_TTL_MS, Mrtr, Resumed, Round, Sealed};
pub use error::{ConfigError, ErrorDetail, Reason, Rejection, SealError, WireError};
pub use state::{ArgsDigest, TokenId};
pub use token::{TokenBuf, token_len_for};
