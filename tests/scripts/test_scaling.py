#!/usr/bin/env python3
"""scripts/scaling.py against the dash CLI (path as the first argument) on 2 x 16 heads x 4096, d128:
the data-parallel share of two GPUs is one sequence each, a causal contiguous split leaves the last
rank the most work, the zigzag split evens it out; bad input exits 2."""
import json
import os
import subprocess
import sys
import tempfile

from checks import ScriptChecks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "scaling.py")
DASH = sys.argv[1]
checks = ScriptChecks(SCRIPT)
check, run, failures = checks.check, checks.run, checks.failures


def makespan(*args):
    r = subprocess.run([DASH, "compare", "--json", "--search-budget", "0", "--heads", "16", "--head-dim", "128",
                        *args], capture_output=True, text=True, check=True)
    return min(e["makespan"] for e in json.loads(r.stdout) if e.get("valid") and e["strategy"] != "search")


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "scaling.json")
    r = run(["--dash", DASH, "--gpus", "1,2", "--batch", "2", "--heads", "16", "--seqlen", "4096", "--json", out])
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
    check(r.stdout.count("| 1 | one GPU |") == 2, f"a one-GPU row per mask: {r.stdout!r}")
    rows = json.load(open(out))["rows"] if r.returncode == 0 else []
    got = {(x["mask"], x["split"]): x for x in rows if x["gpus"] == 2}
    check(set(got) == {("causal", "data"), ("causal", "contiguous"), ("causal", "zigzag"), ("full", "data"),
                       ("full", "contiguous")}, f"splits: {sorted(got)}")
    if ("causal", "data") in got:
        dp = got[("causal", "data")]
        check(dp["slowest"] == makespan("--mask", "causal", "--batch", "1", "--seqlen", "4096"),
              "data-parallel: one sequence per GPU")
        check(dp["one_gpu"] == makespan("--mask", "causal", "--batch", "2", "--seqlen", "4096"), "one GPU")
    if ("causal", "contiguous") in got:
        c = got[("causal", "contiguous")]
        check(c["rank_makespans"][1] == makespan("--mask", "causal", "--seqlens", "2048,2048",
                                                 "--seqlens-k", "4096,4096"), "rank 1: its rows against every key")
        check(c["rank_makespans"][1] > 2 * c["rank_makespans"][0], f"the last rank has the most work: {c}")
    if ("causal", "zigzag") in got and ("causal", "contiguous") in got:
        check(got[("causal", "zigzag")]["imbalance"] < got[("causal", "contiguous")]["imbalance"],
              "zigzag evens the ranks out")
        check(got[("causal", "zigzag")]["rank_makespans"][0] == makespan(
            "--mask", "causal", "--seqlens", "1024,1024,1024,1024", "--seqlens-k", "1024,4096,1024,4096"),
            "zigzag rank 0: chunks 0 and 3")

    for args, why in ((["--dash", DASH, "--gpus", "0"], "zero GPUs"),
                      (["--dash", DASH, "--masks", "window"], "unknown mask"),
                      (["--dash", os.path.join(tmp, "no-dash")], "missing CLI"),
                      (["--dash", DASH, "--gpus", "1", "--head-dim", "0"],
                       "dash refuses the problem"),
                      ([], "no --dash")):
        r = run(args)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and r.stdout == "" and lines and "error" in lines[-1],
              f"{why}: exit {r.returncode}, {r.stderr!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("scaling.py: all checks passed")
