#!/usr/bin/env python3
"""Soak: a fixed count of valid and invalid requests of known kinds over many
keep-alive connections, every answer checked, then /metrics compared with
what was sent. Python 3.11 standard library only.

    benches/soak.py --binary target/release/mcpgate      # starts its own server
    benches/soak.py --address 127.0.0.1:8080             # a server already running

Exits 0 when every answer was the expected one and every counter in
/metrics moved by exactly what was sent; 1 otherwise (each mismatch is
printed). A server it starts gets a bearer token (so `unauthorized` is
reachable), a small body limit and tests/catalog/tools.json (so the value
gate's kinds are sent too); against a running server, give
--with-catalog when it serves that catalog, and
--token and --body-limit as that server has them (no token: the
`unauthorized` kind is left out). The counters are compared as deltas, so
the server must see no other traffic meanwhile.
"""

import argparse
import json
import random
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
CLIENT = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
]


@dataclass
class Kind:
    """One kind of request: how to build it and what must come back."""

    name: str
    weight: int
    status: int
    # JSON-RPC error code of the answer (None: no body is expected).
    code: int | None
    # The series of /metrics that count it (each by one).
    series: tuple
    # Builds the raw request for sequence number n; returns (bytes, id).
    build: object = field(repr=False)
    # The server closes the connection after this answer.
    closes: bool = False


def body_of(message):
    return json.dumps(message, separators=(",", ":")).encode()


def request(path, headers, body, method="POST"):
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{n}: {v}" for n, v in headers]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode()
    return head + (body or b"")


def with_params(message, **members):
    message["params"].update(members)
    return message


def tools_call(n, name="echo"):
    return {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {"_meta": META, "name": name, "arguments": {"n": n}},
    }


def modern_headers(method, name=None):
    headers = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)]
    if name is not None:
        headers.append(("Mcp-Name", name))
    return headers


def allowed(lane, kind):
    return f'mcpgate_allowed_total{{lane="{lane}",kind="{kind}"}}'


def rejected(rejecter, reason, status):
    return f'mcpgate_rejections_total{{rejecter="{rejecter}",reason="{reason}",status="{status}"}}'


