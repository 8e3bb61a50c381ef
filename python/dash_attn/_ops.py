"""The attention op: torch.library custom ops (forward, backward) with fake implementations and
autograd, over the C ABI. Validation happens here, before any pointer reaches the library."""

from __future__ import annotations

import ctypes
import json
import math
import os
import threading
from collections import OrderedDict
from typing import Optional

import torch

from . import _lib, _schedule

KERNELS = ("auto", "sm80", "sm90")
HEAD_DIMS = (64, 128)
_DTYPES = {torch.bfloat16: 0, torch.float16: 1}
MASK_FULL, MASK_CAUSAL, MASK_WINDOW = 0, 1, 2
# The runtime's "no limit" for a side of the band (runtime/kernel_params.h, kUnboundedSide).
UNBOUNDED = 1 << 28
MAX_OBJECTS_ENV = "DASH_ATTN_MAX_OBJECTS"


# ----- argument checks (Python errors, never a crash) -----


def _check_tensor(name: str, t, ndim: int) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype not in _DTYPES:
        raise TypeError(f"{name} must be bfloat16 or float16, got {t.dtype}")
    if t.device.type not in ("cuda", "meta"):
        raise ValueError(f"{name} must be a CUDA tensor, got a tensor on {t.device}")
    if t.dim() != ndim:
        layout = "(batch, seqlen, heads, head_dim)" if ndim == 4 else "(total_tokens, heads, head_dim)"
        raise ValueError(f"{name} must be {ndim}-D {layout}, got shape {tuple(t.shape)}")
    if t.stride(-1) != 1:
        raise ValueError(
            f"{name} must be contiguous in its last dimension (head_dim), got strides {t.stride()}; "
            "call .contiguous() first"
        )
    if any(s % 8 != 0 for s in t.stride()[:-1]):
        raise ValueError(
            f"{name}: strides must be multiples of 8 elements (16-byte rows), got {t.stride()}"
        )


def _check_qkv(q, k, v, ndim: int) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        _check_tensor(name, t, ndim)
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"q, k, v must have one dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k, v must be on one device, got {q.device}, {k.device}, {v.device}")
    if k.shape != v.shape:
        raise ValueError(f"k and v must have one shape, got {tuple(k.shape)} and {tuple(v.shape)}")
    d = q.shape[-1]
    if k.shape[-1] != d:
        raise ValueError(f"q and k must have one head_dim, got {d} and {k.shape[-1]}")
    if d not in HEAD_DIMS:
        raise ValueError(f"head_dim {d} is not supported by the kernels (64 or 128)")
    hq, hk = q.shape[-2], k.shape[-2]
    if hq < 1 or hk < 1 or hq % hk != 0:
        raise ValueError(
            f"the number of query heads ({hq}) must be a multiple of the number of key/value heads ({hk})"
        )
    if ndim == 4:
        if q.shape[0] != k.shape[0]:
            raise ValueError(f"q and k must have one batch size, got {q.shape[0]} and {k.shape[0]}")
        if q.shape[0] < 1 or q.shape[1] < 1 or k.shape[1] < 1:
            raise ValueError(f"empty inputs: q {tuple(q.shape)}, k {tuple(k.shape)}")


def _mask_args(causal, window) -> tuple[int, int, int]:
    """(kind, left, right) of the runtime's bottom-right aligned mask (dagsim/core/mask.h)."""
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {type(causal).__name__}")
    if window is None:
        return (MASK_CAUSAL, UNBOUNDED, 0) if causal else (MASK_FULL, UNBOUNDED, UNBOUNDED)
    try:
        left, right = window
    except (TypeError, ValueError):
        raise TypeError(f"window must be a pair (left, right) of ints, got {window!r}") from None
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (left, right)):
        raise TypeError(f"window must be a pair (left, right) of ints, got {window!r}")
    if left < -1 or right < -1:
        raise ValueError(f"window sides must be >= 0 (or -1 for no limit), got {window!r}")
    if causal:
        right = 0  # causal caps the right side at the diagonal
    left_open, right_open = left == -1, right == -1
    if left_open and right_open:
        return MASK_FULL, UNBOUNDED, UNBOUNDED
    if left_open and right == 0:
        return MASK_CAUSAL, UNBOUNDED, 0
    return MASK_WINDOW, UNBOUNDED if left_open else left, UNBOUNDED if right_open else right


