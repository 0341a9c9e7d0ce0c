//! Configuration: defaults, and invalid values refused with clear errors.

use mrtr_core::cipher::Cipher;
use mrtr_core::{ConfigError, DEFAULT_MAX_ROUNDS, DEFAULT_TTL_MS, ErrorDetail, ManualClock};
use mrtr_tests::fixture::*;

fn defaults_are_five_minutes_and_ten_rounds<C: Cipher>() {
    assert_eq!((DEFAULT_TTL_MS, DEFAULT_MAX_ROUNDS), (300_000, 10));
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    assert_eq!(mrtr.ttl_ms(), 300_000);
    assert_eq!(mrtr.max_rounds(), 10);
    assert_eq!(mrtr.error_detail(), ErrorDetail::Uniform);
    assert_eq!(mrtr.keys().algorithm(), C::ALGORITHM);
}

fn zero_ttl_is_refused<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let err = builder::<C, _>(&clock).ttl_ms(0).build().unwrap_err();
    assert_eq!(err, ConfigError::ZeroTtl);
    assert!(err.to_string().contains("ttl"), "{err}");
}

fn zero_max_rounds_is_refused<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let err = builder::<C, _>(&clock).max_rounds(0).build().unwrap_err();
    assert_eq!(err, ConfigError::ZeroMaxRounds);
    assert!(err.to_string().contains("max rounds"), "{err}");
}

fn smallest_and_largest_values_are_accepted<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let m = builder::<C, _>(&clock)
        .ttl_ms(1)
        .max_rounds(1)
        .build()
        .unwrap();
    assert_eq!((m.ttl_ms(), m.max_rounds()), (1, 1));
    let m = builder::<C, _>(&clock)
        .ttl_ms(u64::MAX)
        .max_rounds(u32::MAX)
        .error_detail(ErrorDetail::Detailed)
        .build()
        .unwrap();
    assert_eq!((m.ttl_ms(), m.max_rounds()), (u64::MAX, u32::MAX));
    assert_eq!(m.error_detail(), ErrorDetail::Detailed);
}

mrtr_tests::per_backend!(
    defaults_are_five_minutes_and_ten_rounds,
    zero_ttl_is_refused,
    zero_max_rounds_is_refused,
    smallest_and_largest_values_are_accepted,
);
