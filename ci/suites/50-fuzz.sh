#!/usr/bin/env bash
# Fuzzing: every cargo-fuzz (libFuzzer) target in fuzz/ runs for a bounded time from the
# committed seed corpus (fuzz/seeds/<target>) and, when present, the minimized corpus the last
# campaign left (fuzz/corpus/<target>, see ci/fuzz-campaign.sh; read only here), built as
# cargo-fuzz does by default: release optimizations with debug assertions and overflow checks,
# AddressSanitizer. Any crash, panic, sanitizer report, leak or timeout fails the suite; so does
# a target without seeds, a seed or corpus directory without a target, a stale seed corpus, or
# a missing tool.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT/fuzz"

seconds="${FUZZ_SECONDS:-30}"
command -v cargo >/dev/null 2>&1 || die "cargo is missing"
if ! cargo fuzz --version >/dev/null 2>&1; then
    log "installing cargo-fuzz from crates.io"
    cargo install --locked cargo-fuzz || die "cannot install cargo-fuzz"
fi
cargo fuzz --version >/dev/null 2>&1 || die "cargo fuzz does not run after installing it"
# cargo-fuzz passes -Zsanitizer and other unstable flags: the stable toolchain accepts them
# with RUSTC_BOOTSTRAP=1. The fuzz crate builds in its own fuzz/target.
export RUSTC_BOOTSTRAP=1
unset CARGO_TARGET_DIR

log "fuzz: the seed corpus is current and each token seed means what its name says"
# Not --locked: fuzz/Cargo.lock pins what it can, but a dependency another crate of the
# workspace adds must not fail the fuzz suite before it runs (cargo fuzz itself never locks).
cargo test || die "seed corpus check failed (regenerate: cargo run --example make_seeds)"

mapfile -t targets < <(cargo fuzz list)
[ "${#targets[@]}" -gt 0 ] || die "cargo fuzz list found no targets"
for dir in seeds/*/ corpus/*/; do
    [ -d "$dir" ] || continue
    printf '%s\n' "${targets[@]}" | grep -qx "$(basename "$dir")" || die "${dir%/} has no fuzz target"
done

log "fuzz: building ${#targets[@]} targets (${targets[*]})"
cargo fuzz build || die "building the fuzz targets failed"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=()
for t in "${targets[@]}"; do
    [ -n "$(ls -A "seeds/$t" 2>/dev/null)" ] || die "fuzz target $t has no seeds in fuzz/seeds/$t"
    mkdir -p "$work/$t"
    # New inputs go to the first directory (a scratch one): the committed corpus stays as is.
    inputs=("seeds/$t")
    [ -d "corpus/$t" ] && inputs+=("corpus/$t")
    log "fuzz: $t for ${seconds}s from ${inputs[*]}"
    if cargo fuzz run "$t" "$work/$t" "${inputs[@]}" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        >"$work/$t.log" 2>&1; then
        grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/$t.log" || true
        grep -E ' DONE ' "$work/$t.log" | tail -1 || true
    else
        grep -E -A8 'panicked at|==ERROR|^SUMMARY' "$work/$t.log" | head -60 >&2 || true
        tail -25 "$work/$t.log" >&2
        printf 'FAILED: fuzz target %s (reproducer in fuzz/artifacts/%s)\n' "$t" "$t" >&2
        failed+=("$t")
    fi
done

echo "fuzz targets: ${#targets[@]}; failed: ${failed[*]:-none}"
[ "${#failed[@]}" = 0 ]
