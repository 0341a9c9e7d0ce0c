//! Shared helpers for the behaviour suite.
