#!/usr/bin/env bash
# Load benchmark of `mcpgate serve --upstream`, in one run and with the same
# wrk settings for each target, the same valid 2026-07-28 tools/call POSTed
# to:
#   direct   the upstream itself
#   gateway  mcpgate serve --upstream pointing at that upstream: every
#            request is checked, forwarded over a kept-alive connection and
#            its answer relayed
# Upstreams (fourth argument):
#   fast     benches/hyper-baseline in its tools-call mode (reads the body,
#            answers a fixed JSON result; one thread), sent the 516-byte
#            get_weather call (BODY_BYTES=N: one of N bytes)
#   node     e2e/upstream.mjs (the official TypeScript SDK server; run
#            e2e/setup.sh node first), sent a call of its `add` tool, which the
#            gateway learns from the upstream's tools/list at start
# Where the processes run:
#   2 or 3 cores: the upstream and the gateway (one worker) share CPU 0,
#                 wrk runs one thread on CPU 1: "gateway" then includes the
#                 upstream's own work, and the difference is what the
#                 gateway adds on one core;
#   4 or more:    the upstream on CPU 0, the gateway's workers on the next
#                 CPUs (GATEWAY_WORKERS, default 1 below 8 cores, else 2),
#                 wrk on the CPUs after those (one thread each, at most 8):
#                 each process has cores of its own.
# The CPU time each process spent per request is printed beside (on
# loopback a sender also pays for much of the receiver's TCP work, so a
# proxy, which sends twice per request, pays for it twice), and how near
# each run came to the ceiling its CPUs allow at those costs (`ceiling` in
# load-common.sh).
#
# Usage: benches/gateway-load.sh [seconds per target (10)] [connections (32)] [io driver (epoll)] [upstream: fast|node (fast)]
set -euo pipefail
cd "$(dirname "$0")/.."

UPSTREAM=${4:-fast}
case "$UPSTREAM" in
    fast | node) ;;
    *) echo "gateway-load.sh: upstream must be fast or node, not '$UPSTREAM'" >&2; exit 2 ;;
esac
source benches/load-common.sh "$@"

cores=$(nproc)
if [ "$cores" -ge 4 ]; then
    gateway_workers=${GATEWAY_WORKERS:-$([ "$cores" -ge 8 ] && echo 2 || echo 1)}
    if [ "$gateway_workers" -lt 1 ] || [ "$gateway_workers" -gt $((cores - 2)) ]; then
        echo "gateway-load.sh: GATEWAY_WORKERS must be 1 to $((cores - 2)) on $cores cores" >&2
        exit 2
    fi
    upstream_cpus=0
    gateway_cpus=1-$gateway_workers
    wrk_first=$((gateway_workers + 1))
    wrk_last=$((cores - 1 < wrk_first + 7 ? cores - 1 : wrk_first + 7))
    wrk_cpus=$wrk_first-$wrk_last
    wrk_threads=$((wrk_last - wrk_first + 1))
else
    gateway_workers=1 upstream_cpus=0 gateway_cpus=0 wrk_cpus=1 wrk_threads=1
fi

# run NAME URL: one wrk run; prints "name req/s p50_us p99_us non2xx
# upstream_cpu_us_per_req gateway_cpu_us_per_req wrk_cpu_us_per_req
# ceiling_req/s"
run() {
    local name=$1 url=$2 u0 g0 u1 g1 wrk_ticks row up_us gw_us wrk_us
    u0=$(cpu_ticks "$upstream_pid"); g0=$(cpu_ticks "$gate_pid")
    wrk_ticks=$(timed_wrk "$name" "$wrk_cpus" -t"$wrk_threads" -c"$CONNECTIONS" -d"${DURATION}s" --latency \
        -s "$work/$call.lua" "$url")
    u1=$(cpu_ticks "$upstream_pid"); g1=$(cpu_ticks "$gate_pid")
    row=$(wrk_row "$name" "$(cat "$work/$name.wrk")" "$((u1 - u0))" "$((g1 - g0))" "$wrk_ticks")
    read -r _ _ _ _ _ up_us gw_us wrk_us <<< "$row"
    echo "$row $(ceiling "$upstream_cpus=$up_us" "$gateway_cpus=$gw_us" "$wrk_cpus=$wrk_us")"
}

