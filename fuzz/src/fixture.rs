//! The one configuration every target resumes against.

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::replay::{NoReplayCache, SharedReplaySet};
use mrtr_core::{
    AcceptV1, Binding, Codec, DEFAULT_MAX_CLOCK_SKEW_MS, DEFAULT_TTL_MS, ErrorDetail, ManualClock,
    Principal, TokenBuf, token_len_for,
};

/// The fixed "now" of every resume, ms since the epoch.
pub const NOW_MS: u64 = 1_780_000_000_000;
/// The configured round cap (the library default).
pub const MAX_ROUNDS: u32 = 10;
/// The longest lifetime a token may claim (the library default: the TTL).
pub const MAX_LIFETIME_MS: u64 = DEFAULT_TTL_MS;
/// How far a token's issue time may lie after "now" (the library default).
pub const MAX_SKEW_MS: u64 = DEFAULT_MAX_CLOCK_SKEW_MS;
/// The service identity format v2 tokens are bound to.
pub const AUDIENCE: &str = "fuzz.example";
/// The sealing key and its id.
pub const CURRENT: (&str, [u8; 32]) = ("fz-1", [0x11; 32]);
/// A rotated-out key that still opens.
pub const PREVIOUS: (&str, [u8; 32]) = ("fz-0", [0x22; 32]);
/// The argument digest of the bound call.
pub const ARGS: [u8; 32] = [0x5a; 32];
/// Longest continuation a token buffer here holds.
pub const MAX_CONTINUATION: usize = 256;
/// Token buffer size.
pub const N: usize = token_len_for(MAX_CONTINUATION);

/// The engine under test.
pub type Engine<R = NoReplayCache> = Codec<Aes256Gcm, ManualClock, R, 2>;

/// The call every token is bound to.
pub fn binding() -> Binding<'static> {
    let who = Principal::User {
        issuer: "https://idp.example",
        subject: "alice",
    };
    Binding::new("tools/call", "2026-07-28", "book_table", who).expect("valid binding")
}

fn key(k: (&str, [u8; 32])) -> Key<Aes256Gcm> {
    Key::new(KeyId::new(k.0).expect("key id"), SecretKey::from_bytes(k.1))
}

/// A ring whose sealing key is `current`, with `previous` still opening.
pub fn ring(current: (&str, [u8; 32]), previous: (&str, [u8; 32])) -> KeyRing<Aes256Gcm, 2> {
    KeyRing::new(key(current))
        .with_previous(key(previous))
        .expect("distinct key ids")
}

/// The engine at [`NOW_MS`] with the defaults: TTL, lifetime, skew, round cap, and the v1
/// window (it was built at "now", so v1 tokens still open).
pub fn engine(detail: ErrorDetail) -> Engine {
    Codec::builder(ring(CURRENT, PREVIOUS), ManualClock::new(NOW_MS))
        .audience(AUDIENCE)
        .error_detail(detail)
        .build()
        .expect("valid config")
}

/// The same engine with v1 turned off.
pub fn engine_v1_off() -> Engine {
    Codec::builder(ring(CURRENT, PREVIOUS), ManualClock::new(NOW_MS))
        .audience(AUDIENCE)
        .accept_v1(AcceptV1::Never)
        .error_detail(ErrorDetail::Detailed)
        .build()
        .expect("valid config")
}

/// The same engine, single use through a replay set.
pub fn engine_single_use(replay: &SharedReplaySet<4>) -> Engine<&SharedReplaySet<4>> {
    Codec::builder(ring(CURRENT, PREVIOUS), ManualClock::new(NOW_MS))
        .audience(AUDIENCE)
        .replay_cache(replay)
        .build()
        .expect("valid config")
}

/// A fresh token buffer.
pub fn buf() -> TokenBuf<N> {
    TokenBuf::new()
}

/// A deterministic stand-in for a CSPRNG (the test suite's SplitMix64 stream): seeds and
/// fuzz runs are reproducible.
pub use mrtr_tests::rng::SeqRng as CountingRng;
