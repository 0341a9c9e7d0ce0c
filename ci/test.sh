#!/usr/bin/env bash
# Runs the whole test suite from a fresh clone: installs what the suites need, runs every
# suite in ci/suites/ listed below, and fails if any suite is missing or fails.
set -uo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh

SUITES=(
    05-deps           # Debian packages the suites need (redis-server for the replay-cache tests)
    08-style          # cargo fmt --check, clippy and rustdoc with -D warnings, mrtr-std feature matrix
    10-workspace      # cargo test: core, backends (behaviour suite per backend), std adapter
    12-package        # cargo package of every library crate: metadata, README and licences shipped, builds from its tarball
    15-spec           # docs/token-format.md and golden vectors checked by independent Python
    20-nostd-build    # core + backends build without alloc for Cortex-M4F, Cortex-M0 (no CAS) and RISC-V rv32imc (no atomics)
    30-firmware-qemu  # gateway firmware checks under QEMU per backend: Cortex-M0 (micro:bit), M3, M4F, RISC-V rv32imc; defmt log decoded and checked
    35-gateway        # the gateway firmware as an MCP server under QEMU: stdio on four families, Streamable HTTP on M4F, real clients, conformance MRTR, a fleet with a hosted node
    40-redis-fleet    # mrtr-std on a 3-primary Redis Cluster (resharding under traffic), a Sentinel failover (with and without WAIT) and a Redis restart under load
    50-fuzz           # cargo-fuzz targets, 30 s each from the committed seeds; any crash fails
    60-peers          # hosted MCP server vs Python/TypeScript/rmcp clients, wire negatives, 2 nodes + Redis, conformance MRTR
)

passed=0; failed=0; failed_names=()
for s in "${SUITES[@]}"; do
    script="ci/suites/$s.sh"
    log "suite $s"
    if [ ! -f "$script" ]; then
        printf 'FAILED: suite %s has no script %s\n' "$s" "$script" >&2
        failed=$((failed + 1)); failed_names+=("$s"); continue
    fi
    if bash "$script"; then
        passed=$((passed + 1))
    else
        printf 'FAILED: suite %s\n' "$s" >&2
        failed=$((failed + 1)); failed_names+=("$s")
    fi
done

echo
echo "suites: ${#SUITES[@]}; failed: ${failed_names[*]:-none}"
echo "suites: $passed passed, $failed failed"
[ "$failed" = 0 ]
