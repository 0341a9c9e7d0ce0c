//! Pass/fail bookkeeping over semihosting: one readable line per check, and the verdict as
//! QEMU's exit status.

use core::fmt;

use cortex_m_semihosting::{debug, hprintln};
use mrtr_core::{Reason, Rejection, Resumed};

/// Counts checks and prints each one.
#[derive(Debug, Default)]
pub struct Report {
    passed: u32,
    failed: u32,
}

impl Report {
    /// Prints a section heading.
    pub fn section(&self, title: &str) {
        hprintln!("-- {}", title);
    }

    /// Prints an informational line (not a check).
    pub fn note(&self, what: fmt::Arguments<'_>) {
        hprintln!("   {}", what);
    }

    /// Records one check.
    pub fn check(&mut self, ok: bool, what: fmt::Arguments<'_>) -> bool {
        if ok {
            self.passed += 1;
            hprintln!("ok   {}", what);
        } else {
            self.failed += 1;
            hprintln!("FAIL {}", what);
        }
        ok
    }

    /// Records that a resume was rejected for exactly `want`.
    pub fn rejected(
        &mut self,
        got: Result<Resumed<'_>, Rejection>,
        want: Reason,
        what: fmt::Arguments<'_>,
    ) -> bool {
        match got {
            Ok(_) => self.check(false, format_args!("{what}: accepted, want {want}")),
            Err(r) => self.check(
                r.reason() == want,
                format_args!("{what}: rejected ({}), want {want}", r.reason()),
            ),
        }
    }

    /// Records that a resume was rejected, for whatever reason.
    pub fn rejected_any(
        &mut self,
        got: Result<Resumed<'_>, Rejection>,
        what: fmt::Arguments<'_>,
    ) -> bool {
        match got {
            Ok(_) => self.check(false, format_args!("{what}: accepted")),
            Err(r) => self.check(true, format_args!("{what}: rejected ({})", r.reason())),
        }
    }

    /// Checks that failed so far.
    pub fn failures(&self) -> u32 {
        self.failed
    }

    /// Prints the totals and ends the QEMU run: exit status 0 only if every check passed.
    pub fn finish(self) -> ! {
        hprintln!(
            "firmware checks: {} passed, {} failed",
            self.passed,
            self.failed
        );
        let verdict = if self.failed == 0 && self.passed > 0 {
            debug::EXIT_SUCCESS
        } else {
            debug::EXIT_FAILURE
        };
        debug::exit(verdict);
        #[allow(clippy::empty_loop)]
        loop {}
    }
}

/// For the binaries' panic handlers: print the panic and fail the QEMU run.
pub fn panicked(info: &core::panic::PanicInfo<'_>) -> ! {
    hprintln!("PANIC {}", info);
    debug::exit(debug::EXIT_FAILURE);
    #[allow(clippy::empty_loop)]
    loop {}
}
