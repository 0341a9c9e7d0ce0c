#!/usr/bin/env bash
# The host workspace: unit, integration, property and doc tests of every crate.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked
