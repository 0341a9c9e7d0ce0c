//! Expiry on the wall clock: a token opens within its lifetime and not after it.
//!
//! Time is advanced through `embedded-hal`'s [`DelayNs`]: on a board, pass the HAL's timer
//! delay; here it is [`crate::TickDelay`], which sleeps on the board's tick.

use embedded_hal::delay::DelayNs;
use mrtr_core::cipher::Cipher;
use mrtr_core::{Clock, Codec, Reason, Round};
use rand_core::TryCryptoRng;

use crate::clock::CLOCK;
use crate::report::Report;
use crate::text::TokenText;
use crate::{AAD, ARGS, OWNER, TOOL, Token, call, check, keys, rejected};

/// The scenario's token lifetime.
const TTL_MS: u32 = 25;

/// Seals a short-lived token, opens it, waits out its lifetime on `delay`, and expects
/// `Expired`.
pub fn run<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng, delay: &mut impl DelayNs) {
    defmt::println!("-- expiry on the wall clock");
    let Ok(mrtr) = Codec::builder(keys::ring::<C>(), &CLOCK)
        .aad_capacity::<AAD>()
        .ttl_ms(u64::from(TTL_MS))
        .audience(crate::GATEWAY_ID)
        .build()
    else {
        check!(report, false, "configuration builds");
        return;
    };
    let binding = call(TOOL, OWNER);
    let mut sealed = Token::new();
    let (text, expires_at) = match mrtr.pause(
        Round::FIRST,
        &binding,
        &ARGS,
        b"awaiting: approval",
        rng,
        &mut sealed,
    ) {
        Ok(s) => (TokenText::of(s.as_str()), s.expires_at_ms()),
        Err(e) => {
            check!(report, false, "pause: {}", e);
            return;
        }
    };
    let sealed_at = expires_at - u64::from(TTL_MS);
    let mut buf = Token::new();
    let early = mrtr
        .resume(text.as_str(), &binding, &ARGS, &mut buf)
        .is_ok();
    let elapsed = CLOCK.now_ms() - sealed_at;
    check!(
        report,
        early,
        "opens {=u64} ms after sealing (ttl {=u32} ms)",
        elapsed,
        TTL_MS
    );

    delay.delay_ms(TTL_MS);
    let elapsed = CLOCK.now_ms() - sealed_at;
    check!(
        report,
        elapsed >= u64::from(TTL_MS),
        "the clock advanced {=u64} ms over the delay",
        elapsed
    );
    rejected!(
        report,
        crate::open(&mrtr, text.as_str(), &binding, &ARGS),
        Reason::Expired,
        "{=u64} ms after sealing",
        elapsed
    );
}
