#!/usr/bin/env bash
# What a refusal costs the server against what an allowed call costs: the
# server CPU per request, in one run and with the same wrk settings for
# each target, of:
#   allowed   POST /validate, a valid tools/call of `search_orders` from
#             tests/catalog/tools.json (10 properties, formats, a pattern,
#             an x-mcp-header), served with that catalog: 204
#   refused   the same call with two wrong values (a string for the
#             integer `pageSize`, a status outside the enum): the
#             tool-dialect answer, 200 with `isError: true`
#   hyper     a minimal tokio + hyper server answering 204
#             (benches/hyper-baseline)
#   floor     a bare loop on the same io driver answering 204 to each
#             request head it reads (benches/hyper-baseline's
#             floor-baseline): what a server that does nothing else reads
#             in this setup, which floor/hyper sets beside the
#             allowed/hyper target
# Servers run one worker pinned to CPU 0, wrk one thread on CPU 1; rounds
# (default 3) repeat the targets back to back, and the summary gives each
# round's ratios and their medians, then the server's CPU split into user
# space and kernel. Goals (benches/README.md):
# refused / allowed <= 1.3 and allowed / hyper <= 0.85 in CPU per request.
#
# Usage: benches/refusal-load.sh [seconds per target (10)] [connections (32)] [io driver (epoll)] [rounds (3)]
set -euo pipefail
cd "$(dirname "$0")/.."

source benches/load-common.sh "$@"
if [ "$LOADGEN" = light ]; then
    echo "refusal-load.sh: lightload takes only 204 answers; the refusal is a 200 (use wrk)" >&2
    exit 2
fi

search_orders_requests

read -r gate_pid gate_addr < <(start 0 mcpgate "$MCPGATE_BIN" serve --listen 127.0.0.1:0 --workers 1 --io-driver "$DRIVER" \
    --catalog tests/catalog/tools.json)
pids+=("$gate_pid")
read -r hyper_pid hyper_addr < <(start 0 hyper "$HYPER_BIN" 127.0.0.1:0)
pids+=("$hyper_pid")
read -r floor_pid floor_addr < <(start 0 floor "$FLOOR_BIN" 127.0.0.1:0 "$DRIVER")
pids+=("$floor_pid")

# Each request must be answered as its target says.
for target in "allowed 204 -" "refused 200 isError"; do
    read -r req want marker <<<"$target"
    args=(-s -o "$work/$req.answer" -w '%{http_code}' -X POST --data-binary "@$work/$req.json")
    while IFS= read -r h; do args+=(-H "$h"); done < "$work/$req.headers"
    status=$(curl "${args[@]}" "http://$gate_addr/validate")
    if [ "$status" != "$want" ] || { [ "$marker" != - ] && ! grep -q "$marker" "$work/$req.answer"; }; then
        echo "refusal-load.sh: $req answered $status, not $want: $(head -c 300 "$work/$req.answer")" >&2
        exit 1
    fi
done
echo "the refusal: $(wc -c < "$work/refused.answer") bytes of answer body" >&2

# split_row ROUND NAME PID ARGS...: load_row's line for NAME, and the
# server's user-space CPU over the run added to $work/user as "ROUND NAME
# TICKS REQUESTS": the rest of its CPU is the kernel's.
split_row() {
    local round=$1 name=$2 pid=$3 before after requests
    shift 3
    before=$(awk '{print $14}' "/proc/$pid/stat")
    load_row "$name" "$pid" "$@" | sed "s/^/$round /"
    after=$(awk '{print $14}' "/proc/$pid/stat")
    requests=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$work/$name.wrk")
    echo "$round $name $((after - before)) $requests" >> "$work/user"
}

ROUNDS=${4:-3}
results=$(
    for round in $(seq "$ROUNDS"); do
        split_row "$round" allowed "$gate_pid" 1 1 "$gate_addr" /validate allowed
        split_row "$round" refused "$gate_pid" 1 1 "$gate_addr" /validate refused
        split_row "$round" hyper "$hyper_pid" 1 1 "$hyper_addr" /
        split_row "$round" floor "$floor_pid" 1 1 "$floor_addr" /
    done
)
ratios "$results" "servers 1 worker ($DRIVER) on CPU 0" refused/allowed allowed/hyper floor/hyper allowed/floor

# Where the refusal's extra CPU goes: user space (the gate, the answer)
# or the kernel (a larger answer to send, and wrk, less busy, woken more
# often). Ticks are 1/HZ s, so a round's figures are coarse (about 1%).
python3 - "$work/user" "$HZ" <<PY
import statistics, sys
user = {}
for line in open(sys.argv[1]):
    round_, name, ticks, requests = line.split()
    user.setdefault(round_, {})[name] = int(ticks) / int(sys.argv[2]) * 1e6 / int(requests)
cpu = {}
for row in """$results""".strip().splitlines():
    round_, name, *_, us, _gen = row.split()
    cpu.setdefault(round_, {})[name] = float(us)
extra_user = [user[r]["refused"] - user[r]["allowed"] for r in user]
extra_kernel = [(cpu[r]["refused"] - user[r]["refused"]) - (cpu[r]["allowed"] - user[r]["allowed"]) for r in user]
ratio = [user[r]["refused"] / user[r]["allowed"] for r in user]
print("server user-space us/req, allowed / refused: " + " / ".join(
    f"{user[r]['allowed']:.2f} {user[r]['refused']:.2f}" for r in user))
print(f"refused - allowed, medians: user space +{statistics.median(extra_user):.2f} us, "
      f"kernel +{statistics.median(extra_kernel):.2f} us; refused/allowed in user space "
      f"{statistics.median(ratio):.2f}x")
print("server user-space us/req, hyper / floor: " + " / ".join(
    f"{user[r]['hyper']:.2f} {user[r]['floor']:.2f}" for r in user))
PY
