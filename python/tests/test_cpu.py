"""CPU tests (CI): import, argument validation, the schedule cache, fake-tensor shape propagation
under torch.compile. Meta tensors stand in for CUDA ones: they run the ops' fake implementations."""

import json
import os
import warnings

import pytest
import torch

import dash_attn
from dash_attn import _lib, _schedule
from conftest import meta

H200 = dict(gpu_name="NVIDIA H200", sms=132, kernel="sm90")


def test_import_and_library():
    assert _lib.lib().dash_attn_abi_version() == _lib.ABI_VERSION
    names = dash_attn.strategies()
    assert "fa3" in names and "descending" in names
    assert dash_attn.__version__


def test_no_expired_ticket_wait():
    # Nothing ran, so no wait expired (the GPU side of the watchdog: tests/runtime, C++).
    assert dash_attn.expired_ticket_wait() is None
    with pytest.raises(ValueError, match="null output pointer"):
        _lib.check(_lib.lib().dash_attn_expired_ticket_wait(None))


def test_missing_library_is_an_import_error(monkeypatch, tmp_path):
    monkeypatch.setenv(_lib.LIBRARY_ENV, str(tmp_path / "nope.so"))
    with pytest.raises(ImportError, match="is not a file"):
        _lib.library_path()


# ----- argument validation -----


def q_k_v(b=2, sq=100, sk=100, hq=8, hk=8, d=128, dtype=torch.bfloat16):
    return meta(b, sq, hq, d, dtype=dtype), meta(b, sk, hk, d, dtype=dtype), meta(b, sk, hk, d, dtype=dtype)


@pytest.mark.parametrize(
    "change, error, match",
    [
        (lambda q, k, v: (q.float(), k.float(), v.float()), TypeError, "bfloat16 or float16"),
        (lambda q, k, v: (q, k.half(), v), TypeError, "one dtype"),
        (lambda q, k, v: (torch.empty(q.shape, dtype=q.dtype), k, v), ValueError, "CUDA tensor"),
        (lambda q, k, v: (q[0], k, v), ValueError, "4-D"),
        (lambda q, k, v: (q.transpose(1, 3), k, v), ValueError, "last dimension"),
        (lambda q, k, v: (q, k, v[:, :50]), ValueError, "one shape"),
        (lambda q, k, v: (q[..., :96], k[..., :96], v[..., :96]), ValueError, "strides|head_dim"),
        (lambda q, k, v: (meta(2, 100, 8, 96), meta(2, 100, 8, 96), meta(2, 100, 8, 96)), ValueError,
         "head_dim 96"),
        (lambda q, k, v: (meta(2, 100, 8, 128), meta(2, 100, 3, 128), meta(2, 100, 3, 128)), ValueError,
         "multiple"),
        (lambda q, k, v: (q, meta(3, 100, 8, 128), meta(3, 100, 8, 128)), ValueError, "batch"),
        (lambda q, k, v: ("q", k, v), TypeError, "torch.Tensor"),
    ],
)
def test_bad_tensors(change, error, match):
    q, k, v = change(*q_k_v())
    with pytest.raises(error, match=match):
        dash_attn.attention(q, k, v)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(causal=1), TypeError, "causal"),
        (dict(window=5), TypeError, "window"),
        (dict(window=(-3, 2)), ValueError, "window sides"),
        (dict(window=(1.5, 2)), TypeError, "window"),
        (dict(softmax_scale=0.0), ValueError, "softmax_scale"),
        (dict(softmax_scale=float("nan")), ValueError, "softmax_scale"),
        (dict(softmax_scale="x"), TypeError, "softmax_scale"),
        (dict(deterministic="yes"), TypeError, "deterministic"),
        (dict(kernel="sm100"), ValueError, "kernel"),
        (dict(schedule=3), TypeError, "schedule"),
    ],
)
def test_bad_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        dash_attn.attention(*q_k_v(), **kwargs)


def test_mask_normalization():
    from dash_attn._ops import MASK_CAUSAL, MASK_FULL, MASK_WINDOW, UNBOUNDED, _mask_args

    assert _mask_args(False, None) == (MASK_FULL, UNBOUNDED, UNBOUNDED)
    assert _mask_args(True, None) == (MASK_CAUSAL, UNBOUNDED, 0)
    assert _mask_args(False, (-1, -1)) == (MASK_FULL, UNBOUNDED, UNBOUNDED)
    assert _mask_args(False, (-1, 0)) == (MASK_CAUSAL, UNBOUNDED, 0)
    assert _mask_args(True, (64, 64)) == (MASK_WINDOW, 64, 0)
    assert _mask_args(False, (64, -1)) == (MASK_WINDOW, 64, UNBOUNDED)


