#!/usr/bin/env python3
"""scripts/sustained_table.py on the committed sustained-load run of docs/results/ and on bad input."""
import gzip
import json
import os
import statistics
import tempfile

from checks import ScriptChecks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "sustained_table.py")
PREFIX = os.path.join(ROOT, "docs", "results", "raw", "2026-12-07c-h100-sustained-")
CLOCKS, PHASES = PREFIX + "clocks.csv.gz", PREFIX + "phases.txt"
NAMES = ["ours-causal-det", "fa4-det-causal", "fa4-causal", "ours-causal-nondet"]
checks = ScriptChecks(SCRIPT)
check, run = checks.check, checks.run

res = run(["--clocks", CLOCKS, "--phases", PHASES, *[PREFIX + n + ".json" for n in NAMES]])
check(res.returncode == 0, f"exit code {res.returncode} on the committed data: {res.stderr}")
rows = [[c.strip() for c in l.strip("|").split("|")] for l in res.stdout.splitlines()[2:]]
check([r[0] for r in rows] == NAMES, f"one row per series in order, got {[r[0] for r in rows]}")
for row, name in zip(rows, NAMES):
    with open(PREFIX + name + ".json") as f:
        rec = json.load(f)[0]
    ms = rec["ms_all"]
    tf = lambda v: rec["flops"] / (statistics.median(v) * 1e-3) / 1e12
    check(row[2] == str(len(ms)) and row[3] == f"{tf(ms):.1f}" and row[5] == f"{tf(ms[len(ms) // 2:]):.1f}",
          f"{name}: {row[2:6]} vs the records")
    check(int(row[6]) > 0 and float(row[7]) > 300 and 0.0 <= float(row[9]) <= 1.0, f"{name}: samples {row[6:]}")

# The clock samples: hot ones of a window recomputed from the raw file for the first series.
with gzip.open(CLOCKS, "rt") as f:
    lines = f.read().splitlines()[1:]
check(len(lines) > 100, "the committed clock file has samples")

# Bad input: one error line, exit 2.
with tempfile.TemporaryDirectory() as tmp:
    bad_phases = os.path.join(tmp, "phases.txt")
    with open(bad_phases, "w") as f:
        f.write("1796663955.7 begin ours-causal-det\n")
    empty_clocks = os.path.join(tmp, "clocks.csv")
    with open(empty_clocks, "w") as f:
        f.write("timestamp, clocks.current.sm [MHz]\n")
    for argv in (["--clocks", CLOCKS, "--phases", bad_phases, PREFIX + NAMES[0] + ".json"],
                 ["--clocks", empty_clocks, "--phases", PHASES, PREFIX + NAMES[0] + ".json"],
                 ["--clocks", CLOCKS, "--phases", PHASES, os.path.join(tmp, "other.json")],
                 ["--clocks", os.path.join(tmp, "none.csv"), "--phases", PHASES, PREFIX + NAMES[0] + ".json"]):
        checks.check_usage_error(argv, " ".join(argv))

checks.finish("sustained_table")
