//! The in-process replay cache under many racing threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use mrtr_replay::MemoryReplayCache;
use mrtr_std::clock::ManualClock;
use mrtr_std::core::replay::{ReplayCache, ReplayError};

fn id(n: usize) -> [u8; 16] {
    // Spread like random ids: a multiplicative hash in the first bytes picks the shard.
    let h = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&h.to_le_bytes());
    id[8..].copy_from_slice(&(n as u64).to_le_bytes());
    id
}

#[test]
fn racing_threads_accept_each_id_exactly_once() {
    const THREADS: usize = 8;
    const IDS: usize = 5_000;
    let cache = Arc::new(MemoryReplayCache::new(IDS));
    let wins: Arc<Vec<AtomicUsize>> = Arc::new((0..IDS).map(|_| AtomicUsize::new(0)).collect());
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (cache, wins, barrier) = (cache.clone(), wins.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut replays = 0;
                for i in 0..IDS {
                    // Different threads walk the ids from different offsets, so every id is
                    // contended at some point and each thread wins some.
                    let n = (i + t * IDS / THREADS) % IDS;
                    match cache.check_and_record(&id(n), 10_000, 0) {
                        Ok(()) => {
                            wins[n].fetch_add(1, Ordering::SeqCst);
                        }
                        Err(ReplayError::Replayed) => replays += 1,
                        Err(e) => panic!("unexpected {e:?}"),
                    }
                }
                replays
            })
        })
        .collect();
    let replays: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    for (n, w) in wins.iter().enumerate() {
        assert_eq!(w.load(Ordering::SeqCst), 1, "id {n}");
    }
    assert_eq!(replays, IDS * (THREADS - 1));
    assert_eq!(cache.len(), IDS);
}

#[test]
fn same_id_hammered_by_all_threads_at_once() {
    const THREADS: usize = 16;
    const ROUNDS: usize = 200;
    let cache = Arc::new(MemoryReplayCache::new(ROUNDS));
    for round in 0..ROUNDS {
        let barrier = Arc::new(Barrier::new(THREADS));
        let winners = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (cache, barrier, winners) = (cache.clone(), barrier.clone(), winners.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    if cache.check_and_record(&id(round), 10_000, 0).is_ok() {
                        winners.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(winners.load(Ordering::SeqCst), 1, "round {round}");
    }
}

#[test]
fn bounded_under_concurrency_and_fails_closed() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 1_000;
    let cache = Arc::new(MemoryReplayCache::with_shards(256, 4));
    let accepted = Arc::new(AtomicUsize::new(0));
    let full = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (cache, accepted, full) = (cache.clone(), accepted.clone(), full.clone());
            std::thread::spawn(move || {
                for i in 0..PER_THREAD {
                    match cache.check_and_record(&id(t * PER_THREAD + i), 10_000, 0) {
                        Ok(()) => accepted.fetch_add(1, Ordering::SeqCst),
                        Err(ReplayError::Full) => full.fetch_add(1, Ordering::SeqCst),
                        Err(e) => panic!("unexpected {e:?}"),
                    };
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let accepted = accepted.load(Ordering::SeqCst);
    assert_eq!(accepted, cache.capacity(), "every slot used, none beyond");
    assert_eq!(accepted + full.load(Ordering::SeqCst), THREADS * PER_THREAD);
    assert_eq!(cache.len(), 256);
    // Once the entries expire, new ids are accepted again.
    assert_eq!(
        cache.check_and_record(&id(1_000_000), 20_000, 10_000),
        Ok(())
    );
}

// ---- wall clocks that jump ------------------------------------------------------------------

const TTL: u64 = 60_000;
const DAY: u64 = 86_400_000;
const T0: u64 = 1_795_996_800_000;

/// Records `n` at the clock's time with the usual TTL (as `CipherEngine` does for a fresh token).
fn spend(cache: &MemoryReplayCache, clock: &ManualClock, n: usize) -> Result<(), ReplayError> {
    let now = clock.get();
    cache.check_and_record(&id(n), now + TTL, now)
}

#[test]
fn a_corrected_forward_jump_leaves_fresh_tokens_usable() {
    // One shard, so every call evicts the same shard's expired entries.
    let cache = MemoryReplayCache::with_shards(1_000, 1);
    let clock = ManualClock::new(T0);
    let before_exp = clock.get() + TTL;
    assert_eq!(spend(&cache, &clock, 1), Ok(()));
    // A day ahead: tokens spent now expire a day late.
    clock.set(T0 + DAY);
    let during_exp = clock.get() + TTL;
    assert_eq!(spend(&cache, &clock, 2), Ok(()));
    clock.advance(2 * TTL);
    assert_eq!(spend(&cache, &clock, 3), Ok(()));
    assert_eq!(cache.len(), 1, "the first two entries were evicted");

    // Corrected to the real time: fresh tokens work at once (with a remembered "latest
    // time" they would be refused for a day).
    clock.set(T0 + 2 * TTL);
    for n in 10..20 {
        assert_eq!(spend(&cache, &clock, n), Ok(()), "fresh token {n}");
        clock.advance(500);
    }
    // The token spent during the jump looks unexpired now; it stays refused.
    let now = clock.get();
    assert_eq!(
        cache.check_and_record(&id(2), during_exp, now),
        Err(ReplayError::Replayed)
    );
    // The one spent before the jump is expired (the engine refuses it before the cache).
    assert!(before_exp <= now);
}

#[test]
fn a_backward_step_never_revives_a_spent_token() {
    let cache = MemoryReplayCache::with_shards(1_000, 1);
    let clock = ManualClock::new(T0);
    let mut spent = Vec::new();
    for n in 0..20 {
        assert_eq!(spend(&cache, &clock, n), Ok(()));
        spent.push((n, clock.get() + TTL));
        clock.advance(3_000);
    }
    // Well past every expiry: incremental eviction forgets them over a few calls.
    clock.set(T0 + 10 * TTL);
    for n in 100..110 {
        assert_eq!(spend(&cache, &clock, n), Ok(()));
    }
    assert_eq!(cache.len(), 10, "all 20 spent entries were evicted");

    // The clock steps back, to every point of the spent tokens' lifetimes.
    for back in (0..=10 * TTL).step_by(7_000) {
        clock.set(T0 + 10 * TTL - back);
        for &(n, exp) in &spent {
            assert_eq!(
                cache.check_and_record(&id(n), exp, clock.get()),
                Err(ReplayError::Replayed),
                "token {n} revived with the clock stepped back {back} ms"
            );
        }
    }
}
