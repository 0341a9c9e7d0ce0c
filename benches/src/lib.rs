//! Shared fixtures for mrtr's benchmarks: payloads, the binding, the raw-AEAD floor, the fair
//! floor, the peer token libraries, a counting allocator and the report's chart.
//!
//! Nothing here is timed: the criterion benches in `benches/` and the measurement binaries in
//! `src/bin/` do the timing and counting. See `BENCHMARKS.md` and `ci/bench.sh`.

pub mod alloc_count;
pub mod chart;
pub mod e2e;
#[cfg(feature = "comparisons")]
pub mod e2e_server;
pub mod fair_floor;
pub mod fixtures;
pub mod floor;
pub mod paired;
#[cfg(feature = "comparisons")]
pub mod peers;
pub mod report;

pub use fixtures::*;

/// Writes one line to standard output (see [`outln!`]); on a write error (a closed pipe, a
/// full disk) it says so on standard error and ends the process with status 1, where
/// `println!` would panic: the measurement's results could not be delivered.
pub fn out_line(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    if let Err(e) = writeln!(std::io::stdout().lock(), "{line}") {
        let name = std::env::args().next().unwrap_or_default();
        eprintln!("{name}: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// `println!` for the measurement binaries, through [`out_line`]: a closed standard output
/// fails the run with a message instead of a panic.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::out_line(format_args!($($arg)*))
    };
}
