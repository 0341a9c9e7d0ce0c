//! An MCP gateway on a Cortex-M that pauses and resumes `tools/call` requests with mrtr-core
//! (SEP-2322 `requestState`), checked on the target under QEMU.
//!
//! Each binary (`aes-gcm`, `chacha20poly1305`, `xchacha20poly1305`) runs [`run`] with one
//! backend: golden vectors, a full resume chain up to the round cap, rejected tokens, the
//! replay set shared with an exception handler, expiry on the SysTick clock, and the
//! measurements of `docs/embedded.md`. The `footprint-*` binaries exist only to be measured.

#![no_std]
#![deny(unsafe_code)]

pub mod board;
pub mod chain;
pub mod clock;
pub mod expiry;
pub mod footprint;
pub mod keys;
pub mod measure;
pub mod rejects;
pub mod replay;
pub mod report;
pub mod rng;
pub mod stack;
pub mod text;
pub mod vectors;

use mrtr_core::cipher::Cipher;
use mrtr_core::{ArgsDigest, Binding, Principal, TokenBuf, token_len_for};

use crate::clock::Timer;
use crate::report::Report;

/// The protocol revision the gateway speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// The only method the scenarios pause.
pub const METHOD: &str = "tools/call";
/// The tool being called.
pub const TOOL: &str = "thermostat.schedule";
/// The authenticated caller.
pub const OWNER: Principal<'static> = Principal::User {
    issuer: "https://idp.example",
    subject: "owner-42",
};
/// Stands for the SHA-256 of the call's canonical arguments (computed by the transport).
pub const ARGS: ArgsDigest = [0x5a; 32];

/// Largest continuation the gateway seals, in bytes.
pub const MAX_CONTINUATION: usize = 256;
/// Size of a token buffer for [`MAX_CONTINUATION`]: also the longest token text accepted.
pub const TOKEN_CAP: usize = token_len_for(MAX_CONTINUATION);
/// The gateway's token buffer.
pub type Token = TokenBuf<TOKEN_CAP>;

/// The binding of a `tools/call` to `tool` by `who`.
pub fn call<'a>(tool: &'a str, who: Principal<'a>) -> Binding<'a> {
    Binding::new(METHOD, PROTOCOL_VERSION, tool, who)
        .unwrap_or_else(|e| panic!("the scenarios' bindings are valid: {e}"))
}

/// Runs every scenario for cipher `C`, then the measurements, and ends the QEMU run with the
/// verdict.
pub fn run<C: Cipher>(mut timer: Timer, golden: &vectors::VectorSet) -> ! {
    let mut report = Report::default();
    report.section(board::MACHINE);
    report.note(format_args!(
        "backend {}, token buffer {} B",
        C::ALGORITHM.name(),
        TOKEN_CAP
    ));
    let mut rng = rng::example_rng();
    vectors::check::<C>(&mut report, golden);
    chain::run::<C>(&mut report, &mut rng);
    rejects::run::<C>(&mut report, &mut rng);
    replay::run::<C>(&mut report, &mut rng);
    expiry::run::<C>(&mut report, &mut rng, &mut clock::TickDelay);
    measure::run::<C>(&mut report, &mut rng, &mut timer);
    report.finish()
}
