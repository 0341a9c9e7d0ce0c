//! The inputs every row shares: continuation sizes, payload bytes, key, binding, clock, RNG.

use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::{ArgsDigest, Binding, Principal};

/// Continuation sizes, in bytes.
pub const SIZES: [usize; 4] = [64, 256, 1024, 4096];

/// The one 256-bit key every row uses.
pub const KEY: [u8; 32] = [0x42; 32];

/// Key id written into mrtr token headers.
pub const KEY_ID: &str = "k2026-11";

/// The argument digest (SHA-256 of canonical arguments, in a real server).
pub const ARGS: ArgsDigest = [0x5a; 32];

/// Token lifetime for every library that has one, in seconds.
pub const TTL_SECS: u64 = 300;

/// A continuation of `n` bytes: printable ASCII, so string-only peers (cookies, JWT claims)
/// can carry it unchanged.
pub fn continuation(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i * 7 % 26) as u8).collect()
}

/// The request a token is bound to: a `tools/call` of `book_table` by an authenticated user.
pub fn binding() -> Binding<'static> {
    let who = Principal::User {
        issuer: "https://idp.example",
        subject: "alice",
    };
    Binding::new("tools/call", "2026-07-28", "book_table", who).expect("valid binding")
}

/// The binding as flat bytes, for peers that take opaque associated data: method, version,
/// target, issuer, subject and argument digest, NUL-separated.
pub fn binding_bytes() -> Vec<u8> {
    let b = binding();
    let mut out = Vec::new();
    for part in [
        b.method(),
        b.protocol_version(),
        b.target(),
        "https://idp.example",
        "alice",
    ] {
        out.extend_from_slice(part.as_bytes());
        out.push(0);
    }
    out.extend_from_slice(&ARGS);
    out
}

/// A key ring holding [`KEY`] as the current key.
pub fn key_ring<C: Cipher>() -> KeyRing<C, 4> {
    let id = KeyId::new(KEY_ID).expect("valid key id");
    KeyRing::new(Key::new(id, SecretKey::from_bytes(KEY)))
}

/// A SplitMix64 stream for generating many distinct ids quickly (the replay cache
/// benchmarks): `mrtr-tests`' `SeqRng`, started at a random point. NOT cryptographic; never
/// used to seal a measured token.
pub type SplitMix = mrtr_tests::rng::SeqRng;

/// A [`SplitMix`] stream starting at a random point (seeded from the OS once), so that streams
/// created apart never repeat each other's ids in practice.
pub fn split_mix_from_os() -> SplitMix {
    SplitMix::new(getrandom::u64().expect("OS randomness"))
}
