#!/usr/bin/env bash
# The benchmark report: runs every benchmark and writes BENCHMARKS.md and its chart,
# docs/bench/roundtrip.svg.
#
#   bash ci/bench.sh            # full run, ~30-35 minutes on 2 cores (plus the first builds)
#   QUICK=1 bash ci/bench.sh    # a smoke run (short criterion times)
#
# Besides the ordinary release build it makes a second, smaller one with
# RUSTFLAGS="-C target-feature=+avx2" (in $CARGO_TARGET_DIR/avx2, without the peer libraries)
# and re-measures the ChaCha20-Poly1305 rows with it, on a CPU that has AVX2.
#
# Not part of ci/test.sh: benchmark numbers come from this command only. It builds into
# $CARGO_TARGET_DIR (default /work/targets/bench), starts its own redis-server on a free
# loopback port and stops it again, and records the machine and its load before and after,
# since timings on a shared machine are only as good as its quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/targets/bench}"
OUT="${OUT:-BENCHMARKS.md}"
WORK="$CARGO_TARGET_DIR/bench-report"
mkdir -p "$WORK"

if [ "${QUICK:-0}" = 1 ]; then
    CRIT=(--warm-up-time 0.1 --measurement-time 0.3 --sample-size 10)
    ALLOC_ITERS=300; REPLAY_SECS=0.5
else
    CRIT=(--warm-up-time 0.5 --measurement-time 1.5 --sample-size 30)
    ALLOC_ITERS=3000; REPLAY_SECS=2
fi

ensure_redis
ensure_cmd pkg-config pkg-config
dpkg -s libssl-dev >/dev/null 2>&1 || { apt_update_once; apt-get install -y -qq libssl-dev >/dev/null; }

log "building mrtr-benches (release)"
cargo build -q --release --locked -p mrtr-benches --benches --bins

# A free loopback port for Redis.
port=""
for p in $(seq 16379 16479); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || die "no free loopback port for redis-server"
redis_dir="$(mktemp -d)"
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$redis_dir" --daemonize yes --pidfile "$redis_dir/redis.pid" >/dev/null
stop_redis() {
    if [ -f "$redis_dir/redis.pid" ]; then kill "$(cat "$redis_dir/redis.pid")" 2>/dev/null || true; fi
    rm -rf "$redis_dir"
}
trap stop_redis EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$port" ping >/dev/null || die "redis-server did not start on port $port"

load_before="$(uptime)"
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
ticks_before="$(machine_ticks)"

log "criterion: raw AEAD floors and implementations"
rm -rf "$CARGO_TARGET_DIR/criterion"
cargo bench -q --locked -p mrtr-benches --bench aead -- "${CRIT[@]}" >"$WORK/aead.txt"
log "criterion: mrtr, the fair floors, the parts and the peers"
cargo bench -q --locked -p mrtr-benches --bench tokens -- "${CRIT[@]}" >"$WORK/tokens.txt"
avx2_crit=""
if grep -qw avx2 /proc/cpuinfo; then
    log "AVX2 build (-C target-feature=+avx2): ChaCha20-Poly1305 rows"
    avx2_target="$CARGO_TARGET_DIR/avx2"
    rm -rf "$avx2_target/criterion"
    RUSTFLAGS="-C target-feature=+avx2" CARGO_TARGET_DIR="$avx2_target" \
        cargo bench -q --locked -p mrtr-benches --no-default-features --bench aead -- \
        "${CRIT[@]}" '^aead-roundtrip/rustcrypto-x?chacha20poly1305/' >"$WORK/aead-avx2.txt"
    RUSTFLAGS="-C target-feature=+avx2" CARGO_TARGET_DIR="$avx2_target" \
        cargo bench -q --locked -p mrtr-benches --no-default-features --bench tokens -- \
        "${CRIT[@]}" '^(roundtrip|fairfloor)/(mrtr|floor)-x?chacha20poly1305/' >"$WORK/tokens-avx2.txt"
    avx2_crit="$avx2_target/criterion"
else
    log "this CPU has no AVX2: the AVX2 section of the report stays empty"
fi
log "paired ratios: the goals' ratios, both sides in alternating batches (src/bin/pairs.rs)"
printf '#run\t%s (UTC)\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$WORK/pairs.tsv"
if [ "${QUICK:-0}" = 1 ]; then
    "$CARGO_TARGET_DIR/release/pairs" 5 1 >>"$WORK/pairs.tsv"
else
    "$CARGO_TARGET_DIR/release/pairs" 31 4 >>"$WORK/pairs.tsv"