path=/mcp
gate_extra=()
if [ "$UPSTREAM" = fast ]; then
    call=post tool=get_weather
    # It answers every request with one fixed result and lists no tools:
    # without a catalog to wait for, calls go on unchecked, as measured.
    gate_extra=(--unknown-tools forward)
    read -r upstream_pid upstream_addr < <(start "$upstream_cpus" upstream "$HYPER_BIN" 127.0.0.1:0 tools-call)
else
    call=add tool=add
    [ -d e2e/node_modules ] || { echo "gateway-load.sh: e2e/node_modules missing: run e2e/setup.sh node" >&2; exit 1; }
    read -r upstream_pid upstream_addr < <(start "$upstream_cpus" upstream node e2e/upstream.mjs --port 0)
fi
pids+=("$upstream_pid")
read -r gate_pid gate_addr < <(MCPGATE_LOG=warn start "$gateway_cpus" mcpgate "$MCPGATE_BIN" serve --listen 127.0.0.1:0 \
    --workers "$gateway_workers" --io-driver "$DRIVER" --upstream "http://$upstream_addr$path" "${gate_extra[@]}")
pids+=("$gate_pid")

# The gateway's answer must be the upstream's, byte for byte, and a success.
curl_body() { curl -s -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H "Mcp-Name: $tool" \
    --data-binary @"$work/$call.json" "$1"; }
if command -v curl >/dev/null; then
    direct_answer=$(curl_body "http://$upstream_addr$path")
    if [ "$direct_answer" != "$(curl_body "http://$gate_addr$path")" ]; then
        echo "the gateway's answer differs from the upstream's" >&2
        exit 1
    fi
    case "$direct_answer" in
        *'"result"'*) ;;
        *) echo "the upstream refused the benchmark's call: $direct_answer" >&2; exit 1 ;;
    esac
fi

# Warm-up, not measured: Node compiles its hot paths in the first seconds,
# and the gateway's pool fills to the connections wrk keeps open.
warmup=$([ "$UPSTREAM" = node ] && echo 5 || echo 1)
for url in "http://$upstream_addr$path" "http://$gate_addr$path"; do
    taskset -c "$wrk_cpus" "$WRK" -t"$wrk_threads" -c"$CONNECTIONS" -d"${warmup}s" -s "$work/$call.lua" "$url" >/dev/null
done

results=$(
    run direct "http://$upstream_addr$path"
    run gateway "http://$gate_addr$path"
)
python3 - "$DURATION" "$CONNECTIONS" "$DRIVER" "$UPSTREAM" "$PIPELINE" "$cores" \
    "$upstream_cpus" "$gateway_cpus" "$gateway_workers" "$wrk_cpus" "$wrk_threads" <<PY
import sys
duration, connections, driver, upstream, pipeline, cores, up_cpus, gw_cpus, gw_workers, wrk_cpus, threads = sys.argv[1:]
rows = [line.split() for line in """$results""".strip().splitlines()]
print(f"wrk -t{threads} -c{connections} -d{duration}s (pipeline {pipeline}) on CPUs {wrk_cpus}; {upstream} upstream on CPU {up_cpus}; "
      f"gateway ({gw_workers} worker(s), {driver}) on CPUs {gw_cpus}; {cores} cores")
print(f"{'target':<10}{'req/s':>10}{'p50 us':>10}{'p99 us':>10}{'non-2xx':>9}{'upstream cpu us/req':>21}"
      f"{'gateway cpu us/req':>20}{'wrk cpu us/req':>16}{'% of ceiling':>14}")
by = {}
for name, rps, p50, p99, errors, up_cpu, gw_cpu, wrk_cpu, ceiling in rows:
    by[name] = (float(rps), float(p50), float(p99), float(ceiling))
    print(f"{name:<10}{rps:>10}{p50:>10}{p99:>10}{errors:>9}{up_cpu:>21}{gw_cpu:>20}{wrk_cpu:>16}"
          f"{100 * float(rps) / float(ceiling):>13.0f}%")
d, g = by["direct"], by["gateway"]
print(f"gateway/direct: {g[0]/d[0]:.2f}x req/s (the gateway run's ceiling over direct: {g[3]/d[0]:.2f}x); "
      f"added p50 {g[1]-d[1]:.1f} us, added p99 {g[2]-d[2]:.1f} us")
PY
