"""Trains a small transformer twice with the same seed and compares the runs bit for bit.

    python examples/train_deterministic.py                    # dash_attn, then SDPA (flash/cuDNN)
    python examples/train_deterministic.py --steps 300 --json out/train.json --plot out/train.png
    python examples/train_deterministic.py --replot out/train.json --plot out/train.png   # no GPU

Every other op runs with torch.use_deterministic_algorithms(True, warn_only=True), so attention is
the only source of run-to-run differences: with dash_attn (deterministic backward, docs/design.md)
the two loss curves and the final weights are bitwise identical; with SDPA's flash or cuDNN backend
they are expected to differ. Synthetic data made here; nothing is downloaded. Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS

import torch
import torch.nn.functional as F


def attend(backend: str, q, k, v):
    """Causal attention of (batch, seqlen, heads, head_dim) tensors: dash_attn ("dash"), SDPA's flash
    or cuDNN backend ("sdpa"), or SDPA's math backend ("sdpa-math": deterministic, runs on the CPU)."""
    if backend == "dash":
        import dash_attn

        return dash_attn.attention(q, k, v, causal=True)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    kernels = [SDPBackend.MATH] if backend == "sdpa-math" else [SDPBackend.FLASH_ATTENTION,
                                                                 SDPBackend.CUDNN_ATTENTION]
    with sdpa_kernel(kernels):
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True)
    return o.transpose(1, 2)


class Block(torch.nn.Module):
    def __init__(self, dim: int, heads: int, backend: str):
        super().__init__()
        self.heads, self.backend = heads, backend
        self.norm1, self.norm2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.proj = torch.nn.Linear(dim, dim, bias=False)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(),
                                       torch.nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, s, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, dim // self.heads).unbind(2)
        x = x + self.proj(attend(self.backend, q, k, v).reshape(b, s, dim))
        return x + self.mlp(self.norm2(x))


class Model(torch.nn.Module):
    def __init__(self, vocab: int, dim: int, heads: int, layers: int, backend: str):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.blocks = torch.nn.ModuleList(Block(dim, heads, backend) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def batch(step: int, args, device: str = "cuda") -> torch.Tensor:
    """Learnable synthetic sequences: each continues an affine recurrence mod vocab with noise."""
    g = torch.Generator(device=device).manual_seed(10_000 + step)
    start = torch.randint(0, args.vocab, (args.batch, 1), device=device, generator=g)
    mult = torch.randint(1, 8, (args.batch, 1), device=device, generator=g)
    pos = torch.arange(args.seqlen + 1, device=device)[None]
    tokens = (start + mult * pos) % args.vocab
    noise = torch.rand(tokens.shape, device=device, generator=g) < 0.05
    return torch.where(noise, torch.randint_like(tokens, args.vocab, generator=g), tokens)


def weights_digest(model: torch.nn.Module) -> str:
    """SHA-256 of every parameter's bytes, in order: equal digests, bitwise equal weights."""
    digest = hashlib.sha256()
    for p in model.parameters():
        digest.update(p.detach().cpu().numpy().tobytes())
    return digest.hexdigest()


def train(backend: str, args) -> dict:
    torch.manual_seed(args.seed)
    model = Model(args.vocab, args.dim, args.heads, args.layers, backend).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    losses, times = [], []
    for step in range(args.steps):
        tokens = batch(step, args)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    times = sorted(times[5:]) or times
    return {"losses": losses, "weights_sha256": weights_digest(model),
            "median_step_ms": 1000 * times[len(times) // 2]}


def plot(report: dict, path: str) -> None:
    """The loss curves of both runs of each backend, and their difference, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    backends = [b for b in report["args"]["backends"].split(",") if b in report]
    fig, (ax, dx) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for backend in backends:
        a, b = (r["losses"] for r in report[backend]["runs"])
        ax.plot(a, label=f"{backend} run 1")
        ax.plot(b, "--", label=f"{backend} run 2")
        dx.plot([abs(x - y) for x, y in zip(a, b)], label=backend)
    ax.set_ylabel("loss")
    ax.set_title(f"{report['gpu']}, torch {report['torch']}")
    ax.legend()
    dx.set_ylabel("|run 1 - run 2|")
    dx.set_xlabel("step")
    dx.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def add_training_flags(ap: argparse.ArgumentParser) -> None:
    """The model, data and run flags both examples take (this one and train_ddp_deterministic.py)."""
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=8, help="sequences per step (data-parallel: in all)")
    ap.add_argument("--seqlen", type=int, default=1024)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--heads", type=int, default=4)  # head_dim 128
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backends", default="dash,sdpa", help="dash, sdpa (flash/cuDNN), sdpa-math")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_training_flags(ap)
    ap.add_argument("--json", help="write both runs of each backend here")
    ap.add_argument("--plot", help="write a PNG of the loss curves here (needs matplotlib)")
    ap.add_argument("--replot", help="only plot the report of an earlier --json run (with --plot; no GPU)")
    args = ap.parse_args()
    if args.replot:
        if not args.plot:
            raise SystemExit("train_deterministic.py: --replot needs --plot")
        with open(args.replot) as f:
            plot(json.load(f), args.plot)
        return
    if not torch.cuda.is_available():
        raise SystemExit("train_deterministic.py needs a CUDA GPU")
    torch.use_deterministic_algorithms(True, warn_only=True)
    report = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "args": vars(args)}
    for backend in args.backends.split(","):
        runs = [train(backend, args), train(backend, args)]
        same_losses = runs[0]["losses"] == runs[1]["losses"]
        same_weights = runs[0]["weights_sha256"] == runs[1]["weights_sha256"]
        first_diff = next((i for i, (a, b) in enumerate(zip(*(r["losses"] for r in runs))) if a != b), None)
        print(f"{backend}: final loss {runs[0]['losses'][-1]:.6f} / {runs[1]['losses'][-1]:.6f}; "
              f"loss curves {'bitwise identical' if same_losses else f'differ from step {first_diff}'}; "
              f"final weights {'identical' if same_weights else 'differ'}; "
              f"median step {runs[0]['median_step_ms']:.2f} / {runs[1]['median_step_ms']:.2f} ms")
        report[backend] = {"runs": runs, "identical_losses": same_losses, "identical_weights": same_weights}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    if args.plot:
        plot(report, args.plot)


if __name__ == "__main__":
    main()
