//! Tokens that must not open: tampered, truncated, oversized, for another caller or tool,
//! with other arguments, or under an unknown key. A binding too large for the gateway's AAD
//! capacity is refused whole. Also: a token sealed before a key rotation still opens after it.
//!
//! Each part runs in a frame of its own (`#[inline(never)]`), holding one engine at a time.

use mrtr_core::cipher::Cipher;
use mrtr_core::replay::NoReplayCache;
use mrtr_core::{BindingError, Codec, Principal, Reason, SealError, TokenBuf};
use rand_core::TryCryptoRng;

use crate::clock::{CLOCK, Uptime, WallClock};
use crate::report::{Outcome, Report, outcome};
use crate::text::TokenText;
use crate::{
    AAD, ARGS, OWNER, TOKEN_CAP, TOOL, call, check, issue, keys, open, opens_to, rejected,
    rejected_any,
};

type Engine<C> = Codec<C, &'static WallClock<Uptime>, NoReplayCache, 2, AAD>;

fn engine<C: Cipher>(ring: keys::Ring<C>) -> Option<Engine<C>> {
    Codec::builder(ring, &CLOCK)
        .aad_capacity::<AAD>()
        .audience(crate::GATEWAY_ID)
        .build()
        .ok()
}

/// Runs every rejection scenario.
pub fn run<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) {
    defmt::println!("-- rejected tokens");
    let Some(text) = sealed::<C>(report, rng) else {
        return;
    };
    tampered::<C>(report, &text);
    bound::<C>(report, &text);
    capacity::<C>(report, rng);
    unknown_keys::<C>(report, &text);
    rotation::<C>(report, rng);
}

/// The token the scenarios tamper with.
#[inline(never)]
fn sealed<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) -> Option<TokenText> {
    let Some(mrtr) = engine::<C>(keys::ring()) else {
        check!(report, false, "configuration builds");
        return None;
    };
    let binding = call(TOOL, OWNER);
    match issue(&mrtr, &binding, b"awaiting: confirm", rng) {
        Ok(t) => {
            let token = t.text.as_str();
            check!(
                report,
                opens_to(&mrtr, token, &binding, b"awaiting: confirm"),
                "the untouched token opens ({=usize} chars)",
                token.len()
            );
            Some(t.text)
        }
        Err(e) => {
            check!(report, false, "pause: {}", e);
            None
        }
    }
}

/// Changed, cut and oversized tokens.
#[inline(never)]
fn tampered<C: Cipher>(report: &mut Report, text: &TokenText) {
    let Some(mrtr) = engine::<C>(keys::ring()) else {
        check!(report, false, "configuration builds");
        return;
    };
    let binding = call(TOOL, OWNER);
    // Tampering. The header is version, algorithm, key id length, key id ("gw-2026-11"):
    // base64 char 1 carries the version's low bits, char 2 the algorithm's, char 6 key id
    // bytes. Then come the nonce, the sealed state and the tag.
    let n = text.len();
    for (at, want) in [
        (1, Reason::UnsupportedVersion),
        (2, Reason::WrongAlgorithm),
        (6, Reason::UnknownKey),
        (20, Reason::Tampered),
        (n / 2, Reason::Tampered),
        (n - 2, Reason::Tampered),
    ] {
        rejected!(
            report,
            open(&mrtr, text.flipped(at).as_str(), &binding, &ARGS),
            want,
            "char {=usize} of {=usize} changed",
            at,
            n
        );
    }
    // One char less is either an impossible length or cuts the tag: either way, rejected.
    rejected_any!(
        report,
        open(&mrtr, text.truncated(n - 1).as_str(), &binding, &ARGS),
        "truncated to {=usize} chars",
        n - 1
    );
    // Cut at a base64 group boundary: decodes cleanly, but the tag is gone.
    for (len, want) in [
        ((n / 4 - 1) * 4, Reason::Tampered),
        (40, Reason::Malformed),
        (0, Reason::Malformed),
    ] {
        rejected!(
            report,
            open(&mrtr, text.truncated(len).as_str(), &binding, &ARGS),
            want,
            "truncated to {=usize} chars",
            len
        );
    }
    // Oversized: longer than the buffer, refused before decoding.
    let long = text.oversized();
    rejected!(
        report,
        open(&mrtr, long.as_str(), &binding, &ARGS),
        Reason::TooLong,
        "{=usize} chars into a {=usize}-byte buffer",
        long.len(),
        TOKEN_CAP
    );
    let mut small: TokenBuf<64> = TokenBuf::new();
    rejected!(
        report,
        outcome(&mrtr.resume(text.as_str(), &binding, &ARGS, &mut small)),
        Reason::TooLong,
        "valid token into a 64-byte buffer"
    );
}

