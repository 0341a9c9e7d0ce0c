//! Prints the worked examples of `docs/token-format.md`, format v2 then v1: every input, the
//! canonical associated data, the ciphertext, and the token, in hex, so a reader can check
//! each step.
//!
//! `cargo run -p mrtr-demo --bin token-example`

#[macro_use]
#[path = "../out.rs"]
mod out;

use std::convert::Infallible;

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_core::Aad;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::{
    Binding, Codec, ManualClock, Principal, Round, TokenBuf, TokenFormat, token_len_for,
};

/// Yields fixed bytes: the example's token id, then its nonce. Never use outside examples.
struct Replay(Vec<u8>);

impl rand_core::TryRng for Replay {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        unreachable!("mrtr only calls fill_bytes")
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        unreachable!("mrtr only calls fill_bytes")
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        let rest = self.0.split_off(dst.len());
        dst.copy_from_slice(&self.0);
        self.0 = rest;
        Ok(())
    }
}
impl rand_core::TryCryptoRng for Replay {}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn b64_decode(text: &str) -> Vec<u8> {
    let mut buf = text.as_bytes().to_vec();
    let n = mrtr_core::b64::decode_in_place(&mut buf, text.len()).expect("valid token");
    buf.truncate(n);
    buf
}

/// The example's audience (format v2).
const AUDIENCE: &str = "booking.example";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    outln!("== format v2 ==");
    example(TokenFormat::V2, Some(AUDIENCE))?;
    outln!("== format v1 ==");
    example(TokenFormat::V1, None)
}

/// Seals the example in `format` for an engine bound to `audience`, prints every step, and
/// opens the token again.
fn example(format: TokenFormat, audience: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let key: [u8; 32] = core::array::from_fn(|i| i as u8);
    let token_id: [u8; 16] = core::array::from_fn(|i| 0xa0 + i as u8);
    let nonce: [u8; 12] = core::array::from_fn(|i| 0xc0 + i as u8);
    // SHA-256 of "{}", the RFC 8785 canonical form of empty arguments.
    let args: [u8; 32] = [
        0x44, 0x13, 0x6f, 0xa3, 0x55, 0xb3, 0x67, 0x8a, 0x11, 0x46, 0xad, 0x16, 0xf7, 0xe8, 0x64,
        0x9e, 0x94, 0xfb, 0x4f, 0xc2, 0x1f, 0xe7, 0x7e, 0x83, 0x10, 0xc0, 0x60, 0xf6, 0x1c, 0xaa,
        0xff, 0x8a,
    ];
    let now = 1_764_460_800_000u64;
    let clock = ManualClock::new(now);
    let ring: KeyRing<Aes256Gcm, 1> =
        KeyRing::new(Key::new(KeyId::new("k1")?, SecretKey::from_bytes(key)));
    let builder = Codec::builder(ring, &clock);
    let builder = match audience {
        Some(a) => builder.audience(a),
        None => builder.without_audience(),
    };
    let mrtr = builder.seal_format(format).build()?;
    let who = Principal::User {
        issuer: "https://idp.example",
        subject: "alice",
    };
    let binding = Binding::new("tools/call", "2026-07-28", "book_table", who)?;
    let continuation = b"step=date";

    let mut rng = Replay([&token_id[..], &nonce[..]].concat());
    let mut out = TokenBuf::<{ token_len_for(64) }>::new();
    let token = mrtr.pause(
        Round::FIRST,
        &binding,
        &args,
        continuation,
        &mut rng,
        &mut out,
    )?;
    let text = token.as_str().to_owned();
    let bytes = b64_decode(&text);
    let header = &bytes[..5];
    let aad = Aad::build(header, audience, &binding).expect("valid header");

    outln!("key            {}", hex(&key));
    outln!("key id         k1");
    outln!("audience       {}", audience.unwrap_or("(none)"));
    outln!("now_ms         {now}   ttl_ms {}", mrtr.ttl_ms());
    outln!("token id       {}", hex(&token_id));
    outln!("nonce          {}", hex(&nonce));
    outln!("args digest    {}", hex(&args));
    outln!("continuation   {}  ({:?})", hex(continuation), "step=date");
    outln!("header         {}", hex(header));
    outln!("aad            {}", hex(aad.as_bytes()));
    let state_len = bytes.len() - 5 - 12 - 16;
    outln!("ciphertext     {}", hex(&bytes[17..17 + state_len]));
    outln!("tag            {}", hex(&bytes[17 + state_len..]));
    outln!("token bytes    {}", bytes.len());
    outln!("token          {text}");

    let mut buf = TokenBuf::<{ token_len_for(64) }>::new();
    let resumed = mrtr
        .resume(&text, &binding, &args, &mut buf)
        .expect("resumes");
    outln!(
        "resumed        round {} expires {} continuation {:?}",
        resumed.round(),
        resumed.expires_at_ms(),
        String::from_utf8_lossy(resumed.continuation())
    );
    Ok(())
}
