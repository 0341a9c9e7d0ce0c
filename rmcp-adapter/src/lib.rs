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
//! * [`PrecheckLayer`]: the tower layer answering what must be answered before rmcp parses;
//! * [`listen`]: `subscriptions/listen` admitted before rmcp acknowledges, then served;
//! * [`input`]: embedded input requests, the client's answers, declared capabilities;
//! * [`Caller`], [`FromExtensions`]; [`ToErrorData`].

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod call;
mod caller;
mod error;
mod extract;
pub mod input;
pub mod layer;
pub mod listen;
mod mrtr;

pub use call::{Call, Pending};
pub use caller::{Caller, FromExtensions, PrincipalSource, http_parts};
pub use error::ToErrorData;
pub use extract::Parameters;
pub use layer::{JsonRpcMessage, PrecheckLayer};
pub use mrtr::{HasMrtr, Mrtr};
pub use mrtr_std;
