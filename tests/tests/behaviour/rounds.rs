//! The round cap: `max_rounds` handler invocations per chain (default 10: the call plus 9
//! resumes), then refused.

use mrtr_core::cipher::Cipher;
use mrtr_core::{DEFAULT_MAX_ROUNDS, ManualClock, Mrtr, Reason, Round};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

/// Runs a chain in which every invocation pauses again, until a resume is refused. Returns
/// how many resumes passed and the refusal.
fn run_chain<C: Cipher>(max_rounds: Option<u32>) -> (u32, Reason) {
    let clock = ManualClock::new(NOW);
    let builder = Mrtr::builder(ring::<C>(), &clock);
    let mrtr = match max_rounds {
        Some(n) => builder.max_rounds(n).build().unwrap(),
        None => builder.build().unwrap(),
    };
    let mut rng = SeqRng::new(u64::from(max_rounds.unwrap_or(0)));
    // Invocation 1: the initial call pauses.
    let mut token = seal(&mrtr, Round::FIRST, &call(), &ARGS, b"0", &mut rng);
    let mut resumes = 0;
    loop {
        match resume(&mrtr, &token, &call(), &ARGS) {
            Ok(opened) => {
                resumes += 1;
                assert_eq!(opened.round, resumes, "sealed round counts the pauses");
                assert!(resumes < 1_000, "the cap never triggered");
                token = seal(&mrtr, opened.next_round, &call(), &ARGS, b"n", &mut rng);
            }
            Err(rejection) => return (resumes, rejection.reason()),
        }
    }
}

fn default_cap_is_the_call_plus_nine_resumes<C: Cipher>() {
    assert_eq!(DEFAULT_MAX_ROUNDS, 10);
    assert_eq!(run_chain::<C>(None), (9, Reason::RoundsExceeded));
}

fn max_rounds_one_allows_no_resume<C: Cipher>() {
    assert_eq!(run_chain::<C>(Some(1)), (0, Reason::RoundsExceeded));
}

fn the_cap_is_exact_for_small_values<C: Cipher>() {
    for max in 2..=5 {
        assert_eq!(
            run_chain::<C>(Some(max)),
            (max - 1, Reason::RoundsExceeded),
            "{max}"
        );
    }
}

fn the_tenth_resume_is_refused_even_with_valid_everything_else<C: Cipher>() {
    // Build a round-10 token and check it against engines with other caps: the cap is the
    // resuming engine's, and only the round decides.
    let clock = ManualClock::new(NOW);
    let lax = Mrtr::builder(ring::<C>(), &clock)
        .max_rounds(11)
        .build()
        .unwrap();
    let strict = engine::<C, _>(&clock);
    let mut rng = SeqRng::new(99);
    let mut token = first(&lax, &mut rng);
    for _ in 1..10 {
        let next = resume(&lax, &token, &call(), &ARGS).unwrap().next_round;
        token = seal(&lax, next, &call(), &ARGS, b"", &mut rng);
    }
    assert_eq!(resume(&lax, &token, &call(), &ARGS).unwrap().round, 10);
    assert_eq!(
        rejected(&strict, &token, &call(), &ARGS),
        Reason::RoundsExceeded
    );
}

mrtr_tests::per_backend!(
    default_cap_is_the_call_plus_nine_resumes,
    max_rounds_one_allows_no_resume,
    the_cap_is_exact_for_small_values,
    the_tenth_resume_is_refused_even_with_valid_everything_else,
);
