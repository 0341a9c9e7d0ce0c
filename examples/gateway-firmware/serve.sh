#!/usr/bin/env bash
# Runs the gateway firmware under QEMU as an MCP server (protocol 2026-07-28).
#
#   bash examples/gateway-firmware/serve.sh FAMILY stdio      # MCP stdio on stdin/stdout
#   bash examples/gateway-firmware/serve.sh m4f http PORT     # Streamable HTTP (mps2-an386)
#   bash examples/gateway-firmware/serve.sh FAMILY build [stdio|http]
#                                  # only build (and install QEMU, defmt-print) what serving
#                                  # needs: the stdio binary, on m4f also the HTTP one, or
#                                  # the named transport's only; then exit
#
# FAMILY: m0 (micro:bit, Cortex-M0), m3 (lm3s6965evb), m4f (mps2-an386), rv32 (virt, RISC-V).
# Environment (all optional):
#   GATEWAY_AEAD         aes-gcm (default), chacha20poly1305, xchacha20poly1305, aes-gcm-siv
#   MRTR_KEYS            the key ring, as the hosted server takes it ("current=k1; k1:BASE64");
#                        without it a fresh ephemeral key is made (and said so on stderr)
#   GATEWAY_AUDIENCE     the audience (default gateway-0042)
#   GATEWAY_TOKENS_FILE  lines "BEARER ISSUER SUBJECT" (HTTP bearer credentials)
#   GATEWAY_TTL_MS, GATEWAY_MAX_ROUNDS
#   GATEWAY_LOG          file for the decoded defmt log (default: stderr)
#   GATEWAY_LINGER_S     seconds the gateway keeps running after stdin closes (default 1)
#   FW_TARGET_DIR        cargo target directory (default examples/gateway-firmware/target)
#   GATEWAY_NO_BUILD=1   run the binary already built (no cargo)
#
# stdio: the board's UART is this script's stdin/stdout (one JSON-RPC message per line);
# nothing else is written to stdout. The firmware's defmt log (semihosting, QEMU's stdout) is
# decoded by defmt-print to stderr or GATEWAY_LOG. The script exits 0 when stdin closes (QEMU
# is stopped), or with QEMU's status if the firmware stops first (a bad config: non-zero).
set -euo pipefail
. "$(dirname "$0")/../../ci/lib.sh"
. "$MRTR_ROOT/examples/gateway-firmware/qemu.sh"

usage="usage: serve.sh FAMILY stdio | serve.sh m4f http PORT | serve.sh FAMILY build [stdio|http]"
[ $# -ge 2 ] || die "$usage"
family="$1" mode="$2"
aead="${GATEWAY_AEAD:-aes-gcm}"
case "$aead" in
    aes-gcm | chacha20poly1305 | xchacha20poly1305 | aes-gcm-siv) ;;
    *) die "GATEWAY_AEAD must be aes-gcm, chacha20poly1305, xchacha20poly1305 or aes-gcm-siv" ;;
esac
target="$(fw_target_of "$family")"
if [ "$mode" = build ]; then
    # Build only: what `serve.sh FAMILY stdio` and `serve.sh m4f http` run, and their tools.
    case "${3:-}" in
        "") bins=("gateway-stdio-$aead"); [ "$family" != m4f ] || bins+=("gateway-http-$aead") ;;
        stdio) bins=("gateway-stdio-$aead") ;;
        http)
            [ "$family" = m4f ] || die "http runs on m4f only (the mps2-an386's LAN9118)"
            bins=("gateway-http-$aead")
            ;;
        *) die "$usage" ;;
    esac
    ensure_qemu >&2
    ensure_defmt_print >&2
    for bin in "${bins[@]}"; do
        echo "serve.sh: building $bin for $family ($target)" >&2
        fw_build_bin "$target" "$bin"
        echo "serve.sh: built $(fw_elf "$target" "$bin")" >&2
    done
    exit 0
fi
case "$mode" in
    stdio) bin="gateway-stdio-$aead" ;;
    http)
        # ---- HTTP transport (owned by the network engineer: adjust this branch only) ----
        [ "$family" = m4f ] || die "http runs on m4f only (the mps2-an386's LAN9118)"
        port="${3:?usage: serve.sh m4f http PORT}"
        bin="gateway-http-$aead"
        ;;
    *) die "mode must be stdio, http or build ($usage)" ;;
esac

ensure_qemu >&2
ensure_defmt_print >&2
elf="$(fw_elf "$target" "$bin")"
if [ "${GATEWAY_NO_BUILD:-0}" = 1 ]; then
    [ -f "$elf" ] || die "GATEWAY_NO_BUILD=1 but $elf is not built"
