# Shared by load.sh, scaling.sh and gateway-load.sh (sourced from the
# repository root): the settings from the command line, wrk and the release
# builds (build.sh), a work folder removed on exit (with the processes in
# `pids`), the valid 516-byte 2026-07-28 tools/call as a wrk script
# (post.lua) and as a body (post.json), a valid call of e2e/upstream.mjs's
# `add` (add.lua, add.json), a process's CPU ticks, a pinned server's
# start, and the one-line summary of a wrk run.
#
# Environment:
#   PIPELINE=N       wrk sends N requests back to back on each connection
#                    before reading the answers (default 1: no pipelining)
#   LOADGEN=light    load.sh, scaling.sh: benches/lightload instead of wrk, each
#                    connection LIGHT_DEPTH requests deep (default 256),
#                    its sockets looked at every LIGHT_INTERVAL_MS (default
#                    2): a load generator that costs a fraction of the
#                    server per request, for machines without cores to
#                    spare (no latency figures)
#   MCPGATE_BIN, HYPER_BIN, WRK, LIGHTLOAD_BIN
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
LIGHTLOAD_BIN=${LIGHTLOAD_BIN:-benches/lightload/target/release/lightload}
WRK=${WRK:-wrk}

if [ "${MCPGATE_BENCH_PREBUILT:-0}" != 1 ]; then
    source benches/build.sh
fi
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

python3 - "$work" "$PIPELINE" <<'PY'
import json, sys
work, pipeline = sys.argv[1], int(sys.argv[2])
head = ('{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        '"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":'
        '{"sampling":{},"elicitation":{"form":{}}},"progressToken":"p-1"},"name":"get_weather","arguments":{"location":"New York",'
        '"units":"metric","days":3,"include":["hourly","alerts"],"rows":[],"note":"')
tail = '"}}}'
body = head + "n" * (516 - len(head) - len(tail)) + tail
assert len(body) == 516
def script(name, body, tool):
    """NAME.lua: wrk POSTs BODY, a tools/call of TOOL; NAME.json: the body."""
    lua = f'''wrk.method = "POST"
wrk.body = {json.dumps(body)}
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "{tool}"
'''
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
script("post", body, "get_weather")
# A call of e2e/upstream.mjs's `add` (gateway-load.sh's node upstream).
script("add", head.split('"name":"get_weather"')[0] + '"name":"add","arguments":{"a":1,"b":2}}}', "add")
PY

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

# timed_light NAME CPUS ADDRESS PATH BODY TOOL: benches/lightload pinned
# to CPUS, POSTing BODY (a file in $work) as a tools/call of TOOL to PATH
# on $CONNECTIONS connections for $DURATION seconds; its line goes to
# $work/NAME.light.
timed_light() {
    local name=$1 cpus=$2 address=$3 path=$4 body=$5 tool=$6
    taskset -c "$cpus" "$LIGHTLOAD_BIN" "$address" "$path" "$work/$body" \
        --connections "$CONNECTIONS" --depth "$LIGHT_DEPTH" --interval-ms "$LIGHT_INTERVAL_MS" \
        --seconds "$DURATION" --warmup 0 \
        --header 'Content-Type: application/json' \
        --header 'Accept: application/json, text/event-stream' \
        --header 'MCP-Protocol-Version: 2026-07-28' \
        --header 'Mcp-Method: tools/call' --header "Mcp-Name: $tool" > "$work/$name.light"
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

# load_row NAME PID CPUS THREADS ADDRESS PATH: one run of the load
# generator ($LOADGEN; wrk with THREADS threads) pinned to CPUS, POSTing
# post.json to PATH at ADDRESS, served by process PID; prints wrk_row's
# (or light_row's) line with the server's and the load generator's CPU
# time per request.
load_row() {
    local name=$1 pid=$2 cpus=$3 threads=$4 address=$5 path=$6
    local before after wrk_ticks
    before=$(cpu_ticks "$pid")
    if [ "$LOADGEN" = light ]; then
        timed_light "$name" "$cpus" "$address" "$path" post.json get_weather
        after=$(cpu_ticks "$pid")
        light_row "$name" "$((after - before))"
    else
        wrk_ticks=$(timed_wrk "$name" "$cpus" -t"$threads" -c"$CONNECTIONS" -d"${DURATION}s" --latency \
            -s "$work/post.lua" "http://$address$path")
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
