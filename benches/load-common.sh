# Shared by the load benches (sourced from the repository root): the
# settings from the command line, wrk and the release builds (build.sh), a
# work folder removed on exit (with the processes in `pids`), the requests
# a load generator sends (`request`: the valid 2026-07-28 tools/call of
# BODY_BYTES, 516 by default, as `post`, a valid call of
# e2e/upstream.mjs's `add` as `add`; `search_orders_requests`: a catalog
# tool's valid and refused calls), a process's CPU ticks, a pinned
# server's start, one load run, and the one-line summary of a run.
#
# Environment:
#   PIPELINE=N       wrk sends N requests back to back on each connection
#                    before reading the answers (default 1: no pipelining)
#   BODY_BYTES=N     the size of `post` (default 516): its `note` string
#                    grows to fill it, so that the gate's work grows less
#                    than the bytes every stage copies
#   LOADGEN=light    load.sh, scaling.sh, auth-load.sh: benches/lightload instead of wrk, each
#                    connection LIGHT_DEPTH requests deep (default 256),
#                    its sockets looked at every LIGHT_INTERVAL_MS (default
#                    2): a load generator that costs a fraction of the
#                    server per request, for machines without cores to
#                    spare (no latency figures)
#   MCPGATE_BIN, HYPER_BIN, FLOOR_BIN, WRK, LIGHTLOAD_BIN
#                    the commands to run (defaults: the release builds and
#                    wrk on PATH); with MCPGATE_BENCH_PREBUILT=1 nothing is
#                    built or installed (benches/device/run.sh sets these)
DURATION=${1:-10}
CONNECTIONS=${2:-32}
DRIVER=${3:-epoll}
PIPELINE=${PIPELINE:-1}
LOADGEN=${LOADGEN:-wrk}
LIGHT_DEPTH=${LIGHT_DEPTH:-256}
LIGHT_INTERVAL_MS=${LIGHT_INTERVAL_MS:-2}
HZ=$(getconf CLK_TCK)
MCPGATE_BIN=${MCPGATE_BIN:-target/release/mcpgate}
HYPER_BIN=${HYPER_BIN:-benches/hyper-baseline/target/release/hyper-baseline}
FLOOR_BIN=${FLOOR_BIN:-benches/hyper-baseline/target/release/floor-baseline}
LIGHTLOAD_BIN=${LIGHTLOAD_BIN:-benches/lightload/target/release/lightload}
WRK=${WRK:-wrk}

if [ "${MCPGATE_BENCH_PREBUILT:-0}" != 1 ]; then
    source benches/build.sh
fi
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

# request NAME TOOL BODY_FILE [HEADER...]: the files a load generator
# sends a tools/call of TOOL with: NAME.json (the body), NAME.lua (wrk
# POSTs it with the MCP headers and each HEADER, given as "Name: value")
# and NAME.headers (the same headers, one a line, for lightload).
request() {
    python3 - "$work" "$PIPELINE" "$@" <<'PY'
import json, sys
work, pipeline, name, tool, body_file, *extra = sys.argv[1:]
pipeline = int(pipeline)
body = open(body_file).read()
headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
           ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", tool)]
headers += [tuple(h.split(": ", 1)) for h in extra]
lua = f'wrk.method = "POST"\nwrk.body = {json.dumps(body)}\n'
lua += "".join(f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}\n" for k, v in headers)
if pipeline > 1:
    # wrk counts the requests in what request() returns and writes
    # again only once every one of them is answered.
    lua += f'''init = function(args)
    local batch = {{}}
    for i = 1, {pipeline} do batch[i] = wrk.format() end
    pipelined = table.concat(batch)
end
request = function() return pipelined end
'''
open(f"{work}/{name}.lua", "w").write(lua)
open(f"{work}/{name}.json", "w").write(body)
open(f"{work}/{name}.headers", "w").write("".join(f"{k}: {v}\n" for k, v in headers))
PY
}

python3 - "$work" "${BODY_BYTES:-516}" <<'PY'
import sys
work, size = sys.argv[1], int(sys.argv[2])
head = ('{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        '"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":'
        '{"sampling":{},"elicitation":{"form":{}}},"progressToken":"p-1"},"name":"get_weather","arguments":{"location":"New York",'
        '"units":"metric","days":3,"include":["hourly","alerts"],"rows":[],"note":"')
tail = '"}}}'
if size < len(head) + len(tail):
    sys.exit(f"BODY_BYTES must be at least {len(head) + len(tail)}")
body = head + "n" * (size - len(head) - len(tail)) + tail
assert len(body) == size
open(f"{work}/post.body", "w").write(body)
# A call of e2e/upstream.mjs's `add` (gateway-load.sh's node upstream).
open(f"{work}/add.body", "w").write(head.split('"name":"get_weather"')[0] + '"name":"add","arguments":{"a":1,"b":2}}}')
PY
request post get_weather "$work/post.body"
request add add "$work/add.body"

