//! The resume checks run in the documented order, and the first failure wins:
//! length → unseal (binding, key) → expiry → round cap → argument digest → replay cache.

use mrtr_core::cipher::Cipher;
use mrtr_core::key::KeyRing;
use mrtr_core::replay::SharedReplaySet;
use mrtr_core::{Codec, DEFAULT_TTL_MS, ManualClock, Principal, Reason, Round, TokenBuf};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

fn expiry_beats_argument_mismatch<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let token = first(&mrtr, &mut SeqRng::new(1));
    clock.advance(DEFAULT_TTL_MS);
    assert_eq!(
        rejected(&mrtr, &token, &call(), &OTHER_ARGS),
        Reason::Expired
    );
}

/// A token sealed in round `max` (the cap), from an engine allowing more.
fn token_at_cap<C: Cipher>(clock: &ManualClock, max: u32) -> String {
    let lax = builder::<C, _>(clock).max_rounds(max + 1).build().unwrap();
    let mut rng = SeqRng::new(2);
    let mut token = seal(&lax, Round::FIRST, &call(), &ARGS, b"", &mut rng);
    for _ in 1..max {
        let next = resume(&lax, &token, &call(), &ARGS).unwrap().next_round;
        token = seal(&lax, next, &call(), &ARGS, b"", &mut rng);
    }
    token
}

fn round_cap_beats_argument_mismatch<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let token = token_at_cap::<C>(&clock, 2);
    let strict = builder::<C, _>(&clock).max_rounds(2).build().unwrap();
    assert_eq!(
        rejected(&strict, &token, &call(), &OTHER_ARGS),
        Reason::RoundsExceeded
    );
    assert_eq!(
        rejected(&strict, &token, &call(), &ARGS),
        Reason::RoundsExceeded
    );
}

fn expiry_beats_round_cap<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let token = token_at_cap::<C>(&clock, 2);
    let strict = builder::<C, _>(&clock).max_rounds(2).build().unwrap();
    clock.advance(DEFAULT_TTL_MS);
    assert_eq!(
        rejected(&strict, &token, &call(), &OTHER_ARGS),
        Reason::Expired
    );
}

fn unseal_beats_expiry_and_everything_after<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = builder::<C, _>(&clock).max_rounds(1).build().unwrap();
    // Sealed by a node with the default cap (this one cannot pause at all with a cap of 1).
    let token = first(&engine::<C, _>(&clock), &mut SeqRng::new(3));
    clock.advance(DEFAULT_TTL_MS);
    let bob = bind("tools/call", VERSION, "book_table", Principal::Anonymous);
    assert_eq!(rejected(&mrtr, &token, &bob, &OTHER_ARGS), Reason::Tampered);
    let other = Codec::builder(KeyRing::<C, 4>::new(key("k9", 1)), &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    assert_eq!(
        rejected(&other, &token, &call(), &OTHER_ARGS),
        Reason::UnknownKey
    );
}

fn length_beats_everything<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let token = first(&mrtr, &mut SeqRng::new(4));
    let mut small: TokenBuf<16> = TokenBuf::new();
    let err = mrtr.resume(&token, &call(), &ARGS, &mut small).unwrap_err();
    assert_eq!(err.reason(), Reason::TooLong);
}

fn arguments_and_expiry_beat_the_replay_cache<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let seen = SharedReplaySet::<4>::new();
    let mrtr = builder::<C, _>(&clock).replay_cache(&seen).build().unwrap();
    let token = first(&mrtr, &mut SeqRng::new(5));
    assert!(resume(&mrtr, &token, &call(), &ARGS).is_ok());
    assert_eq!(rejected(&mrtr, &token, &call(), &ARGS), Reason::Replayed);
    assert_eq!(
        rejected(&mrtr, &token, &call(), &OTHER_ARGS),
        Reason::ArgumentsMismatch
    );
    clock.advance(DEFAULT_TTL_MS);
    assert_eq!(rejected(&mrtr, &token, &call(), &ARGS), Reason::Expired);
}

mrtr_tests::per_backend!(
    expiry_beats_argument_mismatch,
    round_cap_beats_argument_mismatch,
    expiry_beats_round_cap,
    unseal_beats_expiry_and_everything_after,
    length_beats_everything,
    arguments_and_expiry_beat_the_replay_cache,
);
