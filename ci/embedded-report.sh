#!/usr/bin/env bash
# One command for docs/embedded.md: builds the gateway firmware for every family (Cortex-M0
# micro:bit, M3, M4F, RISC-V rv32imc), runs every backend under QEMU (-icount shift=0,
# repeatable), decodes the defmt logs, and measures flash, static RAM, heap (no allocator
# linked), peak stack and cost of a seal and a resume.
#
#   bash ci/embedded-report.sh            # writes docs/embedded.md
#   FW_TARGET_DIR=/some/dir bash ci/embedded-report.sh   # reuse another cargo target dir
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$MRTR_ROOT/examples/gateway-firmware/qemu.sh"

ensure_qemu
ensure_defmt_print
ensure_cmd python3 python3
ensure_cmd llvm-size llvm
ensure_cmd llvm-nm llvm
ensure_cmd llvm-objdump llvm

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
for target in "${FW_TARGETS[@]}"; do
    fw_build "$target"
    mkdir -p "$logs/$target"
    for bin in "${FW_FULL_BINS[@]}"; do
        log "measuring $bin on $(fw_family "$target")"
        fw_run "$target" "$bin" "$logs/frames" \
            || { fw_decode "$target" "$bin" "$logs/frames" || true; die "$bin failed on $target"; }
        fw_decode "$target" "$bin" "$logs/frames" > "$logs/$target/$bin.log" \
            || die "the log of $bin on $target does not decode"
        grep 'measure:' "$logs/$target/$bin.log" >&2
    done
done
{
    echo "mrtr commit $(git -C "$MRTR_ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
    "$CROSS_RUSTC" --version
    qemu-system-arm --version | head -n 1
    defmt-print --version | head -n 1
} > "$logs/versions.txt"
python3 "$FW_DIR/report.py" "$CARGO_TARGET_DIR" "$logs" "$MRTR_ROOT/docs/embedded.md"
