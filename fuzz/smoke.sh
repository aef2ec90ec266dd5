#!/usr/bin/env bash
# A bounded fuzz run of every target: installs cargo-fuzz if missing,
# builds the seed corpora, then runs each target for FUZZ_SECONDS
# (default 60) and fails on the first crash, leak or timeout.
#
#   fuzz/smoke.sh                 all targets
#   FUZZ_SECONDS=10 fuzz/smoke.sh parse http
set -euo pipefail
cd "$(dirname "$0")"

# The budget per target: its default is set here only (`.ci/run` passes
# none of its own).
seconds="${FUZZ_SECONDS:-60}"
toolchain="${FUZZ_TOOLCHAIN:-nightly}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(parse http gate roots answer tape catalog)
fi

if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    rustup toolchain install "$toolchain" --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

python3 seeds.py corpus
cat dict/json.dict dict/mcp.dict > corpus/all.dict

for target in "${targets[@]}"; do
    echo "== fuzz $target for ${seconds}s"
    mkdir -p "artifacts/$target"
    log="artifacts/$target/smoke.log"
    # -timeout: one input taking 10 s is a finding too; -rss_limit_mb
    # bounds what the run may hold.
    failed=0
    cargo "+$toolchain" fuzz run "$target" "corpus/$target" -- \
        -max_total_time="$seconds" \
        -dict=corpus/all.dict \
        -timeout=10 \
        -rss_limit_mb=2048 \
        -max_len=262144 \
        -print_final_stats=1 \
        >"$log" 2>&1 || failed=1
    grep -E "^(Done [0-9]+ runs|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)" "$log" || true
    if [ "$failed" -ne 0 ]; then
        tail -n 60 "$log" >&2
        echo "fuzz target $target failed; the input is under fuzz/artifacts/$target" >&2
        exit 1
    fi
done
echo "== fuzz smoke: no crash in ${targets[*]}"
