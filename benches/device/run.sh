#!/usr/bin/env bash
# The load measurements that need more than 2 cores, in one bounded run on
# a machine with cores to spare (the two-worker scaling goal,
# the gateway's throughput against direct with each process on cores of
# its own), from the kit that benches/device/kit.sh packs: nothing is built
# or installed here. Each step's output goes to OUT (default
# target/device-out) as it finishes, so a run cut short keeps what it did.
#
# Per round (ROUNDS, default 2), every wrk run DURATION seconds (default 8):
#   scaling-{epoll,uring}        benches/scaling.sh DURATION 64 DRIVER
#   gateway-{epoll,uring}        benches/gateway-load.sh DURATION 32 DRIVER fast
#   gateway-epoll-4workers       the same, GATEWAY_WORKERS=4 (8 or more cores)
#   gateway-epoll-1conn          benches/gateway-load.sh DURATION 1 epoll fast
#   load-{epoll,uring}           benches/load.sh DURATION 32 DRIVER 1
#   refusal-uring                benches/refusal-load.sh DURATION 32 uring 1:
#                                the allowed call against hyper and against
#                                the floor, where the 2-core VM's kernel
#                                and wrk leave no room below 0.85x
# About 3.3 minutes a round at the defaults.
#
# Usage: benches/device/run.sh [DURATION (8)] [ROUNDS (2)]
set -uo pipefail
cd "$(dirname "$0")/../.."

DURATION=${1:-8}
ROUNDS=${2:-2}
kit=$PWD/target/device-kit
out=${OUT:-target/device-out}
mkdir -p "$out"
if [ ! -x "$kit/bin/mcpgate" ]; then
    echo "run.sh: $kit missing: run benches/device/kit.sh and carry target/device-kit" >&2
    exit 1
fi
export MCPGATE_BENCH_PREBUILT=1 MCPGATE_BIN=$kit/bin/mcpgate HYPER_BIN=$kit/bin/hyper-baseline \
    FLOOR_BIN=$kit/bin/floor-baseline WRK=$kit/bin/wrk

{
    echo "cores: $(nproc)"
    echo "kernel: $(uname -r)"
    grep -m1 'model name' /proc/cpuinfo || true
    for tool in taskset python3 curl getconf; do
        printf '%s: %s\n' "$tool" "$(command -v "$tool" || echo MISSING)"
    done
    "$MCPGATE_BIN" --version
} 2>&1 | tee "$out/machine.txt"
for tool in taskset python3 getconf; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool missing" >&2; exit 1; }
done

failed=0
# step NAME CMD...: runs CMD (at most 3 minutes), its output to OUT/NAME.txt
step() {
    local name=$1; shift
    echo "== $name: $*"
    timeout 180 "$@" > "$out/$name.txt" 2>&1
    local rc=$?
    tail -n 8 "$out/$name.txt"
    [ "$rc" -eq 0 ] || { echo "   (exit $rc)"; failed=1; }
}

for round in $(seq "$ROUNDS"); do
    for driver in epoll uring; do
        step "r$round-scaling-$driver" benches/scaling.sh "$DURATION" 64 "$driver"
        step "r$round-gateway-$driver" benches/gateway-load.sh "$DURATION" 32 "$driver" fast
    done
    if [ "$(nproc)" -ge 8 ]; then
        step "r$round-gateway-epoll-4workers" env GATEWAY_WORKERS=4 benches/gateway-load.sh "$DURATION" 32 epoll fast
    fi
    step "r$round-gateway-epoll-1conn" benches/gateway-load.sh "$DURATION" 1 epoll fast
    for driver in epoll uring; do
        step "r$round-load-$driver" benches/load.sh "$DURATION" 32 "$driver" 1
    done
    step "r$round-refusal-uring" benches/refusal-load.sh "$DURATION" 32 uring 1
done
exit "$failed"
