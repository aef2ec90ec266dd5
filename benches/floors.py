#!/usr/bin/env python3
"""Holds criterion's same-run ratios to the floors in benches/floors.toml.

    benches/floors.py [--criterion target/criterion] [--since FILE] [--floors FILE]

Reads each benchmark's estimate from criterion's output (`<dir>/**/new/
benchmark.json` names it, `estimates.json` beside it holds it): the slope of
time over iteration counts, the figure criterion prints, which a few slow
samples move less than the median of the samples' means (that median where
there is no slope). Prints one row per ratio: subject and baseline times
(printed, never compared), the ratio, its floor. Exits 1 when a ratio is below its floor or
a benchmark it names was not measured (with --since: not since FILE was
written), 2 on a malformed floors file. Python 3.11 standard library only.
"""

import argparse
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def estimates(criterion: Path, since: float | None) -> dict[str, float]:
    """Time per iteration in nanoseconds by full benchmark id, measured since `since`."""
    found = {}
    for described in criterion.glob("**/new/benchmark.json"):
        written = described.with_name("estimates.json")
        if not written.exists():
            continue
        if since is not None and written.stat().st_mtime < since:
            continue
        full_id = json.loads(described.read_text())["full_id"]
        figures = json.loads(written.read_text())
        found[full_id] = (figures.get("slope") or figures["median"])["point_estimate"]
    return found


def shown(nanoseconds: float) -> str:
    for unit, size in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if nanoseconds >= size:
            return f"{nanoseconds / size:.3g} {unit}"
    return f"{nanoseconds:.3g} ns"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion", type=Path, default=ROOT / "target" / "criterion")
    parser.add_argument("--floors", type=Path, default=ROOT / "benches" / "floors.toml")
    parser.add_argument("--since", type=Path,
                        help="only results written after this file count")
    args = parser.parse_args()

    try:
        ratios = tomllib.loads(args.floors.read_text())["ratio"]
        for ratio in ratios:
            for key in ("name", "subject", "baseline", "floor"):
                if key not in ratio:
                    raise KeyError(f"a ratio has no {key!r}: {ratio}")
    except (OSError, KeyError, tomllib.TOMLDecodeError) as error:
        print(f"floors: {args.floors}: {error}", file=sys.stderr)
        return 2

    since = args.since.stat().st_mtime if args.since else None
    measured = estimates(args.criterion, since)
    failed = []
    rows = []
    for ratio in ratios:
        subject, baseline = measured.get(ratio["subject"]), measured.get(ratio["baseline"])
        missing = [b for b, m in ((ratio["subject"], subject), (ratio["baseline"], baseline))
                   if m is None]
        if missing:
            rows.append((ratio["name"], "-", "-", "not measured: " + ", ".join(missing),
                         ratio["floor"], "FAIL"))
            failed.append(ratio["name"])
            continue
        value = ratio.get("scale", 1.0) * baseline / subject
        ok = value >= ratio["floor"]
        if not ok:
            failed.append(ratio["name"])
        rows.append((ratio["name"], shown(subject), shown(baseline), f"{value:.2f}×",
                     ratio["floor"], "ok" if ok else "BELOW FLOOR"))

    print("| ratio | subject | baseline | ratio | floor | |")
    print("|---|---|---|---|---|---|")
    for name, subject, baseline, value, floor, verdict in rows:
        print(f"| {name} | {subject} | {baseline} | {value} | {floor} | {verdict} |")
    if failed:
        print(f"\nfloors: {len(failed)} of {len(rows)} ratios failed:", file=sys.stderr)
        for name in failed:
            print(f"  {name}", file=sys.stderr)
        return 1
    print(f"\nfloors: all {len(rows)} ratios hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
