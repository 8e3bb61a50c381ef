#!/usr/bin/env python3
"""scripts/bench_table.py on the committed benchmark of docs/results/ and on bad input."""
import json
import os
import tempfile

from checks import ScriptChecks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "bench_table.py")
DASH = os.path.join(ROOT, "docs", "results", "raw", "bench-2026-11-29c-dash.json")
TORCH = os.path.join(ROOT, "docs", "results", "raw", "bench-2026-11-29c-torch.json")
checks = ScriptChecks(SCRIPT)
check, run = checks.check, checks.run


def rows(lines, title_prefix):
    """The data rows of the first table after the line starting with title_prefix (or the first table)."""
    start = 0
    if title_prefix is not None:
        start = next(i for i, l in enumerate(lines) if l.startswith(title_prefix))
    table = []
    for line in lines[start:]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    return [[c.strip() for c in r.strip("|").split("|")] for r in table[2:]]


res = run(["--dash", DASH, "--torch", TORCH])
check(res.returncode == 0, f"exit code {res.returncode} on the committed data: {res.stderr}")
lines = res.stdout.splitlines()
main = rows(lines, None)
per_strategy = rows(lines, "### det/nd per strategy")
check(len(main) == 24 and len(per_strategy) == 24, f"24 shapes expected, got {len(main)} and {len(per_strategy)}")

with open(DASH) as f:
    dash = json.load(f)
with open(TORCH) as f:
    torch = json.load(f)
# Recompute from the records: the best deterministic strategy of every shape and every ratio.
for row in main:
    d, mask, seqlen = int(row[0]), row[1], int(row[2])
    det = [r for r in dash if (r["head_dim"], r["mask"], r["seqlen_q"], r["mode"]) == (d, mask, seqlen, "det")]
    best = max(det, key=lambda r: r["tflops"])
    check(row[-4] == best["strategy"], f"{row[:3]}: best {row[-4]}, records say {best['strategy']}")
    flash = next(r for r in torch if (r["head_dim"], r["mask"], r["seqlen_q"], r["backend"]) == (d, mask, seqlen, "flash"))
    check(row[4] == f"{flash['tflops']:.1f}", f"{row[:3]}: SDPA flash {row[4]} vs {flash['tflops']:.1f}")
strategies = ["fa3", "fa3-spt", "descending", "shift", "symmetric-shift"]
for row in per_strategy:
    d, mask, seqlen = int(row[0]), row[1], int(row[2])
    for st, value in zip(strategies, row[4:]):
        tf = {r["mode"]: r["tflops"] for r in dash
              if (r["head_dim"], r["mask"], r["seqlen_q"], r["strategy"]) == (d, mask, seqlen, st)}
        check(abs(float(value) - tf["det"] / tf["nondet"]) < 0.0015, f"{row[:3]} {st}: {value} vs records")

# Without PyTorch records the dash table still prints, and says so.
res = run(["--dash", DASH, "--torch", os.path.join(ROOT, "no-such-file.json")])
check(res.returncode == 0 and "(no PyTorch results" in res.stdout, "missing torch file not reported")

# Bad input: one error line, exit 2.
with tempfile.TemporaryDirectory() as tmp:
    for name, text in [("truncated.json", "[{"), ("object.json", '{"a": 1}'), ("fields.json", '[{"x": 1}]')]:
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        checks.check_usage_error(["--dash", path], name)

# --round: two rounds of the committed ABBA run (ours, FA4, FA4, ours); every cell recomputed.
RAW = os.path.join(ROOT, "docs", "results", "raw")
rounds = [(os.path.join(RAW, f"2026-12-07c-h100-abba-dash-d64-r{i}.json"),
           os.path.join(RAW, f"2026-12-07c-h100-abba-torch-d64-r{i}.json")) for i in (1, 2)]
res = run(["--round", *rounds[0], "--round", *rounds[1]])
check(res.returncode == 0, f"--round: exit code {res.returncode}: {res.stderr}")
table = rows(res.stdout.splitlines(), "### vs FlashAttention-4, 2 rounds")
check(len(table) == 12, f"--round: 12 shapes expected, got {len(table)}")
loaded = []
for dash_path, torch_path in rounds:
    with open(dash_path) as f, open(torch_path) as g:
        loaded.append((json.load(f), json.load(g)))
for row in table:
    d, mask, seqlen = int(row[0]), row[1], int(row[2])
    pick = lambda r: (r["head_dim"], r["mask"], r["seqlen_q"]) == (d, mask, seqlen)
    fd = [max(r["tflops"] for r in t if pick(r) and r["backend"] == "fa4-det") for _, t in loaded]
    od = [max(r["tflops"] for r in dd if pick(r) and r["mode"] == "det") for dd, _ in loaded]
    on = [max(r["tflops"] for r in dd if pick(r) and r["mode"] == "nondet") for dd, _ in loaded]
    g = lambda v: (v[0] * v[1]) ** 0.5
    check(row[4] == f"{g(fd):.1f}" and row[6] == f"{g(od):.1f}" and row[7] == f"{g(on):.1f}",
          f"--round {row[:3]}: means {row[4]}, {row[6]}, {row[7]} vs records")
    check(row[8] == f"{g(od) / g(fd):.3f}" and row[10] == f"{g(od) / g(on):.3f}", f"--round {row[:3]}: ratios")
    per = [a / b for a, b in zip(od, fd)]
    check(row[11] == f"{min(per):.3f}-{max(per):.3f}", f"--round {row[:3]}: per-round {row[11]}")
# A round's dash records split over files (one per kernel family, as scripts/bench.sh writes them):
# the same table as from one file.
with tempfile.TemporaryDirectory() as tmp:
    split = []
    for i, (dash_path, torch_path) in enumerate(rounds):
        with open(dash_path) as f:
            records = json.load(f)
        parts = [os.path.join(tmp, f"r{i}-det.json"), os.path.join(tmp, f"r{i}-nondet.json")]
        for path, mode in zip(parts, ("det", "nondet")):
            with open(path, "w") as f:
                json.dump([r for r in records if r["mode"] == mode], f)
        split += ["--round", *parts, torch_path]
    res_split = run(split)
    check(res_split.returncode == 0 and res_split.stdout == res.stdout,
          f"--round with two dash files: exit {res_split.returncode}: {res_split.stderr}")
# One round, or --round with --dash: one error line, exit 2.
for argv in (["--round", *rounds[0]], ["--round", *rounds[0], "--round", *rounds[1], "--dash", rounds[0][0]],
             ["--round", *rounds[0], "--round", rounds[1][1]]):
    checks.check_usage_error(argv, f"--round ... {argv[-1]}")
# A missing file (its run failed): no records from it, named under the table.
missing = os.path.join(ROOT, "no-such-file.json")
res = run(["--round", *rounds[0], "--round", rounds[1][0], missing])
check(res.returncode == 0 and f"(round 2: {missing} missing" in res.stdout
      and rows(res.stdout.splitlines(), "### vs FlashAttention-4, 2 rounds")[0][4] == "-",
      f"--round with a missing torch file: exit {res.returncode}: {res.stdout[-300:]} {res.stderr}")

checks.finish("bench_table")
