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
# The end-to-end comparison servers of ci/bench-e2e.sh (built above by --all-targets) serve the
# benchmark's round trips: mrtr alone on rmcp also refuses every spent token, rmcp's codec
# server (no single use) only answers, and with --state-padding its token grows by the filler
# (as ci/bench-e2e-instr.sh uses it).
ensure_cmd python3 python3
TARGET="$(cargo metadata --format-version 1 --no-deps --locked \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
# smoke_e2e BIN "SERVER OPTIONS" [DRIVER OPTIONS]: prints the driver's line (round trips and
# the first token's length).
smoke_e2e() {
    local bin="$1" options="$2"; shift 2
    local dir addr pid said
    [ -x "$TARGET/debug/$bin" ] || die "$TARGET/debug/$bin was not built"
    dir="$(mktemp -d)"; addr="$dir/addr"
    # shellcheck disable=SC2086 # the options are words
    "$TARGET/debug/$bin" $options --listen 127.0.0.1:0 --addr-file "$addr" 2>"$dir/log" &
    pid=$!
    for _ in $(seq 100); do
        if [ -s "$addr" ] || ! kill -0 "$pid" 2>/dev/null; then break; fi
        sleep 0.1
    done
    if [ ! -s "$addr" ]; then
        cat "$dir/log" >&2
        kill "$pid" 2>/dev/null || true
        die "$bin did not start listening"
    fi
    if ! said="$(python3 ci/bench-e2e-drive.py "$(cat "$addr")" 20 "$@")"; then
        kill "$pid" 2>/dev/null || true
        die "$bin: the benchmark's round trips failed"
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    rm -rf "$dir"
    echo "$said"
}
smoke_e2e e2e-mrtr-rmcp "" --single-use >/dev/null
short="$(smoke_e2e e2e-rmcp-codec "")"
long="$(smoke_e2e e2e-rmcp-codec "--state-padding 73")"
# 73 bytes of filler, plus the member's own 9 (`,"pad":""`), in base64: 109 or 110 characters.
grow=$(( $(drive_token_len "$long") - $(drive_token_len "$short") ))
[ "$grow" -ge 109 ] && [ "$grow" -le 110 ] \
    || die "e2e-rmcp-codec --state-padding 73 grew its token by $grow characters, not 109 or 110"
echo "e2e-rmcp-codec: first token $(drive_token_len "$short") characters, with 73 bytes of filler $(drive_token_len "$long")"
