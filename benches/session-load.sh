#!/usr/bin/env bash
# What a sealed session costs a forwarded request: the gateway's CPU per
# request of the same 2025-11-25 tools/call (516 bytes, BODY_BYTES=N for
# another size) POSTed through `mcpgate serve --upstream` with a static
# bearer token (identity on), in one run and with the same wrk settings:
#   plain     without a session: the gateway finds no Mcp-Session-Id, and
#             the answer names none
#   session   in a session: the gateway unseals the client's id (its tag
#             checked for the caller), forwards the upstream's own id, and
#             seals the id the answer names again
# The upstream is benches/hyper-baseline in its tools-call mode: a fixed
# result, naming the request's session when it has one. The sealed id is
# taken from the gateway itself: a second gateway given the same
# session_key in front of an upstream that names a session on every
# answer hands it out (instances sharing a key read each other's ids).
#
# Beside them, what a session costs without a seal: a second gateway with
# no authentication (ids pass untouched), in the same run:
#   open      that gateway, without a session
#   raw       that gateway, in a session (the upstream's own id both ways)
#
# The gateways (one worker each) and the upstream share CPU 0, wrk runs one
# thread on CPU 1; each gateway's own CPU time per request is compared.
# Rounds (default 3) repeat plain, session, open, raw back to back. Target:
# session / plain <= 1.05 in CPU per request; raw / open is the part of it
# that the session's longer heads cost without any seal.
#
# Usage: benches/session-load.sh [seconds per target (10)] [connections (32)] [io driver (epoll)] [rounds (3)]
set -euo pipefail
cd "$(dirname "$0")/.."

source benches/load-common.sh "$@"
ROUNDS=${4:-3}
if [ "$LOADGEN" = light ]; then
    # lightload takes only 204s; these answers are 200s.
    echo "session-load.sh: wrk only (LOADGEN=light is not supported)" >&2
    exit 2
fi

token=bench-token-2c4e9f1a7b3d4f8e9a6c1d2e3f4a5b6c
key=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
upstream_session=bench-session-8f14e45fceea467f
path=/mcp

# The 2025-11-25 call and its files (as `request` writes them, with the
# 2025 lane's header and the token; `session.*` also with the session id).
session_request() {
    python3 - "$work" "$PIPELINE" "${BODY_BYTES:-516}" "$@" <<'PY'
import json, sys
work, pipeline, size, name, *extra = sys.argv[1:]
pipeline, size = int(pipeline), int(size)
head = ('{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"get_weather","arguments":'
        '{"location":"New York","units":"metric","days":3,"include":["hourly","alerts"],"rows":[],"note":"')
tail = '"}}}'
body = head + "n" * max(0, size - len(head) - len(tail)) + tail
headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
           ("MCP-Protocol-Version", "2025-11-25")] + [tuple(h.split(": ", 1)) for h in extra]
lua = f'wrk.method = "POST"\nwrk.body = {json.dumps(body)}\n'
lua += "".join(f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}\n" for k, v in headers)
if pipeline > 1:
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

# curl_call ADDRESS REQUEST: POSTs REQUEST.json with REQUEST.headers;
# prints the status and the answer's Mcp-Session-Id (or -).
curl_call() {
    local args=(-s -D - -o /dev/null -X POST --data-binary "@$work/$2.json")
    while IFS= read -r h; do args+=(-H "$h"); done < "$work/$2.headers"
    curl "${args[@]}" "http://$1$path" | python3 -c '
import sys
lines = sys.stdin.read().split("\r\n")
status = lines[0].split()[1]
session = next((l.split(":", 1)[1].strip() for l in lines if l.lower().startswith("mcp-session-id:")), "-")
print(status, session)'
}

gateway_args=(serve --listen 127.0.0.1:0 --workers 1 --io-driver "$DRIVER" --bearer-tokens "$token"
    --session-key "$key" --learn-catalog false --unknown-tools forward)

# The sealed id, from a gateway sharing the key.
session_request plain "Authorization: Bearer $token"
read -r opener_pid opener_addr < <(start 0 opener "$HYPER_BIN" 127.0.0.1:0 tools-call "$upstream_session")
pids+=("$opener_pid")
read -r handout_pid handout_addr < <(MCPGATE_LOG=warn start 0 handout "$MCPGATE_BIN" "${gateway_args[@]}" \
    --upstream "http://$opener_addr$path")
pids+=("$handout_pid")
read -r status sealed < <(curl_call "$handout_addr" plain)
if [ "$status" != 200 ] || [ "${sealed%%.*}" != "$upstream_session" ]; then
    echo "session-load.sh: no sealed session handed out ($status, $sealed)" >&2
    exit 1
fi
kill "$handout_pid" "$opener_pid"
session_request session "Authorization: Bearer $token" "Mcp-Session-Id: $sealed"

read -r upstream_pid upstream_addr < <(start 0 upstream "$HYPER_BIN" 127.0.0.1:0 tools-call)
pids+=("$upstream_pid")
read -r gate_pid gate_addr < <(MCPGATE_LOG=warn start 0 gateway "$MCPGATE_BIN" "${gateway_args[@]}" \
    --upstream "http://$upstream_addr$path")
pids+=("$gate_pid")
session_request open
session_request raw "Mcp-Session-Id: $upstream_session"
open_args=(serve --listen 127.0.0.1:0 --workers 1 --io-driver "$DRIVER" --learn-catalog false
    --unknown-tools forward)
read -r open_pid open_addr < <(MCPGATE_LOG=warn start 0 open "$MCPGATE_BIN" "${open_args[@]}" \
    --upstream "http://$upstream_addr$path")
pids+=("$open_pid")

# Each side answers as it must: plain names no session, session its own
# sealed id again (a refused session would measure the refusal).
for check in "$gate_addr plain 200 -" "$gate_addr session 200 $sealed" \
    "$open_addr open 200 -" "$open_addr raw 200 $upstream_session"; do
    read -r addr req want_status want_session <<<"$check"
    read -r status session < <(curl_call "$addr" "$req")
    if [ "$status" != "$want_status" ] || [ "$session" != "$want_session" ]; then
        echo "session-load.sh: $req answered $status naming $session" >&2
        exit 1
    fi
done

# Warm-up, not measured: the gateway's pool fills to wrk's connections.
taskset -c 1 "$WRK" -t1 -c"$CONNECTIONS" -d1s -s "$work/plain.lua" "http://$gate_addr$path" >/dev/null
taskset -c 1 "$WRK" -t1 -c"$CONNECTIONS" -d1s -s "$work/open.lua" "http://$open_addr$path" >/dev/null

results=$(
    for round in $(seq "$ROUNDS"); do
        load_row plain "$gate_pid" 1 1 "$gate_addr" "$path" plain | sed "s/^/$round /"
        load_row session "$gate_pid" 1 1 "$gate_addr" "$path" session | sed "s/^/$round /"
        load_row open "$open_pid" 1 1 "$open_addr" "$path" open | sed "s/^/$round /"
        load_row raw "$open_pid" 1 1 "$open_addr" "$path" raw | sed "s/^/$round /"
    done
)
ratios "$results" "gateways of 1 worker ($DRIVER) on CPU 0 beside the upstream: plain and session with a static bearer token, open and raw without authentication" \
    session/plain raw/open session/raw
