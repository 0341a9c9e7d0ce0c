//! Measurements for `docs/embedded.md`: peak stack and cost of one seal and one resume at a
//! 256-byte continuation. Lines starting `measure:` are parsed by `ci/embedded-report.sh`.
//!
//! Cost is counted in SysTick ticks of the core clock. Under QEMU with `-icount shift=0`
//! every instruction advances virtual time by 1 ns, so the figure is repeatable, and a
//! calibration loop of a known instruction count converts ticks to instructions.

use mrtr_core::binding::{Aad, MAX_AAD_LEN};
use mrtr_core::cipher::Cipher;
use mrtr_core::replay::{ReplayCache, SharedReplaySet};
use mrtr_core::{Binding, Mrtr, Round};
use rand_core::TryCryptoRng;

use crate::clock::{SysTickClock, Timer};
use crate::report::Report;
use crate::text::TokenText;
use crate::{ARGS, MAX_CONTINUATION, OWNER, TOKEN_CAP, TOOL, Token, call, keys, stack};

/// A replay set for the measured resume, apart from the scenarios' one.
static MEASURED_SEEN: SharedReplaySet<8> = SharedReplaySet::new();

/// Iterations of `cortex_m::asm::delay`'s two-instruction loop (`subs`, `bne`): it runs
/// `n + 1` times, so this is 2,000,000 instructions.
const CALIBRATION_LOOPS: u32 = 999_999;
const CALIBRATION_INSTRUCTIONS: u64 = 2_000_000;

/// Measures and prints; checks only that each measured call did its job.
pub fn run<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng, timer: &mut Timer) {
    report.section("measurements (256-byte continuation)");
    let ((), calib) = timer.measure(|| cortex_m::asm::delay(CALIBRATION_LOOPS));
    let Some(calib) = calib.filter(|&t| t > 0) else {
        report.check(false, format_args!("calibration loop measured"));
        return;
    };
    report.note(format_args!(
        "measure: calibration ticks={calib} instructions={CALIBRATION_INSTRUCTIONS}"
    ));
    report.note(format_args!(
        "measure: sizes aad={} max_aad_len={MAX_AAD_LEN}",
        core::mem::size_of::<Aad>()
    ));
    let to_instructions =
        |ticks: u32| u64::from(ticks) * CALIBRATION_INSTRUCTIONS / u64::from(calib);

    let (Ok(plain), Ok(spending)) = (
        Mrtr::builder(keys::ring::<C>(), SysTickClock)
            .without_audience()
            .build(),
        Mrtr::builder(keys::ring::<C>(), SysTickClock)
            .without_audience()
            .replay_cache(&MEASURED_SEEN)
            .build(),
    ) else {
        report.check(false, format_args!("configurations build"));
        return;
    };
    let binding = call(TOOL, OWNER);
    let mut continuation = [0u8; MAX_CONTINUATION];
    for (i, b) in continuation.iter_mut().enumerate() {
        *b = i as u8;
    }
    let mut buf = Token::new();

    let (sealed, (ticks, depth)) = measured(timer, || {
        seal(&plain, &binding, &continuation, rng, &mut buf)
    });
    report.check(sealed, format_args!("measured seal produced a token"));
    line(report, "seal", depth, ticks, &to_instructions);

    // A token to resume, sealed outside the measurement.
    let text = match plain.pause(Round::FIRST, &binding, &ARGS, &continuation, rng, &mut buf) {
        Ok(s) => TokenText::of(s.as_str()),
        Err(e) => {
            report.check(false, format_args!("pause: {e}"));
            return;
        }
    };
    let t = text.as_str();
    let (ok, (ticks, depth)) = measured(timer, || {
        resume(&plain, t, &binding, &continuation, &mut buf)
    });
    report.check(
        ok,
        format_args!("measured resume opened the 256-byte continuation"),
    );
    line(report, "resume", depth, ticks, &to_instructions);
    let (ok, (ticks, depth)) = measured(timer, || {
        resume(&spending, t, &binding, &continuation, &mut buf)
    });
    report.check(
        ok,
        format_args!("measured resume with the replay set opened it too"),
    );
    line(report, "resume+replay", depth, ticks, &to_instructions);
}

/// Runs `f` once for its peak stack and SysTick ticks.
fn measured<R>(timer: &mut Timer, f: impl FnOnce() -> R) -> (R, (Option<u32>, Option<usize>)) {
    let ((r, ticks), depth) = stack::peak(|| timer.measure(f));
    (r, (ticks, depth))
}

/// One seal, as a handler's pause does it; its own frame so the figures are its own.
#[inline(never)]
fn seal<C: Cipher, R: ReplayCache>(
    mrtr: &Mrtr<C, SysTickClock, R, 2>,
    binding: &Binding<'_>,
    continuation: &[u8],
    rng: &mut impl TryCryptoRng,
    out: &mut Token,
) -> bool {
    mrtr.pause(Round::FIRST, binding, &ARGS, continuation, rng, out)
        .is_ok()
}

/// One resume, checked against the sealed continuation.
#[inline(never)]
fn resume<C: Cipher, R: ReplayCache>(
    mrtr: &Mrtr<C, SysTickClock, R, 2>,
    token: &str,
    binding: &Binding<'_>,
    continuation: &[u8],
    buf: &mut Token,
) -> bool {
    mrtr.resume(token, binding, &ARGS, buf)
        .is_ok_and(|r| r.continuation() == continuation)
}

fn line(
    report: &Report,
    op: &str,
    depth: Option<usize>,
    ticks: Option<u32>,
    to_instructions: &dyn Fn(u32) -> u64,
) {
    match (depth, ticks) {
        (Some(d), Some(t)) => report.note(format_args!(
            "measure: op={op} continuation={MAX_CONTINUATION} stack={d} token_buf={TOKEN_CAP} \
             ticks={t} instructions={}",
            to_instructions(t)
        )),
        _ => report.note(format_args!(
            "measure: op={op} out of range (stack {depth:?}, ticks {ticks:?})"
        )),
    }
}
