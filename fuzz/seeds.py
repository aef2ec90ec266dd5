#!/usr/bin/env python3
"""Builds the fuzz seed corpora from the project's own test messages.

    fuzz/seeds.py [CORPUS_DIR]     (default: fuzz/corpus)

The messages are the conformance seeds (tests/conformance/seeds-*.ndjson),
each also with a few hostile variants. `parse`, `gate` and `roots` get the
bodies; `http` gets them wrapped in requests (Content-Length and chunked,
split at several sizes), prefixed with the two bytes the target reads
first (read size, limits variant); `answer` gets upstream answers (JSON
with a length, an SSE stream chunked, close-delimited, after a 100
Continue, 204), prefixed with the byte it reads first (read size); `tape`
gets each input schema of the test catalog (tests/catalog/tools.json), a
NUL byte, then an instance; `catalog` gets the test catalog's tools (all
of them, and each alone), a NUL byte, then arguments. Generated, never
committed.
"""

import hashlib
import pathlib
import sys

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent


def bodies():
    for path in sorted((ROOT / "tests" / "conformance").glob("seeds-*.ndjson")):
        for line in path.read_bytes().splitlines():
            line = line.strip()
            if line:
                yield line
    # Hostile shapes the seeds do not hold.
    yield b"[" * 200 + b"]" * 200
    yield b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}'
    yield b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}'
    yield b'{"jsonrpc":"2.0","id":' + b"9" * 300 + b',"method":"ping"}'
    yield b'{"jsonrpc":"2.0","id":1,"method":"ping\x00"}'
    yield b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]'
    yield b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def requests(body):
    headers = (
        b"Host: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\n"
        b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
    )
    yield (
        b"POST /mcp HTTP/1.1\r\n" + headers
        + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    for size in (1, 7, 64):
        chunks = b"".join(
            b"%x\r\n" % len(body[i:i + size]) + body[i:i + size] + b"\r\n"
            for i in range(0, len(body), size)
        )
        yield (
            b"POST /mcp HTTP/1.1\r\n" + headers
            + b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\nX-Trailer: 1\r\n\r\n"
        )
    yield b"GET /metrics HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"


def answers():
    result = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3}}}'
    event = b"event: message\r\ndata: " + result + b"\r\n\r\n"
    progress = b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}\n\n'
    json_head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\n"
    sse_head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    yield json_head + b"Content-Length: %d\r\n\r\n" % len(result) + result
    chunks = b"".join(b"%x\r\n" % len(part) + part + b"\r\n" for part in (progress, event[:7], event[7:]))
    yield sse_head + b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\nX-Trailer: 1\r\n\r\n"
    yield sse_head + b"Connection: close\r\n\r\n" + progress + event
    yield b"HTTP/1.1 100 Continue\r\n\r\n" + json_head + b"Content-Length: %d\r\n\r\n" % len(result) + result
    yield b"HTTP/1.1 204 No Content\r\nConnection: X-Hop, keep-alive\r\nX-Hop: 1\r\n\r\n"
    yield b"HTTP/1.0 202 Accepted\r\nContent-Length: 0\r\n\r\n"


INSTANCES = [b"{}", b"[]", b"1", b'"x"', b"null", b'{"a":[1,2.5,{"b":"c"}],"n":-0}']


def catalog_tools():
    import json
    return json.loads((ROOT / "tests" / "catalog" / "tools.json").read_text())["tools"]


def schema_pairs():
    import json
    for tool in catalog_tools():
        schema = json.dumps(tool.get("inputSchema", {})).encode()
        for instance in INSTANCES:
            yield schema + b"\0" + instance


def catalog_calls():
    import json
    tools = catalog_tools()
    for chosen in [tools] + [[tool] for tool in tools]:
        for arguments in INSTANCES:
            yield json.dumps(chosen).encode() + b"\0" + arguments


def write(directory, data):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def main():
    corpus = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else FUZZ / "corpus"
    count = 0
    for body in bodies():
        for target in ("parse", "gate", "roots"):
            write(corpus / target, body)
        for n, request in enumerate(requests(body)):
            # Read size and limits variant first, as the http target reads.
            write(corpus / "http", bytes([(n * 37 + 1) % 256, n % 3]) + request)
        count += 1
    for n, answer in enumerate(answers()):
        # The read size first, as the answer target reads.
        write(corpus / "answer", bytes([n * 13 % 64]) + answer)
    for pair in schema_pairs():
        write(corpus / "tape", pair)
    for call in catalog_calls():
        write(corpus / "catalog", call)
    print(f"{count} messages seeded into {corpus}")


if __name__ == "__main__":
    main()