/// Bound to the caller, the tool and the arguments.
#[inline(never)]
fn bound<C: Cipher>(report: &mut Report, text: &TokenText) {
    let Some(mrtr) = engine::<C>(keys::ring()) else {
        check!(report, false, "configuration builds");
        return;
    };
    let token = text.as_str();
    let mallory = Principal::User {
        issuer: "https://idp.example",
        subject: "mallory",
    };
    let cases = [
        (call(TOOL, mallory), "another subject"),
        (
            call(
                TOOL,
                Principal::User {
                    issuer: "https://evil.example",
                    subject: "owner-42",
                },
            ),
            "another issuer",
        ),
        (call(TOOL, Principal::Anonymous), "anonymous caller"),
        (call("thermostat.unlock", OWNER), "another target"),
    ];
    for (other, what) in cases {
        rejected!(
            report,
            open(&mrtr, token, &other, &ARGS),
            Reason::Tampered,
            "{=str}",
            what
        );
    }
    let mut other_args = ARGS;
    other_args[31] ^= 1;
    rejected!(
        report,
        open(&mrtr, token, &call(TOOL, OWNER), &other_args),
        Reason::ArgumentsMismatch,
        "other arguments"
    );
}

/// A long target, such as a resource URI: longer than any the gateway's AAD buffer holds
/// with the gateway's caller, still valid for `Binding::new` (at most 1,024 bytes).
const LONG_TARGET: &str = concat!(
    "https://gateway.example/resources/thermostat/ground-floor/zone-4/schedules/weekly/",
    "2026-11-30/programs/heating/comfort/setpoints/morning-evening-night/overrides/",
    "holiday-calendar/exceptions/including-every-public-holiday-of-the-region-and-more"
);

/// The AAD capacity is a limit of the gateway: a binding whose associated data exceeds it is
/// refused as a whole, before any seal is spent, and a token for it never opens here; one
/// byte less fits.
#[inline(never)]
fn capacity<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) {
    let Some(mrtr) = engine::<C>(keys::ring()) else {
        check!(report, false, "configuration builds");
        return;
    };
    // Room for the target: the capacity less what the rest of the binding takes.
    let room = AAD - call("", OWNER).aad_len(Some(crate::GATEWAY_ID));
    let (over, fits) = (&LONG_TARGET[..room + 1], &LONG_TARGET[..room]);
    let (long, exact) = (call(over, OWNER), call(fits, OWNER));
    defmt::println!(
        "   AAD capacity {=usize} B leaves {=usize} B for this caller's target",
        AAD,
        room
    );
    let seals = mrtr.keys().current().seals_used();
    let refused = issue(&mrtr, &long, b"x", rng).err();
    check!(
        report,
        refused == Some(SealError::Binding(BindingError::ExceedsAadCapacity))
            && mrtr.keys().current().seals_used() == seals,
        "{=usize}-byte target ({=usize} B of AAD): pause refused ({}), no seal spent",
        over.len(),
        long.aad_len(Some(crate::GATEWAY_ID)),
        refused
    );
    let ok = issue(&mrtr, &exact, b"x", rng)
        .is_ok_and(|t| opens_to(&mrtr, t.text.as_str(), &exact, b"x"));
    check!(
        report,
        ok && exact.aad_len(Some(crate::GATEWAY_ID)) == AAD,
        "{=usize}-byte target (exactly the capacity): seals and opens",
        fits.len()
    );
    foreign_capacity::<C>(report, rng, &mrtr, &long);
}

/// A default-capacity node seals for the long target; the gateway refuses the binding.
#[inline(never)]
fn foreign_capacity<C: Cipher>(
    report: &mut Report,
    rng: &mut impl TryCryptoRng,
    gateway: &Engine<C>,
    long: &mrtr_core::Binding<'_>,
) {
    let Ok(wide) = Codec::builder(keys::ring::<C>(), &CLOCK)
        .audience(crate::GATEWAY_ID)
        .build()
    else {
        check!(report, false, "default configuration builds");
        return;
    };
    match issue(&wide, long, b"x", rng) {
        Ok(t) => {
            rejected!(
                report,
                open(gateway, t.text.as_str(), long, &ARGS),
                Reason::InvalidBinding,
                "its token from a default-capacity node"
            );
        }
        Err(e) => {
            check!(report, false, "default-capacity pause: {}", e);
        }
    }
}

/// A foreign ring has no key for the token, nor has a node not yet rotated.
#[inline(never)]
fn unknown_keys<C: Cipher>(report: &mut Report, current: &TokenText) {
    rejected!(
        report,
        open_with::<C>(keys::foreign::<C>, current),
        Reason::UnknownKey,
        "unknown key id"
    );
    rejected!(
        report,
        open_with::<C>(keys::before_rotation::<C>, current),
        Reason::UnknownKey,
        "new key's token on a node not yet rotated"
    );
}

/// What an engine over the ring `ring()` makes of `token`.
#[inline(never)]
fn open_with<C: Cipher>(ring: fn() -> keys::Ring<C>, token: &TokenText) -> Outcome {
    engine::<C>(ring()).map_or(Outcome::Accepted, |m| {
        open(&m, token.as_str(), &call(TOOL, OWNER), &ARGS)
    })
}

/// A token sealed before rotation opens after it.
#[inline(never)]
fn rotation<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) {
    let binding = call(TOOL, OWNER);
    let old = engine::<C>(keys::before_rotation())
        .map(|old| issue(&old, &binding, b"before rotation", rng));
    let Some(Ok(token)) = old else {
        check!(report, false, "pause before rotation");
        return;
    };
    let opened = engine::<C>(keys::ring())
        .is_some_and(|m| opens_to(&m, token.text.as_str(), &binding, b"before rotation"));
    check!(
        report,
        opened,
        "token of previous key {=str} opens after rotation",
        keys::PREVIOUS_ID
    );
}