def _mask_text(kind: int, left: int, right: int) -> str:
    if kind == MASK_FULL:
        return "full"
    if kind == MASK_CAUSAL:
        return "causal"
    return f"window:{left},{right}"


def _scale_arg(softmax_scale, head_dim: int) -> float:
    if softmax_scale is None:
        return 1.0 / math.sqrt(head_dim)
    if isinstance(softmax_scale, bool) or not isinstance(softmax_scale, (int, float)):
        raise TypeError(f"softmax_scale must be a float, got {type(softmax_scale).__name__}")
    s = float(softmax_scale)
    if not (s > 0 and math.isfinite(s)):
        raise ValueError(f"softmax_scale must be positive and finite, got {softmax_scale}")
    return s


def _schedule_arg(schedule) -> str:
    if isinstance(schedule, os.PathLike):
        return os.fspath(schedule)
    if not isinstance(schedule, str) or not schedule:
        raise TypeError(
            f"schedule must be 'auto', 'search', a strategy name or a schedule file path, got {schedule!r}"
        )
    return schedule


def _kernel_arg(kernel) -> str:
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    return kernel


# ----- the native objects -----


class _Device:
    """Facts about one GPU, asked once."""

    def __init__(self, index: int):
        self.name, self.sms, self.major, self.minor = _lib.device_info(index)
        self.families = _lib.runnable_families(index)

    def family(self, kernel: str) -> str:
        if not self.families:
            raise ValueError(
                f"no DASH kernel family runs on {self.name} (compute capability "
                f"{self.major}.{self.minor}); the library holds sm80 (sm_80+) and sm90 (sm_90a) kernels"
            )
        if kernel == "auto":
            return self.families[0]
        if kernel not in self.families:
            raise ValueError(
                f"kernel={kernel!r} does not run on {self.name} (compute capability "
                f"{self.major}.{self.minor}); it runs {', '.join(self.families)}"
            )
        return kernel


_devices: dict[int, _Device] = {}


def _device(index: int) -> _Device:
    if index not in _devices:
        _devices[index] = _Device(index)
    return _devices[index]


class _Attention:
    """One rt::Attention (runtime/attention.h). Its backward workspace is shared by every backward
    on it, so two backwards must not overlap on the GPU: a backward on another stream than the last
    one first waits for the last one's event (and a lock keeps threads from interleaving)."""

    def __init__(self, device: int, problem: dict, family: str, dtype: torch.dtype, scale: float):
        self.device = device
        self.problem = problem
        self.family = family
        self.lock = threading.Lock()
        self.schedule_document: Optional[str] = None
        self.documents: dict[str, str] = {}  # schedule argument -> its document
        self.kernel_name = ""
        self.last_stream: Optional[int] = None
        self.last_event: Optional[torch.cuda.Event] = None
        # Held by the object: at interpreter exit the module's globals may be gone before __del__ runs.
        self._destroy = _lib.lib().dash_attn_destroy
        handle = ctypes.c_void_p()
        spec = json.dumps({"problem": problem, "family": family}).encode()
        _lib.check(_lib.lib().dash_attn_create(spec, _DTYPES[dtype], scale, device, ctypes.byref(handle)))
        self.handle = handle

    def __del__(self):
        handle = getattr(self, "handle", None)
        destroy = getattr(self, "_destroy", None)
        if handle is not None and handle.value and destroy is not None:
            destroy(handle)

    def set_schedule(self, document: str) -> None:
        if document == self.schedule_document:
            return
        name = ctypes.c_void_p()
        _lib.check(
            _lib.lib().dash_attn_set_schedule(
                self.handle, document.encode(), self.family.encode(), 0, ctypes.byref(name)
            )
        )
        self.kernel_name = _lib.take_text(name)
        self.schedule_document = document


