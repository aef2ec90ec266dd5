#!/usr/bin/env bash
# Instructions the server spends per request on refusal-load.sh's allowed
# and refused calls (`search_orders` from tests/catalog/tools.json, the
# refusal answered in the tool dialect), counted under callgrind: the
# user-space side of "Refusals over HTTP" without the VM's noise, so that
# a change of a few hundred instructions can be told apart.
#
# Each call is served by `mcpgate serve` (one worker, epoll) under
# callgrind twice, answering COUNT and then 2 × COUNT requests over one
# keep-alive connection; the difference over
# COUNT is what one request costs (start-up and shutdown cancel out). The
# requests are pipelined (written while the answers are read), so the
# server always has the next one at hand: one at a time, whether it was
# there when the server read again was up to the scheduler, and a count
# moved by several hundred between runs; pipelined, rounds agree within a
# few dozen. Reads and writes are shared by several requests, so a request
# costs fewer instructions than under wrk. Every answer is checked: 204
# for the allowed call, 200 with `isError: true` for the refused one.
#
#   benches/server-instructions.sh [count (1000)] [rounds (3)]
#
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-1000}
rounds=${2:-3}
command -v valgrind > /dev/null || { echo "needs valgrind" >&2; exit 1; }

cargo build --release --quiet
MCPGATE_BENCH_PREBUILT=1 source benches/load-common.sh
search_orders_requests

# serve NAME N STATUS: the callgrind total of a server that answered N
# requests NAME, each with STATUS, written to $work/NAME.N.total.
serve() {
    local name=$1 n=$2 status=$3 addr=""
    valgrind --tool=callgrind --callgrind-out-file="$work/$name.$n.cg" \
        "$MCPGATE_BIN" serve --listen 127.0.0.1:0 --workers 1 --io-driver epoll \
        --catalog tests/catalog/tools.json > "$work/$name.$n.out" 2> "$work/$name.$n.err" &
    server=$!
    # Run in the background (a subshell): the server is stopped when it
    # exits, on any failure too.
    trap 'kill "$server" 2>/dev/null || true' EXIT
    # Under valgrind the start takes seconds.
    for _ in $(seq 600); do
        addr=$(sed -n 's/^listening on //p' "$work/$name.$n.out" 2>/dev/null)
        [ -n "$addr" ] && break
        sleep 0.1
    done
    [ -n "$addr" ] || { echo "$name: the server did not start: $(tail -3 "$work/$name.$n.err")" >&2; exit 1; }
    python3 - "$addr" "$work/$name.json" "$work/$name.headers" "$n" "$status" <<'PY'
import json, socket, sys, threading
addr, body_file, headers_file, n, status = sys.argv[1:]
host, port = addr.rsplit(":", 1)
body = open(body_file, "rb").read()
head = "".join(f"{line}\r\n" for line in open(headers_file).read().splitlines())
request = (f"POST /validate HTTP/1.1\r\nHost: {addr}\r\n{head}"
           f"Content-Length: {len(body)}\r\n\r\n").encode() + body
connection = socket.create_connection((host, int(port)), timeout=60)
# Pipelined: the requests are written while the answers are read, so the
# server always has the next request at hand and each read takes several.
writer = threading.Thread(target=lambda: connection.sendall(request * int(n)))
writer.start()
pending = b""
for i in range(int(n)):
    while b"\r\n\r\n" not in pending:
        pending += connection.recv(1 << 20)
    answer_head, pending = pending.split(b"\r\n\r\n", 1)
    lines = answer_head.decode().split("\r\n")
    code = int(lines[0].split()[1])
    length = next((int(l.split(":", 1)[1]) for l in lines[1:] if l.lower().startswith("content-length:")), 0)
    while len(pending) < length:
        pending += connection.recv(1 << 20)
    text, pending = pending[:length], pending[length:]
    if code != int(status) or (code == 200 and json.loads(text)["result"]["isError"] is not True):
        sys.exit(f"request {i}: {code} {text[:300]!r}")
writer.join()
PY
    kill -INT "$server"
    wait "$server" || true
    sed -n 's/^summary: //p' "$work/$name.$n.cg" > "$work/$name.$n.total"
}

for round in $(seq "$rounds"); do
    for target in "allowed 204" "refused 200"; do
        read -r name status <<<"$target"
        serve "$name" "$count" "$status" &
        once=$!
        serve "$name" $((2 * count)) "$status" &
        twice=$!
        wait "$once"
        wait "$twice"
        for n in "$count" $((2 * count)); do
            mv "$work/$name.$n.total" "$work/$name.$n.total.$round"
        done
    done
done

python3 - "$work" "$count" "$rounds" <<'PY'
import statistics, sys
work, count, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def per_request(name, round):
    total = lambda n: int(open(f"{work}/{name}.{n}.total.{round}").read())
    return (total(2 * count) - total(count)) / count
runs = {name: [per_request(name, r) for r in range(1, rounds + 1)] for name in ("allowed", "refused")}
print("round  allowed  refused  refused/allowed")
for r in range(rounds):
    a, f = runs["allowed"][r], runs["refused"][r]
    print(f"{r + 1:<6} {a:>8,.0f} {f:>8,.0f}  {f / a:.2f}x")
allowed, refused = (statistics.median(runs[name]) for name in ("allowed", "refused"))
print()
print("| request | server instructions per request (median of the rounds) |")
print("|---|---|")
print(f"| allowed (204) | {allowed:,.0f} (rounds {min(runs['allowed']):,.0f}–{max(runs['allowed']):,.0f}) |")
print(f"| refused (the tool-dialect answer) | {refused:,.0f} (rounds {min(runs['refused']):,.0f}–{max(runs['refused']):,.0f}) |")
print()
print(f"refused / allowed: {refused / allowed:.2f}x (the refusal's extra: {refused - allowed:,.0f})")
PY
