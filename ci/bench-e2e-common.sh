# shellcheck shell=bash
# Shared by the end-to-end benchmarks (ci/bench-e2e.sh, ci/bench-e2e-instr.sh,
# ci/bench-e2e-cpu.sh), sourced after ci/lib.sh with CARGO_TARGET_DIR set: builds the servers,
# sets REL to their directory, stops every server in PIDS on exit, and names the series the
# report reads (LABEL; ci/bench-e2e-instr.sh adds its long-token codec server and the -lto
# servers).

# The load comes from one caller at full speed: the hosted server's per-caller quotas (100
# resumes and pauses a second by default) would measure the quota, not the server. The
# mrtr-alone server has none, so the comparison stays like for like.
export MRTR_QUOTA_RESUMES=off MRTR_QUOTA_PAUSES=off

log "building the hosted server, the mrtr-alone server and the rmcp-codec server (release)"
# build_servers [VAR=VALUE...]: builds the three servers (release) with that environment added.
build_servers() {
    env "$@" cargo build -q --release --locked -p mrtr-hosted-server --bin mrtr-hosted-server
    env "$@" cargo build -q --release --locked -p mrtr-benches --bin e2e-rmcp-codec --bin e2e-mrtr-rmcp
}
build_servers
REL="$CARGO_TARGET_DIR/release"

PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

declare -A LABEL=(
    [mrtr]="hosted server, mrtr default (aws-lc AES-256-GCM-SIV, fast nonce source, replay cache)"
    [mrtr-bare]="same tool on rmcp, mrtr alone (mrtr-rmcp, the hosted default engine, no auth, owner or metrics layers)"
    [mrtr-gcm-os]="hosted server, mrtr AES-256-GCM, OS nonce source, replay cache"
    [rmcp-codec]="same tool on rmcp, RequestStateCodec (HMAC-SHA256, no single use)"
)

# pin_servers LOAD: on 2 or more cores, servers run on core 0 (SERVER_CPU) and LOAD, what
# drives them, on core 1 (LOAD_CPU); PINNING says which.
pin_servers() {
    if [ "$(nproc)" -ge 2 ]; then
        SERVER_CPU=(taskset -c 0); LOAD_CPU=(taskset -c 1); PINNING="server on core 0, $1 on core 1"
    else
        SERVER_CPU=(); LOAD_CPU=(); PINNING="one core: not pinned"
    fi
}
