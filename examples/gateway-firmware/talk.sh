#!/usr/bin/env bash
# Talks to the gateway with the official Python MCP client (talk.py): installs the client once
# into a virtual environment (the versions pinned for the peer tests), then runs talk.py.
#
#   bash examples/gateway-firmware/talk.sh http://127.0.0.1:8080/mcp    # a gateway serve.sh started
#   bash examples/gateway-firmware/talk.sh stdio m0                       # starts one itself
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../../ci/lib.sh"

venv="${GATEWAY_VENV:-${CARGO_TARGET_DIR:-$MRTR_ROOT/target}/gateway-venv}"
requirements="$MRTR_ROOT/examples/hosted-server/clients/python/requirements.txt"
# Installed once: the pinned versions are checked against a copy kept in the venv.
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$venv/requirements.txt"; then
    ensure_venv "$venv" "$requirements"
    cp "$requirements" "$venv/requirements.txt"
fi
exec "$venv/bin/python" "$here/talk.py" "$@"
