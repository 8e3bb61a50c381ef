"""Where a backward's schedule comes from: a named strategy, a search cached on disk, or a file.

`schedule="auto"` takes the named strategy (docs/strategies.md) the cost model rates fastest for
the call. `schedule="search"` runs the project's schedule search (docs/design.md section 3) once per
spec — GPU name, SM count, problem shape, kernel family, cost model, evaluation count — and keeps
the validated schedule document in the cache folder, one file per spec named by the spec's hash.
The search stops after a fixed number of evaluations, so the schedule (and with it the
deterministic mode's summation order) depends on the spec alone; its wall-clock budget only guards.
"auto" is not the search because the search's schedules ran slower on the H200 than the named
strategies on causal shapes (python/README.md, "Schedules and the cache").
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import warnings
from pathlib import Path

from . import _lib

CACHE_ENV = "DASH_ATTN_CACHE_DIR"
EVALS_ENV = "DASH_ATTN_SEARCH_EVALS"
BUDGET_ENV = "DASH_ATTN_SEARCH_BUDGET_S"
# Bumped whenever the spec, the entry format or the search's default model changes (2: each
# kernel family's own rates; 3: the search's working-set cap and windowed seeds; 4: the model's
# memory floor, which can change the best named strategy the search keeps; 5: the sm90 family's
# 80-row Q tiles at head_dim 128 without a mask): older entries are then simply not found.
SPEC_VERSION = 5
# The search keeps no schedule with more Q, dO and dQ accumulator live at once than this (or than
# the best named strategy, if more): the H100 / H200 L2 (docs/search.md, "The live cap").
LIVE_CAP_BYTES = 50 << 20
DEFAULT_EVALUATIONS = 256  # dash bench's default for strategy "search"
DEFAULT_BUDGET_S = 60.0


def cache_dir() -> Path:
    """$DASH_ATTN_CACHE_DIR, else $XDG_CACHE_HOME/dash_attn, else ~/.cache/dash_attn."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "dash_attn"


def _env_number(name: str, default, parse, what: str, minimum, strict: bool):
    """The number in environment variable `name` (parsed by `parse`, a `what`), or `default` when
    unset; ValueError when it does not parse or is below `minimum` (strict: at or below)."""
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = parse(text)
    except ValueError:
        raise ValueError(f"{name}={text!r} is not {what}") from None
    if value < minimum or (strict and not value > minimum):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum}, got {value}")
    return value


def default_evaluations() -> int:
    return _env_number(EVALS_ENV, DEFAULT_EVALUATIONS, int, "an integer", 1, strict=False)


def default_budget_s() -> float:
    return _env_number(BUDGET_ENV, DEFAULT_BUDGET_S, float, "a number", 0.0, strict=True)


def problem_dict(
    *,
    batch: int,
    q_heads: int,
    kv_heads: int,
    seqlen_q: int,
    seqlen_k: int,
    head_dim: int,
    mask: str,
    seqlens_q: list[int] | None = None,
    seqlens_k: list[int] | None = None,
) -> dict:
    """The problem as the C ABI reads it (csrc/dash_attn_capi.h)."""
    p = {
        "batch": int(batch),
        "q_heads": int(q_heads),
        "kv_heads": int(kv_heads),
        "seqlen_q": int(seqlen_q),
        "seqlen_k": int(seqlen_k),
        "head_dim": int(head_dim),
        "mask": mask,
    }
    if seqlens_q is not None:
        p["seqlens_q"] = [int(x) for x in seqlens_q]
        p["seqlens_k"] = [int(x) for x in (seqlens_k if seqlens_k is not None else seqlens_q)]
    return p


def search_spec(problem: dict, family: str, gpu: str, sms: int, evaluations: int) -> dict:
    return {
        "version": SPEC_VERSION,
        "gpu": gpu,
        "sms": int(sms),
        "family": family,
        "problem": problem,
        "model": "default",
        "launch": "persistent",
        "evaluations": int(evaluations),
        "live_cap_bytes": LIVE_CAP_BYTES,
    }


def spec_key(spec: dict) -> str:
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def entry_path(spec: dict) -> Path:
    return cache_dir() / "schedules" / f"{spec_key(spec)}.json"


def _check_spec(spec: dict) -> dict:
    return {"problem": spec["problem"], "family": spec["family"]}


