#!/usr/bin/env bash
# The figures of the house (#48), before and after a restructuring: lines per crate (library
# sources, and everything), public items per crate, the hosted example's code lines, and the
# dependency count of a minimal mrtr-rmcp server (`cargo tree -e normal | wc -l` of a fresh
# crate that depends on mrtr-rmcp, rmcp, tokio and axum, as the README's first example does),
# and the code lines of the README's complete server with how many of them are mrtr's.
#
#   ci/house-figures.sh            prints a Markdown table
#
# Public items: lines of src/ that declare a `pub` (not `pub(crate)`/`pub(super)`) fn, struct,
# enum, trait, type, const, static, mod or use. Code lines: lines that are neither blank nor
# only a comment.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$MRTR_ROOT"

code_lines() { # files... -> lines that are not blank and not only a comment
    cat "$@" 2>/dev/null | grep -Ev '^\s*($|//)' | wc -l
}
pub_items() {
    cat "$@" 2>/dev/null | grep -Ec '^\s*pub\s+(async\s+|unsafe\s+|const\s+fn\s+)*(fn|struct|enum|trait|type|const|static|mod|use|union)\b' || true
}

echo "| crate (folder) | src lines | all .rs lines | public items |"
echo "|---|---:|---:|---:|"
while IFS= read -r manifest; do
    dir=$(dirname "$manifest")
    case "$dir" in ./fuzz|./target*|*/target/*|./examples/gateway-firmware/*) continue ;; esac
    [ -d "$dir/src" ] || continue
    name=$(sed -n 's/^name = "\(.*\)"/\1/p' "$manifest" | head -n1)
    mapfile -t src < <(find "$dir/src" -name '*.rs' -not -path '*/target/*')
    mapfile -t all < <(find "$dir" -name '*.rs' -not -path '*/target/*')
    echo "| $name (${dir#./}) | $(cat "${src[@]}" | wc -l) | $(cat "${all[@]}" | wc -l) | $(pub_items "${src[@]}") |"
done < <(find . -name Cargo.toml -not -path './target/*' -not -path '*/target/*' | sort)

mapfile -t example < <(find examples/hosted-server/src -name '*.rs')
echo
echo "hosted example (examples/hosted-server/src): $(code_lines "${example[@]}") code lines in ${#example[@]} files"

if [ -f examples/hosted-server/src/conformance.rs ]; then
    echo "  of which built only with --features testing (conformance.rs, faults.rs, prompts/conformance.rs):" \
        "$(code_lines examples/hosted-server/src/conformance.rs examples/hosted-server/src/faults.rs \
            examples/hosted-server/src/prompts/conformance.rs)"
fi
adoption=rmcp-adapter/examples/two_tools.rs
if [ -f "$adoption" ]; then
    # mrtr-specific: a line that names an item of mrtr (or the handler's pending call).
    specific=$(grep -Ev '^\s*($|//)' "$adoption" | grep -cE 'mrtr|Mrtr|Caller|Parameters|pending|call\.|\bCall\b|Stack|PrecheckLayer|KeyConfig|AnyReplayCache|Engine|Backend::|Limits::|EngineConfig::|Sessions|ErrorDetail|log_filter|input::|Answer::|bearer_token|owner_layer|\.caller\(|\.owners\(')
    echo "adoption example ($adoption): $(code_lines "$adoption") code lines, $specific mrtr-specific"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src"
cat > "$tmp/Cargo.toml" <<TOML
[package]
name = "minimal-mrtr-server"
version = "0.0.0"
edition = "2024"
publish = false
[workspace]
[dependencies]
mrtr-rmcp = { path = "$MRTR_ROOT/rmcp-adapter" }
rmcp = { version = "=3.11.0", default-features = false, features = ["server", "macros", "transport-streamable-http-server"] }
tokio = { version = "1", features = ["rt-multi-thread", "macros", "net"] }
axum = { version = "0.8", default-features = false, features = ["http1", "tokio"] }
TOML
echo 'fn main() {}' > "$tmp/src/main.rs"
cp Cargo.lock "$tmp/Cargo.lock"
deps=$(cd "$tmp" && cargo tree -e normal 2>/dev/null | wc -l)
echo "minimal mrtr-rmcp server: cargo tree -e normal | wc -l = $deps"
