import os
import tempfile

import pytest
import torch


def gpu_available() -> bool:
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh schedule cache folder per test, and no in-process memory of earlier searches."""
    from dash_attn import _schedule

    d = tmp_path / "cache"
    monkeypatch.setenv("DASH_ATTN_CACHE_DIR", str(d))
    monkeypatch.setattr(_schedule, "_memory", {})
    return d


def meta(*shape, dtype=torch.bfloat16):
    return torch.empty(*shape, dtype=dtype, device="meta")


os.environ.setdefault("DASH_ATTN_SEARCH_BUDGET_S", "120")
# The tests never touch the user's schedule cache: one fresh folder per session unless given.
os.environ.setdefault("DASH_ATTN_CACHE_DIR", tempfile.mkdtemp(prefix="dash_attn_test_cache_"))
