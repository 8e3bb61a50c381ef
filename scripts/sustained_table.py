#!/usr/bin/env python3
"""A table of sustained-load series: one shape timed for many back-to-back calls per process.

Each JSON file is one `dash bench --json` or `scripts/bench_torch.py --json` run of one shape with a
long series (--iters 1000, say); the clock file is `nvidia-smi --query-gpu=timestamp,clocks.sm,
power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100` running throughout
(plain or gzipped), and the phase file holds "EPOCH start NAME" / "EPOCH end NAME" lines around
each process, NAME being the end of the JSON file's name (before .json). Per series: the median
TFLOP/s of all calls, of the first 50 and of the last half; and of the clock samples inside the
process's window that draw more than --hot-watts (the kernels running, not Python or JIT
compilation): the median power, the median SM clock, the share with the software power cap active
(event reason bit 0x4) and the highest temperature.

Usage: scripts/sustained_table.py --clocks CLOCKS.csv[.gz] --phases PHASES.txt RUN.json...
Bad input: one error line, exit 2.
"""
import argparse
import csv
import datetime
import gzip
import json
import os
import statistics
import sys

SW_POWER_CAP = 0x4


def fail(message):
    print(f"sustained_table.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_clocks(path):
    opener = gzip.open if path.endswith(".gz") else open
    samples = []
    try:
        with opener(path, "rt") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as e:
        fail(f"{path}: {e}")
    for row in rows[1:]:
        if len(row) < 5:
            continue
        try:
            t = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f")
            samples.append({
                "t": t.replace(tzinfo=datetime.timezone.utc).timestamp(),
                "mhz": int(row[1].split()[0]),
                "watts": float(row[2].split()[0]),
                "celsius": int(row[3]),
                "reasons": int(row[4].strip(), 16),
            })
        except (ValueError, IndexError):
            continue  # a sample nvidia-smi could not fill ([N/A]) or a repeated header
    if not samples:
        fail(f"{path}: no clock samples")
    return samples


def read_phases(path):
    phases = {}
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                parts = line.split()
                if len(parts) != 3 or parts[1] not in ("start", "end"):
                    fail(f"{path}:{n}: expected 'EPOCH start|end NAME', got {line.strip()!r}")
                phases.setdefault(parts[2], {})[parts[1]] = float(parts[0])
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    return phases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clocks", required=True)
    parser.add_argument("--phases", required=True)
    parser.add_argument("--hot-watts", type=float, default=300.0)
    parser.add_argument("runs", nargs="+")
    args = parser.parse_args()
    samples = read_clocks(args.clocks)
    phases = read_phases(args.phases)
    cols = ["series", "kernel", "calls", "TFLOP/s (median)", "first 50", "last half", "samples",
            "W", "MHz", "power-capped", "max C"]
    # Every row first, then the table: bad input leaves no partial table behind its error.
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for path in args.runs:
        base = os.path.basename(path)[: -len(".json")] if path.endswith(".json") else None
        # The longest phase name the file's name ends with ("fa4-det-causal" before "det-causal").
        name = max((n for n in phases if base is not None and base.endswith(n)), key=len, default=None)
        if name is None or "start" not in phases[name] or "end" not in phases[name]:
            fail(f"{path}: no start and end in {args.phases} for it")
        try:
            with open(path) as f:
                records = [r for r in json.load(f) if r.get("ms_all")]
        except (OSError, ValueError, AttributeError) as e:
            fail(f"{path}: {e}")
        if not records:
            fail(f"{path}: no record with a timed series")
        window = phases[name]
        hot = [s for s in samples if window["start"] <= s["t"] <= window["end"] and s["watts"] > args.hot_watts]
        for r in records:
            try:
                ms, flops = r["ms_all"], float(r["flops"])
                kernel = r.get("strategy") or r["backend"]
            except (KeyError, TypeError, ValueError) as e:
                fail(f"{path}: a record lacks a field: {e}")

            def tflops(values):
                return flops / (statistics.median(values) * 1e-3) / 1e12

            cells = [name, kernel, str(len(ms)), f"{tflops(ms):.1f}", f"{tflops(ms[:50]):.1f}",
                     f"{tflops(ms[len(ms) // 2:]):.1f}", str(len(hot))]
            if hot:
                cells += [f"{statistics.median(s['watts'] for s in hot):.0f}",
                          f"{statistics.median(s['mhz'] for s in hot):.0f}",
                          f"{sum(1 for s in hot if s['reasons'] & SW_POWER_CAP) / len(hot):.2f}",
                          str(max(s["celsius"] for s in hot))]
            else:
                cells += ["-"] * 4
            out.append("| " + " | ".join(cells) + " |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
