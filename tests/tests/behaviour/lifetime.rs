//! Bounded lifetime, on manual clocks: a token is refused when its sealed lifetime
//! (`expires − issued`) exceeds the maximum lifetime, and when it was issued more than the
//! allowed skew after the verifier's now. Each edge is tested at the limit and one ms over.

use mrtr_core::cipher::Cipher;
use mrtr_core::{
    Codec, ConfigError, DEFAULT_MAX_CLOCK_SKEW_MS, DEFAULT_TTL_MS, ManualClock, Reason,
};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

/// A node of the service with its own clock and TTL: seals a first-round token for [`call`].
fn sealed_by<C: Cipher>(now: u64, ttl_ms: u64, seed: u64) -> String {
    let clock = ManualClock::new(now);
    let node = builder::<C, _>(&clock).ttl_ms(ttl_ms).build().unwrap();
    first(&node, &mut SeqRng::new(seed))
}

fn defaults_are_the_ttl_and_sixty_seconds<C: Cipher>() {
    assert_eq!(DEFAULT_MAX_CLOCK_SKEW_MS, 60_000);
    let clock = ManualClock::new(NOW);
    let m = engine::<C, _>(&clock);
    assert_eq!(
        (m.max_lifetime_ms(), m.max_clock_skew_ms()),
        (DEFAULT_TTL_MS, 60_000)
    );
    let m = builder::<C, _>(&clock).ttl_ms(1_000).build().unwrap();
    assert_eq!(m.max_lifetime_ms(), 1_000, "the default follows the TTL");
}

fn a_lifetime_at_the_maximum_opens_one_ms_over_is_refused<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let verifier = builder::<C, _>(&clock)
        .ttl_ms(10_000)
        .max_lifetime_ms(20_000)
        .build()
        .unwrap();
    let at = sealed_by::<C>(NOW, 20_000, 1);
    let over = sealed_by::<C>(NOW, 20_001, 2);
    assert_eq!(
        resume(&verifier, &at, &call(), &ARGS)
            .unwrap()
            .expires_at_ms,
        NOW + 20_000
    );
    assert_eq!(
        rejected(&verifier, &over, &call(), &ARGS),
        Reason::LifetimeExceeded
    );
}

fn by_default_a_token_may_not_outlive_the_ttl<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let verifier = engine::<C, _>(&clock);
    let at = sealed_by::<C>(NOW, DEFAULT_TTL_MS, 3);
    let over = sealed_by::<C>(NOW, DEFAULT_TTL_MS + 1, 4);
    assert!(resume(&verifier, &at, &call(), &ARGS).is_ok());
    assert_eq!(
        rejected(&verifier, &over, &call(), &ARGS),
        Reason::LifetimeExceeded
    );
}

fn lowering_the_ttl_refuses_tokens_issued_under_the_old_one<C: Cipher>() {
    // Issued under a 5-minute TTL; the service restarts with 1 minute.
    let old = sealed_by::<C>(NOW, DEFAULT_TTL_MS, 5);
    let clock = ManualClock::new(NOW + 1_000);
    let lowered = builder::<C, _>(&clock).ttl_ms(60_000).build().unwrap();
    assert_eq!(
        rejected(&lowered, &old, &call(), &ARGS),
        Reason::LifetimeExceeded
    );
    // Unless the operator keeps the old maximum for one old TTL, on purpose.
    let transition = builder::<C, _>(&clock)
        .ttl_ms(60_000)
        .max_lifetime_ms(DEFAULT_TTL_MS)
        .build()
        .unwrap();
    assert!(resume(&transition, &old, &call(), &ARGS).is_ok());
    // Its own new tokens are short either way.
    let new = first(&transition, &mut SeqRng::new(6));
    assert_eq!(
        resume(&lowered, &new, &call(), &ARGS)
            .unwrap()
            .expires_at_ms,
        NOW + 1_000 + 60_000
    );
}

fn issued_at_now_plus_the_skew_opens_one_ms_later_is_refused<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let verifier = engine::<C, _>(&clock);
    let at = sealed_by::<C>(NOW + 60_000, DEFAULT_TTL_MS, 7);
    let over = sealed_by::<C>(NOW + 60_001, DEFAULT_TTL_MS, 8);
    assert_eq!(
        resume(&verifier, &at, &call(), &ARGS).unwrap().issued_at_ms,
        NOW + 60_000
    );
    assert_eq!(
        rejected(&verifier, &over, &call(), &ARGS),
        Reason::IssuedInFuture
    );
    // Once the verifier's clock has caught up, the same token opens.
    clock.set(NOW + 1);
    assert!(resume(&verifier, &over, &call(), &ARGS).is_ok());
}

