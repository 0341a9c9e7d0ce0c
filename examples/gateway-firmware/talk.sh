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
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$venv/requirements.txt"; then
    command -v python3 >/dev/null || die "python3 is missing"
    log "installing the Python MCP client into $venv (once)"
    if ! python3 -m venv "$venv" 2>/dev/null; then
        rm -rf "$venv"
        apt_update_once
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null \
            || die "cannot install python3-venv"
        python3 -m venv "$venv" || die "cannot create a Python venv"
    fi
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements" >&2 \
        || die "pip install failed"
    cp "$requirements" "$venv/requirements.txt"
fi
exec "$venv/bin/python" "$here/talk.py" "$@"
