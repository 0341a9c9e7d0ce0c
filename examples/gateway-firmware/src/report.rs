//! Pass/fail bookkeeping over defmt: one frame per check (`info` when it passed, `error` when
//! it failed), decoded on the host by `defmt-print`; the verdict is QEMU's exit status.
//!
//! defmt format strings must be literals, so checks are macros: [`check!`](crate::check)
//! logs its message at the level of the outcome, [`rejected!`](crate::rejected) also prints
//! what a resume returned.

use mrtr_core::{Reason, Rejection, Resumed};

use crate::arch;

/// Counts checks.
#[derive(Debug, Default)]
pub struct Report {
    passed: u32,
    failed: u32,
}

impl Report {
    /// No checks yet.
    pub const fn new() -> Self {
        Self {
            passed: 0,
            failed: 0,
        }
    }

    /// Counts one check; returns `ok`. Use [`check!`](crate::check), which also logs it.
    pub fn record(&mut self, ok: bool) -> bool {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        ok
    }

    /// Checks that failed so far.
    pub fn failures(&self) -> u32 {
        self.failed
    }

    /// Prints the totals and ends the QEMU run: exit status 0 only if every check passed.
    pub fn finish(self) -> ! {
        defmt::println!(
            "firmware checks: {=u32} passed, {=u32} failed",
            self.passed,
            self.failed
        );
        arch::exit(self.failed == 0 && self.passed > 0)
    }
}

/// What a resume returned, for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub enum Outcome {
    /// It opened.
    Accepted,
    /// It was rejected, for this reason.
    Rejected(Reason),
}

/// The outcome of a resume.
pub fn outcome(got: &Result<Resumed<'_>, Rejection>) -> Outcome {
    match got {
        Ok(_) => Outcome::Accepted,
        Err(r) => Outcome::Rejected(r.reason()),
    }
}

/// Records and logs one check: `check!(report, condition, "defmt format", args...)`.
#[macro_export]
macro_rules! check {
    ($report:expr, $ok:expr, $($msg:tt)+) => {{
        let ok: bool = $ok;
        if $report.record(ok) {
            ::defmt::info!($($msg)+);
        } else {
            ::defmt::error!($($msg)+);
        }
        ok
    }};
}

/// Records that a resume was rejected for exactly `want`, and prints what it returned:
/// `rejected!(report, open(&mrtr, ..), Reason::Tampered, "format", args...)`, where the second
/// argument is an [`Outcome`] (see [`crate::open`]).
#[macro_export]
macro_rules! rejected {
    ($report:expr, $got:expr, $want:expr, $($msg:tt)+) => {{
        let want: ::mrtr_core::Reason = $want;
        let got: $crate::report::Outcome = $got;
        let ok = $crate::check!($report, got == $crate::report::Outcome::Rejected(want), $($msg)+);
        ::defmt::println!("     -> {}, want rejected ({})", got, want);
        ok
    }};
}

/// Records that a resume was rejected, for whatever reason, and prints the reason.
#[macro_export]
macro_rules! rejected_any {
    ($report:expr, $got:expr, $($msg:tt)+) => {{
        let got: $crate::report::Outcome = $got;
        let ok = $crate::check!($report, got != $crate::report::Outcome::Accepted, $($msg)+);
        ::defmt::println!("     -> {}", got);
        ok
    }};
}

/// For the binaries' panic handlers: log the panic and fail the QEMU run.
pub fn panicked(info: &core::panic::PanicInfo<'_>) -> ! {
    defmt::error!("PANIC {}", defmt::Display2Format(info));
    arch::exit(false)
}
