//! Mutation tests, per backend: every single-bit flip, every single-character change, every
//! truncation and garbage extensions of a sealed token are rejected; over-long text is refused
//! before decoding; non-canonical base64url, padding and whitespace are refused.

use mrtr_core::ManualClock;
use mrtr_core::cipher::Cipher;
use mrtr_core::replay::NoReplayCache;
use mrtr_core::{Codec, Reason, Round, TokenBuf, token_len_for};
use mrtr_tests::b64;
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Characters that are never base64url, each tried in every position.
const FOREIGN: [char; 9] = ['=', '+', '/', ' ', '\n', '.', '\0', 'é', '😀'];

/// Reasons a mutated token may get: it must fail before or at authentication.
const UNSEAL: [Reason; 7] = [
    Reason::TooLong,
    Reason::Malformed,
    Reason::UnsupportedVersion,
    Reason::WrongAlgorithm,
    Reason::VersionRetired,
    Reason::UnknownKey,
    Reason::Tampered,
];

type Engine<'c, C> = Codec<C, &'c ManualClock, NoReplayCache>;

fn setup<C: Cipher>(clock: &ManualClock) -> (Engine<'_, C>, String) {
    let mrtr = engine::<C, _>(clock);
    let token = seal(
        &mrtr,
        Round::FIRST,
        &call(),
        &ARGS,
        b"cart=3;step=pay",
        &mut SeqRng::new(42),
    );
    assert!(resume(&mrtr, &token, &call(), &ARGS).is_ok());
    (mrtr, token)
}

#[track_caller]
fn assert_refused<C: Cipher>(mrtr: &Engine<'_, C>, token: &str, what: &str) -> Reason {
    let reason = rejected(mrtr, token, &call(), &ARGS);
    assert!(UNSEAL.contains(&reason), "{what}: unexpected {reason:?}");
    reason
}

fn every_bit_flip_is_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let (mrtr, token) = setup::<C>(&clock);
    let bytes = b64::decode(&token).unwrap();
    let mut tampered = 0;
    for bit in 0..bytes.len() * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        let reason = assert_refused(&mrtr, &b64::encode(&flipped), &format!("bit {bit}"));
        tampered += usize::from(reason == Reason::Tampered);
    }
    // Header bits give framing reasons; every bit after the key id reaches the AEAD.
    let after_header = (bytes.len() - 5) * 8;
    assert!(tampered >= after_header, "{tampered} < {after_header}");
}

fn every_character_change_is_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let (mrtr, token) = setup::<C>(&clock);
    let chars: Vec<char> = token.chars().collect();
    for i in 0..chars.len() {
        for c in ALPHABET.chars().chain(FOREIGN) {
            if c == chars[i] {
                continue;
            }
            let mut changed = chars.clone();
            changed[i] = c;
            let text: String = changed.into_iter().collect();
            assert_refused(&mrtr, &text, &format!("{c:?} at {i}"));
        }
    }
}

fn every_truncation_is_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let (mrtr, token) = setup::<C>(&clock);
    for len in 0..token.len() {
        assert_refused(&mrtr, &token[..len], &format!("prefix {len}"));
        assert_refused(&mrtr, &token[token.len() - len..], &format!("suffix {len}"));
    }
    // Dropping whole trailing bytes (re-encoded canonically) too.
    let bytes = b64::decode(&token).unwrap();
    for len in 0..bytes.len() {
        assert_refused(&mrtr, &b64::encode(&bytes[..len]), &format!("{len} bytes"));
    }
}

fn garbage_extensions_are_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let (mrtr, token) = setup::<C>(&clock);
    let mut rng_state = 7u32;
    for n in 1..=12 {
        for _ in 0..16 {
            let garbage: String = (0..n)
                .map(|_| {
                    rng_state = rng_state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    ALPHABET.as_bytes()[(rng_state >> 16) as usize % 64] as char
                })
                .collect();
            assert_refused(&mrtr, &format!("{token}{garbage}"), "appended");
            assert_refused(&mrtr, &format!("{garbage}{token}"), "prepended");
        }
    }
    assert_refused(&mrtr, &format!("{token}{token}"), "doubled");
    let mut bytes = b64::decode(&token).unwrap();
    for extra in [0u8, 0xff] {
        bytes.push(extra);
        assert_refused(&mrtr, &b64::encode(&bytes), "extra byte");
    }
}

/// The longest continuation whose token fits `n` characters, for [`call`] and key `k1`.
fn max_fitting<C: Cipher>(n: usize) -> usize {
    let fixed = token_bytes(2, C::ALGORITHM.nonce_len(), "tools/call".len(), 0);
    (0..n)
        .take_while(|c| mrtr_core::b64::encoded_len(fixed + c) <= n)
        .last()
        .unwrap()
}

