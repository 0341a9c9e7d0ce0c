//! The optional replay cache: single use, fail closed when full or unavailable, eviction of
//! expired entries.

use mrtr_core::cipher::Cipher;
use mrtr_core::replay::{ReplayCache, ReplayError, SharedReplaySet};
use mrtr_core::{Codec, ManualClock, Reason, TokenId};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

fn a_token_resumes_once<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let seen = SharedReplaySet::<4>::new();
    let mrtr = builder::<C, _>(&clock).replay_cache(&seen).build().unwrap();
    let mut rng = SeqRng::new(1);
    let (a, b) = (first(&mrtr, &mut rng), first(&mrtr, &mut rng));
    assert!(resume(&mrtr, &a, &call(), &ARGS).is_ok());
    assert_eq!(rejected(&mrtr, &a, &call(), &ARGS), Reason::Replayed);
    clock.advance(1_000);
    assert_eq!(rejected(&mrtr, &a, &call(), &ARGS), Reason::Replayed);
    assert!(
        resume(&mrtr, &b, &call(), &ARGS).is_ok(),
        "other tokens are unaffected"
    );
    assert_eq!(seen.len(), 2);
}

fn a_full_set_of_live_entries_fails_closed<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let seen = SharedReplaySet::<2>::new();
    // Two engines share the set: short-lived tokens fill it, a long-lived one finds it full.
    let short = builder::<C, _>(&clock)
        .ttl_ms(1_000)
        .replay_cache(&seen)
        .build()
        .unwrap();
    let long = builder::<C, _>(&clock).replay_cache(&seen).build().unwrap();
    let mut rng = SeqRng::new(2);
    let (s1, s2) = (first(&short, &mut rng), first(&short, &mut rng));
    let l = first(&long, &mut rng);
    assert!(resume(&short, &s1, &call(), &ARGS).is_ok());
    assert!(resume(&short, &s2, &call(), &ARGS).is_ok());
    assert_eq!(rejected(&long, &l, &call(), &ARGS), Reason::ReplayStoreFull);
    assert_eq!(rejected(&long, &l, &call(), &ARGS), Reason::ReplayStoreFull);
    // Full means refused, not forgotten: the recorded tokens are still refused.
    assert_eq!(rejected(&short, &s1, &call(), &ARGS), Reason::Replayed);

    // 1 ms before the short tokens expire the set is still full; at their expiry they are
    // evicted and the refused token, which was not burned, goes through.
    clock.advance(999);
    assert_eq!(rejected(&long, &l, &call(), &ARGS), Reason::ReplayStoreFull);
    clock.advance(1);
    assert_eq!(rejected(&short, &s1, &call(), &ARGS), Reason::Expired);
    assert!(resume(&long, &l, &call(), &ARGS).is_ok());
    assert_eq!(seen.len(), 1);
}

fn the_set_records_until_expiry_and_evicts_after<C: Cipher>() {
    let seen = SharedReplaySet::<1>::new();
    let id: TokenId = [7; 16];
    assert_eq!(seen.check_and_record(&id, 2_000, 1_000), Ok(()));
    assert_eq!(
        seen.check_and_record(&id, 2_000, 1_999),
        Err(ReplayError::Replayed)
    );
    assert_eq!(
        seen.check_and_record(&[8; 16], 3_000, 1_999),
        Err(ReplayError::Full)
    );
    assert_eq!(
        seen.check_and_record(&[8; 16], 3_000, 2_000),
        Ok(()),
        "evicted at expiry"
    );
    assert_eq!(seen.len(), 1);
    // Comparison covers every byte of the id.
    let mut near = [8; 16];
    near[15] = 9;
    assert_eq!(
        seen.check_and_record(&near, 4_000, 2_500),
        Err(ReplayError::Full)
    );
    let _ = C::ALGORITHM;
}

/// A store that cannot be reached.
struct Down;

impl ReplayCache for Down {
    fn check_and_record(&self, _: &TokenId, _: u64, _: u64) -> Result<(), ReplayError> {
        Err(ReplayError::Unavailable)
    }
}

fn an_unavailable_store_fails_closed<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = builder::<C, _>(&clock).replay_cache(Down).build().unwrap();
    let token = first(&mrtr, &mut SeqRng::new(3));
    assert_eq!(
        rejected(&mrtr, &token, &call(), &ARGS),
        Reason::ReplayStoreUnavailable
    );
}

