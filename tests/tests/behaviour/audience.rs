//! The audience: services that share key material but not an identity refuse each other's
//! tokens, "no audience" is an identity of its own, and leaving the audience out is an
//! explicit choice (it does not compile otherwise; see `mrtr_tests::fixture::engine`).

use mrtr_core::cipher::Cipher;
use mrtr_core::limits::MAX_AUDIENCE_LEN;
use mrtr_core::{Codec, ConfigError, ManualClock, Reason, Round, TokenFormat};
use mrtr_tests::b64;
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

/// An engine over the tests' ring (same key for every service) bound to `audience`.
fn service<'c, C: Cipher>(
    clock: &'c ManualClock,
    audience: Option<&str>,
) -> Codec<C, &'c ManualClock> {
    choose_audience(Codec::builder(ring::<C>(), clock), audience)
        .build()
        .unwrap()
}

fn two_services_with_one_key_refuse_each_others_tokens<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let booking = service::<C>(&clock, Some("booking.example"));
    let billing = service::<C>(&clock, Some("billing.example"));
    let mut rng = SeqRng::new(1);
    let from_booking = first(&booking, &mut rng);
    let from_billing = first(&billing, &mut rng);
    // Control: each opens its own.
    assert!(resume(&booking, &from_booking, &call(), &ARGS).is_ok());
    assert!(resume(&billing, &from_billing, &call(), &ARGS).is_ok());
    // Same key, same tool name, same caller: refused across services, both ways.
    assert_eq!(
        rejected(&billing, &from_booking, &call(), &ARGS),
        Reason::Tampered
    );
    assert_eq!(
        rejected(&booking, &from_billing, &call(), &ARGS),
        Reason::Tampered
    );
}

fn nodes_of_one_service_share_its_tokens<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let (a, b) = (
        service::<C>(&clock, Some(AUDIENCE)),
        service::<C>(&clock, Some(AUDIENCE)),
    );
    let token = first(&a, &mut SeqRng::new(2));
    assert_eq!(
        resume(&b, &token, &call(), &ARGS).unwrap().continuation,
        b"step=date"
    );
}

fn no_audience_is_not_any_audience<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let bound = service::<C>(&clock, Some(AUDIENCE));
    let unbound = service::<C>(&clock, None);
    let mut rng = SeqRng::new(3);
    let from_unbound = first(&unbound, &mut rng);
    let from_bound = first(&bound, &mut rng);
    assert!(resume(&unbound, &from_unbound, &call(), &ARGS).is_ok());
    assert_eq!(
        rejected(&bound, &from_unbound, &call(), &ARGS),
        Reason::Tampered
    );
    assert_eq!(
        rejected(&unbound, &from_bound, &call(), &ARGS),
        Reason::Tampered
    );
    // Not even an audience that looks like the "none" marker.
    let zero = service::<C>(&clock, Some("\0"));
    assert_eq!(
        rejected(&zero, &from_unbound, &call(), &ARGS),
        Reason::Tampered
    );
}

fn audiences_differing_in_one_byte_or_length_are_distinct<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let base = service::<C>(&clock, Some("svc"));
    let token = first(&base, &mut SeqRng::new(4));
    for other in ["svC", "sv", "svc ", "svc\0", "Svc"] {
        assert_eq!(
            rejected(&service::<C>(&clock, Some(other)), &token, &call(), &ARGS),
            Reason::Tampered,
            "{other:?}"
        );
    }
}

fn the_audience_is_bound_not_carried<C: Cipher>() {
    // A v2 token has the same length whatever the audience: it travels only in the
    // associated data, which both sides rebuild.
    let clock = ManualClock::new(NOW);
    let short = first(&service::<C>(&clock, Some("a")), &mut SeqRng::new(5));
    let long_name = "a".repeat(MAX_AUDIENCE_LEN);
    let long = first(&service::<C>(&clock, Some(&long_name)), &mut SeqRng::new(5));
    let none = first(&service::<C>(&clock, None), &mut SeqRng::new(5));
    let len = |t: &str| b64::decode(t).unwrap().len();
    assert_eq!(len(&short), len(&long));
    assert_eq!(len(&short), len(&none));
    assert_eq!(header(&short).0, TokenFormat::V2.byte());
    assert_eq!(header(&none).0, TokenFormat::V2.byte());
}

fn the_audience_is_validated_at_build<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let build = |a: &str| {
        Codec::builder(ring::<C>(), &clock)
            .audience(a)
            .build()
            .map(|m| m.audience().map(str::to_owned))
    };
    assert_eq!(build("").unwrap_err(), ConfigError::EmptyAudience);
    let longest = "é".repeat(MAX_AUDIENCE_LEN / 2); // 254 bytes of UTF-8
    assert_eq!(build(&longest).unwrap(), Some(longest.clone()));
    let exactly = "x".repeat(MAX_AUDIENCE_LEN);
    assert_eq!(build(&exactly).unwrap(), Some(exactly));
    let over = "x".repeat(MAX_AUDIENCE_LEN + 1);
    let err = build(&over).unwrap_err();
    assert_eq!(err, ConfigError::AudienceTooLong);
    assert!(err.to_string().contains("255"), "{err}");
    let err = build("").unwrap_err();
    assert!(err.to_string().contains("without_audience"), "{err}");
    // The audience error is reported even when another setting is wrong too.
    let err = Codec::builder(ring::<C>(), &clock)
        .ttl_ms(0)
        .audience("")
        .build()
        .unwrap_err();
    assert_eq!(err, ConfigError::EmptyAudience);
    // A later choice replaces an earlier one.
    let m = Codec::builder(ring::<C>(), &clock)
        .audience("first")
        .without_audience()
        .build()
        .unwrap();
    assert_eq!(m.audience(), None);
    let m = Codec::builder(ring::<C>(), &clock)
        .without_audience()
        .audience("second")
        .build()
        .unwrap();
    assert_eq!(m.audience(), Some("second"));
}

fn sealed_reports_the_format<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    assert_eq!(mrtr.seal_format(), TokenFormat::V2);
    let mut out = Buf::new();
    let sealed = mrtr
        .pause(
            Round::FIRST,
            &call(),
            &ARGS,
            b"",
            &mut SeqRng::new(6),
            &mut out,
        )
        .unwrap();
    assert_eq!(sealed.format(), TokenFormat::V2);
    let token = sealed.as_str().to_owned();
    let mut buf = Buf::new();
    let resumed = mrtr.resume(&token, &call(), &ARGS, &mut buf).unwrap();
    assert_eq!(resumed.format(), TokenFormat::V2);
}

mrtr_tests::per_backend!(
    two_services_with_one_key_refuse_each_others_tokens,
    nodes_of_one_service_share_its_tokens,
    no_audience_is_not_any_audience,
    audiences_differing_in_one_byte_or_length_are_distinct,
    the_audience_is_bound_not_carried,
    the_audience_is_validated_at_build,
    sealed_reports_the_format,
);