def kinds(token, body_limit, catalog):
    auth = [("Authorization", f"Bearer {token}")] if token else []
    client = CLIENT + auth

    def validate(headers, body):
        return request("/validate", client + headers, body)

    def call(n):
        message = tools_call(n)
        return validate(modern_headers("tools/call", "echo"), body_of(message)), n

    def gate(reason, status, code, build, weight=2, echoes=True, rejecter=None):
        stage = rejecter or {
            "malformed_json": "parse", "batch": "parse", "duplicate_key": "parse",
            "too_deep": "parse", "unidentified_request": "classify", "unknown": "classify",
            "unsupported_protocol_version": "lane", "protocol_field": "lane",
            "header_mismatch": "binding", "method_not_found": "dispatch",
            "method_not_found_legacy": "dispatch", "invalid_params": "schema",
            "invalid_request": "schema", "param_header_mismatch": "binding",
            "unknown_tool": "value", "invalid_arguments": "value",
        }[reason]

        def built(n):
            raw = build(n)
            return raw, (n if echoes else None)

        # `status` is the row's (the metric's label); a request's refusal
        # goes with 200 unless the revision ties it to 400 (its code, or
        # missing `_meta` fields): REFERENCE.md, "HTTP status of a refusal".
        bound = code in (-32020, -32021, -32022) or reason == "protocol_field"
        answered = 200 if echoes and status == 400 and not bound else status
        return Kind(reason, weight, answered, code, (rejected(stage, reason, status),), built)

    def wire(reason, status, build, closes=False):
        return Kind(
            reason, 1, status, -32600, (rejected("wire", reason, status),),
            lambda n: (build(n), None), closes,
        )

    out = [
        Kind("modern_request", 20, 204, None, (allowed("modern", "request"),), call),
        Kind(
            "modern_notification", 5, 204, None, (allowed("modern", "notification"),),
            lambda n: (validate(
                [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "notifications/cancelled")],
                body_of({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": n, "reason": "soak"}}),
            ), None),
        ),
        Kind(
            "legacy_request", 10, 204, None, (allowed("legacy", "request"),),
            lambda n: (validate([("MCP-Protocol-Version", LEGACY)],
                                body_of({"jsonrpc": "2.0", "id": n, "method": "ping"})), n),
        ),
        Kind(
            "legacy_notification", 5, 204, None, (allowed("legacy", "notification"),),
            lambda n: (validate([("MCP-Protocol-Version", LEGACY)],
                                body_of({"jsonrpc": "2.0", "method": "notifications/initialized"})), None),
        ),
        # Allowed on the MCP endpoint (counted so), but there is no upstream.
        Kind(
            "no_upstream", 2, 502, -32603,
            (allowed("modern", "request"), rejected("forward", "no_upstream", 502)),
            lambda n: (request("/mcp", client + modern_headers("tools/call", "echo"),
                               body_of(tools_call(n))), n),
        ),
        wire("method_not_allowed", 405,
             lambda n: request("/validate", client, None, method="GET")),
        wire("unknown_path", 404, lambda n: request("/nope", client, b"{}")),
        wire("origin_not_allowed", 403,
             lambda n: request("/validate", client + [("Origin", "http://evil.example")]
                               + modern_headers("tools/call", "echo"), body_of(tools_call(n)))),
        wire("unsupported_media_type", 415,
             lambda n: request("/validate", [("Content-Type", "text/plain"), ("Accept", "*/*")]
                               + auth, body_of(tools_call(n)))),
        wire("unsupported_content_encoding", 415,
             lambda n: request("/validate", client + [("Content-Encoding", "br")]
                               + modern_headers("tools/call", "echo"), body_of(tools_call(n)))),
        wire("not_acceptable", 406,
             lambda n: request("/validate", [("Content-Type", "application/json"),
                                             ("Accept", "application/json")] + auth,
                               body_of(tools_call(n)))),
        wire("head_too_large", 431,
             lambda n: request("/validate", client + [(f"X-F{i}", "f") for i in range(100)],
                               b"{}"), closes=True),
        wire("bad_http", 400,
             lambda n: b"POST /validate HTTP/1.1\r\nHost: t\r\nContent-Length: x\r\n\r\n",
             closes=True),
        wire("repeated_header", 400,
             lambda n: validate(modern_headers("tools/call", "echo") + [("Mcp-Name", "other")],
                                body_of(tools_call(n))), closes=True),
        wire("missing_host", 400,
             lambda n: validate(modern_headers("tools/call", "echo"), body_of(tools_call(n)))
             .replace(b"Host: 127.0.0.1\r\n", b"", 1), closes=True),
        wire("nominated_header", 400,
             lambda n: validate(modern_headers("tools/call", "echo") + [("Connection", "Mcp-Name")],
                                body_of(tools_call(n))), closes=True),
        wire("underscored_header", 400,
             lambda n: validate(modern_headers("tools/call", "echo") + [("Mcp_Method", "tools/list")],
                                body_of(tools_call(n))), closes=True),
        # The body is all there: skipped, and the connection kept.
        wire("body_not_allowed", 400,
             lambda n: request("/healthz", [], b"{}", method="GET")),
        # The whole oversized body is sent: the server answers once it has
        # the head and drains the rest before closing.
        wire("body_too_large", 413,
             lambda n: validate(modern_headers("tools/call", "echo"),
                                b" " * (body_limit + 1)), closes=True),
        gate("aliased_member", 400, -32602,
             lambda n: validate(modern_headers("tools/call", "echo"),
                                body_of(with_params(tools_call(n), Arguments={}))),
             rejecter="schema"),
        gate("malformed_json", 400, -32700,
             lambda n: validate([("MCP-Protocol-Version", LEGACY)], b'{"jsonrpc":"2.0","id":'),
             echoes=False),
        gate("batch", 400, -32600,
             lambda n: validate([("MCP-Protocol-Version", LEGACY)],
                                body_of([{"jsonrpc": "2.0", "id": n, "method": "ping"}])),
             echoes=False),
        gate("duplicate_key", 400, -32600,
             lambda n: validate([("MCP-Protocol-Version", LEGACY)],
                                b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}'),
             echoes=False),
        gate("too_deep", 400, -32600,
             lambda n: validate([("MCP-Protocol-Version", LEGACY)],
                                b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":'
                                + b"[" * 100 + b"]" * 100 + b"}}"),
             echoes=False),
        gate("unidentified_request", 400, -32600,
             lambda n: validate([("MCP-Protocol-Version", LEGACY)],
                                b'{"jsonrpc":"2.0","id":null,"method":"ping"}'),
             echoes=False),
        gate("unknown", 400, -32600,
             lambda n: validate([("MCP-Protocol-Version", LEGACY)], b'{"jsonrpc":"2.0","id":4}'),
             echoes=False),
        gate("unsupported_protocol_version", 400, -32022,
             lambda n: validate([("MCP-Protocol-Version", "1999-01-01")],
                                body_of({"jsonrpc": "2.0", "id": n, "method": "ping"}))),
        gate("protocol_field", 400, -32602,
             lambda n: validate(modern_headers("tools/list"),
                                body_of({"jsonrpc": "2.0", "id": n, "method": "tools/list",
                                         "params": {"_meta": {
                                             "io.modelcontextprotocol/protocolVersion": MODERN}}}))),
        gate("header_mismatch", 400, -32020,
             lambda n: validate(modern_headers("tools/call", "other"), body_of(tools_call(n)))),
        gate("method_not_found", 404, -32601,
             lambda n: validate(modern_headers("initialize"),
                                body_of({"jsonrpc": "2.0", "id": n, "method": "initialize",
                                         "params": {"_meta": META}}))),
        gate("method_not_found_legacy", 200, -32601,
             lambda n: validate([("MCP-Protocol-Version", LEGACY)],
                                body_of({"jsonrpc": "2.0", "id": n, "method": "no/such"}))),
        gate("invalid_params", 400, -32602,
             lambda n: validate(modern_headers("tools/call"),
                                body_of({**tools_call(n), "params": {"_meta": META, "name": 5}}))),
        gate("invalid_request", 400, -32600,
             lambda n: validate(modern_headers("tools/list"),
                                body_of({"jsonrpc": "1.0", "id": n, "method": "tools/list",
                                         "params": {"_meta": META}}))),
    ]
    if catalog:
        # The value gate, with the project's test catalog in service.
        def tool(n, name, arguments, headers=()):
            message = {**tools_call(n, name), "params": {"_meta": META, "name": name,
                                                          "arguments": arguments}}
            return validate(modern_headers("tools/call", name) + list(headers), body_of(message))

        out += [
            gate("invalid_arguments", 200, "tool",
                 lambda n: tool(n, "search_orders", {"marketplaceIds": ["A"], "region": "XX"})),
            gate("unknown_tool", 400, -32602, lambda n: tool(n, "serch_orders", {})),
            gate("param_header_mismatch", 400, -32020,
                 lambda n: tool(n, "get_account", {"accountId": 42},
                                [("Mcp-Param-Account-Id", "43")])),
        ]
    if token:
        out.append(wire("unauthorized", 401,
                        lambda n: request("/validate", CLIENT + modern_headers("tools/call", "echo"),
                                          body_of(tools_call(n)))))
        out.append(wire("token_in_query", 400,
                        lambda n: request(f"/validate?access_token={token}",
                                          client + modern_headers("tools/call", "echo"),
                                          body_of(tools_call(n)))))
    return out


class Connection:
    def __init__(self, address, timeout):
        self.address = address
        self.timeout = timeout
        self.sock = None
        self.buf = b""

    def open(self):
        if self.sock is None:
            self.sock = socket.create_connection(self.address, timeout=self.timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.buf = b""

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _more(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed by the server")
        self.buf += data

    def exchange(self, raw):
        """Sends one request and reads one answer: (status, headers, body)."""
        self.open()
        try:
            self.sock.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            # The server answered early (an oversized body) and closed its
            # side: its answer may still be there to read.
            pass
        while b"\r\n\r\n" not in self.buf:
            self._more()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self.buf) < length:
            self._more()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, headers, body


def check(kind, expected_id, status, headers, body):
    """Why the answer is not the expected one (None when it is)."""
    if status != kind.status:
        return f"status {status}, expected {kind.status}: {body[:200]!r}"
    if kind.code is None:
        return f"a body on a {status}: {body[:200]!r}" if body else None
    try:
        answer = json.loads(body)
    except ValueError:
        return f"not JSON: {body[:200]!r}"
    if kind.code == "tool":
        # The tool dialect: a result with isError and the error envelope.
        result = answer.get("result") or {}
        if result.get("isError") is not True or "structuredContent" not in result:
            return f"not a tool-dialect answer: {answer}"
        if answer.get("id") != expected_id:
            return f"id {answer.get('id')!r}, expected {expected_id!r}"
        return None
    if answer.get("jsonrpc") != "2.0" or "error" not in answer:
        return f"not a JSON-RPC error: {answer}"
    if answer["error"].get("code") != kind.code:
        return f"code {answer['error'].get('code')}, expected {kind.code}"
    if answer.get("id") != expected_id:
        return f"id {answer.get('id')!r}, expected {expected_id!r}"
    if kind.closes and headers.get("connection") != "close":
        return "the connection was expected to close"
    return None


def metrics(address, timeout):
    conn = Connection(address, timeout)
    status, _, body = conn.exchange(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    conn.close()
    if status != 200:
        raise SystemExit(f"/metrics answered {status}")
    values = {}
    for line in body.decode().splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            values[series] = float(value)
    return values


def start_server(binary, token, body_limit, workers, catalog):
    child = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--workers", str(workers),
         "--bearer-tokens", token, "--body-limit", str(body_limit), "--catalog", catalog],
        stdout=subprocess.PIPE, env={"MCPGATE_LOG": "warn"},
    )
    line = child.stdout.readline().decode().strip()
    match = re.fullmatch(r"listening on (.+):(\d+)", line)
    if not match:
        child.kill()
        raise SystemExit(f"unexpected first line from the server: {line!r}")
    return child, (match.group(1), int(match.group(2)))


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--binary", help="start this mcpgate binary on 127.0.0.1:0")
    where.add_argument("--address", help="host:port of a server already running")
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2, help="for a server it starts")
    parser.add_argument("--token", help="the server's bearer token (--address)")
    parser.add_argument("--body-limit", type=int, default=65536)
    parser.add_argument("--max-seconds", type=float, default=600,
                        help="give up (and fail) after this long")
    parser.add_argument("--timeout", type=float, default=10, help="per socket operation")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--catalog", default=str(Path(__file__).resolve().parent.parent
                                                 / "tests" / "catalog" / "tools.json"),
                        help="tool catalog of a server it starts (its value-gate kinds join in)")
    parser.add_argument("--with-catalog", action="store_true",
                        help="the server at --address serves tests/catalog/tools.json")
    args = parser.parse_args()

    child = None
    token = args.token
    if args.binary:
        token = "soak-token"
        child, address = start_server(args.binary, token, args.body_limit, args.workers,
                                      args.catalog)
        args.with_catalog = True
    else:
        host, port = args.address.rsplit(":", 1)
        address = (host, int(port))
    try:
        return run(args, address, token, child)
    finally:
        if child is not None:
            child.terminate()
            child.wait(timeout=20)


