#!/usr/bin/env python3
"""scripts/kernel_times.py against the dash CLI (path as the first argument) on a kernel_times.sh file
written here: two grid shapes whose main kernel lasts exactly the model's makespan and whose passes
last half the model's pre/post term (ratios 1.000 and 2.00); the same durations as main-kernel records
(--records) that `dash fidelity --main-kernel` scores as exact; bad input exits 2."""
import json
import os
import subprocess
import sys
import tempfile

from checks import ScriptChecks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "kernel_times.py")
PROFILE = os.path.join(ROOT, "profiles", "h100.json")
DASH = sys.argv[1]
checks = ScriptChecks(SCRIPT)
check, run, failures = checks.check, checks.run, checks.failures
CLOCK = json.load(open(PROFILE))["clock_mhz"] * 1e6


def model(d, s, mask):
    # The kernel names below carry no Q tile: kernel_times.py takes the tile such files were made
    # with (128 rows at head dim 64, 64 at 128), which is not the family's default at d128 full.
    heads = 32 if d == 64 else 16
    r = subprocess.run([DASH, "simulate", "--profile", PROFILE, "--sms", "132", "--strategy", "symmetric-shift",
                        "--head-dim", str(d), "--mask", mask, "--batch", str(16384 // s), "--heads", str(heads),
                        "--seqlen", str(s), "--tile-m", "128" if d == 64 else "64", "--json"],
                       capture_output=True, text=True, check=True)
    j = json.loads(r.stdout)
    return j["makespan"] / CLOCK * 1e9, j["prepost_cycles"] / CLOCK * 1e9  # ns


def block(d, s, mask, call_ms, main_ns, pre_ns, post_ns, unit="ns"):
    head = '"ID","Kernel Name","gpu__time_duration.sum"'
    rows = [head, f'"","","{unit}"']
    for call in range(3):
        rows += [f'"{3 * call}","void preprocess_kernel<{d}, 0>(PreParams)","{pre_ns:,.0f}"',
                 f'"{3 * call + 1}","void dash::rt::sm90::bwd_kernel<X>(BwdParams, TensorMaps)","{main_ns:,.0f}"',
                 f'"{3 * call + 2}","void postprocess_kernel<{d}, 0>(PostParams)","{post_ns:,.0f}"']
    timing = f"{d:<4} {s:<6} {mask:<6} {'symmetric-shift':<16} {'deterministic':<13} {call_ms:9.3f} {400.0:9.1f}"
    return "\n".join([f"## {d} {s} {mask}", "==PROF== Connected", timing, *rows]) + "\n"


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "kernel_times.csv")
    text = ""
    for d, s, mask in ((64, 4096, "causal"), (128, 8192, "full")):
        main_ns, prepost_ns = model(d, s, mask)
        text += block(d, s, mask, (main_ns + prepost_ns / 2) / 1e6, main_ns, prepost_ns / 4, prepost_ns / 4)
    with open(path, "w") as f:
        f.write(text)
    r = run([path, PROFILE, DASH])
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
    rows = [x for x in r.stdout.splitlines() if x.startswith("| 64 ") or x.startswith("| 128 ")]
    check(len(rows) == 2, f"a row per shape: {r.stdout!r}")
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        check(cells[6] == "1.000" and cells[7] == "1.000" and cells[8] == "2.00",
              f"kernels / call 1, makespan / main 1, pre/post term twice the passes: {row!r}")
    check("0 of 2 within 3%" not in r.stdout and "2 of 2 within 3%" in r.stdout, f"summary: {r.stdout!r}")

    # --records: the main-kernel durations as records for dash fidelity --main-kernel.
    out = os.path.join(tmp, "main.json")
    r = run([path, PROFILE, DASH, "--records", out])
    check(r.returncode == 0, f"--records: exit {r.returncode}: {r.stderr}")
    recs = json.load(open(out)) if os.path.exists(out) else []
    check(len(recs) == 2 and all(x["part"] == "main kernel" and x["mode"] == "det" for x in recs),
          f"two main-kernel records: {recs!r}")
    if len(recs) == 2:
        want = {(64, 4096, "causal"): 128, (128, 8192, "full"): 64}
        for x in recs:
            key = (x["head_dim"], x["seqlen_q"], x["mask"])
            main_ns, _ = model(*key)
            check(key in want and x["tile_m"] == want[key] and x["schedule_sms"] == 132
                  and x["batch"] == 16384 // key[1] and abs(x["ms"] - main_ns / 1e6) < 1e-6,
                  f"record of {key}: {x!r}")
        f = subprocess.run([DASH, "fidelity", os.path.join(ROOT, "docs", "results", "raw",
                                                           "2026-12-06-h100-bench-grid-dash-sm90.json"),
                            "--profile", PROFILE, "--main-kernel", out], capture_output=True, text=True)
        check(f.returncode == 0 and "makespan vs main-kernel durations: mean |log err| 0.000" in f.stdout
              and "2 of 2 within 3%" in f.stdout, f"dash fidelity --main-kernel: {f.returncode} {f.stdout[-400:]!r}")
    r = run([path, PROFILE, DASH, "--records"])
    check(r.returncode == 2 and "--records needs a file name" in r.stderr, f"--records alone: {r.stderr!r}")

    for args, why in (([path], "usage"), ([os.path.join(tmp, "missing.csv"), PROFILE, DASH], "missing file"),
                      ([path, os.path.join(tmp, "missing.json"), DASH], "missing profile")):
        r = run(args)
        check(r.returncode == 2 and r.stdout == "" and r.stderr.startswith("kernel_times.py: error: ")
              and len(r.stderr.splitlines()) == 1, f"{why}: exit {r.returncode}, {r.stderr!r}")
    bad = os.path.join(tmp, "bad.csv")
    with open(bad, "w") as f:
        f.write("## 64 4096 causal\nno ncu rows here\n")
    r = run([bad, PROFILE, DASH])
    check(r.returncode == 2 and "no ncu rows" in r.stderr, f"a block without rows: {r.stderr!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("kernel_times.py: all checks passed")
