//! Single use, with the replay set shared between the main loop and an exception handler.
//!
//! The gateway has two front-ends: the main loop (say, the HTTP transport) and a second link
//! serviced in an interrupt handler (say, a radio whose driver hands over request frames):
//! PendSV on Cortex-M, the machine software interrupt on RISC-V. Both record the token ids
//! they accept in one [`SharedReplaySet`], guarded by `critical-section` (`cortex-m`'s
//! single-core and `riscv`'s single-hart implementations: interrupts masked while the set is
//! touched), so a token spent on one front-end is refused on the other.

use core::cell::Cell;

use critical_section::Mutex;
use mrtr_core::cipher::Cipher;
use mrtr_core::replay::{ReplayCache, ReplayError, SharedReplaySet};
use mrtr_core::{Clock, Codec, Reason, TokenId};
use rand_core::TryCryptoRng;

use crate::clock::{CLOCK, Uptime, WallClock};
use crate::report::{Outcome, Report};
use crate::{AAD, ARGS, Issued, OWNER, TOOL, arch, call, check, issue, keys, open, rejected};

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

/// The second link's handler: called from its interrupt (PendSV / machine software).
pub fn on_second_link() {
    let frame = critical_section::with(|cs| INBOX.borrow(cs).take());
    if let Some(f) = frame {
        let answer = SEEN.check_and_record(&f.id, f.expires_at_ms, CLOCK.now_ms());
        critical_section::with(|cs| OUTBOX.borrow(cs).set(Some(answer)));
    }
}

/// Hands a spent token id to the second link and waits for its verdict.
fn second_link(id: TokenId, expires_at_ms: u64) -> Option<Result<(), ReplayError>> {
    critical_section::with(|cs| INBOX.borrow(cs).set(Some(Frame { id, expires_at_ms })));
    // The handler has run by now: the main loop runs below every interrupt.
    arch::pend_second_link();
    critical_section::with(|cs| OUTBOX.borrow(cs).take())
}

type Spending<C> = Codec<C, &'static WallClock<Uptime>, &'static SharedReplaySet<CAPACITY>, 2, AAD>;

/// Runs the replay scenarios.
pub fn run<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) {
    defmt::println!("-- replay set shared with the second link's interrupt handler");
    multi_use::<C>(report, rng);
    let Ok(spending) = Codec::builder(keys::ring::<C>(), &CLOCK)
        .aad_capacity::<AAD>()
        .ttl_ms(TTL_MS)
        .replay_cache(&SEEN)
        .audience(crate::GATEWAY_ID)
        .build()
    else {
        check!(report, false, "configuration builds");
        return;
    };
    main_loop_twice(report, rng, &spending);
    second_link_first(report, rng, &spending);
    main_loop_first(report, rng, &spending);
    full_then_evicted(report, rng, &spending);
}

/// Without a replay set a token opens again and again within its lifetime.
#[inline(never)]
fn multi_use<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) {
    let Ok(multi) = Codec::builder(keys::ring::<C>(), &CLOCK)
        .aad_capacity::<AAD>()
        .ttl_ms(TTL_MS)
        .audience(crate::GATEWAY_ID)
        .build()
    else {
        check!(report, false, "configuration builds");
        return;
    };
    let binding = call(TOOL, OWNER);
    let twice = issue(&multi, &binding, b"x", rng).is_ok_and(|t| {
        let t = t.text.as_str();
        open(&multi, t, &binding, &ARGS) == Outcome::Accepted
            && open(&multi, t, &binding, &ARGS) == Outcome::Accepted
    });
    check!(report, twice, "no replay set: a token opens twice");
}

#[inline(never)]
fn seal<C: Cipher>(
    report: &mut Report,
    rng: &mut impl TryCryptoRng,
    spending: &Spending<C>,
) -> Option<Issued> {
    let issued = issue(spending, &call(TOOL, OWNER), b"awaiting: pin", rng);
    if let Err(e) = issued {
        check!(report, false, "pause: {}", e);
    }
    issued.ok()
}

/// Main loop spends, main loop refuses.
#[inline(never)]
fn main_loop_twice<C: Cipher>(
    report: &mut Report,
    rng: &mut impl TryCryptoRng,
    spending: &Spending<C>,
) {
    let Some(t) = seal(report, rng, spending) else {
        return;
    };
    let binding = call(TOOL, OWNER);
    check!(
        report,
        open(spending, t.text.as_str(), &binding, &ARGS) == Outcome::Accepted,
        "first resume accepted and recorded"
    );
    rejected!(
        report,
        open(spending, t.text.as_str(), &binding, &ARGS),
        Reason::Replayed,
        "same token again"
    );
}

/// The second link spends first (recorded in its handler), the main loop refuses.
#[inline(never)]
fn second_link_first<C: Cipher>(
    report: &mut Report,
    rng: &mut impl TryCryptoRng,
    spending: &Spending<C>,
) {
    let Some(t) = seal(report, rng, spending) else {
        return;
    };
    check!(
        report,
        second_link(t.id, t.expires_at_ms) == Some(Ok(())),
        "the second link's handler records a token it accepted"
    );
    rejected!(
        report,
        open(spending, t.text.as_str(), &call(TOOL, OWNER), &ARGS),
        Reason::Replayed,
        "main loop: token spent on the other link"
    );
}

/// The main loop spends first, the second link refuses.
#[inline(never)]
fn main_loop_first<C: Cipher>(
    report: &mut Report,
    rng: &mut impl TryCryptoRng,
    spending: &Spending<C>,
) {
    let Some(t) = seal(report, rng, spending) else {
        return;
    };
    check!(
        report,
        open(spending, t.text.as_str(), &call(TOOL, OWNER), &ARGS) == Outcome::Accepted,
        "main loop accepts a fresh token"
    );
    check!(
        report,
        second_link(t.id, t.expires_at_ms) == Some(Err(ReplayError::Replayed)),
        "the second link's handler refuses the token the main loop spent"
    );
}

/// Fill the set: one more live token fits, the next is refused, fail closed. Once the recorded
/// tokens have expired their ids are evicted, and the set takes new ones.
#[inline(never)]
fn full_then_evicted<C: Cipher>(
    report: &mut Report,
    rng: &mut impl TryCryptoRng,
    spending: &Spending<C>,
) {
    let binding = call(TOOL, OWNER);
    let Some(t) = seal(report, rng, spending) else {
        return;
    };
    check!(
        report,
        open(spending, t.text.as_str(), &binding, &ARGS) == Outcome::Accepted,
        "fourth live token accepted"
    );
    check!(
        report,
        SEEN.len() == CAPACITY,
        "replay set holds {=usize} of {=usize}",
        SEEN.len(),
        CAPACITY
    );
    let Some(t) = seal(report, rng, spending) else {
        return;
    };
    rejected!(
        report,
        open(spending, t.text.as_str(), &binding, &ARGS),
        Reason::ReplayStoreFull,
        "fresh, valid token while the set is full of live ids"
    );

    arch::wait_ms(TTL_MS);
    let Some(t) = seal(report, rng, spending) else {
        return;
    };
    check!(
        report,
        open(spending, t.text.as_str(), &binding, &ARGS) == Outcome::Accepted && SEEN.len() == 1,
        "after {=u64} ms on the wall clock: expired ids evicted, new token accepted",
        TTL_MS
    );
}
