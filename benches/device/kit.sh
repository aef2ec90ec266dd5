#!/usr/bin/env bash
# Packs what benches/device/run.sh needs on a machine that has neither a
# Rust toolchain nor a package registry (a lent machine with more cores):
# release builds of mcpgate and benches/hyper-baseline (both its
# binaries), and wrk, each with every shared library it loads and this
# machine's dynamic loader, so that they run whatever C library the other
# machine has.
#
#   target/device-kit/bin/{mcpgate,hyper-baseline,floor-baseline,wrk}   wrappers
#   target/device-kit/lib/                              the programs, libraries, loader
#
# Usage: benches/device/kit.sh     (then carry target/device-kit along)
set -euo pipefail
cd "$(dirname "$0")/../.."

source benches/build.sh

kit=target/device-kit
rm -rf "$kit"
mkdir -p "$kit/bin" "$kit/lib"
loader=
for program in target/release/mcpgate benches/hyper-baseline/target/release/hyper-baseline \
    benches/hyper-baseline/target/release/floor-baseline "$(command -v wrk)"; do
    name=$(basename "$program")
    cp "$program" "$kit/lib/$name"
    strip "$kit/lib/$name" 2>/dev/null || true
    # `ldd` lines: "libx.so => /path (addr)" and the loader "/path (addr)".
    while read -r path; do
        cp -L "$path" "$kit/lib/"
        case "$path" in */ld-linux*) loader=$(basename "$path") ;; esac
    done < <(ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}')
    cat > "$kit/bin/$name" <<SH
#!/usr/bin/env bash
# $name through the kit's own loader and libraries (exec: the PID stays).
lib="\$(cd "\$(dirname "\${BASH_SOURCE[0]}")/../lib" && pwd)"
exec "\$lib/$loader" --library-path "\$lib" "\$lib/$name" "\$@"
SH
    chmod +x "$kit/bin/$name"
done
[ -n "$loader" ] || { echo "kit.sh: no dynamic loader found by ldd" >&2; exit 1; }
"$kit/bin/wrk" --version 2>&1 | head -1 || true
"$kit/bin/mcpgate" --version
du -sh "$kit"
