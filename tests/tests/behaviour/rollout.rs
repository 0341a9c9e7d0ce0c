//! The rollout from format v1 to v2, on manual clocks: nodes of an older build (v1 only) and
//! upgraded nodes serving the same clients with the same keys, tokens crossing between them,
//! the default v1 window, and v1 turned off.

use mrtr_core::cipher::Cipher;
use mrtr_core::key::KeyRing;
use mrtr_core::{
    AcceptV1, Codec, ConfigError, DEFAULT_MAX_CLOCK_SKEW_MS, DEFAULT_TTL_MS, ManualClock, Reason,
    Round, TokenFormat,
};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

/// One lifetime plus the skew: the default v1 window after an engine is built.
const WINDOW: u64 = DEFAULT_TTL_MS + DEFAULT_MAX_CLOCK_SKEW_MS;

/// A node of the build from before format v2: it seals v1 and reads v1 alone, so it refuses
/// every other version as unsupported before anything else, as that build's header check
/// did. Built here from today's engine sealing v1 (the same bytes, the v1 code path).
struct OldBuild<'c, C> {
    engine: Codec<C, &'c ManualClock>,
}

impl<'c, C: Cipher> OldBuild<'c, C> {
    fn new(clock: &'c ManualClock) -> Self {
        let engine = Codec::builder(ring::<C>(), clock)
            .without_audience() // the old build had no audience
            .seal_format(TokenFormat::V1)
            .build()
            .unwrap();
        Self { engine }
    }

    fn resume(&self, token: &str) -> Result<Opened, Reason> {
        if header(token).0 != 1 {
            return Err(Reason::UnsupportedVersion);
        }
        resume(&self.engine, token, &call(), &ARGS).map_err(|r| r.reason())
    }

    fn pause(&self, round: Round, rng: &mut SeqRng) -> String {
        seal(&self.engine, round, &call(), &ARGS, b"old", rng)
    }
}

fn version(token: &str) -> u8 {
    header(token).0
}

/// Resumes on `node` and pauses again there: one hop of a chain. Returns the new token.
fn hop<C: Cipher>(node: &Codec<C, &ManualClock>, token: &str, rng: &mut SeqRng) -> String {
    let next = resume(node, token, &call(), &ARGS)
        .unwrap_or_else(|r| panic!("{:?}", r.reason()))
        .next_round;
    seal(node, next, &call(), &ARGS, b"new", rng)
}

fn a_two_node_rollout<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mut rng = SeqRng::new(1);
    let old = OldBuild::<C>::new(&clock);

    // Step 1: the new build joins the fleet sealing v1, so that the old build, which reads
    // v1 alone, still opens what it seals. Tokens cross both ways.
    let joining = builder::<C, _>(&clock)
        .seal_format(TokenFormat::V1)
        .build()
        .unwrap();
    assert_eq!(joining.accept_v1(), AcceptV1::Always);
    let t1 = old.pause(Round::FIRST, &mut rng);
    let t2 = hop(&joining, &t1, &mut rng); // old -> new
    assert_eq!(version(&t2), 1);
    let r2 = old.resume(&t2).unwrap(); // new -> old
    assert_eq!(r2.round, 2);
    let t3 = old.pause(r2.next_round, &mut rng);
    let t4 = hop(&joining, &t3, &mut rng); // old -> new again
    assert_eq!(old.resume(&t4).unwrap().round, 4);

    // Why step 1 exists: a v2 token reaching the old build is refused there.
    let v2_node = builder::<C, _>(&clock).build().unwrap();
    let v2_token = first(&v2_node, &mut rng);
    assert_eq!(
        old.resume(&v2_token).map(|o| o.round),
        Err(Reason::UnsupportedVersion)
    );

    // Step 2, ten minutes later: the old build is gone; every node restarts sealing v2. The
    // v1 tokens still in flight open during the window; v2 tokens cross between nodes.
    clock.set(NOW + 600_000);
    let in_flight = seal(&joining, Round::FIRST, &call(), &ARGS, b"late", &mut rng);
    assert_eq!(version(&in_flight), 1);
    let (a, b) = (
        builder::<C, _>(&clock).build().unwrap(),
        builder::<C, _>(&clock).build().unwrap(),
    );
    let opened = resume(&a, &in_flight, &call(), &ARGS).unwrap();
    assert_eq!(opened.round, 1);
    let v2 = seal(&a, opened.next_round, &call(), &ARGS, b"a", &mut rng);
    assert_eq!(version(&v2), 2);
    let v2 = hop(&b, &v2, &mut rng); // a -> b
    let v2 = hop(&a, &v2, &mut rng); // b -> a
    assert_eq!(resume(&b, &v2, &call(), &ARGS).unwrap().round, 4);

    // A straggler still sealing v1 after the restart: its tokens open until the window
    // closes, then are refused although they have not expired.
    clock.advance(WINDOW - 1_000);
    let straggler = seal(&joining, Round::FIRST, &call(), &ARGS, b"s", &mut rng);
    assert!(resume(&a, &straggler, &call(), &ARGS).is_ok());
    clock.advance(1_000);
    assert_eq!(
        rejected(&a, &straggler, &call(), &ARGS),
        Reason::VersionRetired
    );
    assert!(
        resume(&joining, &straggler, &call(), &ARGS).is_ok(),
        "not expired"
    );

    // Step 3: v1 turned off explicitly; v2 keeps working.
    let off = builder::<C, _>(&clock)
        .accept_v1(AcceptV1::Never)
        .build()
        .unwrap();
    let fresh_v1 = seal(&joining, Round::FIRST, &call(), &ARGS, b"x", &mut rng);
    assert_eq!(
        rejected(&off, &fresh_v1, &call(), &ARGS),
        Reason::VersionRetired
    );
    let fresh_v2 = first(&b, &mut rng);
    assert!(resume(&off, &fresh_v2, &call(), &ARGS).is_ok());
}

