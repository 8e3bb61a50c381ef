#!/usr/bin/env python3
"""scripts/ab_rounds.py on rt_bench output written here (two variants, three rounds, a line only one
variant has, header and noise lines) and on bad input."""
import os
import sys
import tempfile

from checks import ScriptChecks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "ab_rounds.py")
HEADER = "d    seqlen mask   strategy         mode                 ms   TFLOP/s"


def line(d, s, mask, strategy, mode, tflops):
    return f"{d:<4} {s:<6} {mask:<6} {strategy:<16} {mode:<13} {1.0:9.3f} {tflops:9.1f}"


checks = ScriptChecks(SCRIPT)
check, run, failures = checks.check, checks.run, checks.failures


with tempfile.TemporaryDirectory() as tmp:
    base = os.path.join(tmp, "timing_base.txt")
    var = os.path.join(tmp, "timing_ea.txt")
    with open(base, "w") as f:
        for tf in (470.0, 480.0, 475.0):
            f.write("\n".join([HEADER, line(64, 4096, "causal", "symmetric-shift", "deterministic", tf),
                               line(64, 4096, "causal", "fa3", "atomic", 400.0), "== round marker"]) + "\n")
    with open(var, "w") as f:
        for tf in (500.0, 490.0, 495.0):
            f.write("\n".join([HEADER, line(64, 4096, "causal", "symmetric-shift", "deterministic", tf),
                               line(128, 8192, "full", "fa3", "atomic", 600.0)]) + "\n")
    r = run([base, var])
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
    rows = r.stdout.splitlines()
    check(len(rows) == 4, f"a header and three rows: {r.stdout!r}")
    check(rows[0].endswith("median / base: ea"), f"header names the variants: {rows[0]!r}")
    det = [x for x in rows if "symmetric-shift" in x]
    check(len(det) == 1 and "470/480/475" in det[0] and "500/490/495" in det[0] and det[0].endswith(" 1.042"),
          f"rounds and the ratio of medians (495 / 475): {det!r}")
    atomic = [x for x in rows if "fa3 atomic" in x and "4096" in x]
    check(len(atomic) == 1 and atomic[0].endswith(" -"), f"a line the variant lacks: {atomic!r}")
    only = [x for x in rows if "8192" in x]
    check(len(only) == 1 and " - " in only[0] and only[0].endswith(" -"), f"a line the base lacks: {only!r}")

    for args, why in (([], "usage"), ([os.path.join(tmp, "missing.txt")], "missing file")):
        r = run(args)
        check(r.returncode == 2 and r.stdout == "" and r.stderr.startswith("ab_rounds.py: error: ")
              and len(r.stderr.splitlines()) == 1, f"{why}: exit {r.returncode}, {r.stderr!r}")
    empty = os.path.join(tmp, "timing_empty.txt")
    with open(empty, "w") as f:
        f.write(HEADER + "\nnot a timing line\n")
    r = run([base, empty])
    check(r.returncode == 2 and "no rt_bench timing line" in r.stderr, f"no timing line: {r.stderr!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ab_rounds.py: all checks passed")
