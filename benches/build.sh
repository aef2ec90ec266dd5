# Sourced by load-common.sh and device/kit.sh (from the repository root):
# wrk, installed from Debian's packages when missing, and release builds
# of mcpgate, benches/hyper-baseline and benches/lightload.
if ! command -v "${WRK:-wrk}" >/dev/null; then
    echo "installing wrk" >&2
    (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
cargo build --release --quiet
cargo build --release --quiet --manifest-path benches/hyper-baseline/Cargo.toml
cargo build --release --quiet --manifest-path benches/lightload/Cargo.toml
