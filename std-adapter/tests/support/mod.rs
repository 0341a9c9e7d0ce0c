//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod metrics;
pub mod redis;

use std::io::Write;
use std::sync::{Arc, Mutex};

#[cfg(feature = "aes-gcm")]
use mrtr_aes_gcm::Aes256Gcm;
#[cfg(feature = "aes-gcm")]
use mrtr_std::clock::ManualClock;
#[cfg(feature = "aes-gcm")]
use mrtr_std::core::{Codec, ErrorDetail};
#[cfg(feature = "aes-gcm")]
use mrtr_std::keys::KeyConfig;

/// Key material used by the tests, in base64, so tests can check it never leaks.
pub const KEY1_B64: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
pub const KEY2_B64: &str = "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=";

/// An anonymous 2026-07-28 `tools/call` of `target` without arguments, carrying `state`
/// (none: a fresh call).
pub fn call<'a>(target: &'a str, state: Option<&'a str>) -> mrtr_std::jsonrpc::ResumeRequest<'a> {
    use mrtr_std::jsonrpc::{Method, RequestState, ResumeRequest};
    let state = state.map_or(RequestState::Absent, RequestState::Token);
    ResumeRequest::with_map_arguments(
        Method::ToolsCall,
        "2026-07-28",
        target,
        None,
        state,
        mrtr_std::core::Principal::Anonymous,
    )
}

/// [`call`] of `book_table`.
pub fn booking(state: Option<&str>) -> mrtr_std::jsonrpc::ResumeRequest<'_> {
    call("book_table", state)
}

/// A key configuration in the environment form, with `K1` and `K2` standing for
/// [`KEY1_B64`] and [`KEY2_B64`]: `key_spec("current=k2; k2:K2; k1:K1")`.
pub fn key_spec(spec: &str) -> mrtr_std::keys::KeyConfig {
    mrtr_std::keys::KeyConfig::parse_env(&spec.replace("K1", KEY1_B64).replace("K2", KEY2_B64))
        .unwrap()
}

/// Five distinct keys, `k1:...; k2:...; ...; k5:...`: one more than a key ring holds.
pub fn five_keys() -> String {
    [
        "k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=",
        "k2:QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI=",
        "k3:Q0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0M=",
        "k4:REREREREREREREREREREREREREREREREREREREREREQ=",
        "k5:RUVFRUVFRUVFRUVFRUVFRUVFRUVFRUVFRUVFRUVFRUU=",
    ]
    .join("; ")
}

/// Now, for tests driving a manual clock.
pub const T0: u64 = 1_800_000_000_000;

#[cfg(feature = "aes-gcm")]
/// A `Codec` over AES-256-GCM with keys k1 (old) and k2 (current), a manual clock and the
/// given detail mode.
pub fn mrtr(clock: &ManualClock, detail: ErrorDetail) -> Codec<Aes256Gcm, ManualClock> {
    let ring = KeyConfig::parse_env(&format!("current=k2; k2:{KEY2_B64}; k1:{KEY1_B64}"))
        .unwrap()
        .into_ring()
        .unwrap();
    Codec::builder(ring, clock.clone())
        .without_audience()
        .ttl_ms(60_000)
        .max_rounds(3)
        .error_detail(detail)
        .build()
        .unwrap()
}

/// A `tracing` writer that keeps everything written, for asserting on logs.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `f` with a subscriber that records every event at every level; returns the log text.
pub fn capture_logs<T>(f: impl FnOnce() -> T) -> (T, String) {
    let captured = Captured::default();
    let sink = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    let out = tracing::subscriber::with_default(subscriber, f);
    (out, captured.text())
}