# search_orders_requests: the requests `allowed` and `refused` (see
# `request`): a valid tools/call of `search_orders` from
# tests/catalog/tools.json (10 properties, formats, a pattern, an
# x-mcp-header), and the same call with two wrong values (a string for the
# integer `pageSize`, a status outside the enum), for a server started
# with that catalog.
search_orders_requests() {
    python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "bench-client", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "elicitation": {"form": {}}},
        "progressToken": "p-1"}
arguments = {"marketplaceIds": ["ATVPDKIKX0DER", "A2EUQ1WTGCTBG2"], "region": "NA",
             "createdAfter": "2026-01-01T00:00:00Z", "createdBefore": "2026-02-01T00:00:00Z",
             "statuses": ["Pending", "Shipped"], "buyerEmail": "buyer@example.com",
             "filters": {"minTotal": 10.5, "currency": "USD", "fulfillment": "AFN"},
             "pageSize": 50, "nextToken": "abc", "includeItems": True}
def call(arguments):
    return json.dumps({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
                       "params": {"_meta": meta, "name": "search_orders", "arguments": arguments}},
                      separators=(",", ":"))
open(f"{work}/allowed.body", "w").write(call(arguments))
open(f"{work}/refused.body", "w").write(call(dict(arguments, pageSize="fifty", statuses=["Pending", "Open"])))
PY
    request allowed search_orders "$work/allowed.body" "Mcp-Param-Region: NA"
    request refused search_orders "$work/refused.body" "Mcp-Param-Region: NA"
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# timed_wrk NAME CPUS WRK_ARGS...: runs wrk pinned to CPUS, its output to
# $work/NAME.wrk; prints the CPU ticks wrk and its threads spent (bash's
# `time` reports them once wrk has exited, when /proc has nothing left).
timed_wrk() {
    local name=$1 cpus=$2
    shift 2
    { TIMEFORMAT='%3U %3S'; time taskset -c "$cpus" "$WRK" "$@" > "$work/$name.wrk"; } 2> "$work/$name.time"
    awk -v hz="$HZ" '{printf "%d\n", ($1 + $2) * hz}' "$work/$name.time"
}

# timed_light NAME CPUS ADDRESS PATH REQUEST: benches/lightload pinned
# to CPUS, POSTing REQUEST.json with REQUEST.headers (see `request`) to
# PATH on $CONNECTIONS connections for $DURATION seconds; its line goes to
# $work/NAME.light.
timed_light() {
    local name=$1 cpus=$2 address=$3 path=$4 req=$5 headers=()
    while IFS= read -r h; do headers+=(--header "$h"); done < "$work/$req.headers"
    taskset -c "$cpus" "$LIGHTLOAD_BIN" "$address" "$path" "$work/$req.json" \
        --connections "$CONNECTIONS" --depth "$LIGHT_DEPTH" --interval-ms "$LIGHT_INTERVAL_MS" \
        --seconds "$DURATION" --warmup 0 "${headers[@]}" > "$work/$name.light"
}

# light_row NAME TICKS: "NAME req/s - - 0 SERVER_US_PER_REQ LOADGEN_US_PER_REQ"
# from timed_light's line and the server's CPU ticks over the run (the
# same columns as wrk_row; lightload refuses any answer but a 204, and
# times no latency).
light_row() {
    python3 -c '
import sys
name, line, hz, ticks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
f = dict(kv.split("=") for kv in line.split()[1:])
rps, reqs, own = float(f["req/s"]), int(f["answers"]), float(f["cpu_us_per_req"])
print(f"{name} {rps:.0f} - - 0 {ticks / hz * 1e6 / reqs:.2f} {own:.2f}")
' "$1" "$(cat "$work/$1.light")" "$HZ" "$2"
}

# load_row NAME PID CPUS THREADS ADDRESS PATH [REQUEST]: one run of the
# load generator ($LOADGEN; wrk with THREADS threads) pinned to CPUS,
# sending REQUEST (see `request`; default post, the 516-byte call) to PATH
# at ADDRESS, served by process PID; prints wrk_row's (or light_row's)
# line with the server's and the load generator's CPU time per request.
load_row() {
    local name=$1 pid=$2 cpus=$3 threads=$4 address=$5 path=$6 req=${7:-post}
    local before after wrk_ticks
    before=$(cpu_ticks "$pid")
    if [ "$LOADGEN" = light ]; then
        timed_light "$name" "$cpus" "$address" "$path" "$req"
        after=$(cpu_ticks "$pid")
        light_row "$name" "$((after - before))"
    else
        wrk_ticks=$(timed_wrk "$name" "$cpus" -t"$threads" -c"$CONNECTIONS" -d"${DURATION}s" --latency \
            -s "$work/$req.lua" "http://$address$path")
        after=$(cpu_ticks "$pid")
        wrk_row "$name" "$(cat "$work/$name.wrk")" "$((after - before))" "$wrk_ticks"
    fi
}

