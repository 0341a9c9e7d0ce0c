extern crate std;

use core::cell::RefCell;
use std::borrow::ToOwned;
use std::vec::Vec;

use super::*;
use crate::binding::Principal;
use crate::cipher::{Algorithm, CryptoError};
use crate::clock::ManualClock;
use crate::key::{Key, KeyId, SecretKey};
use crate::token::token_len_for;

std::thread_local! {
    /// The associated data of every seal and open on this thread, in order.
    static SEEN: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// Not a cipher: leaves the bytes as they are and tags them with a checksum of the
/// associated data and the bytes, recording the associated data it was given. Enough to
/// see what the engine hands an AEAD and where it puts the token.
struct Recorder;

fn tag(aad: &[u8], buf: &[u8]) -> [u8; TAG_LEN] {
    let mut t = [0u8; TAG_LEN];
    for (i, b) in aad.iter().chain(buf).enumerate() {
        t[i % TAG_LEN] = t[i % TAG_LEN].wrapping_mul(31).wrapping_add(*b);
    }
    t
}

impl Cipher for Recorder {
    const ALGORITHM: Algorithm = Algorithm::Aes256GcmSiv;

    fn new(_: &SecretKey) -> Self {
        Recorder
    }

    fn seal_in_place(
        &self,
        _: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; TAG_LEN], CryptoError> {
        SEEN.with(|s| s.borrow_mut().push(aad.into()));
        Ok(tag(aad, buf))
    }

    fn open_in_place(
        &self,
        _: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        t: &[u8; TAG_LEN],
    ) -> Result<(), CryptoError> {
        SEEN.with(|s| s.borrow_mut().push(aad.into()));
        if tag(aad, buf) == *t {
            Ok(())
        } else {
            Err(CryptoError)
        }
    }
}

struct Counter(u8);

impl rand_core::TryRng for Counter {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(0)
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(0)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for b in dst {
            self.0 = self.0.wrapping_add(1);
            *b = self.0;
        }
        Ok(())
    }
}

impl TryCryptoRng for Counter {}

fn ring() -> KeyRing<Recorder, 4> {
    KeyRing::new(Key::new(
        KeyId::new("k2026-11").unwrap(),
        SecretKey::from_bytes([7; 32]),
    ))
}

fn seen() -> Vec<Vec<u8>> {
    SEEN.with(|s| core::mem::take(&mut *s.borrow_mut()))
}

/// A binding whose associated data fits the room a token buffer leaves, and one whose does
/// not (the widest principal and target), sealed into a buffer of exactly the token's
/// size: either way the cipher gets the canonical associated data, on the seal and on the
/// open, and the token is the same as from a roomy buffer.
#[test]
fn the_cipher_gets_the_canonical_associated_data_wherever_it_is_built() {
    let clock = ManualClock::new(1_000_000);
    let long = "x".repeat(255);
    let target = "t".repeat(1024);
    let alice = Principal::User {
        issuer: "https://idp.example",
        subject: "alice",
    };
    let widest = Principal::User {
        issuer: &long,
        subject: &long,
    };
    let short = Binding::new("tools/call", "2026-07-28", "book_table", alice).unwrap();
    let wide = Binding::new("tools/call", "2026-07-28", &target, widest).unwrap();
    for audience in [None, Some("booking.example")] {
        let builder = Codec::builder(ring(), &clock);
        let mrtr = match audience {
            Some(a) => builder.audience(a).build().unwrap(),
            None => builder.without_audience().build().unwrap(),
        };
        for binding in [short, wide] {
            let mut tight = TokenBuf::<{ token_len_for(16) }>::new();
            let mut roomy = TokenBuf::<4096>::new();
            let a = mrtr
                .pause(
                    Round::FIRST,
                    &binding,
                    &[5; 32],
                    b"step=1",
                    &mut Counter(0),
                    &mut tight,
                )
                .unwrap();
            let b = mrtr
                .pause(
                    Round::FIRST,
                    &binding,
                    &[5; 32],
                    b"step=1",
                    &mut Counter(0),
                    &mut roomy,
                )
                .unwrap();
            assert_eq!(a.as_str(), b.as_str());
            // The short binding's associated data fits the room the tight buffer leaves
            // after the token bytes; the wide one's goes to the fallback.
            let room = token_len_for(16) - b64::decoded_len(a.as_str().len()).unwrap();
            assert_eq!(binding.aad_len(audience) <= room, binding == short);
            let token = a.as_str().to_owned();
            let mut buf = TokenBuf::<{ token_len_for(16) }>::new();
            let resumed = mrtr.resume(&token, &binding, &[5; 32], &mut buf).unwrap();
            assert_eq!(resumed.continuation(), b"step=1");

            let header = [
                2,
                Algorithm::Aes256GcmSiv.id(),
                8,
                b'k',
                b'2',
                b'0',
                b'2',
                b'6',
                b'-',
                b'1',
                b'1',
            ];
            let want = Aad::build(&header, audience, &binding).unwrap();
            let seen = seen();
            assert_eq!(seen.len(), 3);
            assert!(
                seen.iter().all(|aad| aad == want.as_bytes()),
                "{audience:?}"
            );
        }
    }
}

/// A pause leaves only the token text in its buffer: the associated data it built in the
/// room after the token bytes is gone where the text did not cover it.
#[test]
fn a_pause_leaves_only_the_text_in_its_buffer() {
    let clock = ManualClock::new(1_000_000);
    let mrtr = Codec::builder(ring(), &clock)
        .audience("booking.example")
        .build()
        .unwrap();
    let user = Principal::User {
        issuer: "https://idp.example",
        subject: "alice",
    };
    let binding = Binding::new("tools/call", "2026-07-28", "book_table", user).unwrap();
    for n in [0, 1, 2, 64, 256] {
        let mut out = TokenBuf::<{ token_len_for(256) }>::new();
        let continuation = [b'c'; 256];
        let len = mrtr
            .pause(
                Round::FIRST,
                &binding,
                &[5; 32],
                &continuation[..n],
                &mut Counter(0),
                &mut out,
            )
            .unwrap()
            .as_str()
            .len();
        assert!(out.bytes[len..].iter().all(|&b| b == 0), "{n}");
    }
    seen();
}
