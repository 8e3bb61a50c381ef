#!/usr/bin/env python3
"""PyTorch SDPA attention backward on the `dash bench` grid: the peers measured the same way.

Grid (docs/design.md section 6): total tokens 16384 (batch = 16384 / seqlen), hidden 2048
(heads = 2048 / head_dim), head_dim 64 and 128, seqlen 512..16384, full and causal, bf16.
Backends: flash and cuDNN through torch.nn.attention.sdpa_kernel; FlashAttention-4 (flash_attn.cute,
its sm90 backward on Hopper) non-deterministic (fa4) and deterministic (fa4-det) when it is
importable. Tensors are laid out as FlashAttention's (batch, seqlen, heads, head_dim), handed to
SDPA transposed to (b, h, s, d) and to FA4 as they are.
Backward only: torch.autograd.grad on a recorded forward (retain_graph), CUDA events around each
call, warm-up calls apart, median of >= 10, inputs rotated over enough sets to exceed L2, seeded
random inputs (never zeros).

  python3 scripts/bench_torch.py [--head-dims 64,128] [--seqlens ...] [--masks full,causal]
                                 [--backends auto|flash,cudnn,fa4,fa4-det] [--iters 10] [--warmup 3]
                                 [--json FILE]
  --backends auto (default): flash and cudnn, and fa4, fa4-det where flash_attn.cute imports.
             dash, dash-nd: our op (dash_attn.attention, deterministic and not) with the schedule
             of --dash-schedule (default auto: the model's fastest named strategy); by name only,
             for the speed of the op next to the peers and to `dash bench` (the C++ path).
  --offgrid: instead of the grid, the shapes where FlashAttention-4's fixed deterministic order
             costs it most (head_dim 128: GQA 16/2 causal and full, GQA 16/4 causal, a (1024, 0)
             sliding window, 2k queries on 16k keys), FlashAttention-4 only (SDPA has no GQA or
             window backward here). FLOPs count visible (query, key) pairs exactly, bottom-right
             aligned, as `dash bench` does.

Bad input or no GPU: one line on stderr, exit code 2.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile

DEFAULT_SEQLENS = "512,1024,2048,4096,8192,16384"


def fail(message):
    print(f"bench_torch: error: {message}", file=sys.stderr)
    sys.exit(2)


def int_list(text, flag):
    parts = text.split(",")
    values = []
    for part in parts:
        if not part.isdigit() or int(part) <= 0:
            fail(f"{flag}: '{part}' is not a positive integer (expected e.g. 512,1024)")
        if int(part) in values:
            fail(f"{flag}: {part} is listed twice")
        values.append(int(part))
    return values


def name_list(text, flag, known):
    names = text.split(",")
    for name in names:
        if name not in known:
            fail(f"{flag}: unknown entry '{name}' (expected {', '.join(known)})")
    if len(set(names)) != len(names):
        fail(f"{flag}: an entry is listed twice")
    return names


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--head-dims", default="64,128")
    p.add_argument("--seqlens", default=DEFAULT_SEQLENS)
    p.add_argument("--masks", default="full,causal")
    p.add_argument("--total-tokens", type=int, default=16384)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--backends", default="auto")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--commit", default="")
    p.add_argument("--json", dest="json_file", default="")
    p.add_argument("--offgrid", action="store_true")
    p.add_argument("--dash-schedule", default="auto")

    # argparse's own errors exit 2 with a usage block; keep them to one line like dash.
    p.error = lambda message: fail(message)
    args = p.parse_args(argv)
    if args.iters < 10:
        fail(f"--iters must be >= 10 (a median of >= 10), got {args.iters}")
    if args.warmup < 1:
        fail(f"--warmup must be >= 1, got {args.warmup}")
    if args.total_tokens <= 0 or args.hidden <= 0:
        fail("--total-tokens and --hidden must be positive")
    args.head_dims = int_list(args.head_dims, "--head-dims")
    args.seqlens = int_list(args.seqlens, "--seqlens")
    args.masks = name_list(args.masks, "--masks", ["full", "causal"])
    if args.backends == "auto" and args.offgrid:
        if not fa4_available():
            fail("--offgrid times FlashAttention-4, and flash_attn.cute does not import")
        args.backends = ["fa4", "fa4-det"]
    elif args.backends == "auto":
        args.backends = ["flash", "cudnn"] + (["fa4", "fa4-det"] if fa4_available() else [])
    else:
        known = ["flash", "cudnn", "fa4", "fa4-det", "dash", "dash-nd"]
        args.backends = name_list(args.backends, "--backends", known)
        if any(b.startswith("dash") for b in args.backends) and not dash_available():
            fail("--backends dash/dash-nd: dash_attn does not import "
                 "(pip install ./python, or DASH_ATTN_LIBRARY)")
    for d in args.head_dims:
        if args.hidden % d:
            fail(f"--head-dims: {d} does not divide the hidden size {args.hidden}")
    for s in args.seqlens:
        if args.total_tokens % s:
            fail(f"--seqlens: {s} does not divide the total tokens {args.total_tokens}")
    if args.json_file:
        parent = os.path.dirname(os.path.abspath(args.json_file))
        if not os.path.isdir(parent):
            fail(f"--json {args.json_file}: directory {parent} does not exist")
    return args


def fa4_available():
    try:
        from flash_attn.cute.interface import flash_attn_func  # noqa: F401
    except Exception:  # not installed, or installed without a usable GPU stack
        return False
    return True


def dash_available():
    try:
        import dash_attn  # noqa: F401
    except Exception:  # not installed, or its native library does not load
        return False
    return True


# The off-grid cases: (batch, q heads, kv heads, seqlen_q, seqlen_k, mask) at head_dim 128.
OFFGRID = [
    (2, 16, 2, 8192, 8192, "causal"),
    (2, 16, 2, 8192, 8192, "full"),
    (2, 16, 4, 8192, 8192, "causal"),
    (2, 16, 16, 8192, 8192, "window:1024,0"),
    (4, 16, 16, 2048, 16384, "causal"),
]


def band(mask):
    """(left, right) of a mask, None meaning unbounded; None for the full mask."""
    if mask == "full":
        return None
    if mask == "causal":
        return (None, 0)
    left, right = mask[len("window:"):].split(",")
    return (int(left), int(right))


def visible_pairs(sq, sk, mask):
    """(query, key) pairs a mask leaves visible, bottom-right aligned (row r's diagonal is r + sk - sq)."""
    lr = band(mask)
    if lr is None:
        return sq * sk
    left, right = lr
    total = 0
    for r in range(sq):
        diag = r + sk - sq
        lo = 0 if left is None else max(0, diag - left)
        hi = min(sk - 1, diag + right)
        total += max(0, hi - lo + 1)
    return total


def forward(backend, q, k, v, mask, backends, dash_schedule="auto"):
    """O of one recorded forward through `backend`, for torch.autograd.grad."""
    import torch
    from torch.nn.attention import sdpa_kernel
    causal = mask == "causal"
    if backend in ("dash", "dash-nd"):
        import dash_attn
        window = band(mask) if mask.startswith("window:") else None
        if window is not None:
            window = tuple(-1 if side is None else side for side in window)
        return dash_attn.attention(q, k, v, causal=causal, window=window, deterministic=backend == "dash",
                                   schedule=dash_schedule)
    if backend in ("fa4", "fa4-det"):
        from flash_attn.cute.interface import flash_attn_func
        window = band(mask) if mask.startswith("window:") else (None, None)
        o = flash_attn_func(q, k, v, causal=causal, window_size=window, deterministic=backend == "fa4-det")
        return o[0] if isinstance(o, tuple) else o
    with sdpa_kernel(backends[backend]):
        return torch.nn.functional.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal)


