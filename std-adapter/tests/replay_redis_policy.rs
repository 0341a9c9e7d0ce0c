//! The Redis replay caches refuse a Redis that can evict live entries, report it through
//! readiness and an error log, notice a policy changed on a live server, and never accept a
//! replay when Redis fills up. Against real `redis-server`s started by the test.
#![cfg(feature = "redis")]

mod support;

use std::future::Future;
use std::time::{Duration, Instant};

use mrtr_replay::redis::{RedisReplayCache, RedisReplayCacheBuilder};
use mrtr_replay::{AnyReplayCache, AsyncReplayCache, EvictionPolicy, NotReadyCause, Readiness};
use mrtr_std::clock::ManualClock;
use mrtr_std::core::replay::{ReplayCache, ReplayError};
use mrtr_std::core::{ErrorDetail, Principal, Reason, Round};
use mrtr_std::engine::CipherEngine;
use mrtr_std::jsonrpc::ResumeRequest;
use serde_json::json;
use support::redis::RedisServer;
use support::{T0, capture_logs, mrtr};

const NOW: u64 = 1_000_000;
/// Entries that outlive the test: nothing expires while memory fills.
const HOUR: u64 = 3_600_000;

fn id(n: u64) -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&n.to_le_bytes());
    id[8..].copy_from_slice(&(!n).to_be_bytes());
    id
}

fn builder(server: &RedisServer, prefix: &str) -> RedisReplayCacheBuilder {
    RedisReplayCache::builder(server.url())
        .prefix(prefix)
        .connect_timeout(Duration::from_secs(2))
        .command_timeout(Duration::from_secs(2))
        .reconnect_backoff(Duration::from_millis(50))
}

fn cache(server: &RedisServer, prefix: &str) -> RedisReplayCache {
    builder(server, prefix).build().unwrap()
}

/// Runs `f` on a current-thread runtime under a subscriber that keeps every event.
fn logged<T>(f: impl Future<Output = T>) -> (T, String) {
    capture_logs(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    })
}

/// Log lines at `level` that mention `needle`.
fn lines<'a>(logs: &'a str, level: &str, needle: &str) -> Vec<&'a str> {
    logs.lines()
        .filter(|l| l.contains(level) && l.contains(needle))
        .collect()
}

fn dbsize(server: &RedisServer) -> u64 {
    server.command(&["DBSIZE"]).unwrap()[1..].parse().unwrap()
}

