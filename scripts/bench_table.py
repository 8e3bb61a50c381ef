#!/usr/bin/env python3
"""Markdown tables of one benchmark run: `dash bench --json` and scripts/bench_torch.py records.

Table 1, a row per shape: PyTorch's backends, each strategy's deterministic TFLOP/s, fa3's
non-deterministic one, and for the best deterministic strategy its det/non-det ratio and the
simulator's predicted speedup over fa3 next to the measured one. Table 2, a row per shape: every
strategy's det/non-det ratio (its deterministic over its own non-deterministic TFLOP/s). Table 3,
when the PyTorch run has FlashAttention-4 (fa4-det, fa4): per shape and kernel family our best
deterministic and best non-deterministic TFLOP/s against FA4's, and the ratios.

Usage: scripts/bench_table.py --dash dash.json [--dash dash-sm90.json ...] [--torch torch.json]
       scripts/bench_table.py --round DASH [DASH ...] TORCH --round DASH [DASH ...] TORCH [...]
Several --dash files (one `dash bench` run per kernel family): strategies are labelled by family
("sm90 shift") where the records hold more than one.
--round (two or more): the same grid timed in rounds within one call, ours and FlashAttention-4
alternating (e.g. ours, FA4, FA4, ours), so that both meet the same clock states (the GPU's clock
steps under its power cap). One table: per shape and kernel family, the geometric mean over the
rounds of each round's best deterministic and non-deterministic TFLOP/s, ours and FA4's, the
ratios of those means, and the lowest and highest per-round det / FA4 det. Each --round names the
round's `dash bench --json` files (one per kernel family), then its bench_torch.py file.
A missing file counts as no records (the run's logs say why; --round names it under the table); a
malformed one is an error, exit 2.
"""
import argparse
import json
import os
import statistics
import sys