fn a_custom_skew_moves_the_edge<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let strict = builder::<C, _>(&clock)
        .max_clock_skew_ms(0)
        .build()
        .unwrap();
    assert_eq!(strict.max_clock_skew_ms(), 0);
    let now = sealed_by::<C>(NOW, DEFAULT_TTL_MS, 9);
    let ahead = sealed_by::<C>(NOW + 1, DEFAULT_TTL_MS, 10);
    assert!(resume(&strict, &now, &call(), &ARGS).is_ok());
    assert_eq!(
        rejected(&strict, &ahead, &call(), &ARGS),
        Reason::IssuedInFuture
    );
    // The widest skew never overflows.
    let lax = builder::<C, _>(&clock)
        .max_clock_skew_ms(u64::MAX)
        .build()
        .unwrap();
    let far = sealed_by::<C>(NOW + 86_400_000, DEFAULT_TTL_MS, 11);
    assert!(resume(&lax, &far, &call(), &ARGS).is_ok());
}

fn no_token_lives_longer_than_the_lifetime_plus_the_skew<C: Cipher>() {
    // A node whose clock runs 60 s ahead (the most the verifier allows) seals with the full
    // TTL: on the verifier's clock the token lives TTL + 60 s, and not a millisecond more.
    let clock = ManualClock::new(NOW);
    let verifier = engine::<C, _>(&clock);
    let fast = sealed_by::<C>(NOW + DEFAULT_MAX_CLOCK_SKEW_MS, DEFAULT_TTL_MS, 12);
    let bound = NOW + DEFAULT_TTL_MS + DEFAULT_MAX_CLOCK_SKEW_MS;
    clock.set(bound - 1);
    assert!(resume(&verifier, &fast, &call(), &ARGS).is_ok());
    clock.set(bound);
    assert_eq!(rejected(&verifier, &fast, &call(), &ARGS), Reason::Expired);
}

fn expiry_beats_lifetime_and_lifetime_beats_the_rest<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let verifier = engine::<C, _>(&clock);
    // Too long and expired: expired.
    let long = sealed_by::<C>(NOW, DEFAULT_TTL_MS + 1, 13);
    clock.set(NOW + DEFAULT_TTL_MS + 1);
    assert_eq!(rejected(&verifier, &long, &call(), &ARGS), Reason::Expired);
    // Too long and issued in the future: lifetime first.
    clock.set(NOW);
    let both = sealed_by::<C>(NOW + 60_001, DEFAULT_TTL_MS + 1, 14);
    assert_eq!(
        rejected(&verifier, &both, &call(), &ARGS),
        Reason::LifetimeExceeded
    );
    // Issued in the future and other arguments: the skew check runs first.
    let ahead = sealed_by::<C>(NOW + 60_001, DEFAULT_TTL_MS, 15);
    assert_eq!(
        rejected(&verifier, &ahead, &call(), &OTHER_ARGS),
        Reason::IssuedInFuture
    );
}

fn a_maximum_below_the_ttl_is_refused<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let err = Codec::builder(ring::<C>(), &clock)
        .without_audience()
        .ttl_ms(10_000)
        .max_lifetime_ms(9_999)
        .build()
        .unwrap_err();
    assert_eq!(err, ConfigError::LifetimeBelowTtl);
    assert!(err.to_string().contains("lifetime"), "{err}");
    let m = builder::<C, _>(&clock)
        .ttl_ms(10_000)
        .max_lifetime_ms(10_000)
        .build()
        .unwrap();
    assert_eq!(m.max_lifetime_ms(), 10_000);
    let m = builder::<C, _>(&clock)
        .max_lifetime_ms(u64::MAX)
        .build()
        .unwrap();
    assert_eq!(m.max_lifetime_ms(), u64::MAX);
}

mrtr_tests::per_backend!(
    defaults_are_the_ttl_and_sixty_seconds,
    a_lifetime_at_the_maximum_opens_one_ms_over_is_refused,
    by_default_a_token_may_not_outlive_the_ttl,
    lowering_the_ttl_refuses_tokens_issued_under_the_old_one,
    issued_at_now_plus_the_skew_opens_one_ms_later_is_refused,
    a_custom_skew_moves_the_edge,
    no_token_lives_longer_than_the_lifetime_plus_the_skew,
    expiry_beats_lifetime_and_lifetime_beats_the_rest,
    a_maximum_below_the_ttl_is_refused,
);