def run(args, address, token, child):
    table = kinds(token, args.body_limit, args.with_catalog)
    rng = random.Random(args.seed)
    plan = rng.choices(table, weights=[k.weight for k in table], k=args.requests)
    sent = {k.name: 0 for k in table}
    for kind in plan:
        sent[kind.name] += 1

    before = metrics(address, args.timeout)
    deadline = time.monotonic() + args.max_seconds
    lock = threading.Lock()
    next_index = [0]
    failures = []
    answered = [0]

    def worker():
        conn = Connection(address, args.timeout)
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= len(plan) or time.monotonic() > deadline:
                break
            kind = plan[i]
            raw, expected_id = kind.build(i)
            try:
                status, headers, body = conn.exchange(raw)
            except (OSError, ValueError, IndexError) as e:
                with lock:
                    failures.append(f"#{i} {kind.name}: {type(e).__name__}: {e}")
                conn.close()
                continue
            problem = check(kind, expected_id, status, headers, body)
            with lock:
                answered[0] += 1
                if problem:
                    failures.append(f"#{i} {kind.name}: {problem}")
            if headers.get("connection") == "close":
                conn.close()
        conn.close()

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    after = metrics(address, args.timeout)

    # Every counter the kinds touch must have moved by what was sent.
    expected = {}
    for kind in table:
        for series in kind.series:
            expected[series] = expected.get(series, 0) + sent[kind.name]
    # Every request the gate judged: all but the wire stage's refusals.
    judged = sum(sent[k.name] for k in table if not any('"wire"' in s for s in k.series))
    expected["mcpgate_requests_total"] = judged
    mismatches = []
    for series in sorted(set(expected) | {s for s in after if s.startswith(
            ("mcpgate_allowed_total", "mcpgate_rejections_total"))}):
        delta = after.get(series, 0) - before.get(series, 0)
        if delta != expected.get(series, 0):
            mismatches.append(f"{series}: moved by {delta:g}, sent {expected.get(series, 0)}")

    print(f"soak: {answered[0]} of {len(plan)} answered in {elapsed:.1f} s "
          f"({answered[0] / elapsed:.0f} requests/s) over {args.threads} connections")
    for kind in table:
        print(f"  {kind.name:30} {sent[kind.name]:6}  -> {kind.status}")
    if child is not None:
        print(f"  server peak RSS (VmHWM): {peak_rss_kib(child.pid)} KiB")
    for problem in failures[:20]:
        print(f"UNEXPECTED {problem}")
    if len(failures) > 20:
        print(f"... and {len(failures) - 20} more unexpected answers")
    for problem in mismatches:
        print(f"METRICS {problem}")
    if answered[0] != len(plan):
        print(f"only {answered[0]} of {len(plan)} requests were answered")
    ok = not failures and not mismatches and answered[0] == len(plan)
    print("soak: ok" if ok else "soak: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
