#!/usr/bin/env bash
# Publishable crates: every one has complete crates.io metadata, packages with `cargo package`
# (each built from its own tarball; the workspace's unpublished crates resolve through cargo's
# temporary local registry), and ships README.md, LICENSE-MIT and LICENSE-APACHE. Lists the
# files of each package.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"
ensure_cmd python3 python3

# The library crates. Every other workspace member must say `publish = false`.
expected="mrtr-aes-gcm mrtr-aes-gcm-siv mrtr-aws-lc mrtr-chacha20poly1305 mrtr-core mrtr-json mrtr-replay mrtr-rmcp mrtr-std mrtr-subscriptions"
required=(README.md LICENSE-MIT LICENSE-APACHE)

meta="$(mktemp)"; trap 'rm -f "$meta"' EXIT
cargo metadata --no-deps --format-version 1 --locked >"$meta" || die "cargo metadata failed"

# Publishable members ("name version directory" lines), and their metadata checked on the way.
crates="$(python3 - "$meta" <<'EOF'
import json, sys
meta = json.load(open(sys.argv[1]))
members = set(meta["workspace_members"])
bad = []
for p in sorted(meta["packages"], key=lambda p: p["name"]):
    if p["id"] not in members or p["publish"] == []:
        continue
    name = p["name"]
    for field in ("description", "license", "readme", "documentation", "rust_version"):
        if not p.get(field):
            bad.append(f"{name}: no {field}")
    if p.get("documentation") and p["documentation"] != f"https://docs.rs/{name}":
        bad.append(f"{name}: documentation is {p['documentation']}, not https://docs.rs/{name}")
    if not 1 <= len(p["keywords"]) <= 5:
        bad.append(f"{name}: {len(p['keywords'])} keywords (1 to 5)")
    if not 1 <= len(p["categories"]) <= 5:
        bad.append(f"{name}: {len(p['categories'])} categories (1 to 5)")
    for field in ("repository", "homepage"):
        url = p.get(field) or ""
        if ".invalid" in url or "example." in url:
            bad.append(f"{name}: placeholder {field} {url}")
    for dep in p["dependencies"]:
        if dep.get("path") and dep["kind"] != "dev" and dep["req"] == "*":
            bad.append(f"{name}: path dependency {dep['name']} has no version")
    print(name, p["version"], p["manifest_path"].rsplit("/", 1)[0])
for b in bad:
    print("METADATA", b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
)" || die "incomplete crates.io metadata (above)"

names="$(awk '{print $1}' <<<"$crates" | sort | tr '\n' ' ' | sed 's/ $//')"
[ "$names" = "$expected" ] \
    || die "publishable crates are [$names], expected [$expected]: give a non-library crate publish = false, or add a new library crate to this suite"

target_dir="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["target_directory"])' "$meta")"
pkg_args=()
while read -r name version _; do
    log "files of $name $version"
    list="$(cargo package --locked --allow-dirty --list -p "$name")" || die "cargo package --list -p $name failed"
    printf '%s\n' "$list"
    for f in "${required[@]}"; do
        grep -qx "$f" <<<"$list" || die "$name: package lacks $f"
    done
    pkg_args+=(-p "$name")
done <<<"$crates"

# All together, so each crate verifies against its siblings' packages, not crates.io. Cargo
# unpacks that temporary registry under $CARGO_HOME/registry/{cache,src}/-<hash of its path>/
# and reuses an unpacked crate of the same name and version: a copy left by an earlier run
# from the same checkout path would verify each crate against its siblings' old sources.
# Remove such copies of our crates first (only the local registries' directories, whose
# names start with "-"; crates.io's are untouched).
# Cargo also never rebuilds a registry crate whose name and version it has compiled before
# (registry sources are taken to be immutable), so the compiled copies of our crates go too;
# they rebuild in seconds.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
for dir in "$cargo_home"/registry/src/-*/ "$cargo_home"/registry/cache/-*/; do
    [ -d "$dir" ] || continue
    for name in $names; do
        rm -rf "${dir:?}$name-"[0-9]*
    done
done
for name in $names; do
    rm -rf "${target_dir:?}/debug/.fingerprint/$name-"* "$target_dir/debug/deps/lib${name//-/_}-"* \
        "$target_dir/debug/deps/${name//-/_}-"*
done
log "cargo package ${pkg_args[*]}"
cargo package --locked --allow-dirty "${pkg_args[@]}" || die "cargo package failed"

# The .crate files themselves: each required file is there, as a regular file with the text of
# the original (a dangling or unresolved symlink would not be).
while read -r name version dir; do
    crate="$target_dir/package/$name-$version.crate"
    [ -f "$crate" ] || die "$crate was not written"
    for f in "${required[@]}"; do
        entry="$name-$version/$f"
        tar -tvzf "$crate" "$entry" 2>/dev/null | grep -q '^-' \
            || die "$crate: $f missing or not a regular file"
        tar -xOzf "$crate" "$entry" | cmp -s - "$dir/$f" || die "$crate: $f differs from $dir/$f"
    done
    echo "$name $version: ${required[*]} shipped"
done <<<"$crates"
