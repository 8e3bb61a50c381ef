"""The examples' CPU paths (CI): the data-parallel example's sharding and its whole run on the CPU
(gloo, two processes, SDPA's math backend), and its refusals. Their GPU runs (NCCL, dash_attn) are
results, not tests (docs/results)."""

import json
import os
import socket
import subprocess
import sys

import pytest
import torch

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")
DDP = os.path.join(EXAMPLES, "train_ddp_deterministic.py")
TINY = ["--dim", "64", "--heads", "2", "--layers", "1", "--seqlen", "64", "--batch", "4", "--vocab", "64"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env() -> dict:
    """This environment without the variables the script sets itself or reads from torchrun."""
    drop = {"RANK", "WORLD_SIZE", "NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def ddp_module():
    sys.path.insert(0, EXAMPLES)
    try:
        import train_ddp_deterministic

        return train_ddp_deterministic
    finally:
        sys.path.remove(EXAMPLES)


def test_shard_takes_every_world_th_row():
    m = ddp_module()
    rows = torch.arange(12).view(6, 2)
    parts = [m.shard(rows, r, 3) for r in range(3)]
    assert [p[:, 0].tolist() for p in parts] == [[0, 6], [2, 8], [4, 10]]
    assert sorted(torch.cat(parts)[:, 0].tolist()) == rows[:, 0].tolist()  # every row, once
    with pytest.raises(ValueError, match="does not split over 4 ranks"):
        m.shard(rows, 0, 4)


def test_ddp_example_on_the_cpu(tmp_path):
    report_path = tmp_path / "ddp.json"
    r = subprocess.run([sys.executable, DDP, "--device", "cpu", "--world", "2", "--backends", "sdpa-math",
                        "--steps", "3", "--port", str(free_port()), "--json", str(report_path), *TINY],
                       capture_output=True, text=True, timeout=300, env=clean_env())
    assert r.returncode == 0, r.stderr
    assert "sdpa-math (world 2)" in r.stdout and "bitwise identical" in r.stdout
    report = json.loads(report_path.read_text())
    assert report["world_size"] == 2 and report["process_group"] == "gloo"
    assert report["nccl_env"]["NCCL_ALGO"] == "Ring" and report["nccl_env"]["NCCL_NVLS_ENABLE"] == "0"
    math = report["sdpa-math"]
    assert len(math["runs"]) == 2 and all(len(run["losses"]) == 3 for run in math["runs"])
    assert all(run["ranks_agree"] for run in math["runs"])  # DDP kept the replicas equal
    assert math["identical_losses"] and math["identical_weights"]
    # Training moved the weights: a run of 1 step ends elsewhere than one of 3.
    one = tmp_path / "one.json"
    r = subprocess.run([sys.executable, DDP, "--device", "cpu", "--world", "2", "--backends", "sdpa-math",
                        "--steps", "1", "--port", str(free_port()), "--json", str(one), *TINY],
                       capture_output=True, text=True, timeout=300, env=clean_env())
    assert r.returncode == 0, r.stderr
    assert json.loads(one.read_text())["sdpa-math"]["runs"][0]["weights_sha256"] != math["runs"][0]["weights_sha256"]


@pytest.mark.parametrize("extra, message", [
    (["--backends", "sdpa-math"], "start it with torchrun, or give --world N"),
    (["--backends", "sdpa-math", "--world", "3"], "--batch 4 does not split over 3 ranks"),
    (["--backends", "sdpa-math", "--world", "-1"], "--world must be >= 0"),
    (["--world", "2", "--backends", "dash"], "dash_attn runs on CUDA only"),
    (["--world", "2", "--steps", "0"], "--steps and --batch must be >= 1"),
])
def test_ddp_example_refuses_bad_use(extra, message):
    r = subprocess.run([sys.executable, DDP, "--device", "cpu", *TINY, *extra], capture_output=True, text=True,
                       timeout=120, env=clean_env())
    assert r.returncode != 0
    assert message in r.stderr
