//! Each event moves its metric (feature `metrics`): read back from a test recorder installed
//! for the test's own thread, never from timing.

mod support;

use std::time::Duration;

use metrics::with_local_recorder;
use mrtr_replay::redis::RedisReplayCache;
use mrtr_replay::{AnyReplayCache, MemoryReplayCache, Readiness};
use mrtr_std::clock::ManualClock;
use mrtr_std::core::key::DEFAULT_SEAL_LIMIT;
use mrtr_std::core::{ErrorDetail, Reason, Round};
use mrtr_std::engine::{AnyEngine, Backend, Engine, EngineConfig, Step};
use mrtr_std::health::Cause;
use mrtr_std::jsonrpc::{Precheck, ResumeRequest, precheck_raw};
use mrtr_std::keys::KeyConfig;
use mrtr_std::metrics::names;
use serde_json::Value;
use support::metrics::TestRecorder;
use support::redis::RedisServer;
use support::{KEY1_B64, T0};

fn keys(spec: &str) -> KeyConfig {
    support::key_spec(spec)
}

fn request(state: Option<&str>) -> ResumeRequest<'_> {
    support::call("t", state)
}

fn engine(
    clock: &ManualClock,
    limits: EngineConfig,
    used: u32,
) -> AnyEngine<MemoryReplayCache, ManualClock> {
    AnyEngine::with_clock_counting(
        Backend::Aes256Gcm,
        keys("current=k1; k1:K1; k2:K2"),
        limits,
        MemoryReplayCache::new(100),
        clock.clone(),
        |id| if id.as_str() == "k1" { used } else { 0 },
    )
    .unwrap()
}

const TOOLS: (&str, &str) = ("method", "tools/call");

#[test]
fn seals_count_by_backend_and_key_and_the_budget_gauge_follows() {
    let rec = TestRecorder::default();
    with_local_recorder(&rec, || {
        let clock = ManualClock::new(T0);
        let e = engine(&clock, EngineConfig::for_audience("test-service"), 0);
        let max = f64::from(DEFAULT_SEAL_LIMIT);
        // Built: both keys configured, k1 seals, full budgets.
        let k1 = [("key_id", "k1")];
        let k2 = [("key_id", "k2")];
        assert_eq!(rec.gauge(names::KEY_SEALS_REMAINING, &k1), Some(max));
        assert_eq!(rec.gauge(names::KEY_CURRENT, &k1), Some(1.0));
        assert_eq!(rec.gauge(names::KEY_CURRENT, &k2), Some(0.0));
        assert_eq!(rec.gauge(names::KEY_CONFIGURED, &k2), Some(1.0));

        for _ in 0..3 {
            e.pause(&request(None), Round::FIRST, b"x").unwrap();
        }
        let sealed = [("backend", "aes-256-gcm"), ("key_id", "k1")];
        assert_eq!(rec.counter(names::SEALS, &sealed), 3);
        assert_eq!(rec.counter_sum(names::SEALS), 3);
        assert_eq!(rec.gauge(names::KEY_SEALS_REMAINING, &k1), Some(max - 3.0));
        assert_eq!(rec.gauge(names::KEY_SEALS_REMAINING, &k2), Some(max));
    });
}

#[test]
fn an_exhausted_key_is_a_refused_pause_a_zero_gauge_and_not_ready() {
    let rec = TestRecorder::default();
    with_local_recorder(&rec, || {
        let clock = ManualClock::new(T0);
        let e = engine(
            &clock,
            EngineConfig::for_audience("test-service"),
            DEFAULT_SEAL_LIMIT - 1,
        );
        e.pause(&request(None), Round::FIRST, b"x").unwrap();
        assert_eq!(
            rec.gauge(names::KEY_SEALS_REMAINING, &[("key_id", "k1")]),
            Some(0.0)
        );
        assert!(e.pause(&request(None), Round::FIRST, b"x").is_err());
        let cause = [TOOLS, ("cause", "key_exhausted")];
        assert_eq!(rec.counter(names::PAUSE_REFUSALS, &cause), 1);

        let health = mrtr_std::health::Health::new(Readiness::Ready, &e);
        assert_eq!(health.causes(), &[Cause::KeyExhausted(e.current_key_id())]);
        assert_eq!(rec.gauge(names::READY, &[]), Some(0.0));
    });
}

