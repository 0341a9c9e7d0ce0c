#!/usr/bin/env bash
# The host workspace: unit, integration, property and doc tests of every crate.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"
cargo test --workspace --all-targets --locked
# mrtr-std turns on core's `simd` feature for the whole workspace; core alone runs its own
# tests again with the portable base64url engine (its firmware configuration).
cargo test --locked -p mrtr-core --lib
cargo test --workspace --doc --locked
# mrtr-std's optional metrics (no workspace crate enables them, so the run above skips their
# tests), and mrtr-std built without any backend, tokio or Redis.
cargo test -p mrtr-std --features prometheus --lib --test metrics --test prometheus --locked
cargo test -p mrtr-std --features prometheus --doc --locked
cargo test -p mrtr-std --no-default-features --locked
