# Shared by load.sh and gateway-load.sh (sourced from the repository
# root): the settings from the command line, wrk (installed when missing),
# release builds of mcpgate and of benches/hyper-baseline, a work folder
# removed on exit (with the processes in `pids`), the valid 516-byte
# 2026-07-28 tools/call as a wrk script (post.lua) and as a body
# (body.json), and a process's CPU ticks.
DURATION=${1:-10}
CONNECTIONS=${2:-32}
DRIVER=${3:-epoll}
HZ=$(getconf CLK_TCK)

if ! command -v wrk >/dev/null; then
    echo "installing wrk" >&2
    (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi

cargo build --release --quiet
cargo build --release --quiet --manifest-path benches/hyper-baseline/Cargo.toml
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
head = ('{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        '"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":'
        '{"sampling":{},"elicitation":{"form":{}}},"progressToken":"p-1"},"name":"get_weather","arguments":{"location":"New York",'
        '"units":"metric","days":3,"include":["hourly","alerts"],"rows":[],"note":"')
tail = '"}}}'
body = head + "n" * (516 - len(head) - len(tail)) + tail
assert len(body) == 516
lua = f'''wrk.method = "POST"
wrk.body = {json.dumps(body)}
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "get_weather"
'''
open(f"{work}/post.lua", "w").write(lua)
open(f"{work}/body.json", "w").write(body)
PY

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
