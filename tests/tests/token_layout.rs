//! The layout checks of docs/token-format.md §2 ("What an opener checks of this layout") and
//! their place in §6, per backend: each check answers the reason the document names, in the
//! document's order. Tokens of 0–2 bytes are `malformed` whatever their first byte; a key id
//! with a character outside the key id alphabet is `unknown_key`, never `malformed`; the
//! shortest token the document allows gets as far as the AEAD (`tampered`), one byte less is
//! `malformed`.

use mrtr_core::ManualClock;
use mrtr_core::cipher::Cipher;
use mrtr_core::{Codec, Reason};
use mrtr_tests::b64;
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

/// The smallest state: 72 fixed bytes and a 1-byte method (§2, §4).
const SMALLEST_STATE: usize = 73;
const TAG: usize = 16;

fn reason<C: Cipher>(mrtr: &Codec<C, &ManualClock>, bytes: &[u8]) -> Reason {
    rejected(mrtr, &b64::encode(bytes), &call(), &ARGS)
}

/// A token of `len` bytes: `head`, then filler.
fn token(head: &[u8], len: usize) -> Vec<u8> {
    let mut bytes = vec![0x5a; len.max(head.len())];
    bytes[..head.len()].copy_from_slice(head);
    bytes.truncate(len);
    bytes
}

fn tokens_of_fewer_than_three_bytes_are_malformed<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let alg = C::ALGORITHM.id();
    for first in [0x00, 0x01, 0x02, 0x03, 0x09, 0xff] {
        for len in 0..3 {
            let bytes = token(&[first, alg], len);
            assert_eq!(reason(&mrtr, &bytes), Reason::Malformed, "{bytes:02x?}");
        }
    }
}

fn the_layout_checks_answer_in_the_documented_order<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let alg = C::ALGORITHM.id();
    let other = alg % 4 + 1;
    let n = C::ALGORITHM.nonce_len();
    // The key ring holds `k1` (2 bytes): the shortest token for it.
    let shortest = 3 + 2 + n + SMALLEST_STATE + TAG;
    // 2. The version comes first: it wins over a wrong algorithm and bad lengths.
    for bytes in [token(&[0x09, other, 0], 3), token(&[0x00, alg, 2], 200)] {
        assert_eq!(reason(&mrtr, &bytes), Reason::UnsupportedVersion);
    }
    // 3. The algorithm, over bad lengths.
    for version in [0x01, 0x02] {
        let bytes = token(&[version, other, 0], 3);
        assert_eq!(reason(&mrtr, &bytes), Reason::WrongAlgorithm);
    }
    // 4. The key id length.
    for k in [0, 17, 255] {
        let bytes = token(&[0x02, alg, k], 300);
        assert_eq!(reason(&mrtr, &bytes), Reason::Malformed, "k = {k}");
    }
    // 5. Room for the key id, nonce, smallest state and tag.
    let head = [0x02, alg, 2, b'k', b'1'];
    for len in [3, 5, 5 + n, shortest - 1] {
        assert_eq!(
            reason(&mrtr, &token(&head, len)),
            Reason::Malformed,
            "{len} bytes"
        );
    }
    // The shortest token passes every layout check and is opened.
    assert_eq!(reason(&mrtr, &token(&head, shortest)), Reason::Tampered);
    assert_eq!(
        reason(&mrtr, &token(&head, shortest + 40)),
        Reason::Tampered
    );
}

fn a_key_id_with_a_foreign_character_is_an_unknown_key<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let sealed = b64::decode(&first(&mrtr, &mut SeqRng::new(7))).unwrap();
    assert_eq!(&sealed[2..5], &[2, b'k', b'1']);
    for id in [*b"k!", *b"k ", *b"k\0", [b'k', 0xff], *b"K1"] {
        let mut bytes = sealed.clone();
        bytes[3..5].copy_from_slice(&id);
        assert_eq!(reason(&mrtr, &bytes), Reason::UnknownKey, "{id:02x?}");
    }
}

mrtr_tests::per_backend!(
    tokens_of_fewer_than_three_bytes_are_malformed,
    the_layout_checks_answer_in_the_documented_order,
    a_key_id_with_a_foreign_character_is_an_unknown_key,
);