fi
log "allocations per operation"
"$CARGO_TARGET_DIR/release/allocs" "$ALLOC_ITERS" >"$WORK/allocs.tsv"
log "replay caches (in-process and Redis on 127.0.0.1:$port)"
MRTR_BENCH_REDIS="redis://127.0.0.1:$port/" "$CARGO_TARGET_DIR/release/replay" "$REPLAY_SECS" >"$WORK/replay.tsv"
redis_mem="$(redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '/^used_memory:/ {print $2}')"
redis_keys="$(redis-cli -p "$port" dbsize | tr -d '\r')"
if [ "${redis_keys:-0}" -gt 0 ]; then
    printf 'redis-bytes-per-key\t%s\tB\tRedis used_memory per replay key after the run (%s keys, includes the empty-server baseline)\n' \
        "$((redis_mem / redis_keys))" "$redis_keys" >>"$WORK/replay.tsv"
fi

log "end to end: hosted server vs rmcp's RequestStateCodec over loopback HTTP (ci/bench-e2e.sh)"
rm -f "$WORK/e2e.tsv"
if [ "${QUICK:-0}" = 1 ]; then
    E2E_SECS="${E2E_SECS:-2}" E2E_REPS="${E2E_REPS:-1}" bash ci/bench-e2e.sh "$WORK/e2e.tsv"
else
    bash ci/bench-e2e.sh "$WORK/e2e.tsv"
fi
log "end to end in instructions: the same round trips under callgrind (ci/bench-e2e-instr.sh)"
if [ "${QUICK:-0}" = 1 ]; then
    INSTR_ROUND_TRIPS="${INSTR_ROUND_TRIPS:-100}" INSTR_WARMUP="${INSTR_WARMUP:-20}" \
        bash ci/bench-e2e-instr.sh "$WORK/e2e-instr.tsv"
else
    bash ci/bench-e2e-instr.sh "$WORK/e2e-instr.tsv"
fi
cat "$WORK/e2e-instr.tsv" >>"$WORK/e2e.tsv"
log "end to end in CPU time: the same round trips, natively (ci/bench-e2e-cpu.sh)"
if [ "${QUICK:-0}" = 1 ]; then
    CPU_ROUND_TRIPS="${CPU_ROUND_TRIPS:-200}" CPU_ROUNDS="${CPU_ROUNDS:-2}" CPU_WARMUP="${CPU_WARMUP:-20}" \
        bash ci/bench-e2e-cpu.sh "$WORK/e2e-cpu.tsv"
else
    bash ci/bench-e2e-cpu.sh "$WORK/e2e-cpu.tsv"
fi
cat "$WORK/e2e-cpu.tsv" >>"$WORK/e2e.tsv"

finished="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
load_after="$(uptime)"
read -r stolen all _ <<<"$(disturbance "$ticks_before" "$(machine_ticks)" 0)"
steal_share="$(awk -v s="$stolen" -v t="$all" 'BEGIN {printf "%.1f", (t > 0) ? 100 * s / t : 0}')"
cpu="$(awk -F: '/model name/ {sub(/^ /, "", $2); print $2; exit}' /proc/cpuinfo)"
{
    echo "## Machine"
    echo
    echo "* CPU: $cpu, $(nproc) cores ($(grep -o -w -E 'aes|avx2|avx512f|vaes|vpclmulqdq|sha_ni' /proc/cpuinfo | sort -u | tr '\n' ' '))"
    echo "* Memory: $(free -g | awk '/Mem:/ {print $2}') GiB; kernel $(uname -r)"
    echo "* Toolchain: $(rustc --version); release profile, no target-cpu flags (runtime CPU feature detection), except the AVX2 section's second build"
    echo "* Run: $started to $finished (UTC), criterion ${CRIT[*]}"
    echo "* Load before: \`${load_before#*load}\`; after: \`${load_after#*load}\`"
    echo "* Steal time over the whole run: $steal_share % of the CPU time (the hypervisor running other work while this machine's CPUs wanted to run; /proc/stat)"
    echo "* Redis: $(redis-server --version | awk '{print $3}' | tr -d 'v='), loopback"
    echo
    echo "The machine is shared (other engineers compile on the same 2 cores). A 1-minute load"
    echo "average above 2 means the run competed for CPU: treat absolute times as upper bounds;"
    echo "ratios within one run are the more stable numbers."
} >"$WORK/machine.md"

# shellcheck disable=SC2086 # avx2_crit is one path or nothing
"$CARGO_TARGET_DIR/release/report" "$CARGO_TARGET_DIR/criterion" "$WORK/allocs.tsv" \
    "$WORK/replay.tsv" "$WORK/e2e.tsv" "$WORK/pairs.tsv" "$WORK/machine.md" "$OUT" $avx2_crit
log "wrote $OUT and its chart (raw outputs in $WORK)"
