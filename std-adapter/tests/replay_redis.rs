//! The Redis replay cache against a real `redis-server` on loopback, started by the test.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mrtr_replay::AsyncReplayCache;
use mrtr_replay::redis::{RedisConfigError, RedisReplayCache};
use mrtr_std::clock::ManualClock;
use mrtr_std::core::replay::ReplayError;
use mrtr_std::core::{ErrorDetail, Principal, Reason, Round};
use mrtr_std::engine::{CipherEngine, Step};
use mrtr_std::jsonrpc::ResumeRequest;
use serde_json::json;
use support::redis::RedisServer;
use support::{T0, mrtr};

const NOW: u64 = 1_000_000;

fn id(n: u64) -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&n.to_le_bytes());
    id[8..].copy_from_slice(&(!n).to_be_bytes());
    id
}

/// A cache whose entries live exactly as long as their tokens (no minimum lifetime).
fn cache(server: &RedisServer, prefix: &str) -> RedisReplayCache {
    RedisReplayCache::builder(server.url())
        .prefix(prefix)
        .min_entry_lifetime(Duration::ZERO)
        .connect_timeout(Duration::from_millis(200))
        .command_timeout(Duration::from_millis(200))
        .reconnect_backoff(Duration::from_millis(50))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_once_with_the_token_ttl_under_the_prefix() {
    let server = RedisServer::start();
    let c = cache(&server, "t1:");
    assert_eq!(c.check_and_record(&id(1), NOW + 60_000, NOW).await, Ok(()));
    assert_eq!(
        c.check_and_record(&id(1), NOW + 60_000, NOW + 5).await,
        Err(ReplayError::Replayed)
    );
    let key = c.key_for(&id(1));
    assert_eq!(key.len(), 3 + 32);
    assert!(key.starts_with("t1:0100000000000000"));
    assert_eq!(server.command(&["EXISTS", &key]).as_deref(), Some(":1"));
    // Expires with the token: PX is the time left, 60 s.
    let pttl: i64 = server.command(&["PTTL", &key]).unwrap()[1..]
        .parse()
        .unwrap();
    assert!(pttl > 55_000 && pttl <= 60_000, "pttl {pttl}");
    // Another prefix is another namespace.
    let other = cache(&server, "t2:");
    assert_eq!(
        other.check_and_record(&id(1), NOW + 60_000, NOW).await,
        Ok(())
    );
}

/// A recording node whose clock jumped ahead sees the token almost expired; its entry must
/// still live a full TTL, or the token would be live again once the clock is corrected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_outlives_a_clock_jumped_ahead_on_the_recording_node() {
    let server = RedisServer::start();
    let c = RedisReplayCache::builder(server.url())
        .prefix("jump:")
        .min_entry_lifetime(Duration::from_secs(60))
        .build()
        .unwrap();
    // The token expires at NOW + 60 s; this node's clock reads a day later minus one ms.
    let jumped = NOW + 60_000 - 1;
    assert_eq!(
        c.check_and_record(&id(4), NOW + 60_000, jumped).await,
        Ok(())
    );
    let pttl: i64 = server.command(&["PTTL", &c.key_for(&id(4))]).unwrap()[1..]
        .parse()
        .unwrap();
    assert!(pttl > 55_000 && pttl <= 60_000, "pttl {pttl}");
    // A node with a correct clock, where the token is live, refuses it as spent.
    assert_eq!(
        c.check_and_record(&id(4), NOW + 60_000, NOW + 1_000).await,
        Err(ReplayError::Replayed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skew_margin_keeps_the_entry_past_the_token_expiry() {
    let server = RedisServer::start();
    let c = RedisReplayCache::builder(server.url())
        .prefix("skew:")
        .min_entry_lifetime(Duration::ZERO)
        .skew_margin(Duration::from_secs(30))
        .build()
        .unwrap();
    assert_eq!(c.check_and_record(&id(3), NOW + 60_000, NOW).await, Ok(()));
    let pttl: i64 = server.command(&["PTTL", &c.key_for(&id(3))]).unwrap()[1..]
        .parse()
        .unwrap();
    // 60 s left on the token plus the 30 s margin.
    assert!(pttl > 85_000 && pttl <= 90_000, "pttl {pttl}");
    // A node whose clock lags behind cannot slip the token in after the token's own expiry.
    assert_eq!(
        c.check_and_record(&id(3), NOW + 60_000, NOW + 1).await,
        Err(ReplayError::Replayed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entry_disappears_when_the_token_expires() {
    let server = RedisServer::start();
    let c = cache(&server, "exp:");
    assert_eq!(c.check_and_record(&id(2), NOW + 150, NOW).await, Ok(()));
    assert_eq!(
        c.check_and_record(&id(2), NOW + 150, NOW).await,
        Err(ReplayError::Replayed)
    );
    let key = c.key_for(&id(2));
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.command(&["EXISTS", &key]).as_deref() != Some(":0") {
        assert!(Instant::now() < deadline, "key never expired");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(c.check_and_record(&id(2), NOW + 60_000, NOW).await, Ok(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_racing_accept_each_token_exactly_once() {
    let server = RedisServer::start();
    let nodes = [
        Arc::new(cache(&server, "race:")),
        Arc::new(cache(&server, "race:")),
    ];
    const IDS: u64 = 200;
    const RACERS_PER_NODE: usize = 4;
    let wins: Arc<Vec<AtomicUsize>> = Arc::new((0..IDS).map(|_| AtomicUsize::new(0)).collect());
    let replays = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for n in 0..IDS {
        for node in &nodes {
            for _ in 0..RACERS_PER_NODE {
                let (node, wins, replays) = (node.clone(), wins.clone(), replays.clone());
                tasks.push(tokio::spawn(async move {
                    match node.check_and_record(&id(n), NOW + 60_000, NOW).await {
                        Ok(()) => wins[n as usize].fetch_add(1, Ordering::SeqCst),
                        Err(ReplayError::Replayed) => replays.fetch_add(1, Ordering::SeqCst),
                        Err(e) => panic!("unexpected {e:?}"),
                    };
                }));
            }
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    for (n, w) in wins.iter().enumerate() {
        assert_eq!(w.load(Ordering::SeqCst), 1, "id {n}");
    }
    let racers = IDS as usize * 2 * RACERS_PER_NODE;
    assert_eq!(replays.load(Ordering::SeqCst), racers - IDS as usize);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_refuses_and_service_resumes_when_it_returns() {
    let mut server = RedisServer::start();
    let c = cache(&server, "down:");
    assert_eq!(c.check_and_record(&id(1), NOW + 60_000, NOW).await, Ok(()));

    server.stop();
    // Fresh ids that would be accepted are refused, quickly, every time.
    for n in 10..30 {
        let started = Instant::now();
        assert_eq!(
            c.check_and_record(&id(n), NOW + 60_000, NOW).await,
            Err(ReplayError::Unavailable)
        );
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "a refusal took {:?}",
            started.elapsed()
        );
    }

    server.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match c.check_and_record(&id(100), NOW + 60_000, NOW).await {
            Ok(()) => break,
            Err(ReplayError::Unavailable) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            other => panic!("after restart: {other:?}"),
        }
    }
    assert_eq!(
        c.check_and_record(&id(100), NOW + 60_000, NOW).await,
        Err(ReplayError::Replayed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_built_while_redis_is_down_refuses_then_connects() {
    let mut server = RedisServer::start();
    server.stop();
    let c = cache(&server, "late:");
    assert_eq!(
        c.check_and_record(&id(1), NOW + 60_000, NOW).await,
        Err(ReplayError::Unavailable)
    );
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.check_and_record(&id(1), NOW + 60_000, NOW).await != Ok(()) {
        assert!(Instant::now() < deadline, "never connected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_redis_times_out_and_refuses() {
    let server = RedisServer::start();
    let c = cache(&server, "hung:");
    assert_eq!(c.check_and_record(&id(1), NOW + 60_000, NOW).await, Ok(()));
    server.signal("-STOP");
    for n in 2..5 {
        let started = Instant::now();
        let r = c.check_and_record(&id(n), NOW + 60_000, NOW).await;
        let took = started.elapsed();
        assert_eq!(r, Err(ReplayError::Unavailable));
        assert!(
            took < Duration::from_secs(2),
            "a hung Redis held a call for {took:?}"
        );
    }
    server.signal("-CONT");
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.check_and_record(&id(50), NOW + 60_000, NOW).await != Ok(()) {
        assert!(Instant::now() < deadline, "never recovered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The ids refused while it hung were never recorded, or are refused again: never accepted twice.
    assert_eq!(
        c.check_and_record(&id(1), NOW + 60_000, NOW).await,
        Err(ReplayError::Replayed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_error_replies_refuse() {
    let server = RedisServer::start();
    let c = cache(&server, "oom:");
    assert_eq!(
        server
            .command(&["CONFIG", "SET", "maxmemory", "1"])
            .as_deref(),
        Some("+OK")
    );
    assert_eq!(
        c.check_and_record(&id(1), NOW + 60_000, NOW).await,
        Err(ReplayError::Unavailable)
    );
    assert_eq!(
        server
            .command(&["CONFIG", "SET", "maxmemory", "0"])
            .as_deref(),
        Some("+OK")
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.check_and_record(&id(1), NOW + 60_000, NOW).await != Ok(()) {
        assert!(Instant::now() < deadline, "never recovered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn configuration_errors_do_not_echo_the_url() {
    let err = RedisReplayCache::new("not-a-url://:hunter2@x").unwrap_err();
    assert_eq!(err, RedisConfigError::BadUrl);
    assert!(!err.to_string().contains("hunter2"));
    let c = RedisReplayCache::new("redis://:hunter2@127.0.0.1:1/").unwrap();
    let dbg = format!("{c:?}");
    assert!(
        !dbg.contains("hunter2") && !dbg.contains("127.0.0.1"),
        "{dbg}"
    );
    assert_eq!(
        RedisReplayCache::builder("redis://127.0.0.1/")
            .prefix("x".repeat(300))
            .build()
            .unwrap_err(),
        RedisConfigError::PrefixTooLong
    );
    assert_eq!(
        RedisReplayCache::builder("redis://127.0.0.1/")
            .command_timeout(Duration::ZERO)
            .build()
            .unwrap_err(),
        RedisConfigError::ZeroTimeout
    );
}

/// Two server nodes with the same keys and one Redis: a token paused on one resumes once,
/// on either, and Redis down means `replay_store_unavailable`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engines_on_two_nodes_share_single_use() {
    let mut server = RedisServer::start();
    let clock = ManualClock::new(T0);
    let node_a = Arc::new(CipherEngine::new(
        mrtr(&clock, ErrorDetail::Detailed),
        cache(&server, "eng:"),
    ));
    let node_b = Arc::new(CipherEngine::new(
        mrtr(&clock, ErrorDetail::Detailed),
        cache(&server, "eng:"),
    ));
    let who = Principal::User {
        issuer: "https://idp",
        subject: "alice",
    };
    let params = json!({"name": "t", "arguments": {"x": 1}});
    let req = ResumeRequest::from_params("tools/call", &params, who)
        .unwrap()
        .unwrap();
    let token = node_a.pause(&req, Round::FIRST, b"cross-node").unwrap();
    let retry = Arc::new(json!({"name": "t", "arguments": {"x": 1}, "requestState": token}));

    let mut tasks = Vec::new();
    for i in 0..8 {
        let node = if i % 2 == 0 {
            node_a.clone()
        } else {
            node_b.clone()
        };
        let retry = retry.clone();
        tasks.push(tokio::spawn(async move {
            let req = ResumeRequest::from_params("tools/call", &retry, who)
                .unwrap()
                .unwrap();
            match node.resume_async(&req).await {
                Ok(Step::Resumed(r)) => {
                    assert_eq!(r.continuation(), b"cross-node");
                    None
                }
                Ok(Step::Fresh) => panic!("had a requestState"),
                Err(e) => Some(e.rejection().unwrap().reason()),
            }
        }));
    }
    let mut accepted = 0;
    for t in tasks {
        match t.await.unwrap() {
            None => accepted += 1,
            Some(reason) => assert_eq!(reason, Reason::Replayed),
        }
    }
    assert_eq!(accepted, 1);

    let token2 = node_b.pause(&req, Round::FIRST, b"second").unwrap();
    server.stop();
    let p2 = json!({"name": "t", "arguments": {"x": 1}, "requestState": token2});
    let req2 = ResumeRequest::from_params("tools/call", &p2, who)
        .unwrap()
        .unwrap();
    let err = node_a.resume_async(&req2).await.unwrap_err();
    assert_eq!(
        err.rejection().unwrap().reason(),
        Reason::ReplayStoreUnavailable
    );
    assert_eq!(
        err.data(),
        Some(&json!({"reason": "replay_store_unavailable"}))
    );
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match node_a.resume_async(&req2).await {
            Ok(Step::Resumed(_)) => break,
            Err(e)
                if e.rejection().unwrap().reason() == Reason::ReplayStoreUnavailable
                    && Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            other => panic!("after restart: {other:?}"),
        }
    }
}

fn blocking(server: &RedisServer, prefix: &str) -> mrtr_replay::redis::BlockingRedisReplayCache {
    RedisReplayCache::builder(server.url())
        .prefix(prefix)
        .connect_timeout(Duration::from_millis(200))
        .command_timeout(Duration::from_millis(200))
        .reconnect_backoff(Duration::from_millis(50))
        .build_blocking()
        .unwrap()
}

#[test]
fn blocking_cache_two_nodes_race_threads_exactly_once() {
    use mrtr_std::core::replay::ReplayCache;
    let server = RedisServer::start();
    let nodes = [
        Arc::new(blocking(&server, "sync:")),
        Arc::new(blocking(&server, "sync:")),
    ];
    const IDS: u64 = 100;
    let wins: Arc<Vec<AtomicUsize>> = Arc::new((0..IDS).map(|_| AtomicUsize::new(0)).collect());
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let (node, wins, barrier) = (nodes[t % 2].clone(), wins.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for n in 0..IDS {
                    match node.check_and_record(&id(n), NOW + 60_000, NOW) {
                        Ok(()) => {
                            wins[n as usize].fetch_add(1, Ordering::SeqCst);
                        }
                        Err(ReplayError::Replayed) => {}
                        Err(e) => panic!("unexpected {e:?}"),
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    for (n, w) in wins.iter().enumerate() {
        assert_eq!(w.load(Ordering::SeqCst), 1, "id {n}");
    }
    // The same keys as the async cache: the two interoperate.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let async_cache = cache(&server, "sync:");
    assert_eq!(
        rt.block_on(async_cache.check_and_record(&id(3), NOW + 60_000, NOW)),
        Err(ReplayError::Replayed)
    );
}

#[test]
fn blocking_cache_fails_closed_when_down_or_hung_and_recovers() {
    use mrtr_std::core::replay::ReplayCache;
    let mut server = RedisServer::start();
    let c = blocking(&server, "syncdown:");
    assert_eq!(c.check_and_record(&id(1), NOW + 60_000, NOW), Ok(()));
    server.signal("-STOP");
    let started = Instant::now();
    assert_eq!(
        c.check_and_record(&id(2), NOW + 60_000, NOW),
        Err(ReplayError::Unavailable)
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    server.signal("-CONT");
    server.stop();
    for n in 3..10 {
        assert_eq!(
            c.check_and_record(&id(n), NOW + 60_000, NOW),
            Err(ReplayError::Unavailable)
        );
    }
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.check_and_record(&id(20), NOW + 60_000, NOW) != Ok(()) {
        assert!(Instant::now() < deadline, "never recovered");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        c.check_and_record(&id(20), NOW + 60_000, NOW),
        Err(ReplayError::Replayed)
    );
    assert!(!format!("{c:?}").contains("127.0.0.1"));
}
