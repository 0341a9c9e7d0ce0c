//! Expiry on the SysTick clock: a token opens within its lifetime and not after it.
//!
//! Time is advanced through `embedded-hal`'s [`DelayNs`]: on a board, pass the HAL's timer
//! delay; here it is [`crate::clock::TickDelay`], which sleeps on the SysTick tick.

use embedded_hal::delay::DelayNs;
use mrtr_core::cipher::Cipher;
use mrtr_core::{Clock, Mrtr, Reason, Round};
use rand_core::TryCryptoRng;

use crate::clock::SysTickClock;
use crate::report::Report;
use crate::text::TokenText;
use crate::{ARGS, OWNER, TOOL, Token, call, keys};

/// The scenario's token lifetime.
const TTL_MS: u32 = 25;

/// Seals a short-lived token, opens it, waits out its lifetime on `delay`, and expects
/// `Expired`.
pub fn run<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng, delay: &mut impl DelayNs) {
    report.section("expiry on the SysTick clock");
    let Ok(mrtr) = Mrtr::builder(keys::ring::<C>(), SysTickClock)
        .without_audience()
        .ttl_ms(u64::from(TTL_MS))
        .build()
    else {
        report.check(false, format_args!("configuration builds"));
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
            report.check(false, format_args!("pause: {e}"));
            return;
        }
    };
    let sealed_at = expires_at - u64::from(TTL_MS);
    let mut buf = Token::new();
    let early = mrtr
        .resume(text.as_str(), &binding, &ARGS, &mut buf)
        .is_ok();
    let elapsed = SysTickClock.now_ms() - sealed_at;
    report.check(
        early,
        format_args!("opens {elapsed} ms after sealing (ttl {TTL_MS} ms)"),
    );

    delay.delay_ms(TTL_MS);
    let elapsed = SysTickClock.now_ms() - sealed_at;
    report.check(
        elapsed >= u64::from(TTL_MS),
        format_args!("the clock advanced {elapsed} ms over the delay"),
    );
    report.rejected(
        mrtr.resume(text.as_str(), &binding, &ARGS, &mut buf),
        Reason::Expired,
        format_args!("{elapsed} ms after sealing"),
    );
}
