#!/usr/bin/env bash
# End to end, in CPU time: what one resume round trip of `book_table` (the requests of
# ci/bench-e2e.lua, sent one after another by ci/bench-e2e-drive.py) costs each server natively,
# user and kernel time together, read from the kernel's per-thread run time
# (/proc/PID/task/*/schedstat, nanoseconds on a CPU).
#
# It sits between ci/bench-e2e.sh's throughput (wrk: what the goal is judged on, but on a shared
# 2-core machine one run's ratio can be 10-20 % off) and ci/bench-e2e-instr.sh's instruction
# counts (repeatable, but user space only, no cache misses, SHA-256 in portable code). Time on
# the CPU counts the kernel's share (loopback TCP, epoll) and native cache and branch costs,
# and leaves out waiting for the client. It still moves with other work on the machine (evicted
# caches, a virtual CPU preempted by its host): the report gives each server's min-max over the
# rounds, which says how quiet the run was.
#
#   bash ci/bench-e2e-cpu.sh [OUT_TSV]     # standalone: also prints the table
#
# ci/bench.sh calls it and appends its lines to the end-to-end file the report reads: `#cpu`
# (how it was measured), then `cpu` per server and round: name, round, round trips,
# nanoseconds on a CPU (all threads), user ticks, system ticks (from /proc/PID/stat, for the
# user/kernel split), label; and `steal` per server and round: `cpu`, name, 1 (connection),
# round, and during it the machine's stolen CPU ticks, all its CPU ticks and the busy ticks of
# processes other than the server and the driver (ci/lib.sh disturbance), which tell how much
# the host's and the machine's other work disturbed that round.
#
# The servers run as in ci/bench-e2e.sh (same flags; pinned to core 0 and the driver to core 1
# on 2 or more cores) with one tokio worker each. Each round drives every server in turn, so
# slow drift of the machine falls on all of them alike, and the report pairs each server with
# the rmcp-codec server of the same round.
#
# Settings: CPU_ROUND_TRIPS (per server and round, default 3000), CPU_ROUNDS (default 11),
# CPU_WARMUP (round trips per server before the first round, default 300).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/targets/bench}"
WORK="$CARGO_TARGET_DIR/bench-report/e2e-cpu"
OUT="${1:-$WORK/e2e-cpu.tsv}"
N="${CPU_ROUND_TRIPS:-3000}"
ROUNDS="${CPU_ROUNDS:-11}"
WARMUP="${CPU_WARMUP:-300}"
rm -rf "$WORK" && mkdir -p "$WORK"

ensure_cmd taskset util-linux
command -v python3 >/dev/null || die "python3 is missing"
[ -r /proc/self/schedstat ] || die "this kernel gives no /proc/PID/schedstat (CONFIG_SCHED_INFO): no CPU time per thread to read"

. ci/bench-e2e-common.sh

pin_servers driver

# The series and their flags are ci/bench-e2e.sh's (see there for why the replay capacity).
NAMES=(mrtr mrtr-bare mrtr-gcm-os rmcp-codec)
CAPACITY="--replay-capacity 4000000"
declare -A CMD=(
    [mrtr]="$REL/mrtr-hosted-server $CAPACITY"
    [mrtr-bare]="$REL/e2e-mrtr-rmcp $CAPACITY"
    [mrtr-gcm-os]="$REL/mrtr-hosted-server --cipher aes-256-gcm $CAPACITY"
    [rmcp-codec]="$REL/e2e-rmcp-codec"
)
declare -A PID=() ADDR=()
for name in "${NAMES[@]}"; do
    # shellcheck disable=SC2086 # the command is words
    TOKIO_WORKER_THREADS=1 "${SERVER_CPU[@]}" ${CMD[$name]} --listen 127.0.0.1:0 \
        --addr-file "$WORK/$name.addr" >"$WORK/$name.out" 2>"$WORK/$name.log" &
    PIDS+=("$!"); PID[$name]="$!"
