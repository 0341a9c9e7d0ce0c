//! Measures the memory the in-process replay cache uses per entry (Linux: resident set size).
//!
//! `cargo run --release -p mrtr-std --example replay_memory [entries...]`

use mrtr_replay::MemoryReplayCache;
use mrtr_std::core::replay::ReplayCache;

fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100_000, 1_000_000]
    } else {
        sizes
    };
    println!("entries      bytes/entry (RSS growth, cache full of live entries)");
    for n in sizes {
        let before = rss_bytes().expect("needs /proc/self/statm (Linux)");
        let cache = MemoryReplayCache::new(n);
        let mut id = [0u8; 16];
        let mut x: u64 = 0x243F_6A88_85A3_08D3;
        for i in 0..n {
            // xorshift: random-looking ids spread over the shards like real token ids.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            id[..8].copy_from_slice(&x.to_le_bytes());
            id[8..].copy_from_slice(&(i as u64).to_le_bytes());
            cache
                .check_and_record(&id, u64::MAX, 0)
                .expect("room for every entry");
        }
        let after = rss_bytes().unwrap_or(before);
        println!(
            "{n:>9}    {:>6.1}",
            after.saturating_sub(before) as f64 / n as f64
        );
        assert_eq!(cache.len(), n);
        drop(cache);
    }
}