_objects: "OrderedDict[tuple, _Attention]" = OrderedDict()
_objects_lock = threading.Lock()


def _max_objects() -> int:
    try:
        return max(1, int(os.environ.get(MAX_OBJECTS_ENV, "32")))
    except ValueError:
        return 32


def _attention_object(device: int, problem: dict, family: str, dtype, scale: float) -> _Attention:
    key = (device, json.dumps(problem, sort_keys=True), family, dtype, scale)
    with _objects_lock:
        obj = _objects.get(key)
        if obj is not None:
            _objects.move_to_end(key)
            return obj
    obj = _Attention(device, problem, family, dtype, scale)
    with _objects_lock:
        _objects[key] = obj
        # Bounded: every object holds a workspace (fp32 dQ accumulators). The least recently used
        # goes; its memory is freed once no backward uses it (cudaFree synchronizes).
        while len(_objects) > _max_objects():
            _objects.popitem(last=False)
    return obj


def clear_cache() -> None:
    """Drops every cached attention object (and its GPU workspace)."""
    with _objects_lock:
        _objects.clear()


def _ref(t: Optional[torch.Tensor], varlen: bool) -> _lib._Tensor:
    if t is None:
        return _lib._Tensor(None, 0, 0, 0)
    if t.data_ptr() % 16 != 0:
        raise ValueError("tensor data must be 16-byte aligned (a view at an odd offset?)")
    s = t.stride()
    if varlen:
        return _lib._Tensor(t.data_ptr(), 0, s[0], s[1])
    return _lib._Tensor(t.data_ptr(), s[0], s[1], s[2])


def _problem_of(q, k, cu_q, cu_k, max_q: int, max_k: int, mask: tuple[int, int, int]) -> dict:
    kind, left, right = mask
    if cu_q is None:
        return _schedule.problem_dict(
            batch=q.shape[0], q_heads=q.shape[2], kv_heads=k.shape[2], seqlen_q=q.shape[1],
            seqlen_k=k.shape[1], head_dim=q.shape[3], mask=_mask_text(kind, left, right),
        )
    # The runtime plans per-batch lengths on the host: one device-to-host copy (a sync) per call.
    lq = cu_q.tolist()
    lk = cu_k.tolist()
    seqlens_q = [b - a for a, b in zip(lq, lq[1:])]
    seqlens_k = [b - a for a, b in zip(lk, lk[1:])]
    for name, cu, lens, total, mx in (("cu_seqlens_q", lq, seqlens_q, q.shape[0], max_q),
                                      ("cu_seqlens_k", lk, seqlens_k, k.shape[0], max_k)):
        if cu[0] != 0 or any(n < 0 for n in lens):
            raise ValueError(f"{name} must start at 0 and not decrease, got {cu}")
        if cu[-1] != total:
            raise ValueError(f"{name} ends at {cu[-1]}, but the tensor has {total} tokens")
        if lens and max(lens) > mx:
            raise ValueError(f"{name} has a sequence of {max(lens)} tokens, above its max_seqlen {mx}")
    if any(n == 0 for n in seqlens_q + seqlens_k):
        raise ValueError("varlen sequences must be non-empty (a zero length in cu_seqlens)")
    return _schedule.problem_dict(
        batch=len(seqlens_q), q_heads=q.shape[1], kv_heads=k.shape[1], seqlen_q=max(seqlens_q),
        seqlen_k=max(seqlens_k), head_dim=q.shape[2], mask=_mask_text(kind, left, right),
        seqlens_q=seqlens_q, seqlens_k=seqlens_k,
    )


