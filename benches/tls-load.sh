#!/usr/bin/env bash
# What TLS on the listener costs a request: the server CPU per request of
# the valid 516-byte 2026-07-28 tools/call POSTed to /validate, in one run
# and with the same wrk settings for each target:
#   plain   the gateway in the clear
#   tls     the same gateway serving TLS (tls_cert, tls_key: an ECDSA
#           P-256 certificate made here with openssl), wrk on kept-alive
#           connections: each connection's handshake is paid once, so
#           this is what the records (AES-GCM, as wrk's OpenSSL and rustls
#           agree on) cost a request
#
# Each server runs one worker pinned to CPU 0, wrk one thread on CPU 1.
# Rounds (default 3) repeat plain, tls back to back; the summary gives
# each round's ratios of CPU per request and their medians.
#
# Usage: benches/tls-load.sh [seconds per target (10)] [connections (32)] [io driver (epoll)] [rounds (3)]
set -euo pipefail
cd "$(dirname "$0")/.."

source benches/load-common.sh "$@"

command -v openssl >/dev/null || { echo "tls-load.sh: needs openssl" >&2; exit 2; }
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$work/gateway.key" -out "$work/gateway.crt" 2>/dev/null

read -r plain_pid plain_addr < <(start 0 plain "$MCPGATE_BIN" serve --listen 127.0.0.1:0 --workers 1 --io-driver "$DRIVER")
pids+=("$plain_pid")
read -r tls_pid tls_addr < <(start 0 tls "$MCPGATE_BIN" serve --listen 127.0.0.1:0 --workers 1 --io-driver "$DRIVER" \
    --tls-cert "$work/gateway.crt" --tls-key "$work/gateway.key")
pids+=("$tls_pid")

# Each target must answer 204 (the TLS one with its certificate verified).
for target in "plain http://$plain_addr" "tls https://$tls_addr"; do
    read -r name url <<<"$target"
    args=(-s -o /dev/null -w '%{http_code}' --cacert "$work/gateway.crt" -X POST --data-binary "@$work/post.json")
    while IFS= read -r h; do args+=(-H "$h"); done < "$work/post.headers"
    status=$(curl "${args[@]}" "$url/validate")
    if [ "$status" != 204 ]; then
        echo "tls-load.sh: $name answered $status, not 204" >&2
        exit 1
    fi
done

# tls_row NAME PID URL: load_row's line for wrk against URL (http or https).
tls_row() {
    local name=$1 pid=$2 url=$3 before after wrk_ticks
    before=$(cpu_ticks "$pid")
    wrk_ticks=$(timed_wrk "$name" 1 -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$work/post.lua" "$url")
    after=$(cpu_ticks "$pid")
    wrk_row "$name" "$(cat "$work/$name.wrk")" "$((after - before))" "$wrk_ticks"
}

ROUNDS=${4:-3}
results=$(
    for round in $(seq "$ROUNDS"); do
        tls_row plain "$plain_pid" "http://$plain_addr/validate" | sed "s/^/$round /"
        tls_row tls "$tls_pid" "https://$tls_addr/validate" | sed "s/^/$round /"
    done
)
ratios "$results" "server 1 worker ($DRIVER) on CPU 0, ECDSA P-256 certificate" tls/plain