def test_bad_varlen():
    q, k = meta(300, 8, 64), meta(300, 2, 64)
    cu = torch.tensor([0, 100, 300], dtype=torch.int32, device="meta")
    with pytest.raises(ValueError, match="int32"):
        dash_attn.attention_varlen(q, k, k, cu.long(), cu, 200, 200)
    with pytest.raises(ValueError, match="max_seqlen_q"):
        dash_attn.attention_varlen(q, k, k, cu, cu, 0, 200)
    with pytest.raises(ValueError, match="3-D"):
        dash_attn.attention_varlen(meta(1, 300, 8, 64), k, k, cu, cu, 200, 200)
    with pytest.raises(ValueError, match="one length"):
        dash_attn.attention_varlen(q, k, k, cu, cu[:2], 200, 200)


def test_bad_prepare(cache_dir):
    with pytest.raises(ValueError, match="kernel family"):
        dash_attn.prepare(batch=1, heads=8, seqlen=512, head_dim=128, gpu_name="x", sms=10)
    with pytest.raises(ValueError, match="together"):
        dash_attn.prepare(batch=1, heads=8, seqlen=512, head_dim=128, sms=10, kernel="sm80")
    with pytest.raises(ValueError, match="head_dim"):
        dash_attn.prepare(batch=1, heads=8, seqlen=512, head_dim=80, **H200)
    with pytest.raises(ValueError, match="must divide"):  # the model's own check, through the C ABI
        dash_attn.prepare(batch=1, heads=8, kv_heads=3, seqlen=512, head_dim=128, **H200)
    assert not (cache_dir / "schedules").exists() or not list((cache_dir / "schedules").iterdir())


def test_capi_errors_are_value_errors():
    with pytest.raises(ValueError, match="malformed JSON"):
        _lib.call_text("dash_attn_make_schedule", b"{not json")
    with pytest.raises(ValueError):
        _lib.check_schedule({"problem": {"batch": 1}, "family": "sm80"}, "{}")
    assert _lib.lib().dash_attn_last_error()  # the message stays readable after the call


# ----- the schedule cache -----

SHAPE = dict(batch=2, heads=4, seqlen=1000, head_dim=64, causal=True)


def test_cache_writes_then_hits(cache_dir):
    first = dash_attn.prepare(**SHAPE, **H200)
    assert first["cached"] is False
    path = first["path"]
    assert os.path.dirname(path) == str(cache_dir / "schedules")
    entry = json.loads(open(path).read())
    assert entry["spec"]["sms"] == 132 and entry["spec"]["family"] == "sm90"
    assert entry["document"]["machine"]["sms"] == 132
    assert first["makespan"] >= first["lower_bound"] > 0
    # No temp file is left beside the entry.
    assert os.listdir(cache_dir / "schedules") == [os.path.basename(path)]
    _schedule._memory.clear()
    second = dash_attn.prepare(**SHAPE, **H200)
    assert second == {"path": path, "cached": True}


def test_cache_key_separates_specs(cache_dir):
    paths = {
        dash_attn.prepare(**SHAPE, **H200)["path"],
        dash_attn.prepare(**SHAPE, gpu_name="NVIDIA H200", sms=100, kernel="sm90")["path"],
        dash_attn.prepare(**SHAPE, gpu_name="NVIDIA H200", sms=132, kernel="sm80")["path"],
        dash_attn.prepare(**{**SHAPE, "causal": False}, **H200)["path"],
        dash_attn.prepare(**SHAPE, evaluations=64, **H200)["path"],
    }
    assert len(paths) == 5


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda text: text[: len(text) // 2],  # truncated
        lambda text: "",  # empty
        lambda text: json.dumps({**json.loads(text), "spec": {"version": 0}}),  # another spec
        lambda text: text.replace('"ctas"', '"ctaz"'),  # not a schedule document any more
        lambda text: json.dumps(  # a valid document for another problem
            {**json.loads(text), "document": {**json.loads(text)["document"],
                                              "problem": {**json.loads(text)["document"]["problem"],
                                                          "q_heads": 2, "kv_heads": 2}}}),
    ],
)
def test_corrupt_entry_is_rebuilt(cache_dir, corrupt):
    path = dash_attn.prepare(**SHAPE, **H200)["path"]
    good = open(path).read()
    with open(path, "w") as f:
        f.write(corrupt(good))
    _schedule._memory.clear()
    with pytest.warns(UserWarning, match="corrupt"):
        info = dash_attn.prepare(**SHAPE, **H200)
    assert info["cached"] is False and info["path"] == path
    assert json.loads(open(path).read()) == json.loads(good)  # rebuilt whole, and the same


