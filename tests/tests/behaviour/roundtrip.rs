//! Seal → resume round trips.

use mrtr_core::cipher::Cipher;
use mrtr_core::{Clock, DEFAULT_TTL_MS, ManualClock, Round, TokenBuf, token_len_for};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

fn resume_returns_the_sealed_state<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let mut out = Buf::new();
    let mut rng = SeqRng::new(1);
    let sealed = mrtr
        .pause(
            Round::FIRST,
            &call(),
            &ARGS,
            b"step=date",
            &mut rng,
            &mut out,
        )
        .unwrap();
    assert_eq!(sealed.round(), Round::FIRST);
    assert_eq!(sealed.expires_at_ms(), NOW + DEFAULT_TTL_MS);
    let token = sealed.as_str().to_owned();
    let id = sealed.token_id();

    let opened = resume(&mrtr, &token, &call(), &ARGS).unwrap();
    assert_eq!(opened.continuation, b"step=date");
    assert_eq!(opened.round, 1);
    assert_eq!(opened.next_round.get(), 2);
    assert_eq!(opened.method, "tools/call");
    assert_eq!(opened.issued_at_ms, NOW);
    assert_eq!(opened.expires_at_ms, NOW + DEFAULT_TTL_MS);
    assert_eq!(opened.token_id, id);
}

fn token_is_base64url_with_an_authentic_header<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let token = first(&engine::<C, _>(&clock), &mut SeqRng::new(2));
    assert!(
        token
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
    );
    // Format v2 by default: the audience is in the associated data, not in the token.
    assert_eq!(header(&token), (2, C::ALGORITHM.id(), b"k1".to_vec()));
    let len = token_bytes(2, C::ALGORITHM.nonce_len(), "tools/call".len(), 9);
    assert_eq!(mrtr_tests::b64::decode(&token).unwrap().len(), len);
}

fn tokens_are_multi_use_without_a_replay_cache<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let token = first(&mrtr, &mut SeqRng::new(3));
    for _ in 0..3 {
        assert_eq!(resume(&mrtr, &token, &call(), &ARGS).unwrap().round, 1);
        clock.advance(1_000);
    }
}

fn every_pause_draws_a_fresh_token_id_and_nonce<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let mut rng = SeqRng::new(4);
    let a = first(&mrtr, &mut rng);
    let b = first(&mrtr, &mut rng);
    assert_ne!(a, b);
    let (ia, ib) = (
        resume(&mrtr, &a, &call(), &ARGS).unwrap().token_id,
        resume(&mrtr, &b, &call(), &ARGS).unwrap().token_id,
    );
    assert_ne!(ia, ib);
}

fn pausing_a_resumed_call_advances_the_round<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let mut rng = SeqRng::new(5);
    let mut token = first(&mrtr, &mut rng);
    let mut ids = Vec::new();
    for round in 1..=4u32 {
        let opened = resume(&mrtr, &token, &call(), &ARGS).unwrap();
        assert_eq!(opened.round, round);
        assert_eq!(opened.issued_at_ms, clock.now_ms());
        assert_eq!(
            opened.expires_at_ms,
            clock.now_ms() + DEFAULT_TTL_MS,
            "fresh expiry"
        );
        ids.push(opened.token_id);
        clock.advance(60_000);
        let next = format!("step={}", round + 1);
        token = seal(
            &mrtr,
            opened.next_round,
            &call(),
            &ARGS,
            next.as_bytes(),
            &mut rng,
        );
    }
    let last = resume(&mrtr, &token, &call(), &ARGS).unwrap();
    assert_eq!(
        (last.round, last.continuation.as_slice()),
        (5, &b"step=5"[..])
    );
    ids.push(last.token_id);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 5, "every pause has its own token id");
}

fn empty_and_binary_continuations_round_trip<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let mut rng = SeqRng::new(6);
    let all: Vec<u8> = (0..=255).collect();
    for cont in [&b""[..], &[0u8][..], &[0u8; 3][..], &all[..]] {
        let token = seal(&mrtr, Round::FIRST, &call(), &ARGS, cont, &mut rng);
        assert_eq!(
            resume(&mrtr, &token, &call(), &ARGS).unwrap().continuation,
            cont
        );
    }
}

/// `token_len_for(c)` holds the longest token for a `c`-byte continuation: longest key id,
/// method and (for XChaCha20) nonce.
fn token_len_for_fits_the_largest_token<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let ring = mrtr_core::key::KeyRing::<C, 1>::new(key("sixteen-chars-id", 9));
    let mrtr = mrtr_core::Codec::builder(ring, &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    let method = "m".repeat(32);
    let b = bind(&method, VERSION, "t", ALICE);
    let cont = [7u8; 256];
    let mut out: TokenBuf<{ token_len_for(256) }> = TokenBuf::new();
    let text = mrtr
        .pause(
            Round::FIRST,
            &b,
            &ARGS,
            &cont,
            &mut SeqRng::new(7),
            &mut out,
        )
        .unwrap()
        .as_str()
        .to_owned();
    let bytes = token_bytes(16, C::ALGORITHM.nonce_len(), 32, 256);
    assert_eq!(text.len(), mrtr_core::b64::encoded_len(bytes));
    if C::ALGORITHM.nonce_len() == 24 {
        assert_eq!(
            text.len(),
            token_len_for(256),
            "the largest token fills the buffer"
        );
    }
    let mut buf: TokenBuf<{ token_len_for(256) }> = TokenBuf::new();
    let resumed = mrtr.resume(&text, &b, &ARGS, &mut buf).unwrap();
    assert_eq!(resumed.continuation(), &cont[..]);
    assert_eq!(resumed.method(), method);
}

fn the_largest_continuation_round_trips<C: Cipher>() {
    const BIG: usize = token_len_for(u16::MAX as usize);
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let cont: Vec<u8> = (0..u16::MAX as usize).map(|i| i as u8).collect();
    let mut out = Box::new(TokenBuf::<BIG>::new());
    let mut rng = SeqRng::new(8);
    let token = mrtr
        .pause(Round::FIRST, &call(), &ARGS, &cont, &mut rng, &mut out)
        .unwrap()
        .as_str()
        .to_owned();
    let mut buf = Box::new(TokenBuf::<BIG>::new());
    let resumed = mrtr.resume(&token, &call(), &ARGS, &mut buf).unwrap();
    assert_eq!(resumed.continuation(), &cont[..]);
    // One byte more no longer fits the u16 length field, whatever the buffer.
    let more = vec![0u8; u16::MAX as usize + 1];
    let mut out = Box::new(TokenBuf::<{ BIG + 64 }>::new());
    let err = mrtr.pause(Round::FIRST, &call(), &ARGS, &more, &mut rng, &mut out);
    assert_eq!(err.unwrap_err(), mrtr_core::SealError::TooLarge);
}

fn methods_without_a_target_round_trip<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let b = bind("custom/op", VERSION, "", ALICE);
    let token = seal(&mrtr, Round::FIRST, &b, &ARGS, b"x", &mut SeqRng::new(9));
    assert_eq!(
        resume(&mrtr, &token, &b, &ARGS).unwrap().method,
        "custom/op"
    );
}

mrtr_tests::per_backend!(
    resume_returns_the_sealed_state,
    token_is_base64url_with_an_authentic_header,
    tokens_are_multi_use_without_a_replay_cache,
    every_pause_draws_a_fresh_token_id_and_nonce,
    pausing_a_resumed_call_advances_the_round,
    empty_and_binary_continuations_round_trip,
    token_len_for_fits_the_largest_token,
    the_largest_continuation_round_trips,
    methods_without_a_target_round_trip,
);
