#!/usr/bin/env bash
# End to end: the resume round trip of `book_table` over loopback HTTP, on the hosted server
# (examples/hosted-server, mrtr) and on the same tool served by plain rmcp with its built-in
# RequestStateCodec (benches/src/bin/e2e_rmcp_codec.rs), driven by wrk with a Lua script that
# chains each fresh call to the resume of the token it returned (ci/bench-e2e.lua).
#
#   bash ci/bench-e2e.sh [OUT_TSV]     # standalone: also prints the table
#
# ci/bench.sh calls it and puts the numbers in BENCHMARKS.md ("End to end"). Not part of
# ci/test.sh. On a machine with 2 or more cores each server runs pinned to core 0 and wrk to
# core 1 (taskset), one server at a time; on one core, unpinned. Every run is bounded (E2E_SECS
# seconds, loopback only) and the script stops the servers it started. Besides each server's
# median run and the `pair` ratios, it writes a `steal` line per run (`wrk`, name,
# connections, repetition, and during it the machine's stolen CPU ticks, all its CPU ticks and
# the busy ticks of processes other than the server and wrk; ci/lib.sh disturbance): how much
# the host's and the machine's other work disturbed that run.
#
# Settings: E2E_SECS (measured seconds per run, default 6), E2E_CONNS (connection counts,
# default "1 8 64"), E2E_REPS (runs per server and count, the median by throughput is kept,
# default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/targets/bench}"
WORK="$CARGO_TARGET_DIR/bench-report/e2e"
OUT="${1:-$WORK/e2e.tsv}"
SECS="${E2E_SECS:-6}"
CONNS="${E2E_CONNS:-1 8 64}"
REPS="${E2E_REPS:-5}"
mkdir -p "$WORK"

ensure_cmd wrk wrk
ensure_cmd taskset util-linux

. ci/bench-e2e-common.sh

pin_servers wrk

# start NAME COMMAND...: starts a server on a free loopback port; sets URL.
declare -A PID=()
start() {
    local name="$1"; shift
    local addr="$WORK/$name.addr"
    rm -f "$addr"
    "${SERVER_CPU[@]}" "$@" --listen 127.0.0.1:0 --addr-file "$addr" \
        >"$WORK/$name.out" 2>"$WORK/$name.log" &
    PIDS+=("$!"); PID[$name]="$!"
    for _ in $(seq 100); do
        [ -s "$addr" ] && break
        kill -0 "$!" 2>/dev/null || { cat "$WORK/$name.log" >&2; die "server $name exited"; }
        sleep 0.1
    done
    [ -s "$addr" ] || die "server $name did not start listening"
    URL="http://$(cat "$addr")/mcp"
}

# The series: name, label, command. The hosted server runs in its default configuration
# (aws-lc's AES-256-GCM-SIV with the fast nonce source, in-process replay cache), and once with
# AES-256-GCM and the OS generator for comparison. Its replay cache holds every token id until
# the token's 5-minute lifetime ends, and its default capacity (100,000 ids) covers about 333
# resumes per second; a whole run spends several hundred thousand tokens, so every mrtr server
# gets room for 4 million (about 330 MB at ~82 B per live id). Past its capacity the cache
# refuses resumes (fail closed), which the run would count as failures.
#
# mrtr-bare (benches/src/bin/e2e_mrtr_rmcp.rs) is the same tool on plain rmcp with only what
# mrtr needs (mrtr-rmcp's Parameters and PrecheckLayer, the hosted server's default engine):
# no authentication, session-ownership or metrics layers. It tells what mrtr costs apart from
# what the hosted example adds; the goal is judged on the hosted server (mrtr).
NAMES=(mrtr mrtr-bare mrtr-gcm-os rmcp-codec)
declare -A URLS=()
CAPACITY=(--replay-capacity 4000000)
start mrtr "$REL/mrtr-hosted-server" "${CAPACITY[@]}"; URLS[mrtr]="$URL"
start mrtr-bare "$REL/e2e-mrtr-rmcp" "${CAPACITY[@]}"; URLS[mrtr-bare]="$URL"
start mrtr-gcm-os "$REL/mrtr-hosted-server" --cipher aes-256-gcm "${CAPACITY[@]}"; URLS[mrtr-gcm-os]="$URL"
start rmcp-codec "$REL/e2e-rmcp-codec"; URLS[rmcp-codec]="$URL"
log "servers: mrtr ${URLS[mrtr]}, mrtr-bare ${URLS[mrtr-bare]}, mrtr-gcm-os ${URLS[mrtr-gcm-os]}, rmcp-codec ${URLS[rmcp-codec]} ($PINNING)"

