//! The argument digest: a retry must carry the arguments the token was sealed with.

use mrtr_core::cipher::Cipher;
use mrtr_core::replay::SharedReplaySet;
use mrtr_core::{ManualClock, Reason};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

fn other_arguments_are_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let token = first(&mrtr, &mut SeqRng::new(1));
    assert_eq!(
        rejected(&mrtr, &token, &call(), &OTHER_ARGS),
        Reason::ArgumentsMismatch
    );
    let mut first_byte = ARGS;
    first_byte[0] ^= 0x80;
    assert_eq!(
        rejected(&mrtr, &token, &call(), &first_byte),
        Reason::ArgumentsMismatch
    );
    assert_eq!(
        rejected(&mrtr, &token, &call(), &[0; 32]),
        Reason::ArgumentsMismatch
    );
    assert!(resume(&mrtr, &token, &call(), &ARGS).is_ok());
}

fn a_wrong_argument_retry_does_not_burn_the_token<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let seen = SharedReplaySet::<8>::new();
    let mrtr = builder::<C, _>(&clock).replay_cache(&seen).build().unwrap();
    let token = first(&mrtr, &mut SeqRng::new(2));

    for _ in 0..3 {
        assert_eq!(
            rejected(&mrtr, &token, &call(), &OTHER_ARGS),
            Reason::ArgumentsMismatch
        );
    }
    assert!(seen.is_empty(), "a rejected retry records nothing");
    assert!(resume(&mrtr, &token, &call(), &ARGS).is_ok());
    assert_eq!(seen.len(), 1);
    assert_eq!(rejected(&mrtr, &token, &call(), &ARGS), Reason::Replayed);
    // Once used, a wrong-argument retry still reports the argument mismatch (it is checked
    // first) and records nothing more.
    assert_eq!(
        rejected(&mrtr, &token, &call(), &OTHER_ARGS),
        Reason::ArgumentsMismatch
    );
    assert_eq!(seen.len(), 1);
}

mrtr_tests::per_backend!(
    other_arguments_are_rejected,
    a_wrong_argument_retry_does_not_burn_the_token,
);
