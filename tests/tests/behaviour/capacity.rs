//! The associated-data capacity is a compile-time parameter: a small engine seals and opens
//! the very same tokens as a default one, and refuses, as a whole and before any key is
//! spent, a binding whose associated data would not fit.

use mrtr_core::cipher::Cipher;
use mrtr_core::limits::{AadLimits, MAX_AAD_LEN};
use mrtr_core::{
    Binding, BindingError, Clock, Codec, ManualClock, Principal, Reason, Round, SealError,
};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

/// A gateway's limits: tool names and principal fields of at most 64 bytes, and its own
/// audience.
const GATEWAY: usize = AadLimits {
    target: 64,
    principal_field: 64,
    audience: AUDIENCE.len(),
    ..AadLimits::DEFAULT
}
.capacity();

fn gateway<C: Cipher, Clk: Clock>(
    clock: Clk,
) -> Codec<C, Clk, mrtr_core::replay::NoReplayCache, 4, GATEWAY> {
    Codec::builder(ring(), clock)
        .audience(AUDIENCE)
        .aad_capacity::<GATEWAY>()
        .build()
        .unwrap()
}

/// Method and protocol version of 32 bytes: the longest `Binding::new` takes.
const METHOD: &str = "tools/call-with-a-32-byte-name..";
const LONG_VERSION: &str = "2026-07-28+a-32-byte-version....";

/// Method and version at their limits, principal fields of `field` bytes each, and a target
/// of `target` bytes.
fn widest<'a>(target: &'a str, field: &'a str) -> Binding<'a> {
    let who = Principal::User {
        issuer: field,
        subject: field,
    };
    bind(METHOD, LONG_VERSION, target, who)
}

fn a_small_capacity_seals_the_same_tokens<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let (small, default) = (gateway::<C, _>(&clock), engine::<C, _>(&clock));
    assert_eq!(
        (small.aad_capacity(), default.aad_capacity()),
        (GATEWAY, MAX_AAD_LEN)
    );
    let a = first(&small, &mut SeqRng::new(7));
    let b = first(&default, &mut SeqRng::new(7));
    assert_eq!(a, b, "the capacity is not part of the token");
    assert_eq!(
        resume(&default, &a, &call(), &ARGS).unwrap().continuation,
        b"step=date"
    );
    assert_eq!(
        resume(&small, &b, &call(), &ARGS).unwrap().continuation,
        b"step=date"
    );
}

fn the_widest_binding_within_the_limits_fits_exactly<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let small = gateway::<C, _>(&clock);
    let (target, field) = ("t".repeat(64), "f".repeat(64));
    let b = widest(&target, &field);
    assert_eq!(b.aad_len(Some(AUDIENCE)), GATEWAY);
    let token = seal(&small, Round::FIRST, &b, &ARGS, b"x", &mut SeqRng::new(8));
    assert!(resume(&small, &token, &b, &ARGS).is_ok());
}

fn a_binding_over_the_capacity_is_refused_before_any_seal<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let (small, default) = (gateway::<C, _>(&clock), engine::<C, _>(&clock));
    let (target, field) = ("t".repeat(65), "f".repeat(64));
    let over = widest(&target, &field);
    assert_eq!(over.aad_len(Some(AUDIENCE)), GATEWAY + 1);

    let mut out = Buf::new();
    let err = small.pause(
        Round::FIRST,
        &over,
        &ARGS,
        b"x",
        &mut SeqRng::new(9),
        &mut out,
    );
    assert_eq!(
        err.unwrap_err(),
        SealError::Binding(BindingError::ExceedsAadCapacity)
    );
    assert_eq!(small.keys().current().seals_used(), 0, "no seal was spent");

    // A token sealed for it elsewhere (default capacity) is refused here, buffer wiped.
    let token = seal(
        &default,
        Round::FIRST,
        &over,
        &ARGS,
        b"x",
        &mut SeqRng::new(9),
    );
    assert!(resume(&default, &token, &over, &ARGS).is_ok());
    let mut buf = Buf::new();
    let r = small.resume(&token, &over, &ARGS, &mut buf).unwrap_err();
    assert_eq!(r.reason(), Reason::InvalidBinding);
    assert!(buf.is_wiped());
    assert_eq!(
        small
            .verify(&token, &over, &ARGS, &mut buf)
            .unwrap_err()
            .reason(),
        Reason::InvalidBinding
    );
    // Whatever the token: the binding is refused first.
    assert_eq!(
        rejected(&small, "garbage", &over, &ARGS),
        Reason::InvalidBinding
    );
}

mrtr_tests::per_backend!(
    a_small_capacity_seals_the_same_tokens,
    the_widest_binding_within_the_limits_fits_exactly,
    a_binding_over_the_capacity_is_refused_before_any_seal,
);
