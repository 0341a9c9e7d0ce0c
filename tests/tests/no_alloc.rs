//! Pause, resume (success and every failure) and the replay set make no heap allocation.
//!
//! A counting global allocator counts the allocations made by the current thread while a
//! measurement is running; everything is set up (engines, strings, tokens) before measuring.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use mrtr_core::cipher::Cipher;
use mrtr_core::key::KeyRing;
use mrtr_core::replay::{ReplayCache, SharedReplaySet};
use mrtr_core::{
    AcceptV1, Codec, DEFAULT_TTL_MS, ManualClock, Principal, Reason, Round, TokenBuf, TokenFormat,
};
use mrtr_tests::b64;
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

struct Counting;

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    // `try_with`: the allocator can run while thread-locals are torn down.
    let _ = MEASURING.try_with(|m| {
        if m.get() {
            let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        }
    });
}

// SAFETY: defers every operation to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the number of heap allocations it made.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    COUNT.with(|c| c.set(0));
    MEASURING.with(|m| m.set(true));
    let out = std::hint::black_box(f());
    MEASURING.with(|m| m.set(false));
    (out, COUNT.with(Cell::get))
}

#[track_caller]
fn assert_no_alloc<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let (out, n) = allocations(f);
    assert_eq!(n, 0, "{what} allocated {n} times");
    out
}

#[test]
fn the_counter_counts() {
    let (v, n) = allocations(|| vec![1u8; 10]);
    assert_eq!((v.len(), n), (10, 1));
    let (_, n) = allocations(|| format!("{}", 12345).len());
    assert!(n >= 1);
    let (_, n) = allocations(|| {
        let mut v: Vec<u8> = Vec::with_capacity(1);
        v.extend_from_slice(&[0; 64]);
        v.len()
    });
    assert_eq!(n, 2, "realloc counts");
    let (_, n) = allocations(|| [0u8; 64].iter().map(|&b| u32::from(b)).sum::<u32>());
    assert_eq!(n, 0);
}

fn pause_and_resume_do_not_allocate<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let b = call();
    let mut rng = SeqRng::new(1);
    let mut out = Buf::new();
    let mut buf = Buf::new();
    let token = assert_no_alloc("pause", || {
        mrtr.pause(Round::FIRST, &b, &ARGS, b"step=date", &mut rng, &mut out)
            .map(|s| s.as_str().len())
    });
    assert!(token.is_ok());
    let token = first(&mrtr, &mut rng);
    let round = assert_no_alloc("resume", || {
        mrtr.resume(&token, &b, &ARGS, &mut buf).map(|r| r.round())
    });
    assert_eq!(round, Ok(1));
    let ok = assert_no_alloc("verify", || {
        mrtr.verify(&token, &b, &ARGS, &mut buf).is_ok()
    });
    assert!(ok);
    let next = resume(&mrtr, &token, &b, &ARGS).unwrap().next_round;
    let again = assert_no_alloc("second pause", || {
        mrtr.pause(next, &b, &ARGS, &[7; 256], &mut rng, &mut out)
            .map(|s| s.round())
    });
    assert_eq!(again.map(Round::get), Ok(2));
}

/// One provoked rejection: resumes into the buffer and returns the reason.
type Case<'a> = &'a dyn Fn(&mut Buf) -> Option<Reason>;

/// The reason of a rejected resume, `None` if it was accepted.
fn r<T>(result: Result<T, mrtr_core::Rejection>) -> Option<Reason> {
    result.err().map(|e| e.reason())
}

