//! What the client sees: one uniform JSON-RPC error by default, the precise reason only in
//! detailed mode, and never a spec-reserved code.

use mrtr_core::cipher::Cipher;
use mrtr_core::key::KeyRing;
use mrtr_core::replay::SharedReplaySet;
use mrtr_core::{
    AcceptV1, Codec, DEFAULT_TTL_MS, ErrorDetail, ManualClock, Principal, Reason, Rejection,
    TokenBuf, TokenFormat, WireError,
};
use mrtr_core::{INVALID_PARAMS, REJECTION_MESSAGE, UNIFORM_REASON};
use mrtr_tests::b64;
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

/// Rewrites header byte `at` of a token.
fn with_header_byte(token: &str, at: usize, value: u8) -> String {
    let mut bytes = b64::decode(token).unwrap();
    bytes[at] = value;
    b64::encode(&bytes)
}

/// Provokes every rejection a client can cause, in `detail` mode: (expected reason, rejection).
fn every_rejection<C: Cipher>(detail: ErrorDetail) -> Vec<(Reason, Rejection)> {
    let clock = ManualClock::new(NOW);
    let seen = SharedReplaySet::<2>::new();
    let mrtr = builder::<C, _>(&clock)
        .max_rounds(1)
        .replay_cache(&seen)
        .error_detail(detail)
        .build()
        .unwrap();
    // A second engine with room for resumes, to reach the replay checks.
    let open = builder::<C, _>(&clock)
        .replay_cache(&seen)
        .error_detail(detail)
        .build()
        .unwrap();
    let other_key = Codec::builder(KeyRing::<C, 4>::new(key("k2", 1)), &clock)
        .audience(AUDIENCE)
        .error_detail(detail)
        .build()
        .unwrap();
    let mut rng = SeqRng::new(1);
    let token = first(&open, &mut rng);
    let anon = bind("tools/call", VERSION, "book_table", Principal::Anonymous);
    let err = |m: &dyn Fn() -> Result<Opened, Rejection>| m().unwrap_err();

    let mut out = Vec::new();
    let mut small: TokenBuf<8> = TokenBuf::new();
    out.push((
        Reason::TooLong,
        mrtr.resume(&token, &call(), &ARGS, &mut small).unwrap_err(),
    ));
    out.push((
        Reason::Malformed,
        err(&|| resume(&mrtr, "not a token!", &call(), &ARGS)),
    ));
    out.push((
        Reason::Malformed,
        err(&|| resume(&mrtr, "", &call(), &ARGS)),
    ));
    let v3 = with_header_byte(&token, 0, 3);
    out.push((
        Reason::UnsupportedVersion,
        err(&|| resume(&mrtr, &v3, &call(), &ARGS)),
    ));
    let alg = with_header_byte(&token, 1, C::ALGORITHM.id() % 3 + 1);
    out.push((
        Reason::WrongAlgorithm,
        err(&|| resume(&mrtr, &alg, &call(), &ARGS)),
    ));
    let retired = builder::<C, _>(&clock)
        .accept_v1(AcceptV1::Never)
        .error_detail(detail)
        .build()
        .unwrap();
    let v1_sealer = builder::<C, _>(&clock)
        .seal_format(TokenFormat::V1)
        .build()
        .unwrap();
    let v1 = first(&v1_sealer, &mut rng);
    out.push((
        Reason::VersionRetired,
        err(&|| resume(&retired, &v1, &call(), &ARGS)),
    ));
    out.push((
        Reason::UnknownKey,
        err(&|| resume(&other_key, &token, &call(), &ARGS)),
    ));
    out.push((
        Reason::Tampered,
        err(&|| resume(&mrtr, &token, &anon, &ARGS)),
    ));
    let long_lived = builder::<C, _>(&clock)
        .ttl_ms(DEFAULT_TTL_MS + 1)
        .build()
        .unwrap();
    let long = first(&long_lived, &mut rng);
    out.push((
        Reason::LifetimeExceeded,
        err(&|| resume(&open, &long, &call(), &ARGS)),
    ));
    let ahead_clock = ManualClock::new(NOW + 60_001);
    let ahead = first(&builder::<C, _>(&ahead_clock).build().unwrap(), &mut rng);
    out.push((
        Reason::IssuedInFuture,
        err(&|| resume(&open, &ahead, &call(), &ARGS)),
    ));
    out.push((
        Reason::RoundsExceeded,
        err(&|| resume(&mrtr, &token, &call(), &ARGS)),
    ));
    out.push((
        Reason::ArgumentsMismatch,
        err(&|| resume(&open, &token, &call(), &OTHER_ARGS)),
    ));
    assert!(resume(&open, &token, &call(), &ARGS).is_ok());
    out.push((
        Reason::Replayed,
        err(&|| resume(&open, &token, &call(), &ARGS)),
    ));
    let t2 = first(&open, &mut rng);
    let t3 = first(&open, &mut rng);
    assert!(resume(&open, &t2, &call(), &ARGS).is_ok());
    out.push((
        Reason::ReplayStoreFull,
        err(&|| resume(&open, &t3, &call(), &ARGS)),
    ));
    clock.advance(DEFAULT_TTL_MS);
    out.push((Reason::Expired, err(&|| resume(&open, &t3, &call(), &ARGS))));
    out
}

fn uniform_mode_shows_one_error_for_every_cause<C: Cipher>() {
    let uniform = WireError {
        code: -32602,
        message: "Invalid or expired requestState",
        reason: "invalid_request_state",
    };
    for (expected, rejection) in every_rejection::<C>(ErrorDetail::Uniform) {
        assert_eq!(
            rejection.reason(),
            expected,
            "the server still learns the cause"
        );
        assert_eq!(rejection.wire(), uniform, "{expected:?}");
        assert_eq!(rejection.to_string(), "Invalid or expired requestState");
    }
}

fn detailed_mode_names_the_cause<C: Cipher>() {
    for (expected, rejection) in every_rejection::<C>(ErrorDetail::Detailed) {
        assert_eq!(rejection.reason(), expected);
        let wire = rejection.wire();
        assert_eq!(
            (wire.code, wire.message),
            (INVALID_PARAMS, REJECTION_MESSAGE)
        );
        assert_eq!(wire.reason, expected.as_str());
        assert_ne!(wire.reason, UNIFORM_REASON);
    }
}

fn reasons_have_distinct_names_and_no_reserved_code<C: Cipher>() {
    let mut names: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), Reason::ALL.len());
    for &reason in Reason::ALL {
        assert!(!reason.as_str().is_empty());
        assert_eq!(reason.to_string(), reason.as_str());
        for detail in [ErrorDetail::Uniform, ErrorDetail::Detailed] {
            let code = Rejection::new(reason, detail).wire().code;
            assert!(!(-32022..=-32020).contains(&code), "{reason:?} uses {code}");
            assert_eq!(code, -32602);
        }
    }
    let clock = ManualClock::new(NOW);
    assert_eq!(
        engine::<C, _>(&clock).reject(Reason::Expired).wire().reason,
        UNIFORM_REASON
    );
}

mrtr_tests::per_backend!(
    uniform_mode_shows_one_error_for_every_cause,
    detailed_mode_names_the_cause,
    reasons_have_distinct_names_and_no_reserved_code,
);
