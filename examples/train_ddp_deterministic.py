"""Data-parallel training, reproducible: the small transformer of train_deterministic.py under
PyTorch's DistributedDataParallel, trained twice with the same seed; losses and weights compared bit
for bit.

    torchrun --nproc-per-node 2 examples/train_ddp_deterministic.py --json out/ddp.json
    torchrun --nproc-per-node 1 examples/train_ddp_deterministic.py --steps 50   # world size 1
    python examples/train_ddp_deterministic.py --device cpu --world 2 --backends sdpa-math \\
        --dim 64 --heads 2 --layers 1 --seqlen 64 --batch 4 --steps 3            # CPU, gloo

Two sources make data-parallel training differ between runs: the attention backward (dash_attn's
is deterministic, docs/design.md; SDPA's flash and cuDNN backends add dQ in arrival order) and the
gradient all-reduce. What this script fixes for the all-reduce, before the process group exists:
- the world size and one global batch per step, made from a seeded generator on every rank and
  sharded by rank (rank r takes rows r, r + W, ...), so a rank's data never depends on timing;
- DDP's buckets: a fixed `bucket_cap_mb` and `static_graph=True`, so every step reduces the same
  buckets in the same order;
- NCCL's reduction order: algorithm and protocol pinned (`NCCL_ALGO=Ring`, `NCCL_PROTO=Simple`,
  unless set already), so NCCL does not pick a different algorithm (tree, NVLS) from one run or
  message size to the next;
- NVLink multicast off in every process (`NCCL_NVLS_ENABLE=0`, `TORCH_SYMM_MEM_DISABLE_MULTICAST=1`,
  `NVSHMEM_DISABLE_NVLS=1`).
Runs are comparable at the same world size only: a different W reduces in a different order.
Every other op runs under torch.use_deterministic_algorithms(True, warn_only=True), as in
train_deterministic.py. Rank 0 prints one line per backend and writes --json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

for _key, _value in {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple", "NCCL_NVLS_ENABLE": "0",
                     "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1",
                     "CUBLAS_WORKSPACE_CONFIG": ":4096:8"}.items():
    os.environ.setdefault(_key, _value)

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_deterministic import Model, add_training_flags, batch, weights_digest  # noqa: E402

BUCKET_CAP_MB = 25


def shard(tokens: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    """Rank r's rows of the global batch: r, r + world, ... (the global batch must divide)."""
    if tokens.shape[0] % world != 0:
        raise ValueError(f"global batch {tokens.shape[0]} does not split over {world} ranks")
    return tokens[rank::world]


