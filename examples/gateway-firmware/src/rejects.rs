//! Tokens that must not open: tampered, truncated, oversized, for another caller or tool,
//! with other arguments, or under an unknown key. Also: a token sealed before a key rotation
//! still opens after it.

use mrtr_core::cipher::Cipher;
use mrtr_core::{Mrtr, Principal, Reason, Round, TokenBuf};
use rand_core::TryCryptoRng;

use crate::clock::SysTickClock;
use crate::report::Report;
use crate::text::TokenText;
use crate::{ARGS, OWNER, TOKEN_CAP, TOOL, Token, call, keys};

/// Runs every rejection scenario.
pub fn run<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) {
    report.section("rejected tokens");
    let Ok(mrtr) = Mrtr::builder(keys::ring::<C>(), SysTickClock)
        .without_audience()
        .build()
    else {
        report.check(false, format_args!("configuration builds"));
        return;
    };
    let binding = call(TOOL, OWNER);
    let mut sealed = Token::new();
    let text = match mrtr.pause(
        Round::FIRST,
        &binding,
        &ARGS,
        b"awaiting: confirm",
        rng,
        &mut sealed,
    ) {
        Ok(s) => TokenText::of(s.as_str()),
        Err(e) => {
            report.check(false, format_args!("pause: {e}"));
            return;
        }
    };
    let token = text.as_str();
    let mut buf = Token::new();
    report.check(
        mrtr.resume(token, &binding, &ARGS, &mut buf).is_ok(),
        format_args!("the untouched token opens ({} chars)", token.len()),
    );

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
        let t = text.flipped(at);
        report.rejected(
            mrtr.resume(t.as_str(), &binding, &ARGS, &mut buf),
            want,
            format_args!("char {at} of {n} changed"),
        );
    }
    // One char less is either an impossible length or cuts the tag: either way, rejected.
    report.rejected_any(
        mrtr.resume(text.truncated(n - 1).as_str(), &binding, &ARGS, &mut buf),
        format_args!("truncated to {} chars", n - 1),
    );
    // Cut at a base64 group boundary: decodes cleanly, but the tag is gone.
    for (len, want) in [
        ((n / 4 - 1) * 4, Reason::Tampered),
        (40, Reason::Malformed),
        (0, Reason::Malformed),
    ] {
        let t = text.truncated(len);
        report.rejected(
            mrtr.resume(t.as_str(), &binding, &ARGS, &mut buf),
            want,
            format_args!("truncated to {len} chars"),
        );
    }

    // Oversized: longer than the buffer, refused before decoding.
    let long = text.oversized();
    report.rejected(
        mrtr.resume(long.as_str(), &binding, &ARGS, &mut buf),
        Reason::TooLong,
        format_args!("{} chars into a {TOKEN_CAP}-byte buffer", long.len()),
    );
    let mut small: TokenBuf<64> = TokenBuf::new();
    report.rejected(
        mrtr.resume(token, &binding, &ARGS, &mut small),
        Reason::TooLong,
        format_args!("valid token into a 64-byte buffer"),
    );

    // Bound to the caller, the tool and the arguments.
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
        report.rejected(
            mrtr.resume(token, &other, &ARGS, &mut buf),
            Reason::Tampered,
            format_args!("{what}"),
        );
    }
    let mut other_args = ARGS;
    other_args[31] ^= 1;
    report.rejected(
        mrtr.resume(token, &binding, &other_args, &mut buf),
        Reason::ArgumentsMismatch,
        format_args!("other arguments"),
    );

    rotation::<C>(report, rng, &text);
}

/// Key ids: a foreign ring has no key for the token; a token sealed before rotation opens
/// after it; a token sealed after rotation does not open on a node not yet rotated.
fn rotation<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng, current: &TokenText) {
    let binding = call(TOOL, OWNER);
    let mut buf = Token::new();
    let (Ok(rotated), Ok(old), Ok(foreign)) = (
        Mrtr::builder(keys::ring::<C>(), SysTickClock)
            .without_audience()
            .build(),
        Mrtr::builder(keys::before_rotation::<C>(), SysTickClock)
            .without_audience()
            .build(),
        Mrtr::builder(keys::foreign::<C>(), SysTickClock)
            .without_audience()
            .build(),
    ) else {
        report.check(false, format_args!("key rings build"));
        return;
    };
    report.rejected(
        foreign.resume(current.as_str(), &binding, &ARGS, &mut buf),
        Reason::UnknownKey,
        format_args!("unknown key id"),
    );
    report.rejected(
        old.resume(current.as_str(), &binding, &ARGS, &mut buf),
        Reason::UnknownKey,
        format_args!("new key's token on a node not yet rotated"),
    );
    let mut sealed = Token::new();
    match old.pause(
        Round::FIRST,
        &binding,
        &ARGS,
        b"before rotation",
        rng,
        &mut sealed,
    ) {
        Ok(s) => {
            let opened = rotated.resume(s.as_str(), &binding, &ARGS, &mut buf);
            report.check(
                opened.is_ok_and(|r| r.continuation() == b"before rotation"),
                format_args!(
                    "token of previous key {} opens after rotation",
                    keys::PREVIOUS_ID
                ),
            );
        }
        Err(e) => {
            report.check(false, format_args!("pause before rotation: {e}"));
        }
    }
}
