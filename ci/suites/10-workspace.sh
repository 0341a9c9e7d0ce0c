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