def _load_entry(path: Path, spec: dict) -> str | None:
    """The entry's schedule document, or None when missing, corrupt or not for this spec."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as e:
        warnings.warn(f"dash_attn: cannot read schedule cache entry {path} ({e}); searching again")
        return None
    try:
        entry = json.loads(text)
        if entry.get("spec") != spec:
            raise ValueError("the entry is for another spec")
        document = json.dumps(entry["document"])
        checked = _lib.check_schedule(_check_spec(spec), document)
        if checked.get("sms") != spec["sms"]:
            raise ValueError("the schedule is for another SM count")
        return document
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        warnings.warn(f"dash_attn: ignoring corrupt schedule cache entry {path} ({e}); rebuilding it")
        return None


def _write_atomic(path: Path, text: str) -> None:
    """Temp file in the same folder, then rename: a reader sees the old entry or the new, whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_memory: dict[str, str] = {}
_memory_lock = threading.Lock()


def searched_schedule(
    spec: dict, *, budget_s: float | None = None, use_cache: bool = True
) -> tuple[str, dict]:
    """The cached or freshly searched schedule document of spec, and facts about it:
    {"path", "cached" (found on disk or in memory), "makespan", ...}."""
    key = spec_key(spec)
    path = entry_path(spec)
    if use_cache:
        with _memory_lock:
            if key in _memory:
                return _memory[key], {"path": str(path), "cached": True}
        document = _load_entry(path, spec)
        if document is not None:
            with _memory_lock:
                _memory[key] = document
            return document, {"path": str(path), "cached": True}
    budget = default_budget_s() if budget_s is None else float(budget_s)
    if not budget > 0:
        raise ValueError(f"budget_s must be > 0, got {budget_s}")
    result = _lib.make_schedule(
        {
            **_check_spec(spec),
            "machine": {"name": spec["gpu"], "sms": spec["sms"]},
            "strategy": "search",
            "model": spec["model"],
            "evaluations": spec["evaluations"],
            "live_cap_bytes": spec["live_cap_bytes"],
            "budget_ms": int(budget * 1000),
            "threads": max(1, min(8, os.cpu_count() or 1)),
        }
    )
    document = json.dumps(result["document"])
    info = {
        "path": str(path),
        "cached": False,
        "makespan": result.get("makespan"),
        "lower_bound": result.get("lower_bound"),
        "local_evaluations": result.get("local_evaluations"),
    }
    if result.get("budget_hit"):
        warnings.warn(
            f"dash_attn: the schedule search stopped at its {budget:g} s budget after "
            f"{result.get('local_evaluations')} of {spec['evaluations']} evaluations; raise "
            f"{BUDGET_ENV} (or prepare(budget_s=...)) for a schedule that does not depend on speed"
        )
    if use_cache:
        entry = {"spec": spec, "result": {k: v for k, v in info.items() if k not in ("path", "cached")},
                 "document": result["document"]}
        try:
            _write_atomic(path, json.dumps(entry))
        except OSError as e:
            warnings.warn(f"dash_attn: cannot write schedule cache entry {path} ({e})")
        with _memory_lock:
            _memory[key] = document
    return document, info


_named: dict[tuple, str] = {}


def named_schedule(name: str, problem: dict, family: str, gpu: str, sms: int) -> str:
    key = (name, json.dumps(problem, sort_keys=True), family, gpu, sms)
    with _memory_lock:
        if key in _named:
            return _named[key]
    result = _lib.make_schedule(
        {"problem": problem, "family": family, "machine": {"name": gpu, "sms": sms}, "strategy": name}
    )
    document = json.dumps(result["document"])
    with _memory_lock:
        _named[key] = document
    return document


def best_named_schedule(problem: dict, family: str, gpu: str, sms: int) -> str:
    """The schedule of the named strategy with the smallest modelled makespan for this call (ties:
    the first in strategy_names()), chosen by the library (sim::fastest_named)."""
    return named_schedule("fastest-named", problem, family, gpu, sms)


def file_schedule(path: str, problem: dict, family: str) -> str:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ValueError(f"cannot read schedule file {path}: {e}") from None
    try:
        _lib.check_schedule({"problem": problem, "family": family}, text)
    except ValueError as e:
        raise ValueError(f"schedule file {path}: {e}") from None
    return text


def resolve(
    schedule: str, problem: dict, family: str, gpu: str, sms: int, *, budget_s: float | None = None
) -> str:
    """The schedule document for `schedule` = "auto" | "search" | a strategy name | a file path."""
    if schedule == "auto":
        return best_named_schedule(problem, family, gpu, sms)
    if schedule == "search":
        spec = search_spec(problem, family, gpu, sms, default_evaluations())
        return searched_schedule(spec, budget_s=budget_s)[0]
    if schedule in _lib.strategy_names():
        return named_schedule(schedule, problem, family, gpu, sms)
    if os.path.isfile(schedule):
        return file_schedule(schedule, problem, family)
    raise ValueError(
        f"schedule={schedule!r} is neither 'auto', 'search', a strategy name "
        f"({', '.join(_lib.strategy_names())}) nor an existing schedule file"
    )
