#!/usr/bin/env python3
"""Holds the gate's same-run ratios to the floors in benches/floors.toml.

    benches/floors.py [--criterion target/criterion] [--paired target/paired]
                      [--since FILE] [--floors FILE]

`[[ratio]]`: two criterion benchmarks. Reads each one's estimate from
criterion's output (`<dir>/**/new/benchmark.json` names it, `estimates.json`
beside it holds it): the slope of time over iteration counts, the figure
criterion prints, which a few slow samples move less than the median of the
samples' means (that median where there is no slope).

`[[paired]]`: two calls of one `gate_paired` ratio, timed in alternating
blocks (`<dir>/<name>/ratio.json`): the median of the pairs' ratios.
Either kind may give a `scale` (default 1) that multiplies its ratio.

Prints one row per ratio: subject and baseline times (printed, never
compared), the ratio, its floor. Exits 1 when a ratio is below its floor or
a benchmark it names was not measured (with --since: not since FILE was
written), 2 on a malformed floors file. Python 3.11 standard library only.
"""

import argparse
import json
import os
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Where criterion and gate_paired write, as cargo builds.
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")


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


def paired_results(paired: Path, since: float | None) -> dict[str, dict]:
    """gate_paired's result by ratio name, written since `since`."""
    found = {}
    for written in paired.glob("**/ratio.json"):
        if since is not None and written.stat().st_mtime < since:
            continue
        result = json.loads(written.read_text())
        found[result["name"]] = result
    return found


def paired_ratio(entry: dict, result: dict) -> tuple[float, float, float] | str:
    """(subject ns, baseline ns, scale × the median of baseline / subject
    over the pairs), or what of the entry the result lacks."""
    sides = {result[side]["name"]: side for side in ("first", "second")}
    missing = [entry[key] for key in ("subject", "baseline") if entry[key] not in sides]
    if missing:
        return ", ".join(f"{entry['paired']} {name}" for name in missing)
    subject, baseline = sides[entry["subject"]], sides[entry["baseline"]]
    median = result["second_over_first"]["median"]
    # gate_paired runs an odd count of pairs: the median of the inverses is
    # the inverse of the median.
    value = entry.get("scale", 1.0) * (median if subject == "first" else 1.0 / median)
    return result[subject]["median_ns"], result[baseline]["median_ns"], value


def shown(nanoseconds: float) -> str:
    for unit, size in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if nanoseconds >= size:
            return f"{nanoseconds / size:.3g} {unit}"
    return f"{nanoseconds:.3g} ns"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion", type=Path, default=TARGET / "criterion")
    parser.add_argument("--paired", type=Path, default=TARGET / "paired")
    parser.add_argument("--floors", type=Path, default=ROOT / "benches" / "floors.toml")
    parser.add_argument("--since", type=Path,
                        help="only results written after this file count")
    args = parser.parse_args()

    try:
        table = tomllib.loads(args.floors.read_text())
        ratios, paired = table.get("ratio", []), table.get("paired", [])
        for kind, entries, keys in (("ratio", ratios, ("name", "subject", "baseline", "floor")),
                                    ("paired", paired,
                                     ("name", "paired", "subject", "baseline", "floor"))):
            for entry in entries:
                for key in keys:
                    if key not in entry:
                        raise KeyError(f"a {kind} has no {key!r}: {entry}")
                if entry["subject"] == entry["baseline"]:
                    raise KeyError(f"a {kind} compares {entry['subject']!r} with itself")
        if not ratios and not paired:
            raise KeyError("no [[ratio]] or [[paired]] entries")
    except (OSError, KeyError, tomllib.TOMLDecodeError) as error:
        print(f"floors: {args.floors}: {error}", file=sys.stderr)
        return 2

    since = args.since.stat().st_mtime if args.since else None
    measured = estimates(args.criterion, since)
    measured_pairs = paired_results(args.paired, since)
    failed = []
    rows = []

    def row(entry, figures):
        if isinstance(figures, str):
            rows.append((entry["name"], "-", "-", "not measured: " + figures, entry["floor"],
                         "FAIL"))
            failed.append(entry["name"])
            return
        subject, baseline, value = figures
        ok = value >= entry["floor"]
        if not ok:
            failed.append(entry["name"])
        rows.append((entry["name"], shown(subject), shown(baseline), f"{value:.2f}×",
                     entry["floor"], "ok" if ok else "BELOW FLOOR"))

    for ratio in ratios:
        subject, baseline = measured.get(ratio["subject"]), measured.get(ratio["baseline"])
        missing = [b for b, m in ((ratio["subject"], subject), (ratio["baseline"], baseline))
                   if m is None]
        if missing:
            row(ratio, ", ".join(missing))
        else:
            row(ratio, (subject, baseline, ratio.get("scale", 1.0) * baseline / subject))
    for entry in paired:
        result = measured_pairs.get(entry["paired"])
        row(entry, entry["paired"] if result is None else paired_ratio(entry, result))

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
