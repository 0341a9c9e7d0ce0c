//! Shared fixtures for mrtr's benchmarks: payloads, the binding, the raw-AEAD floor, the peer token libraries, and a counting allocator.
//!
//! Nothing here is timed: the criterion benches in `benches/` and the measurement binaries in
//! `src/bin/` do the timing and counting. See `BENCHMARKS.md` and `ci/bench.sh`.

pub mod alloc_count;
pub mod b64_table;
pub mod fifo_replay;
pub mod fixtures;
pub mod floor;
pub mod peers;
pub mod report;

pub use fixtures::*;
