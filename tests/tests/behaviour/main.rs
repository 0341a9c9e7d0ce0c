//! The behaviour suite, run once per AEAD backend: every module's generic tests are
//! instantiated for AES-256-GCM, ChaCha20-Poly1305, XChaCha20-Poly1305 and AES-256-GCM-SIV by
//! `per_backend!`.

mod args;
mod audience;
mod binding;
mod capacity;
mod config;
mod expiry;
mod keys;
mod lifetime;
mod order;
mod replay;
mod rollout;
mod rounds;
mod roundtrip;
mod seal;
mod state;
mod wipe;
mod wire;
