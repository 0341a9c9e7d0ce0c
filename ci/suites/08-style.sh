#!/usr/bin/env bash
# Style and API hygiene, as CI checks them: no import circles between sibling modules in any
# crate (ci/module-cycles.py), one import path per public type (ci/import-paths.py), rustfmt (the workspace, the fuzz crate and the
# firmware), clippy with -D warnings over every target, rustdoc with -D warnings, and mrtr-std
# built with no default features (no backend, no tokio, no Redis) and with every feature.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"
command -v cargo >/dev/null || die "cargo is missing"
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt \
    || die "cannot install rustfmt"
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy \
    || die "cannot install clippy"

log "import circles between sibling modules (ci/module-cycles.py)"
command -v python3 >/dev/null || die "python3 is missing (ci/module-cycles.py)"
python3 ci/module-cycles.py --self-test
python3 ci/module-cycles.py
log "one import path per public type (ci/import-paths.py)"
python3 ci/import-paths.py --self-test
python3 ci/import-paths.py
log "mrtr-rmcp's README shows examples/two_tools.rs as it is"
python3 ci/check_readme_example.py

log "cargo fmt --check (workspace, fuzz, firmware)"
cargo fmt --all -- --check
(cd fuzz && cargo fmt -- --check)
(cd examples/gateway-firmware && cargo fmt -- --check)

log "cargo clippy --workspace --all-targets -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

log "mrtr-std: no default features, and every feature"
cargo clippy -p mrtr-std --no-default-features --locked -- -D warnings
cargo clippy -p mrtr-std --all-features --all-targets --locked -- -D warnings
# --all-features turns redis-tls on, which changes the redis crate's Sentinel API: the fleet
# features are also checked without it.
cargo clippy -p mrtr-std --all-targets --features redis-fleet-tests --locked -- -D warnings
cargo clippy -p mrtr-std --no-default-features --features redis-cluster,redis-sentinel --locked -- -D warnings

log "mrtr-replay: no default features (memory only), and every feature"
cargo clippy -p mrtr-replay --no-default-features --all-targets --locked -- -D warnings
cargo clippy -p mrtr-replay --all-features --all-targets --locked -- -D warnings

log "mrtr-subscriptions: no default features (no tokio driver), and every feature"
cargo clippy -p mrtr-subscriptions --no-default-features --all-targets --locked -- -D warnings
cargo clippy -p mrtr-subscriptions --all-features --all-targets --locked -- -D warnings

log "mrtr-rmcp by default: neither Redis nor the subscription runtime in its dependency tree"
tree="$(cargo tree -p mrtr-rmcp -e normal --prefix none --locked)" || die "cargo tree -p mrtr-rmcp failed"
grep -qE '^mrtr-std ' <<<"$tree" || die "cargo tree -p mrtr-rmcp lists no mrtr-std: the check below would prove nothing"
if grep -E '^(redis|mrtr-subscriptions) ' <<<"$tree"; then
    die "mrtr-rmcp's default build compiles Redis or mrtr-subscriptions (above): a server without them must not"
fi

log "mrtr-rmcp: no default features (no backend, no Redis), and every feature"
cargo clippy -p mrtr-rmcp --no-default-features --locked -- -D warnings
cargo clippy -p mrtr-rmcp --all-targets --locked -- -D warnings
cargo clippy -p mrtr-rmcp --all-features --all-targets --locked -- -D warnings

log "cargo doc --no-deps -D warnings"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --locked

log "the published crates as docs.rs documents them: every feature, doc(cfg) badges"
published=(-p mrtr-core -p mrtr-json -p mrtr-aes-gcm -p mrtr-chacha20poly1305 -p mrtr-aws-lc
    -p mrtr-aes-gcm-siv -p mrtr-replay -p mrtr-std -p mrtr-subscriptions -p mrtr-rmcp)
RUSTC_BOOTSTRAP=1 RUSTDOCFLAGS="--cfg docsrs -D warnings" \
    cargo doc --no-deps --all-features --locked "${published[@]}"
badge='Available on crate feature `redis` only'
grep -q "$badge" "${CARGO_TARGET_DIR:-target}/doc/mrtr_replay/index.html" \
    || die "docs.rs build: mrtr-replay's Redis items carry no feature badge (doc(cfg) is off)"
echo "style: fmt, clippy and rustdoc clean"
