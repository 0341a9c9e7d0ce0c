//! A token opens only for the method, protocol version, target and principal it was sealed
//! for. Each mismatch fails authentication (the binding is in the associated data).

use mrtr_core::cipher::Cipher;
use mrtr_core::{Binding, ManualClock, Principal, Reason, Round};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;

const BOB: Principal<'static> = Principal::User {
    issuer: "https://idp.example",
    subject: "bob",
};
const ALICE_ELSEWHERE: Principal<'static> = Principal::User {
    issuer: "https://other.example",
    subject: "alice",
};
const EMPTY_USER: Principal<'static> = Principal::User {
    issuer: "",
    subject: "",
};

/// Seals for `sealed` and resumes with `resumed`: `Ok(())` if accepted, else the reason.
fn cross<C: Cipher>(sealed: &Binding<'_>, resumed: &Binding<'_>) -> Result<(), Reason> {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    let token = seal(
        &mrtr,
        Round::FIRST,
        sealed,
        &ARGS,
        b"c",
        &mut SeqRng::new(1),
    );
    resume(&mrtr, &token, resumed, &ARGS)
        .map(|_| ())
        .map_err(|r| r.reason())
}

fn another_method_is_rejected<C: Cipher>() {
    let tool = bind("tools/call", VERSION, "x", ALICE);
    let prompt = bind("prompts/get", VERSION, "x", ALICE);
    assert_eq!(cross::<C>(&tool, &prompt), Err(Reason::Tampered));
    assert_eq!(cross::<C>(&prompt, &tool), Err(Reason::Tampered));
}

fn another_target_is_rejected<C: Cipher>() {
    let pairs = [
        ("book_table", "cancel_table"),
        ("book_table", "book_tabl"),
        ("book_table", ""),
        ("", "book_table"),
        ("a\0b", "a"),
    ];
    for (a, b) in pairs {
        let sealed = bind("tools/call", VERSION, a, ALICE);
        let other = bind("tools/call", VERSION, b, ALICE);
        assert_eq!(
            cross::<C>(&sealed, &other),
            Err(Reason::Tampered),
            "{a:?} -> {b:?}"
        );
    }
    let uri = bind("resources/read", VERSION, "file:///a/b.txt", ALICE);
    let sibling = bind("resources/read", VERSION, "file:///a/c.txt", ALICE);
    assert_eq!(cross::<C>(&uri, &sibling), Err(Reason::Tampered));
}

fn a_nul_inside_the_target_is_bound_verbatim<C: Cipher>() {
    let b = bind("tools/call", VERSION, "a\0b", ALICE);
    assert_eq!(cross::<C>(&b, &b), Ok(()));
}

fn another_protocol_version_is_rejected<C: Cipher>() {
    let now = bind("tools/call", VERSION, "x", ALICE);
    let old = bind("tools/call", "2025-11-25", "x", ALICE);
    let empty = bind("tools/call", "", "x", ALICE);
    assert_eq!(cross::<C>(&now, &old), Err(Reason::Tampered));
    assert_eq!(cross::<C>(&old, &now), Err(Reason::Tampered));
    assert_eq!(cross::<C>(&now, &empty), Err(Reason::Tampered));
}

fn another_principal_is_rejected<C: Cipher>() {
    let pairs = [
        (ALICE, BOB, "other subject"),
        (ALICE, ALICE_ELSEWHERE, "other issuer"),
        (ALICE, Principal::Anonymous, "authenticated -> anonymous"),
        (Principal::Anonymous, ALICE, "anonymous -> authenticated"),
        (EMPTY_USER, Principal::Anonymous, "empty user -> anonymous"),
        (Principal::Anonymous, EMPTY_USER, "anonymous -> empty user"),
        (
            Principal::User {
                issuer: "ab",
                subject: "c",
            },
            Principal::User {
                issuer: "a",
                subject: "bc",
            },
            "issuer/subject boundary",
        ),
    ];
    for (sealed, resumed, case) in pairs {
        let a = bind("tools/call", VERSION, "x", sealed);
        let b = bind("tools/call", VERSION, "x", resumed);
        assert_eq!(cross::<C>(&a, &b), Err(Reason::Tampered), "{case}");
    }
}

fn the_same_principal_is_accepted<C: Cipher>() {
    for who in [Principal::Anonymous, ALICE, EMPTY_USER] {
        let b = bind("tools/call", VERSION, "x", who);
        assert_eq!(cross::<C>(&b, &b), Ok(()), "{who:?}");
    }
}

mrtr_tests::per_backend!(
    another_method_is_rejected,
    another_target_is_rejected,
    a_nul_inside_the_target_is_bound_verbatim,
    another_protocol_version_is_rejected,
    another_principal_is_rejected,
    the_same_principal_is_accepted,
);
