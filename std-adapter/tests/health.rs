//! Readiness and the startup check against real Redis servers: fail fast with the cause and
//! never the URL, start degraded only when asked, wait for a store that becomes ready, and
//! report an exhausted key.

mod support;

use std::sync::Arc;
use std::time::Duration;

use mrtr_replay::redis::RedisReplayCache;
use mrtr_replay::{AnyReplayCache, EvictionPolicy, NotReadyCause};
use mrtr_std::core::key::DEFAULT_SEAL_LIMIT;
use mrtr_std::engine::{Backend, Engine, EngineConfig};
use mrtr_std::health::{Cause, Startup};
use mrtr_std::keys::KeyConfig;
use support::redis::RedisServer;
use support::{KEY1_B64, capture_logs};

fn keys() -> KeyConfig {
    KeyConfig::parse_env(&format!("current=k1; k1:{KEY1_B64}")).unwrap()
}

fn redis_node(url: &str) -> Engine {
    let cache = RedisReplayCache::builder(url)
        .connect_timeout(Duration::from_secs(5))
        .command_timeout(Duration::from_secs(5))
        .reconnect_backoff(Duration::from_millis(50))
        .build()
        .unwrap();
    Engine::new(
        Backend::Aes256Gcm,
        keys(),
        EngineConfig::for_audience("test-service"),
        AnyReplayCache::Redis(cache),
    )
    .unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn an_unreachable_redis_fails_the_start_without_showing_the_url() {
    let url = format!("redis://:s3cret-pw@127.0.0.1:{}/", free_port());
    let node = redis_node(&url);
    let rt = runtime();
    let err = rt
        .block_on(node.check_startup(Startup::fail_fast()))
        .unwrap_err();
    assert_eq!(
        err.health().causes(),
        &[Cause::ReplayStore(NotReadyCause::Unreachable)]
    );
    let text = err.to_string();
    assert!(
        text.contains("Redis unreachable") && text.contains("start degraded"),
        "{text}"
    );
    assert!(
        !text.contains("s3cret") && !text.contains("127.0.0.1"),
        "{text}"
    );

    // Asked to start degraded: it starts, says why in the log, and reports not ready.
    let (health, logs) =
        capture_logs(|| rt.block_on(node.check_startup(Startup::fail_fast().start_degraded(true))));
    let health = health.unwrap();
    assert!(!health.is_ready());
    assert_eq!(health.status_code(), 503);
    assert_eq!(health.to_json()["causes"][0]["code"], "unreachable");
    assert!(
        logs.contains("WARN") && logs.contains("starting degraded"),
        "{logs}"
    );
    assert!(!logs.contains("s3cret"), "{logs}");
}

#[test]
fn an_evicting_redis_fails_the_start_and_a_noeviction_one_passes() {
    let rt = runtime();
    let evicting = RedisServer::start_with(&["--maxmemory-policy", "allkeys-lru"]);
    let err = rt
        .block_on(redis_node(&evicting.url()).check_startup(Startup::fail_fast()))
        .unwrap_err();
    assert_eq!(
        err.health().causes(),
        &[Cause::ReplayStore(NotReadyCause::EvictingPolicy(
            EvictionPolicy::AllkeysLru
        ))]
    );
    assert!(
        err.to_string().contains("maxmemory-policy is allkeys-lru"),
        "{err}"
    );

    let good = RedisServer::start();
    let health = rt
        .block_on(redis_node(&good.url()).check_startup(Startup::fail_fast()))
        .unwrap();
    assert!(health.is_ready());
    assert_eq!(health.to_json(), serde_json::json!({"ready": true}));
}

#[test]
fn the_startup_check_waits_for_a_store_that_becomes_ready() {
    let rt = runtime();
    let redis = RedisServer::start_with(&["--maxmemory-policy", "volatile-lru"]);
    let node = Arc::new(redis_node(&redis.url()));
    // Fix the policy once the check has seen it refused (no timing involved).
    let watcher = {
        let node = node.clone();
        std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while node.readiness().causes().first().map(Cause::code) != Some("evicting_policy") {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the check never probed"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            redis.config_set("maxmemory-policy", "noeviction");
            redis
        })
    };
    let health = rt
        .block_on(node.check_startup(Startup::fail_fast().wait_up_to(Duration::from_secs(60))))
        .unwrap();
    assert!(health.is_ready());
    drop(watcher.join().unwrap());
}

#[test]
fn an_exhausted_key_is_not_ready_and_fails_the_start() {
    let node = Engine::with_clock_counting(
        Backend::Aes256Gcm,
        keys(),
        EngineConfig::for_audience("test-service"),
        AnyReplayCache::memory(10),
        mrtr_std::clock::SystemClock,
        |_| DEFAULT_SEAL_LIMIT,
    )
    .unwrap();
    let health = node.readiness();
    assert_eq!(health.causes().len(), 1);
    assert_eq!(health.causes()[0].code(), "key_exhausted");
    assert!(health.to_string().contains("k1"), "{health}");
    let err = runtime()
        .block_on(node.check_startup(Startup::fail_fast()))
        .unwrap_err();
    assert!(err.to_string().contains("seal budget"), "{err}");
    // A new current key clears it.
    node.reload(
        KeyConfig::parse_env(&format!(
            "current=k2; k2:{}; k1:{KEY1_B64}",
            support::KEY2_B64
        ))
        .unwrap(),
    )
    .unwrap();
    assert!(node.readiness().is_ready());
}
