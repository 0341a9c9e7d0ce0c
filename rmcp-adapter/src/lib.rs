#![doc = include_str!("../README.md")]
//!
//! ## Map of the crate
//!
//! * [`Mrtr`] (the engine and the [`PrincipalSource`]) and [`HasMrtr`] (the server holds
//!   one);
//! * [`Parameters`]: the extractor for `#[tool]` functions; [`Mrtr::tool_call`],
//!   [`Mrtr::prompt_get`], [`Mrtr::resource_read`] for hand-written handlers;
//! * [`Pending`] (verified; [`Pending::commit`] spends the token) and [`Call`] (typed state,
//!   [`Call::pause`], [`Call::retry`]);
//! * [`eras`]: [`Pending::run`], one flow for both eras (MRTR rounds in 2026-07-28,
//!   server-to-client requests in a 2025-era session);
//! * [`layer::PrecheckLayer`]: the tower layer answering what must be answered before rmcp parses;
//! * `listen` (feature `subscriptions`): `subscriptions/listen` admitted before rmcp
//!   acknowledges, then served;
//! * [`session`]: rmcp's 2025-era sessions bound to their owner and capped; with feature
//!   `subscriptions`, `resources/subscribe` grants and the retirement of a session whose grant
//!   is lost;
//! * [`input`]: embedded input requests, the client's answers, declared capabilities;
//! * [`FromExtensions`] (the [`Caller`](mrtr_std::caller::Caller) an auth layer put in the request); [`CallerLayer`] (the caller from a function of the
//!   request head), [`bearer_token`], [`bearer_matches`] (constant time); [`ToErrorData`];
//! * [`Stack`]: caller → session owner → precheck → rmcp, in that order;
//! * [`log_filter`]: logs without rmcp's whole messages (and their tokens) at any level.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod auth;
mod call;
mod caller;
pub mod eras;
mod error;
mod extract;
pub mod input;
pub mod layer;
#[cfg(feature = "subscriptions")]
pub mod listen;
mod logs;
mod mrtr;
pub mod session;
mod stack;

pub use auth::{CallerFuture, CallerLayer, CallerService, anonymous, bearer_matches, bearer_token};
pub use call::{Call, Pending};
pub use caller::{FromExtensions, PrincipalSource, http_parts};
pub use error::ToErrorData;
pub use extract::Parameters;
pub use logs::log_filter;
pub use mrtr::{HasMrtr, Mrtr};
pub use mrtr_replay;
pub use mrtr_std;
#[cfg(feature = "subscriptions")]
pub use mrtr_subscriptions;
pub use stack::Stack;
