#!/usr/bin/env python3
"""Multi-GPU scaling of the attention backward on paper: the cost model's makespan (`dash compare
--json`, the best named strategy per share, as the PyTorch op's schedule="auto" picks) of each
GPU's share of one problem split over G GPUs, three ways:

  data-parallel  each GPU takes batch / G whole sequences (G must divide the batch);
  sequence, contiguous
                 each GPU takes seqlen / G consecutive query rows of every sequence against the
                 keys they see: rank r's share is seqlen_q = S/G against seqlen_k = (r+1) S/G under
                 a causal mask (bottom-right aligned, as the model and the kernels align it), S
                 under a full one;
  sequence, zigzag
                 (causal) each GPU takes two chunks of S/2G rows, r and 2G-1-r, so every rank sees
                 about the same work: two varlen sequences per batch element.

The step time of a split is its slowest GPU's makespan. The model has no term for communication
between GPUs (the gradients' all-reduce under data parallelism, the K/V exchange and dK/dV
reduction under sequence parallelism): these figures are the attention backward's share of the
step, per GPU, with that traffic left out.

Usage: scripts/scaling.py --dash PATH [--gpus 1,2,4,8] [--batch 8] [--heads 16] [--head-dim 128]
                          [--seqlen 8192] [--masks causal,full] [--json FILE]
Prints one markdown table per mask. Exit 2 with one line on stderr on bad input or a failed
`dash` call.
"""
import argparse
import json
import subprocess
import sys


def fail(msg):
    print(f"scaling.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def int_list(text, what):
    try:
        vals = [int(x) for x in text.split(",") if x]
    except ValueError:
        fail(f"{what}: want comma-separated integers, got '{text}'")
    if not vals or min(vals) < 1:
        fail(f"{what}: want positive integers, got '{text}'")
    return vals


class Dash:
    """Runs `dash compare --json` and keeps each answer (the same share recurs across G)."""

    def __init__(self, path, heads, head_dim):
        self.path, self.heads, self.head_dim, self.cache = path, heads, head_dim, {}

    def best(self, mask, batch=None, seqlen=None, seqlens=None, seqlens_k=None):
        """(makespan in cycles, strategy) of the fastest named strategy the model rates."""
        args = [self.path, "compare", "--json", "--search-budget", "0", "--heads", str(self.heads),
                "--head-dim", str(self.head_dim), "--mask", mask]
        if seqlens is not None:
            args += ["--seqlens", ",".join(map(str, seqlens)), "--seqlens-k", ",".join(map(str, seqlens_k))]
        else:
            args += ["--batch", str(batch), "--seqlen", str(seqlen)]
        key = tuple(args)
        if key not in self.cache:
            try:
                r = subprocess.run(args, capture_output=True, text=True)
            except OSError as e:
                fail(f"{self.path}: {e.strerror}")
            if r.returncode != 0:
                fail(f"dash compare failed: {(r.stderr.strip().splitlines() or ['exit ' + str(r.returncode)])[-1]}")
            # compare marks the fastest row "best" (named only here: --search-budget 0, no file).
            top = next((e for e in json.loads(r.stdout) if e.get("best")), None)
            if top is None:
                fail(f"no named strategy takes {' '.join(args[2:])}")
            self.cache[key] = (top["makespan"], top["strategy"])
        return self.cache[key]


def split(dash, how, mask, gpus, batch, seqlen):
    """Per-rank (makespan, strategy) of one split, or None where it does not divide."""
    if how == "data":
        if batch % gpus:
            return None
        share = dash.best(mask, batch=batch // gpus, seqlen=seqlen)
        return [share] * gpus
    if how == "contiguous":
        if seqlen % gpus:
            return None
        q = seqlen // gpus
        return [dash.best(mask, seqlens=[q] * batch, seqlens_k=[(r + 1) * q if mask == "causal" else seqlen] * batch)
                for r in range(gpus)]
    if seqlen % (2 * gpus):
        return None
    c = seqlen // (2 * gpus)
    ranks = []
    for r in range(gpus):
        ks = [(r + 1) * c, (2 * gpus - r) * c] if mask == "causal" else [seqlen, seqlen]
        ranks.append(dash.best(mask, seqlens=[c, c] * batch, seqlens_k=ks * batch))
    return ranks


LABELS = {"data": "data-parallel", "contiguous": "sequence, contiguous", "zigzag": "sequence, zigzag"}


def main():
    ap = argparse.ArgumentParser(prog="scaling.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--dash", required=True, help="the dash CLI")
    ap.add_argument("--gpus", default="1,2,4,8")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--seqlen", type=int, default=8192)
    ap.add_argument("--masks", default="causal,full")
    ap.add_argument("--json", help="also write every figure as JSON here")
    try:
        a = ap.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)
    gpus = int_list(a.gpus, "--gpus")
    masks = [m for m in a.masks.split(",") if m]
    for m in masks:
        if m not in ("causal", "full"):
            fail(f"--masks: causal or full, got '{m}'")
    if a.batch < 1 or a.heads < 1 or a.seqlen < 1:
        fail("--batch, --heads and --seqlen must be positive")
    dash = Dash(a.dash, a.heads, a.head_dim)
    out = []
    for mask in masks:
        one, one_strategy = dash.best(mask, batch=a.batch, seqlen=a.seqlen)
        print(f"\n### {mask}: batch {a.batch}, {a.heads} heads, head dim {a.head_dim}, seqlen {a.seqlen}; "
              f"one GPU {one} cycles\n")
        print("| GPUs | split | slowest GPU (cycles) | speedup | efficiency | max / mean over GPUs | strategies |")
        print("|---|---|---|---|---|---|---|")
        for g in gpus:
            if g == 1:
                print(f"| 1 | one GPU | {one} | 1.00 | 1.00 | 1.00 | {one_strategy} |")
                continue
            for how in ("data", "contiguous", "zigzag"):
                if how == "zigzag" and mask == "full":
                    continue  # the same work per rank as contiguous
                ranks = split(dash, how, mask, g, a.batch, a.seqlen)
                if ranks is None:
                    continue
                spans = [s for s, _ in ranks]
                slowest = max(spans)
                row = {"mask": mask, "gpus": g, "split": how, "rank_makespans": spans,
                       "rank_strategies": [n for _, n in ranks], "slowest": slowest, "one_gpu": one,
                       "speedup": one / slowest, "efficiency": one / (g * slowest),
                       "imbalance": slowest / (sum(spans) / len(spans))}
                out.append(row)
                names = sorted(set(row["rank_strategies"]))
                print(f"| {g} | {LABELS[how]} | {slowest} | {row['speedup']:.2f} | {row['efficiency']:.2f} | "
                      f"{row['imbalance']:.2f} | {', '.join(names)} |")
    if a.json:
        try:
            with open(a.json, "w") as f:
                json.dump({"batch": a.batch, "heads": a.heads, "head_dim": a.head_dim, "seqlen": a.seqlen,
                           "rows": out}, f, indent=1)
        except OSError as e:
            fail(f"{a.json}: {e.strerror}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
