//! What the Redis replay cache's safety checks cost per resume: sequential `check_and_record`
//! latency with the default policy re-check (every 10 s), with the policy read before every
//! `SET` (the worst case), and with `WAIT 1` when the Redis has a replica.
//!
//! ```sh
//! redis-server --port 6390 --save '' &                      # and optionally a replica:
//! redis-server --port 6391 --save '' --replicaof 127.0.0.1 6390 &
//! cargo run --release -p mrtr-std --example redis_latency -- redis://127.0.0.1:6390/ 20000
//! ```

#[cfg(feature = "redis")]
#[tokio::main(flavor = "current_thread")]
async fn main() {
    use std::time::{Duration, Instant};

    use mrtr_replay::AsyncReplayCache;
    use mrtr_replay::redis::RedisReplayCache;

    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "redis://127.0.0.1:6379/".to_owned());
    let calls: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let run = std::process::id();
    let modes: [(&str, Option<Duration>, u32); 3] = [
        ("default (policy re-read every 10 s)", None, 0),
        ("policy re-read before every SET", Some(Duration::ZERO), 0),
        ("WAIT 1 replica", None, 1),
    ];
    for (i, (name, recheck, replicas)) in modes.into_iter().enumerate() {
        let mut builder = RedisReplayCache::builder(url.as_str())
            .prefix(format!("latency:{run}:{i}:"))
            .command_timeout(Duration::from_secs(1))
            .wait_for_replicas(replicas, Duration::from_secs(1));
        if let Some(every) = recheck {
            builder = builder.policy_recheck_interval(every);
        }
        let cache = builder.build().expect("configuration");
        let ready = cache.probe().await;
        if !ready.is_ready() {
            println!("{name}: skipped ({ready})");
            continue;
        }
        let start = Instant::now();
        for n in 0..calls {
            let mut id = [0u8; 16];
            id[..8].copy_from_slice(&n.to_le_bytes());
            cache
                .check_and_record(&id, 60_000, 0)
                .await
                .expect("a fresh id is recorded");
        }
        let per_call = start.elapsed() / u32::try_from(calls).unwrap_or(u32::MAX);
        println!("{name}: {calls} sequential resumes, {per_call:?} per resume");
    }
}

#[cfg(not(feature = "redis"))]
fn main() {
    eprintln!("needs the `redis` feature");
}
