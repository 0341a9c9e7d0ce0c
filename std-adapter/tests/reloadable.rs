//! Reloading keys while serving: in-flight tokens, shared single use, carried seal counts.

mod support;

use mrtr_replay::AnyReplayCache;
use mrtr_std::clock::ManualClock;
use mrtr_std::core::{Reason, Round};
use mrtr_std::engine::{Backend, Engine, EngineConfig, Step};
use mrtr_std::jsonrpc::ResumeRequest;
use mrtr_std::keys::KeyConfig;
use support::T0;

fn keys(spec: &str) -> KeyConfig {
    support::key_spec(spec)
}

fn request(state: Option<&str>) -> ResumeRequest<'_> {
    support::call("t", state)
}

#[test]
fn a_three_phase_rotation_keeps_every_token_in_flight_and_single_use() {
    let clock = ManualClock::new(T0);
    let node = Engine::with_clock(
        Backend::ChaCha20Poly1305,
        keys("current=k1; k1:K1"),
        EngineConfig::for_audience("rotating-tests"),
        AnyReplayCache::memory(100),
        clock,
    )
    .unwrap();
    let under_k1 = node
        .current()
        .pause(&request(None), Round::FIRST, b"a")
        .unwrap();
    let spent = node
        .current()
        .pause(&request(None), Round::FIRST, b"b")
        .unwrap();
    assert!(node.current().resume(&request(Some(&spent))).is_ok());
    let seals_before = node.current().seals_used();

    // Phase 1: k2 added, open-only. Phase 2: k2 seals.
    let r = node.reload(keys("current=k1; k1:K1; k2:K2")).unwrap();
    assert_eq!(r.added.len(), 1);
    assert!(r.removed.is_empty());
    assert_eq!(
        node.current().seals_used()[0],
        seals_before[0],
        "k1's count carried over"
    );
    node.reload(keys("current=k2; k1:K1; k2:K2")).unwrap();
    let under_k2 = node
        .current()
        .pause(&request(None), Round::FIRST, b"c")
        .unwrap();
    assert_eq!(node.current().current_key_id().as_str(), "k2");

    // The token sealed under k1 before the reloads still opens; the spent one stays spent.
    assert!(matches!(
        node.current().resume(&request(Some(&under_k1))),
        Ok(Step::Resumed(_))
    ));
    let replay = node.current().resume(&request(Some(&spent))).unwrap_err();
    assert_eq!(replay.rejection().unwrap().reason(), Reason::Replayed);

    // Phase 3: k1 retired: its tokens stop opening, k2's do not.
    let another_k1 = {
        // Sealed by a node still in phase 2 would be k2; make one under k1 on a phase-1 copy.
        let old = Engine::with_clock(
            Backend::ChaCha20Poly1305,
            keys("current=k1; k1:K1; k2:K2"),
            EngineConfig::for_audience("rotating-tests"),
            AnyReplayCache::Off,
            ManualClock::new(T0),
        )
        .unwrap();
        old.current()
            .pause(&request(None), Round::FIRST, b"d")
            .unwrap()
    };
    let r = node.reload(keys("current=k2; k2:K2")).unwrap();
    assert_eq!(r.removed.len(), 1);
    let gone = node
        .current()
        .resume(&request(Some(&another_k1)))
        .unwrap_err();
    assert_eq!(gone.rejection().unwrap().reason(), Reason::UnknownKey);
    assert!(node.current().resume(&request(Some(&under_k2))).is_ok());
}

#[test]
fn a_failed_reload_changes_nothing() {
    let node = Engine::new(
        Backend::Aes256Gcm,
        keys("current=k1; k1:K1"),
        EngineConfig::for_audience("rotating-tests"),
        AnyReplayCache::Off,
    )
    .unwrap();
    let too_many = keys(&format!("current=k1; {}", support::five_keys()));
    assert!(node.reload(too_many).is_err());
    assert_eq!(node.current().current_key_id().as_str(), "k1");
}