# One wrk run; prints its E2E line (see ci/bench-e2e.lua).
load() {
    local url="$1" conns="$2" secs="$3"
    "${LOAD_CPU[@]}" wrk -t1 -c"$conns" -d"${secs}s" --latency -s ci/bench-e2e.lua "$url" \
        2>"$WORK/wrk.err" | awk -F'\t' '$1 == "E2E"' || true
}

: >"$OUT.tmp"
for conns in $CONNS; do
    for name in "${NAMES[@]}"; do
        load "${URLS[$name]}" "$conns" 1 >/dev/null # warm-up
    done
    for rep in $(seq "$REPS"); do
        # Alternate the servers within each repetition, so slow drift of the machine's load
        # falls on all of them alike.
        for name in "${NAMES[@]}"; do
            ticks0="$(machine_ticks)"; load0="$(children_ticks)"; server0="$(process_ticks "${PID[$name]}")"
            line="$(load "${URLS[$name]}" "$conns" "$SECS")"
            load1="$(children_ticks)"; server1="$(process_ticks "${PID[$name]}")"
            ours=$((server1 - server0 + load1 - load0))
            read -r stolen all others <<<"$(disturbance "$ticks0" "$(machine_ticks)" "$ours")"
            [ -n "$line" ] || { cat "$WORK/wrk.err" >&2; die "wrk gave no result for $name at $conns connections"; }
            IFS=$'\t' read -r _ rps rtps p50 p99 failed errors <<<"$line"
            [ "$failed" = 0 ] && [ "$errors" = 0 ] \
                || { cat "$WORK/wrk.err" >&2; die "$name at $conns connections: $failed unexpected responses, $errors socket errors"; }
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$conns" "$rep" "$rps" "$rtps" "$p50" "$p99" >>"$OUT.tmp"
            printf 'steal\twrk\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$conns" "$rep" \
                "$stolen" "$all" "$others" >>"$OUT.tmp"
            log "$name, $conns connections, run $rep: $rps requests/s, p50 ${p50} µs, p99 ${p99} µs"
        done
    done
done

# Per server and connection count, the run with the median throughput. Columns: name,
# connections, requests/s, round trips/s, p50 µs, p99 µs, label.
{
    printf '#\t%s\t%ss per run, median of %s runs by throughput, wrk 1 thread\n' "$PINNING" "$SECS" "$REPS"
    for name in "${NAMES[@]}"; do
        for conns in $CONNS; do
            awk -F'\t' -v n="$name" -v c="$conns" '$1 == n && $2 == c' "$OUT.tmp" \
                | sort -t$'\t' -k4,4g | awk -v reps="$REPS" 'NR == int((reps + 1) / 2)' \
                | awk -F'\t' -v label="${LABEL[$name]}" 'BEGIN {OFS="\t"} {print $1, $2, $4, $5, $6, $7, label}'
        done
    done
    # Paired ratios: within each repetition the servers ran back to back, so mrtr ÷ rmcp-codec
    # of one repetition shares the machine's state of that moment. Columns: "pair", name,
    # connections, repetition, throughput ratio, p50 ratio.
    for name in "${NAMES[@]}"; do
        [ "$name" = rmcp-codec ] && continue
        awk -F'\t' -v n="$name" 'BEGIN {OFS="\t"}
            $1 == "rmcp-codec" {rt[$2 "/" $3] = $5; p50[$2 "/" $3] = $6}
            $1 == n {key[++k] = $2 "/" $3; c[k] = $2; r[k] = $3; mrt[k] = $5; mp50[k] = $6}
            END {for (i = 1; i <= k; i++) if (rt[key[i]] > 0 && p50[key[i]] > 0)
                printf "pair\t%s\t%s\t%s\t%.4f\t%.4f\n", n, c[i], r[i], mrt[i] / rt[key[i]], mp50[i] / p50[key[i]]}' \
            "$OUT.tmp"
    done
    awk -F'\t' '$1 == "steal"' "$OUT.tmp"
} >"$OUT"
rm -f "$OUT.tmp"

if [ "$#" = 0 ]; then
    printf '\n%-12s %6s %12s %14s %10s %10s\n' server conns requests/s "round trips/s" "p50 µs" "p99 µs"
    awk -F'\t' '$1 != "#" {printf "%-12s %6s %12s %14s %10s %10s\n", $1, $2, $3, $4, $5, $6}' "$OUT"
fi
log "wrote $OUT"
