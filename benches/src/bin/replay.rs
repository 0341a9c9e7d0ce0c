//! Replay-cache throughput, latency and memory. Prints tab-separated lines:
//! `key  value  unit  label`.
//!
//! * In-process (`mrtr_replay::MemoryReplayCache`): check-and-record of fresh ids on 1
//!   and 2 threads against a steady live set of about one million entries (a virtual clock
//!   advances one ms per call and every id lives `LIVE` ms, so each call records one id and
//!   evicts about one), and the memory the cache takes.
//! * Redis (`mrtr_replay::redis::RedisReplayCache`), if `MRTR_BENCH_REDIS` names a server:
//!   latency of one call at a time (p50, p99) and throughput with many calls in flight over the
//!   one multiplexed loopback connection.
//!
//! Usage: `replay [SECONDS_PER_RUN]` (default 2).

use std::sync::Barrier;
use std::time::{Duration, Instant};

use mrtr_benches::{SplitMix, split_mix_from_os};
use mrtr_core::TokenId;
use mrtr_core::replay::ReplayCache;
use mrtr_replay::AsyncReplayCache;
use mrtr_replay::MemoryReplayCache;
use mrtr_replay::redis::RedisReplayCache;
use rand_core::TryRng as _;

/// Live entries in the steady state (and virtual ms each id lives).
const LIVE: u64 = 1_000_000;
/// Capacity: the live set plus room for uneven shards.
const CAPACITY: usize = 1_200_000;
/// Virtual clock start.
const T0: u64 = 1_000_000_000;

fn out(key: &str, value: f64, unit: &str, label: &str) {
    mrtr_benches::outln!("{key}\t{value}\t{unit}\t{label}");
}

fn fresh_id(rng: &mut SplitMix) -> TokenId {
    let mut id = [0u8; 16];
    let _ = rng.try_fill_bytes(&mut id);
    id
}

/// Resident set size of this process, in bytes.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// Fills `cache` with `LIVE` entries whose expiries are spread over the next `LIVE` virtual ms.
fn fill(cache: &impl ReplayCache) {
    let mut rng = split_mix_from_os();
    for i in 0..LIVE {
        cache
            .check_and_record(&fresh_id(&mut rng), T0 + 1 + i, T0)
            .expect("prefill");
    }
}

/// Calls per second on `threads` threads for `secs` seconds each.
fn inproc_rate(cache: &(impl ReplayCache + Sync), threads: u64, secs: f64, start: &mut u64) -> f64 {
    let barrier = Barrier::new(threads as usize);
    let base = *start;
    let counts: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mut rng = split_mix_from_os();
                    barrier.wait();
                    let begin = Instant::now();
                    let mut n = 0u64;
                    while begin.elapsed().as_secs_f64() < secs {
                        for _ in 0..1024 {
                            let now = base + n * threads + t;
                            let id = fresh_id(&mut rng);
                            ReplayCache::check_and_record(cache, &id, now + LIVE, now)
                                .expect("record");
                            n += 1;
                        }
                    }
                    (n, begin.elapsed().as_secs_f64())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                let (n, el) = h.join().expect("thread");
                (n as f64 / el * secs) as u64
            })
            .collect()
    });
    let total: u64 = counts.iter().sum();
    *start = base + total + threads;
    total as f64 / secs
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Memory, throughput on 1 and 2 threads, and final size of one cache; `key` prefixes the
/// output keys.
fn inproc<C: ReplayCache + Sync>(
    key: &str,
    what: &str,
    secs: f64,
    make: impl FnOnce() -> C,
    len: impl Fn(&C) -> usize,
) {
    let before = rss();
    let cache = make();
    fill(&cache);
    let after = rss();
    let grown = after.saturating_sub(before) as f64;
    out(
        &format!("{key}-bytes-per-entry"),
        grown / LIVE as f64,
        "B",
        &format!(
            "{what}: memory per live entry (RSS growth {:.0} MB for {LIVE} live)",
            grown / 1e6
        ),
    );
    let mut clock = T0 + LIVE;
    for threads in [1u64, 2] {
        let runs: Vec<f64> = (0..3)
            .map(|_| inproc_rate(&cache, threads, secs, &mut clock))
            .collect();
        out(
            &format!("{key}-{threads}t-ops"),
            median(runs),
            "calls/s",
            &format!(
                "{what}: check-and-record, {threads} thread(s), ~1 M live, fresh ids (median of 3 runs)"
            ),
        );
    }
    out(
        &format!("{key}-live-after"),
        len(&cache) as f64,
        "entries",
        &format!("{what}: entries held at the end (the live set stays near one million)"),
    );
}

