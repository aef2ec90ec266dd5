#!/usr/bin/env bash
# The criterion benches in a short mode and the paired ratios, then the
# floors checker: what .ci/run does after the tests. Only the criterion
# benches the floors name run, each briefly; criterion's report (with
# plots) is left in target/criterion, the paired ratios in target/paired.
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p target
start=target/floors-start
touch "$start"
cargo bench --bench gate -- --warm-up-time "${BENCH_WARM_UP:-1}" \
    --measurement-time "${BENCH_MEASURE:-3}" \
    '^gate/((tools_call_516b|tools_call_20kb)/(check|serde_jsonschema)|invalid_small/check|wrong_items/check/[0-9]+|tools-call/search_orders/(check|serde_jsonschema)_valid)$'
cargo bench --bench gate_paired
python3 benches/floors.py --since "$start"
