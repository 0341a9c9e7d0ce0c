//! Redis restarted (SIGKILL, then started again on the same port) while a node resumes
//! tokens at full speed through the Redis replay cache with the library's default reconnect
//! back-off:
//! * while Redis is down, every resume is refused with the uniform wire error (the same answer
//!   as a replay; precise reason `replay_store_unavailable`), never admitted;
//! * readiness says `unreachable`;
//! * once Redis is back, the node recovers by itself within one reconnect back-off (plus the
//!   connect and command time), with no restart;
//! * Redis runs with `appendfsync always`, so no acknowledged id is lost by the restart: every
//!   token resumed before it is refused as a replay afterwards.
#![cfg(all(feature = "redis", feature = "aes-gcm"))]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mrtr_replay::redis::{DEFAULT_RECONNECT_BACKOFF, RedisReplayCache};
use mrtr_replay::{AnyReplayCache, NotReadyCause, Readiness};
use mrtr_std::clock::ManualClock;
use mrtr_std::core::{Reason, Round};
use mrtr_std::engine::{Backend, Engine, EngineConfig, Step};
use mrtr_std::jsonrpc::JsonRpcError;
use support::redis::RedisServer;
use support::{T0, booking};

type Node = Engine<AnyReplayCache, ManualClock>;

/// Generous for two shared cores; the defaults (250 ms and 100 ms) are for production.
const CONNECT: Duration = Duration::from_secs(1);
const COMMAND: Duration = Duration::from_secs(1);

fn node(redis: &RedisServer, clock: &ManualClock) -> Node {
    let cache = RedisReplayCache::builder(redis.url())
        .prefix("restart:")
        .connect_timeout(CONNECT)
        .command_timeout(COMMAND)
        .build()
        .unwrap();
    Engine::with_clock(
        Backend::Aes256Gcm,
        support::key_spec("current=k1; k1:K1"),
        EngineConfig::for_audience("test-service"),
        AnyReplayCache::Redis(cache),
        clock.clone(),
    )
    .unwrap()
}

/// One resume of the traffic: its token, when it was sent, when the answer came, and the
/// answer.
struct Attempt {
    token: String,
    sent: Instant,
    at: Instant,
    answer: Result<(), JsonRpcError>,
}

async fn resume(node: &Node, token: &str) -> Result<(), JsonRpcError> {
    match node.current().resume_async(&booking(Some(token))).await {
        Ok(Step::Resumed(_)) => Ok(()),
        Ok(other) => panic!("unexpected step {other:?}"),
        Err(e) => Err(e),
    }
}

fn reason(e: &JsonRpcError) -> Reason {
    e.rejection().expect("a requestState rejection").reason()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_fails_closed_reports_unready_and_recovers_within_one_backoff() {
    // A data directory of our own that outlives each server process: the AOF is reloaded.
    let dir = std::env::temp_dir().join(format!("mrtr-restart-aof-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir_arg = dir.to_str().unwrap().to_owned();
    let mut redis = RedisServer::start_with(&[
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--dir",
        &dir_arg,
    ]);
    let clock = ManualClock::new(T0);
    let node = Arc::new(node(&redis, &clock));
    assert_eq!(node.replay_cache().probe().await, Readiness::Ready);

    // The uniform answer a replay gets: the outage must look exactly the same on the wire.
    let token = node
        .current()
        .pause(&booking(None), Round::FIRST, b"first")
        .unwrap();
    assert_eq!(resume(&node, &token).await, Ok(()));
    let replayed = resume(&node, &token).await.unwrap_err();
    assert_eq!(reason(&replayed), Reason::Replayed);
    let uniform = replayed.to_value();

    let stop = Arc::new(AtomicBool::new(false));
    let traffic = tokio::spawn({
        let (node, stop) = (node.clone(), stop.clone());
        async move {
            let mut attempts = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let token = node
                    .current()
                    .pause(&booking(None), Round::FIRST, b"step")
                    .unwrap();
                let sent = Instant::now();
                let answer = resume(&node, &token).await;
                let refused = answer.is_err();
                attempts.push(Attempt {
                    token,
                    sent,
                    at: Instant::now(),
                    answer,
                });
                if refused {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
            attempts
        }
    });

    tokio::time::sleep(Duration::from_millis(500)).await;
    let down0 = Instant::now();
    redis.stop();
    let down1 = Instant::now();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let unreachable = Readiness::NotReady(NotReadyCause::Unreachable);
    assert_eq!(node.replay_cache().readiness(), unreachable);
    assert_eq!(node.replay_cache().probe().await, unreachable);
    tokio::time::sleep(Duration::from_millis(700)).await;
    let up0 = Instant::now();
    redis.restart();
    let up1 = Instant::now();

    // Let the traffic run until it has been served again (or clearly never will be).
    let deadline = up1 + Duration::from_secs(30);
    while node.replay_cache().readiness() != Readiness::Ready && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    let attempts = traffic.await.unwrap();

    // While Redis was away: every resume refused, with the uniform answer and the store's
    // reason. Never admitted. A resume counts as "while away" when it was sent after the
    // server was gone and answered before it was started again: one sent earlier may have
    // been recorded before the kill and only scheduled afterwards, on a loaded machine.
    let mut during = 0;
    for a in attempts.iter().filter(|a| a.sent > down1 && a.at < up0) {
        during += 1;
        let e = a
            .answer
            .as_ref()
            .expect_err("admitted while Redis was down");
        assert_eq!(reason(e), Reason::ReplayStoreUnavailable);
        assert_eq!(e.to_value(), uniform, "the outage shows on the wire");
    }
    assert!(during > 0, "no resume while Redis was down");

    // Back by itself within one reconnect back-off (and a connect and a command).
    let first_ok = attempts
        .iter()
        .find(|a| a.at > up1 && a.answer.is_ok())
        .expect("never served again");
    let recovery = first_ok.at.duration_since(up1);
    let tries = attempts
        .iter()
        .filter(|a| a.at > up1 && a.at <= first_ok.at)
        .count();
    let bound = DEFAULT_RECONNECT_BACKOFF + CONNECT + COMMAND + Duration::from_millis(500);
    assert!(
        recovery <= bound,
        "recovered {recovery:?} after Redis returned; bound {bound:?}"
    );
    assert_eq!(node.replay_cache().readiness(), Readiness::Ready);

    // appendfsync always: every id acknowledged before the crash survived the restart.
    let acked: Vec<&Attempt> = attempts.iter().filter(|a| a.answer.is_ok()).collect();
    for a in &acked {
        let again = resume(&node, &a.token).await.unwrap_err();
        assert_eq!(reason(&again), Reason::Replayed, "lost by the restart");
    }
    println!(
        "redis restart: {} resumes ({} acknowledged, {during} while down, all refused); down \
         {:.2} s (kill {:.0} ms); served again {:.0} ms after Redis was back (back-off {} ms), \
         after {tries} attempts; readiness Ready; 0 of {} acknowledged ids lost (appendfsync \
         always)",
        attempts.len(),
        acked.len(),
        up0.duration_since(down0).as_secs_f64(),
        down1.duration_since(down0).as_secs_f64() * 1000.0,
        recovery.as_secs_f64() * 1000.0,
        DEFAULT_RECONNECT_BACKOFF.as_millis(),
        acked.len(),
    );
    drop(redis);
    let _ = std::fs::remove_dir_all(&dir);
}
