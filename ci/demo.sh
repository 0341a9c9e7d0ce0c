#!/usr/bin/env bash
# The main job on a fresh machine: starts the hosted MCP server (rmcp, Streamable HTTP,
# protocol 2026-07-28) with its embedded defaults — ephemeral dev key (with a warning),
# in-process replay cache, no Redis — and drives the multi-round booking tool end to end
# with a demo client, printing each round; then shows the replay being refused.
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash examples/hosted-server/run-demo.sh
