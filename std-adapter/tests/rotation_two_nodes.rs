//! The three-phase key rotation across two nodes sharing one Redis replay store, applied one
//! node at a time (a rolling deploy): at every step tokens cross both ways and stay single
//! use. And why the phases matter: promoting a key before every node has it breaks tokens.

mod support;

use std::time::Duration;

use mrtr_replay::AnyReplayCache;
use mrtr_replay::redis::RedisReplayCache;
use mrtr_std::clock::ManualClock;
use mrtr_std::core::{Reason, Round};
use mrtr_std::engine::{Backend, Engine, EngineConfig, Step};
use mrtr_std::keys::KeyConfig;
use support::redis::RedisServer;
use support::{T0, booking};

type Node = Engine<AnyReplayCache, ManualClock>;

const PHASE0: &str = "current=k1; k1:K1";
const PHASE1: &str = "current=k1; k1:K1; k2:K2";
const PHASE2: &str = "current=k2; k2:K2; k1:K1";
const PHASE3: &str = "current=k2; k2:K2";

fn keys(spec: &str) -> KeyConfig {
    support::key_spec(spec)
}

fn node(redis: &RedisServer, clock: &ManualClock) -> Node {
    let cache = RedisReplayCache::builder(redis.url())
        .prefix("rotation:")
        .connect_timeout(Duration::from_secs(5))
        .command_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    Engine::with_clock(
        Backend::Aes256Gcm,
        keys(PHASE0),
        EngineConfig::for_audience("test-service"),
        AnyReplayCache::Redis(cache),
        clock.clone(),
    )
    .unwrap()
}

/// Seals on `from`, resumes on `to`, then replays on `from`: refused. Returns the sealing key.
async fn cross(from: &Node, to: &Node, step: &str) -> String {
    let sealer = from.current();
    let token = sealer
        .pause(&booking(None), Round::FIRST, step.as_bytes())
        .unwrap();
    let resumed = to.current().resume_async(&booking(Some(&token))).await;
    let Ok(Step::Resumed(r)) = resumed else {
        panic!("{step}: a token did not cross: {resumed:?}")
    };
    assert_eq!(r.continuation(), step.as_bytes());
    let replay = from
        .current()
        .resume_async(&booking(Some(&token)))
        .await
        .unwrap_err();
    assert_eq!(
        replay.rejection().unwrap().reason(),
        Reason::Replayed,
        "{step}: replay on the other node"
    );
    sealer.current_key_id().as_str().to_owned()
}

async fn both_ways(a: &Node, b: &Node, step: &str) -> (String, String) {
    (
        cross(a, b, &format!("{step} a->b")).await,
        cross(b, a, &format!("{step} b->a")).await,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_three_phase_rotation_keeps_tokens_crossing_both_ways_at_every_step() {
    let redis = RedisServer::start();
    let clock = ManualClock::new(T0);
    let (a, b) = (node(&redis, &clock), node(&redis, &clock));
    assert_eq!(
        both_ways(&a, &b, "phase 0").await,
        ("k1".into(), "k1".into())
    );
    // In flight across the whole rotation until phase 3: sealed under k1, never resumed.
    let in_flight = a
        .current()
        .pause(&booking(None), Round::FIRST, b"in flight")
        .unwrap();

    // Phase 1, one node at a time: k2 added, open-only.
    assert!(a.reload(keys(PHASE1)).unwrap().warnings.is_empty());
    assert_eq!(
        both_ways(&a, &b, "phase 1, a only").await,
        ("k1".into(), "k1".into())
    );
    assert!(b.reload(keys(PHASE1)).unwrap().warnings.is_empty());
    assert_eq!(
        both_ways(&a, &b, "phase 1").await,
        ("k1".into(), "k1".into())
    );

    // Phase 2, one node at a time: k2 seals. b, still in phase 1, opens a's k2 tokens.
    assert!(a.reload(keys(PHASE2)).unwrap().warnings.is_empty());
    assert_eq!(
        both_ways(&a, &b, "phase 2, a only").await,
        ("k2".into(), "k1".into())
    );
    assert!(b.reload(keys(PHASE2)).unwrap().warnings.is_empty());
    assert_eq!(
        both_ways(&a, &b, "phase 2").await,
        ("k2".into(), "k2".into())
    );

    // Until k1 is retired, the token sealed under it in phase 0 still opens, once.
    clock.advance(EngineConfig::for_audience("test-service").ttl_ms - 1);
    assert!(matches!(
        b.current().resume_async(&booking(Some(&in_flight))).await,
        Ok(Step::Resumed(_))
    ));

    // Phase 3, one TTL after phase 2: k1 retired, no warning.
    clock.advance(1);
    let r = a.reload(keys(PHASE3)).unwrap();
    assert_eq!(r.removed.len(), 1);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(
        both_ways(&a, &b, "phase 3, a only").await,
        ("k2".into(), "k2".into())
    );
    assert!(b.reload(keys(PHASE3)).unwrap().warnings.is_empty());
    assert_eq!(
        both_ways(&a, &b, "phase 3").await,
        ("k2".into(), "k2".into())
    );

    // A k1 token is refused everywhere now (its key is gone).
    let old = Engine::with_clock(
        Backend::Aes256Gcm,
        keys(PHASE0),
        EngineConfig::for_audience("test-service"),
        AnyReplayCache::Off,
        clock.clone(),
    )
    .unwrap()
    .current()
    .pause(&booking(None), Round::FIRST, b"old")
    .unwrap();
    for n in [&a, &b] {
        let err = n
            .current()
            .resume_async(&booking(Some(&old)))
            .await
            .unwrap_err();
        assert_eq!(err.rejection().unwrap().reason(), Reason::UnknownKey);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promoting_a_key_before_every_node_has_it_breaks_tokens() {
    let redis = RedisServer::start();
    let clock = ManualClock::new(T0);
    let (a, b) = (node(&redis, &clock), node(&redis, &clock));
    // The two-step rotation: a promotes k2 at once; b does not have it yet.
    let r = a.reload(keys(PHASE2)).unwrap();
    assert!(
        r.warnings
            .iter()
            .any(|w| matches!(w, mrtr_std::engine::ReloadWarning::SealsBeforeDistributed(k) if k.as_str() == "k2")),
        "{:?}",
        r.warnings
    );
    let token = a
        .current()
        .pause(&booking(None), Round::FIRST, b"x")
        .unwrap();
    let err = b
        .current()
        .resume_async(&booking(Some(&token)))
        .await
        .unwrap_err();
    assert_eq!(err.rejection().unwrap().reason(), Reason::UnknownKey);
}
