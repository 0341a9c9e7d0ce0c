//! A full resume chain: the call pauses, each resume pauses again, up to the round cap
//! (default 10 invocations: the call and 9 resumes). At the cap the gateway issues no token
//! that could resume, and a token of a later round, sealed by a node with a higher cap, is
//! refused.

use mrtr_core::cipher::Cipher;
use mrtr_core::replay::NoReplayCache;
use mrtr_core::{Codec, DEFAULT_MAX_ROUNDS, Reason, Round, SealError};
use rand_core::TryCryptoRng;

use crate::clock::{CLOCK, Uptime, WallClock};
use crate::report::{Outcome, Report};
use crate::text::TokenText;
use crate::{AAD, ARGS, OWNER, TOOL, Token, call, check, keys, open, rejected};

/// The continuation a handler seals after invocation `n`: which step it waits in.
fn step(n: u32) -> [u8; 9] {
    let mut c = *b"step=0000";
    for (i, d) in n.to_be_bytes().iter().enumerate() {
        c[5 + i] = b'a' + (d & 0x0f);
    }
    c
}

/// Runs the chain and checks where it stops.
pub fn run<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) {
    defmt::println!("-- resume chain up to the round cap");
    if let Some(round) = walk::<C>(report, rng) {
        at_the_cap::<C>(report, rng, round);
    }
}

/// The call and every resume up to the cap; returns the round the next pause would be in.
#[inline(never)]
fn walk<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) -> Option<Round> {
    let Ok(mrtr) = Codec::builder(keys::ring::<C>(), &CLOCK)
        .aad_capacity::<AAD>()
        .audience(crate::GATEWAY_ID)
        .build()
    else {
        check!(report, false, "default configuration builds");
        return None;
    };
    let binding = call(TOOL, OWNER);
    let (mut sealed_buf, mut open_buf) = (Token::new(), Token::new());
    let mut round = Round::FIRST;
    let mut resumes_ok = 0u32;
    // Invocations 1..cap-1 pause, and each token resumes the next invocation.
    while round.get() < DEFAULT_MAX_ROUNDS {
        let sealed = mrtr.pause(
            round,
            &binding,
            &ARGS,
            &step(round.get()),
            rng,
            &mut sealed_buf,
        );
        let token = match sealed {
            Ok(s) => s.as_str(),
            Err(e) => {
                check!(report, false, "pause in round {=u32}: {}", round.get(), e);
                return None;
            }
        };
        match mrtr.resume(token, &binding, &ARGS, &mut open_buf) {
            Ok(r) if r.round() == round.get() && r.continuation() == step(round.get()) => {
                resumes_ok += 1;
                round = r.next_round();
            }
            _ => break,
        }
    }
    defmt::println!(
        "   {=u32} resumes opened, each with its own round and step",
        resumes_ok
    );
    check!(
        report,
        resumes_ok == DEFAULT_MAX_ROUNDS - 1,
        "call + {=u32} resumes accepted (cap {=u32} invocations)",
        resumes_ok,
        DEFAULT_MAX_ROUNDS
    );
    Some(round)
}

/// Invocation `round` (the cap) of the handler: nothing it could seal resumes.
#[inline(never)]
fn at_the_cap<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng, round: Round) {
    check!(
        report,
        cap_pause_is_dead::<C>(rng, round),
        "invocation {=u32} (the cap) gets no token that resumes",
        round.get()
    );
    // A node with a higher cap seals that round; the gateway refuses the token.
    match sealed_by_higher_cap::<C>(rng, round) {
        Ok(text) => {
            rejected!(
                report,
                on_gateway::<C>(&text),
                Reason::RoundsExceeded,
                "round-{=u32} token from a node with a higher cap",
                round.get()
            );
        }
        Err(e) => {
            check!(report, false, "pause on the higher-cap node: {}", e);
        }
    }
}

fn gateway<C: Cipher>() -> Option<Codec<C, &'static WallClock<Uptime>, NoReplayCache, 2, AAD>> {
    Codec::builder(keys::ring::<C>(), &CLOCK)
        .aad_capacity::<AAD>()
        .audience(crate::GATEWAY_ID)
        .build()
        .ok()
}

/// Either the gateway refuses to pause at the cap, or the token it seals does not resume.
#[inline(never)]
fn cap_pause_is_dead<C: Cipher>(rng: &mut impl TryCryptoRng, round: Round) -> bool {
    let Some(gateway) = gateway::<C>() else {
        return false;
    };
    let binding = call(TOOL, OWNER);
    let mut out = Token::new();
    match gateway.pause(round, &binding, &ARGS, b"x", rng, &mut out) {
        Err(_) => true,
        Ok(s) => {
            let text = TokenText::of(s.as_str());
            open(&gateway, text.as_str(), &binding, &ARGS)
                == Outcome::Rejected(Reason::RoundsExceeded)
        }
    }
}

/// A token of `round` from a node whose cap is one higher.
#[inline(never)]
fn sealed_by_higher_cap<C: Cipher>(
    rng: &mut impl TryCryptoRng,
    round: Round,
) -> Result<TokenText, SealError> {
    let higher = Codec::builder(keys::ring::<C>(), &CLOCK)
        .aad_capacity::<AAD>()
        .max_rounds(DEFAULT_MAX_ROUNDS + 1)
        .audience(crate::GATEWAY_ID)
        .build()
        .map_err(|_| SealError::TooLarge)?;
    let mut out = Token::new();
    higher
        .pause(round, &call(TOOL, OWNER), &ARGS, b"x", rng, &mut out)
        .map(|s| TokenText::of(s.as_str()))
}

/// What the gateway makes of `token`.
#[inline(never)]
fn on_gateway<C: Cipher>(token: &TokenText) -> Outcome {
    gateway::<C>().map_or(Outcome::Accepted, |g| {
        open(&g, token.as_str(), &call(TOOL, OWNER), &ARGS)
    })
}