def _object_for(q, k, cu_q, cu_k, max_q, max_k, mask, scale, kernel) -> _Attention:
    index = q.device.index if q.device.index is not None else torch.cuda.current_device()
    family = _device(index).family(kernel)
    problem = _problem_of(q, k, cu_q, cu_k, max_q, max_k, mask)
    return _attention_object(index, problem, family, q.dtype, scale)


def _document_for(obj: _Attention, schedule: str) -> str:
    """The schedule document of a backward, kept on its object: after the first call a backward
    costs a dict look-up here, not a hash of the spec (a file is read once per object)."""
    document = obj.documents.get(schedule)
    if document is None:
        dev = _device(obj.device)
        document = _schedule.resolve(schedule, obj.problem, obj.family, dev.name, dev.sms)
        obj.documents[schedule] = document
    return document


# ----- the custom ops -----


@torch.library.custom_op("dash_attn::fwd", mutates_args=(), device_types="cuda")
def _fwd(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    cu_seqlens_q: Optional[torch.Tensor], cu_seqlens_k: Optional[torch.Tensor],
    max_seqlen_q: int, max_seqlen_k: int,
    mask_kind: int, window_left: int, window_right: int, softmax_scale: float,
    deterministic: bool, schedule: str, kernel: str,
) -> tuple[torch.Tensor, torch.Tensor]:
    varlen = cu_seqlens_q is not None
    mask = (mask_kind, window_left, window_right)
    obj = _object_for(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, mask,
                      softmax_scale, kernel)
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    total_q = q.shape[0] if varlen else q.shape[0] * q.shape[1]
    lse = torch.empty((q.shape[-2], total_q), dtype=torch.float32, device=q.device)
    t = _lib.Tensors()
    t.q, t.k, t.v, t.o = _ref(q, varlen), _ref(k, varlen), _ref(v, varlen), _ref(out, varlen)
    t.lse = lse.data_ptr()
    stream = torch.cuda.current_stream(q.device).cuda_stream
    _lib.check(_lib.lib().dash_attn_forward(obj.handle, ctypes.byref(t), stream))
    return out, lse


@_fwd.register_fake
def _fwd_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, mask_kind,
              window_left, window_right, softmax_scale, deterministic, schedule, kernel):
    total_q = q.shape[0] if cu_seqlens_q is not None else q.shape[0] * q.shape[1]
    return q.new_empty(q.shape), q.new_empty((q.shape[-2], total_q), dtype=torch.float32)


def _layout_ok(t: torch.Tensor) -> bool:
    return t.stride(-1) == 1 and all(s % 8 == 0 for s in t.stride()[:-1]) and t.data_ptr() % 16 == 0


@torch.library.custom_op("dash_attn::bwd", mutates_args=(), device_types="cuda")
def _bwd(
    dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
    lse: torch.Tensor, cu_seqlens_q: Optional[torch.Tensor], cu_seqlens_k: Optional[torch.Tensor],
    max_seqlen_q: int, max_seqlen_k: int,
    mask_kind: int, window_left: int, window_right: int, softmax_scale: float,
    deterministic: bool, schedule: str, kernel: str,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    varlen = cu_seqlens_q is not None
    mask = (mask_kind, window_left, window_right)
    obj = _object_for(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, mask,
                      softmax_scale, kernel)
    document = _document_for(obj, schedule)
    if dout.dtype != q.dtype:
        dout = dout.to(q.dtype)
    if not _layout_ok(dout):
        dout = dout.contiguous()  # autograd may hand us an expanded or strided gradient
    dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    dk = torch.empty(k.shape, dtype=k.dtype, device=k.device)
    dv = torch.empty(v.shape, dtype=v.dtype, device=v.device)
    t = _lib.Tensors()
    t.q, t.k, t.v, t.o = _ref(q, varlen), _ref(k, varlen), _ref(v, varlen), _ref(out, varlen)
    t.dout, t.dq, t.dk, t.dv = _ref(dout, varlen), _ref(dq, varlen), _ref(dk, varlen), _ref(dv, varlen)
    t.lse = lse.data_ptr()
    stream = torch.cuda.current_stream(q.device)
    with obj.lock:
        obj.set_schedule(document)
        if obj.last_event is not None and obj.last_stream != stream.cuda_stream:
            stream.wait_event(obj.last_event)  # the workspace is still in use over there
        _lib.check(
            _lib.lib().dash_attn_backward(obj.handle, ctypes.byref(t), int(deterministic), stream.cuda_stream)
        )
        event = torch.cuda.Event()
        event.record(stream)
        obj.last_event, obj.last_stream = event, stream.cuda_stream
    return dq, dk, dv


@_bwd.register_fake
def _bwd_fake(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
              mask_kind, window_left, window_right, softmax_scale, deterministic, schedule, kernel):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _setup_context(ctx, inputs, output):
    q, k, v, cu_q, cu_k = inputs[:5]
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_q, cu_k)
    ctx.args = inputs[5:]
    ctx.mark_non_differentiable(lse)


