//! Measures the bytes per live token id of the in-process replay cache in steady state: ids
//! arrive at a given rate, each expiring one TTL later, on a simulated clock, until the cache
//! holds a full TTL's worth. Two measures: a counting global allocator (the bytes the cache
//! holds on the heap, exact) and the resident set growth (Linux).
//!
//! `cargo run --release -p mrtr-std --example replay_budget [RATE_PER_S [TTL_S]]`
//! (defaults: 10,000 a second, 300 s: 3,000,000 live ids).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use mrtr_replay::MemoryReplayCache;
use mrtr_replay::{BUDGET_BYTES_PER_ID, DEFAULT_MEMORY_BUDGET};
use mrtr_std::core::replay::ReplayCache;

/// The system allocator, counting the bytes allocated and not yet freed.
struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the counter only
// observes sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract, which `System` shares.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) };
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `realloc`'s contract, which `System` shares.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rate = args.first().copied().unwrap_or(10_000.0);
    let ttl_ms = (args.get(1).copied().unwrap_or(300.0) * 1000.0) as u64;
    let cache = MemoryReplayCache::default();
    println!(
        "default budget {} MiB at {BUDGET_BYTES_PER_ID} B/id: capacity {} ids, {:.0} resumes/s at a {} s TTL",
        DEFAULT_MEMORY_BUDGET >> 20,
        cache.capacity(),
        cache.capacity() as f64 / (ttl_ms as f64 / 1000.0),
        ttl_ms / 1000
    );
    let heap_before = LIVE_BYTES.load(Ordering::Relaxed);
    let rss_before = rss_bytes();
    // Ids arrive every `step` ns of simulated time for 1.2 TTLs: past the first TTL, the
    // cache drops a generation for each one it starts (steady state).
    let step_ns = (1e9 / rate) as u64;
    let total = (rate * ttl_ms as f64 / 1000.0 * 1.2) as u64;
    let mut x: u64 = 0x243F_6A88_85A3_08D3;
    let mut peak_heap = 0isize;
    let mut peak_ids = 0usize;
    let started = std::time::Instant::now();
    for i in 0..total {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&x.to_le_bytes());
        id[8..].copy_from_slice(&i.to_le_bytes());
        let now_ms = 1_000_000 + i * step_ns / 1_000_000;
        cache
            .check_and_record(&id, now_ms + ttl_ms, now_ms)
            .expect("the default budget holds this rate");
        if i % 4096 == 0 {
            let heap = LIVE_BYTES.load(Ordering::Relaxed) - heap_before;
            if heap > peak_heap {
                peak_heap = heap;
                peak_ids = cache.occupancy();
            }
        }
    }
    let elapsed = started.elapsed();
    let ids = cache.occupancy();
    let heap = LIVE_BYTES.load(Ordering::Relaxed) - heap_before;
    let rss = rss_bytes()
        .zip(rss_before)
        .map(|(a, b)| a.saturating_sub(b));
    println!(
        "{total} ids recorded at {rate} /s over {:.0} s simulated ({:.0} records/s real, one thread)",
        total as f64 / rate,
        total as f64 / elapsed.as_secs_f64()
    );
    println!(
        "steady state: {ids} live ids, heap {:.1} MiB = {:.1} B/id (counting allocator)",
        heap as f64 / 1048576.0,
        heap as f64 / ids as f64
    );
    println!(
        "peak: heap {:.1} MiB with {peak_ids} ids = {:.1} B/id",
        peak_heap as f64 / 1048576.0,
        peak_heap as f64 / peak_ids.max(1) as f64
    );
    if let Some(rss) = rss {
        println!(
            "resident set growth {:.1} MiB = {:.1} B/id (includes freed pages not yet returned)",
            rss as f64 / 1048576.0,
            rss as f64 / ids as f64
        );
    }
}