fn one_character_over_the_buffer_is_too_long_before_decoding<C: Cipher>() {
    const N: usize = token_len_for(64);
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    // A continuation that makes the token text exactly N characters long.
    let cont = vec![9u8; max_fitting::<C>(N)];
    let mut out: TokenBuf<N> = TokenBuf::new();
    let token = mrtr
        .pause(
            Round::FIRST,
            &call(),
            &ARGS,
            &cont,
            &mut SeqRng::new(1),
            &mut out,
        )
        .unwrap()
        .as_str()
        .to_owned();
    assert_eq!(token.len(), N);
    let mut fits: TokenBuf<N> = TokenBuf::new();
    let resumed = mrtr.resume(&token, &call(), &ARGS, &mut fits).unwrap();
    assert_eq!(resumed.continuation(), &cont[..]);

    // The same valid text is one character over a buffer of N - 1: refused as too long, not
    // decoded.
    let mut one_less: TokenBuf<{ N - 1 }> = TokenBuf::new();
    let err = mrtr
        .resume(&token, &call(), &ARGS, &mut one_less)
        .unwrap_err();
    assert_eq!(err.reason(), Reason::TooLong);
    // Over-long text is refused before decoding: even characters no decoder accepts.
    let mut buf: TokenBuf<N> = TokenBuf::new();
    let mut reason = |t: &str| {
        mrtr.resume(t, &call(), &ARGS, &mut buf)
            .unwrap_err()
            .reason()
    };
    assert_eq!(reason(&format!("{token}A")), Reason::TooLong);
    assert_eq!(reason(&"!".repeat(N + 1)), Reason::TooLong);
    assert_eq!(
        reason(&"!".repeat(N)),
        Reason::Malformed,
        "N characters are decoded"
    );
    // One multi-byte character takes the text over by bytes, not characters.
    assert_eq!(reason(&format!("{}é", &token[..N - 1])), Reason::TooLong);
}

fn non_canonical_text_is_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let mut rng = SeqRng::new(3);
    let mut residues = [false; 3];
    for c in 0..3 {
        let token = seal(
            &mrtr,
            Round::FIRST,
            &call(),
            &ARGS,
            &vec![2u8; 20 + c],
            &mut rng,
        );
        let bytes = b64::decode(&token).unwrap().len();
        residues[bytes % 3] = true;
        // Padding, in each form a lenient decoder would accept.
        for pad in ["=", "==", "==="] {
            let padded = format!("{token}{pad}");
            assert_eq!(
                rejected(&mrtr, &padded, &call(), &ARGS),
                Reason::Malformed,
                "{pad}"
            );
        }
        // Whitespace anywhere.
        for ws in [" ", "\n", "\r\n", "\t"] {
            for text in [
                format!("{ws}{token}"),
                format!("{token}{ws}"),
                format!("{}{ws}{}", &token[..10], &token[10..]),
            ] {
                assert_eq!(rejected(&mrtr, &text, &call(), &ARGS), Reason::Malformed);
            }
        }
        // Non-zero unused bits in the last character.
        if !bytes.is_multiple_of(3) {
            let last = token.chars().last().unwrap();
            let v = ALPHABET.find(last).unwrap();
            let unused = if bytes % 3 == 1 { 0x0f } else { 0x03 };
            for low in 1..=unused {
                let alt = ALPHABET.as_bytes()[(v & !unused) | low] as char;
                let text = format!("{}{alt}", &token[..token.len() - 1]);
                assert_eq!(rejected(&mrtr, &text, &call(), &ARGS), Reason::Malformed);
            }
        }
    }
    assert_eq!(residues, [true; 3], "all three tail shapes were exercised");
}

fn the_standard_alphabet_is_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let mut rng = SeqRng::new(4);
    let (mut dash, mut underscore) = (false, false);
    for _ in 0..50 {
        let token = first(&mrtr, &mut rng);
        if token.contains('-') {
            dash = true;
            let std = token.replace('-', "+");
            assert_eq!(rejected(&mrtr, &std, &call(), &ARGS), Reason::Malformed);
        }
        if token.contains('_') {
            underscore = true;
            let std = token.replace('_', "/");
            assert_eq!(rejected(&mrtr, &std, &call(), &ARGS), Reason::Malformed);
        }
        if dash && underscore {
            return;
        }
    }
    panic!("no token with both '-' and '_' in 50 tries");
}

mrtr_tests::per_backend!(
    every_bit_flip_is_rejected,
    every_character_change_is_rejected,
    every_truncation_is_rejected,
    garbage_extensions_are_rejected,
    one_character_over_the_buffer_is_too_long_before_decoding,
    non_canonical_text_is_rejected,
    the_standard_alphabet_is_rejected,
);