def fail(message):
    print(f"bench_table.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def load(path):
    if path is None or not os.path.exists(path):
        return []
    try:
        with open(path) as f:
            records = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    if not isinstance(records, list):
        fail(f"{path}: expected a JSON list of records")
    return records


def key(r):
    return (r["head_dim"], r["mask"], r["seqlen_q"], r["batch"], r["heads"],
            r.get("kv_heads", r["heads"]), r.get("seqlen_k", r["seqlen_q"]))


def shape_cells(k):
    """d, mask, seqlen (s_q x s_k where they differ), b x h (h / kv heads under GQA)."""
    d, mask, s, b, h, hk, sk = k
    return [str(d), mask, str(s) if sk == s else f"{s}x{sk}", f"{b} x {h}" if hk == h else f"{b} x {h}/{hk}"]


def cell(v, fmt="{:.1f}"):
    return "-" if v is None else fmt.format(v)


def row_line(cells):
    return "| " + " | ".join(cells) + " |"


def header(cells):
    return [row_line(cells), "|" + "|".join("---" for _ in cells) + "|"]


def ratio(a, b):
    return None if a is None or b is None else a / b


def best_tflops(records, k, pick):
    """The highest TFLOP/s among the records of shape k that `pick` accepts (None if none ran)."""
    return max((r["tflops"] for r in records if key(r) == k and pick(r) and r.get("tflops") is not None),
               default=None)


def shapes_of(records):
    """Every shape of the records, once: by head dim, full before causal, by length."""
    shapes = []
    for r in records:
        if key(r) not in shapes:
            shapes.append(key(r))
    return sorted(shapes, key=lambda k: (k[0], k[1] != "full", k[2]))


def family_of(r):
    kernel = r.get("kernel") or ""
    return "sm90" if "wgmma" in kernel else "sm80" if "mma-sync" in kernel else None


def label_families(dash):
    """Prefixes each strategy with its kernel family when the records hold several families."""
    families = {family_of(r) for r in dash if family_of(r) is not None}
    if len(families) < 2:
        return dash
    out = []
    for r in dash:
        fam = family_of(r)
        if fam is None:  # a refused record: the family of its file's other records
            fam = r.get("_file_family")
        out.append(dict(r, strategy=f"{fam} {r['strategy']}" if fam else r["strategy"]))
    return out


def fa4_table(dash, torch, shapes):
    fa4 = [r for r in torch if r["backend"] in ("fa4", "fa4-det")]
    if not fa4:
        return []
    families = sorted({family_of(r) for r in dash if family_of(r) is not None})
    out = ["", "### vs FlashAttention-4 (same run): best deterministic and non-deterministic TFLOP/s", ""]
    cols = ["d", "mask", "seqlen", "b x h", "FA4 det", "FA4 nondet"]
    for fam in families:
        cols += [f"{fam} det", f"{fam} nondet", f"{fam} det / FA4 det", f"{fam} nondet / FA4 nondet",
                 f"{fam} det / nondet"]
    out += header(cols)

    for k in shapes:
        det = next((r.get("tflops") for r in fa4 if key(r) == k and r["backend"] == "fa4-det"), None)
        nd = next((r.get("tflops") for r in fa4 if key(r) == k and r["backend"] == "fa4"), None)
        row = shape_cells(k) + [cell(det), cell(nd)]
        for fam in families:
            od = best_tflops(dash, k, lambda r: family_of(r) == fam and r["mode"] == "det")
            on = best_tflops(dash, k, lambda r: family_of(r) == fam and r["mode"] == "nondet")
            row += [cell(od), cell(on), cell(ratio(od, det), "{:.3f}"), cell(ratio(on, nd), "{:.3f}"),
                    cell(ratio(od, on), "{:.3f}")]
        out.append(row_line(row))
    return out


def tables(dash, torch):
    shapes = shapes_of(dash + torch)
    strategies = []
    for r in dash:
        if r["strategy"] not in strategies:
            strategies.append(r["strategy"])
    backends = []
    for r in torch:
        if r["backend"] not in backends:
            backends.append(r["backend"])

    def dash_rec(k, strategy, mode):
        return next((r for r in dash if key(r) == k and r["strategy"] == strategy and r["mode"] == mode), None)

    out = []
    first = (dash or torch or [{}])[0]
    out.append("## dash bench vs PyTorch SDPA: backward TFLOP/s, bf16")
    out.append("")
    out.append(f"GPU: {first.get('gpu', '?')} ({first.get('sms', '?')} SMs); date {first.get('date', '?')}; "
               f"commit {first.get('commit') or '?'}; median of {first.get('iters', '?')} after "
               f"{first.get('warmup', '?')} warm-up calls, CUDA events around the backward call.")
    if torch:
        t = torch[0]
        out.append(f"PyTorch {t.get('torch')} (CUDA {t.get('cuda')}, cuDNN {t.get('cudnn')}), SDPA backward only "
                   "(autograd.grad on a recorded forward).")
    out.append("FLOPs = 2.5 x 4*b*h*s*s*d, halved for causal. `det/nd`: det over non-det TFLOP/s of the best "
               "deterministic strategy; `pred`/`meas`: its speedup over fa3 (deterministic), simulated vs measured.")
    out.append("")
    out += header(["d", "mask", "seqlen", "b x h"] + [f"SDPA {b}" if b in ("flash", "cudnn") else b.upper() for b in backends] +
                  [f"{s} det" for s in strategies] + ["fa3 nondet", "best det", "det/nd", "pred", "meas"])
    for k in shapes:
        row = shape_cells(k)
        for be in backends:
            rec = next((r for r in torch if key(r) == k and r["backend"] == be), None)
            row.append(cell(rec and rec.get("tflops")) if rec is None or rec["status"] == "ok" else "failed")
        det = {}
        for st in strategies:
            rec = dash_rec(k, st, "det")
            if rec is not None and rec["status"] == "refused":
                row.append("refused")
            else:
                row.append(cell(rec and rec.get("tflops")))
                if rec is not None and rec.get("tflops") is not None:
                    det[st] = rec
        # fa3's non-deterministic run (with several families: the fastest family's).
        fa3_nd = max((r for r in dash if key(r) == k and r["mode"] == "nondet" and r.get("tflops") is not None
                      and (r["strategy"] == "fa3" or r["strategy"].endswith(" fa3"))),
                     key=lambda r: r["tflops"], default=None)
        row.append(cell(fa3_nd and fa3_nd.get("tflops")))
        if det:
            best = max(det.values(), key=lambda r: r["tflops"])
            row += [best["strategy"], cell(best.get("det_over_nondet"), "{:.3f}"),
                    cell(best.get("predicted_vs_fa3"), "{:.3f}x"), cell(best.get("measured_vs_fa3"), "{:.3f}x")]
        else:
            row += ["-", "-", "-", "-"]
        out.append(row_line(row))
    if dash:
        out.append("")
        out.append("### det/nd per strategy: deterministic over the same strategy's non-deterministic TFLOP/s")
        out.append("")
        out += header(["d", "mask", "seqlen", "b x h"] + strategies)
        for k in shapes:
            row = shape_cells(k)
            for st in strategies:
                rec = dash_rec(k, st, "det")
                row.append(cell(rec and rec.get("det_over_nondet"), "{:.3f}"))
            out.append(row_line(row))
    else:
        out.append("\n(no dash results: see dash.log)")
    if not torch:
        out.append("\n(no PyTorch results: see torch.log)")
    out += fa4_table(dash, torch, shapes)
    return out


def rounds_table(rounds):
    """The --round table: rounds is a list of (dash records, torch records)."""
    shapes = shapes_of([r for dash, torch in rounds for r in dash + torch])
    families = sorted({family_of(r) for dash, _ in rounds for r in dash if family_of(r) is not None})
    out = [f"### vs FlashAttention-4, {len(rounds)} rounds: geometric mean of each round's best TFLOP/s", ""]
    cols = ["d", "mask", "seqlen", "b x h", "FA4 det", "FA4 nondet"]
    for fam in families:
        cols += [f"{fam} det", f"{fam} nondet", f"{fam} det / FA4 det", f"{fam} nondet / FA4 nondet",
                 f"{fam} det / nondet", f"{fam} det / FA4 det per round"]
    out += header(cols)

    def gmean(values):
        return None if not values or None in values else statistics.geometric_mean(values)

    for k in shapes:
        fd = [best_tflops(t, k, lambda r: r["backend"] == "fa4-det") for _, t in rounds]
        fn = [best_tflops(t, k, lambda r: r["backend"] == "fa4") for _, t in rounds]
        row = shape_cells(k) + [cell(gmean(fd)), cell(gmean(fn))]
        for fam in families:
            od = [best_tflops(d, k, lambda r: family_of(r) == fam and r["mode"] == "det") for d, _ in rounds]
            on = [best_tflops(d, k, lambda r: family_of(r) == fam and r["mode"] == "nondet") for d, _ in rounds]
            per = [ratio(a, b) for a, b in zip(od, fd)]
            spread = "-" if None in per else f"{min(per):.3f}-{max(per):.3f}"
            row += [cell(gmean(od)), cell(gmean(on)), cell(ratio(gmean(od), gmean(fd)), "{:.3f}"),
                    cell(ratio(gmean(on), gmean(fn)), "{:.3f}"), cell(ratio(gmean(od), gmean(on)), "{:.3f}"), spread]
        out.append(row_line(row))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dash", action="append", help="dash bench --json output (repeatable)")
    parser.add_argument("--torch", help="scripts/bench_torch.py --json output")
    parser.add_argument("--round", nargs="+", action="append", metavar="FILE",
                        help="one round's dash bench JSON files, then its bench_torch.py JSON "
                             "(two or more rounds)")
    args = parser.parse_args()
    if args.round is not None:
        if args.dash or args.torch:
            fail("--round excludes --dash and --torch")
        if len(args.round) < 2:
            fail("--round: two or more rounds")
        for files in args.round:
            if len(files) < 2:
                fail(f"--round {files[0]}: a round is one or more dash files, then a torch file")
        try:
            lines = rounds_table([([r for d in files[:-1] for r in load(d)], load(files[-1]))
                                  for files in args.round])
            lines += [f"\n(round {i}: {path} missing: that run failed, see its log)"
                      for i, files in enumerate(args.round, 1) for path in files if not os.path.exists(path)]
        except (KeyError, TypeError) as e:
            fail(f"a record lacks a field or has the wrong type: {e}")
        print("\n".join(lines))
        return
    if not args.dash:
        fail("--dash (or --round) is required")
    try:
        dash = []
        for path in args.dash:
            records = load(path)
            fams = {family_of(r) for r in records if family_of(r) is not None}
            file_family = fams.pop() if len(fams) == 1 else None
            dash += [dict(r, _file_family=file_family) for r in records]
        lines = tables(label_families(dash), load(args.torch))
    except (KeyError, TypeError) as e:
        fail(f"a record lacks a field or has the wrong type: {e}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