fn the_default_window_is_one_lifetime_plus_the_skew<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let v1_sealer = builder::<C, _>(&clock)
        .seal_format(TokenFormat::V1)
        .build()
        .unwrap();
    let node = engine::<C, _>(&clock);
    assert_eq!(node.accept_v1(), AcceptV1::Until(NOW + WINDOW));
    let mut rng = SeqRng::new(2);
    clock.set(NOW + WINDOW - 1_000);
    let token = first(&v1_sealer, &mut rng);
    clock.set(NOW + WINDOW - 1);
    assert_eq!(
        resume(&node, &token, &call(), &ARGS).unwrap().continuation,
        b"step=date"
    );
    clock.set(NOW + WINDOW);
    assert_eq!(
        rejected(&node, &token, &call(), &ARGS),
        Reason::VersionRetired
    );
    // The window follows the configured lifetime and skew.
    clock.set(NOW);
    let custom = builder::<C, _>(&clock)
        .ttl_ms(1_000)
        .max_lifetime_ms(2_000)
        .max_clock_skew_ms(500)
        .build()
        .unwrap();
    assert_eq!(custom.accept_v1(), AcceptV1::Until(NOW + 2_500));
    // ... and never overflows.
    let huge = builder::<C, _>(&clock)
        .max_lifetime_ms(u64::MAX)
        .build()
        .unwrap();
    assert_eq!(huge.accept_v1(), AcceptV1::Until(u64::MAX));
}

fn an_explicit_deadline_and_always<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let v1_sealer = builder::<C, _>(&clock)
        .seal_format(TokenFormat::V1)
        .build()
        .unwrap();
    let deadline = NOW + 86_400_000;
    let until = builder::<C, _>(&clock)
        .accept_v1(AcceptV1::Until(deadline))
        .build()
        .unwrap();
    let always = builder::<C, _>(&clock)
        .accept_v1(AcceptV1::Always)
        .build()
        .unwrap();
    assert_eq!(until.accept_v1(), AcceptV1::Until(deadline));
    assert_eq!(always.accept_v1(), AcceptV1::Always);
    let mut rng = SeqRng::new(3);
    clock.set(deadline - 1_000);
    let token = first(&v1_sealer, &mut rng);
    clock.set(deadline - 1);
    assert!(resume(&until, &token, &call(), &ARGS).is_ok());
    clock.set(deadline);
    assert_eq!(
        rejected(&until, &token, &call(), &ARGS),
        Reason::VersionRetired
    );
    assert!(resume(&always, &token, &call(), &ARGS).is_ok());
    // A deadline in the past is the same as off.
    let past = builder::<C, _>(&clock)
        .accept_v1(AcceptV1::Until(NOW))
        .build()
        .unwrap();
    assert_eq!(
        rejected(&past, &token, &call(), &ARGS),
        Reason::VersionRetired
    );
}

