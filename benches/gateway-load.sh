#!/usr/bin/env bash
# Load benchmark of `mcpgate serve --upstream`, in one run and with the same
# wrk settings for each target, the same valid 516-byte 2026-07-28
# tools/call POSTed to:
#   direct   the fast upstream itself (benches/hyper-baseline in its
#            tools-call mode: reads the body, answers a fixed JSON result)
#   gateway  mcpgate serve --upstream pointing at that upstream: every
#            request is checked, forwarded over a kept-alive connection and
#            its answer relayed
# The upstream and the gateway (one worker) share CPU 0, wrk runs one
# thread on CPU 1: "gateway" therefore includes the upstream's own work,
# and the difference is what the gateway adds on one core. The CPU time
# each server process spent per request is printed beside (on loopback a
# sender also pays for much of the receiver's TCP work, so a proxy, which
# sends twice per request, pays for it twice).
#
# Usage: benches/gateway-load.sh [seconds per target (10)] [connections (32)] [io driver (epoll)]
set -euo pipefail
cd "$(dirname "$0")/.."

source benches/load-common.sh "$@"

# run NAME URL: one wrk run; prints "name req/s p50_us p99_us non2xx
# upstream_cpu_us_per_req gateway_cpu_us_per_req"
run() {
    local name=$1 url=$2 out u0 g0 u1 g1
    u0=$(cpu_ticks "$upstream_pid"); g0=$(cpu_ticks "$gate_pid")
    out=$(taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$work/post.lua" "$url")
    u1=$(cpu_ticks "$upstream_pid"); g1=$(cpu_ticks "$gate_pid")
    wrk_row "$name" "$out" "$((u1 - u0))" "$((g1 - g0))"
}

read -r upstream_pid upstream_addr < <(start 0 upstream benches/hyper-baseline/target/release/hyper-baseline 127.0.0.1:0 tools-call)
pids+=("$upstream_pid")
read -r gate_pid gate_addr < <(MCPGATE_LOG=warn start 0 mcpgate target/release/mcpgate serve --listen 127.0.0.1:0 --workers 1 \
    --io-driver "$DRIVER" --upstream "http://$upstream_addr/mcp")
pids+=("$gate_pid")

# The gateway's answer must be the upstream's, byte for byte.
curl_body() { curl -s -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_weather' \
    --data-binary @"$work/body.json" "$1"; }
if command -v curl >/dev/null && [ "$(curl_body "http://$upstream_addr/mcp")" != "$(curl_body "http://$gate_addr/mcp")" ]; then
    echo "the gateway's answer differs from the upstream's" >&2
    exit 1
fi

results=$(
    run direct "http://$upstream_addr/mcp"
    run gateway "http://$gate_addr/mcp"
)
python3 - "$DURATION" "$CONNECTIONS" "$DRIVER" <<PY
import sys
rows = [line.split() for line in """$results""".strip().splitlines()]
print(f"wrk -t1 -c{sys.argv[2]} -d{sys.argv[1]}s on CPU 1; upstream and gateway (1 worker, {sys.argv[3]}) on CPU 0")
print(f"{'target':<10}{'req/s':>10}{'p50 us':>10}{'p99 us':>10}{'non-2xx':>9}{'upstream cpu us/req':>21}{'gateway cpu us/req':>20}")
by = {}
for name, rps, p50, p99, errors, up_cpu, gw_cpu in rows:
    by[name] = (float(rps), float(p50), float(p99))
    print(f"{name:<10}{rps:>10}{p50:>10}{p99:>10}{errors:>9}{up_cpu:>21}{gw_cpu:>20}")
d, g = by["direct"], by["gateway"]
print(f"gateway/direct: {g[0]/d[0]:.2f}x req/s; added p50 {g[1]-d[1]:.1f} us, added p99 {g[2]-d[2]:.1f} us")
PY
