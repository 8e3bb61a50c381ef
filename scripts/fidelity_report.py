#!/usr/bin/env python3
"""The model's fidelity report, regenerated from the measurements committed under docs/results/raw/:
per GPU, `dash fidelity` of its machine profile against the grid run it was fitted to and the runs
held out (and, where measured, the main kernel's own durations), as markdown: the summary (mean
|log| error of the predicted speedup over fa3, of the call time and of the price of the order; how
many within 3%), every row further off than 3%, and how well the model picks the order to run
without tickets.

Usage: scripts/fidelity_report.py [--dash DASH] [--sets FILE] [--out FILE]
  --dash  the dash binary (default build/tools/dash)
  --sets  a JSON list of sets, each {"name", "profile", "fit": [files], "held_out": [files],
          "main_kernel": [files]} with paths relative to the repository (default: the sets below)
  --out   where the report goes (default: stdout)
Exit 2 with one line on stderr on bad usage, a missing file or a failing dash run.
"""
import datetime
import json
import math
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RAW = "docs/results/raw/"

# The measurements each profile answers to (docs/results/README.md says what each run was).
SETS = [
    {"name": "H100 (profiles/h100.json)", "profile": "profiles/h100.json",
     "fit": [RAW + "2026-12-06-h100-bench-grid-dash-sm90.json"],
     "held_out": [RAW + f"2026-12-06-h100-bench-heldout-{i}.json" for i in range(1, 8)]
     + [RAW + "2026-12-06-h100-bench-offgrid-dash-sm90.json", RAW + "2026-12-06c-h100-bench-grid-repeat-dash-sm90.json"]
     + [RAW + f"2026-12-07b-h100-grid-dash-d{d}.json" for d in (128, 64)]
     + [RAW + f"2026-12-07b-h100-offgrid-dash-{i}.json" for i in range(1, 6)]
     + [RAW + f"2026-12-07c-h100-abba-dash-d{d}-r{r}.json" for d in (128, 64) for r in (1, 2)]
     + [RAW + f"2026-12-08-h100-first-claim-grid-dash-r{r}.json" for r in (1, 2)],
     "main_kernel": [RAW + "2026-12-06d-h100-main-kernel-records.json",
                     RAW + "2026-12-06d-h100-main-kernel-records-repeat.json"]},
    {"name": "H200 (profiles/h200.json, the built-in profile)", "profile": "profiles/h200.json",
     "fit": [RAW + "bench-2026-12-03b-r1-sm90-dash.json"],
     "held_out": [RAW + "bench-2026-12-03b-r2-sm90-dash.json"]
     + [RAW + f"bench-2026-12-03b-offgrid-sm90-{i}-dash.json" for i in range(1, 6)]
     + [RAW + "bench-2026-12-03d-sm90-dash.json", RAW + "bench-2026-12-04b-sm90-dash.json"],
     "main_kernel": []},
]