# ceiling CPUS=US_PER_REQ...: the req/s at which the busiest CPUs of a run
# are full, given each process's CPUs (a taskset list) and its CPU time per
# request. Processes given the same CPUs add up; sets must be the same or
# apart. A run at its ceiling has every CPU of that set busy: only a
# cheaper process there, or more CPUs, would raise it.
ceiling() {
    python3 -c '
import sys
def count(cpus):
    return sum(int(b) - int(a) + 1 for a, _, b in
               (r.partition("-") if "-" in r else (r, "", r) for r in cpus.split(",")))
load = {}
for arg in sys.argv[1:]:
    cpus, us = arg.split("=")
    load[cpus] = load.get(cpus, 0.0) + float(us)
print(f"{min(count(c) * 1e6 / us for c, us in load.items() if us > 0):.0f}")
' "$@"
}

# start CPUS NAME CMD...: runs CMD pinned to CPUS, waits for "listening
# on"; prints "PID ADDRESS".
start() {
    local cpus=$1 name=$2; shift 2
    taskset -c "$cpus" "$@" > "$work/$name.out" 2>"$work/$name.err" &
    local pid=$!
    for _ in $(seq 100); do
        grep -q "listening on" "$work/$name.out" 2>/dev/null && break
        sleep 0.1
    done
    echo "$pid $(sed -n 's/listening on //p' "$work/$name.out")"
}

# wrk_row NAME WRK_OUTPUT TICKS...: prints "NAME req/s p50_us p99_us
# non2xx CPU_US_PER_REQ..." from wrk's --latency output and the CPU ticks
# each measured process spent during the run (socket errors to stderr).
wrk_row() {
    local name=$1 out=$2
    shift 2
    printf '%s' "$out" | python3 -c '
import re, sys
name, hz, ticks = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
out = sys.stdin.read()
def latency(p):
    m = re.search(r"^\s*%s%%\s+([\d.]+)(us|ms|s)" % p, out, re.M)
    v, unit = float(m.group(1)), m.group(2)
    return v * {"us": 1, "ms": 1e3, "s": 1e6}[unit]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
reqs = max(int(re.search(r"(\d+) requests in", out).group(1)), 1)
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
socket_errors = re.search(r"Socket errors: (.*)", out)
if socket_errors:
    print(f"{name}: socket errors: {socket_errors.group(1)}", file=sys.stderr)
cpu = " ".join(f"{int(t) / hz * 1e6 / reqs:.2f}" for t in ticks)
print(f"{name} {rps:.0f} {latency(50):.1f} {latency(99):.1f} {errors.group(1) if errors else 0} {cpu}")
' "$name" "$HZ" "$@"
}

# ratios RESULTS WHERE A/B...: the table of RESULTS (lines of "ROUND" and
# load_row's columns) under a line naming the load generator and WHERE the
# server ran, then for each pair of targets A/B its ratio in each round
# (req/s, and CPU time per request) and the medians, and the ratio of
# their cheapest rounds in CPU per request.
ratios() {
    local results=$1 where=$2
    shift 2
    python3 - "$DURATION" "$CONNECTIONS" "$PIPELINE" "$LOADGEN" "$LIGHT_DEPTH" "$LIGHT_INTERVAL_MS" "$where" "$@" <<PY
import statistics, sys
duration, connections, pipeline, loadgen, depth, interval, where, *pairs = sys.argv[1:]
rows = [line.split() for line in """$results""".strip().splitlines()]
gen = "lightload" if loadgen == "light" else "wrk"
how = f"depth {depth}, every {interval} ms" if gen == "lightload" else f"-t1, pipeline {pipeline}"
print(f"{gen} -c{connections} -d{duration}s ({how}) on CPU 1; {where}")
print(f"{'round':<7}{'target':<10}{'req/s':>10}{'p50 us':>10}{'p99 us':>10}{'cpu us/req':>12}{'non-2xx':>9}"
      f"{gen + ' us/req':>18}{'busy: server':>14}{gen:>10}")
rounds = {}
for round_, name, rps, p50, p99, errors, cpu, gen_cpu in rows:
    rounds.setdefault(round_, {})[name] = (float(rps), float(cpu))
    busy = [f"{float(rps) * float(us) / 1e4:.0f}%" for us in (cpu, gen_cpu)]
    print(f"{round_:<7}{name:<10}{rps:>10}{p50:>10}{p99:>10}{cpu:>12}{errors:>9}{gen_cpu:>18}{busy[0]:>14}{busy[1]:>10}")
for pair in pairs:
    a, b = pair.split("/")
    rps = [r[a][0] / r[b][0] for r in rounds.values()]
    cpu = [r[a][1] / r[b][1] for r in rounds.values()]
    # Each target's cheapest round, against the other's: this VM has
    # spells where every request costs the kernel 1-2 us more, which hit
    # single rounds and swing the per-round ratios; the cheapest round of
    # each is the one least touched by them.
    quiet = min(r[a][1] for r in rounds.values()) / min(r[b][1] for r in rounds.values())
    print(f"{pair}: req/s " + " / ".join(f"{x:.2f}" for x in rps) + f" (median {statistics.median(rps):.2f}x); "
          f"cpu per request " + " / ".join(f"{x:.2f}" for x in cpu) + f" (median {statistics.median(cpu):.2f}x; "
          f"cheapest rounds {quiet:.2f}x)")
PY
}
