#!/usr/bin/env bash
# Installs what the later suites need from Debian: redis-server (the Redis replay-cache tests
# in mrtr-std start their own throwaway server on a free loopback port). Fails loudly.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
ensure_redis
redis-server --version
