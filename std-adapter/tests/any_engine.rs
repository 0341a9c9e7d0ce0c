//! The run-time-chosen engine and replay cache, the raw-message pre-check, and requests built
//! from typed (map) arguments.

mod support;

use mrtr_replay::MemoryReplayCache;
use mrtr_replay::{AnyReplayCache, AsyncReplayCache};
use mrtr_std::clock::ManualClock;
use mrtr_std::core::replay::{ReplayCache, ReplayError};
use mrtr_std::core::{AcceptV1, ErrorDetail, Principal, Reason, Round, TokenId};
use mrtr_std::engine::{
    AnyEngine, Audience, Backend, EngineConfig, EngineConfigError, PauseError, Step,
};
use mrtr_std::jsonrpc::{
    JsonRpcError, Method, Precheck, RequestState, ResumeRequest, precheck, precheck_raw,
};
use mrtr_std::keys::KeyConfig;
use serde_json::{Map, Value, json};
use support::{KEY1_B64, KEY2_B64, T0, capture_logs};

/// Every backend this build has (the defaults, and any the workspace's features add).
fn backends() -> &'static [Backend] {
    Backend::enabled()
}

const ALICE: Principal<'static> = Principal::User {
    issuer: "https://idp",
    subject: "alice",
};

const VERSION: &str = "2026-07-28";

fn keys() -> KeyConfig {
    KeyConfig::parse_env(&format!("current=k2; k2:{KEY2_B64}; k1:{KEY1_B64}")).unwrap()
}

fn limits(detail: ErrorDetail) -> EngineConfig {
    EngineConfig {
        ttl_ms: 60_000,
        max_rounds: 3,
        error_detail: detail,
        ..EngineConfig::for_audience("any-engine-tests")
    }
}

fn engine(
    backend: Backend,
    detail: ErrorDetail,
    replay: AnyReplayCache,
) -> (AnyEngine<AnyReplayCache, ManualClock>, ManualClock) {
    let clock = ManualClock::new(T0);
    let engine =
        AnyEngine::with_clock(backend, keys(), limits(detail), replay, clock.clone()).unwrap();
    (engine, clock)
}

/// An engine with uniform errors and the in-process replay cache.
fn single_use(backend: Backend) -> AnyEngine<AnyReplayCache, ManualClock> {
    engine(backend, ErrorDetail::Uniform, AnyReplayCache::memory(1_000)).0
}

fn uniform() -> Value {
    json!({"code": -32602, "message": "Invalid or expired requestState",
           "data": {"reason": "invalid_request_state"}})
}

fn map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn request<'a>(args: Option<&Map<String, Value>>, state: Option<&'a str>) -> ResumeRequest<'a> {
    let state = match state {
        Some(t) => RequestState::Token(t),
        None => RequestState::Absent,
    };
    ResumeRequest::with_map_arguments(Method::ToolsCall, VERSION, "book_table", args, state, ALICE)
}

fn reason(r: Result<Step, JsonRpcError>) -> Reason {
    r.expect_err("expected a rejection")
        .rejection()
        .expect("a requestState rejection")
        .reason()
}

#[test]
fn every_algorithm_pauses_resumes_and_refuses_a_replay() {
    for &backend in backends() {
        let (e, _) = engine(backend, ErrorDetail::Uniform, AnyReplayCache::memory(100));
        assert_eq!(e.backend(), backend);
        assert_eq!(e.algorithm(), backend.algorithm());
        let args = map(json!({"party": 4}));
        let fresh = request(Some(&args), None);
        let step = e.resume(&fresh).unwrap();
        assert!(matches!(step, Step::Fresh));
        assert_eq!(step.next_round(), Round::FIRST);
        let token = e
            .pause(&fresh, step.next_round(), b"awaiting date")
            .unwrap();

        let retry = request(Some(&args), Some(&token));
        match e.resume(&retry).unwrap() {
            Step::Resumed(r) => {
                assert_eq!(r.continuation(), b"awaiting date", "{backend:?}");
                assert_eq!(r.round(), 1);
                assert_eq!(r.expires_at_ms(), T0 + 60_000);
            }
            Step::Fresh => panic!("{backend:?}: not resumed"),
        }
        assert_eq!(reason(e.resume(&retry)), Reason::Replayed, "{backend:?}");
    }
}