def _backward(ctx, dout, dlse):
    q, k, v, out, lse, cu_q, cu_k = ctx.saved_tensors
    dq, dk, dv = torch.ops.dash_attn.bwd(dout, q, k, v, out, lse, cu_q, cu_k, *ctx.args)
    return (dq, dk, dv) + (None,) * (len(ctx.args) + 2)


torch.library.register_autograd("dash_attn::fwd", _backward, setup_context=_setup_context)


# ----- the public functions -----


def attention(q, k, v, *, causal=False, window=None, softmax_scale=None, deterministic=True,
              schedule="auto", kernel="auto"):
    """Attention of (batch, seqlen, heads, head_dim) q, k, v (bf16/fp16; k and v may have fewer
    heads: GQA/MQA). Masks are bottom-right aligned; window=(left, right), -1 = no limit. The
    backward's dQ sums run in the schedule's fixed order when deterministic=True."""
    _check_qkv(q, k, v, 4)
    mask = _mask_args(causal, window)
    scale = _scale_arg(softmax_scale, q.shape[-1])
    if not isinstance(deterministic, bool):
        raise TypeError(f"deterministic must be a bool, got {type(deterministic).__name__}")
    out, _ = torch.ops.dash_attn.fwd(q, k, v, None, None, q.shape[1], k.shape[1], *mask, scale,
                                     deterministic, _schedule_arg(schedule), _kernel_arg(kernel))
    return out


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *,
                     causal=False, window=None, softmax_scale=None, deterministic=True,
                     schedule="auto", kernel="auto"):
    """attention() on packed sequences: q (total_q, heads, head_dim), k/v (total_k, kv_heads,
    head_dim); cu_seqlens_* int32 (batch + 1,) cumulative lengths on the tensors' device."""
    _check_qkv(q, k, v, 3)
    for name, cu in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(cu, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(cu).__name__}")
        if cu.dtype != torch.int32 or cu.dim() != 1 or cu.shape[0] < 2:
            raise ValueError(f"{name} must be a 1-D int32 tensor of batch + 1 entries, got "
                             f"{cu.dtype} of shape {tuple(cu.shape)}")
        if cu.device != q.device:
            raise ValueError(f"{name} must be on {q.device}, got {cu.device}")
    if cu_seqlens_q.shape != cu_seqlens_k.shape:
        raise ValueError("cu_seqlens_q and cu_seqlens_k must have one length (batch + 1)")
    for name, m in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise ValueError(f"{name} must be a positive int, got {m!r}")
    mask = _mask_args(causal, window)
    scale = _scale_arg(softmax_scale, q.shape[-1])
    if not isinstance(deterministic, bool):
        raise TypeError(f"deterministic must be a bool, got {type(deterministic).__name__}")
    out, _ = torch.ops.dash_attn.fwd(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                     *mask, scale, deterministic, _schedule_arg(schedule),
                                     _kernel_arg(kernel))
    return out