/// Polls `f` until it returns true; fails after 15 s.
async fn eventually(what: &str, mut f: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !f().await {
        assert!(Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[test]
fn every_evicting_policy_is_refused_with_readiness_and_one_error_log() {
    let policies = [
        ("volatile-lru", EvictionPolicy::VolatileLru),
        ("allkeys-lru", EvictionPolicy::AllkeysLru),
        ("volatile-lfu", EvictionPolicy::VolatileLfu),
        ("allkeys-lfu", EvictionPolicy::AllkeysLfu),
        ("volatile-random", EvictionPolicy::VolatileRandom),
        ("allkeys-random", EvictionPolicy::AllkeysRandom),
        ("volatile-ttl", EvictionPolicy::VolatileTtl),
    ];
    for (name, policy) in policies {
        let server = RedisServer::start_with(&["--maxmemory-policy", name]);
        let c = cache(&server, "evict:");
        let ((), logs) = logged(async {
            assert_eq!(
                c.readiness(),
                Readiness::NotReady(NotReadyCause::NotConnected)
            );
            let want = Readiness::NotReady(NotReadyCause::EvictingPolicy(policy));
            assert_eq!(c.probe().await, want, "{name}");
            for n in 0..5 {
                assert_eq!(
                    c.check_and_record(&id(n), NOW + HOUR, NOW).await,
                    Err(ReplayError::Unavailable),
                    "{name}"
                );
            }
            assert_eq!(c.readiness(), want);
        });
        // Nothing was recorded under the evicting policy.
        assert_eq!(dbsize(&server), 0, "{name}");
        // One error per connect (not one per refused resume), naming the setting and the fix.
        let errors = lines(&logs, "ERROR", "maxmemory-policy");
        assert_eq!(errors.len(), 1, "{name}: {logs}");
        for needle in [
            name,
            "CONFIG SET maxmemory-policy noeviction",
            "parameter group",
        ] {
            assert!(
                errors[0].contains(needle),
                "{needle} missing: {}",
                errors[0]
            );
        }
        assert!(!logs.contains(&server.url()), "the URL was logged");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumes_through_the_engine_are_refused_as_store_unavailable() {
    let server = RedisServer::start_with(&["--maxmemory-policy", "allkeys-lru"]);
    let clock = ManualClock::new(T0);
    let engine = CipherEngine::new(
        mrtr(&clock, ErrorDetail::Detailed),
        AnyReplayCache::Redis(cache(&server, "eng:")),
    );
    let who = Principal::User {
        issuer: "https://idp",
        subject: "alice",
    };
    let params = json!({"name": "t", "arguments": {"x": 1}});
    let req = ResumeRequest::from_params("tools/call", &params, who)
        .unwrap()
        .unwrap();
    let token = engine.pause(&req, Round::FIRST, b"c").unwrap();
    let retry = json!({"name": "t", "arguments": {"x": 1}, "requestState": token});
    let req = ResumeRequest::from_params("tools/call", &retry, who)
        .unwrap()
        .unwrap();
    for _ in 0..3 {
        let err = engine.resume_async(&req).await.unwrap_err();
        assert_eq!(
            err.rejection().unwrap().reason(),
            Reason::ReplayStoreUnavailable
        );
    }
    assert_eq!(
        engine.replay_cache().readiness(),
        Readiness::NotReady(NotReadyCause::EvictingPolicy(EvictionPolicy::AllkeysLru))
    );
}

#[test]
fn noeviction_is_ready_and_records_once() {
    let server = RedisServer::start();
    assert_eq!(
        server.info_field("memory", "maxmemory_policy"),
        "noeviction"
    );
    let any = AnyReplayCache::Redis(cache(&server, "ok:"));
    let ((), logs) = logged(async {
        assert_eq!(
            any.readiness(),
            Readiness::NotReady(NotReadyCause::NotConnected)
        );
        assert_eq!(any.probe().await, Readiness::Ready);
        assert_eq!(
            AsyncReplayCache::check_and_record(&any, &id(1), NOW + HOUR, NOW).await,
            Ok(())
        );
        assert_eq!(
            AsyncReplayCache::check_and_record(&any, &id(1), NOW + HOUR, NOW).await,
            Err(ReplayError::Replayed)
        );
        assert_eq!(any.readiness(), Readiness::Ready);
    });
    assert!(!logs.contains("ERROR") && !logs.contains("WARN"), "{logs}");
    assert_eq!(
        lines(&logs, "INFO", "maxmemory-policy noeviction").len(),
        1,
        "{logs}"
    );
    // The other stores are always ready.
    assert_eq!(AnyReplayCache::Off.readiness(), Readiness::Ready);
    assert_eq!(AnyReplayCache::memory(10).readiness(), Readiness::Ready);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_is_reported_without_the_url_and_heals() {
    let mut server = RedisServer::start_with(&["--requirepass", "hunter2"]);
    server.stop();
    let url = format!("redis://:hunter2@127.0.0.1:{}/", server.port());
    let c = RedisReplayCache::builder(url)
        .connect_timeout(Duration::from_secs(2))
        .reconnect_backoff(Duration::from_millis(50))
        .build()
        .unwrap();
    assert_eq!(
        c.readiness(),
        Readiness::NotReady(NotReadyCause::NotConnected)
    );
    let down = c.probe().await;
    assert_eq!(down, Readiness::NotReady(NotReadyCause::Unreachable));
    assert_eq!(down.cause().unwrap().code(), "unreachable");
    for text in [down.to_string(), format!("{down:?}"), format!("{c:?}")] {
        assert!(
            !text.contains("hunter2") && !text.contains("127.0.0.1"),
            "{text}"
        );
    }
    server.restart();
    eventually("ready after restart", async || c.probe().await.is_ready()).await;
    assert_eq!(c.check_and_record(&id(1), NOW + HOUR, NOW).await, Ok(()));
}

#[test]
fn the_override_records_under_an_evicting_policy_and_warns_at_every_connect() {
    let mut server = RedisServer::start_with(&["--maxmemory-policy", "allkeys-lru"]);
    let c = builder(&server, "override:")
        .allow_evicting_policy(true)
        .build()
        .unwrap();
    let ((), logs) = logged(async {
        assert_eq!(c.probe().await, Readiness::Ready);
        assert_eq!(c.check_and_record(&id(1), NOW + HOUR, NOW).await, Ok(()));
        assert_eq!(
            c.check_and_record(&id(1), NOW + HOUR, NOW).await,
            Err(ReplayError::Replayed)
        );
        server.stop();
        server.restart();
        // A reconnect is a connect: the warning comes again.
        eventually("reconnected", async || {
            c.check_and_record(&id(2), NOW + HOUR, NOW).await == Ok(())
        })
        .await;
    });
    let warnings = lines(&logs, "WARN", "allow_evicting_policy");
    assert_eq!(warnings.len(), 2, "{logs}");
    for w in &warnings {
        assert!(
            w.contains("maxmemory-policy is allkeys-lru") && w.contains("NOT guaranteed"),
            "{w}"
        );
    }
    assert!(
        lines(&logs, "ERROR", "maxmemory-policy").is_empty(),
        "{logs}"
    );
}

#[test]
fn a_policy_changed_on_a_live_server_is_picked_up_and_healed() {
    let server = RedisServer::start();
    let c = builder(&server, "live:")
        .policy_recheck_interval(Duration::from_millis(200))
        .build()
        .unwrap();
    let ((), logs) = logged(async {
        assert_eq!(c.check_and_record(&id(0), NOW + HOUR, NOW).await, Ok(()));
        server.config_set("maxmemory-policy", "volatile-lru");
        let mut n = 1;
        // Fresh ids are accepted until the re-check sees the new policy, then refused.
        eventually("the evicting policy is seen", async || {
            n += 1;
            c.check_and_record(&id(n), NOW + HOUR, NOW).await == Err(ReplayError::Unavailable)
        })
        .await;
        assert_eq!(
            c.readiness(),
            Readiness::NotReady(NotReadyCause::EvictingPolicy(EvictionPolicy::VolatileLru))
        );
        // Refused resumes record nothing.
        let before = dbsize(&server);
        for k in 0..20 {
            assert_eq!(
                c.check_and_record(&id(10_000 + k), NOW + HOUR, NOW).await,
                Err(ReplayError::Unavailable)
            );
        }
        assert_eq!(dbsize(&server), before);

        server.config_set("maxmemory-policy", "noeviction");
        eventually("resumes are recorded again", async || {
            n += 1;
            c.check_and_record(&id(n), NOW + HOUR, NOW).await == Ok(())
        })
        .await;
        assert_eq!(c.readiness(), Readiness::Ready);
        // Ids recorded before the change are still refused.
        assert_eq!(
            c.check_and_record(&id(0), NOW + HOUR, NOW).await,
            Err(ReplayError::Replayed)
        );
    });
    assert_eq!(
        lines(&logs, "ERROR", "maxmemory-policy is volatile-lru").len(),
        1,
        "{logs}"
    );
    assert_eq!(lines(&logs, "INFO", "noeviction again").len(), 1, "{logs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_sees_a_policy_change_without_traffic() {
    let server = RedisServer::start();
    // The default re-check interval (10 s) is longer than this test waits: only the probe
    // can notice.
    let c = cache(&server, "probe:");
    assert_eq!(c.probe().await, Readiness::Ready);
    server.config_set("maxmemory-policy", "allkeys-lfu");
    let refused = Readiness::NotReady(NotReadyCause::EvictingPolicy(EvictionPolicy::AllkeysLfu));
    eventually("the probe sees allkeys-lfu", async || {
        c.probe().await == refused
    })
    .await;
    assert_eq!(
        c.check_and_record(&id(1), NOW + HOUR, NOW).await,
        Err(ReplayError::Unavailable)
    );
    server.config_set("maxmemory-policy", "noeviction");
    eventually("the probe sees noeviction", async || {
        c.probe().await.is_ready()
    })
    .await;
    assert_eq!(c.check_and_record(&id(1), NOW + HOUR, NOW).await, Ok(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filling_memory_under_noeviction_never_accepts_a_replay() {
    let server = RedisServer::start();
    let c = cache(&server, "fill:");
    assert_eq!(c.probe().await, Readiness::Ready);
    let used: u64 = server.info_field("memory", "used_memory").parse().unwrap();
    server.config_set("maxmemory", &(used + 256 * 1024).to_string());

    // Record fresh ids until Redis refuses to store more.
    const CAP: u64 = 100_000;
    let mut recorded = Vec::new();
    let mut refused_in_a_row = 0;
    let mut n = 0;
    while refused_in_a_row < 20 {
        assert!(n < CAP, "Redis never ran out of memory");
        match c.check_and_record(&id(n), NOW + HOUR, NOW).await {
            Ok(()) => {
                recorded.push(n);
                refused_in_a_row = 0;
            }
            Err(ReplayError::Unavailable) => refused_in_a_row += 1,
            Err(e) => panic!("fresh id {n}: {e:?}"),
        }
        n += 1;
    }
    assert!(recorded.len() > 100, "only {} fit", recorded.len());
    assert_eq!(
        c.readiness(),
        Readiness::NotReady(NotReadyCause::OutOfMemory)
    );
    // Nothing was evicted, and while full, no recorded id is accepted again.
    assert_eq!(dbsize(&server), recorded.len() as u64);
    for &k in &recorded {
        assert_ne!(
            c.check_and_record(&id(k), NOW + HOUR, NOW).await,
            Ok(()),
            "replay of {k} accepted while full"
        );
    }

    // With memory again, every recorded id is refused as a replay and fresh ones pass.
    server.config_set("maxmemory", "0");
    eventually("ready once memory is back", async || {
        c.probe().await.is_ready()
    })
    .await;
    for &k in &recorded {
        assert_eq!(
            c.check_and_record(&id(k), NOW + HOUR, NOW).await,
            Err(ReplayError::Replayed),
            "id {k}"
        );
    }
    assert_eq!(c.check_and_record(&id(CAP), NOW + HOUR, NOW).await, Ok(()));
}

/// Why the policy check exists: with it overridden, filling memory under `allkeys-lru`
/// evicts live entries and spent tokens are accepted again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eviction_revives_spent_tokens_when_the_check_is_overridden() {
    let server = RedisServer::start_with(&["--maxmemory-policy", "allkeys-lru"]);
    let c = builder(&server, "revive:")
        .allow_evicting_policy(true)
        .build()
        .unwrap();
    assert_eq!(c.probe().await, Readiness::Ready);
    let used: u64 = server.info_field("memory", "used_memory").parse().unwrap();
    server.config_set("maxmemory", &(used + 128 * 1024).to_string());
    // About ten times what fits: every SET succeeds by evicting older entries.
    const IDS: u64 = 10_000;
    for n in 0..IDS {
        assert_eq!(c.check_and_record(&id(n), NOW + HOUR, NOW).await, Ok(()));
    }
    assert!(dbsize(&server) < IDS, "nothing was evicted");
    let mut accepted_again = 0;
    for n in 0..IDS {
        if c.check_and_record(&id(n), NOW + HOUR, NOW).await == Ok(()) {
            accepted_again += 1;
        }
    }
    assert!(accepted_again > 0, "no spent token came back");
}

#[test]
fn blocking_cache_refuses_an_evicting_policy_reports_it_and_heals() {
    let server = RedisServer::start_with(&["--maxmemory-policy", "volatile-ttl"]);
    let c = builder(&server, "sync-evict:")
        .policy_recheck_interval(Duration::from_millis(200))
        .build_blocking()
        .unwrap();
    let ((), logs) = capture_logs(|| {
        assert_eq!(
            c.readiness(),
            Readiness::NotReady(NotReadyCause::NotConnected)
        );
        let refused =
            Readiness::NotReady(NotReadyCause::EvictingPolicy(EvictionPolicy::VolatileTtl));
        assert_eq!(c.probe(), refused);
        for n in 0..5 {
            assert_eq!(
                c.check_and_record(&id(n), NOW + HOUR, NOW),
                Err(ReplayError::Unavailable)
            );
        }
        assert_eq!(c.readiness(), refused);
        assert_eq!(dbsize(&server), 0);

        server.config_set("maxmemory-policy", "noeviction");
        let deadline = Instant::now() + Duration::from_secs(15);
        while c.check_and_record(&id(100), NOW + HOUR, NOW) != Ok(()) {
            assert!(Instant::now() < deadline, "never healed");
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(c.readiness(), Readiness::Ready);

        // Full under noeviction: refused, reported, and healed once memory is back.
        server.config_set("maxmemory", "1");
        assert_eq!(
            c.check_and_record(&id(101), NOW + HOUR, NOW),
            Err(ReplayError::Unavailable)
        );
        assert_eq!(
            c.check_and_record(&id(100), NOW + HOUR, NOW),
            Err(ReplayError::Unavailable)
        );
        assert_eq!(
            c.readiness(),
            Readiness::NotReady(NotReadyCause::OutOfMemory)
        );
        server.config_set("maxmemory", "0");
        assert_eq!(c.check_and_record(&id(101), NOW + HOUR, NOW), Ok(()));
        assert_eq!(
            c.check_and_record(&id(100), NOW + HOUR, NOW),
            Err(ReplayError::Replayed)
        );
        assert_eq!(c.readiness(), Readiness::Ready);
    });
    assert_eq!(
        lines(&logs, "ERROR", "maxmemory-policy is volatile-ttl").len(),
        1,
        "{logs}"
    );
}
