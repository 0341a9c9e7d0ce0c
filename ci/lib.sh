# Shared helpers for the CI scripts. Source it: `. "$(dirname "$0")/../lib.sh"` or similar.
# Every helper installs what is missing and fails loudly (non-zero exit) when it cannot.

MRTR_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export MRTR_ROOT

# Every mrtr-hosted-server a script starts puts its operations listener (/metrics, readiness
# causes) on a free loopback port: suites run several servers at once, and the default
# (127.0.0.1:8809) may be taken. A test that reads metrics asks for --ops-addr-file.
export MRTR_OPS_LISTEN="${MRTR_OPS_LISTEN:-127.0.0.1:0}"

log() { printf '\n==> %s\n' "$*" >&2; }
die() { printf '\nFAILED: %s\n' "$*" >&2; exit 1; }
# The first token's length from ci/bench-e2e-drive.py's line ("N round trips; first token L
# characters"); empty if the line does not say.
drive_token_len() { sed -n 's/.*first token \([0-9]*\) characters.*/\1/p' <<<"$1"; }
# The machine's CPU ticks since boot, all CPUs, from /proc/stat's "cpu" line (user nice system
# idle iowait irq softirq steal; guest time is already in user): stolen, all, and busy (user,
# nice, system, irq, softirq). Steal is time the hypervisor ran something else while this
# machine's virtual CPU wanted to run. Fails loudly without /proc/stat.
machine_ticks() {
    awk '$1 == "cpu" && NF >= 9 {t = 0; for (i = 2; i <= 9; i++) t += $i
            print $9, t, $2 + $3 + $4 + $7 + $8; found = 1; exit}
        END {exit !found}' /proc/stat || die "no cpu line with a steal column in /proc/stat"
}
# process_ticks PID: the user and system ticks of a running process, summed (/proc/PID/stat).
process_ticks() { stat_ticks "$1" 13; }
# children_ticks: the same for the children this shell has waited for so far (wrk, the driver,
# and what they waited for). `$$` is this shell also inside `$(...)`.
children_ticks() { stat_ticks "$$" 15; }
# stat_ticks PID I: fields I and I+1 (from 0) of /proc/PID/stat, summed. Fine for our processes,
# whose command names (field 1) have no spaces.
stat_ticks() {
    local stat
    read -r -a stat <"/proc/$1/stat" || die "cannot read /proc/$1/stat"
    echo $((stat[$2] + stat[$2 + 1]))
}
# disturbance BEFORE AFTER OURS: from two machine_ticks readings and the ticks the measured
# processes used between them, "stolen all others": others is the busy time of everything
# else on the machine (at least 0; ticks are sampled, so small counts are rough).
disturbance() {
    local s0 t0 b0 s1 t1 b1 others
    read -r s0 t0 b0 <<<"$1"
    read -r s1 t1 b1 <<<"$2"
    others=$((b1 - b0 - $3))
    echo "$((s1 - s0)) $((t1 - t0)) $((others > 0 ? others : 0))"
}

_apt_updated=0
apt_update_once() {
    if [ "$_apt_updated" = 0 ]; then
        log "apt-get update"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || die "apt-get update failed"
        _apt_updated=1
    fi
}

# ensure_cmd COMMAND DEBIAN-PACKAGE...: install the packages if COMMAND is missing.
ensure_cmd() {
    local cmd="$1"; shift
    if command -v "$cmd" >/dev/null 2>&1; then return 0; fi
    apt_update_once
    log "installing $* (for $cmd)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null \
        || die "apt-get install $* failed"
    command -v "$cmd" >/dev/null 2>&1 || die "$cmd still missing after installing $*"
}

# QEMU for Cortex-M and RISC-V. Some images carry a newer qemu-utils from backports that
# conflicts with bookworm's qemu-system-*; pin qemu-utils to bookworm's version then.
ensure_qemu() {
    if command -v qemu-system-arm >/dev/null 2>&1 && command -v qemu-system-riscv32 >/dev/null 2>&1; then
        return 0
    fi
    apt_update_once
    log "installing qemu-system-arm qemu-system-misc"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-system-arm qemu-system-misc >/dev/null 2>&1 \
        || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --allow-downgrades \
            qemu-system-arm qemu-system-misc "qemu-utils/bookworm" >/dev/null \
        || die "cannot install QEMU (qemu-system-arm, qemu-system-misc)"
    command -v qemu-system-arm >/dev/null || die "qemu-system-arm missing after install"
}

# A Rust toolchain that can build for bare-metal targets. Prefers rustup targets when they
# can be added; otherwise Debian's rustc-web with its std sources and -Zbuild-std.
# Sets CROSS_RUSTC, CROSS_CARGO and CROSS_BUILD_STD (extra cargo args, possibly empty).
ensure_cross_toolchain() {
    local target="$1"
    if command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -qx "$target"; then
        CROSS_RUSTC="$(rustup which rustc)"; CROSS_CARGO="$(rustup which cargo)"; CROSS_BUILD_STD=""
        export CROSS_RUSTC CROSS_CARGO CROSS_BUILD_STD RUSTC_BOOTSTRAP=
        return 0
    fi
    if command -v rustup >/dev/null 2>&1 && rustup target add "$target" >/dev/null 2>&1; then
        CROSS_RUSTC="$(rustup which rustc)"; CROSS_CARGO="$(rustup which cargo)"; CROSS_BUILD_STD=""
        export CROSS_RUSTC CROSS_CARGO CROSS_BUILD_STD
        return 0
    fi
    if [ ! -x /usr/bin/rustc ] || [ ! -x /usr/bin/cargo ] || ! ls -d /usr/src/rustc-*/library >/dev/null 2>&1 \
        || ! command -v ld.lld-19 >/dev/null 2>&1; then
        apt_update_once
        log "installing Debian's rustc-web cargo-web rust-web-src lld-19 (cross toolchain)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rustc-web cargo-web rust-web-src lld-19 >/dev/null \
            || die "cannot install the cross toolchain (rustc-web cargo-web rust-web-src lld-19)"
    fi
    CROSS_RUSTC=/usr/bin/rustc; CROSS_CARGO=/usr/bin/cargo
    CROSS_BUILD_STD="-Zbuild-std=core,compiler_builtins -Zbuild-std-features=compiler-builtins-mem"
    export CROSS_RUSTC CROSS_CARGO CROSS_BUILD_STD RUSTC_BOOTSTRAP=1
}

# cross_cargo ARGS...: run the cross cargo with the chosen rustc (and build-std when needed).
cross_cargo() {
    # shellcheck disable=SC2086
    RUSTC="$CROSS_RUSTC" "$CROSS_CARGO" "$@" $CROSS_BUILD_STD
}

# ensure_venv DIR REQUIREMENTS: a Python virtual environment at DIR (installing Debian's
# python3-venv if the interpreter lacks it) with the pinned REQUIREMENTS installed.
ensure_venv() {
    local venv="$1" requirements="$2"
    command -v python3 >/dev/null || die "python3 is missing"
    if [ ! -x "$venv/bin/python" ]; then
        log "python venv at $venv"
        if ! python3 -m venv "$venv" 2>/dev/null; then
            rm -rf "$venv"
            apt_update_once
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null \
                || die "cannot install python3-venv"
            python3 -m venv "$venv" || die "cannot create a Python venv"
        fi
    fi
    log "pip install -r $requirements (pinned) into $venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements" >&2 \
        || die "pip install failed"
}

ensure_redis() {
    ensure_cmd redis-server redis-server
    ensure_cmd redis-cli redis-tools
}
