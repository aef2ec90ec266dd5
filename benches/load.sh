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
python3 - "$DURATION" "$CONNECTIONS" "$DRIVER" "$PIPELINE" "$LOADGEN" "$LIGHT_DEPTH" "$LIGHT_INTERVAL_MS" <<PY
import statistics, sys
rows = [line.split() for line in """$results""".strip().splitlines()]
gen = "lightload" if sys.argv[5] == "light" else "wrk"
how = (f"depth {sys.argv[6]}, every {sys.argv[7]} ms" if gen == "lightload"
       else f"-t1, pipeline {sys.argv[4]}")
print(f"{gen} -c{sys.argv[2]} -d{sys.argv[1]}s ({how}), server 1 worker ({sys.argv[3]}) on CPU 0, {gen} on CPU 1")
print(f"{'round':<7}{'target':<10}{'req/s':>10}{'p50 us':>10}{'p99 us':>10}{'cpu us/req':>12}{'non-2xx':>9}"
      f"{gen + ' us/req':>18}{'busy: server':>14}{gen:>10}")
rounds = {}
for round_, name, rps, p50, p99, errors, cpu, wrk_cpu in rows:
    rounds.setdefault(round_, {})[name] = (float(rps), float(cpu))
    busy = [f"{float(rps) * float(us) / 1e4:.0f}%" for us in (cpu, wrk_cpu)]
    print(f"{round_:<7}{name:<10}{rps:>10}{p50:>10}{p99:>10}{cpu:>12}{errors:>9}{wrk_cpu:>18}{busy[0]:>14}{busy[1]:>10}")
ratios = {"validate/noop": ("validate", "noop"), "validate/hyper": ("validate", "hyper"), "noop/hyper": ("noop", "hyper")}
for label, (a, b) in ratios.items():
    rps = [r[a][0] / r[b][0] for r in rounds.values()]
    cpu = [r[a][1] / r[b][1] for r in rounds.values()]
    each = " / ".join(f"{x:.2f}" for x in rps)
    print(f"{label}: {each} req/s (median {statistics.median(rps):.2f}x), "
          f"cpu per request median {statistics.median(cpu):.2f}x")
PY