fn a_v1_token_is_checked_against_everything_but_the_audience<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let booking = engine::<C, _>(&clock);
    let mut rng = SeqRng::new(4);
    // Another service, same key, sealing v1 (which has no audience field).
    let billing_v1 = Codec::builder(ring::<C>(), &clock)
        .audience("billing.example")
        .seal_format(TokenFormat::V1)
        .build()
        .unwrap();
    let theirs = first(&billing_v1, &mut rng);
    // During the window the audience cannot be checked: this is what the window bounds.
    let opened = resume(&booking, &theirs, &call(), &ARGS).unwrap();
    assert_eq!(opened.round, 1);
    let off = builder::<C, _>(&clock)
        .accept_v1(AcceptV1::Never)
        .build()
        .unwrap();
    assert_eq!(
        rejected(&off, &theirs, &call(), &ARGS),
        Reason::VersionRetired
    );
    // Everything else binds as in v2: caller, target, arguments, lifetime, issue time.
    let anon = bind(
        "tools/call",
        VERSION,
        "book_table",
        mrtr_core::Principal::Anonymous,
    );
    let other_tool = bind("tools/call", VERSION, "cancel_table", ALICE);
    assert_eq!(rejected(&booking, &theirs, &anon, &ARGS), Reason::Tampered);
    assert_eq!(
        rejected(&booking, &theirs, &other_tool, &ARGS),
        Reason::Tampered
    );
    assert_eq!(
        rejected(&booking, &theirs, &call(), &OTHER_ARGS),
        Reason::ArgumentsMismatch
    );
    let long_v1 = Codec::builder(ring::<C>(), &clock)
        .without_audience()
        .seal_format(TokenFormat::V1)
        .ttl_ms(DEFAULT_TTL_MS + 1)
        .build()
        .unwrap();
    assert_eq!(
        rejected(&booking, &first(&long_v1, &mut rng), &call(), &ARGS),
        Reason::LifetimeExceeded
    );
    let ahead = ManualClock::new(NOW + 60_001);
    let ahead_v1 = Codec::builder(ring::<C>(), &ahead)
        .without_audience()
        .seal_format(TokenFormat::V1)
        .build()
        .unwrap();
    assert_eq!(
        rejected(&booking, &first(&ahead_v1, &mut rng), &call(), &ARGS),
        Reason::IssuedInFuture
    );
    clock.advance(DEFAULT_TTL_MS);
    assert_eq!(rejected(&booking, &theirs, &call(), &ARGS), Reason::Expired);
}

fn retirement_is_decided_from_the_header_alone<C: Cipher>() {
    // Refused before the key lookup: no key is tried for a retired format.
    let clock = ManualClock::new(NOW);
    let mut rng = SeqRng::new(5);
    let foreign = Codec::builder(KeyRing::<C, 4>::new(key("k9", 9)), &clock)
        .without_audience()
        .seal_format(TokenFormat::V1)
        .build()
        .unwrap();
    let unknown_key_v1 = first(&foreign, &mut rng);
    let off = builder::<C, _>(&clock)
        .accept_v1(AcceptV1::Never)
        .build()
        .unwrap();
    assert_eq!(
        rejected(&off, &unknown_key_v1, &call(), &ARGS),
        Reason::VersionRetired
    );
    let on = engine::<C, _>(&clock);
    assert_eq!(
        rejected(&on, &unknown_key_v1, &call(), &ARGS),
        Reason::UnknownKey
    );
}

fn an_engine_opens_what_it_seals<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    for accept in [AcceptV1::Never, AcceptV1::Until(NOW + 1)] {
        let err = builder::<C, _>(&clock)
            .seal_format(TokenFormat::V1)
            .accept_v1(accept)
            .build()
            .unwrap_err();
        assert_eq!(err, ConfigError::SealsRefusedFormat, "{accept:?}");
        assert!(err.to_string().contains("v1"), "{err}");
    }
    let v1 = builder::<C, _>(&clock)
        .seal_format(TokenFormat::V1)
        .accept_v1(AcceptV1::Always)
        .build()
        .unwrap();
    assert_eq!(v1.seal_format(), TokenFormat::V1);
    // It opens its own tokens far beyond any window.
    let mut rng = SeqRng::new(6);
    clock.set(NOW + 365 * 86_400_000);
    let token = first(&v1, &mut rng);
    let mut buf = Buf::new();
    let r = v1.resume(&token, &call(), &ARGS, &mut buf).unwrap();
    assert_eq!(r.format(), TokenFormat::V1);
}

mrtr_tests::per_backend!(
    a_two_node_rollout,
    the_default_window_is_one_lifetime_plus_the_skew,
    an_explicit_deadline_and_always,
    a_v1_token_is_checked_against_everything_but_the_audience,
    retirement_is_decided_from_the_header_alone,
    an_engine_opens_what_it_seals,
);
