#!/usr/bin/env bash
# Worker scaling of `mcpgate serve`: POST /validate with the valid 516-byte
# 2026-07-28 tools/call, one worker and then two, in one run and with the
# same wrk settings. The load generator is pinned apart from the workers as
# far as the machine allows:
#   4 or more cores: workers on CPUs 0-1 (one worker uses CPU 0 only), wrk
#                    on the CPUs after them (one thread each, at most 8),
#                    the same for both runs;
#   2 or 3 cores:    one worker on CPU 0 with wrk (1 thread) on CPU 1; two
#                    workers on CPUs 0-1 sharing them with wrk (2 threads).
# PIPELINE=N has wrk send N requests at a time on each connection (see
# load-common.sh): the load generator's CPU per request falls further than
# the server's, which is what a 2-core machine needs to show a second
# worker at all.
# LOADGEN=light measures with benches/lightload in place of wrk
# (deeply pipelined, its sockets looked at every few milliseconds; see
# load-common.sh): on 2 cores it leaves most of a CPU to the second
# worker, where wrk takes as much as the server.
# Prints req/s, p50/p99, the server's and wrk's CPU time per request, and
# two ratios: req/s (two workers over one), and requests per server
# CPU-second (1.00: a second worker costs nothing per request; what a
# machine with cores to spare would turn into req/s). Then each run's
# ceiling at those costs (`ceiling` in load-common.sh): sharing CPUs, the
# server and wrk add up. A run at 100% of it has every CPU busy, so a
# higher two-worker ratio on that machine needs a load generator that
# costs less per request.
#
# Usage: benches/scaling.sh [seconds per run (10)] [connections (64)] [io driver (epoll)]
set -euo pipefail
cd "$(dirname "$0")/.."

set -- "${1:-10}" "${2:-64}" "${3:-epoll}"
source benches/load-common.sh "$@"

cores=$(nproc)
if [ "$cores" -ge 4 ]; then
    wrk_last=$((cores - 1 < 9 ? cores - 1 : 9))
    one_server=0 one_wrk=2-$wrk_last one_threads=$((wrk_last - 1))
    two_server=0-1 two_wrk=$one_wrk two_threads=$one_threads
else
    one_server=0 one_wrk=1 one_threads=1
    two_server=0-1 two_wrk=0-1 two_threads=2
fi

# measure NAME WORKERS SERVER_CPUS WRK_CPUS WRK_THREADS: one wrk run on a
# fresh server; prints "name req/s p50 p99 non2xx server_cpu_us_per_req
# wrk_cpu_us_per_req ceiling_req/s"
measure() {
    local name=$1 workers=$2 server_cpus=$3 wrk_cpus=$4 threads=$5
    local pid addr row server_us wrk_us
    read -r pid addr < <(start "$server_cpus" "$name" "$MCPGATE_BIN" serve \
        --listen 127.0.0.1:0 --workers "$workers" --io-driver "$DRIVER")
    pids+=("$pid")
    row=$(load_row "$name" "$pid" "$wrk_cpus" "$threads" "$addr" /validate)
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    read -r _ _ _ _ _ server_us wrk_us <<< "$row"
    echo "$row $(ceiling "$server_cpus=$server_us" "$wrk_cpus=$wrk_us")"
}

results=$(
    measure one 1 "$one_server" "$one_wrk" "$one_threads"
    measure two 2 "$two_server" "$two_wrk" "$two_threads"
)
python3 - "$DURATION" "$CONNECTIONS" "$DRIVER" "$cores" \
    "$one_server/$one_wrk" "$two_server/$two_wrk" "$PIPELINE" "$LOADGEN" "$LIGHT_DEPTH" "$LIGHT_INTERVAL_MS" <<PY
import sys
duration, connections, driver, cores, one, two, pipeline, loadgen, depth, interval = sys.argv[1:]
rows = {line.split()[0]: line.split()[1:] for line in """$results""".strip().splitlines()}
gen = "lightload" if loadgen == "light" else "wrk"
how = f"depth {depth}, every {interval} ms" if gen == "lightload" else f"pipeline {pipeline}"
print(f"POST /validate, {gen} -c{connections} -d{duration}s ({how}), {driver}, {cores} cores")
print(f"  (server CPUs / {gen} CPUs: 1 worker {one}, 2 workers {two})")
print(f"{'workers':<9}{'req/s':>10}{'p50 us':>10}{'p99 us':>10}{'server us/req':>15}{gen + ' us/req':>18}{'non-2xx':>9}")
for name, label in (("one", "1"), ("two", "2")):
    rps, p50, p99, errors, cpu, wrk_cpu, _ = rows[name]
    print(f"{label:<9}{rps:>10}{p50:>10}{p99:>10}{cpu:>15}{wrk_cpu:>18}{errors:>9}")
r1, c1 = float(rows["one"][0]), float(rows["one"][4])
r2, c2 = float(rows["two"][0]), float(rows["two"][4])
print(f"2 workers / 1 worker: {r2 / r1:.2f}x req/s, {c1 / c2:.2f}x requests per server CPU-second")
c1max, c2max = float(rows["one"][6]), float(rows["two"][6])
print(f"ceiling at these costs: 1 worker {c1max:.0f} req/s (measured {100 * r1 / c1max:.0f}% of it), "
      f"2 workers {c2max:.0f} req/s ({100 * r2 / c2max:.0f}%); "
      f"2 workers' ceiling / 1 worker measured: {c2max / r1:.2f}x")
PY
