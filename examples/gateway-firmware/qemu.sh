# Build and run helpers for the gateway firmware, shared by ci/suites/30-firmware-qemu.sh and
# ci/embedded-report.sh. Source after ci/lib.sh.

FW_DIR="$MRTR_ROOT/examples/gateway-firmware"
FW_TARGETS=(thumbv7em-none-eabihf thumbv7m-none-eabi)
FW_FULL_BINS=(aes-gcm chacha20poly1305 xchacha20poly1305)
FW_FOOTPRINT_BINS=(footprint-baseline footprint-aes-gcm footprint-chacha20poly1305)
export CARGO_TARGET_DIR="${FW_TARGET_DIR:-$FW_DIR/target}"

# fw_machine TARGET: the QEMU machine and CPU for a target.
fw_machine() {
    case "$1" in
        thumbv7em-none-eabihf) echo "mps2-an386 cortex-m4" ;;
        thumbv7m-none-eabi) echo "lm3s6965evb cortex-m3" ;;
        *) die "no QEMU machine for $1" ;;
    esac
}

# fw_build TARGET: installs the cross toolchain if needed and builds every binary, release.
fw_build() {
    local target="$1"
    ensure_cross_toolchain "$target"
    if [ -n "$CROSS_BUILD_STD" ]; then
        # Debian's rustc has no rust-lld: link with LLVM's lld.
        local var="CARGO_TARGET_$(echo "$target" | tr 'a-z-' 'A-Z_')_LINKER"
        export "$var=ld.lld-19"
    fi
    log "building the gateway firmware for $target"
    (cd "$FW_DIR" && cross_cargo build --release --locked --target "$target") \
        || die "firmware build for $target failed (if core's dependencies changed: cd examples/gateway-firmware && cargo update -w, and commit its Cargo.lock)"
}

# fw_elf TARGET BIN: path of a built binary.
fw_elf() {
    echo "$CARGO_TARGET_DIR/$1/release/$2"
}

# fw_run TARGET BIN: runs a binary under QEMU with one instruction per virtual ns; its
# output goes to stdout, the exit status is QEMU's (the firmware's verdict).
fw_run() {
    local target="$1" bin="$2" machine cpu
    read -r machine cpu <<<"$(fw_machine "$target")"
    timeout 300 qemu-system-arm -machine "$machine" -cpu "$cpu" -nographic \
        -semihosting-config enable=on,target=native -icount shift=0 \
        -kernel "$(fw_elf "$target" "$bin")"
}