def train(backend: str, args, device: torch.device) -> dict:
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)
    model = Model(args.vocab, args.dim, args.heads, args.layers, backend).to(device)
    ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None,
                                  bucket_cap_mb=BUCKET_CAP_MB, static_graph=True)
    opt = torch.optim.AdamW(ddp.parameters(), lr=3e-4)
    losses, times = [], []
    for step in range(args.steps):
        tokens = shard(batch(step, args, device.type), rank, world)
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast(device.type, dtype=torch.bfloat16):
            logits = ddp(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        # The global loss: the ranks' means averaged (all-reduce of one value, same order each run).
        total = loss.detach().clone()
        dist.all_reduce(total)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        losses.append(total.item() / world)
    digests = [None] * world
    dist.all_gather_object(digests, weights_digest(model))
    times = sorted(times[5:]) or sorted(times)
    return {"losses": losses, "weights_sha256": digests[0], "ranks_agree": len(set(digests)) == 1,
            "median_step_ms": 1000 * times[len(times) // 2]}


def run(args) -> dict | None:
    """One process of the group (rank and world from the environment); the report on rank 0."""
    rank = dist.get_rank()
    if args.device == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    torch.use_deterministic_algorithms(True, warn_only=True)
    report = {"world_size": dist.get_world_size(), "process_group": dist.get_backend(), "device": str(device),
              "torch": torch.__version__, "args": vars(args),
              "nccl_env": {k: os.environ.get(k) for k in ("NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE")}}
    if device.type == "cuda":
        report["gpu"] = torch.cuda.get_device_name(device)
    for backend in args.backends.split(","):
        runs = [train(backend, args, device), train(backend, args, device)]
        same_losses = runs[0]["losses"] == runs[1]["losses"]
        same_weights = runs[0]["weights_sha256"] == runs[1]["weights_sha256"]
        first_diff = next((i for i, (a, b) in enumerate(zip(*(r["losses"] for r in runs))) if a != b), None)
        if rank == 0:
            print(f"{backend} (world {report['world_size']}): final loss {runs[0]['losses'][-1]:.6f} / "
                  f"{runs[1]['losses'][-1]:.6f}; loss curves "
                  f"{'bitwise identical' if same_losses else f'differ from step {first_diff}'}; final weights "
                  f"{'identical' if same_weights else 'differ'}"
                  f"{'' if all(r['ranks_agree'] for r in runs) else ' (ranks disagree!)'}; "
                  f"median step {runs[0]['median_step_ms']:.2f} / {runs[1]['median_step_ms']:.2f} ms", flush=True)
        report[backend] = {"runs": runs, "identical_losses": same_losses, "identical_weights": same_weights}
    return report if rank == 0 else None


def worker(rank: int, world: int, port: int, args) -> None:
    """A process started by --world (no torchrun): joins a gloo or NCCL group on this host."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    main_process(args, spawned=True)


def main_process(args, spawned: bool = False) -> None:
    dist.init_process_group("nccl" if args.device == "cuda" else "gloo")
    try:
        report = run(args)
        if report is not None and args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)
        dist.barrier()  # every rank done before any tears the group down (gloo aborts otherwise)
    except BaseException:
        dist.destroy_process_group()
        raise
    if spawned:
        # A process of --world ends here, once every rank is past the barrier and its output is
        # flushed, without tearing the group down: gloo's teardown aborted a rank ("terminate called
        # without an active exception") in one of this test's runs on 2 busy cores (none in 34
        # repeated runs since, idle or loaded; rare, but a red test).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    dist.destroy_process_group()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_training_flags(ap)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--world", type=int, default=0,
                    help="start this many processes here (no torchrun); 0: torchrun's environment")
    ap.add_argument("--port", type=int, default=29517, help="with --world: the rendezvous port")
    ap.add_argument("--json", help="rank 0 writes the report here")
    args = ap.parse_args()
    if args.steps < 1 or args.batch < 1:
        raise SystemExit("train_ddp_deterministic.py: --steps and --batch must be >= 1")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("train_ddp_deterministic.py: --device cuda needs a CUDA GPU (or use --device cpu)")
    if args.device == "cpu" and "dash" in args.backends.split(","):
        raise SystemExit("train_ddp_deterministic.py: dash_attn runs on CUDA only; on the CPU use sdpa-math")
    if args.world < 0:
        raise SystemExit(f"train_ddp_deterministic.py: --world must be >= 0, got {args.world}")
    torchrun = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    if args.world == 0 and not torchrun:
        raise SystemExit("train_ddp_deterministic.py: start it with torchrun, or give --world N")
    world = args.world if args.world > 0 else int(os.environ["WORLD_SIZE"])
    if args.batch % world != 0:
        raise SystemExit(f"train_ddp_deterministic.py: --batch {args.batch} does not split over {world} ranks")
    if args.world > 0 and args.device == "cuda" and args.world > torch.cuda.device_count():
        raise SystemExit(f"train_ddp_deterministic.py: --world {args.world} needs as many GPUs, "
                         f"this machine has {torch.cuda.device_count()}")
    if args.world > 0:
        torch.multiprocessing.spawn(worker, args=(args.world, args.port, args), nprocs=args.world, join=True)
    else:
        main_process(args)


if __name__ == "__main__":
    main()