fn verify_skips_the_cache_for_callers_with_their_own<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let seen = SharedReplaySet::<4>::new();
    let mrtr = builder::<C, _>(&clock).replay_cache(&seen).build().unwrap();
    let token = first(&mrtr, &mut SeqRng::new(4));
    let mut buf = Buf::new();
    let (id, exp) = {
        let v = mrtr.verify(&token, &call(), &ARGS, &mut buf).unwrap();
        (v.token_id(), v.expires_at_ms())
    };
    assert!(mrtr.verify(&token, &call(), &ARGS, &mut buf).is_ok());
    assert!(seen.is_empty());
    // The caller's own store, mapped with replay_rejection.
    let own = SharedReplaySet::<4>::new();
    assert_eq!(own.check_and_record(&id, exp, NOW), Ok(()));
    let err = own.check_and_record(&id, exp, NOW).unwrap_err();
    assert_eq!(mrtr.replay_rejection(err).reason(), Reason::Replayed);
    assert_eq!(
        mrtr.replay_rejection(ReplayError::Full).reason(),
        Reason::ReplayStoreFull
    );
    assert_eq!(
        mrtr.replay_rejection(ReplayError::Unavailable).reason(),
        Reason::ReplayStoreUnavailable
    );
    // verify still runs every other check.
    assert_eq!(
        mrtr.verify(&token, &call(), &OTHER_ARGS, &mut buf)
            .unwrap_err()
            .reason(),
        Reason::ArgumentsMismatch
    );
}