def fail(msg):
    print(f"fidelity_report.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    opts = {"dash": "build/tools/dash", "sets": None, "out": None}
    i = 0
    while i < len(argv):
        key = argv[i].lstrip("-")
        if not argv[i].startswith("--") or key not in opts or i + 1 >= len(argv):
            fail(f"usage: scripts/fidelity_report.py [--dash DASH] [--sets FILE] [--out FILE] (at '{argv[i]}')")
        opts[key] = argv[i + 1]
        i += 2
    return opts


def load_sets(path):
    if path is None:
        return SETS
    try:
        with open(path) as f:
            sets = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    if not isinstance(sets, list) or not all(isinstance(s, dict) and "name" in s and "profile" in s and s.get("fit")
                                             for s in sets):
        fail(f"{path}: not a list of sets with name, profile and fit")
    return sets


def run_set(dash, s):
    files = [*s["fit"], *s.get("held_out", []), *s.get("main_kernel", []), s["profile"]]
    for f in files:
        if not os.path.isfile(os.path.join(ROOT, f)):
            fail(f"{f}: no such file")
    cmd = [dash, "fidelity", *s["fit"], "--profile", s["profile"], "--json"]
    if s.get("held_out"):
        cmd += ["--held-out", *s["held_out"]]
    if s.get("main_kernel"):
        cmd += ["--main-kernel", *s["main_kernel"]]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    except OSError as e:
        fail(f"{dash}: {e.strerror}")
    if r.returncode != 0:
        fail(f"{' '.join(cmd[:3])} ...: {r.stderr.strip() or r.returncode}")
    return cmd, json.loads(r.stdout)


def summary_row(what, f):
    order = (f"{f['mean_abs_log_order_cost_error']:.3f} ({f['order_costs_within_3pct']} of {f['order_costs_compared']})"
             if f["order_costs_compared"] else "-")
    return (f"| {what} | {f['mean_abs_log_speedup_error']:.3f} ({f['speedups_within_3pct']} of {f['speedups_compared']}) "
            f"| {f['max_abs_log_speedup_error']:.3f} | {f['mean_abs_log_time_error']:.3f} | {order} |")


def misses(rows, label):
    out = []
    for r in rows:
        if r["strategy"] == "fa3":
            continue
        e = math.log(r["predicted_vs_fa3"] / r["measured_vs_fa3"])
        if abs(e) > math.log(1.03):
            out.append((abs(e), f"| {r['shape']} | {r['strategy']} | {label} | {os.path.basename(r['file'])} "
                                f"| {r['measured_vs_fa3']:.3f} | {r['predicted_vs_fa3']:.3f} | {math.expm1(e) * 100:+.1f}% |"))
    return out


def orders_without_tickets(rows):
    """Per run and shape with two or more strategies timed both ways: the order fastest without tickets as
    measured, the model's fastest (its predicted call without tickets, the passes included), and
    the measured non-det time of the model's pick and of its fastest deterministic order (what a
    caller gets who runs one schedule in both modes) over the measured best. Returns the table rows,
    the picks agreeing, and both costs per shape; the table lists the shapes where either pick costs
    more than 1%."""
    shapes = {}
    for r in rows:
        if r.get("predicted_nondet_call_cycles"):
            if not r.get("measured_nondet_ms"):
                fail(f"dash fidelity's row of {r['shape']} {r['strategy']} lacks measured_nondet_ms (an older dash?)")
            shapes.setdefault((os.path.basename(r["file"]), r["shape"]), []).append(r)
    table, agree, model_cost, det_cost = [], 0, [], []
    for (file, shape), rs in sorted(shapes.items()):
        if len(rs) < 2:
            continue
        nondet = {r["strategy"]: (r["measured_nondet_ms"],
                                  r["predicted_nondet_call_cycles"], r["predicted_call_cycles"])
                  for r in rs}
        best = min(nondet, key=lambda k: nondet[k][0])
        pick = min(nondet, key=lambda k: nondet[k][1])
        det_pick = min(nondet, key=lambda k: nondet[k][2])
        agree += pick == best
        model_cost.append(nondet[pick][0] / nondet[best][0])
        det_cost.append(nondet[det_pick][0] / nondet[best][0])
        if max(model_cost[-1], det_cost[-1]) > 1.01:
            table.append(f"| {shape} | {file} | {best} | {pick} | {model_cost[-1]:.3f} | {det_pick} | {det_cost[-1]:.3f} |")
    return table, agree, model_cost, det_cost


def main():
    opts = parse_args(sys.argv[1:])
    if os.sep in opts["dash"]:
        opts["dash"] = os.path.abspath(opts["dash"])  # dash runs from the repository root
    sets = load_sets(opts["sets"])
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=ROOT).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    lines = ["# The cost model against the GPU: fidelity report", "",
             f"Generated {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC at commit `{commit}` by "
             "`scripts/fidelity_report.py` (no GPU: `dash fidelity` on the measurements committed under `raw/`). "
             "Errors are mean |log(predicted / measured)|; a speedup is over fa3 on the same shape (deterministic); "
             "the price of the order is det over non-det time of the same schedule. Targets (the calibration "
             "issue): speedups within 3% on the grid, 5% held out.", ""]
    for s in sets:
        cmd, j = run_set(opts["dash"], s)
        lines += [f"## {s['name']}", "", "`" + " ".join(["dash", *cmd[1:]]) + "`", "",
                  "| runs | speedup error (within 3%) | max | time error | price of the order (within 3%) |",
                  "|---|---|---|---|---|", summary_row("fitted to", j["fit"])]
        if "held_out" in j:
            lines.append(summary_row("held out", j["held_out"]))
        if "main_kernel" in j:
            m = j["main_kernel"]
            lines += ["", f"Makespan against the main kernel's own durations: mean |log err| {m['mean_abs_log_error']:.3f} "
                          f"(max {m['max_abs_log_error']:.3f}), {m['within_3pct']} of {m['compared']} within 3%."]
        off = sorted(misses(j["rows"], "fitted to") + misses(j.get("held_out_rows", []), "held out"), reverse=True)
        lines += ["", f"Speedups further off than 3% ({len(off)}), worst first:", "",
                  "| shape | strategy | set | file | measured | predicted | error |", "|---|---|---|---|---|---|---|",
                  *[x for _, x in off], ""]
        table, agree, model_cost, det_cost = orders_without_tickets(j["rows"] + j.get("held_out_rows", []))
        if model_cost:
            lines += ["### Orders without tickets", "",
                      f"Where a run timed two or more strategies in both modes ({len(model_cost)} shapes): the "
                      f"model's fastest order without tickets is the measured fastest on {agree}; run without tickets, the model's "
                      f"pick costs {statistics.geometric_mean(model_cost):.3f}x the measured best (geometric mean, at most "
                      f"{max(model_cost):.3f}x), its fastest deterministic order {statistics.geometric_mean(det_cost):.3f}x (at most "
                      f"{max(det_cost):.3f}x). The shapes where either costs more than 1% ({len(table)}):", "",
                      "| shape | file | measured fastest | model's pick | its time / best | det pick | its time / best |",
                      "|---|---|---|---|---|---|---|", *table, ""]
    text = "\n".join(lines)
    if opts["out"]:
        try:
            with open(opts["out"], "w") as f:
                f.write(text)
        except OSError as e:
            fail(f"{opts['out']}: {e.strerror}")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
