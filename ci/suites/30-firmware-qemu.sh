#!/usr/bin/env bash
# The gateway firmware (examples/gateway-firmware) runs its checks under QEMU on four
# families, once per AEAD backend: Cortex-M0 (microbit, 16 KiB RAM), Cortex-M3
# (lm3s6965evb), Cortex-M4F (mps2-an386) and RISC-V rv32imc (virt). It logs through defmt;
# the frames are decoded on the host with defmt-print and checked: QEMU's exit status is 0,
# every frame decodes, the totals line says 0 failed, the number of passed-check lines
# (INFO) equals the total, no check failed (ERROR), and every run counts the same checks.
# The footprint binaries seal and resume once and must exit 0.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$MRTR_ROOT/examples/gateway-firmware/qemu.sh"

ensure_qemu
command -v qemu-system-riscv32 >/dev/null 2>&1 || die "qemu-system-riscv32 missing (Debian package qemu-system-misc)"
ensure_defmt_print
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

passed=0; failed=0; counts=()
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
for target in "${FW_TARGETS[@]}"; do
    fw_build "$target"
    family="$(fw_family "$target")"
    for bin in "${FW_FULL_BINS[@]}"; do
        log "$bin on $family ($target)"
        status=0
        fw_run "$target" "$bin" "$work/frames" || status=$?
        if ! fw_decode "$target" "$bin" "$work/frames" > "$work/log"; then
            cat "$work/log"; fail "$bin on $family: log does not decode"; continue
        fi
        cat "$work/log"
        total="$(sed -n 's/^firmware checks: \([0-9]*\) passed, 0 failed$/\1/p' "$work/log")"
        infos="$(grep -c '^INFO ' "$work/log" || true)"
        errors="$(grep -c '^ERROR ' "$work/log" || true)"
        if [ "$status" != 0 ]; then
            fail "$bin on $family (QEMU exit status $status)"
        elif [ -z "$total" ] || [ "$total" = 0 ]; then
            fail "$bin on $family: no passing totals line in the decoded log"
        elif [ "$infos" != "$total" ] || [ "$errors" != 0 ]; then
            fail "$bin on $family: $infos passed-check lines and $errors failed ones for $total checks"
        else
            echo "PASS $bin on $family: $total checks"
            passed=$((passed + 1)); counts+=("$total")
        fi
    done
    for bin in "${FW_FOOTPRINT_BINS[@]}"; do
        status=0
        fw_run "$target" "$bin" "$work/frames" || status=$?
        if [ "$status" = 0 ]; then
            echo "PASS $bin on $family"; passed=$((passed + 1))
        else
            fail "$bin on $family (QEMU exit status $status)"
        fi
    done
done
distinct="$(printf '%s\n' "${counts[@]}" | sort -u | wc -l)"
[ "${#counts[@]}" = 0 ] || [ "$distinct" = 1 ] \
    || { echo "check counts differ between runs: ${counts[*]}"; failed=$((failed + 1)); }
echo "firmware runs: $passed passed, $failed failed"
[ "$failed" = 0 ] || die "$failed firmware run(s) failed under QEMU"
