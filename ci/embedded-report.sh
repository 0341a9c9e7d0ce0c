#!/usr/bin/env bash
# One command for docs/embedded.md: builds the gateway firmware for every family (Cortex-M0
# micro:bit, M3, M4F, RISC-V rv32imc), runs every backend under QEMU (-icount shift=0,
# repeatable), decodes the defmt logs, and measures flash, static RAM, heap (no allocator
# linked), peak stack and cost of a seal and a resume. Then the served gateway: each
# gateway-stdio-* (every family) and gateway-http-* (M4F) binary is built again with the
# `measure` feature, serves a scripted session (measure_serve.py: raw JSON-RPC over the UART
# or HTTP) under -icount shift=0, and logs each request's peak stack and instructions.
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

GATEWAY_AEADS=(aes-gcm chacha20poly1305 xchacha20poly1305 aes-gcm-siv)

# served_bins TARGET: the served gateway binaries of a target (HTTP on the M4F only).
served_bins() {
    local aead
    for aead in "${GATEWAY_AEADS[@]}"; do
        echo "gateway-stdio-$aead"
        [ "$1" != thumbv7em-none-eabihf ] || echo "gateway-http-$aead"
    done
}

# build_measuring TARGET DIR: builds the served gateways with the `measure` feature and
# copies them to DIR (the normal build, made next, takes their place in the target dir).
build_measuring() {
    local target="$1" dir="$2" bin args=()
    ensure_cross_toolchain "$target"
    if [ -n "$CROSS_BUILD_STD" ]; then
        local var="CARGO_TARGET_$(echo "$target" | tr 'a-z-' 'A-Z_')_LINKER"
        export "$var=ld.lld-19"
    fi
    for bin in $(served_bins "$target"); do args+=(--bin "$bin"); done
    log "building the measuring gateways for $target"
    (cd "$FW_DIR" && cross_cargo build --release --locked --target "$target" --features measure "${args[@]}") \
        || die "measuring gateway build for $target failed"
    mkdir -p "$dir"
    for bin in $(served_bins "$target"); do cp "$(fw_elf "$target" "$bin")" "$dir/$bin"; done
}

# measure_served TARGET BIN: serves the scripted session with the measuring BIN and leaves
# its decoded log and request labels next to it.
measure_served() {
    local target="$1" bin="$2" dir="$logs/$target/measure" port link=()
    local elf="$dir/$bin" frames="$dir/$bin.frames"
    case "$bin" in
        gateway-http-*)
            port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
            link=(http "$frames" "$dir/$bin.labels.json" "$port" "$MEASURE_BEARER") ;;
        *) link=(stdio "$frames" "$dir/$bin.labels.json") ;;
    esac
    log "serving a measured session: $bin on $(fw_family "$target")"
    # shellcheck disable=SC2046
    python3 "$FW_DIR/measure_serve.py" "${link[@]}" -- \
        $(fw_serve_qemu "$target" "$elf" "$logs/gateway.conf") -icount shift=0 \
        2> "$dir/$bin.qemu.txt" \
        || { cat "$dir/$bin.qemu.txt" >&2; defmt-print -e "$elf" < "$frames" >&2 || true; die "the measured session of $bin on $target failed"; }
    defmt-print --show-skipped-frames -e "$elf" < "$frames" > "$dir/$bin.log" \
        || die "defmt-print failed on $bin ($target)"
    ! grep -q '^(HOST)' "$dir/$bin.log" || die "the log of $bin on $target does not decode"
    # None when the stack overran the meter (the report says so).
    grep 'measure: op=request' "$dir/$bin.log" >&2 || log "$bin on $target: no request measured"
}

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
# The measured sessions' configuration: a fixed seed and key, so that every run seals the
# same bytes (an example, like the self-check binaries' keys: never a real gateway's).
MEASURE_BEARER=measure-bearer-0001
{
    echo "seed=$(printf '5a%.0s' $(seq 32))"
    echo "keys=current=m1; m1:$(printf 'B%.0s' $(seq 32) | base64 -w0)"
    echo "token=$MEASURE_BEARER https://idp.example measurer"
} > "$logs/gateway.conf"
for target in "${FW_TARGETS[@]}"; do
    build_measuring "$target" "$logs/$target/measure"
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
    for bin in $(served_bins "$target"); do
        measure_served "$target" "$bin"
    done
done
# first_line COMMAND...: the first line of what COMMAND prints (read whole: `| head -n 1`
# under pipefail fails when the command is still writing as head exits).
first_line() {
    local out
    out="$("$@")"
    echo "${out%%$'\n'*}"
}
{
    echo "mrtr commit $(git -C "$MRTR_ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
    "$CROSS_RUSTC" --version
    first_line qemu-system-arm --version
    first_line defmt-print --version
} > "$logs/versions.txt"
python3 "$FW_DIR/report.py" "$CARGO_TARGET_DIR" "$logs" "$MRTR_ROOT/docs/embedded.md"