#[test]
fn a_token_opens_only_under_the_algorithm_that_sealed_it() {
    // Providers of one algorithm (RustCrypto, aws-lc) open each other's tokens.
    for &sealer in backends() {
        let (s, _) = engine(sealer, ErrorDetail::Detailed, AnyReplayCache::Off);
        let fresh = request(None, None);
        let token = s.pause(&fresh, Round::FIRST, b"c").unwrap();
        for &opener in backends() {
            let (o, _) = engine(opener, ErrorDetail::Detailed, AnyReplayCache::Off);
            let retry = request(None, Some(&token));
            if opener.algorithm() == sealer.algorithm() {
                assert!(matches!(o.resume(&retry), Ok(Step::Resumed(_))));
            } else {
                let err = o.resume(&retry).unwrap_err();
                assert_eq!(err.rejection().unwrap().reason(), Reason::WrongAlgorithm);
                assert_eq!(err.data().unwrap()["reason"], "wrong_algorithm");
            }
        }
    }
}

#[test]
fn limits_are_applied_and_reported() {
    for &backend in backends() {
        let (e, clock) = engine(backend, ErrorDetail::Detailed, AnyReplayCache::Off);
        // Reported as applied: the maximum lifetime defaults to the TTL, and the v1 window is
        // resolved to its end (one lifetime plus the skew after start).
        let want = EngineConfig {
            max_lifetime_ms: Some(60_000),
            accept_v1: AcceptV1::Until(T0 + 60_000 + 60_000),
            ..limits(ErrorDetail::Detailed)
        };
        assert_eq!(e.limits(), want);

        // The round cap: the call plus two resumes; the last cannot pause again, and the
        // client gets the max-rounds rejection instead of a token that could never resume.
        let first = e.pause(&request(None, None), Round::FIRST, b"r").unwrap();
        let req = request(None, Some(&first));
        let step = e.resume(&req).unwrap();
        let next = e
            .input_required(&req, step.next_round(), b"again", None)
            .unwrap();
        assert_eq!(next["resultType"], "input_required");
        let second = next["requestState"].as_str().unwrap().to_owned();
        let req = request(None, Some(&second));
        let step = e.resume(&req).unwrap();
        let refused = e
            .input_required(&req, step.next_round(), b"again", None)
            .unwrap_err();
        let wire = JsonRpcError::from(refused);
        assert_eq!(wire.code(), -32602);
        assert_eq!(wire.data().unwrap()["reason"], "rounds_exceeded");

        // The TTL follows the engine's clock.
        let token = e.pause(&request(None, None), Round::FIRST, b"t").unwrap();
        assert_eq!(e.clock().get(), T0);
        clock.advance(60_000);
        assert_eq!(
            reason(e.resume(&request(None, Some(&token)))),
            Reason::Expired
        );
    }
}

#[test]
fn default_limits_are_the_core_defaults_and_the_audience_must_be_chosen() {
    // No silent default audience: building refuses until one is chosen.
    let err = AnyEngine::new(Backend::Aes256Gcm, keys(), EngineConfig::default(), ()).unwrap_err();
    assert!(matches!(err, EngineConfigError::AudienceUnset), "{err:?}");
    assert!(err.to_string().contains("audience"), "{err}");
    let e: AnyEngine = AnyEngine::new(
        Backend::Aes256Gcm,
        keys(),
        EngineConfig::for_audience("svc"),
        AnyReplayCache::Off,
    )
    .unwrap();
    let l = e.limits();
    assert_eq!(l.ttl_ms, mrtr_std::core::DEFAULT_TTL_MS);
    assert_eq!(l.max_rounds, mrtr_std::core::DEFAULT_MAX_ROUNDS);
    assert_eq!(l.error_detail, ErrorDetail::Uniform);
    assert_eq!(l.audience, Audience::Named("svc".into()));
    assert_eq!(l.max_lifetime_ms, Some(l.ttl_ms));
    assert_eq!(
        l.max_clock_skew_ms,
        mrtr_std::core::DEFAULT_MAX_CLOCK_SKEW_MS
    );
}

