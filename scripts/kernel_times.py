#!/usr/bin/env python3
"""Tables the kernel durations of scripts/kernel_times.sh next to the cost model: per grid shape the
preprocess, main kernel and postprocess (median of the timed calls, microseconds), their sum over
the call time rt_bench measured in the same run, the model's makespan over the main kernel, and
the model's pre/post term (prepost_cycles) over the two passes, both at the profile's clock
(`dash simulate --profile P --json`). Splits the call-level error `dash fidelity` reports into the
main kernel's and the passes'. Last: the pre/postprocess rate the measured passes imply.
With --records OUT it also writes the main-kernel durations as bench-style records marked
"part": "main kernel" (the grid problem, the Q tile from the kernel's name or DEFAULT_TILE_M,
the profile's SMs), which `dash fidelity --main-kernel OUT` compares the makespan with and fits to.

Usage: scripts/kernel_times.py FILE PROFILE [DASH] [--records OUT]   (DASH: the dash binary, default
       build/tools/dash)
Exit 2 with one line on stderr for a missing or malformed file or a failing dash run.
"""
import csv
import io
import json
import math
import re
import statistics
import subprocess
import sys


def fail(msg):
    print(f"kernel_times.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")


# The sm90 family's Q tile per head dim before the kernel was templated on its tile, for files whose
# kernel names do not carry one (every mask; the 80-row tile at d128 came with the template).
DEFAULT_TILE_M = {64: 128, 128: 64}


def shapes(text, path):
    """[(d, seqlen, mask, pre_us, main_us, post_us, call_ms, tile_m)] per '## d s mask' block."""
    out = []
    for block in re.split(r"^## ", text, flags=re.M)[1:]:
        head, _, rest = block.partition("\n")
        try:
            d, s, mask = head.split()
            d, s = int(d), int(s)
        except ValueError:
            fail(f"{path}: bad block header '## {head}'")
        call_ms = None
        for line in rest.splitlines():
            m = re.match(r"\s*\d+\s+\d+\s+\w+\s+symmetric-shift\s+deterministic\s+([\d.]+)\s", line)
            if m:
                call_ms = float(m.group(1))
        rows = list(csv.reader(io.StringIO("\n".join(l for l in rest.splitlines() if l.startswith('"')))))
        if len(rows) < 3 or "Kernel Name" not in rows[0] or "gpu__time_duration.sum" not in rows[0]:
            fail(f"{path}: {d}/{s}/{mask}: no ncu rows with kernel names and gpu__time_duration.sum")
        name = rows[0].index("Kernel Name")
        col = rows[0].index("gpu__time_duration.sum")
        scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}.get(rows[1][col])
        if scale is None:
            fail(f"{path}: {d}/{s}/{mask}: unknown duration unit '{rows[1][col]}'")
        parts = {"pre": [], "main": [], "post": []}
        tile_m = DEFAULT_TILE_M.get(d)
        for r in rows[2:]:
            key = "pre" if "preprocess" in r[name] else "post" if "postprocess" in r[name] else "main"
            parts[key].append(float(r[col].replace(",", "")) * scale)
            # bwd_kernel<Policy, D, DT, TM>: the Q tile is the fourth argument where there is one.
            m = re.search(r"bwd_kernel<[^,<>]+,\s*\d+,\s*\d+,\s*(\d+)>", r[name])
            if key == "main" and m:
                tile_m = int(m.group(1))
        if any(not v for v in parts.values()) or call_ms is None:
            fail(f"{path}: {d}/{s}/{mask}: a kernel or the rt_bench time is missing")
        if tile_m is None:
            fail(f"{path}: {d}/{s}/{mask}: head dim {d} has no sm90 Q tile")
        out.append((d, s, mask, *(statistics.median(parts[k]) for k in ("pre", "main", "post")), call_ms, tile_m))
    if not out:
        fail(f"{path}: no '## d seqlen mask' blocks")
    return out


def main():
    args = sys.argv[1:]
    records = None
    if "--records" in args:
        at = args.index("--records")
        if at + 1 >= len(args):
            fail("--records needs a file name")
        records = args[at + 1]
        del args[at:at + 2]
    if len(args) not in (2, 3):
        fail("usage: scripts/kernel_times.py FILE PROFILE [DASH] [--records OUT]")
    path, profile = args[0], args[1]
    dash = args[2] if len(args) == 3 else "build/tools/dash"
    try:
        prof = json.loads(read(profile))
        clock = float(prof["clock_mhz"]) * 1e6
        sms = int(prof["sms"])
        rate = int(prof["families"]["sm90"]["prepost_bytes_per_cycle"])
    except (ValueError, KeyError, TypeError) as e:
        fail(f"{profile}: not a machine profile with clock_mhz, sms and an sm90 prepost rate ({e})")
    rows = shapes(read(path), path)
    print("| d | mask | seqlen | pre (us) | main (us) | post (us) | kernels / call | model makespan / main | "
          "model pre+post / measured |")
    print("|---|---|---|---|---|---|---|---|---|")
    main_err, pass_err, implied, out = [], [], [], []
    for d, s, mask, pre, kernel, post, call_ms, tile_m in rows:
        heads = 32 if d == 64 else 16  # the DASH grid: 16384 tokens per batch, 2048 model width
        cmd = [dash, "simulate", "--profile", profile, "--sms", str(sms), "--strategy", "symmetric-shift",
               "--head-dim", str(d), "--mask", mask, "--batch", str(16384 // s), "--heads", str(heads),
               "--seqlen", str(s), "--tile-m", str(tile_m), "--json"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"{' '.join(cmd)}: {run.stderr.strip() or run.returncode}")
        sim = json.loads(run.stdout)
        makespan_us = sim["makespan"] / clock * 1e6
        prepost_us = sim["prepost_cycles"] / clock * 1e6
        main_err.append(math.log(makespan_us / kernel))
        pass_err.append(math.log(prepost_us / (pre + post)))
        implied.append(sim["prepost_cycles"] * rate / ((pre + post) * 1e-6 * clock))
        print(f"| {d} | {mask} | {s} | {pre:.1f} | {kernel:.1f} | {post:.1f} | {(pre + kernel + post) / 1e3 / call_ms:.3f} "
              f"| {makespan_us / kernel:.3f} | {prepost_us / (pre + post):.2f} |")
        out.append({"part": "main kernel", "mode": "det", "strategy": "symmetric-shift", "batch": 16384 // s,
                    "heads": heads, "kv_heads": heads, "seqlen_q": s, "seqlen_k": s, "head_dim": d, "tile_m": tile_m,
                    "tile_n": 128, "mask": mask, "schedule_sms": sms, "ms": kernel / 1e3, "pre_ms": pre / 1e3,
                    "post_ms": post / 1e3, "source": path})
    within = sum(abs(e) < math.log(1.03) for e in main_err)
    print(f"\nmain kernel: model makespan mean |log error| {statistics.mean(abs(e) for e in main_err):.3f}, "
          f"{within} of {len(main_err)} within 3%; pre/post term: mean log error {statistics.mean(pass_err):+.3f}; "
          f"the measured passes move the model's bytes at {statistics.median(implied):.0f} B/cycle "
          f"(median; the profile says {rate})")
    if records is not None:
        try:
            with open(records, "w") as f:
                json.dump(out, f, indent=1)
                f.write("\n")
        except OSError as e:
            fail(f"{records}: {e.strerror}")


if __name__ == "__main__":
    main()
