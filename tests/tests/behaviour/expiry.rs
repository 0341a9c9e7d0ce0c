//! Expiry on a manual clock: `expires_at <= now` rejects. No sleeping.

use mrtr_core::cipher::Cipher;
use mrtr_core::{DEFAULT_TTL_MS, ManualClock, Reason, Round, SealError};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

fn one_ms_before_expiry_is_accepted<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let token = first(&mrtr, &mut SeqRng::new(1));
    clock.set(NOW + DEFAULT_TTL_MS - 1);
    assert!(resume(&mrtr, &token, &call(), &ARGS).is_ok());
}

fn exactly_at_expiry_is_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let token = first(&mrtr, &mut SeqRng::new(2));
    clock.set(NOW + DEFAULT_TTL_MS);
    assert_eq!(rejected(&mrtr, &token, &call(), &ARGS), Reason::Expired);
    clock.set(NOW + DEFAULT_TTL_MS + 86_400_000);
    assert_eq!(rejected(&mrtr, &token, &call(), &ARGS), Reason::Expired);
    clock.set(u64::MAX);
    assert_eq!(rejected(&mrtr, &token, &call(), &ARGS), Reason::Expired);
}

fn a_custom_ttl_sets_the_expiry<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = builder::<C, _>(&clock).ttl_ms(1).build().unwrap();
    let token = first(&mrtr, &mut SeqRng::new(3));
    let opened = resume(&mrtr, &token, &call(), &ARGS).unwrap();
    assert_eq!((opened.issued_at_ms, opened.expires_at_ms), (NOW, NOW + 1));
    clock.advance(1);
    assert_eq!(rejected(&mrtr, &token, &call(), &ARGS), Reason::Expired);
}

fn expiry_is_checked_against_the_clock_at_resume<C: Cipher>() {
    // The token carries its own expiry: an engine with a longer TTL does not stretch it.
    let clock = ManualClock::new(NOW);
    let short = builder::<C, _>(&clock).ttl_ms(1_000).build().unwrap();
    let long = builder::<C, _>(&clock)
        .ttl_ms(DEFAULT_TTL_MS)
        .build()
        .unwrap();
    let token = first(&short, &mut SeqRng::new(4));
    clock.advance(999);
    assert!(resume(&long, &token, &call(), &ARGS).is_ok());
    clock.advance(1);
    assert_eq!(rejected(&long, &token, &call(), &ARGS), Reason::Expired);
}

fn a_resumed_chain_gets_a_fresh_expiry_each_pause<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = builder::<C, _>(&clock).ttl_ms(10_000).build().unwrap();
    let mut rng = SeqRng::new(5);
    let t1 = first(&mrtr, &mut rng);
    clock.advance(9_000);
    let next = resume(&mrtr, &t1, &call(), &ARGS).unwrap().next_round;
    let t2 = seal(&mrtr, next, &call(), &ARGS, b"", &mut rng);
    clock.advance(9_000);
    assert_eq!(rejected(&mrtr, &t1, &call(), &ARGS), Reason::Expired);
    assert_eq!(
        resume(&mrtr, &t2, &call(), &ARGS).unwrap().expires_at_ms,
        NOW + 19_000
    );
}

fn an_expiry_past_u64_is_a_seal_error<C: Cipher>() {
    let clock = ManualClock::new(u64::MAX - 5);
    let mrtr = builder::<C, _>(&clock).ttl_ms(10).build().unwrap();
    let mut out = Buf::new();
    let err = mrtr.pause(
        Round::FIRST,
        &call(),
        &ARGS,
        b"",
        &mut SeqRng::new(6),
        &mut out,
    );
    assert_eq!(err.unwrap_err(), SealError::ClockOverflow);
    assert_eq!(mrtr.keys().current().seals_used(), 0, "no seal was spent");
    clock.set(u64::MAX - 10);
    assert!(
        mrtr.pause(
            Round::FIRST,
            &call(),
            &ARGS,
            b"",
            &mut SeqRng::new(6),
            &mut out
        )
        .is_ok()
    );
}

mrtr_tests::per_backend!(
    one_ms_before_expiry_is_accepted,
    exactly_at_expiry_is_rejected,
    a_custom_ttl_sets_the_expiry,
    expiry_is_checked_against_the_clock_at_resume,
    a_resumed_chain_gets_a_fresh_expiry_each_pause,
    an_expiry_past_u64_is_a_seal_error,
);