/// Two services sharing key material but not an audience refuse each other's tokens; the
/// explicit "no audience" is a third identity.
#[test]
fn services_with_other_audiences_refuse_each_others_tokens() {
    let build = |audience: Audience| {
        let limits = EngineConfig {
            audience,
            ..EngineConfig::default()
        };
        AnyEngine::new(
            Backend::ChaCha20Poly1305,
            keys(),
            limits,
            AnyReplayCache::Off,
        )
        .unwrap()
    };
    let billing = build(Audience::Named("billing".into()));
    let booking = build(Audience::Named("booking".into()));
    let nobody = build(Audience::None);
    let token = billing
        .pause(&request(None, None), Round::FIRST, b"x")
        .unwrap();
    let retry = request(None, Some(&token));
    assert!(billing.resume(&retry).is_ok());
    for other in [&booking, &nobody] {
        let err = other.resume(&retry).unwrap_err();
        assert_eq!(err.to_value(), uniform());
        assert_eq!(err.rejection().unwrap().reason(), Reason::Tampered);
    }
}

#[test]
fn invalid_configurations_are_refused() {
    let zero_ttl = EngineConfig {
        ttl_ms: 0,
        ..EngineConfig::for_audience("any-engine-tests")
    };
    let err = AnyEngine::new(Backend::ChaCha20Poly1305, keys(), zero_ttl, ()).unwrap_err();
    assert!(matches!(err, EngineConfigError::Config(_)));
    assert_eq!(
        err.to_string(),
        "mrtr configuration: ttl must be greater than 0 ms"
    );

    let zero_rounds = EngineConfig {
        max_rounds: 0,
        ..EngineConfig::for_audience("any-engine-tests")
    };
    let err = AnyEngine::new(Backend::Aes256Gcm, keys(), zero_rounds, ()).unwrap_err();
    assert!(matches!(err, EngineConfigError::Config(_)));

    // A backend name this build does not have is refused with the names it does have.
    let err = "rot13".parse::<Backend>().unwrap_err();
    assert!(err.to_string().contains("\"rot13\""), "{err}");
    assert!(err.to_string().contains("aes-256-gcm"), "{err}");
    for &b in backends() {
        assert_eq!(b.name().parse::<Backend>(), Ok(b));
        assert_eq!(b.name().to_uppercase().parse::<Backend>(), Ok(b));
    }

    // Five keys do not fit the engine's four-key ring; the message is the key error's own.
    let too_many = KeyConfig::parse_env(&format!("current=k1; {}", support::five_keys())).unwrap();
    let expected = too_many_keys_message();
    let err = AnyEngine::new(
        Backend::XChaCha20Poly1305,
        too_many,
        EngineConfig::for_audience("t"),
        (),
    )
    .unwrap_err();
    let EngineConfigError::Keys(inner) = &err else {
        panic!("expected a key error, got {err:?}");
    };
    assert_eq!(err.to_string(), inner.to_string());
    assert_eq!(err.to_string(), expected);
    assert!(!err.to_string().contains(KEY1_B64));
}

/// The error `into_ring` gives for five keys, for comparison.
fn too_many_keys_message() -> String {
    KeyConfig::parse_env(&format!("current=k1; {}", support::five_keys()))
        .unwrap()
        .into_ring::<mrtr_aes_gcm::Aes256Gcm, 4>()
        .unwrap_err()
        .to_string()
}

