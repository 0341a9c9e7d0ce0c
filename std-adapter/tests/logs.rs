//! Every rejection is logged with its precise reason; no token, key or continuation ever
//! appears in a log line or a `Debug` output.

mod support;

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_replay::MemoryReplayCache;
use mrtr_replay::redis::RedisReplayCache;
use mrtr_std::clock::ManualClock;
use mrtr_std::core::{ErrorDetail, Principal, Reason, Round};
use mrtr_std::engine::{CipherEngine, Step};
use mrtr_std::jsonrpc::ResumeRequest;
use mrtr_std::keys::KeyConfig;
use serde_json::{Value, json};
use support::{KEY1_B64, KEY2_B64, T0, capture_logs, mrtr};

const CONTINUATION: &[u8] = b"CONT-SECRET-4b1d9e";
const ALICE: Principal<'static> = Principal::User {
    issuer: "https://idp",
    subject: "alice",
};

fn params(args: Value, state: Option<Value>) -> Value {
    let mut p = json!({"name": "book", "arguments": args,
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    if let Some(s) = state {
        p["requestState"] = s;
    }
    p
}

/// Asserts that `text` holds none of the secrets (whole, or any 12-byte window of a token).
fn assert_clean(text: &str, tokens: &[String]) {
    for t in tokens {
        assert!(!text.contains(t.as_str()), "a token leaked");
        for w in t.as_bytes().windows(12).step_by(6) {
            let w = std::str::from_utf8(w).unwrap();
            assert!(!text.contains(w), "a fragment of a token leaked: {w}");
        }
    }
    for key in [KEY1_B64, KEY2_B64] {
        assert!(
            !text.contains(key) && !text.contains(&key[..16]),
            "key material leaked"
        );
    }
    assert!(!text.contains("CONT-SECRET"), "continuation leaked");
    // Key bytes as a Rust byte array (what a derived Debug would print).
    assert!(!text.contains("0, 1, 2, 3, 4, 5"), "key bytes leaked");
}

#[test]
fn every_rejection_is_logged_with_its_reason_and_nothing_secret_leaks() {
    let clock = ManualClock::new(T0);
    let engine = CipherEngine::new(
        mrtr(&clock, ErrorDetail::Uniform),
        MemoryReplayCache::with_shards(1, 1),
    );
    let mut tokens = Vec::new();
    let mut debug_dump = String::new();

    let ((), logs) = capture_logs(|| {
        let fresh = params(json!({"n": 1}), None);
        let req = ResumeRequest::from_params("tools/call", &fresh, ALICE)
            .unwrap()
            .unwrap();
        let result = engine
            .input_required(&req, Round::FIRST, CONTINUATION, None)
            .unwrap();
        let token = result["requestState"].as_str().unwrap().to_owned();
        tokens.push(token.clone());
        let second = engine.pause(&req, Round::FIRST, CONTINUATION).unwrap();
        tokens.push(second.clone());

        let reject = |p: Value, who: Principal<'_>, want: Reason| -> String {
            let req = ResumeRequest::from_params("tools/call", &p, who)
                .unwrap()
                .unwrap();
            let err = engine.resume(&req).unwrap_err();
            assert_eq!(err.rejection().unwrap().reason(), want);
            format!("{req:?}\n{err:?}\n{err}\n")
        };
        let bob = Principal::User {
            issuer: "https://idp",
            subject: "bob",
        };
        debug_dump.push_str(&reject(
            params(json!({"n": 1}), Some(token.clone().into())),
            bob,
            Reason::Tampered,
        ));
        debug_dump.push_str(&reject(
            params(json!({"n": 2}), Some(token.clone().into())),
            ALICE,
            Reason::ArgumentsMismatch,
        ));
        debug_dump.push_str(&reject(
            params(json!({"n": 1}), Some(json!(7))),
            ALICE,
            Reason::Malformed,
        ));
        debug_dump.push_str(&reject(
            params(json!({"n": 1}), Some("A".repeat(20_000).into())),
            ALICE,
            Reason::TooLong,
        ));

        // Accepted once (fills the 1-entry cache), then a replay, then the cache is full.
        let ok = params(json!({"n": 1}), Some(token.clone().into()));
        let req = ResumeRequest::from_params("tools/call", &ok, ALICE)
            .unwrap()
            .unwrap();
        let step = engine.resume(&req).unwrap();
        let Step::Resumed(r) = &step else { panic!() };
        assert_eq!(r.continuation(), CONTINUATION);
        debug_dump.push_str(&format!("{step:?}\n{r:?}\n{req:?}\n"));
        debug_dump.push_str(&reject(ok.clone(), ALICE, Reason::Replayed));
        debug_dump.push_str(&reject(
            params(json!({"n": 1}), Some(second.into())),
            ALICE,
            Reason::ReplayStoreFull,
        ));

        clock.advance(10 * 60_000);
        debug_dump.push_str(&reject(ok, ALICE, Reason::Expired));

        // A Redis that is not there: replay_store_unavailable.
        let redis = RedisReplayCache::new("redis://127.0.0.1:1/").unwrap();
        let remote = CipherEngine::new(mrtr(&clock, ErrorDetail::Uniform), redis);
        let fresh = params(json!({}), None);
        let req = ResumeRequest::from_params("tools/call", &fresh, ALICE)
            .unwrap()
            .unwrap();
        let t3 = remote.pause(&req, Round::FIRST, CONTINUATION).unwrap();
        tokens.push(t3.clone());
        let p3 = params(json!({}), Some(t3.into()));
        let req3 = ResumeRequest::from_params("tools/call", &p3, ALICE)
            .unwrap()
            .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let err = rt.block_on(remote.resume_async(&req3)).unwrap_err();
        assert_eq!(
            err.rejection().unwrap().reason(),
            Reason::ReplayStoreUnavailable
        );

        // Everything that can be printed, printed.
        let keys =
            KeyConfig::parse_env(&format!("current=k2; k2:{KEY2_B64}; k1:{KEY1_B64}")).unwrap();
        debug_dump.push_str(&format!(
            "{keys:?}\n{engine:?}\n{remote:?}\n{:?}\n",
            engine.mrtr()
        ));
        let ring = keys.into_ring::<Aes256Gcm, 4>().unwrap();
        debug_dump.push_str(&format!("{ring:?}\n"));
        tracing::info!(?engine, ?req3, "debug of the engine and a request");
        let eph = KeyConfig::ephemeral().unwrap();
        debug_dump.push_str(&format!("{eph:?}\n"));
    });

    for reason in [
        "tampered",
        "arguments_mismatch",
        "malformed",
        "too_long",
        "replayed",
        "replay_store_full",
        "expired",
        "replay_store_unavailable",
    ] {
        assert!(
            logs.lines()
                .any(|l| l.contains("requestState") && l.contains(reason)),
            "no log line for {reason}:\n{logs}"
        );
    }
    assert_eq!(logs.matches("requestState rejected").count(), 6, "{logs}");
    assert_eq!(
        logs.matches("replay store cannot record it").count(),
        2,
        "{logs}"
    );
    assert!(
        logs.contains("WARN") && logs.contains("ephemeral random key"),
        "{logs}"
    );
    assert!(logs.contains("will not survive a restart"), "{logs}");
    assert!(logs.contains("cannot connect to Redis"), "{logs}");
    assert!(debug_dump.contains("<redacted>"), "{debug_dump}");
    assert_clean(&logs, &tokens);
    assert_clean(&debug_dump, &tokens);
}

#[test]
fn key_config_errors_never_contain_key_material() {
    // Each bad configuration holds real-looking key material; none of it may be echoed.
    let long_key = "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRW"; // 36 bytes
    let cases = [
        format!("current=k1; k1:{}", &KEY1_B64[..40]),
        format!("current=k1; k1:{long_key}"),
        format!("current=k1; k1:{}*", &KEY1_B64[..43]),
        format!("current=k1; {KEY1_B64}"),
        format!("current=k1; k1:{KEY1_B64}; k1:{KEY2_B64}"),
        format!("k1:{KEY1_B64}"),
        format!("current=k9; k1:{KEY1_B64}"),
        format!("current=k1; b@d:{KEY1_B64}"),
        format!("current={KEY2_B64}; k1:{KEY1_B64}"),
    ];
    for c in cases {
        let err = KeyConfig::parse_env(&c).unwrap_err();
        let shown = format!("{err} {err:?}");
        assert!(
            !shown.contains(&KEY1_B64[..12])
                && !shown.contains(&KEY2_B64[..12])
                && !shown.contains(&long_key[..12]),
            "{shown}"
        );
    }
}
