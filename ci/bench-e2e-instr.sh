#!/usr/bin/env bash
# End to end, counted in instructions: the resume round trip of `book_table` (the requests of
# ci/bench-e2e.lua, sent one after another by ci/bench-e2e-drive.py) on the hosted server
# (mrtr, default configuration, and AES-256-GCM with the OS nonce source), on mrtr alone on
# plain rmcp (e2e-mrtr-rmcp) and on the same tool served by plain rmcp with its
# RequestStateCodec (as it is, and with filler making its token as long as mrtr's), each server
# run under valgrind's callgrind; and the hosted, mrtr-alone and codec servers once more, built
# with fat LTO and one codegen unit (the -lto servers).
# Instruction counts do not depend on the machine's load, so this is the repeatable
# companion of ci/bench-e2e.sh's throughput (which it does not replace: it counts no kernel
# time, cache misses or waiting).
#
#   bash ci/bench-e2e-instr.sh [OUT_TSV]     # standalone: also prints the table
#
# ci/bench.sh calls it and appends its lines (`#instr`, then `instr` per server: name, round
# trips, instructions, of which portable SHA-256, label) to the end-to-end file the report
# reads.
#
# Counts user-space instructions of the whole server process (every thread) from the first
# byte of the measured round trips to the last, after a warm-up. Valgrind hides SHA
# extensions from the guest, so `sha2` falls back to its portable code there while it uses
# SHA-NI natively: the rmcp server's HMAC-SHA256 (and mrtr's SHA-256 argument digest) count far
# more instructions than they run natively. The file therefore also gives each server's
# instructions in SHA-256's portable compression function, and the report compares the
# counts without them.
#
# Callgrind also simulates the caches and branch predictors (--cache-sim, --branch-sim), so the
# file gives each server's first-level instruction and data cache misses, last-level misses and
# mispredicted branches for the same round trips (`cache` lines: name, round trips, I1 misses,
# D1 misses (reads and writes), last-level misses, mispredicted branches (conditional and
# indirect)). A simulation of a generic cache, not this CPU's counters, but like the
# instruction count it is repeatable, and it shows where time goes that instructions miss.
#
# Each server runs one tokio worker thread (TOKIO_WORKER_THREADS=1), as in ci/bench-e2e.sh's
# pinned runs, where a server sees one core. With a worker per core, the idle one wakes and
# spins for a number of instructions that depends on timing: that moved a server's count by up
# to about 1.5 % between runs, against about 0.2 % with one worker.
#
# Settings: INSTR_ROUND_TRIPS (measured, default 1000), INSTR_WARMUP (default 200).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/targets/bench}"
WORK="$CARGO_TARGET_DIR/bench-report/e2e-instr"
OUT="${1:-$WORK/e2e-instr.tsv}"
N="${INSTR_ROUND_TRIPS:-1000}"
WARMUP="${INSTR_WARMUP:-200}"
rm -rf "$WORK" && mkdir -p "$WORK"

ensure_cmd valgrind valgrind
ensure_cmd callgrind_control valgrind
command -v python3 >/dev/null || die "python3 is missing"

. ci/bench-e2e-common.sh

# rmcp-codec-long: the codec server with filler in its sealed state, so that its first token
# is as long as the hosted server's (checked below). What it counts beyond rmcp-codec bounds
# what a token that long costs rmcp's own request parsing and response serializing, which
# mrtr's longer token pays too: the count also holds the codec's own work on the filler, so
# it is an upper bound, and at least the rest of mrtr's difference is mrtr's own code. STATE_PADDING: the filler's bytes (73 makes the codec's 87-character first
# token 196 characters, mrtr's default is 195).
STATE_PADDING="${STATE_PADDING:-73}"
#
# The -lto servers: the hosted server, mrtr alone and the codec server again, built with fat
# link-time optimization and one codegen unit (the release profile as many servers ship it),
# in their own target directory. The report compares each with the codec server built the
# same way: whether inlining across crates (mrtr is five crates, the codec is part of rmcp)
# narrows the gap.
log "building the same three servers with fat LTO and one codegen unit (the -lto servers)"
build_servers CARGO_TARGET_DIR="$CARGO_TARGET_DIR/lto" CARGO_PROFILE_RELEASE_LTO=fat \
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
LTO="$CARGO_TARGET_DIR/lto/release"
NAMES=(mrtr mrtr-bare mrtr-gcm-os rmcp-codec rmcp-codec-long mrtr-lto mrtr-bare-lto rmcp-codec-lto)
LABEL+=(
    [rmcp-codec-long]="rmcp-codec with $STATE_PADDING bytes of filler in its state: a token as long as mrtr's"
    [mrtr-lto]="${LABEL[mrtr]}, fat LTO"
    [mrtr-bare-lto]="${LABEL[mrtr-bare]}, fat LTO"
    [rmcp-codec-lto]="${LABEL[rmcp-codec]}, fat LTO"
)
declare -A CMD=(
    [mrtr]="$REL/mrtr-hosted-server"
    [mrtr-bare]="$REL/e2e-mrtr-rmcp"
    [mrtr-gcm-os]="$REL/mrtr-hosted-server --cipher aes-256-gcm"
    [rmcp-codec]="$REL/e2e-rmcp-codec"
    [rmcp-codec-long]="$REL/e2e-rmcp-codec --state-padding $STATE_PADDING"
    [mrtr-lto]="$LTO/mrtr-hosted-server"
    [mrtr-bare-lto]="$LTO/e2e-mrtr-rmcp"
    [rmcp-codec-lto]="$LTO/e2e-rmcp-codec"
)
declare -A TOKEN_LEN=()
declare -A PID=()
# Instrumentation starts off (startup is not counted) and is switched on before the warm-up.
for name in "${NAMES[@]}"; do
    # shellcheck disable=SC2086 # the command is words
    TOKIO_WORKER_THREADS=1 valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --instr-atstart=no --callgrind-out-file="$WORK/$name.cg" \
        ${CMD[$name]} --listen 127.0.0.1:0 --addr-file "$WORK/$name.addr" \
        >"$WORK/$name.out" 2>"$WORK/$name.log" &
    PIDS+=("$!"); PID[$name]="$!"
