//! The backend behind the whole engine: pause and resume, and tokens that cross between this
//! backend and the RustCrypto one of the same algorithm.

use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::{Binding, Codec, ManualClock, Principal, Round, TokenBuf, token_len_for};

struct CountingRng(u8);

impl rand_core::TryRng for CountingRng {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(0)
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(0)
    }
    fn try_fill_bytes(&mut self, d: &mut [u8]) -> Result<(), Self::Error> {
        for b in d {
            self.0 = self.0.wrapping_add(1);
            *b = self.0;
        }
        Ok(())
    }
}

impl rand_core::TryCryptoRng for CountingRng {}

fn ring<C: Cipher>() -> KeyRing<C, 2> {
    KeyRing::new(Key::new(
        KeyId::new("k1").unwrap(),
        SecretKey::from_bytes([9; 32]),
    ))
}

fn call() -> Binding<'static> {
    let who = Principal::User {
        issuer: "https://idp",
        subject: "alice",
    };
    Binding::new("tools/call", "2026-07-28", "book_table", who).unwrap()
}

/// Seals with `A`, opens with `B` (same algorithm, same key).
fn cross<A: Cipher, B: Cipher>() {
    let clock = ManualClock::new(1_000_000);
    let sealer = Codec::builder(ring::<A>(), &clock)
        .audience("svc")
        .build()
        .unwrap();
    let opener = Codec::builder(ring::<B>(), &clock)
        .audience("svc")
        .build()
        .unwrap();
    let args = [3u8; 32];
    let mut out: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
    let token = sealer
        .pause(
            Round::FIRST,
            &call(),
            &args,
            b"step=date",
            &mut CountingRng(0),
            &mut out,
        )
        .unwrap()
        .as_str()
        .to_owned();
    let mut buf: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
    let resumed = opener.resume(&token, &call(), &args, &mut buf).unwrap();
    assert_eq!(resumed.continuation(), b"step=date");
    assert_eq!(resumed.round(), 1);

    // Tampering anywhere is refused.
    let mut bytes = token.clone().into_bytes();
    let mid = bytes.len() / 2;
    bytes[mid] = if bytes[mid] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).unwrap();
    assert!(opener.resume(&tampered, &call(), &args, &mut buf).is_err());
    // Another caller is refused.
    let mallory = Principal::User {
        issuer: "https://idp",
        subject: "mallory",
    };
    let theirs = Binding::new("tools/call", "2026-07-28", "book_table", mallory).unwrap();
    assert!(opener.resume(&token, &theirs, &args, &mut buf).is_err());
}

#[test]
fn aes_gcm_round_trip_and_interop() {
    cross::<mrtr_aws_lc::Aes256Gcm, mrtr_aws_lc::Aes256Gcm>();
    cross::<mrtr_aws_lc::Aes256Gcm, mrtr_aes_gcm::Aes256Gcm>();
    cross::<mrtr_aes_gcm::Aes256Gcm, mrtr_aws_lc::Aes256Gcm>();
}

#[test]
fn chacha_round_trip_and_interop() {
    use mrtr_aws_lc::ChaCha20Poly1305 as Lc;
    use mrtr_chacha20poly1305::ChaCha20Poly1305 as Rc;
    cross::<Lc, Lc>();
    cross::<Lc, Rc>();
    cross::<Rc, Lc>();
}

#[test]
fn gcm_siv_round_trip_and_interop() {
    use mrtr_aes_gcm_siv::Aes256GcmSiv as Rc;
    use mrtr_aws_lc::Aes256GcmSiv as Lc;
    cross::<Lc, Lc>();
    cross::<Lc, Rc>();
    cross::<Rc, Lc>();
}

#[test]
fn algorithms_do_not_cross() {
    let clock = ManualClock::new(1_000_000);
    let aes = Codec::builder(ring::<mrtr_aws_lc::Aes256Gcm>(), &clock)
        .audience("svc")
        .build()
        .unwrap();
    let chacha = Codec::builder(ring::<mrtr_aws_lc::ChaCha20Poly1305>(), &clock)
        .audience("svc")
        .build()
        .unwrap();
    let args = [3u8; 32];
    let mut out: TokenBuf<{ token_len_for(16) }> = TokenBuf::new();
    let token = aes
        .pause(
            Round::FIRST,
            &call(),
            &args,
            b"x",
            &mut CountingRng(0),
            &mut out,
        )
        .unwrap()
        .as_str()
        .to_owned();
    let mut buf: TokenBuf<{ token_len_for(16) }> = TokenBuf::new();
    assert!(chacha.resume(&token, &call(), &args, &mut buf).is_err());
}
