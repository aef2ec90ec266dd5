#!/usr/bin/env bash
# Which io driver serves the verdict service for less: epoll and io_uring
# alternated in each round, in one run and with the same wrk settings:
#   two       two workers and wrk (-t1) sharing CPUs 0-1 unpinned, as a
#             verdict service deployed on 2 cores runs: POST /validate
#             with the valid 516-byte tools/call (req/s, and the server's
#             CPU per request)
#   allowed   one worker on CPU 0 serving /validate with
#   refused   tests/catalog/tools.json, wrk on CPU 1: refusal-load.sh's
#             valid and refused `search_orders` calls
# A fresh server for each driver and shape. The summary gives each
# figure's median over the rounds for each driver, and io_uring's against
# epoll's.
#
# Usage: benches/driver-load.sh [seconds per target (10)] [connections (32)] [rounds (3)]
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${3:-3}
set -- "${1:-10}" "${2:-32}"
source benches/load-common.sh "$@"
search_orders_requests

# serve NAME CPUS DRIVER ARGS...: a fresh server; prints "PID ADDRESS".
serve() {
    local name=$1 cpus=$2 driver=$3
    shift 3
    start "$cpus" "$name" "$MCPGATE_BIN" serve --listen 127.0.0.1:0 --io-driver "$driver" "$@"
}

results=$(
    for round in $(seq "$ROUNDS"); do
        for driver in epoll uring; do
            read -r pid addr < <(serve "two-$driver" 0-1 "$driver" --workers 2)
            pids+=("$pid")
            load_row two "$pid" 0-1 1 "$addr" /validate | sed "s/^/$round $driver /"
            kill "$pid"
            wait "$pid" 2>/dev/null || true
            read -r pid addr < <(serve "one-$driver" 0 "$driver" --workers 1 --catalog tests/catalog/tools.json)
            pids+=("$pid")
            for req in allowed refused; do
                load_row "$req" "$pid" 1 1 "$addr" /validate "$req" | sed "s/^/$round $driver /"
            done
            kill "$pid"
            wait "$pid" 2>/dev/null || true
        done
    done
)
python3 - "$DURATION" "$CONNECTIONS" <<PY
import statistics, sys
duration, connections = sys.argv[1:]
rows = {}
print(f"wrk -t1 -c{connections} -d{duration}s; two: 2 workers and wrk on CPUs 0-1, unpinned; "
      "allowed, refused: 1 worker on CPU 0, wrk on CPU 1")
print(f"{'round':<7}{'driver':<8}{'target':<9}{'req/s':>9}{'p50 us':>9}{'p99 us':>9}{'non-2xx':>9}{'cpu us/req':>12}")
for line in """$results""".strip().splitlines():
    round_, driver, name, rps, p50, p99, errors, cpu, _gen = line.split()
    print(f"{round_:<7}{driver:<8}{name:<9}{rps:>9}{p50:>9}{p99:>9}{errors:>9}{cpu:>12}")
    rows.setdefault((driver, name), []).append((float(rps), float(cpu)))
median = statistics.median
for name in ("two", "allowed", "refused"):
    e, u = rows[("epoll", name)], rows[("uring", name)]
    rps = [median(x[0] for x in v) for v in (e, u)]
    cpu = [median(x[1] for x in v) for v in (e, u)]
    print(f"{name}: epoll {rps[0]:.0f} req/s, {cpu[0]:.2f} us/req; io_uring {rps[1]:.0f} req/s, "
          f"{cpu[1]:.2f} us/req; io_uring/epoll req/s {rps[1] / rps[0]:.2f}x, cpu per request {cpu[1] / cpu[0]:.2f}x")
for driver in ("epoll", "uring"):
    a = [x[1] for x in rows[(driver, "allowed")]]
    r = [x[1] for x in rows[(driver, "refused")]]
    print(f"refused/allowed on {driver}: median {median(x / y for x, y in zip(r, a)):.2f}x, "
          f"cheapest rounds {min(r) / min(a):.2f}x")
PY