fn concurrent_resumes_of_one_token_succeed_once<C: Cipher + Sync>() {
    const THREADS: usize = 8;
    let seen = SharedReplaySet::<64>::new();
    let mrtr = Codec::builder(ring::<C>(), FixedClock(NOW))
        .audience(AUDIENCE)
        .replay_cache(&seen)
        .build()
        .unwrap();
    let mut rng = SeqRng::new(5);
    let shared = first(&mrtr, &mut rng);
    let own: Vec<String> = (0..THREADS).map(|_| first(&mrtr, &mut rng)).collect();
    let start = std::sync::Barrier::new(THREADS);
    let results: Vec<(Result<u32, Reason>, bool)> = std::thread::scope(|s| {
        let workers: Vec<_> = own
            .iter()
            .map(|mine| {
                let (mrtr, start, shared) = (&mrtr, &start, &shared);
                s.spawn(move || {
                    start.wait();
                    let race = resume(mrtr, shared, &call(), &ARGS);
                    let alone = resume(mrtr, mine, &call(), &ARGS).is_ok();
                    (race.map(|o| o.round).map_err(|r| r.reason()), alone)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let winners = results.iter().filter(|(r, _)| r.is_ok()).count();
    assert_eq!(winners, 1, "{results:?}");
    assert!(
        results
            .iter()
            .all(|(r, _)| r.is_ok() || *r == Err(Reason::Replayed))
    );
    assert!(
        results.iter().all(|(_, alone)| *alone),
        "distinct tokens never collide"
    );
    assert_eq!(seen.len(), THREADS + 1);
}

const TTL: u64 = 60_000;
const DAY: u64 = 86_400_000;

fn replay_engine<'a, C: Cipher, const N: usize>(
    clock: &'a ManualClock,
    seen: &'a SharedReplaySet<N>,
) -> Codec<C, &'a ManualClock, &'a SharedReplaySet<N>> {
    builder::<C, _>(clock)
        .ttl_ms(TTL)
        .replay_cache(seen)
        .build()
        .unwrap()
}

/// The wall clock jumps a day ahead while tokens are minted and spent, then is corrected.
/// Fresh tokens work again at once, and no token spent before, during or after the jump is
/// accepted a second time.
fn a_corrected_forward_jump_leaves_fresh_tokens_usable<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let seen = SharedReplaySet::<8>::new();
    let mrtr = replay_engine::<C, 8>(&clock, &seen);
    let mut rng = SeqRng::new(6);
    let before = first(&mrtr, &mut rng);
    assert!(resume(&mrtr, &before, &call(), &ARGS).is_ok());

    // The clock jumps a day ahead: tokens minted now expire a day too late.
    clock.set(NOW + DAY);
    let during = first(&mrtr, &mut rng);
    assert!(resume(&mrtr, &during, &call(), &ARGS).is_ok());
    // Two TTLs pass (really): spending another token evicts both earlier entries.
    clock.advance(2 * TTL);
    let late = first(&mrtr, &mut rng);
    assert!(resume(&mrtr, &late, &call(), &ARGS).is_ok());

    // The clock is corrected to the real time: two TTLs after the start.
    clock.set(NOW + 2 * TTL);
    let fresh = first(&mrtr, &mut rng);
    assert!(
        resume(&mrtr, &fresh, &call(), &ARGS).is_ok(),
        "a fresh token after the correction must be accepted"
    );
    for _ in 0..5 {
        clock.advance(1_000);
        let next = first(&mrtr, &mut rng);
        assert!(resume(&mrtr, &next, &call(), &ARGS).is_ok());
    }
    // Tokens minted during the jump look unexpired now, but were issued a day "after" now:
    // refused before the replay cache is even asked.
    assert_eq!(
        rejected(&mrtr, &during, &call(), &ARGS),
        Reason::IssuedInFuture
    );
    assert_eq!(
        rejected(&mrtr, &late, &call(), &ARGS),
        Reason::IssuedInFuture
    );
    // With the skew check out of the way, the replay cache still refuses them: spent stays
    // spent.
    let lax = builder::<C, _>(&clock)
        .ttl_ms(TTL)
        .max_clock_skew_ms(u64::MAX)
        .replay_cache(&seen)
        .build()
        .unwrap();
    assert_eq!(rejected(&lax, &during, &call(), &ARGS), Reason::Replayed);
    assert_eq!(rejected(&lax, &late, &call(), &ARGS), Reason::Replayed);
    assert_eq!(rejected(&mrtr, &fresh, &call(), &ARGS), Reason::Replayed);
    assert_eq!(rejected(&mrtr, &before, &call(), &ARGS), Reason::Expired);
}

/// The wall clock steps back an hour after spent tokens were forgotten: none revives, and
/// tokens minted after the step work once the clock is past the forgotten expiries.
fn a_backward_step_never_revives_a_spent_token<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let seen = SharedReplaySet::<8>::new();
    let mrtr = replay_engine::<C, 8>(&clock, &seen);
    let mut rng = SeqRng::new(7);
    let spent: Vec<String> = (0..3)
        .map(|_| {
            let t = first(&mrtr, &mut rng);
            assert!(resume(&mrtr, &t, &call(), &ARGS).is_ok());
            clock.advance(10_000);
            t
        })
        .collect();
    // Past every expiry: one more resume forgets all three.
    clock.set(NOW + 3 * TTL);
    let other = first(&mrtr, &mut rng);
    assert!(resume(&mrtr, &other, &call(), &ARGS).is_ok());
    assert_eq!(seen.len(), 1);

    for back in [TTL, 3 * TTL - 1, 3 * TTL - 25_000, 3 * TTL] {
        clock.set(NOW + 3 * TTL - back);
        for t in &spent {
            let r = resume(&mrtr, t, &call(), &ARGS)
                .map(|_| ())
                .map_err(|e| e.reason());
            assert!(
                matches!(r, Err(Reason::Replayed | Reason::Expired)),
                "stepped back {back} ms: {r:?}"
            );
        }
    }
    // The price of never reviving: while the clock is stepped back, a fresh token whose
    // expiry lands where ids were forgotten is refused too (it cannot be told from them).
    // Here it expires exactly when the second spent token did.
    clock.set(NOW + 10_000);
    let collateral = first(&mrtr, &mut rng);
    assert_eq!(
        rejected(&mrtr, &collateral, &call(), &ARGS),
        Reason::Replayed
    );
    // Once the clock is past the forgotten expiries again, fresh tokens are accepted.
    clock.set(NOW + 3 * TTL + 1);
    let fresh = first(&mrtr, &mut rng);
    assert!(resume(&mrtr, &fresh, &call(), &ARGS).is_ok());
}

mrtr_tests::per_backend!(
    a_corrected_forward_jump_leaves_fresh_tokens_usable,
    a_backward_step_never_revives_a_spent_token,
    concurrent_resumes_of_one_token_succeed_once,
    a_token_resumes_once,
    a_full_set_of_live_entries_fails_closed,
    the_set_records_until_expiry_and_evicts_after,
    an_unavailable_store_fails_closed,
    verify_skips_the_cache_for_callers_with_their_own,
);
