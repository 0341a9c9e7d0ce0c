#!/usr/bin/env bash
# The main job: shows mrtr end to end on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --locked --release -q -p mrtr-demo
