//! Shared fixtures for mrtr's benchmarks: payloads, the binding, the raw-AEAD floor, the fair
//! floor, the peer token libraries, a counting allocator and the report's chart.
//!
//! Nothing here is timed: the criterion benches in `benches/` and the measurement binaries in
//! `src/bin/` do the timing and counting. See `BENCHMARKS.md` and `ci/bench.sh`.

pub mod alloc_count;
pub mod chart;
pub mod e2e;
pub mod e2e_cpu;
#[cfg(feature = "comparisons")]
pub mod e2e_server;
pub mod e2e_steal;
pub mod fair_floor;
pub mod fixtures;
pub mod floor;
pub mod paired;
#[cfg(feature = "comparisons")]
pub mod peers;
pub mod report;

pub use fixtures::*;