fn every_rejection_is_allocation_free<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let seen = SharedReplaySet::<2>::new();
    let mrtr = builder::<C, _>(&clock).replay_cache(&seen).build().unwrap();
    let capped = builder::<C, _>(&clock).max_rounds(1).build().unwrap();
    let other_key = Codec::builder(KeyRing::<C, 4>::new(key("k2", 1)), &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    let mut rng = SeqRng::new(2);
    let token = first(&mrtr, &mut rng);
    let (t2, t3) = (first(&mrtr, &mut rng), first(&mrtr, &mut rng));
    let anon = bind("tools/call", VERSION, "book_table", Principal::Anonymous);
    let long_lived = builder::<C, _>(&clock)
        .ttl_ms(DEFAULT_TTL_MS + 1)
        .build()
        .unwrap();
    let long = first(&long_lived, &mut rng);
    let ahead_clock = ManualClock::new(NOW + 60_001);
    let ahead = first(&builder::<C, _>(&ahead_clock).build().unwrap(), &mut rng);
    let mut bytes = b64::decode(&token).unwrap();
    let version = bytes[0];
    bytes[0] = 9;
    let bad_version = b64::encode(&bytes);
    bytes[0] = version;
    bytes[1] = C::ALGORITHM.id() % 3 + 1;
    let bad_alg = b64::encode(&bytes);
    let over = "A".repeat(CAP + 1);
    let mut buf = Buf::new();
    let mut reason = |m: &dyn Fn(&mut Buf) -> Option<Reason>, what: &str| {
        assert_no_alloc(what, || m(&mut buf)).expect("rejected")
    };

    let retired = builder::<C, _>(&clock)
        .accept_v1(AcceptV1::Never)
        .build()
        .unwrap();
    let v1 = first(
        &builder::<C, _>(&clock)
            .seal_format(TokenFormat::V1)
            .build()
            .unwrap(),
        &mut rng,
    );
    let cases: [(Reason, Case<'_>); 14] = [
        (Reason::TooLong, &|b| {
            r(mrtr.resume(&over, &call(), &ARGS, b))
        }),
        (Reason::Malformed, &|b| {
            r(mrtr.resume("bad token!", &call(), &ARGS, b))
        }),
        (Reason::UnsupportedVersion, &|b| {
            r(mrtr.resume(&bad_version, &call(), &ARGS, b))
        }),
        (Reason::WrongAlgorithm, &|b| {
            r(mrtr.resume(&bad_alg, &call(), &ARGS, b))
        }),
        (Reason::VersionRetired, &|b| {
            r(retired.resume(&v1, &call(), &ARGS, b))
        }),
        (Reason::UnknownKey, &|b| {
            r(other_key.resume(&token, &call(), &ARGS, b))
        }),
        (Reason::Tampered, &|b| {
            r(mrtr.resume(&token, &anon, &ARGS, b))
        }),
        (Reason::LifetimeExceeded, &|b| {
            r(mrtr.resume(&long, &call(), &ARGS, b))
        }),
        (Reason::IssuedInFuture, &|b| {
            r(mrtr.resume(&ahead, &call(), &ARGS, b))
        }),
        (Reason::RoundsExceeded, &|b| {
            r(capped.resume(&token, &call(), &ARGS, b))
        }),
        (Reason::ArgumentsMismatch, &|b| {
            r(mrtr.resume(&token, &call(), &OTHER_ARGS, b))
        }),
        (Reason::Replayed, &|b| {
            let _ = mrtr.resume(&token, &call(), &ARGS, b);
            r(mrtr.resume(&token, &call(), &ARGS, b))
        }),
        (Reason::ReplayStoreFull, &|b| {
            let _ = mrtr.resume(&t2, &call(), &ARGS, b);
            r(mrtr.resume(&t3, &call(), &ARGS, b))
        }),
        (Reason::Expired, &|b| {
            clock.advance(DEFAULT_TTL_MS);
            r(mrtr.resume(&t3, &call(), &ARGS, b))
        }),
    ];
    for (want, case) in cases {
        assert_eq!(reason(case, want.as_str()), want);
    }
    let wire = assert_no_alloc("wire", || mrtr.reject(Reason::Tampered).wire());
    assert_eq!(wire.code, -32602);
}

fn the_replay_set_does_not_allocate<C: Cipher>() {
    let seen = SharedReplaySet::<4>::new();
    let results = assert_no_alloc("replay set", || {
        [
            seen.check_and_record(&[1; 16], 2_000, 1_000),
            seen.check_and_record(&[1; 16], 2_000, 1_000),
            seen.check_and_record(&[2; 16], 2_000, 1_000),
            seen.check_and_record(&[3; 16], 2_000, 1_000),
            seen.check_and_record(&[4; 16], 2_000, 1_000),
            seen.check_and_record(&[5; 16], 2_000, 1_000),
            seen.check_and_record(&[5; 16], 3_000, 2_000),
        ]
    });
    use mrtr_core::replay::ReplayError::*;
    assert_eq!(
        results,
        [
            Ok(()),
            Err(Replayed),
            Ok(()),
            Ok(()),
            Ok(()),
            Err(Full),
            Ok(())
        ]
    );
    let _ = C::ALGORITHM;
    let mut small: TokenBuf<8> = TokenBuf::new();
    assert_no_alloc("wipe", || small.wipe());
}

fn failed_pauses_do_not_allocate<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let ring = KeyRing::<C, 4>::new(key("k1", 1)).with_seal_limit(0);
    let exhausted = Codec::builder(ring, &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    let b = call();
    let big = [0u8; 400];
    let mut out = Buf::new();
    let mut failing = mrtr_tests::rng::ReplayRng::new(&[]);
    let mut rng = SeqRng::new(3);
    let errors = assert_no_alloc("failed pauses", || {
        [
            mrtr.pause(Round::FIRST, &b, &ARGS, &big, &mut rng, &mut out)
                .err(),
            mrtr.pause(Round::FIRST, &b, &ARGS, b"", &mut failing, &mut out)
                .err(),
            exhausted
                .pause(Round::FIRST, &b, &ARGS, b"", &mut rng, &mut out)
                .err(),
        ]
    });
    use mrtr_core::SealError::*;
    assert_eq!(errors, [Some(TooLarge), Some(Rng), Some(KeyExhausted)]);
}

mrtr_tests::per_backend!(
    pause_and_resume_do_not_allocate,
    failed_pauses_do_not_allocate,
    every_rejection_is_allocation_free,
    the_replay_set_does_not_allocate,
);
