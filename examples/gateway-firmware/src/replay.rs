//! Single use, with the replay set shared between the main loop and an exception handler.
//!
//! The gateway has two front-ends: the main loop (say, the HTTP transport) and a second link
//! serviced in the PendSV handler (say, a radio whose driver hands over request frames). Both
//! record the token ids they accept in one [`SharedReplaySet`], guarded by `critical-section`
//! (`cortex-m`'s single-core implementation: interrupts masked while the set is touched), so a
//! token spent on one front-end is refused on the other.

use core::cell::Cell;

use cortex_m::peripheral::SCB;
use critical_section::Mutex;
use embedded_hal::delay::DelayNs;
use mrtr_core::cipher::Cipher;
use mrtr_core::replay::{ReplayCache, ReplayError, SharedReplaySet};
use mrtr_core::{Clock, Mrtr, Reason, Round, TokenId};
use rand_core::TryCryptoRng;

use crate::clock::{SysTickClock, TickDelay};
use crate::report::Report;
use crate::text::TokenText;
use crate::{ARGS, OWNER, TOOL, Token, call, keys};

/// Live token ids the gateway remembers. Small, so that the scenario can fill it.
pub const CAPACITY: usize = 4;

/// The gateway's replay set, shared by both front-ends.
pub static SEEN: SharedReplaySet<CAPACITY> = SharedReplaySet::new();

/// Lifetime of the scenario's tokens.
const TTL_MS: u64 = 200;

/// A token id the second link was handed, and its answer.
#[derive(Clone, Copy)]
struct Frame {
    id: TokenId,
    expires_at_ms: u64,
}

static INBOX: Mutex<Cell<Option<Frame>>> = Mutex::new(Cell::new(None));
static OUTBOX: Mutex<Cell<Option<Result<(), ReplayError>>>> = Mutex::new(Cell::new(None));

/// The second link's handler: called from the PendSV exception.
pub fn on_pendsv() {
    let frame = critical_section::with(|cs| INBOX.borrow(cs).take());
    if let Some(f) = frame {
        let answer = SEEN.check_and_record(&f.id, f.expires_at_ms, SysTickClock.now_ms());
        critical_section::with(|cs| OUTBOX.borrow(cs).set(Some(answer)));
    }
}

/// Hands a spent token id to the second link and waits for its verdict.
fn second_link(id: TokenId, expires_at_ms: u64) -> Option<Result<(), ReplayError>> {
    critical_section::with(|cs| INBOX.borrow(cs).set(Some(Frame { id, expires_at_ms })));
    SCB::set_pendsv();
    cortex_m::asm::dsb();
    cortex_m::asm::isb();
    // PendSV has run by now: the main loop runs at thread priority, below every exception.
    critical_section::with(|cs| OUTBOX.borrow(cs).take())
}

/// Runs the replay scenarios.
pub fn run<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) {
    report.section("replay set shared with the PendSV handler");
    let (Ok(spending), Ok(multi)) = (
        Mrtr::builder(keys::ring::<C>(), SysTickClock)
            .without_audience()
            .ttl_ms(TTL_MS)
            .replay_cache(&SEEN)
            .build(),
        Mrtr::builder(keys::ring::<C>(), SysTickClock)
            .without_audience()
            .ttl_ms(TTL_MS)
            .build(),
    ) else {
        report.check(false, format_args!("configurations build"));
        return;
    };
    let binding = call(TOOL, OWNER);
    let mut sealed = Token::new();
    let mut buf = Token::new();
    let seal = |rng: &mut _, sealed: &mut Token| {
        spending
            .pause(Round::FIRST, &binding, &ARGS, b"awaiting: pin", rng, sealed)
            .map(|s| (TokenText::of(s.as_str()), s.token_id(), s.expires_at_ms()))
    };

    // Without a replay set a token opens again and again within its lifetime.
    if let Ok(s) = multi.pause(Round::FIRST, &binding, &ARGS, b"x", rng, &mut sealed) {
        let t = s.as_str();
        let twice = multi.resume(t, &binding, &ARGS, &mut buf).is_ok()
            && multi.resume(t, &binding, &ARGS, &mut buf).is_ok();
        report.check(twice, format_args!("no replay set: a token opens twice"));
    }

    // Main loop spends, main loop refuses.
    let Ok((t, _, _)) = seal(rng, &mut sealed) else {
        return fail_seal(report);
    };
    let t = t.as_str();
    report.check(
        spending.resume(t, &binding, &ARGS, &mut buf).is_ok(),
        format_args!("first resume accepted and recorded"),
    );
    report.rejected(
        spending.resume(t, &binding, &ARGS, &mut buf),
        Reason::Replayed,
        format_args!("same token again"),
    );

    // The second link spends first (recorded in PendSV), the main loop refuses.
    let Ok((t, id, exp)) = seal(rng, &mut sealed) else {
        return fail_seal(report);
    };
    report.check(
        second_link(id, exp) == Some(Ok(())),
        format_args!("PendSV records a token it accepted"),
    );
    report.rejected(
        spending.resume(t.as_str(), &binding, &ARGS, &mut buf),
        Reason::Replayed,
        format_args!("main loop: token spent on the other link"),
    );

    // The main loop spends first, the second link refuses.
    let Ok((t, id, exp)) = seal(rng, &mut sealed) else {
        return fail_seal(report);
    };
    report.check(
        spending
            .resume(t.as_str(), &binding, &ARGS, &mut buf)
            .is_ok(),
        format_args!("main loop accepts a fresh token"),
    );
    report.check(
        second_link(id, exp) == Some(Err(ReplayError::Replayed)),
        format_args!("PendSV refuses the token the main loop spent"),
    );

    // Fill the set: one more live token fits, the next is refused, fail closed.
    let Ok((t, _, _)) = seal(rng, &mut sealed) else {
        return fail_seal(report);
    };
    report.check(
        spending
            .resume(t.as_str(), &binding, &ARGS, &mut buf)
            .is_ok(),
        format_args!("fourth live token accepted"),
    );
    report.check(
        SEEN.len() == CAPACITY,
        format_args!("replay set holds {} of {CAPACITY}", SEEN.len()),
    );
    let Ok((t, _, _)) = seal(rng, &mut sealed) else {
        return fail_seal(report);
    };
    report.rejected(
        spending.resume(t.as_str(), &binding, &ARGS, &mut buf),
        Reason::ReplayStoreFull,
        format_args!("fresh, valid token while the set is full of live ids"),
    );

    // Once the recorded tokens have expired their ids are evicted, and the set takes new ones.
    TickDelay.delay_ms(TTL_MS as u32);
    let Ok((t, _, _)) = seal(rng, &mut sealed) else {
        return fail_seal(report);
    };
    report.check(
        spending
            .resume(t.as_str(), &binding, &ARGS, &mut buf)
            .is_ok()
            && SEEN.len() == 1,
        format_args!(
            "after {TTL_MS} ms on the SysTick clock: expired ids evicted, new token accepted"
        ),
    );
}

fn fail_seal(report: &mut Report) {
    report.check(false, format_args!("pause"));
}
