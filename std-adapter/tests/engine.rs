//! The JSON-RPC resume glue end to end: params in, `Fresh` / `Resumed` / error JSON out.

mod support;

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_replay::MemoryReplayCache;
use mrtr_std::clock::ManualClock;
use mrtr_std::core::{ErrorDetail, Principal, Reason, Round, SealError};
use mrtr_std::engine::{CipherEngine, MAX_CONTINUATION_LEN, MAX_TOKEN_LEN, PauseError, Step};
use mrtr_std::jsonrpc::{JsonRpcError, Method, RequestState, ResumeRequest};
use serde_json::{Value, json};
use support::{T0, mrtr};

type Eng = CipherEngine<Aes256Gcm, MemoryReplayCache, ManualClock>;

const ALICE: Principal<'static> = Principal::User {
    issuer: "https://idp",
    subject: "alice",
};
const BOB: Principal<'static> = Principal::User {
    issuer: "https://idp",
    subject: "bob",
};

fn engine(detail: ErrorDetail) -> (Eng, ManualClock) {
    let clock = ManualClock::new(T0);
    (
        CipherEngine::new(mrtr(&clock, detail), MemoryReplayCache::new(1_000)),
        clock,
    )
}

fn call(args: Value) -> Value {
    json!({
        "name": "book_table",
        "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    })
}

fn with_state(mut params: Value, state: &str) -> Value {
    params["requestState"] = state.into();
    params
}

/// Pauses a fresh call of `method` with `params` and returns the token.
fn pause(e: &Eng, method: &str, params: &Value, who: Principal<'_>, cont: &[u8]) -> String {
    let req = ResumeRequest::from_params(method, params, who)
        .unwrap()
        .unwrap();
    assert!(matches!(e.resume(&req).unwrap(), Step::Fresh));
    e.pause(&req, Round::FIRST, cont).unwrap()
}

fn resume(e: &Eng, method: &str, params: &Value, who: Principal<'_>) -> Result<Step, JsonRpcError> {
    let req = ResumeRequest::from_params(method, params, who)
        .unwrap()
        .unwrap();
    e.resume(&req)
}

fn reason(r: Result<Step, JsonRpcError>) -> Reason {
    r.expect_err("rejected")
        .rejection()
        .expect("a requestState rejection")
        .reason()
}

#[test]
fn fresh_pause_resume_then_replay_is_refused() {
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = call(json!({"party": 4}));
    let token = pause(&e, "tools/call", &params, ALICE, b"step=date");
    assert!(token.len() <= MAX_TOKEN_LEN);
    let retry = with_state(params, &token);
    match resume(&e, "tools/call", &retry, ALICE).unwrap() {
        Step::Resumed(r) => {
            assert_eq!(r.continuation(), b"step=date");
            assert_eq!(r.round(), 1);
            assert_eq!(r.next_round().get(), 2);
            assert_eq!(r.expires_at_ms(), T0 + 60_000);
        }
        Step::Fresh => panic!("expected a resume"),
    }
    let err = resume(&e, "tools/call", &retry, ALICE).unwrap_err();
    assert_eq!(err.rejection().unwrap().reason(), Reason::Replayed);
    assert_eq!(
        err.to_value(),
        json!({"code": -32602, "message": "Invalid or expired requestState",
               "data": {"reason": "invalid_request_state"}})
    );
}

#[test]
fn detailed_mode_names_the_reason_on_the_wire() {
    let (e, _) = engine(ErrorDetail::Detailed);
    let params = call(json!({"party": 4}));
    let token = pause(&e, "tools/call", &params, ALICE, b"c");
    let err = resume(&e, "tools/call", &with_state(params, &token), BOB).unwrap_err();
    assert_eq!(err.code(), -32602);
    assert_eq!(err.data(), Some(&json!({"reason": "tampered"})));
}

#[test]
fn arguments_digest_binds_canonical_arguments() {
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = call(json!({"party": 4, "when": {"day": "fri", "time": 19.5}}));
    let token = pause(&e, "tools/call", &params, ALICE, b"c");
    // A different value, or the same number as a string or an array: refused, not burnt.
    for other in [
        json!({"party": 5, "when": {"day": "fri", "time": 19.5}}),
        json!({"party": "4", "when": {"day": "fri", "time": 19.5}}),
        json!({"party": [4], "when": {"day": "fri", "time": 19.5}}),
        json!({"party": 4}),
        // The same value as a float: a handler reading `as_u64()` sees none, so it is
        // another call (docs/token-format.md, "The argument binding").
        serde_json::from_str(r#"{"party": 4.0, "when": {"day": "fri", "time": 19.5}}"#).unwrap(),
    ] {
        let r = resume(&e, "tools/call", &with_state(call(other), &token), ALICE);
        assert_eq!(reason(r), Reason::ArgumentsMismatch);
    }
    // Same arguments, other key order and another spelling of the same float: accepted.
    let same: Value =
        serde_json::from_str(r#"{"when": {"time": 1.95e1, "day": "fri"}, "party": 4}"#).unwrap();
    assert!(matches!(
        resume(&e, "tools/call", &with_state(call(same), &token), ALICE),
        Ok(Step::Resumed(_))
    ));
}

#[test]
fn absent_null_and_empty_arguments_are_one_call() {
    let (e, _) = engine(ErrorDetail::Uniform);
    let mut no_args = call(json!(null));
    no_args.as_object_mut().unwrap().remove("arguments");
    let t1 = pause(&e, "tools/call", &no_args, ALICE, b"c");
    assert!(matches!(
        resume(&e, "tools/call", &with_state(call(json!({})), &t1), ALICE),
        Ok(Step::Resumed(_))
    ));
    let t2 = pause(&e, "tools/call", &call(json!({})), ALICE, b"c");
    assert!(matches!(
        resume(&e, "tools/call", &with_state(call(json!(null)), &t2), ALICE),
        Ok(Step::Resumed(_))
    ));
}

#[test]
fn token_is_bound_to_method_target_version_and_principal() {
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = call(json!({}));
    let token = pause(&e, "tools/call", &params, ALICE, b"c");
    let mut other_tool = with_state(params.clone(), &token);
    other_tool["name"] = "cancel_table".into();
    assert_eq!(
        reason(resume(&e, "tools/call", &other_tool, ALICE)),
        Reason::Tampered
    );
    let mut other_version = with_state(params.clone(), &token);
    other_version["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2026-09-01".into();
    assert_eq!(
        reason(resume(&e, "tools/call", &other_version, ALICE)),
        Reason::Tampered
    );
    assert_eq!(
        reason(resume(
            &e,
            "prompts/get",
            &with_state(params.clone(), &token),
            ALICE
        )),
        Reason::Tampered
    );
    assert_eq!(
        reason(resume(
            &e,
            "tools/call",
            &with_state(params.clone(), &token),
            BOB
        )),
        Reason::Tampered
    );
    assert_eq!(
        reason(resume(
            &e,
            "tools/call",
            &with_state(params.clone(), &token),
            Principal::Anonymous
        )),
        Reason::Tampered
    );
    // None of those burnt it.
    assert!(matches!(
        resume(&e, "tools/call", &with_state(params, &token), ALICE),
        Ok(Step::Resumed(_))
    ));
}

#[test]
fn resources_read_binds_the_uri_and_ignores_arguments() {
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = json!({"uri": "file:///a.txt", "arguments": {"ignored": true}});
    let req = ResumeRequest::from_params("resources/read", &params, ALICE)
        .unwrap()
        .unwrap();
    assert_eq!(req.method(), Method::ResourcesRead);
    assert_eq!(req.target(), "file:///a.txt");
    assert_eq!(req.binding().unwrap().protocol_version(), "");
    assert_eq!(
        req.args_digest(),
        Ok(&mrtr_std::jcs::args_digest(None).unwrap())
    );
    let token = pause(&e, "resources/read", &params, ALICE, b"r");
    let retry = json!({"uri": "file:///a.txt", "requestState": token});
    assert!(matches!(
        resume(&e, "resources/read", &retry, ALICE),
        Ok(Step::Resumed(_))
    ));
    let other = json!({"uri": "file:///b.txt", "requestState": token});
    assert_eq!(
        reason(resume(&e, "resources/read", &other, ALICE)),
        Reason::Tampered
    );
}

#[test]
fn prompts_get_uses_name_and_arguments() {
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = json!({"name": "greet", "arguments": {"who": "x"}});
    let token = pause(&e, "prompts/get", &params, ALICE, b"p");
    let changed = json!({"name": "greet", "arguments": {"who": "y"}, "requestState": token});
    assert_eq!(
        reason(resume(&e, "prompts/get", &changed, ALICE)),
        Reason::ArgumentsMismatch
    );
}

#[test]
fn request_state_on_other_methods_is_ignored() {
    let params = json!({"requestState": 42, "cursor": "x"});
    for m in [
        "tools/list",
        "initialize",
        "resources/list",
        "subscriptions/listen",
        "",
    ] {
        assert!(
            ResumeRequest::from_params(m, &params, ALICE)
                .unwrap()
                .is_none(),
            "{m}"
        );
    }
}

#[test]
fn non_string_request_state_is_rejected() {
    let (e, _) = engine(ErrorDetail::Detailed);
    for bad in [
        json!(1),
        json!(null),
        json!({"t": "x"}),
        json!(["x"]),
        json!(true),
    ] {
        let mut params = call(json!({}));
        params["requestState"] = bad.clone();
        let req = ResumeRequest::from_params("tools/call", &params, ALICE)
            .unwrap()
            .unwrap();
        assert_eq!(req.request_state(), RequestState::NotAString);
        let err = e.resume(&req).unwrap_err();
        assert_eq!(err.code(), -32602, "{bad}");
        assert_eq!(err.rejection().unwrap().reason(), Reason::Malformed);
    }
}

#[test]
fn unusable_params_give_invalid_params_errors_naming_the_problem() {
    let cases = [
        ("tools/call", json!([1]), "params must be an object"),
        (
            "tools/call",
            json!({"arguments": {}}),
            "params.name must be a string",
        ),
        (
            "prompts/get",
            json!({"name": 7}),
            "params.name must be a string",
        ),
        (
            "resources/read",
            json!({"name": "x"}),
            "params.uri must be a string",
        ),
        (
            "tools/call",
            json!({"name": "t", "_meta": {"io.modelcontextprotocol/protocolVersion": 1}}),
            "protocolVersion\"] must be a string",
        ),
    ];
    for (method, params, msg) in cases {
        let err = ResumeRequest::from_params(method, &params, ALICE).unwrap_err();
        assert_eq!(err.code(), -32602);
        assert!(err.message().contains(msg), "{}", err.message());
        assert!(err.rejection().is_none());
    }
    let mut deep = json!("leaf");
    for _ in 0..100 {
        deep = Value::Array(vec![deep]);
    }
    // Arguments too deep to canonicalize are not a params error: the call runs, but it
    // cannot pause, and the error says why.
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = call(deep);
    let req = ResumeRequest::from_params("tools/call", &params, ALICE)
        .unwrap()
        .unwrap();
    assert!(matches!(e.resume(&req), Ok(Step::Fresh)));
    let err = JsonRpcError::from(e.pause(&req, Round::FIRST, b"x").unwrap_err());
    assert_eq!(err.code(), -32602);
    assert!(
        err.message().contains("arguments cannot be bound"),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains("deeper than 64"),
        "{}",
        err.message()
    );
}

#[test]
fn garbage_and_oversized_tokens_are_rejected_without_panicking() {
    let (e, _) = engine(ErrorDetail::Detailed);
    let long = "A".repeat(MAX_TOKEN_LEN + 1);
    let cases: [(&str, Reason); 4] = [
        ("", Reason::Malformed),
        ("!!!not base64!!!", Reason::Malformed),
        (&long, Reason::TooLong),
        ("AQEDazJ4", Reason::Malformed),
    ];
    for (tok, want) in cases {
        let r = resume(&e, "tools/call", &with_state(call(json!({})), tok), ALICE);
        assert_eq!(reason(r), want, "{tok:.20}");
    }
}

#[test]
fn expiry_follows_the_clock() {
    let (e, clock) = engine(ErrorDetail::Uniform);
    let params = call(json!({}));
    let token = pause(&e, "tools/call", &params, ALICE, b"c");
    clock.advance(60_000);
    assert_eq!(
        reason(resume(&e, "tools/call", &with_state(params, &token), ALICE)),
        Reason::Expired
    );
}

#[test]
fn round_chain_is_capped() {
    // max_rounds(3): the call plus two resumes.
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = call(json!({}));
    let mut token = pause(&e, "tools/call", &params, ALICE, b"r1");
    for expected_round in 1..=2u32 {
        let p = with_state(params.clone(), &token);
        let req = ResumeRequest::from_params("tools/call", &p, ALICE)
            .unwrap()
            .unwrap();
        let step = e.resume(&req).unwrap();
        let Step::Resumed(r) = &step else {
            panic!("expected a resume")
        };
        assert_eq!(r.round(), expected_round);
        let next = e.input_required(&req, step.next_round(), b"again", None);
        if expected_round == 2 {
            // Invocation 3 of 3 cannot pause: no dead token, the max-rounds error instead.
            let err = JsonRpcError::from(next.unwrap_err());
            assert_eq!(err.to_value()["code"], -32602);
            assert_eq!(err.rejection().unwrap().reason(), Reason::RoundsExceeded);
            break;
        }
        let next = next.unwrap();
        assert_eq!(next["resultType"], "input_required");
        assert!(next.get("inputRequests").is_none());
        token = next["requestState"].as_str().unwrap().to_owned();
    }
}

#[test]
fn input_required_result_shape() {
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = call(json!({}));
    let req = ResumeRequest::from_params("tools/call", &params, ALICE)
        .unwrap()
        .unwrap();
    let reqs = json!({"date": {"method": "elicitation/create", "params": {"message": "?"}}});
    let v = e
        .input_required(&req, Round::FIRST, b"x", Some(reqs.clone()))
        .unwrap();
    let obj = v.as_object().unwrap();
    assert_eq!(obj.len(), 3);
    assert_eq!(v["resultType"], "input_required");
    assert_eq!(v["inputRequests"], reqs);
    let token = v["requestState"].as_str().unwrap();
    assert!(
        token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    );
}

#[test]
fn pause_refuses_oversized_continuations_and_unbindable_requests() {
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = call(json!({}));
    let req = ResumeRequest::from_params("tools/call", &params, ALICE)
        .unwrap()
        .unwrap();
    assert!(
        e.pause(&req, Round::FIRST, &vec![7; MAX_CONTINUATION_LEN])
            .is_ok()
    );
    assert_eq!(
        e.pause(&req, Round::FIRST, &vec![7; MAX_CONTINUATION_LEN + 1]),
        Err(PauseError::Seal(SealError::TooLarge))
    );
    let long_target = json!({"name": "t".repeat(2000)});
    let req = ResumeRequest::from_params("tools/call", &long_target, ALICE)
        .unwrap()
        .unwrap();
    assert!(matches!(
        e.pause(&req, Round::FIRST, b""),
        Err(PauseError::Seal(SealError::Binding(_)))
    ));
    // And a requestState on such a request is rejected, not a panic.
    let with = json!({"name": "t".repeat(2000), "requestState": "abc"});
    assert_eq!(
        reason(resume(&e, "tools/call", &with, ALICE)),
        Reason::InvalidBinding
    );
}

#[test]
fn rotated_key_still_opens_until_removed() {
    use mrtr_std::core::Codec;
    use mrtr_std::keys::KeyConfig;
    use support::{KEY1_B64, KEY2_B64};
    let clock = ManualClock::new(T0);
    let old_ring = KeyConfig::parse_env(&format!("current=k1; k1:{KEY1_B64}")).unwrap();
    let old = CipherEngine::new(
        Codec::builder(old_ring.into_ring::<Aes256Gcm, 4>().unwrap(), clock.clone())
            .without_audience()
            .ttl_ms(60_000)
            .build()
            .unwrap(),
        MemoryReplayCache::new(10),
    );
    let params = call(json!({}));
    let req = ResumeRequest::from_params("tools/call", &params, ALICE)
        .unwrap()
        .unwrap();
    let token = old.pause(&req, Round::FIRST, b"c").unwrap();
    // New node configuration: k2 current, k1 kept.
    let (e, _) = engine(ErrorDetail::Detailed);
    assert!(matches!(
        resume(&e, "tools/call", &with_state(params.clone(), &token), ALICE),
        Ok(Step::Resumed(_))
    ));
    // k1 removed: unknown key.
    let only_k2 = KeyConfig::parse_env(&format!("current=k2; k2:{KEY2_B64}")).unwrap();
    let newer = CipherEngine::new(
        Codec::builder(only_k2.into_ring::<Aes256Gcm, 4>().unwrap(), clock)
            .without_audience()
            .error_detail(ErrorDetail::Detailed)
            .build()
            .unwrap(),
        MemoryReplayCache::new(10),
    );
    let req = with_state(params, &token);
    let r = ResumeRequest::from_params("tools/call", &req, ALICE)
        .unwrap()
        .unwrap();
    assert_eq!(
        newer.resume(&r).unwrap_err().rejection().unwrap().reason(),
        Reason::UnknownKey
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_resume_with_the_memory_cache() {
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = call(json!({"a": 1}));
    let token = pause(&e, "tools/call", &params, ALICE, b"async");
    let retry = with_state(params, &token);
    let req = ResumeRequest::from_params("tools/call", &retry, ALICE)
        .unwrap()
        .unwrap();
    match e.resume_async(&req).await.unwrap() {
        Step::Resumed(r) => assert_eq!(r.continuation(), b"async"),
        Step::Fresh => panic!("expected a resume"),
    }
    assert_eq!(
        e.resume_async(&req)
            .await
            .unwrap_err()
            .rejection()
            .unwrap()
            .reason(),
        Reason::Replayed
    );
}

#[test]
fn every_cipher_backend_round_trips_through_the_engine() {
    use mrtr_chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
    use mrtr_std::core::Codec;
    use mrtr_std::core::cipher::Cipher;
    use mrtr_std::core::replay::NoReplayCache;
    use mrtr_std::keys::KeyConfig;
    fn run<C: Cipher>() {
        let ring = KeyConfig::ephemeral().unwrap().into_ring::<C, 1>().unwrap();
        let clock = ManualClock::new(T0);
        let e = CipherEngine::new(
            Codec::builder(ring, clock)
                .without_audience()
                .build()
                .unwrap(),
            NoReplayCache,
        );
        let params = json!({"name": "t", "requestState": null});
        let fresh = json!({"name": "t"});
        let req = ResumeRequest::from_params("tools/call", &fresh, ALICE)
            .unwrap()
            .unwrap();
        let token = e.pause(&req, Round::FIRST, b"cipher").unwrap();
        let mut p = params;
        p["requestState"] = token.into();
        let req = ResumeRequest::from_params("tools/call", &p, ALICE)
            .unwrap()
            .unwrap();
        // No replay cache: multi-use within the TTL.
        for _ in 0..2 {
            let Step::Resumed(r) = e.resume(&req).unwrap() else {
                panic!()
            };
            assert_eq!(r.continuation(), b"cipher");
        }
    }
    run::<Aes256Gcm>();
    run::<ChaCha20Poly1305>();
    run::<XChaCha20Poly1305>();
}

/// A handler that refuses a request for its own reasons (a capability the request did not
/// declare, arguments that fail validation) does so between verify and commit: the token is
/// not spent, and the corrected retry resumes it.
#[test]
fn a_request_refused_between_verify_and_commit_does_not_spend_the_token() {
    let (e, _) = engine(ErrorDetail::Uniform);
    let params = call(json!({"party": 4}));
    let token = pause(&e, "tools/call", &params, ALICE, b"awaiting date");
    let retry = with_state(params, &token);
    let req = ResumeRequest::from_params("tools/call", &retry, ALICE)
        .unwrap()
        .unwrap();

    // Verified, then refused by the handler (say -32021): dropped without a commit.
    let verified = e.verify(&req).unwrap();
    assert!(!verified.is_fresh());
    assert_eq!(verified.next_round().get(), 2);
    drop(verified);
    // Verifying again is fine: nothing was recorded.
    let verified = e.verify(&req).unwrap();
    let Step::Resumed(r) = e.commit(verified).unwrap() else {
        panic!("expected a resume")
    };
    assert_eq!(r.continuation(), b"awaiting date");
    // Committed once: now it is spent, and verify alone does not look at the replay cache.
    assert!(e.verify(&req).is_ok());
    let again = e.verify(&req).unwrap();
    assert_eq!(reason(e.commit(again)), Reason::Replayed);
    // A fresh request verifies and commits as fresh.
    let fresh_params = call(json!({}));
    let fresh = ResumeRequest::from_params("tools/call", &fresh_params, ALICE)
        .unwrap()
        .unwrap();
    let v = e.verify(&fresh).unwrap();
    assert!(v.is_fresh());
    assert!(matches!(e.commit(v), Ok(Step::Fresh)));
}