#[test]
fn resumes_count_by_outcome_with_the_precise_reason_while_the_wire_stays_uniform() {
    let rec = TestRecorder::default();
    with_local_recorder(&rec, || {
        let clock = ManualClock::new(T0);
        let e = engine(&clock, EngineConfig::for_audience("test-service"), 0);
        let outcome = |o| [TOOLS, ("outcome", o)];

        assert!(matches!(e.resume(&request(None)), Ok(Step::Fresh)));
        assert_eq!(rec.counter(names::RESUMES, &outcome("fresh")), 1);

        let token = e.pause(&request(None), Round::FIRST, b"x").unwrap();
        assert!(matches!(
            e.resume(&request(Some(&token))),
            Ok(Step::Resumed(_))
        ));
        assert_eq!(rec.counter(names::RESUMES, &outcome("resumed")), 1);

        let wire = |err: mrtr_std::jsonrpc::JsonRpcError| err.to_value();
        let replayed = wire(e.resume(&request(Some(&token))).unwrap_err());
        assert_eq!(rec.counter(names::RESUMES, &outcome("replayed")), 1);

        // A character inside the tag, away from the last one (whose unused low bits would
        // make some flips a non-canonical encoding: malformed, not tampered).
        let mut bytes = token.clone().into_bytes();
        let at = bytes.len() - 3;
        bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).unwrap();
        let tampered = wire(e.resume(&request(Some(&tampered))).unwrap_err());
        assert_eq!(rec.counter(names::RESUMES, &outcome("tampered")), 1);

        let stale = e.pause(&request(None), Round::FIRST, b"x").unwrap();
        clock.advance(EngineConfig::for_audience("test-service").ttl_ms);
        let expired = wire(e.resume(&request(Some(&stale))).unwrap_err());
        assert_eq!(rec.counter(names::RESUMES, &outcome("expired")), 1);

        // Operators see three reasons; the client saw one error three times.
        assert_eq!(replayed, tampered);
        assert_eq!(replayed, expired);
        assert_eq!(replayed["data"]["reason"], "invalid_request_state");
        assert_eq!(rec.counter_sum(names::RESUMES), 5);
    });
}

#[test]
fn pause_refusals_name_the_round_cap_and_unbindable_arguments() {
    let rec = TestRecorder::default();
    with_local_recorder(&rec, || {
        let clock = ManualClock::new(T0);
        let one_round = EngineConfig {
            max_rounds: 1,
            ..EngineConfig::for_audience("test-service")
        };
        let e = engine(&clock, one_round, 0);
        assert!(e.pause(&request(None), Round::FIRST, b"x").is_err());
        let cause = |c| [TOOLS, ("cause", c)];
        assert_eq!(rec.counter(names::PAUSE_REFUSALS, &cause("round_cap")), 1);

        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"name":"t","arguments":{"n":1.00000000000000000001}}}"#;
        let message: Value = serde_json::from_str(body).unwrap();
        let Precheck::Unbindable(v) = precheck_raw(&message, body.as_bytes(), ErrorDetail::Uniform)
        else {
            panic!("not flagged")
        };
        let e = engine(&clock, EngineConfig::for_audience("test-service"), 0);
        let req = request(None).not_i_json(v);
        assert!(e.pause(&req, Round::FIRST, b"x").is_err());
        assert_eq!(rec.counter(names::PAUSE_REFUSALS, &cause("unbindable")), 1);
        assert_eq!(rec.counter_sum(names::SEALS), 0);
    });
}

