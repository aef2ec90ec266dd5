"""The official MCP Python client (mcp 2.3.0) driven from the command line.

    python client.py --url URL [--mode auto|legacy|2026-07-28] OP...

Prints one JSON object per line on stdout, like client.mjs:
    list                 {"op":"list","tools":[names...],"protocol":VERSION}
    call:NAME:JSON       {"op":"call","name":..,"result":{..}}
                         or {"op":"call","name":..,"error":{"message":..,"code":..}}
    add-many:N           N calls of `add`, then {"op":"add-many","calls","correct","failed"}
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from mcp import Client


def emit(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(value, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def split_op(op: str) -> tuple[str, dict[str, Any]]:
    _, _, rest = op.partition(":")
    name, sep, raw = rest.partition(":")
    return name, (json.loads(raw) if sep else {})


def describe_error(error: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"message": str(error), "type": type(error).__name__}
    inner = getattr(error, "error", None)
    code = getattr(inner, "code", None) if inner is not None else getattr(error, "code", None)
    if isinstance(code, int):
        out["code"] = code
    return out


async def run(url: str, mode: str, ops: list[str]) -> int:
    async with Client(url, mode=mode) as client:
        emit({"op": "connect", "mode": mode, "protocol": client.protocol_version})
        for op in ops:
            if op == "list":
                listed = await client.list_tools()
                emit({"op": "list", "tools": [tool.name for tool in listed.tools], "protocol": client.protocol_version})
            elif op.startswith("call:"):
                name, arguments = split_op(op)
                try:
                    result = await client.call_tool(name, arguments)
                    emit({"op": "call", "name": name, "result": result.model_dump(mode="json", by_alias=True, exclude_none=True)})
                except Exception as error:  # noqa: BLE001 - an error answer is a result here
                    emit({"op": "call", "name": name, "error": describe_error(error)})
            elif op.startswith("add-many:"):
                n = int(op.split(":", 1)[1])
                correct = failed = 0
                for i in range(n):
                    try:
                        result = await client.call_tool("add", {"a": i, "b": 1000})
                        sum_ = (result.structured_content or {}).get("sum")
                        ok = sum_ == i + 1000 and not result.is_error
                    except Exception:  # noqa: BLE001
                        ok = False
                    correct += ok
                    failed += not ok
                emit({"op": "add-many", "calls": n, "correct": correct, "failed": failed})
            else:
                print(f"client.py: unknown op {op}", file=sys.stderr)
                return 2
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--mode", default="auto")
    parser.add_argument("ops", nargs="*")
    args = parser.parse_args()
    try:
        return asyncio.run(run(args.url, args.mode, args.ops))
    except Exception as error:  # noqa: BLE001
        emit({"op": "connect", "error": describe_error(error)})
        return 1


if __name__ == "__main__":
    sys.exit(main())
