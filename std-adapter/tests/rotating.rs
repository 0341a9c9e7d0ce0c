//! Reloading keys while serving: in-flight tokens, shared single use, carried seal counts.

mod support;

use mrtr_std::clock::ManualClock;
use mrtr_std::core::{Reason, Round};
use mrtr_std::engine::{Backend, Limits, Rotating, Step};
use mrtr_std::jsonrpc::ResumeRequest;
use mrtr_std::keys::KeyConfig;
use mrtr_std::replay::AnyReplayCache;
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
    let node = Rotating::with_clock(
        Backend::ChaCha20Poly1305,
        keys("current=k1; k1:K1"),
        Limits::for_audience("rotating-tests"),
        AnyReplayCache::memory(100),
        clock,
    )
    .unwrap();
    let under_k1 = node
        .engine()
        .pause(&request(None), Round::FIRST, b"a")
        .unwrap();
    let spent = node
        .engine()
        .pause(&request(None), Round::FIRST, b"b")
        .unwrap();
    assert!(node.engine().resume(&request(Some(&spent))).is_ok());
    let seals_before = node.engine().seals_used();

    // Phase 1: k2 added, open-only. Phase 2: k2 seals.
    let r = node.reload(keys("current=k1; k1:K1; k2:K2")).unwrap();
    assert_eq!(r.added.len(), 1);
    assert!(r.removed.is_empty());
    assert_eq!(
        node.engine().seals_used()[0],
        seals_before[0],
        "k1's count carried over"
    );
    node.reload(keys("current=k2; k1:K1; k2:K2")).unwrap();
    let under_k2 = node
        .engine()
        .pause(&request(None), Round::FIRST, b"c")
        .unwrap();
    assert_eq!(node.engine().current_key_id().as_str(), "k2");

    // The token sealed under k1 before the reloads still opens; the spent one stays spent.
    assert!(matches!(
        node.engine().resume(&request(Some(&under_k1))),
        Ok(Step::Resumed(_))
    ));
    let replay = node.engine().resume(&request(Some(&spent))).unwrap_err();
    assert_eq!(replay.rejection().unwrap().reason(), Reason::Replayed);

    // Phase 3: k1 retired: its tokens stop opening, k2's do not.
    let another_k1 = {
        // Sealed by a node still in phase 2 would be k2; make one under k1 on a phase-1 copy.
        let old = Rotating::with_clock(
            Backend::ChaCha20Poly1305,
            keys("current=k1; k1:K1; k2:K2"),
            Limits::for_audience("rotating-tests"),
            AnyReplayCache::Off,
            ManualClock::new(T0),
        )
        .unwrap();
        old.engine()
            .pause(&request(None), Round::FIRST, b"d")
            .unwrap()
    };
    let r = node.reload(keys("current=k2; k2:K2")).unwrap();
    assert_eq!(r.removed.len(), 1);
    let gone = node
        .engine()
        .resume(&request(Some(&another_k1)))
        .unwrap_err();
    assert_eq!(gone.rejection().unwrap().reason(), Reason::UnknownKey);
    assert!(node.engine().resume(&request(Some(&under_k2))).is_ok());
}

#[test]
fn a_failed_reload_changes_nothing() {
    let node = Rotating::new(
        Backend::Aes256Gcm,
        keys("current=k1; k1:K1"),
        Limits::for_audience("rotating-tests"),
        AnyReplayCache::Off,
    )
    .unwrap();
    let five: Vec<String> = (1..=5).map(|i| format!("k{i}:K1")).collect();
    let too_many = keys(&format!("current=k1; {}", five.join("; ")));
    assert!(node.reload(too_many).is_err());
    assert_eq!(node.engine().current_key_id().as_str(), "k1");
}
