#!/usr/bin/env python3
"""Tables an A/B of kernel variants from `rt_bench shapes` output (scripts/ab.sh writes one file per
variant, each holding every round's lines): per shape, strategy and mode, the TFLOP/s of each round
for each variant and the ratio of each variant's median to the first variant's.

Usage: scripts/ab_rounds.py FILE1 FILE2 ...   (a variant's name is its file name less timing_ and .txt)
Exit 2 with one line on stderr for a missing or unreadable file, or one with no timing line.
"""
import os
import statistics
import sys


def fail(msg):
    print(f"ab_rounds.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def parse(path):
    """{(d, seqlen, mask, strategy, mode): [TFLOP/s per round]} in the order first seen."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    rows = {}
    for line in lines:
        cols = line.split()
        if len(cols) != 7 or cols[0] == "d":
            continue
        try:
            int(cols[0])
            int(cols[1])
            tflops = float(cols[6])
        except ValueError:
            continue
        rows.setdefault(tuple(cols[:5]), []).append(tflops)
    if not rows:
        fail(f"{path}: no rt_bench timing line")
    return rows


def name_of(path):
    base = os.path.basename(path)
    base = base[len("timing_"):] if base.startswith("timing_") else base
    return base[:-len(".txt")] if base.endswith(".txt") else base


def main(argv):
    if not argv:
        fail("usage: scripts/ab_rounds.py FILE1 FILE2 ...")
    variants = [(name_of(p), parse(p)) for p in argv]
    keys = list(variants[0][1])
    for _, rows in variants[1:]:
        keys += [k for k in rows if k not in keys]
    others = " ".join(n for n, _ in variants[1:])
    print(f"{'shape':<50}" + "".join(f"{n:>22}" for n, _ in variants) + f"  median / {variants[0][0]}: {others}")
    for key in keys:
        cells, medians = [], []
        for _, rows in variants:
            vals = rows.get(key)
            cells.append("/".join(f"{v:.0f}" for v in vals) if vals else "-")
            medians.append(statistics.median(vals) if vals else None)
        base = medians[0]
        ratios = [f"{m / base:.3f}" if m is not None and base else "-" for m in medians[1:]]
        print(f"{' '.join(key):<50}" + "".join(f"{c:>22}" for c in cells) + "  " + " ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
