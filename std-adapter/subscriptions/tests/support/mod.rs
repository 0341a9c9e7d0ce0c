//! Helpers shared by the subscription tests.
#![allow(dead_code)]

pub mod registry;
