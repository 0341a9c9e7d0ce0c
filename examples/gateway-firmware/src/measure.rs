//! Measurements for `docs/embedded.md`: peak stack and cost of one seal and one resume at a
//! 256-byte continuation, at the default AAD capacity (1,624 B, what hosts use) and at the
//! gateway's. Lines starting `measure:` are parsed by `ci/embedded-report.sh`.
//!
//! Cost is counted in instructions: on Cortex-M from SysTick ticks under QEMU's
//! `-icount shift=0` (every instruction advances virtual time by 1 ns) and a calibration loop
//! of known length; on RISC-V from `minstret` directly.

use mrtr_core::Aad;
use mrtr_core::cipher::Cipher;
use mrtr_core::limits::MAX_AAD_LEN;
use mrtr_core::replay::{ReplayCache, SharedReplaySet};
use mrtr_core::{Binding, Codec, Round};
use rand_core::TryCryptoRng;

use crate::arch::{self, Cost, Timer};
use crate::clock::{CLOCK, Uptime, WallClock};
use crate::report::Report;
use crate::text::TokenText;
use crate::{AAD, ARGS, MAX_CONTINUATION, OWNER, TOKEN_CAP, TOOL, Token, call, check, keys, stack};

/// A replay set for the measured resume, apart from the scenarios' one.
static MEASURED_SEEN: SharedReplaySet<8> = SharedReplaySet::new();

type Engine<C, R, const A: usize> = Codec<C, &'static WallClock<Uptime>, R, 2, A>;

/// Measures and prints; checks only that each measured call did its job.
pub fn run<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng, timer: &mut Timer) {
    defmt::println!("-- measurements (256-byte continuation)");
    let calibration = timer.calibration();
    defmt::println!(
        "   measure: calibration ticks={=u32} instructions={=u32}",
        calibration,
        arch::CALIBRATION_INSTRUCTIONS
    );
    check!(report, calibration > 0, "instruction counting calibrated");
    defmt::println!(
        "   measure: sizes aad_default={=usize} aad_gateway={=usize} aad_struct_default={=usize} aad_struct_gateway={=usize}",
        MAX_AAD_LEN,
        AAD,
        core::mem::size_of::<Aad>(),
        core::mem::size_of::<Aad<AAD>>()
    );
    let binding = call(TOOL, OWNER);
    let mut continuation = [0u8; MAX_CONTINUATION];
    for (i, b) in continuation.iter_mut().enumerate() {
        *b = i as u8;
    }
    pair::<C, MAX_AAD_LEN>(report, rng, timer, &binding, &continuation, "default");
    pair::<C, AAD>(report, rng, timer, &binding, &continuation, "gateway");
    with_replay::<C>(report, rng, timer, &binding, &continuation);
}

/// Measures one seal and one resume with an engine of AAD capacity `A`.
#[inline(never)]
fn pair<C: Cipher, const A: usize>(
    report: &mut Report,
    rng: &mut impl TryCryptoRng,
    timer: &mut Timer,
    binding: &Binding<'_>,
    continuation: &[u8],
    which: &str,
) {
    let Ok(engine) = Codec::builder(keys::ring::<C>(), &CLOCK)
        .aad_capacity::<A>()
        .audience(crate::GATEWAY_ID)
        .build()
    else {
        check!(report, false, "configuration builds");
        return;
    };
    let mut buf = Token::new();
    // A freshly seeded DRBG, so that every measured seal draws in the same state (its first
    // keystream block), whatever the scenarios drew before.
    let mut fresh = crate::rng::example_rng();
    let (sealed, cost, depth) = measured(timer, || {
        seal(&engine, binding, continuation, &mut fresh, &mut buf)
    });
    check!(
        report,
        sealed,
        "measured seal produced a token ({=str} AAD capacity)",
        which
    );
    line("seal", A, depth, cost);

    // A token to resume, sealed outside the measurement.
    let Ok(text) = engine
        .pause(Round::FIRST, binding, &ARGS, continuation, rng, &mut buf)
        .map(|s| TokenText::of(s.as_str()))
    else {
        check!(report, false, "pause");
        return;
    };
    let (ok, cost, depth) = measured(timer, || {
        resume(&engine, text.as_str(), binding, continuation, &mut buf)
    });
    check!(
        report,
        ok,
        "measured resume opened the 256-byte continuation ({=str} AAD capacity)",
        which
    );
    line("resume", A, depth, cost);
}

/// Measures one resume with the gateway's capacity and a replay set.
#[inline(never)]
fn with_replay<C: Cipher>(
    report: &mut Report,
    rng: &mut impl TryCryptoRng,
    timer: &mut Timer,
    binding: &Binding<'_>,
    continuation: &[u8],
) {
    let Ok(spending) = Codec::builder(keys::ring::<C>(), &CLOCK)
        .aad_capacity::<AAD>()
        .replay_cache(&MEASURED_SEEN)
        .audience(crate::GATEWAY_ID)
        .build()
    else {
        check!(report, false, "configuration builds");
        return;
    };
    let mut buf = Token::new();
    let Ok(text) = spending
        .pause(Round::FIRST, binding, &ARGS, continuation, rng, &mut buf)
        .map(|s| TokenText::of(s.as_str()))
    else {
        check!(report, false, "pause");
        return;
    };
    let (ok, cost, depth) = measured(timer, || {
        resume(&spending, text.as_str(), binding, continuation, &mut buf)
    });
    check!(
        report,
        ok,
        "measured resume with the replay set opened it too"
    );
    line("resume+replay", AAD, depth, cost);
}

/// Runs `f` once for its peak stack and cost.
fn measured<R>(timer: &mut Timer, f: impl FnOnce() -> R) -> (R, Option<Cost>, Option<usize>) {
    let ((r, cost), depth) = stack::peak(|| timer.measure(f));
    (r, cost, depth)
}

/// One seal, as a handler's pause does it; its own frame so the figures are its own.
#[inline(never)]
fn seal<C: Cipher, R: ReplayCache, const A: usize>(
    engine: &Engine<C, R, A>,
    binding: &Binding<'_>,
    continuation: &[u8],
    rng: &mut impl TryCryptoRng,
    out: &mut Token,
) -> bool {
    engine
        .pause(Round::FIRST, binding, &ARGS, continuation, rng, out)
        .is_ok()
}

/// One resume, checked against the sealed continuation.
#[inline(never)]
fn resume<C: Cipher, R: ReplayCache, const A: usize>(
    engine: &Engine<C, R, A>,
    token: &str,
    binding: &Binding<'_>,
    continuation: &[u8],
    buf: &mut Token,
) -> bool {
    engine
        .resume(token, binding, &ARGS, buf)
        .is_ok_and(|r| r.continuation() == continuation)
}

fn line(op: &str, aad: usize, depth: Option<usize>, cost: Option<Cost>) {
    match (depth, cost) {
        (Some(d), Some(c)) => defmt::println!(
            "   measure: op={=str} aad={=usize} continuation={=usize} stack={=usize} token_buf={=usize} ticks={=u32} instructions={=u32}",
            op,
            aad,
            MAX_CONTINUATION,
            d,
            TOKEN_CAP,
            c.ticks,
            c.instructions
        ),
        _ => defmt::println!(
            "   measure: op={=str} aad={=usize} out of range (stack {}, cost {})",
            op,
            aad,
            depth,
            cost
        ),
    }
}