done
for name in "${NAMES[@]}"; do
    for _ in $(seq 600); do
        [ -s "$WORK/$name.addr" ] && break
        kill -0 "${PID[$name]}" 2>/dev/null || { tail -20 "$WORK/$name.log" >&2; die "server $name exited"; }
        sleep 0.2
    done
    [ -s "$WORK/$name.addr" ] || die "server $name did not start listening under callgrind"
done

: >"$OUT.tmp"
for name in "${NAMES[@]}"; do
    pid="${PID[$name]}"; addr="$(cat "$WORK/$name.addr")"
    callgrind_control -i on "$pid" >/dev/null 2>&1
    python3 ci/bench-e2e-drive.py "$addr" "$WARMUP" >/dev/null || die "$name: warm-up failed"
    callgrind_control -z "$pid" >/dev/null 2>&1
    said="$(python3 ci/bench-e2e-drive.py "$addr" "$N")" || die "$name: measured round trips failed"
    TOKEN_LEN[$name]="$(drive_token_len "$said")"
    [ -n "${TOKEN_LEN[$name]}" ] || die "$name: the driver did not say how long the token was"
    callgrind_control -d "$pid" >/dev/null 2>&1
    callgrind_control -i off "$pid" >/dev/null 2>&1
    dump="$(ls "$WORK/$name.cg".* 2>/dev/null | head -1)"
    [ -s "$dump" ] || die "$name: callgrind wrote no dump"
    total="$(awk '/^summary:/ {print $2}' "$dump")"
    [ -n "$total" ] || die "$name: no instruction total in $dump"
    # Self cost of SHA-256's compression, portable under valgrind (every inlined piece of it:
    # without LTO it is `sha2::sha256::soft::*`, with LTO that is inlined into
    # `sha2::sha256::compress256`, whose own dispatch is a few instructions per block).
    sha="$(callgrind_annotate --threshold=100 --auto=no "$dump" 2>/dev/null \
        | awk '/sha2::sha256::(soft|compress256)/ {gsub(",", "", $1); s += $1} END {print s + 0}')"
    printf 'instr\t%s\t%s\t%s\t%s\t%s\n' "$name" "$N" "$total" "$sha" "${LABEL[$name]}" >>"$OUT.tmp"
    # events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim
    awk -v n="$name" -v rt="$N" '
        /^events:/ {for (i = 2; i <= NF; i++) col[$i] = i}
        /^summary:/ {
            if (!("Bim" in col)) exit 1
            printf "cache\t%s\t%s\t%d\t%d\t%d\t%d\n", n, rt, $col["I1mr"],
                $col["D1mr"] + $col["D1mw"], $col["ILmr"] + $col["DLmr"] + $col["DLmw"],
                $col["Bcm"] + $col["Bim"]
        }' "$dump" >>"$OUT.tmp" || die "$name: callgrind wrote no cache or branch counts"
    log "$name: $((total / N)) instructions per round trip ($((sha / N)) in portable SHA-256)"
done
# The long-token codec server stands for mrtr's token length only if the lengths agree.
long="${TOKEN_LEN[rmcp-codec-long]}"; want="${TOKEN_LEN[mrtr]}"
if [ "$(( long > want ? long - want : want - long ))" -gt 2 ]; then
    die "rmcp-codec-long's token is $long characters, the hosted server's $want: set STATE_PADDING" \
        "to about $(( STATE_PADDING + (want - long) * 3 / 4 ))"
fi
log "first tokens: hosted server $want characters, rmcp-codec ${TOKEN_LEN[rmcp-codec]}, rmcp-codec-long $long"
{
    printf '#instr\tcallgrind (valgrind %s), %s round trips after a warm-up of %s, one connection, one tokio worker\n' \
        "$(valgrind --version | sed 's/valgrind-//')" "$N" "$WARMUP"
    cat "$OUT.tmp"
} >"$OUT"
rm -f "$OUT.tmp"

if [ "$#" = 0 ]; then
    printf '\n%-16s %14s %14s %14s\n' server "instr/rt" "sha256 soft" "without it"
    awk -F'\t' '$1 == "instr" {printf "%-16s %14d %14d %14d\n", $2, $4 / $3, $5 / $3, ($4 - $5) / $3}' "$OUT"
fi
log "wrote $OUT"
