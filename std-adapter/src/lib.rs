//! # mrtr-std
//!
//! The std adapter: thin implementations of `mrtr-core`'s traits for hosted servers (clocks,
//! OS randomness, key loading, replay caches, the subscription authorizer runtime, JSON-RPC
//! glue).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use mrtr_core as core;

pub mod clock;
pub mod subscription;
