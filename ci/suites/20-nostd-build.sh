#!/usr/bin/env bash
# core and every no_std backend build with only `core` available (no `alloc`, no `std`) for
# Cortex-M4F (thumbv7em-none-eabihf) and for the targets without compare-and-swap atomics:
# Cortex-M0/M0+ (thumbv6m-none-eabi) and RISC-V rv32imc (riscv32imc-unknown-none-elf), with
# and without core's defmt feature. Their checks run on those targets in 30-firmware-qemu.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"
export CARGO_TARGET_DIR="${NOSTD_TARGET_DIR:-$MRTR_ROOT/target/cross}"
for target in thumbv7em-none-eabihf thumbv6m-none-eabi riscv32imc-unknown-none-elf; do
    ensure_cross_toolchain "$target"
    log "building mrtr-core (+defmt), mrtr-aes-gcm, mrtr-chacha20poly1305 for $target"
    for pkg in mrtr-core mrtr-aes-gcm mrtr-chacha20poly1305; do
        cross_cargo build --release --locked --target "$target" -p "$pkg"
    done
    cross_cargo build --release --locked --target "$target" -p mrtr-core --features defmt
    # Prove no alloc crate was linked in: the rlibs must not reference liballoc.
    if ls "$CARGO_TARGET_DIR/$target/release/deps/"liballoc-*.rlib >/dev/null 2>&1; then
        die "alloc was built for $target: something in core or a backend needs alloc"
    fi
    echo "no_std build OK for $target (no alloc crate built)"
done
