#!/usr/bin/env bash
# core and the RustCrypto backends build for a Cortex-M4F target with no alloc and no std.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"
target=thumbv7em-none-eabihf
ensure_cross_toolchain "$target"
log "building mrtr-core (+defmt), mrtr-aes-gcm, mrtr-chacha20poly1305, mrtr-aes-gcm-siv for $target"
export CARGO_TARGET_DIR="$MRTR_ROOT/target/cross"
for pkg in mrtr-core mrtr-aes-gcm mrtr-chacha20poly1305 mrtr-aes-gcm-siv; do
    cross_cargo build --release --locked --target "$target" -p "$pkg"
done
cross_cargo build --release --locked --target "$target" -p mrtr-core --features defmt
# Prove no alloc crate was linked in: the rlibs must not reference liballoc.
if ls "$CARGO_TARGET_DIR/$target/release/deps/"liballoc-*.rlib >/dev/null 2>&1; then
    die "alloc was built for $target: something in core or a backend needs alloc"
fi
echo "no_std build OK for $target (no alloc crate built)"