def backward_flops(b, h, s, d, causal):
    """2.5 x forward; forward = 4*b*h*s*s*d, halved for causal (s_q = s_k): the grid's rule."""
    return 2.5 * 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)


def shapes(args):
    """(batch, heads, kv_heads, seqlen_q, seqlen_k, head_dim, mask, flops) of every case to time."""
    if args.offgrid:
        return [(b, h, hk, sq, sk, 128, mask, 2.5 * 4.0 * b * h * 128 * visible_pairs(sq, sk, mask))
                for b, h, hk, sq, sk, mask in OFFGRID]
    out = []
    for d in args.head_dims:
        for mask in args.masks:
            for s in args.seqlens:
                b, h = args.total_tokens // s, args.hidden // d
                out.append((b, h, h, s, s, d, mask, backward_flops(b, h, s, d, mask == "causal")))
    return out


def write_atomic(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".bench_torch.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv):
    args = parse_args(argv)
    try:
        import torch
        from torch.nn.attention import SDPBackend
    except ImportError as e:
        fail(f"needs PyTorch with torch.nn.attention ({e})")
    if not torch.cuda.is_available():
        fail("needs a CUDA GPU and none is visible")

    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 60 << 20)
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    run = {
        "tool": "torch",
        "date": date,
        "gpu": props.name,
        "sms": props.multi_processor_count,
        "commit": args.commit or None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "dtype": "bf16",
        "iters": args.iters,
        "warmup": args.warmup,
        "seed": args.seed,
        "dash_schedule": args.dash_schedule if any(b.startswith("dash") for b in args.backends) else None,
    }
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)
    records = []
    for b, h, hk, sq, sk, d, mask, flops in shapes(args):
        causal = mask == "causal"
        set_bytes = (2 * b * sq * h + 2 * b * sk * hk + b * sq * h) * d * 2  # q, o, dout, k, v in bf16
        sets = max(2, min(64, 2 + l2_bytes // set_bytes))
        for backend in args.backends:
            rec = dict(run, backend=backend, batch=b, heads=h, kv_heads=hk, seqlen_q=sq, seqlen_k=sk,
                       head_dim=d, mask=mask, causal=causal, flops=flops, input_sets=sets)
            try:
                inputs = []
                for _ in range(sets):
                    # FlashAttention's layout (b, s, h, d).
                    q = (torch.empty(b, sq, h, d, device="cuda", dtype=torch.bfloat16)
                         .uniform_(-1.0, 1.0, generator=gen).requires_grad_())
                    k, v = (torch.empty(b, sk, hk, d, device="cuda", dtype=torch.bfloat16)
                            .uniform_(-1.0, 1.0, generator=gen).requires_grad_() for _ in range(2))
                    o = forward(backend, q, k, v, mask, backends, args.dash_schedule)
                    dout = torch.empty_like(o).uniform_(-1.0, 1.0, generator=gen)
                    inputs.append((q, k, v, o, dout))
                calls = args.warmup + args.iters
                events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                          for _ in range(args.iters)]
                for call in range(calls):
                    q, k, v, o, dout = inputs[call % sets]
                    timed = call >= args.warmup
                    if timed:
                        events[call - args.warmup][0].record()
                    torch.autograd.grad(o, (q, k, v), dout, retain_graph=True)
                    if timed:
                        events[call - args.warmup][1].record()
                torch.cuda.synchronize()
                times = [start.elapsed_time(stop) for start, stop in events]
                ms = statistics.median(times)
                rec.update(status="ok", ms=ms, tflops=flops / (ms * 1e-3) / 1e12, ms_all=times)
                print(f"{d:4} {mask:14} {sq:6}x{sk:<6} b={b:<3} h={h:<3}/{hk:<3} {backend:8} {ms:9.3f} ms "
                      f"{rec['tflops']:7.1f} TFLOP/s", flush=True)
            except Exception as e:  # a backend refusing a shape is a result, not a crash
                rec.update(status="failed", error=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}",
                           ms=None, tflops=None, ms_all=[])
                print(f"{d:4} {mask:14} {sq:6}x{sk:<6} {backend:8} failed: {rec['error']}", flush=True)
            finally:
                inputs = None
                torch.cuda.empty_cache()
            records.append(rec)
    if args.json_file:
        write_atomic(args.json_file, json.dumps(records, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
