//! `wait_for_replicas`: against a real primary and replica, both started by the test
//! (`redis-server --replicaof`). Acknowledged → accepted; a replica that stops acknowledging →
//! refused (fail closed) within the timeout, reported by readiness, healed when it returns.
#![cfg(feature = "redis")]

mod support;

use std::time::{Duration, Instant};

use mrtr_replay::redis::{RedisConfigError, RedisReplayCache, RedisReplayCacheBuilder};
use mrtr_replay::{AsyncReplayCache, NotReadyCause, Readiness};
use mrtr_std::core::replay::{ReplayCache, ReplayError};
use support::redis::RedisServer;

const NOW: u64 = 1_000_000;
const HOUR: u64 = 3_600_000;
/// Generous for a loaded machine: a healthy replica answers in well under a millisecond, and
/// `WAIT` returns as soon as it has, so only the failing cases wait this long.
const WAIT: Duration = Duration::from_secs(3);

const BEHIND: Readiness = Readiness::NotReady(NotReadyCause::ReplicasUnacknowledged);

fn id(n: u64) -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&n.to_le_bytes());
    id[8..].copy_from_slice(&(!n).to_be_bytes());
    id
}

fn builder(primary: &RedisServer, prefix: &str) -> RedisReplayCacheBuilder {
    RedisReplayCache::builder(primary.url())
        .prefix(prefix)
        .connect_timeout(Duration::from_secs(2))
        .command_timeout(Duration::from_secs(2))
        .reconnect_backoff(Duration::from_millis(50))
        .wait_for_replicas(1, WAIT)
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_by_a_replica_is_accepted_and_the_replica_holds_the_entry() {
    let primary = RedisServer::start();
    let replica = RedisServer::start_replica_of(&primary);
    let c = builder(&primary, "ack:").build().unwrap();
    assert_eq!(c.probe().await, Readiness::Ready);
    for n in 0..20 {
        assert_eq!(c.check_and_record(&id(n), NOW + HOUR, NOW).await, Ok(()));
        // Acknowledged means the replica has it: a promotion now would keep it.
        let key = c.key_for(&id(n));
        assert_eq!(replica.command(&["EXISTS", &key]).as_deref(), Some(":1"));
    }
    assert_eq!(
        c.check_and_record(&id(3), NOW + HOUR, NOW).await,
        Err(ReplayError::Replayed)
    );
    assert_eq!(c.readiness(), Readiness::Ready);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_replica_fails_closed_burns_the_token_and_heals() {
    let primary = RedisServer::start();
    let replica = RedisServer::start_replica_of(&primary);
    let c = builder(&primary, "paused:").build().unwrap();
    assert_eq!(c.check_and_record(&id(1), NOW + HOUR, NOW).await, Ok(()));

    replica.signal("-STOP");
    assert_eq!(
        c.check_and_record(&id(2), NOW + HOUR, NOW).await,
        Err(ReplayError::Unavailable)
    );
    assert_eq!(c.readiness(), BEHIND);
    // The SET landed on the primary before WAIT gave up: the token is spent, and its retry
    // is refused as a replay (fail closed; documented).
    let key = c.key_for(&id(2));
    assert_eq!(primary.command(&["EXISTS", &key]).as_deref(), Some(":1"));
    assert_eq!(
        c.check_and_record(&id(2), NOW + HOUR, NOW).await,
        Err(ReplayError::Replayed)
    );

    replica.signal("-CONT");
    let until = deadline();
    let mut n = 100;
    while c.check_and_record(&id(n), NOW + HOUR, NOW).await != Ok(()) {
        assert!(Instant::now() < until, "never acknowledged again");
        n += 1;
    }
    assert_eq!(c.readiness(), Readiness::Ready);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_reports_a_missing_replica_and_its_return() {
    let primary = RedisServer::start();
    let mut replica = RedisServer::start_replica_of(&primary);
    let c = builder(&primary, "probe:").build().unwrap();
    assert_eq!(c.probe().await, Readiness::Ready);

    replica.stop();
    let until = deadline();
    while c.probe().await != BEHIND {
        assert!(Instant::now() < until, "the probe never saw the replica go");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        c.check_and_record(&id(1), NOW + HOUR, NOW).await,
        Err(ReplayError::Unavailable)
    );

    replica.restart();
    primary.wait_for_online_replicas(1);
    while c.probe().await != Readiness::Ready {
        assert!(
            Instant::now() < until,
            "the probe never saw the replica return"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(c.check_and_record(&id(2), NOW + HOUR, NOW).await, Ok(()));
}

#[test]
fn the_blocking_cache_waits_for_replicas_too() {
    let primary = RedisServer::start();
    let replica = RedisServer::start_replica_of(&primary);
    let c = builder(&primary, "sync-ack:").build_blocking().unwrap();
    assert_eq!(c.probe(), Readiness::Ready);
    assert_eq!(c.check_and_record(&id(1), NOW + HOUR, NOW), Ok(()));
    let key = format!("sync-ack:{}", hex(&id(1)));
    assert_eq!(replica.command(&["EXISTS", &key]).as_deref(), Some(":1"));

    replica.signal("-STOP");
    assert_eq!(
        c.check_and_record(&id(2), NOW + HOUR, NOW),
        Err(ReplayError::Unavailable)
    );
    assert_eq!(c.readiness(), BEHIND);

    replica.signal("-CONT");
    let until = deadline();
    let mut n = 100;
    while c.check_and_record(&id(n), NOW + HOUR, NOW) != Ok(()) {
        assert!(Instant::now() < until, "never acknowledged again");
        n += 1;
    }
    assert_eq!(c.readiness(), Readiness::Ready);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_replicas_nothing_is_accepted() {
    let primary = RedisServer::start();
    let c = builder(&primary, "alone:")
        .wait_for_replicas(1, Duration::from_millis(200))
        .build()
        .unwrap();
    assert_eq!(
        c.check_and_record(&id(1), NOW + HOUR, NOW).await,
        Err(ReplayError::Unavailable)
    );
    assert_eq!(c.readiness(), BEHIND);
    // Zero replicas turns WAIT off.
    let off = builder(&primary, "alone:")
        .wait_for_replicas(0, Duration::ZERO)
        .build()
        .unwrap();
    assert_eq!(off.check_and_record(&id(2), NOW + HOUR, NOW).await, Ok(()));
}

#[test]
fn a_zero_wait_timeout_is_refused() {
    // `WAIT n 0` would block forever.
    assert_eq!(
        RedisReplayCache::builder("redis://127.0.0.1/")
            .wait_for_replicas(1, Duration::ZERO)
            .build()
            .unwrap_err(),
        RedisConfigError::ZeroTimeout
    );
}

fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}