else
    fw_build_bin "$target" "$bin"
fi

work="$(mktemp -d)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

# A fresh config for this boot: a fresh seed always, the keys given or a fresh ephemeral one.
config="$work/gateway.conf"
(
    umask 077
    {
        echo "# written by serve.sh for one boot"
        echo "seed=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
        if [ -n "${MRTR_KEYS:-}" ]; then
            echo "keys=$MRTR_KEYS"
        else
            echo "keys=current=ephemeral; ephemeral:$(head -c 32 /dev/urandom | base64 -w0)"
        fi
        [ -z "${GATEWAY_AUDIENCE:-}" ] || echo "audience=$GATEWAY_AUDIENCE"
        [ -z "${GATEWAY_TTL_MS:-}" ] || echo "ttl_ms=$GATEWAY_TTL_MS"
        [ -z "${GATEWAY_MAX_ROUNDS:-}" ] || echo "max_rounds=$GATEWAY_MAX_ROUNDS"
        if [ -n "${GATEWAY_TOKENS_FILE:-}" ]; then
            grep -v '^[[:space:]]*\(#\|$\)' "$GATEWAY_TOKENS_FILE" | sed 's/^/token=/'
        fi
    } > "$config"
)
[ -n "${MRTR_KEYS:-}" ] \
    || echo "serve.sh: no MRTR_KEYS: the gateway seals with a fresh ephemeral key (its tokens die with it)" >&2

# The decoded log: defmt-print reads the frames QEMU writes to its stdout.
mkfifo "$work/frames"
if [ -n "${GATEWAY_LOG:-}" ]; then
    defmt-print -e "$elf" < "$work/frames" >> "$GATEWAY_LOG" 2>&1 &
else
    defmt-print -e "$elf" < "$work/frames" >&2 &
fi
pids+=($!)

# shellcheck disable=SC2206
qemu=($(fw_serve_qemu "$target" "$elf" "$config"))
if [ "$mode" = stdio ]; then
    # The UART is a QEMU pipe chardev ($work/uart.in, $work/uart.out) bridged to this
    # script's stdin and stdout: QEMU's own stdout carries the log frames.
    mkfifo "$work/uart.in" "$work/uart.out"
    exec 3<&0
    "${qemu[@]}" -chardev "pipe,id=uart,path=$work/uart" -serial chardev:uart \
        < /dev/null > "$work/frames" &
    qemu_pid=$!; pids+=($qemu_pid)
    cat "$work/uart.out" &
    pids+=($!)
    cat <&3 > "$work/uart.in" &
    stdin_pid=$!; pids+=($stdin_pid)
    exec 3<&-
    status=0
    wait -n -p ended "$qemu_pid" "$stdin_pid" || status=$?
    if [ "$ended" = "$stdin_pid" ]; then
        # stdin closed: the client is done with the gateway. Answers to the last requests
        # get GATEWAY_LINGER_S (default 1) seconds to come out, then QEMU is stopped.
        sleep "${GATEWAY_LINGER_S:-1}"
        kill "$qemu_pid" 2>/dev/null || true
        wait "$qemu_pid" 2>/dev/null || true
        status=0
    else
        [ "$status" = 0 ] || echo "serve.sh: the gateway stopped (QEMU exit status $status)" >&2
    fi
    # Let the decoder print what is left.
    sleep 0.2
    exit "$status"
else
    # ---- HTTP transport (owned by the network engineer: adjust this branch only) ----
    "${qemu[@]}" -serial null \
        -nic "user,model=lan9118,restrict=on,hostfwd=tcp:127.0.0.1:$port-:80" \
        < /dev/null > "$work/frames" &
    qemu_pid=$!; pids+=($qemu_pid)
    # The guest is 10.0.2.15 behind QEMU's user network (restrict=on: it can reach nothing);
    # it listens on port 80, forwarded from the host's loopback port only.
    [ -n "${GATEWAY_TOKENS_FILE:-}" ] \
        || echo "serve.sh: no GATEWAY_TOKENS_FILE: the gateway accepts the demo bearer credential gateway-demo-token (never in production)" >&2
    echo "serve.sh: MCP endpoint http://127.0.0.1:$port/mcp (Streamable HTTP, JSON responses; Ctrl-C stops it)" >&2
    status=0
    wait "$qemu_pid" || status=$?
    [ "$status" = 0 ] || echo "serve.sh: the gateway stopped (QEMU exit status $status)" >&2
    sleep 0.2
    exit "$status"
fi
