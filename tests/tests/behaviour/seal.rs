//! Pause failures: the RNG, the buffer size.

use mrtr_core::cipher::Cipher;
use mrtr_core::{ManualClock, Round, SealError, TokenBuf, token_len_for};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::{ReplayRng, SeqRng};

fn a_failing_rng_is_a_seal_error<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let mut out = Buf::new();
    // Fails on the token id.
    let mut none = ReplayRng::new(&[]);
    let err = mrtr.pause(Round::FIRST, &call(), &ARGS, b"", &mut none, &mut out);
    assert_eq!(err.unwrap_err(), SealError::Rng);
    // Yields the token id, fails on the nonce.
    let id_only = [3u8; 16];
    let mut short = ReplayRng::new(&id_only);
    let err = mrtr.pause(Round::FIRST, &call(), &ARGS, b"", &mut short, &mut out);
    assert_eq!(err.unwrap_err(), SealError::Rng);
    // One byte short of the nonce.
    let almost = vec![3u8; 16 + C::ALGORITHM.nonce_len() - 1];
    let mut almost = ReplayRng::new(&almost);
    let err = mrtr.pause(Round::FIRST, &call(), &ARGS, b"", &mut almost, &mut out);
    assert_eq!(err.unwrap_err(), SealError::Rng);
    // Exactly enough bytes.
    let enough = vec![3u8; 16 + C::ALGORITHM.nonce_len()];
    let mut enough = ReplayRng::new(&enough);
    let token = mrtr
        .pause(Round::FIRST, &call(), &ARGS, b"", &mut enough, &mut out)
        .unwrap()
        .as_str()
        .to_owned();
    assert_eq!(enough.remaining(), 0);
    assert!(resume(&mrtr, &token, &call(), &ARGS).is_ok());
    // The engine works on after RNG failures.
    assert!(resume(&mrtr, &first(&mrtr, &mut SeqRng::new(1)), &call(), &ARGS).is_ok());
}

/// The longest continuation whose token fits `N` characters, for [`call`] and key `k1`.
fn max_fitting<C: Cipher>(n: usize) -> usize {
    let fixed = token_bytes(2, C::ALGORITHM.nonce_len(), "tools/call".len(), 0);
    (0..n)
        .take_while(|c| mrtr_core::b64::encoded_len(fixed + c) <= n)
        .last()
        .unwrap()
}

fn a_continuation_too_large_for_the_buffer_is_refused<C: Cipher>() {
    const N: usize = token_len_for(16);
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let mut rng = SeqRng::new(2);
    let fit = max_fitting::<C>(N);
    assert!(fit >= 16, "token_len_for(16) holds a 16-byte continuation");
    let cont = vec![0x5a; fit + 1];
    let mut out: TokenBuf<N> = TokenBuf::new();
    let token = mrtr
        .pause(
            Round::FIRST,
            &call(),
            &ARGS,
            &cont[..fit],
            &mut rng,
            &mut out,
        )
        .unwrap()
        .as_str()
        .to_owned();
    assert!(token.len() <= N);
    let mut buf: TokenBuf<N> = TokenBuf::new();
    let resumed = mrtr.resume(&token, &call(), &ARGS, &mut buf).unwrap();
    assert_eq!(resumed.continuation(), &cont[..fit]);

    let err = mrtr.pause(Round::FIRST, &call(), &ARGS, &cont, &mut rng, &mut out);
    assert_eq!(err.unwrap_err(), SealError::TooLarge);
    let mut tiny: TokenBuf<8> = TokenBuf::new();
    let err = mrtr.pause(Round::FIRST, &call(), &ARGS, b"", &mut rng, &mut tiny);
    assert_eq!(err.unwrap_err(), SealError::TooLarge);
}

fn a_refused_pause_spends_no_seal_or_randomness<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let bytes = [1u8; 64];
    let mut rng = ReplayRng::new(&bytes);
    let mut tiny: TokenBuf<8> = TokenBuf::new();
    let err = mrtr.pause(Round::FIRST, &call(), &ARGS, b"", &mut rng, &mut tiny);
    assert_eq!(err.unwrap_err(), SealError::TooLarge);
    assert_eq!(rng.remaining(), 64);
    assert_eq!(mrtr.keys().current().seals_used(), 0);
}

mrtr_tests::per_backend!(
    a_failing_rng_is_a_seal_error,
    a_continuation_too_large_for_the_buffer_is_refused,
    a_refused_pause_spends_no_seal_or_randomness,
);
