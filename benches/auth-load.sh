#!/usr/bin/env bash
# What OAuth costs a request: the server CPU per request of the valid
# 516-byte 2026-07-28 tools/call POSTed to /validate, in one run and with
# the same wrk settings for each target:
#   plain     a server without OAuth, the call sent without a token
#   carried   the same server, the call sent with the token (it reads no
#             token: what the larger head alone costs)
#   auth      a server with OAuth (a JWKS file, issuer, resource, a scope
#             every request needs and one for the tool), the call sent with
#             a valid RS256 token; after the first request the token is
#             found in the worker's cache, so this is the cached-token cost
# The token is signed here with openssl (RSA 2048), with the claims an
# identity provider's access token carries; its size is printed (real
# ones run from about 800 bytes to 1.5 KB).
#
# Each server runs one worker pinned to CPU 0, wrk one thread on CPU 1.
# Rounds (default 3) repeat plain, carried, auth back to back; the summary
# gives each round's ratios of CPU per request and their medians. Target
# (benches/README.md): auth / plain <= 1.15.
#
# Usage: benches/auth-load.sh [seconds per target (10)] [connections (32)] [io driver (epoll)] [rounds (3)]
set -euo pipefail
cd "$(dirname "$0")/.."

source benches/load-common.sh "$@"

command -v openssl >/dev/null || { echo "auth-load.sh: needs openssl" >&2; exit 2; }
issuer=https://auth.example
resource=https://mcp.example/mcp
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/key.pem" 2>/dev/null
modulus=$(openssl rsa -in "$work/key.pem" -noout -modulus | sed 's/^Modulus=//')

# The JWKS and the token.
python3 - "$work" "$modulus" "$issuer" "$resource" <<'PY'
import base64, json, subprocess, sys, time
work, modulus, issuer, resource = sys.argv[1:]
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
jwks = {"keys": [{"kty": "RSA", "kid": "bench-1", "use": "sig", "alg": "RS256",
                  "n": b64(bytes.fromhex(modulus)), "e": b64((65537).to_bytes(3, "big"))}]}
open(f"{work}/jwks.json", "w").write(json.dumps(jwks))
now = int(time.time())
header = {"alg": "RS256", "typ": "at+jwt", "kid": "bench-1"}
claims = {"iss": issuer, "sub": "user-2c4e9f1a-7b3d-4f8e-9a6c-1d2e3f4a5b6c",
          "aud": [resource, "https://api.example/"], "azp": "bench-client-0a1b2c3d",
          "client_id": "bench-client-0a1b2c3d", "iat": now, "nbf": now, "exp": now + 86400,
          "jti": "8f14e45f-ceea-467f-a1b2-c3d4e5f60718", "scope": "mcp weather:read openid profile",
          "auth_time": now, "acr": "urn:mace:incommon:iap:silver", "amr": ["pwd", "mfa"],
          "sid": "f2c8a1d4-5e6b-4c7d-8e9f-0a1b2c3d4e5f"}
signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", f"{work}/key.pem"],
                           input=signing_input.encode(), capture_output=True, check=True).stdout
open(f"{work}/token", "w").write(signing_input + "." + b64(signature))
PY
request token get_weather "$work/post.body" "Authorization: Bearer $(cat "$work/token")"
token_bytes=$(wc -c < "$work/token")

read -r plain_pid plain_addr < <(start 0 plain "$MCPGATE_BIN" serve --listen 127.0.0.1:0 --workers 1 --io-driver "$DRIVER")
pids+=("$plain_pid")
read -r auth_pid auth_addr < <(start 0 auth "$MCPGATE_BIN" serve --listen 127.0.0.1:0 --workers 1 --io-driver "$DRIVER" \
    --oauth-issuer "$issuer" --oauth-resource "$resource" --oauth-jwks-file "$work/jwks.json" \
    --oauth-scopes-required mcp --oauth-tool-scopes 'get_weather=weather:read')
pids+=("$auth_pid")

# Each target must answer 204: a refused token would measure the refusal.
for target in "plain $plain_addr post" "carried $plain_addr token" "auth $auth_addr token"; do
    read -r name address req <<<"$target"
    args=(-s -o /dev/null -w '%{http_code}' -X POST --data-binary "@$work/$req.json")
    while IFS= read -r h; do args+=(-H "$h"); done < "$work/$req.headers"
    status=$(curl "${args[@]}" "http://$address/validate")
    if [ "$status" != 204 ]; then
        echo "auth-load.sh: $name answered $status, not 204" >&2
        exit 1
    fi
done

ROUNDS=${4:-3}
results=$(
    for round in $(seq "$ROUNDS"); do
        load_row plain "$plain_pid" 1 1 "$plain_addr" /validate post | sed "s/^/$round /"
        load_row carried "$plain_pid" 1 1 "$plain_addr" /validate token | sed "s/^/$round /"
        load_row auth "$auth_pid" 1 1 "$auth_addr" /validate token | sed "s/^/$round /"
    done
)
ratios "$results" "server 1 worker ($DRIVER) on CPU 0, token $token_bytes bytes (RS256)" \
    auth/plain carried/plain auth/carried
