#!/usr/bin/env bash
# The main job in one command: build, start the hosted MCP server with its embedded defaults
# (ephemeral dev key with a warning, in-process replay cache, no Redis) on a free loopback
# port, drive the multi-round book_table tool end to end with rmcp's client (printing each
# round), then stop the server.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q -p mrtr-hosted-server
bin="${CARGO_TARGET_DIR:-target}/debug"
tmp="$(mktemp -d)"
"$bin/mrtr-hosted-server" --listen 127.0.0.1:0 --ops-listen 127.0.0.1:0 --addr-file "$tmp/addr" 2>"$tmp/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/addr" ] && break; sleep 0.1; done
[ -s "$tmp/addr" ] || { cat "$tmp/server.log" >&2; echo "server did not start" >&2; exit 1; }
echo "--- server log (startup) ---"
cat "$tmp/server.log"
echo "--- demo client ---"
"$bin/mrtr-rmcp-client" demo --url "http://$(cat "$tmp/addr")/mcp"
