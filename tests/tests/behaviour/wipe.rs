//! A failed resume leaves nothing behind: the token buffer is wiped whether the token failed
//! before decryption (malformed, tampered) or after it (expired, other arguments, replayed).

use mrtr_core::cipher::Cipher;
use mrtr_core::replay::SharedReplaySet;
use mrtr_core::{ArgsDigest, Binding, Codec, ManualClock};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

fn wiped_after<C: Cipher, R: mrtr_core::replay::ReplayCache>(
    mrtr: &Codec<C, &ManualClock, R, 4>,
    token: &str,
    binding: &Binding<'_>,
    args: &ArgsDigest,
) -> bool {
    let mut buf = Buf::new();
    assert!(
        mrtr.resume(token, binding, args, &mut buf).is_err(),
        "must be rejected"
    );
    buf.is_wiped()
}

fn a_successful_resume_holds_the_opened_state<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let token = first(&mrtr, &mut SeqRng::new(1));
    let mut buf = Buf::new();
    let continuation = mrtr
        .resume(&token, &call(), &ARGS, &mut buf)
        .expect("valid")
        .continuation()
        .to_vec();
    assert_eq!(continuation, b"step=date");
    // The control: a buffer in use is not "wiped", so the checks below can fail.
    assert!(!buf.is_wiped());
    buf.wipe();
    assert!(buf.is_wiped());
}

fn every_failed_resume_wipes_the_buffer<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let token = first(&mrtr, &mut SeqRng::new(2));
    let mut tampered = token.clone().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'A' { b'E' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    assert!(wiped_after(&mrtr, &tampered, &call(), &ARGS), "tampered");
    assert!(wiped_after(&mrtr, "AQ!!", &call(), &ARGS), "malformed");
    assert!(
        wiped_after(&mrtr, &token, &call(), &OTHER_ARGS),
        "other arguments (decrypted)"
    );
    clock.set(NOW + mrtr.ttl_ms());
    assert!(
        wiped_after(&mrtr, &token, &call(), &ARGS),
        "expired (decrypted)"
    );
}

fn a_replayed_resume_wipes_the_buffer<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let seen: SharedReplaySet<4> = SharedReplaySet::new();
    let mrtr = builder::<C, _>(&clock)
        .replay_cache(&seen)
        .build()
        .expect("config");
    let token = first(&mrtr, &mut SeqRng::new(3));
    assert!(resume(&mrtr, &token, &call(), &ARGS).is_ok());
    assert!(
        wiped_after(&mrtr, &token, &call(), &ARGS),
        "replayed (decrypted)"
    );
}

mrtr_tests::per_backend!(
    a_successful_resume_holds_the_opened_state,
    every_failed_resume_wipes_the_buffer,
    a_replayed_resume_wipes_the_buffer,
);
