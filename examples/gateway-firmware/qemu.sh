# Build, run and decode helpers for the gateway firmware, shared by
# ci/suites/30-firmware-qemu.sh and ci/embedded-report.sh. Source after ci/lib.sh.

FW_DIR="$MRTR_ROOT/examples/gateway-firmware"
# One target per family: Cortex-M0 (micro:bit), M3, M4F, RISC-V rv32imc.
FW_TARGETS=(thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabihf riscv32imc-unknown-none-elf)
FW_FULL_BINS=(aes-gcm chacha20poly1305 xchacha20poly1305 aes-gcm-siv)
FW_FOOTPRINT_BINS=(footprint-baseline footprint-aes-gcm footprint-chacha20poly1305 footprint-xchacha20poly1305 footprint-aes-gcm-siv)
export CARGO_TARGET_DIR="${FW_TARGET_DIR:-$FW_DIR/target}"
# The host-side decoder of the firmware's log frames; CI installs it (ensure_defmt_print).
DEFMT_PRINT_VERSION=1.2.0

# fw_machine TARGET: the QEMU command line (system emulator, machine, CPU) for a target.
fw_machine() {
    case "$1" in
        thumbv6m-none-eabi) echo "qemu-system-arm -machine microbit -cpu cortex-m0" ;;
        thumbv7m-none-eabi) echo "qemu-system-arm -machine lm3s6965evb -cpu cortex-m3" ;;
        thumbv7em-none-eabihf) echo "qemu-system-arm -machine mps2-an386 -cpu cortex-m4" ;;
        riscv32imc-unknown-none-elf) echo "qemu-system-riscv32 -machine virt -bios none" ;;
        *) die "no QEMU machine for $1" ;;
    esac
}

# fw_family TARGET: a short name for logs.
fw_family() {
    case "$1" in
        thumbv6m-none-eabi) echo "Cortex-M0 (microbit)" ;;
        thumbv7m-none-eabi) echo "Cortex-M3 (lm3s6965evb)" ;;
        thumbv7em-none-eabihf) echo "Cortex-M4F (mps2-an386)" ;;
        riscv32imc-unknown-none-elf) echo "RISC-V rv32imc (virt)" ;;
        *) die "no family for $1" ;;
    esac
}

# ensure_defmt_print: installs the defmt frame decoder (crates.io, built from source).
ensure_defmt_print() {
    # The version is captured before it is matched: `defmt-print --version | grep -q` under
    # `set -o pipefail` fails whenever grep exits (first match) before defmt-print has
    # written everything (SIGPIPE), and that started a needless `cargo install`.
    local version=""
    if command -v defmt-print >/dev/null 2>&1; then
        version="$(defmt-print --version 2>/dev/null || true)"
    fi
    case "$version" in
        *"$DEFMT_PRINT_VERSION"*) return 0 ;;
    esac
    log "installing defmt-print $DEFMT_PRINT_VERSION (decodes the firmware's defmt log)"
    cargo install --locked --quiet defmt-print --version "$DEFMT_PRINT_VERSION" \
        || die "cannot install defmt-print $DEFMT_PRINT_VERSION"
    command -v defmt-print >/dev/null 2>&1 || die "defmt-print missing after cargo install (is ~/.cargo/bin on PATH?)"
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

# fw_run TARGET BIN FRAMES: runs a binary under QEMU with one instruction per virtual ns
# (-icount shift=0). The firmware's defmt frames (semihosting console) go to the file FRAMES,
# QEMU's own messages to stderr; the exit status is QEMU's (the firmware's verdict).
fw_run() {
    local target="$1" bin="$2" frames="$3"
    # shellcheck disable=SC2046
    timeout 300 $(fw_machine "$target") -display none -monitor none -serial none \
        -semihosting-config enable=on,target=native -icount shift=0 \
        -kernel "$(fw_elf "$target" "$bin")" > "$frames"
}

# fw_decode TARGET BIN FRAMES: decodes the frames against the ELF to text on stdout, one line
# per log call (`INFO  ...` a passed check, `ERROR ...` a failed one, plain text for notes).
# Fails if defmt-print does, or if any frame could not be decoded (defmt-print otherwise
# skips malformed frames silently: --show-skipped-frames makes it say so).
fw_decode() {
    local target="$1" bin="$2" frames="$3" text
    text="$(mktemp)"
    if ! defmt-print --show-skipped-frames -e "$(fw_elf "$target" "$bin")" < "$frames" > "$text"; then
        cat "$text"; rm -f "$text"; echo "defmt-print failed on $bin ($target)" >&2; return 1
    fi
    cat "$text"
    if grep -q '^(HOST)' "$text"; then
        rm -f "$text"; echo "defmt-print could not decode every frame of $bin ($target)" >&2; return 1
    fi
    rm -f "$text"
}

# fw_target_of FAMILY: the target triple of a short family name (serve.sh's FAMILY argument).
fw_target_of() {
    case "$1" in
        m0) echo thumbv6m-none-eabi ;;
        m3) echo thumbv7m-none-eabi ;;
        m4f) echo thumbv7em-none-eabihf ;;
        rv32) echo riscv32imc-unknown-none-elf ;;
        *) die "unknown family $1 (m0, m3, m4f or rv32)" ;;
    esac
}

# fw_build_bin TARGET BIN: builds one binary, release, its output on stderr only (for
# serve.sh, whose stdout is the MCP channel).
fw_build_bin() {
    local target="$1" bin="$2"
    ensure_cross_toolchain "$target"
    if [ -n "$CROSS_BUILD_STD" ]; then
        local var="CARGO_TARGET_$(echo "$target" | tr 'a-z-' 'A-Z_')_LINKER"
        export "$var=ld.lld-19"
    fi
    (cd "$FW_DIR" && cross_cargo build --release --locked --quiet --target "$target" --bin "$bin") >&2 \
        || die "building $bin for $target failed"
}

# fw_serve_qemu TARGET ELF CONFIG: the QEMU command line of a serving gateway, without its
# serial port and network: no -icount (the tick clock follows real time), semihosting on
# (its console, which carries the defmt frames, is QEMU's stdout), the config file's path as
# the second semihosting argument.
fw_serve_qemu() {
    local target="$1" elf="$2" config="$3"
    echo "$(fw_machine "$target") -display none -monitor none" \
        "-semihosting-config enable=on,target=native,arg=gateway,arg=$config -kernel $elf"
}
