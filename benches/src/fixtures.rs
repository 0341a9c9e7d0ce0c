//! The inputs every row shares: continuation sizes, payload bytes, key, binding, clock, RNG.

use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::{ArgsDigest, Binding, Principal};
use rand_core::{TryCryptoRng, TryRng};

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

/// The same continuation as text.
pub fn continuation_str(n: usize) -> String {
    String::from_utf8(continuation(n)).expect("ASCII")
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

/// A counter mixed with SplitMix64, for generating many distinct ids quickly (the replay
/// cache benchmarks). NOT cryptographic; never used to seal a measured token.
#[derive(Clone, Copy, Debug, Default)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator whose stream starts at a random point (seeded from the OS once), so that
    /// generators created apart never repeat each other's ids in practice.
    pub fn from_os() -> Self {
        Self(getrandom::u64().expect("OS randomness"))
    }
}

impl TryRng for SplitMix {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        self.try_next_u64().map(|x| x as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Ok(z ^ (z >> 31))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for chunk in dst.chunks_mut(8) {
            let x = self.try_next_u64()?.to_le_bytes();
            chunk.copy_from_slice(&x[..chunk.len()]);
        }
        Ok(())
    }
}

impl TryCryptoRng for SplitMix {}