fn redis(url: &str, secs: f64) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    let cache = RedisReplayCache::builder(url)
        .prefix("mrtr:bench:")
        .command_timeout(Duration::from_secs(1))
        .build()
        .expect("redis config");
    rt.block_on(async {
        let mut rng = split_mix_from_os();
        let now = T0;
        // Warm up the connection.
        for _ in 0..1000 {
            cache
                .check_and_record(&fresh_id(&mut rng), now + 60_000, now)
                .await
                .expect("redis warm-up");
        }
        let mut lat = Vec::new();
        let begin = Instant::now();
        while begin.elapsed().as_secs_f64() < secs {
            let t = Instant::now();
            cache
                .check_and_record(&fresh_id(&mut rng), now + 60_000, now)
                .await
                .expect("redis");
            lat.push(t.elapsed().as_secs_f64() * 1e6);
        }
        let n = lat.len();
        lat.sort_by(f64::total_cmp);
        out(
            "redis-p50-us",
            lat[n / 2],
            "µs",
            "Redis check-and-record latency p50, one call at a time (loopback)",
        );
        out(
            "redis-p99-us",
            lat[n * 99 / 100],
            "µs",
            "Redis check-and-record latency p99, one call at a time (loopback)",
        );
        out(
            "redis-serial-ops",
            n as f64 / secs,
            "calls/s",
            "Redis throughput, one call at a time",
        );

        for inflight in [16usize, 64] {
            let begin = Instant::now();
            let mut total = 0u64;
            let cache = &cache;
            while begin.elapsed().as_secs_f64() < secs {
                let batch: Vec<_> = (0..inflight)
                    .map(|_| {
                        let id = fresh_id(&mut rng);
                        async move { cache.check_and_record(&id, now + 60_000, now).await }
                    })
                    .collect();
                for r in futures_join(batch).await {
                    r.expect("redis");
                }
                total += inflight as u64;
            }
            out(
                &format!("redis-{inflight}-ops"),
                total as f64 / begin.elapsed().as_secs_f64(),
                "calls/s",
                &format!(
                    "Redis throughput, {inflight} calls in flight on one multiplexed connection"
                ),
            );
        }
    });
}

/// Awaits every future concurrently (on this task), in order.
async fn futures_join<F: std::future::Future>(futs: Vec<F>) -> Vec<F::Output> {
    let mut pinned: Vec<_> = futs.into_iter().map(Box::pin).map(Some).collect();
    let mut outs: Vec<Option<F::Output>> = (0..pinned.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, o) in pinned.iter_mut().zip(outs.iter_mut()) {
            if let Some(f) = slot {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => {
                        *o = Some(v);
                        *slot = None;
                    }
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outs.into_iter().map(|o| o.expect("ready")).collect()
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    inproc(
        "inproc",
        "mrtr-std MemoryReplayCache",
        secs,
        || MemoryReplayCache::new(CAPACITY),
        MemoryReplayCache::len,
    );
    match std::env::var("MRTR_BENCH_REDIS") {
        Ok(url) if !url.is_empty() => redis(&url, secs),
        _ => eprintln!("MRTR_BENCH_REDIS not set: Redis not measured"),
    }
}