#[test]
fn debug_shows_the_choice_but_no_key_material() {
    for &backend in backends() {
        let (e, _) = engine(backend, ErrorDetail::Uniform, AnyReplayCache::memory(10));
        let text = format!("{e:?}");
        assert!(text.contains("Memory"), "{text}");
        assert!(
            !text.contains(KEY1_B64) && !text.contains(KEY2_B64),
            "{text}"
        );
        // The raw bytes of KEY1 (0, 1, 2, ...) as a Debug array would start like this.
        assert!(!text.contains("[0, 1, 2, 3"), "{text}");
    }
}

#[test]
fn reject_uses_the_engines_error_detail() {
    let (uniform, _) = engine(
        Backend::Aes256Gcm,
        ErrorDetail::Uniform,
        AnyReplayCache::Off,
    );
    let (detailed, _) = engine(
        Backend::Aes256Gcm,
        ErrorDetail::Detailed,
        AnyReplayCache::Off,
    );
    let u = uniform.reject(Reason::Expired);
    assert_eq!(
        u.to_value(),
        json!({"code": -32602, "message": "Invalid or expired requestState",
               "data": {"reason": "invalid_request_state"}})
    );
    assert_eq!(u.rejection().unwrap().reason(), Reason::Expired);
    let d = detailed.reject(Reason::Expired);
    assert_eq!(d.data().unwrap()["reason"], "expired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_resume_honours_the_chosen_replay_cache() {
    // In process: single use.
    let (e, _) = engine(
        Backend::ChaCha20Poly1305,
        ErrorDetail::Uniform,
        AnyReplayCache::memory(10),
    );
    let token = e.pause(&request(None, None), Round::FIRST, b"m").unwrap();
    let retry = request(None, Some(&token));
    assert!(matches!(e.resume_async(&retry).await, Ok(Step::Resumed(_))));
    assert_eq!(reason(e.resume_async(&retry).await), Reason::Replayed);
    assert_eq!(e.replay_cache().name(), "in-process");

    // Off: multi-use within the TTL, sync and async alike.
    let (e, _) = engine(
        Backend::XChaCha20Poly1305,
        ErrorDetail::Uniform,
        AnyReplayCache::Off,
    );
    let token = e.pause(&request(None, None), Round::FIRST, b"o").unwrap();
    let retry = request(None, Some(&token));
    for _ in 0..3 {
        assert!(matches!(e.resume_async(&retry).await, Ok(Step::Resumed(_))));
        assert!(matches!(e.resume(&retry), Ok(Step::Resumed(_))));
    }

    // A full in-process cache refuses (fail closed).
    let (e, _) = engine(
        Backend::Aes256Gcm,
        ErrorDetail::Detailed,
        AnyReplayCache::memory(1),
    );
    let first = e.pause(&request(None, None), Round::FIRST, b"1").unwrap();
    let second = e.pause(&request(None, None), Round::FIRST, b"2").unwrap();
    assert!(e.resume_async(&request(None, Some(&first))).await.is_ok());
    assert_eq!(
        reason(e.resume_async(&request(None, Some(&second))).await),
        Reason::ReplayStoreFull
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_replay_cache_answers_both_paths_where_it_can() {
    let id: TokenId = [9; 16];
    let off = AnyReplayCache::from(mrtr_std::core::replay::NoReplayCache);
    assert_eq!(
        (off.name(), off.enforces_single_use(), off.serves_sync()),
        ("off", false, true)
    );
    for _ in 0..2 {
        assert_eq!(
            ReplayCache::check_and_record(&off, &id, T0 + 10, T0),
            Ok(())
        );
        assert_eq!(
            AsyncReplayCache::check_and_record(&off, &id, T0 + 10, T0).await,
            Ok(())
        );
    }

    let mem = AnyReplayCache::from(MemoryReplayCache::new(10));
    assert_eq!(
        (mem.name(), mem.enforces_single_use(), mem.serves_sync()),
        ("in-process", true, true)
    );
    // One store behind both paths: recorded by one, refused by the other.
    assert_eq!(
        ReplayCache::check_and_record(&mem, &id, T0 + 10, T0),
        Ok(())
    );
    assert_eq!(
        AsyncReplayCache::check_and_record(&mem, &id, T0 + 10, T0).await,
        Err(ReplayError::Replayed)
    );
    let other: TokenId = [8; 16];
    assert_eq!(
        AsyncReplayCache::check_and_record(&mem, &other, T0 + 10, T0).await,
        Ok(())
    );
    assert_eq!(
        ReplayCache::check_and_record(&mem, &other, T0 + 10, T0),
        Err(ReplayError::Replayed)
    );
    assert_eq!(AnyReplayCache::default().name(), "off");
    assert_eq!(mem.to_string(), "in-process");
}

#[cfg(feature = "redis")]
#[test]
fn redis_choice_refuses_the_sync_path_and_logs_why() {
    use mrtr_replay::redis::RedisReplayCache;
    // Never connected: the sync path refuses without trying.
    let redis =
        AnyReplayCache::from(RedisReplayCache::new("redis://:hunter2@127.0.0.1:1/").unwrap());
    assert_eq!(
        (
            redis.name(),
            redis.enforces_single_use(),
            redis.serves_sync()
        ),
        ("redis", true, false)
    );
    let (result, logs) =
        capture_logs(|| ReplayCache::check_and_record(&redis, &[1; 16], T0 + 10, T0));
    assert_eq!(result, Err(ReplayError::Unavailable));
    assert!(logs.contains("resume_async"), "{logs}");
    assert!(!format!("{redis:?}").contains("hunter2"));

    // Through an engine: the uniform rejection, precise reason unavailable.
    let (e, _) = engine(Backend::Aes256Gcm, ErrorDetail::Detailed, redis);
    let token = e.pause(&request(None, None), Round::FIRST, b"r").unwrap();
    assert_eq!(
        reason(e.resume(&request(None, Some(&token)))),
        Reason::ReplayStoreUnavailable
    );
}

#[test]
fn precheck_rejects_non_string_state_on_the_pausable_methods() {
    for method in ["tools/call", "prompts/get", "resources/read"] {
        for bad in [
            json!(1),
            json!({"a": 1}),
            json!(["x"]),
            json!(true),
            json!(null),
        ] {
            let msg = json!({"jsonrpc": "2.0", "id": 7, "method": method,
                             "params": {"name": "t", "uri": "u", "requestState": bad}});
            let (err, logs) = capture_logs(|| precheck(&msg, ErrorDetail::Uniform));
            let err = err.unwrap_or_else(|| panic!("accepted {msg}"));
            assert_eq!(
                err.to_value(),
                json!({"code": -32602, "message": "Invalid or expired requestState",
                       "data": {"reason": "invalid_request_state"}})
            );
            assert_eq!(err.rejection().unwrap().reason(), Reason::Malformed);
            assert!(
                logs.contains("malformed") && logs.contains(method),
                "{logs}"
            );
            let detailed = precheck(&msg, ErrorDetail::Detailed).unwrap();
            assert_eq!(detailed.data().unwrap()["reason"], "malformed");
        }
    }
}

#[test]
fn precheck_passes_everything_else() {
    let ok = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "requestState": "abc"}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "t"}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"requestState": 5}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": 5, "params": {"requestState": 5}}),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"requestState": 5}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled"}),
        json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"requestState": 5}}]),
        json!("tools/call"),
    ];
    for msg in ok {
        assert!(precheck(&msg, ErrorDetail::Detailed).is_none(), "{msg}");
    }
}

