#!/usr/bin/env python3
"""scripts/bench.sh without a GPU: stand-ins for `dash bench` and bench_torch.py copy the committed
alternating-rounds run of 2026-12-07 (H100, d128), so the order of the rounds, the files and the
table can be checked; and bad arguments exit 2 with one line."""
import os
import stat
import subprocess
import sys
import tempfile

from checks import ScriptChecks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "bench.sh")
RAW = os.path.join(ROOT, "docs", "results", "raw")
DASH = [os.path.join(RAW, f"2026-12-07c-h100-abba-dash-d128-r{r}.json") for r in (1, 2)]
TORCH = [os.path.join(RAW, f"2026-12-07c-h100-abba-torch-d128-r{r}.json") for r in (1, 2)]
checks = ScriptChecks(SCRIPT)
check = checks.check

# Both stand-ins copy round 2's file when the output's name ends in -r2.json, else round 1's; each
# records its arguments.
FAKE = """#!{python}
import shutil, sys
args = sys.argv[1:]
out = args[args.index("--json") + 1]
with open(out + ".args", "w") as f:
    f.write(" ".join(args))
shutil.copy({files!r}[1 if out.endswith("-r2.json") else 0], out)
"""


def write_fake(path, files):
    with open(path, "w") as f:
        f.write(FAKE.format(python=sys.executable, files=files))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def bench(args, tmp, name):
    env = dict(os.environ, DASH_BIN=os.path.join(tmp, "dash"), TORCH_BENCH=os.path.join(tmp, "torch.py"),
               OUT=os.path.join(tmp, name), DASH_COMMIT="abc1234")
    return subprocess.run(["bash", SCRIPT, *args], env=env, capture_output=True, text=True)


def table(args):
    res = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_table.py"), *args],
                         capture_output=True, text=True)
    check(res.returncode == 0, f"bench_table.py {args}: exit {res.returncode}: {res.stderr}")
    return res.stdout


with tempfile.TemporaryDirectory() as tmp:
    write_fake(os.path.join(tmp, "dash"), DASH)
    write_fake(os.path.join(tmp, "torch.py"), TORCH)

    # Two rounds: ours, peers, peers, ours; the rounds table of the committed run.
    res = bench(["--rounds", "2", "--kernels", "sm90", "--head-dims", "128", "--backends", "fa4,fa4-det"], tmp, "ab")
    out = os.path.join(tmp, "ab")
    check(res.returncode == 0, f"--rounds 2: exit {res.returncode}: {res.stderr}")
    with open(os.path.join(out, "phases.txt")) as f:
        phases = [line.split()[1:] for line in f]
    order = [name for what, name in phases if what == "start"]
    check(order == ["dash-sm90-r1", "torch-r1", "torch-r2", "dash-sm90-r2"], f"order of the rounds: {order}")
    check([what for what, _ in phases] == ["start", "end"] * 4, f"phase marks: {phases}")
    expected = table(["--round", DASH[0], TORCH[0], "--round", DASH[1], TORCH[1]])
    with open(os.path.join(out, "bench.md")) as f:
        check(f.read() == expected and expected.count("\n") > 10, "bench.md is not the rounds table of the inputs")
    with open(os.path.join(out, "dash-sm90-r2.json.args")) as f:
        dash_args = f.read().split()
    check(dash_args[:3] == ["bench", "--head-dims", "128"] and "--kernel" in dash_args
          and "--backends" not in dash_args and "abc1234" in dash_args, f"dash's arguments: {dash_args}")
    with open(os.path.join(out, "torch-r1.json.args")) as f:
        torch_args = f.read().split()
    check("--backends" in torch_args and "fa4,fa4-det" in torch_args and "--kernel" not in torch_args,
          f"the peers' arguments: {torch_args}")

    # Two families, then the same again into the same folder with sm80's second round failing: the
    # script fails, the table has sm90's rows and names the missing file (not the first run's).
    res = bench(["--rounds", "2", "--kernels", "sm80,sm90"], tmp, "two")
    out = os.path.join(tmp, "two")
    check(res.returncode == 0 and os.path.exists(os.path.join(out, "dash-sm80-r2.json")),
          f"two families: exit {res.returncode}: {res.stderr}")
    with open(os.path.join(tmp, "dash-sm80-fails"), "w") as f:
        f.write(FAKE.format(python=sys.executable, files=DASH).replace(
            "shutil.copy(", "if '--kernel' in args and args[args.index('--kernel') + 1] == 'sm80' and "
            "out.endswith('-r2.json'):\n    sys.exit(3)\nshutil.copy("))
    os.chmod(os.path.join(tmp, "dash-sm80-fails"), 0o755)
    os.rename(os.path.join(tmp, "dash"), os.path.join(tmp, "dash-ok"))
    os.rename(os.path.join(tmp, "dash-sm80-fails"), os.path.join(tmp, "dash"))
    res = bench(["--rounds", "2", "--kernels", "sm80,sm90"], tmp, "two")
    os.rename(os.path.join(tmp, "dash-ok"), os.path.join(tmp, "dash"))
    with open(os.path.join(out, "bench.md")) as f:
        md = f.read()
    check(res.returncode == 1 and "dash bench --kernel sm80 failed (exit 3)" in res.stdout
          and not os.path.exists(os.path.join(out, "dash-sm80-r2.json"))
          and f"(round 2: {os.path.join(out, 'dash-sm80-r2.json')} missing" in md
          and md.count("\n| 128 |") == 12, f"a failed family in round 2: exit {res.returncode}: {md[-400:]}")

    # One round: the plain table, the old file names.
    res = bench(["--kernels", "sm90"], tmp, "one")
    out = os.path.join(tmp, "one")
    check(res.returncode == 0, f"one round: exit {res.returncode}: {res.stderr}")
    check(all(os.path.exists(os.path.join(out, f)) for f in ("dash-sm90.json", "torch.json", "phases.txt")),
          f"one round's files: {sorted(os.listdir(out))}")
    with open(os.path.join(out, "bench.md")) as f:
        check(f.read() == table(["--dash", DASH[0], "--torch", TORCH[0]]), "bench.md is not the table of the inputs")

    # A failing dash run fails the script, after the rest has run.
    with open(os.path.join(tmp, "dash"), "w") as f:
        f.write("#!/bin/sh\nexit 3\n")
    res = bench(["--kernels", "sm90"], tmp, "failed")
    check(res.returncode == 1 and "failed (exit 3)" in res.stdout, f"failed dash: exit {res.returncode}")

    # Bad arguments: one line, exit 2, nothing run.
    for args, what in ((["--rounds", "0"], "--rounds 0"), (["--rounds", "two"], "--rounds two"),
                       (["--rounds"], "--rounds without a value"), (["--frob"], "unknown argument")):
        res = bench(args, tmp, "bad")
        check(res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and res.stdout == ""
              and not os.path.exists(os.path.join(tmp, "bad")), f"{what}: exit {res.returncode}, {res.stderr!r}")
    os.remove(os.path.join(tmp, "dash"))
    res = bench([], tmp, "bad")
    check(res.returncode == 2 and "not found" in res.stderr, f"missing dash: exit {res.returncode}, {res.stderr!r}")

checks.finish("test_bench_sh")
