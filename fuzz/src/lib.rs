//! Shared pieces of the mrtr fuzz targets: a fixed fixture (keys, binding, clock), a hand
//! encoder of the documented token and state formats, and the oracles the targets assert.
//!
//! The oracles are written from the format documentation (`core/src/token.rs`,
//! `core/src/state.rs`, `core/src/engine.rs`), not by calling the code under test, so a target
//! compares the implementation with an independent reading of the spec.

pub mod check;
pub mod decimal;
pub mod expect;
pub mod fixture;
pub mod format;
pub mod ijson;
pub mod json;
pub mod seeds;
