#!/usr/bin/env bash
# core and every no_std backend (each workspace crate whose categories include "no-std") build
# with only `core` available (no `alloc`, no `std`) for Cortex-M4F (thumbv7em-none-eabihf) and
# for the targets without compare-and-swap atomics: Cortex-M0/M0+ (thumbv6m-none-eabi) and
# RISC-V rv32imc (riscv32imc-unknown-none-elf, no atomic instructions at all); core also with
# its defmt feature. Their checks run on those targets in 30-firmware-qemu.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"
ensure_cmd python3 python3
export CARGO_TARGET_DIR="${NOSTD_TARGET_DIR:-$MRTR_ROOT/target/cross}"
read -r -a pkgs <<<"$(cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
meta = json.load(sys.stdin)
print(" ".join(sorted(p["name"] for p in meta["packages"] if "no-std" in p.get("categories", []))))
')"
printf '%s\n' "${pkgs[@]}" | grep -qx mrtr-core || die "mrtr-core is not among the no-std crates: ${pkgs[*]}"
[ "${#pkgs[@]}" -ge 3 ] || die "expected core and at least two no-std backends, found: ${pkgs[*]}"
for target in thumbv7em-none-eabihf thumbv6m-none-eabi riscv32imc-unknown-none-elf; do
    ensure_cross_toolchain "$target"
    log "building ${pkgs[*]} and mrtr-core +defmt for $target"
    for pkg in "${pkgs[@]}"; do
        cross_cargo build --release --locked --target "$target" -p "$pkg"
    done
    cross_cargo build --release --locked --target "$target" -p mrtr-core --features defmt
    # Prove no alloc crate was linked in: the rlibs must not reference liballoc.
    if ls "$CARGO_TARGET_DIR/$target/release/deps/"liballoc-*.rlib >/dev/null 2>&1; then
        die "alloc was built for $target: something in core or a backend needs alloc"
    fi
    echo "no_std build OK for $target: ${pkgs[*]} (no alloc crate built)"
done
