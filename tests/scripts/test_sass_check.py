#!/usr/bin/env python3
"""scripts/sass_check.py on saved SASS written here: an 80-row kernel with as many R2UR as the
64-row one passes, one with 40 more fails (exit 1), input without an 80-row kernel, a missing file
and a bad option exit 2. With object files as arguments (CTest: the runtime's objects), the real
sm_90a build must pass too."""
import os
import sys
import tempfile

from checks import ScriptChecks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
checks = ScriptChecks(os.path.join(ROOT, "scripts", "sass_check.py"))
check, run, failures = checks.check, checks.run, checks.failures

NAME = "_ZN4dash2rt4sm9010bwd_kernelINS0_11TablePolicyELi{d}ELi{dt}ELi{tm}EEEvNS0_9BwdParamsENS1_10TensorMapsE"


def kernel(d, dt, tm, r2ur, hgmma=4):
    lines = [f"\t\tFunction : {NAME.format(d=d, dt=dt, tm=tm)}", "\t.headerflags\t@\"EF_CUDA_SM90\""]
    lines += ["        /*0000*/                   R2UR UR4, R2 ;"] * r2ur
    lines += ["        /*0010*/                   HGMMA.64x80x16.F32.BF16 R24, gdesc[UR4], R24 ;"] * hgmma
    return "\n".join(lines) + "\n"


with tempfile.TemporaryDirectory() as tmp:
    def dump(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    good = dump("good.sass", kernel(128, 0, 64, 37) + kernel(128, 0, 80, 37) + kernel(64, 0, 128, 40))
    r = run(["--sass", good])
    check(r.returncode == 0, f"as many R2UR at 80 rows as at 64: exit {r.returncode}: {r.stdout} {r.stderr}")
    check("sm90 generic d128 bf16 m80: 37 R2UR, 4 HGMMA" in r.stdout, f"one line per kernel: {r.stdout!r}")

    bad = dump("bad.sass", kernel(128, 1, 64, 37) + kernel(128, 1, 80, 77))
    r = run(["--sass", bad])
    check(r.returncode == 1, f"40 more R2UR at 80 rows must fail: exit {r.returncode}: {r.stdout}")
    check("FAIL: d128 fp16" in r.stdout, f"the failing kernel named: {r.stdout!r}")

    # An object's dump: the sm_90a section, then the same kernels as sm_80 stubs (no HGMMA, no
    # R2UR). Only sm_90a counts, whatever the order of the sections.
    def section(arch, text):
        return f"Fatbin elf code:\n================\narch = {arch}\n" + text
    stubs = section("sm_80", kernel(128, 0, 64, 0, 0) + kernel(128, 0, 80, 0, 0))
    hopper_bad = section("sm_90a", kernel(128, 0, 64, 37) + kernel(128, 0, 80, 113))
    for name, text in (("bad-then-stubs.sass", hopper_bad + stubs), ("stubs-then-bad.sass", stubs + hopper_bad)):
        r = run(["--sass", dump(name, text)])
        check(r.returncode == 1 and "113 R2UR" in r.stdout, f"{name}: the sm_90a kernels count: exit {r.returncode}: {r.stdout}")
    r = run(["--sass", dump("stubs.sass", kernel(128, 0, 64, 0, 0) + kernel(128, 0, 80, 0, 0))])
    check(r.returncode == 2 and "no HGMMA" in r.stderr, f"kernels without HGMMA: exit 2, got {r.returncode}: {r.stderr!r}")

    edge = dump("edge.sass", kernel(128, 0, 64, 37) + kernel(128, 0, 80, 53))
    check(run(["--sass", edge]).returncode == 0, "the margin (16) itself passes")

    no80 = dump("no80.sass", kernel(128, 0, 64, 37))
    for args, what in (([("--sass"), no80], "no 80-row kernel"), (["--sass", os.path.join(tmp, "missing")], "missing file"),
                       (["--frobnicate", good], "unknown option"), ([], "no input"),
                       (["--only", "nothing-like-this", good], "--only matching nothing")):
        r = run(args)
        check(r.returncode == 2 and r.stderr.startswith("sass_check.py: error:") and r.stderr.count("\n") == 1,
              f"{what}: exit 2 and one error line, got {r.returncode}: {r.stderr!r}")

if len(sys.argv) > 1:
    r = run(["--only", "sm90/generic.cu", *sys.argv[1:]])
    check(r.returncode == 0, f"the build's sm90 generic kernels: exit {r.returncode}: {r.stdout} {r.stderr}")
    check(" m80: " in r.stdout and " m64: " in r.stdout, f"both d128 tiles read from the build: {r.stdout!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("sass_check.py: all checks passed")
