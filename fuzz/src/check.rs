//! Runs a resume the way a server would, and asserts what must hold for every input.

use mrtr_core::replay::SharedReplaySet;
use mrtr_core::{ErrorDetail, Reason, Rejection, Resumed};
use mrtr_core::{INVALID_PARAMS, REJECTION_MESSAGE, UNIFORM_REASON};

use crate::expect;
use crate::fixture::{self, ARGS, MAX_LIFETIME_MS, MAX_ROUNDS, MAX_SKEW_MS, NOW_MS};
use crate::format::{self, State};

/// What a resume returned, reduced to comparable values.
pub type Outcome = Result<State, Reason>;

fn opened(r: &Resumed<'_>) -> State {
    State {
        round: r.round(),
        issued_at: r.issued_at_ms(),
        expires_at: r.expires_at_ms(),
        token_id: r.token_id(),
        args: ARGS,
        method: r.method().to_owned(),
        continuation: r.continuation().to_vec(),
    }
}

fn rejected(e: Rejection, detail: ErrorDetail) -> Reason {
    let wire = e.wire();
    assert_eq!(wire.code, INVALID_PARAMS);
    assert_eq!(wire.message, REJECTION_MESSAGE);
    match detail {
        ErrorDetail::Uniform => assert_eq!(wire.reason, UNIFORM_REASON, "uniform mode leaks"),
        ErrorDetail::Detailed => assert_eq!(wire.reason, e.reason().as_str()),
    }
    e.reason()
}

/// Resumes `text` in uniform and detailed mode and with a replay set, asserts they agree and
/// that an accepted token satisfies every check, and returns the outcome.
pub fn resume_text(text: &str) -> Outcome {
    let binding = fixture::binding();
    let mut outcomes = [ErrorDetail::Uniform, ErrorDetail::Detailed].map(|detail| {
        let engine = fixture::engine(detail);
        let mut buf = fixture::buf();
        match engine.resume(text, &binding, &ARGS, &mut buf) {
            Ok(r) => Ok(opened(&r)),
            Err(e) => {
                assert!(
                    buf.is_wiped(),
                    "{:?}: the token buffer was not wiped",
                    e.reason()
                );
                Err(rejected(e, detail))
            }
        }
    });
    assert_eq!(outcomes[0], outcomes[1], "detail mode changed the outcome");
    let outcome = core::mem::replace(&mut outcomes[0], Err(Reason::InvalidBinding));

    if let Ok(state) = &outcome {
        assert_eq!(state.method, binding.method());
        assert!(state.expires_at > NOW_MS, "accepted an expired token");
        assert!(
            state.expires_at - state.issued_at <= MAX_LIFETIME_MS,
            "accepted a token longer-lived than the maximum"
        );
        assert!(
            state.issued_at <= NOW_MS + MAX_SKEW_MS,
            "accepted a token issued too far ahead"
        );
        assert!(
            state.round >= 1 && state.round < MAX_ROUNDS,
            "round cap bypassed"
        );
        assert!(state.issued_at <= state.expires_at);
        // The buffer bounds the token, not the continuation: with a method and key id shorter
        // than their maximum, a continuation a little over MAX_CONTINUATION fits.
        assert!(
            text.len() <= fixture::N,
            "accepted a token longer than the buffer"
        );
    }

    // With v1 turned off, a v1 token is refused as retired, decided from its header alone;
    // everything else gets the same answer.
    let mut buf = fixture::buf();
    let off = fixture::engine_v1_off()
        .resume(text, &binding, &ARGS, &mut buf)
        .map(|r| opened(&r))
        .map_err(|e| e.reason());
    let retired = format::decode(text)
        .and_then(|bytes| expect::before_aead_with(&bytes, text.len(), false))
        == Some(Reason::VersionRetired);
    if retired {
        assert_eq!(off, Err(Reason::VersionRetired), "v1 not retired");
    } else {
        assert_eq!(off, outcome, "turning v1 off changed a non-v1 outcome");
    }

    // Single use: an accepted token is accepted once, then refused as a replay.
    let seen = SharedReplaySet::<4>::new();
    let engine = fixture::engine_single_use(&seen);
    let mut buf = fixture::buf();
    let first = engine
        .resume(text, &binding, &ARGS, &mut buf)
        .map(|r| opened(&r));
    assert_eq!(
        first.as_ref().map_err(|e| e.reason()),
        outcome.as_ref().map_err(|r| *r)
    );
    let mut buf = fixture::buf();
    let again = engine.resume(text, &binding, &ARGS, &mut buf).map(|_| ());
    assert_eq!(
        again.is_err(),
        buf.is_wiped(),
        "wiped exactly when rejected"
    );
    match &outcome {
        Ok(_) => assert_eq!(again.map_err(|e| e.reason()), Err(Reason::Replayed)),
        Err(r) => assert_eq!(again.map_err(|e| e.reason()), Err(*r)),
    }
    outcome
}
