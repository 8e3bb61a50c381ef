"""DASH's attention with a deterministic, schedule-driven backward, as a PyTorch op.

    import dash_attn
    out = dash_attn.attention(q, k, v, causal=True)   # (batch, seqlen, heads, head_dim), bf16/fp16
    out.sum().backward()                               # bitwise repeatable dQ, dK, dV

See python/README.md.
"""

from __future__ import annotations

from . import _lib, _schedule
from ._lib import DashError
from ._ops import HEAD_DIMS, KERNELS, attention, attention_varlen, clear_cache
from ._schedule import cache_dir

__all__ = [
    "DashError",
    "HEAD_DIMS",
    "KERNELS",
    "attention",
    "attention_varlen",
    "cache_dir",
    "clear_cache",
    "expired_ticket_wait",
    "prepare",
    "strategies",
]
__version__ = "0.1.0"

_lib.lib()  # fail at import, with the reason, when the native library is missing or stale


def strategies() -> list[str]:
    """The named schedule strategies accepted as schedule=NAME (docs/strategies.md)."""
    return _lib.strategy_names()


def expired_ticket_wait() -> str | None:
    """The ticket wait that stopped a deterministic backward, or None. Every ticket wait is bounded
    (a corrupt schedule or a bug stops the kernel instead of hanging it); PyTorch then reports a
    bare CUDA error at its next synchronization, and this names the wait: CTA, dQ or dK/dV tile,
    the rank it waited for and what the ticket read. The CUDA context is lost after such an error."""
    return _lib.expired_ticket_wait() or None


def prepare(*, batch: int, heads: int, seqlen: int, head_dim: int, kv_heads: int | None = None,
            seqlen_k: int | None = None, seqlens: list[int] | None = None,
            seqlens_k: list[int] | None = None, causal: bool = False, window=None,
            kernel: str = "auto", device=None, gpu_name: str | None = None, sms: int | None = None,
            evaluations: int | None = None, budget_s: float | None = None) -> dict:
    """Runs (or finds in the cache) the schedule search of schedule="search" for one shape, so that
    the first backward of that shape does not pay for it. The GPU is `device` (default: the current
    CUDA device), or gpu_name + sms + kernel="sm80"|"sm90" to prepare without one. Returns
    {"path", "cached", ...}: the cache entry and, for a fresh search, its makespan and bound."""
    from ._ops import _device, _kernel_arg, _mask_args, _mask_text

    _kernel_arg(kernel)
    if (gpu_name is None) != (sms is None):
        raise ValueError("give gpu_name and sms together (or neither: the CUDA device's)")
    if gpu_name is not None:
        if kernel == "auto":
            raise ValueError('without a GPU, name the kernel family: kernel="sm80" or "sm90"')
        if isinstance(sms, bool) or not isinstance(sms, int) or sms < 1:
            raise ValueError(f"sms must be a positive int, got {sms!r}")
        family = kernel
    else:
        import torch

        index = torch.device(device).index if device is not None else None
        if index is None:
            index = torch.cuda.current_device()
        dev = _device(index)
        family = dev.family(kernel)
        gpu_name, sms = dev.name, dev.sms
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"head_dim {head_dim} is not supported by the kernels (64 or 128)")
    kind, left, right = _mask_args(causal, window)
    if seqlens is not None:
        seqlens_k = seqlens_k if seqlens_k is not None else seqlens
        if len(seqlens) != batch or len(seqlens_k) != batch:
            raise ValueError(f"seqlens and seqlens_k need {batch} entries (batch)")
    problem = _schedule.problem_dict(
        batch=batch, q_heads=heads, kv_heads=kv_heads if kv_heads is not None else heads,
        seqlen_q=max(seqlens) if seqlens else seqlen,
        seqlen_k=(max(seqlens_k) if seqlens else (seqlen_k if seqlen_k is not None else seqlen)),
        head_dim=head_dim, mask=_mask_text(kind, left, right), seqlens_q=seqlens,
        seqlens_k=seqlens_k if seqlens is not None else None,
    )
    evals = _schedule.default_evaluations() if evaluations is None else evaluations
    if isinstance(evals, bool) or not isinstance(evals, int) or evals < 1:
        raise ValueError(f"evaluations must be a positive int, got {evals!r}")
    spec = _schedule.search_spec(problem, family, gpu_name, sms, evals)
    _, info = _schedule.searched_schedule(spec, budget_s=budget_s)
    return info
