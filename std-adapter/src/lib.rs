//! # mrtr-std
//!
//! The std adapter: implementations of `mrtr-core`'s traits for hosted servers.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use mrtr_core as core;
