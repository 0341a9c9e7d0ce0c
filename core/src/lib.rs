#![doc = include_str!("../README.md")]
//!
//! ## Map of the crate
//!
//! * [`Codec`] (built with [`Codec::builder`]): [`Codec::pause`] seals, [`Codec::resume`] opens
//!   and checks, [`Codec::verify`] checks without recording in the replay cache.
//! * What a token is bound to: the engine's audience ([`Builder::audience`], or
//!   [`Builder::without_audience`]), [`Binding`], [`Principal`], [`ArgsDigest`].
//! * Lifetime: [`Builder::ttl_ms`], [`Builder::max_lifetime_ms`],
//!   [`Builder::max_clock_skew_ms`]; the rollout from format v1: [`AcceptV1`],
//!   [`Builder::seal_format`], [`TokenFormat`].
//! * Keys: [`key::SecretKey`], [`key::Key`], [`key::KeyRing`]; the AEAD seam:
//!   [`cipher::Cipher`].
//! * Time: [`Clock`], [`ManualClock`]; single use: [`replay::ReplayCache`],
//!   [`replay::ReplaySet`], [`replay::SharedReplaySet`].
//! * Outcomes: [`Sealed`], [`Resumed`], [`Rejection`] with its [`Reason`] and [`WireError`],
//!   [`SealError`], [`ConfigError`].
//! * Bytes: [`TokenBuf`] and [`token_len_for`]; the format versions ([`TokenFormat`]) and a
//!   sealed state read in place ([`StateView`]); every size limit in [`limits`]. The format
//!   itself is `docs/token-format.md`.
//! * Subscriptions: [`lease`].

#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod b64;
mod binding;
mod bytes;
pub mod cipher;
mod clock;
mod ct;
mod engine;
mod error;
pub mod key;
pub mod lease;
pub mod limits;
pub mod replay;
mod secret;
mod token;

// One path per type: the modules above without `pub` are private, and what they declare for
// users is exported here, once.
pub use binding::{Aad, Binding, Principal};
pub use clock::{Clock, ManualClock};
pub use engine::{
    AcceptV1, AudienceChoice, AudiencePending, Builder, ChosenAudience, Codec,
    DEFAULT_MAX_CLOCK_SKEW_MS, DEFAULT_MAX_ROUNDS, DEFAULT_TTL_MS, Resumed, Round, Sealed,
};
pub use error::{
    BindingError, ConfigError, ErrorDetail, INVALID_PARAMS, REJECTION_MESSAGE, Reason, Rejection,
    SealError, UNIFORM_REASON, WireError,
};
pub use token::state::{ArgsDigest, STATE_VERSION, StateView, TokenId};
pub use token::{TokenBuf, TokenFormat, token_len_for};
