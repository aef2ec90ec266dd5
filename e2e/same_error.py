"""The official MCP Python client (mcp 2.3.0) making the same mistakes as
same-error.mjs, against any target; one JSON line per case,
{"case","class","code"}:

    python same_error.py --url URL [--mode 2026-07-28|legacy]

class: the exception's class (MCPError, ...) with its JSON-RPC code, or
"isError" for a tool result with isError: true (code null), "result" for
any other result.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from typing import Any

import mcp.types as types
from mcp import Client


def emit(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(value, separators=(",", ":")) + "\n")
    sys.stdout.flush()


async def integer_name(client: Client) -> types.CallToolResult:
    # call_tool validates `name` as a string before sending: the request is
    # built unvalidated so that it reaches the server as a client with
    # looser typing would send it.
    params = types.CallToolRequestParams.model_construct(name=5, arguments={})
    request = types.CallToolRequest.model_construct(method="tools/call", params=params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return await client.session.send_request(request, types.CallToolResult)


CASES = [
    ("unknown_tool", lambda c: c.call_tool("no_such_tool", {})),
    ("integer_name", integer_name),
    ("wrong_type", lambda c: c.call_tool("add", {"a": "two", "b": 40})),
    ("missing_argument", lambda c: c.call_tool("add", {"a": 1})),
]


async def run(url: str, mode: str) -> None:
    async with Client(url, mode=mode) as client:
        for name, call in CASES:
            try:
                result = await call(client)
                emit({"case": name, "class": "isError" if result.is_error else "result", "code": None})
            except Exception as error:  # noqa: BLE001 - what the client raises is the result here
                inner = getattr(error, "error", None)
                code = getattr(inner, "code", None) if inner is not None else getattr(error, "code", None)
                emit({"case": name, "class": type(error).__name__, "code": code, "message": str(error)[:300]})


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--mode", default="2026-07-28")
    args = parser.parse_args()
    asyncio.run(run(args.url, args.mode))
    return 0


if __name__ == "__main__":
    sys.exit(main())
