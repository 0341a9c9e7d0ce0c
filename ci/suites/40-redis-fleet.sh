#!/usr/bin/env bash
# Single use beyond one Redis (mrtr-std features redis-cluster and redis-sentinel): the tests
# start their own deployments from Debian's packages, on free loopback ports in temp dirs:
#  * replay_redis_cluster: a Redis Cluster of 3 primaries (redis-cli --cluster create); the
#    eviction policy is read on every primary; two nodes share the cluster; a resharding
#    (redis-cli --cluster reshard, keys moved with MIGRATE) during traffic re-admits nothing;
#  * replay_redis_sentinel: a primary, 2 replicas and 3 sentinels; the primary is killed in
#    the middle of traffic: with WAIT for both replicas no acknowledged id is lost, without it
#    the loss stays within the replication-lag window (figures printed);
#  * replay_redis_restart: Redis killed and restarted under load: resumes fail closed with the
#    uniform error, readiness says unreachable, service recovers within one reconnect back-off.
# Installs redis-server, redis-tools (redis-cli) and redis-sentinel if missing; never skips:
# a missing binary or a test that cannot run fails the suite.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"

ensure_redis
ensure_cmd redis-sentinel redis-sentinel
redis-server --version
redis-sentinel --version

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
log "cargo test -p mrtr-std --features redis-fleet-tests (cluster, sentinel, restart)"
cargo test -p mrtr-std --features redis-fleet-tests --locked \
    --test replay_redis_cluster --test replay_redis_sentinel --test replay_redis_restart \
    -- --nocapture 2>&1 | tee "$out" || die "the Redis fleet tests failed"
# The measured figures (one line per run): four runs, or something did not run.
log "figures"
figures="$(grep -E '^(cluster resharding|sentinel failover|redis restart)' "$out" || true)"
printf '%s\n' "$figures"
[ "$(grep -c . <<<"$figures")" = 4 ] || die "expected 4 lines of figures from the fleet tests"
echo "redis fleet: cluster, sentinel failover and restart tests passed"
