#!/usr/bin/env bash
# The gateway firmware (examples/gateway-firmware) runs its checks on Cortex-M4F
# (mps2-an386) and Cortex-M3 (lm3s6965evb) under QEMU, once per AEAD backend: golden
# vectors, resume chain to the round cap, rejected tokens, shared replay set, expiry.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$MRTR_ROOT/examples/gateway-firmware/qemu.sh"

ensure_qemu
passed=0; failed=0
for target in "${FW_TARGETS[@]}"; do
    fw_build "$target"
    read -r machine _ <<<"$(fw_machine "$target")"
    for bin in "${FW_FULL_BINS[@]}" "${FW_FOOTPRINT_BINS[@]}"; do
        log "$bin on $machine ($target)"
        out="$(mktemp)"
        status=0
        fw_run "$target" "$bin" | tee "$out" || status=$?
        # The full firmware ends with its totals; the footprint binaries print nothing.
        if [ "$status" = 0 ] && { [[ "$bin" == footprint-* ]] || grep -q '^firmware checks: [1-9][0-9]* passed, 0 failed$' "$out"; }; then
            echo "PASS $bin on $machine"
            passed=$((passed + 1))
        else
            echo "FAIL $bin on $machine (QEMU exit status $status)"
            failed=$((failed + 1))
        fi
        rm -f "$out"
    done
done
echo "firmware runs: $passed passed, $failed failed"
[ "$failed" = 0 ] || die "$failed firmware run(s) failed under QEMU"
