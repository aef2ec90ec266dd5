#!/usr/bin/env bash
# Load benchmark of `mcpgate serve`, in one run and with the same wrk
# settings for each target:
#   validate  POST /validate with a valid 516-byte 2026-07-28 tools/call
#   noop      POST /_noop on the same server (--bench-noop-route): 204 without parsing
#   hyper     a minimal tokio + hyper server answering 204 (benches/hyper-baseline)
# Servers run one worker pinned to CPU 0, wrk one thread pinned to CPU 1
# (on a 2-core machine a load generator saturates near 100-130k req/s, so
# the server's and wrk's CPU time per request are printed beside req/s and
# latency, with how busy each kept its CPU: where both are near 100%, the
# rate is the pair's and not the server's alone, and in a VM the process
# with room to spare also spends more per request, sleeping and waking).
#
# Rounds (default 3) repeat validate, noop, hyper back to back, so each
# ratio compares targets measured minutes apart at most; the summary gives
# every round's ratios and their medians (the VM's run-to-run noise is
# about ±10%, larger than the differences measured).
#
# LOADGEN=light measures with benches/lightload in place of wrk (see
# load-common.sh): it costs a fraction of the server per request, so the
# server's CPU is the bottleneck and the rate is the server's own.
#
# Usage: benches/load.sh [seconds per target (10)] [connections (32)] [io driver (epoll)] [rounds (3)]
set -euo pipefail
cd "$(dirname "$0")/.."

source benches/load-common.sh "$@"

# --bench-noop-route: /_noop is a 404 unless asked for.
read -r gate_pid gate_addr < <(start 0 mcpgate "$MCPGATE_BIN" serve --listen 127.0.0.1:0 --workers 1 --io-driver "$DRIVER" --bench-noop-route)
pids+=("$gate_pid")
read -r hyper_pid hyper_addr < <(start 0 hyper "$HYPER_BIN" 127.0.0.1:0)
pids+=("$hyper_pid")

ROUNDS=${4:-3}
results=$(
    for round in $(seq "$ROUNDS"); do
        load_row validate "$gate_pid" 1 1 "$gate_addr" /validate | sed "s/^/$round /"
        load_row noop "$gate_pid" 1 1 "$gate_addr" /_noop | sed "s/^/$round /"
        load_row hyper "$hyper_pid" 1 1 "$hyper_addr" / | sed "s/^/$round /"
    done
)
ratios "$results" "servers 1 worker ($DRIVER) on CPU 0" validate/noop validate/hyper noop/hyper
