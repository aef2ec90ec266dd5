#!/usr/bin/env bash
# Instructions per check of the gate, in-process, for the four cases of
# benches/instructions.rs: each case run under callgrind at COUNT and
# 2×COUNT checks, the difference over COUNT (set-up cancels out). Counts do
# not move with the machine's load, so this tells apart changes that
# timings on a shared machine cannot; time is still what the floors and
# the load scripts measure.
#
#   benches/instructions.sh [count (10000)]
#
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
# Ten thousand: the set-up's own count moves by some 30,000 instructions
# from one run to the next (hash seeds, the heap), which over 1,000 checks
# read as ±30 per check.
count=${1:-10000}
command -v valgrind > /dev/null || { echo "needs valgrind" >&2; exit 1; }

binary=$(cargo bench --bench instructions --no-run --message-format=json 2> /dev/null |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "instructions" and m.get("executable"):
        print(m["executable"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The cases, as the binary lists them when given none.
cases=$("$binary" | tr '\n' ' ')
for case in $cases; do
    for n in "$count" $((2 * count)); do
        valgrind --tool=callgrind --callgrind-out-file="$work/$case.$n" \
            "$binary" "$case" "$n" > /dev/null 2> "$work/$case.$n.log" &
    done
    wait
done
python3 - "$work" "$count" $cases <<'PY'
import sys
work, count, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def total(path):
    for line in open(path):
        if line.startswith("summary:"):
            return int(line.split()[1])
    sys.exit(f"no count in {path}: see {path}.log")
per = {c: (total(f"{work}/{c}.{2 * count}") - total(f"{work}/{c}.{count}")) / count for c in cases}
print("| case | instructions per check |\n|---|---|")
for c in cases:
    print(f"| {c} | {per[c]:,.0f} |")
print(f"\ninvalid_small / valid_516b: {per['invalid_small'] / per['valid_516b']:.2f}x")
print(f"search_orders refused / allowed: {per['search_orders_refused'] / per['search_orders_allowed']:.2f}x "
      f"(the refusal's extra: {per['search_orders_refused'] - per['search_orders_allowed']:,.0f})")
PY
