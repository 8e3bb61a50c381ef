"""ctypes binding of the C ABI in csrc/dash_attn_capi.h (one shared library, no libtorch)."""

from __future__ import annotations

import ctypes
import json
import os
import threading
from pathlib import Path
from typing import Any

ABI_VERSION = 2
LIBRARY_ENV = "DASH_ATTN_LIBRARY"

OK, USER_ERROR, CUDA_ERROR, NO_CUDA, INTERNAL = 0, 1, 2, 3, 4


class DashError(RuntimeError):
    """A CUDA or internal failure reported by the native library."""


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("batch_stride", ctypes.c_int64),
        ("row_stride", ctypes.c_int64),
        ("head_stride", ctypes.c_int64),
    ]


class Tensors(ctypes.Structure):
    _fields_ = [(name, _Tensor) for name in ("q", "k", "v", "o", "dout", "dq", "dk", "dv")] + [
        ("lse", ctypes.c_void_p)
    ]


def _signatures(lib: ctypes.CDLL) -> None:
    c_char_pp = ctypes.POINTER(ctypes.c_char_p)
    i, p, s, f = ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_float
    table = {
        "dash_attn_abi_version": (i, []),
        "dash_attn_has_cuda": (i, []),
        "dash_attn_last_error": (s, []),
        "dash_attn_free": (None, [p]),
        "dash_attn_expired_ticket_wait": (i, [ctypes.POINTER(p)]),
        "dash_attn_strategy_names": (i, [ctypes.POINTER(p)]),
        "dash_attn_make_schedule": (i, [s, ctypes.POINTER(p)]),
        "dash_attn_check_schedule": (i, [s, s, ctypes.POINTER(p)]),
        "dash_attn_device_info": (
            i,
            [i, s, i, ctypes.POINTER(i), ctypes.POINTER(i), ctypes.POINTER(i)],
        ),
        "dash_attn_runnable_families": (i, [i, ctypes.POINTER(p)]),
        "dash_attn_create": (i, [s, i, f, i, ctypes.POINTER(p)]),
        "dash_attn_destroy": (None, [p]),
        "dash_attn_set_schedule": (i, [p, s, s, i, ctypes.POINTER(p)]),
        "dash_attn_forward": (i, [p, ctypes.POINTER(Tensors), ctypes.c_size_t]),
        "dash_attn_backward": (i, [p, ctypes.POINTER(Tensors), i, ctypes.c_size_t]),
    }
    del c_char_pp
    for name, (res, args) in table.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


def library_path() -> Path:
    """The library to load: $DASH_ATTN_LIBRARY (a prebuilt one), else the package's own."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        path = Path(env)
        if not path.is_file():
            raise ImportError(f"{LIBRARY_ENV}={env} is not a file")
        return path
    here = Path(__file__).resolve().parent
    path = here / "libdash_attn_capi.so"
    if not path.is_file():
        raise ImportError(
            f"dash_attn's native library is missing ({path}): install the package with "
            f"`pip install ./python`, or point {LIBRARY_ENV} at a built libdash_attn_capi.so"
        )
    return path


_lib: ctypes.CDLL | None = None
_lock = threading.Lock()


def lib() -> ctypes.CDLL:
    global _lib
    with _lock:
        if _lib is None:
            path = library_path()
            loaded = ctypes.CDLL(str(path))
            _signatures(loaded)
            version = loaded.dash_attn_abi_version()
            if version != ABI_VERSION:
                raise ImportError(
                    f"{path} has C ABI version {version}, this dash_attn needs {ABI_VERSION}: "
                    "rebuild it (pip install ./python)"
                )
            _lib = loaded
        return _lib


def check(status: int) -> None:
    """Raises the Python error of a non-OK status, with the library's message."""
    if status == OK:
        return
    message = (lib().dash_attn_last_error() or b"").decode(errors="replace")
    if status == USER_ERROR:
        raise ValueError(message)
    if status == NO_CUDA:
        raise RuntimeError(message)
    raise DashError(message)


def take_text(ptr: ctypes.c_void_p) -> str:
    """The text behind a char** out-parameter, freed."""
    try:
        return ctypes.string_at(ptr.value).decode() if ptr.value else ""
    finally:
        if ptr.value:
            lib().dash_attn_free(ptr)


def call_text(name: str, *args: Any) -> str:
    out = ctypes.c_void_p()
    check(getattr(lib(), name)(*args, ctypes.byref(out)))
    return take_text(out)


def has_cuda() -> bool:
    return bool(lib().dash_attn_has_cuda())


def expired_ticket_wait() -> str:
    return call_text("dash_attn_expired_ticket_wait")


def strategy_names() -> list[str]:
    return [n for n in call_text("dash_attn_strategy_names").split(",") if n]


def make_schedule(spec: dict) -> dict:
    return json.loads(call_text("dash_attn_make_schedule", json.dumps(spec).encode()))


def check_schedule(spec: dict, document: str) -> dict:
    return json.loads(
        call_text("dash_attn_check_schedule", json.dumps(spec).encode(), document.encode())
    )


def device_info(device: int) -> tuple[str, int, int, int]:
    name = ctypes.create_string_buffer(256)
    sms, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    check(
        lib().dash_attn_device_info(
            device, name, 256, ctypes.byref(sms), ctypes.byref(major), ctypes.byref(minor)
        )
    )
    return name.value.decode(), sms.value, major.value, minor.value


def runnable_families(device: int) -> list[str]:
    return [f for f in call_text("dash_attn_runnable_families", device).split(",") if f]