done
for name in "${NAMES[@]}"; do
    for _ in $(seq 100); do
        [ -s "$WORK/$name.addr" ] && break
        kill -0 "${PID[$name]}" 2>/dev/null || { tail -20 "$WORK/$name.log" >&2; die "server $name exited"; }
        sleep 0.1
    done
    [ -s "$WORK/$name.addr" ] || die "server $name did not start listening"
    ADDR[$name]="$(cat "$WORK/$name.addr")"
done

# on_cpu PID: nanoseconds the process's threads have run, summed; then its user and system
# ticks. A thread that ended between two readings would take its time with it: the servers
# start every thread they use before they listen, and the check after each round keeps it so.
on_cpu() {
    local pid="$1" ns=0 t run
    for t in /proc/"$pid"/task/*/schedstat; do
        read -r run _ <"$t" || die "cannot read $t"
        ns=$((ns + run))
    done
    # Fields 14 and 15 of /proc/PID/stat; the command name (field 2) has no spaces here.
    read -r -a stat <"/proc/$pid/stat"
    printf '%s %s %s\n' "$ns" "${stat[13]}" "${stat[14]}"
}
threads() { ls /proc/"$1"/task | wc -l; }

for name in "${NAMES[@]}"; do
    "${LOAD_CPU[@]}" python3 ci/bench-e2e-drive.py "${ADDR[$name]}" "$WARMUP" >/dev/null \
        || die "$name: warm-up failed"
done
declare -A THREADS=()
for name in "${NAMES[@]}"; do THREADS[$name]="$(threads "${PID[$name]}")"; done

: >"$OUT.tmp"
for round in $(seq "$ROUNDS"); do
    for name in "${NAMES[@]}"; do
        pid="${PID[$name]}"
        ticks0="$(machine_ticks)"; driver0="$(children_ticks)"
        read -r ns0 u0 s0 <<<"$(on_cpu "$pid")"
        "${LOAD_CPU[@]}" python3 ci/bench-e2e-drive.py "${ADDR[$name]}" "$N" >/dev/null \
            || die "$name: round $round failed"
        read -r ns1 u1 s1 <<<"$(on_cpu "$pid")"
        driver1="$(children_ticks)"
        ours=$((u1 - u0 + s1 - s0 + driver1 - driver0))
        read -r stolen all others <<<"$(disturbance "$ticks0" "$(machine_ticks)" "$ours")"
        [ "$(threads "$pid")" = "${THREADS[$name]}" ] \
            || die "$name: its threads changed during round $round (their CPU time would be lost)"
        printf 'cpu\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$round" "$N" "$((ns1 - ns0))" \
            "$((u1 - u0))" "$((s1 - s0))" "${LABEL[$name]}" >>"$OUT.tmp"
        printf 'steal\tcpu\t%s\t1\t%s\t%s\t%s\t%s\n' "$name" "$round" "$stolen" "$all" \
            "$others" >>"$OUT.tmp"
    done
    log "round $round of $ROUNDS: $(awk -F'\t' -v r="$round" '
        $1 == "cpu" && $3 == r {printf "%s %.1f µs  ", $2, $5 / $4 / 1000}
        $1 == "steal" && $5 == r {s += $6; t += $7; o += $8}
        END {if (t > 0) printf "(steal %.1f %%, others %.1f %%)", 100 * s / t, 100 * o / t}' "$OUT.tmp")"
done
{
    printf '#cpu\t%s round trips per server in each of %s rounds after a warm-up of %s, one connection, one tokio worker, %s\n' \
        "$N" "$ROUNDS" "$WARMUP" "$PINNING"
    cat "$OUT.tmp"
} >"$OUT"
rm -f "$OUT.tmp"

if [ "$#" = 0 ]; then
    printf '\n%-12s %8s %16s\n' server round "CPU µs per rt"
    awk -F'\t' '$1 == "cpu" {printf "%-12s %8s %16.1f\n", $2, $3, $5 / $4 / 1000}' "$OUT"
fi
log "wrote $OUT"