#[test]
fn engine_precheck_uses_the_engines_mode() {
    let msg = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "t", "requestState": 12}});
    for (detail, wire) in [
        (ErrorDetail::Uniform, "invalid_request_state"),
        (ErrorDetail::Detailed, "malformed"),
    ] {
        let (e, _) = engine(Backend::Aes256Gcm, detail, AnyReplayCache::Off);
        let err = e.precheck(&msg).unwrap();
        assert_eq!(err.data().unwrap()["reason"], wire);
        // The same error the engine gives when the request reaches it.
        let params = &msg["params"];
        let req = ResumeRequest::from_params("tools/call", params, ALICE)
            .unwrap()
            .unwrap();
        assert_eq!(e.resume(&req).unwrap_err(), err);
        assert!(
            e.precheck(&json!({"method": "tools/call", "params": {}}))
                .is_none()
        );
    }
}

#[test]
fn map_arguments_bind_like_the_same_params() {
    let (e, _) = engine(
        Backend::Aes256Gcm,
        ErrorDetail::Detailed,
        AnyReplayCache::memory(10),
    );
    let args = json!({"party": 4, "when": {"date": "2026-12-24"}, "note": "wheelchair ♿"});
    let params = json!({"name": "book_table", "arguments": args,
                        "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}});
    let parsed = ResumeRequest::from_params("tools/call", &params, ALICE)
        .unwrap()
        .unwrap();
    let typed_args = map(args.clone());
    let typed = request(Some(&typed_args), None);
    assert_eq!(typed.args_digest(), parsed.args_digest());
    let via_new = ResumeRequest::new(
        Method::ToolsCall,
        VERSION,
        "book_table",
        Some(&args),
        RequestState::Absent,
        ALICE,
    );
    assert_eq!(typed.args_digest(), via_new.args_digest());

    // Sealed from parsed params, resumed from typed arguments (and the other way round).
    let token = e.pause(&parsed, Round::FIRST, b"x").unwrap();
    assert!(matches!(
        e.resume(&request(Some(&typed_args), Some(&token))),
        Ok(Step::Resumed(_))
    ));

    // Absent and empty arguments are one call; different arguments are not.
    let empty = Map::new();
    assert_eq!(
        request(None, None).args_digest(),
        request(Some(&empty), None).args_digest()
    );
    let token = e
        .pause(&request(Some(&empty), None), Round::FIRST, b"y")
        .unwrap();
    let changed = map(json!({"party": 5, "when": {"date": "2026-12-24"}, "note": "wheelchair ♿"}));
    assert_eq!(
        reason(e.resume(&request(Some(&changed), Some(&token)))),
        Reason::ArgumentsMismatch
    );
    assert!(matches!(
        e.resume(&request(None, Some(&token))),
        Ok(Step::Resumed(_))
    ));
}

#[test]
fn arguments_that_cannot_be_canonicalized_cannot_pause_and_never_resume() {
    let e = single_use(Backend::Aes256Gcm);
    let mut deep = json!("leaf");
    for _ in 0..mrtr_std::jcs::MAX_DEPTH {
        deep = json!([deep]);
    }
    let args = map(json!({ "k": deep }));
    let fresh = ResumeRequest::with_map_arguments(
        Method::PromptsGet,
        VERSION,
        "p",
        Some(&args),
        RequestState::Absent,
        ALICE,
    );
    // A fresh call runs (a handler that never pauses is not affected)...
    assert!(matches!(e.resume(&fresh), Ok(Step::Fresh)));
    // ...but it cannot pause: the handler learns why, and the client gets -32602.
    let err = e.pause(&fresh, Round::FIRST, b"x").unwrap_err();
    assert!(matches!(err, PauseError::Unbindable(_)), "{err:?}");
    assert!(err.to_string().contains("cannot be bound"), "{err}");
    let wire = JsonRpcError::from(err);
    assert_eq!(wire.code(), -32602);
    assert!(
        wire.message().contains("nested deeper"),
        "{}",
        wire.message()
    );
    assert!(wire.rejection().is_none());
    // A requestState with such arguments gets the uniform rejection.
    let token = e.pause(&request(None, None), Round::FIRST, b"y").unwrap();
    let resumed = ResumeRequest::with_map_arguments(
        Method::ToolsCall,
        VERSION,
        "book_table",
        Some(&args),
        RequestState::Token(&token),
        ALICE,
    );
    let err = e.resume(&resumed).unwrap_err();
    assert_eq!(err.to_value(), uniform());
    assert_eq!(
        err.rejection().unwrap().reason(),
        Reason::ArgumentsUnbindable
    );
}

/// 2^53 + 1 and 2^53 are one double: a token sealed for one must never resume the other.
#[test]
fn integers_a_double_cannot_carry_are_never_bound() {
    let e = single_use(Backend::ChaCha20Poly1305);
    let exact = map(json!({"amount": 9_007_199_254_740_992u64}));
    let lossy = map(json!({"amount": 9_007_199_254_740_993u64}));
    // Pausing with 2^53 + 1 is refused with a clear error.
    let err = e
        .pause(&request(Some(&lossy), None), Round::FIRST, b"x")
        .unwrap_err();
    assert!(err.to_string().contains("double"), "{err}");
    // A token sealed for 2^53 is refused when resumed with 2^53 + 1, uniformly.
    let token = e
        .pause(&request(Some(&exact), None), Round::FIRST, b"x")
        .unwrap();
    let err = e.resume(&request(Some(&lossy), Some(&token))).unwrap_err();
    assert_eq!(err.to_value(), uniform());
    assert_eq!(
        err.rejection().unwrap().reason(),
        Reason::ArgumentsUnbindable
    );
    // And 2^53 itself still resumes (the refusal did not spend the token).
    assert!(matches!(
        e.resume(&request(Some(&exact), Some(&token))),
        Ok(Step::Resumed(_))
    ));
}

/// The raw-text check: a request that is not I-JSON cannot resume, and cannot pause.
#[test]
fn requests_that_are_not_i_json_are_caught_before_a_parser_forgets() {
    let e = single_use(Backend::Aes256Gcm);
    let token = e.pause(&request(None, None), Round::FIRST, b"x").unwrap();
    let resume_body = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"book_table",
            "arguments":{{"party":4,"party":5}},"requestState":"{token}"}}}}"#
    );
    let message: Value = serde_json::from_str(&resume_body).unwrap();
    let Precheck::Reject(err) =
        precheck_raw(&message, resume_body.as_bytes(), ErrorDetail::Uniform)
    else {
        panic!("a resume with duplicate argument names passed")
    };
    assert_eq!(err.to_value(), uniform());
    assert_eq!(
        err.rejection().unwrap().reason(),
        Reason::ArgumentsUnbindable
    );

    let fresh_body = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call",
        "params":{"name":"book_table","arguments":{"amount":1.00000000000000000001}}}"#;
    let message: Value = serde_json::from_str(fresh_body).unwrap();
    let Precheck::Unbindable(v) =
        precheck_raw(&message, fresh_body.as_bytes(), ErrorDetail::Uniform)
    else {
        panic!("not flagged")
    };
    assert_eq!(v.path(), "/params/arguments/amount");
    let args = map(message["params"]["arguments"].clone());
    let req = request(Some(&args), None).not_i_json(v);
    assert!(matches!(e.resume(&req), Ok(Step::Fresh)));
    let err = JsonRpcError::from(e.pause(&req, Round::FIRST, b"x").unwrap_err());
    assert_eq!(err.code(), -32602);
    assert!(
        err.message().contains("/params/arguments/amount"),
        "{}",
        err.message()
    );

    // Other methods, and I-JSON requests, pass.
    for ok in [
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"a":1,"a":2}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"t","arguments":{"n":0.1}}}"#,
    ] {
        let message: Value = serde_json::from_str(ok).unwrap();
        assert_eq!(
            precheck_raw(&message, ok.as_bytes(), ErrorDetail::Uniform),
            Precheck::Pass,
            "{ok}"
        );
    }
}