#[test]
fn reloads_count_applied_and_refused_and_retired_keys_leave_the_gauges() {
    let rec = TestRecorder::default();
    with_local_recorder(&rec, || {
        let node = Engine::with_clock(
            Backend::ChaCha20Poly1305,
            keys("current=k1; k1:K1"),
            EngineConfig::for_audience("test-service"),
            AnyReplayCache::Off,
            ManualClock::new(T0),
        )
        .unwrap();
        node.reload(keys("current=k2; k1:K1; k2:K2")).unwrap();
        assert_eq!(
            rec.gauge(names::KEY_CURRENT, &[("key_id", "k2")]),
            Some(1.0)
        );
        assert_eq!(
            rec.gauge(names::KEY_CURRENT, &[("key_id", "k1")]),
            Some(0.0)
        );
        node.reload(keys("current=k2; k2:K2")).unwrap();
        assert_eq!(
            rec.gauge(names::KEY_CONFIGURED, &[("key_id", "k1")]),
            Some(0.0)
        );
        assert_eq!(rec.counter(names::KEY_RELOADS, &[("result", "applied")]), 2);
        // k2 with k1's material: refused.
        let reused = KeyConfig::parse_env(&format!("current=k2; k2:{KEY1_B64}")).unwrap();
        assert!(node.reload(reused).is_err());
        assert_eq!(rec.counter(names::KEY_RELOADS, &[("result", "refused")]), 1);
    });
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn redis_calls_are_timed_and_errors_and_readiness_are_published() {
    let rec = TestRecorder::default();
    let mut redis = RedisServer::start();
    let cache = RedisReplayCache::builder(redis.url())
        .prefix("metrics-test:")
        .policy_recheck_interval(Duration::ZERO)
        .reconnect_backoff(Duration::ZERO)
        .connect_timeout(Duration::from_secs(5))
        .command_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let node = Engine::with_clock(
        Backend::Aes256Gcm,
        keys("current=k1; k1:K1"),
        EngineConfig::for_audience("test-service"),
        AnyReplayCache::Redis(cache),
        mrtr_std::clock::SystemClock,
    )
    .unwrap();
    let store = ("store", "redis");
    let ready = [store, ("prefix", "metrics-test:")];
    let not_ready = |c| [store, ("prefix", "metrics-test:"), ("cause", c)];
    with_local_recorder(&rec, || {
        current_thread().block_on(async {
            assert!(node.probe().await.is_ready(), "{}", rec.dump());
            assert_eq!(rec.gauge(names::REPLAY_STORE_READY, &ready), Some(1.0));
            assert_eq!(rec.gauge(names::READY, &[]), Some(1.0));

            let e = node.current();
            let token = e.pause(&request(None), Round::FIRST, b"x").unwrap();
            e.resume_async(&request(Some(&token))).await.unwrap();
            let replay = e.resume_async(&request(Some(&token))).await.unwrap_err();
            assert_eq!(replay.rejection().unwrap().reason(), Reason::Replayed);
            let took = |o| rec.histogram(names::REPLAY_STORE_DURATION, &[store, ("outcome", o)]);
            assert_eq!(took("recorded").len(), 1);
            assert_eq!(took("replayed").len(), 1);
            assert!(took("recorded")[0] > 0.0);

            // An evicting policy: not ready for that cause, and each refusal is an error.
            redis.config_set("maxmemory-policy", "allkeys-lru");
            let token = e.pause(&request(None), Round::FIRST, b"y").unwrap();
            let refused = e.resume_async(&request(Some(&token))).await.unwrap_err();
            assert_eq!(
                refused.rejection().unwrap().reason(),
                Reason::ReplayStoreUnavailable
            );
            assert_eq!(took("unavailable").len(), 1);
            let policy = [store, ("kind", "policy")];
            assert_eq!(rec.counter(names::REPLAY_STORE_ERRORS, &policy), 1);
            assert_eq!(rec.gauge(names::REPLAY_STORE_READY, &ready), Some(0.0));
            let evicting = not_ready("evicting_policy");
            assert_eq!(
                rec.gauge(names::REPLAY_STORE_NOT_READY, &evicting),
                Some(1.0)
            );
            assert_eq!(
                rec.gauge(names::REPLAY_STORE_NOT_READY, &not_ready("unreachable")),
                Some(0.0)
            );
            let outcome = [TOOLS, ("outcome", "replay_store_unavailable")];
            assert_eq!(rec.counter(names::RESUMES, &outcome), 1);

            // Redis gone: unreachable, and the resume's failure is counted.
            redis.stop();
            let token = e.pause(&request(None), Round::FIRST, b"z").unwrap();
            assert!(e.resume_async(&request(Some(&token))).await.is_err());
            let errors = rec.counter_sum(names::REPLAY_STORE_ERRORS);
            assert!(errors >= 2, "{}", rec.dump());
            assert!(!node.probe().await.is_ready());
            assert_eq!(
                rec.gauge(names::REPLAY_STORE_NOT_READY, &not_ready("unreachable")),
                Some(1.0),
                "{}",
                rec.dump()
            );
            assert_eq!(
                rec.gauge(names::REPLAY_STORE_NOT_READY, &evicting),
                Some(0.0)
            );
            assert_eq!(rec.gauge(names::READY, &[]), Some(0.0));
        });
    });
}

#[test]
fn the_blocking_redis_store_is_timed_and_reports_a_refused_policy() {
    use mrtr_std::core::replay::{ReplayCache, ReplayError};
    let rec = TestRecorder::default();
    let redis = RedisServer::start_with(&["--maxmemory-policy", "allkeys-lfu"]);
    let cache = RedisReplayCache::builder(redis.url())
        .prefix("blocking-metrics:")
        .connect_timeout(Duration::from_secs(5))
        .command_timeout(Duration::from_secs(5))
        .build_blocking()
        .unwrap();
    with_local_recorder(&rec, || {
        let store = ("store", "redis_blocking");
        assert_eq!(
            cache.check_and_record(&[1; 16], T0 + 60_000, T0),
            Err(ReplayError::Unavailable)
        );
        let policy = [store, ("kind", "policy")];
        assert_eq!(rec.counter(names::REPLAY_STORE_ERRORS, &policy), 1);
        let took = rec.histogram(
            names::REPLAY_STORE_DURATION,
            &[store, ("outcome", "unavailable")],
        );
        assert_eq!(took.len(), 1);
        let labels = [store, ("prefix", "blocking-metrics:")];
        assert_eq!(rec.gauge(names::REPLAY_STORE_READY, &labels), Some(0.0));
        let cause = [
            store,
            ("prefix", "blocking-metrics:"),
            ("cause", "evicting_policy"),
        ];
        assert_eq!(rec.gauge(names::REPLAY_STORE_NOT_READY, &cause), Some(1.0));

        redis.config_set("maxmemory-policy", "noeviction");
        assert!(cache.probe().is_ready());
        assert_eq!(rec.gauge(names::REPLAY_STORE_READY, &labels), Some(1.0));
        assert_eq!(cache.check_and_record(&[1; 16], T0 + 60_000, T0), Ok(()));
        let took = rec.histogram(
            names::REPLAY_STORE_DURATION,
            &[store, ("outcome", "recorded")],
        );
        assert_eq!(took.len(), 1);
    });
}
