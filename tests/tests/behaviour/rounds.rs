//! The round cap: `max_rounds` handler invocations per chain (default 10: the call plus 9
//! resumes). The last invocation cannot pause (no dead token is issued), and a token beyond
//! the cap is refused.

use mrtr_core::cipher::Cipher;
use mrtr_core::{DEFAULT_MAX_ROUNDS, ManualClock, Reason, Round, SealError, TokenBuf};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

/// Runs a chain in which every invocation pauses again, until a pause is refused. Returns
/// how many resumes passed and how the last pause ended.
fn run_chain<C: Cipher>(max_rounds: Option<u32>) -> (u32, SealError) {
    let clock = ManualClock::new(NOW);
    let builder = builder::<C, _>(&clock);
    let mrtr = match max_rounds {
        Some(n) => builder.max_rounds(n).build().unwrap(),
        None => builder.build().unwrap(),
    };
    let mut rng = SeqRng::new(u64::from(max_rounds.unwrap_or(0)));
    let mut round = Round::FIRST;
    let mut resumes = 0;
    loop {
        let mut out = Buf::new();
        let token = match mrtr.pause(round, &call(), &ARGS, b"n", &mut rng, &mut out) {
            Ok(sealed) => sealed.as_str().to_owned(),
            Err(e) => {
                assert!(out.is_wiped(), "a refused pause leaves nothing behind");
                return (resumes, e);
            }
        };
        // Every token that is issued resumes.
        let opened = resume(&mrtr, &token, &call(), &ARGS).expect("an issued token resumes");
        resumes += 1;
        assert_eq!(opened.round, resumes, "sealed round counts the pauses");
        assert!(resumes < 1_000, "the cap never triggered");
        round = opened.next_round;
    }
}

fn default_cap_is_the_call_plus_nine_resumes<C: Cipher>() {
    assert_eq!(DEFAULT_MAX_ROUNDS, 10);
    assert_eq!(run_chain::<C>(None), (9, SealError::RoundsExhausted));
}

fn max_rounds_one_allows_no_resume<C: Cipher>() {
    assert_eq!(run_chain::<C>(Some(1)), (0, SealError::RoundsExhausted));
}

fn the_cap_is_exact_for_small_values<C: Cipher>() {
    for max in 2..=5 {
        assert_eq!(
            run_chain::<C>(Some(max)),
            (max - 1, SealError::RoundsExhausted),
            "{max}"
        );
    }
}

fn pausing_at_the_cap_issues_no_token<C: Cipher>() {
    // The token of round 2 resumes invocation 3, the last one with max_rounds 3: pausing
    // there would seal a round-3 token that no engine with this cap could resume.
    let clock = ManualClock::new(NOW);
    let mrtr = builder::<C, _>(&clock).max_rounds(3).build().unwrap();
    let mut rng = SeqRng::new(42);
    let t1 = first(&mrtr, &mut rng);
    let r2 = resume(&mrtr, &t1, &call(), &ARGS).unwrap().next_round;
    let t2 = seal(&mrtr, r2, &call(), &ARGS, b"", &mut rng);
    let r3 = resume(&mrtr, &t2, &call(), &ARGS).unwrap().next_round;
    assert_eq!(r3.get(), 3);
    let mut out: TokenBuf<256> = TokenBuf::new();
    let refused = mrtr.pause(r3, &call(), &ARGS, b"", &mut rng, &mut out);
    assert_eq!(refused.map(|_| ()), Err(SealError::RoundsExhausted));
    // A refused pause takes nothing from the key's seal budget.
    assert_eq!(mrtr.keys().current().seals_used(), 2);
}

fn the_tenth_resume_is_refused_even_with_valid_everything_else<C: Cipher>() {
    // Build a round-10 token and check it against engines with other caps: the cap is the
    // resuming engine's, and only the round decides.
    let clock = ManualClock::new(NOW);
    let lax = builder::<C, _>(&clock).max_rounds(11).build().unwrap();
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
    pausing_at_the_cap_issues_no_token,
    the_tenth_resume_is_refused_even_with_valid_everything_else,
);
