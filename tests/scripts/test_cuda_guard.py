#!/usr/bin/env python3
"""cmake/cuda_guard.sh (the CUDA compiler launcher of DASH_WERROR builds) around stand-in compilers:
a clean one passes with its output and exit code, a failing one keeps its exit code, and one whose
output carries ptxas's C7520 (wgmma serialized) fails."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GUARD = os.path.join(ROOT, "cmake", "cuda_guard.sh")
C7520 = ("ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized "
         "due to program dependence on compiler-inserted WG.AR in divergent path in the function 'k'")

failures = []


def run(script):
    return subprocess.run([GUARD, "bash", "-c", script], capture_output=True, text=True)


r = run("echo 'ptxas info    : Used 168 registers'; exit 0")
if r.returncode != 0 or "Used 168 registers" not in r.stdout:
    failures.append(f"clean compile: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
r = run("echo 'error: something' >&2; exit 3")
if r.returncode != 3 or "error: something" not in r.stdout:
    failures.append(f"failing compile keeps its code: exit {r.returncode}, {r.stdout!r}")
r = run(f"echo \"{C7520}\" >&2; exit 0")
if r.returncode != 1 or "(C7520)" not in r.stdout or "serialized wgmma" not in r.stderr:
    failures.append(f"C7520 fails the compile: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("cuda_guard.sh: all checks passed")
