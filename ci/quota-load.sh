#!/usr/bin/env bash
# Load test of the per-caller quotas (issue 49, section 2), a report and not a timed test:
# one abusive caller resuming at full speed and 50 honest callers resuming at a human pace,
# against the release hosted server, driven by ci/quota-load.py.
#
#   bash ci/quota-load.sh
#
# Two runs on the same store: with the default quotas (100 resumes/s, bursts of 200), where no
# honest request may be refused (the script fails otherwise); then with the quotas off, which
# shows what they prevent (the abuser fills the store and honest resumes are refused). To reach
# the steady state in a short run the TTL is 30 s and the store holds QUOTA_CAPACITY ids (what
# the honest callers need with room, less than an unlimited abuser takes); the store's default
# size, a memory budget, is measured last (bytes per live id, steady state at 10,000 resumes/s
# and the 5-minute TTL: std-adapter/examples/replay_budget.rs).
#
# Settings: QUOTA_SECS (seconds per run, default 45), QUOTA_HONEST (honest callers, 50),
# QUOTA_ABUSE_THREADS (connections of the abuser, 4), QUOTA_CAPACITY (15000), QUOTA_TTL_MS
# (30000), HONEST_PAUSE_S (an honest caller's pause between requests, 0.2).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/targets/quota-load}"
SECS="${QUOTA_SECS:-45}"
HONEST="${QUOTA_HONEST:-50}"
ABUSE_THREADS="${QUOTA_ABUSE_THREADS:-4}"
CAPACITY="${QUOTA_CAPACITY:-15000}"
TTL_MS="${QUOTA_TTL_MS:-30000}"
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

log "building the release hosted server and the store measurement"
nice -n 10 cargo build --release -q -p mrtr-hosted-server --bin mrtr-hosted-server
nice -n 10 cargo build --release -q -p mrtr-std --example replay_budget
BIN="$CARGO_TARGET_DIR/release"

# One bearer token per caller: the abuser and the honest callers are distinct principals.
{
    echo "abuser-token https://idp.example abuser"
    for i in $(seq 0 $((HONEST - 1))); do echo "honest-$i-token https://idp.example honest-$i"; done
} >"$WORK/tokens"

# run NAME DRIVER-FLAGS -- SERVER-FLAGS...: one server, one driver run; prints the figures.
run() {
    local name="$1" driver_flag="$2"; shift 3
    "$BIN/mrtr-hosted-server" --listen 127.0.0.1:0 --addr-file "$WORK/$name.addr" \
        --ops-listen off --tokens "$WORK/tokens" --ttl-ms "$TTL_MS" \
        --replay-capacity "$CAPACITY" "$@" 2>"$WORK/$name.log" &
    SERVER_PID=$!
    for _ in $(seq 100); do [ -s "$WORK/$name.addr" ] && break; sleep 0.1; done
    [ -s "$WORK/$name.addr" ] || die "the server did not start: $(cat "$WORK/$name.log")"
    log "$name: $HONEST honest callers and one abuser ($ABUSE_THREADS connections) for ${SECS}s"
    local status=0
    python3 ci/quota-load.py "$(cat "$WORK/$name.addr")" "$SECS" "$((TTL_MS / 1000))" \
        "$HONEST" "$ABUSE_THREADS" $driver_flag | sed "s/^/$name /" || status=$?
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
    return "$status"
}

run quotas "" -- || die "an honest request was refused with the default quotas"
run no-quotas --expect-refusals -- --quota-resumes off --quota-pauses off

log "bytes per live id of the in-process store (steady state, 10,000 resumes/s, 300 s TTL)"
"$BIN/examples/replay_budget" 10000 300