/// The v1 window (audience-less format-v1 tokens open for one maximum lifetime plus the skew
/// after start) is resolved once, when the engine is built. A reload later, by SIGHUP or a
/// changed key file, keeps the instant the window closed: it never opens it again.
#[test]
fn a_reload_never_reopens_the_v1_window() {
    use mrtr_std::core::AcceptV1;
    let clock = ManualClock::new(T0);
    let limits = EngineConfig::for_audience("rotating-tests");
    let window = limits.ttl_ms + limits.max_clock_skew_ms;
    let node = Engine::with_clock(
        Backend::Aes256Gcm,
        keys("current=k1; k1:K1"),
        limits,
        AnyReplayCache::Off,
        clock.clone(),
    )
    .unwrap();
    let closes = AcceptV1::Until(T0 + window);
    assert_eq!(node.current().limits().accept_v1, closes);
    // An hour later the window has long closed; a reload (same keys, then a rotation step)
    // builds new generations that close it at the same instant.
    clock.advance(3_600_000);
    node.reload(keys("current=k1; k1:K1")).unwrap();
    assert_eq!(node.current().limits().accept_v1, closes);
    node.reload(keys("current=k1; k1:K1; k2:K2")).unwrap();
    assert_eq!(node.current().limits().accept_v1, closes);
    assert_eq!(node.limits().accept_v1, closes);
}

/// The reload ledger remembers every key the process has seen, so no reload gives a key a
/// fresh seal count: not the same material under a new id, not a key removed and re-added,
/// and not a removed id re-added with other material.
#[test]
fn no_reload_resets_a_seal_budget() {
    use mrtr_std::engine::EngineConfigError;
    let node = Engine::with_clock(
        Backend::Aes256Gcm,
        keys("current=k1; k1:K1"),
        EngineConfig::for_audience("rotating-tests"),
        AnyReplayCache::Off,
        ManualClock::new(T0),
    )
    .unwrap();
    for _ in 0..3 {
        node.current()
            .pause(&request(None), Round::FIRST, b"s")
            .unwrap();
    }
    let count = |id: &str| {
        node.current()
            .seals_used()
            .iter()
            .find(|(k, _)| k.as_str() == id)
            .map(|(_, n)| *n)
    };
    assert_eq!(count("k1"), Some(3));

    // The same material under a new id: refused (beside its old id, one configuration
    // cannot even say it: see below).
    let err = node.reload(keys("current=k9; k9:K1")).unwrap_err();
    assert!(
        matches!(&err, EngineConfigError::KeyMaterialReused { id, known_as }
            if id.as_str() == "k9" && known_as.as_str() == "k1"),
        "{err:?}"
    );
    assert_eq!(node.current().current_key_id().as_str(), "k1");
    assert_eq!(count("k1"), Some(3), "a refused reload changes nothing");

    // k1 removed (k2 seals), then re-added: its count comes back, not 0.
    node.reload(keys("current=k1; k1:K1; k2:K2")).unwrap();
    node.reload(keys("current=k2; k1:K1; k2:K2")).unwrap();
    node.reload(keys("current=k2; k2:K2")).unwrap();
    assert_eq!(count("k1"), None);
    node.reload(keys("current=k2; k2:K2; k1:K1")).unwrap();
    assert_eq!(count("k1"), Some(3));

    // A removed id re-added with other material: refused, naming the id, never the material.
    node.reload(keys("current=k2; k2:K2")).unwrap();
    let other = "current=k2; k2:K2; k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=";
    let err = node.reload(keys(other)).unwrap_err();
    assert!(
        matches!(&err, EngineConfigError::KeyIdReused(id) if id.as_str() == "k1"),
        "{err:?}"
    );
    assert!(!err.to_string().contains("QUFB"), "{err}");
    // k1's old material under k3 after it was removed: refused too.
    let err = node.reload(keys("current=k2; k2:K2; k3:K1")).unwrap_err();
    assert!(
        matches!(&err, EngineConfigError::KeyMaterialReused { id, known_as }
            if id.as_str() == "k3" && known_as.as_str() == "k1"),
        "{err:?}"
    );
    assert!(err.to_string().contains("k1"), "{err}");
}

/// One configuration that gives the same material two ids is refused as it is read.
#[test]
fn one_configuration_cannot_give_one_key_two_ids() {
    use mrtr_std::keys::{KeyConfig, KeyConfigProblem};
    let spec = format!("current=k1; k1:{0}; k2:{0}", support::KEY1_B64);
    let err = KeyConfig::parse_env(&spec).unwrap_err();
    assert_eq!(err.problem(), &KeyConfigProblem::DuplicateKeyMaterial);
    assert!(err.to_string().contains("k2"), "{err}");
    assert!(!err.to_string().contains(support::KEY1_B64), "{err}");
}