def test_cache_dir_env_and_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("DASH_ATTN_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert dash_attn.cache_dir() == tmp_path / "xdg" / "dash_attn"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert dash_attn.cache_dir() == tmp_path / "home" / ".cache" / "dash_attn"
    monkeypatch.setenv("DASH_ATTN_CACHE_DIR", str(tmp_path / "mine"))
    assert dash_attn.cache_dir() == tmp_path / "mine"


def test_unwritable_cache_still_returns_a_schedule(cache_dir, monkeypatch):
    cache_dir.mkdir()
    blocker = cache_dir / "schedules"
    blocker.write_text("a file where the folder should be")
    with pytest.warns(UserWarning, match="cannot"):
        info = dash_attn.prepare(**SHAPE, **H200)
    assert info["cached"] is False


def test_search_is_repeatable(cache_dir):
    spec = _schedule.search_spec(
        _schedule.problem_dict(batch=1, q_heads=4, kv_heads=1, seqlen_q=1500, seqlen_k=3000,
                               head_dim=128, mask="causal"), "sm90", "NVIDIA H200", 40, 128)
    a, _ = _schedule.searched_schedule(spec, use_cache=False)
    b, _ = _schedule.searched_schedule(spec, use_cache=False)
    assert a == b


def test_resolve_names_and_files(cache_dir, tmp_path):
    problem = _schedule.problem_dict(batch=1, q_heads=2, kv_heads=2, seqlen_q=700, seqlen_k=700,
                                     head_dim=128, mask="full")
    doc = _schedule.resolve("descending", problem, "sm80", "NVIDIA A100", 108)
    assert json.loads(doc)["strategy"] == "descending"
    path = tmp_path / "s.json"
    path.write_text(doc)
    assert _schedule.resolve(str(path), problem, "sm80", "NVIDIA A100", 108) == doc
    other = {**problem, "seqlen_q": 900, "seqlen_k": 900}
    with pytest.raises(ValueError, match="schedule is for"):
        _schedule.resolve(str(path), other, "sm80", "NVIDIA A100", 108)
    with pytest.raises(ValueError, match="neither"):
        _schedule.resolve("no-such-strategy", problem, "sm80", "NVIDIA A100", 108)
    assert not (cache_dir / "schedules").exists()  # named strategies and files are not cached


def test_auto_is_the_modelled_best_named_strategy(cache_dir):
    problem = _schedule.problem_dict(batch=8, q_heads=16, kv_heads=16, seqlen_q=2048, seqlen_k=2048,
                                     head_dim=128, mask="causal")
    doc = json.loads(_schedule.resolve("auto", problem, "sm90", "NVIDIA H200", 132))
    spans = {}
    for name in _lib.strategy_names():
        result = _lib.make_schedule({"problem": problem, "family": "sm90",
                                     "machine": {"name": "NVIDIA H200", "sms": 132}, "strategy": name})
        spans[name] = result["makespan"]
    assert doc["strategy"] in spans
    assert spans[doc["strategy"]] == min(spans.values())
    assert doc["strategy"] != "fa3"  # the model rates fa3's order far behind on a causal mask
    assert not (cache_dir / "schedules").exists()  # "auto" runs no search and writes no cache entry
    searched = json.loads(_schedule.resolve("search", problem, "sm90", "NVIDIA H200", 132))
    assert searched["strategy"] == "search"
    assert (cache_dir / "schedules").exists()


@pytest.mark.parametrize("family,head_dim,mask,tile_m", [
    ("sm90", 128, "full", 80),     # the Hopper family's 80-row tile at head_dim 128 without a mask
    ("sm90", 128, "causal", 64),
    ("sm90", 128, "window:256,0", 64),
    ("sm90", 64, "full", 128),
    ("sm80", 128, "full", 64),     # the portable family has no 80-row tile
    ("sm80", 64, "causal", 128),
])
def test_schedules_take_the_family_default_tiles(family, head_dim, mask, tile_m):
    problem = _schedule.problem_dict(batch=1, q_heads=2, kv_heads=2, seqlen_q=1000, seqlen_k=1000,
                                     head_dim=head_dim, mask=mask)
    result = _lib.make_schedule({"problem": problem, "family": family,
                                 "machine": {"name": "NVIDIA H200", "sms": 132}, "strategy": "shift"})
    tiles = result["document"]["problem"]
    assert (tiles["tile_m"], tiles["tile_n"]) == (tile_m, 128)
    # The schedule is made at that height: one dQ reduction order per Q tile of each head.
    assert len(result["document"]["dq_order"]) == 2 * -(-1000 // tile_m)


def test_search_spec_carries_the_live_cap():
    problem = _schedule.problem_dict(batch=8, q_heads=16, kv_heads=16, seqlen_q=2048, seqlen_k=2048,
                                     head_dim=128, mask="causal")
    spec = _schedule.search_spec(problem, "sm90", "NVIDIA H200", 132, 32)
    assert spec["live_cap_bytes"] == 50 << 20
    query = {"problem": problem, "family": "sm90", "machine": {"name": "NVIDIA H200", "sms": 132},
             "strategy": "search", "evaluations": 32}
    capped = _lib.make_schedule({**query, "live_cap_bytes": spec["live_cap_bytes"]})
    free = _lib.make_schedule({**query, "live_cap_bytes": 0})
    named = _lib.make_schedule({**query, "strategy": "symmetric-shift"})
    assert capped["makespan"] <= named["makespan"]
    # Uncapped, the search's own schedule starts all 128 heads at once (256 MiB live), which the
    # DAG rates 3% faster; its memory floor at the H200's bandwidth (docs/model.md, "The memory
    # floor") rates it 12% slower, so the search keeps symmetric-shift's 17 heads (34 MiB).
    assert free["predicted"] <= named["predicted"]
    assert free["makespan"] == named["makespan"]
    # The spec's cap is the library's default (search.h, kDefaultLiveCap): a spec without the
    # field searches the same space.
    assert _lib.make_schedule(query)["document"] == capped["document"]


@pytest.mark.parametrize(
    "env, read, below, not_a_number, good, value",
    [
        ("EVALS_ENV", "default_evaluations", ("0", ">= 1"), ("many", "integer"), "7", 7),
        ("BUDGET_ENV", "default_budget_s", ("0", "> 0"), ("soon", "number"), "2.5", 2.5),
    ],
)
def test_numeric_env_settings(monkeypatch, env, read, below, not_a_number, good, value):
    name, reader = getattr(_schedule, env), getattr(_schedule, read)
    for text, message in (below, not_a_number):
        monkeypatch.setenv(name, text)
        with pytest.raises(ValueError, match=message):
            reader()
    monkeypatch.setenv(name, good)
    assert reader() == value


# ----- fake tensors: shapes through the ops and torch.compile -----


def test_fake_shapes_gqa_and_varlen():
    q, k, v = q_k_v(b=3, sq=77, sk=301, hq=16, hk=2, d=64)
    out, lse = torch.ops.dash_attn.fwd(q, k, v, None, None, 77, 301, 1, 1 << 28, 0, 0.125, True, "auto", "auto")
    assert out.shape == q.shape and out.dtype == q.dtype
    assert lse.shape == (16, 3 * 77) and lse.dtype == torch.float32
    cu = torch.tensor([0, 10, 300], dtype=torch.int32, device="meta")
    qv, kv = meta(300, 8, 128, dtype=torch.float16), meta(500, 1, 128, dtype=torch.float16)
    out = dash_attn.attention_varlen(qv, kv, kv, cu, cu, 290, 400, causal=True)
    assert out.shape == qv.shape and out.dtype == torch.float16


def test_fake_gradients_have_input_shapes():
    q, k, v = (t.requires_grad_() for t in q_k_v(sq=33, sk=65, hq=8, hk=1))
    out = dash_attn.attention(q, k, v, causal=True)
    out.sum().backward()
    assert q.grad.shape == q.shape and k.grad.shape == k.shape and v.grad.shape == v.shape


def test_torch_compile_fullgraph_forward_and_backward():
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        from functorch.compile import make_boxed_func
        from torch._functorch.aot_autograd import aot_module_simplified

        def compiler(g, _):
            graphs.append(g)
            return make_boxed_func(g.forward)

        return aot_module_simplified(gm, example_inputs, fw_compiler=compiler, bw_compiler=compiler)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(128, 128, dtype=torch.bfloat16, device="meta")

        def forward(self, q, k, v):
            o = dash_attn.attention(q, k, v, causal=True, window=(256, 0))
            return self.proj(o).float().square().mean()

    block = Block()
    compiled = torch.compile(block, backend=backend, fullgraph=True)
    q, k, v = (t.requires_grad_() for t in q_k_v(sq=129, sk=257, hq=8, hk=2))
    loss = compiled(q, k, v)
    loss.backward()
    assert loss.shape == () and q.grad.shape == q.shape and k.grad.shape == k.shape
    targets = [str(n.target) for g in graphs for n in g.graph.nodes if n.op == "call_function"]
    assert any("dash_attn.fwd" in t for t in targets)
    assert any("dash_attn.bwd" in t for t in targets)


def test_opcheck_fake_registration():
    # torch.library.opcheck's schema and fake-tensor checks, on meta tensors (no device kernel).
    q, k, v = q_k_v(sq=50, sk=70, hq=4, hk=4, d=64)
    args = (q, k, v, None, None, 50, 70, 0, 1 << 28, 1 << 28, 0.125, True, "auto", "auto")
    torch.library.opcheck(torch.ops.dash_attn.fwd.default, args,
                          test_utils=("test_schema", "test_faketensor"))
