#!/usr/bin/env python3
"""scripts/fidelity_report.py against the dash CLI (path as the first argument): a report of one set
(a committed off-grid run, twice: fitted to and held out) has its summary rows, the same speedup
error for both, and a row per speedup further off than 3%; the default sets name files that exist;
bad usage and a missing file exit 2 with one line."""
import json
import os
import subprocess
import sys
import tempfile

from checks import ScriptChecks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "fidelity_report.py")
DASH = sys.argv[1]
checks = ScriptChecks(SCRIPT)
check, run, failures = checks.check, checks.run, checks.failures
RUN = "docs/results/raw/bench-2026-12-03b-offgrid-sm90-3-dash.json"

with tempfile.TemporaryDirectory() as tmp:
    sets = os.path.join(tmp, "sets.json")
    with open(sets, "w") as f:
        json.dump([{"name": "one run", "profile": "profiles/h200.json", "fit": [RUN], "held_out": [RUN]}], f)
    out = os.path.join(tmp, "report.md")
    r = run(["--dash", DASH, "--sets", sets, "--out", out])
    check(r.returncode == 0 and r.stdout == "", f"exit {r.returncode}: {r.stderr}")
    text = open(out).read() if os.path.exists(out) else ""
    fit = [x for x in text.splitlines() if x.startswith("| fitted to |")]
    held = [x for x in text.splitlines() if x.startswith("| held out |")]
    check("## one run" in text and len(fit) == 1 and len(held) == 1, f"summary rows: {text[:600]!r}")
    if fit and held:
        check(fit[0].split("|")[2] == held[0].split("|")[2], f"the same run scores the same: {fit[0]!r} {held[0]!r}")
    rows = [x for x in text.splitlines() if x.startswith("| d=")]
    stated = [x for x in text.splitlines() if x.startswith("Speedups further off than 3%")]
    check(len(stated) == 1 and f"({len(rows)})" in stated[0] and len(rows) % 2 == 0,
          f"a row per miss, each run once per set: {stated!r}, {len(rows)} rows")
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        measured, predicted, err = float(cells[4]), float(cells[5]), float(cells[6].rstrip("%"))
        check(abs(err) > 3.0 and abs((predicted / measured - 1) * 100 - err) < 0.1, f"row: {row!r}")

    # Orders without tickets, on a run that timed the five named strategies both ways on 12 shapes:
    # every table row's measured fastest is the records' fastest non-det time, and no pick beats it.
    abba = "docs/results/raw/2026-12-07c-h100-abba-dash-d128-r1.json"
    with open(sets, "w") as f:
        json.dump([{"name": "abba", "profile": "profiles/h100.json", "fit": [abba]}], f)
    r = run(["--dash", DASH, "--sets", sets, "--out", out])
    text = open(out).read() if r.returncode == 0 and os.path.exists(out) else ""
    section = text.split("### Orders without tickets")[1] if "### Orders without tickets" in text else ""
    check("(12 shapes)" in section, f"orders without tickets: {section[:300]!r}")
    with open(os.path.join(ROOT, abba)) as f:
        records = json.load(f)
    rows = [[c.strip() for c in x.strip("|").split("|")] for x in section.splitlines() if x.startswith("| d=")]
    check(len(rows) >= 1, "no shape where a pick costs more than 1%")
    # The picks, recomputed from dash fidelity's predicted calls with and without the order.
    fid = subprocess.run([DASH, "fidelity", abba, "--profile", "profiles/h100.json", "--json"], cwd=ROOT,
                         capture_output=True, text=True)
    predicted = {}
    for x in json.loads(fid.stdout)["rows"] if fid.returncode == 0 else []:
        predicted.setdefault(x["shape"], {})[x["strategy"]] = (x["predicted_nondet_call_cycles"],
                                                              x["predicted_call_cycles"])
    for cells in rows:
        p = predicted.get(cells[0], {})
        check(p and cells[3] == min(p, key=lambda k: p[k][0]) and cells[5] == min(p, key=lambda k: p[k][1]),
              f"the model's picks: {cells}")
        nondet = {x["strategy"]: x["ms"] for x in records if x["mode"] == "nondet"
                  and f"d={x['head_dim']} {x['mask']} s={x['seqlen_q']} " in cells[0] + " "}
        check(nondet and min(nondet, key=nondet.get) == cells[2], f"measured fastest: {cells}")
        check(float(cells[4]) >= 1.0 and float(cells[6]) >= 1.0 and max(float(cells[4]), float(cells[6])) >= 1.01,
              f"costs: {cells}")

    # The default sets: every file they name is committed.
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import fidelity_report  # noqa: E402
    for s in fidelity_report.SETS:
        for f in [*s["fit"], *s["held_out"], *s["main_kernel"], s["profile"]]:
            check(os.path.isfile(os.path.join(ROOT, f)), f"{s['name']}: {f} is not committed")

    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        json.dump([{"name": "x", "profile": "profiles/h200.json", "fit": ["docs/results/raw/none.json"]}], f)
    for args, why in ((["--bogus", "1"], "usage"), (["--dash"], "usage"), (["--dash", DASH, "--sets", bad], "no such file"),
                      (["--dash", DASH, "--sets", os.path.join(tmp, "missing.json")], "missing sets")):
        r = run(args)
        check(r.returncode == 2 and r.stdout == "" and r.stderr.startswith("fidelity_report.py: error: ")
              and len(r.stderr.splitlines()) == 1, f"{why}: exit {r.returncode}, {r.stderr!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("fidelity_report.py: all checks passed")
