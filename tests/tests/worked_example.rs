//! The worked examples of `docs/token-format.md` (format v2, and the same inputs in format v1)
//! are what the code produces: their inputs, sealed here, give the associated data and the
//! token printed in the document, byte for byte. The expected values are read from the
//! document itself, so the two cannot drift apart.

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_core::Aad;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::{Codec, ManualClock, Principal, Round, TokenFormat};
use mrtr_tests::fixture::{Buf, bind, choose_audience, resume};
use mrtr_tests::hex;
use mrtr_tests::rng::ReplayRng;

fn document() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/token-format.md");
    std::fs::read_to_string(path).expect("docs/token-format.md")
}

/// The first fenced block after the first line containing `marker`, as one string with all
/// whitespace removed.
fn block_after(doc: &str, marker: &str) -> String {
    let start = doc
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in the document"));
    let mut fences = doc[start..].match_indices("```").map(|(i, _)| start + i);
    let open = fences.next().expect("opening fence");
    let close = fences.next().expect("closing fence");
    let body = &doc[open + 3..close];
    let body = body.split_once('\n').map_or("", |(_, rest)| rest); // drop any info string
    body.split_whitespace().collect()
}

/// Seals the document's inputs in `format` for an engine bound to `audience`, checks the
/// associated data and the token against the document's, and opens the token.
fn reproduce(format: TokenFormat, audience: Option<&str>, aad_marker: &str, token_marker: &str) {
    let doc = document();
    let want_aad = block_after(&doc, aad_marker);
    let want_token = block_after(&doc, token_marker);

    let key =
        hex::decode("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f").unwrap();
    let ring = KeyRing::<Aes256Gcm, 1>::new(Key::new(
        KeyId::new("k1").unwrap(),
        SecretKey::from_slice(&key).unwrap(),
    ));
    let clock = ManualClock::new(1_764_460_800_000);
    let mrtr = choose_audience(Codec::builder(ring, &clock), audience)
        .seal_format(format)
        .ttl_ms(300_000)
        .build()
        .unwrap();
    let who = Principal::User {
        issuer: "https://idp.example",
        subject: "alice",
    };
    let b = bind("tools/call", "2026-07-28", "book_table", who);
    let args: [u8; 32] =
        hex::decode("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a")
            .unwrap()
            .try_into()
            .unwrap();
    let rng_bytes =
        hex::decode("a0a1a2a3a4a5a6a7a8a9aaabacadaeafc0c1c2c3c4c5c6c7c8c9cacb").unwrap();
    let mut rng = ReplayRng::new(&rng_bytes);
    let mut out = Buf::new();
    let token = mrtr
        .pause(Round::FIRST, &b, &args, b"step=date", &mut rng, &mut out)
        .unwrap()
        .as_str()
        .to_owned();

    let aad = Aad::build(&[format.byte(), 1, 2, b'k', b'1'], audience, &b).unwrap();
    assert_eq!(
        hex::encode(aad.as_bytes()),
        want_aad,
        "the document's {format} associated data"
    );
    assert_eq!(token, want_token, "the document's {format} token");
    let opened = resume(&mrtr, &token, &b, &args).unwrap();
    assert_eq!(opened.continuation, b"step=date");
    assert_eq!(opened.expires_at_ms, 1_764_461_100_000);
}

#[test]
fn the_v2_worked_example_reproduces() {
    reproduce(
        TokenFormat::V2,
        Some("booking.example"),
        "Associated data (v2:",
        "The v2 token:",
    );
}

#[test]
fn the_v1_worked_example_reproduces() {
    reproduce(
        TokenFormat::V1,
        None,
        "Associated data (v1:",
        "The v1 token:",
    );
}
