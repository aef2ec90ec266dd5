#!/usr/bin/env python3
"""Bystander latency while attackers repeat the value gate's costliest body.

    benches/bystander.py --binary target/release/mcpgate

Starts the verdict service (`POST /validate`: an allowed call is answered 204)
on 127.0.0.1 with the project's test catalog and two workers. Each of
--attackers clients repeats a `get_account` call at the body limit whose
`fields` hold two million integers where strings belong (refused in the
tool dialect); meanwhile --bystanders clients, each on its own keep-alive
connection opened before the attack (so that some share a worker with
it), send a valid `echo` call in turn, --calls in all. Prints the
attackers' time per body and the bystanders' latency (median, p99, max) in
milliseconds. Every loop is bounded by count and by --max-seconds; every
answer is checked. Python 3.11 standard library only.
"""

import argparse
import json
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def call(tool, arguments, extra=()):
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"_meta": META, "name": tool, "arguments": arguments}}
    return json.dumps(message, separators=(",", ":")).encode(), [
        ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool), *extra]


def request(body, headers):
    lines = ["POST /validate HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", f"Content-Length: {len(body)}"]
    lines += [f"{n}: {v}" for n, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def wrong_items_request(body_limit):
    body, headers = call("get_account", {"accountId": 1, "fields": []},
                         [("Mcp-Param-Account-Id", "1")])
    head, tail = body.split(b"[]", 1)
    count = (body_limit - 64 - len(body)) // 2
    return request(head + b"[" + b",".join([b"1"] * count) + b"]" + tail, headers)


class Connection:
    def __init__(self, address, timeout):
        self.sock = socket.create_connection(address, timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def exchange(self, raw):
        """Sends one request; returns (status, body) of its answer."""
        self.sock.sendall(raw)
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        length = int(re.search(rb"(?i)\r\ncontent-length: *(\d+)", head).group(1)) \
            if re.search(rb"(?i)\r\ncontent-length:", head) else 0
        while len(self.buf) < length:
            self.fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, body

    def fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("closed by the server")
        self.buf += chunk


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=str(ROOT / "target/release/mcpgate"))
    parser.add_argument("--attackers", type=int, default=1)
    parser.add_argument("--bystanders", type=int, default=4)
    parser.add_argument("--calls", type=int, default=2000, help="bystander calls in all")
    parser.add_argument("--max-seconds", type=float, default=120)
    args = parser.parse_args()

    body_limit = 4 * 1024 * 1024
    child = subprocess.Popen(
        [args.binary, "serve", "--listen", "127.0.0.1:0", "--workers", "2",
         "--body-limit", str(body_limit), "--catalog", str(ROOT / "tests/catalog/tools.json")],
        stdout=subprocess.PIPE, env={"MCPGATE_LOG": "error"})
    try:
        line = child.stdout.readline().decode().strip()
        match = re.fullmatch(r"listening on (.+):(\d+)", line)
        if not match:
            raise SystemExit(f"unexpected first line from the server: {line!r}")
        address = (match.group(1), int(match.group(2)))
        return run(args, address, body_limit)
    finally:
        child.kill()
        child.wait()


def run(args, address, body_limit):
    deadline = time.monotonic() + args.max_seconds
    stop = threading.Event()
    failures = []
    attack = wrong_items_request(body_limit)
    attack_ms = []

    def attacker():
        conn = Connection(address, 30)
        while not stop.is_set() and time.monotonic() < deadline:
            start = time.perf_counter()
            status, body = conn.exchange(attack)
            attack_ms.append((time.perf_counter() - start) * 1000)
            answer = json.loads(body)
            if status != 200 or answer["result"]["structuredContent"]["total"] < 1_000_000:
                failures.append(f"attacker: {status} {body[:200]!r}")
                return

    good_body, good_headers = call("echo", {"text": "hi"})
    good = request(good_body, good_headers)
    latencies = []
    per_bystander = args.calls // args.bystanders

    # Connected before the attack, so that some share a worker with it.
    connections = [Connection(address, 30) for _ in range(args.bystanders)]

    def bystander(conn):
        for _ in range(per_bystander):
            if time.monotonic() > deadline:
                failures.append("bystander: out of time")
                return
            start = time.perf_counter()
            status, body = conn.exchange(good)
            latencies.append((time.perf_counter() - start) * 1000)
            if status != 204:
                failures.append(f"bystander: {status} {body[:200]!r}")
                return
            time.sleep(0.002)

    attackers = [threading.Thread(target=attacker) for _ in range(args.attackers)]
    for thread in attackers:
        thread.start()
    time.sleep(1)  # the attack is under way
    bystanders = [threading.Thread(target=bystander, args=(conn,)) for conn in connections]
    for thread in bystanders:
        thread.start()
    for thread in bystanders:
        thread.join()
    stop.set()
    for thread in attackers:
        thread.join()
    for failure in failures:
        print(failure, file=sys.stderr)
    if not latencies or not attack_ms:
        print("nothing measured", file=sys.stderr)
        return 1
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"attackers {args.attackers}: {len(attack_ms)} bodies of {len(attack) >> 20} MiB, "
          f"median {statistics.median(attack_ms):.1f} ms per body")
    print(f"bystanders {args.bystanders}: {len(latencies)} calls, median "
          f"{statistics.median(latencies):.2f} ms, p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms; "
          f"over 50 ms: {sum(t > 50 for t in latencies)}, over 100 ms: "
          f"{sum(t > 100 for t in latencies)}, over 150 ms: {sum(t > 150 for t in latencies)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
