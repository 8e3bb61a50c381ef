#!/usr/bin/env python3
"""Guards how ptxas compiles the sm90 family's 80-row step: its wgmma must take their operand
descriptors from uniform registers, as the 64-row step's do (docs/design.md, "Hopper family": with
the stage index in a vector register, each descriptor is built in vector registers and moved over
with one R2UR per wgmma operand, and the 80-row calls run 4-8% slower). Reads the SASS of the
generic sm90 kernels (cuobjdump -sass of the object that runtime/kernels/sm90/generic.cu compiles
to, or a saved dump) and prints, per head dim, dtype and Q tile, the kernel's R2UR and HGMMA counts:

    sm90 generic d<D> <bf16|fp16> m<TM>: <R> R2UR, <H> HGMMA

Exit 1 when an 80-row kernel has more than MARGIN (16) R2UR beyond the 64-row kernel of its dtype
(measured with nvcc 13.0: 37 and 37; 113 when the epilogue's staging addresses kept the first stage
copy's descriptors in vector registers).

Usage: scripts/sass_check.py [--cuobjdump PATH] [--only TEXT] OBJECT_OR_CUBIN ...
       scripts/sass_check.py --sass FILE ...            (saved `cuobjdump -sass` text)
--only TEXT keeps the inputs whose path contains TEXT (CTest passes every object of the runtime).
cuobjdump: --cuobjdump, else on PATH, else the nvidia-cuda-cuobjdump wheel that scripts/setup.sh
installs into build-venv/ (with nvdisasm, which cuobjdump runs: looked for next to it first). Exit 2 on bad usage, a missing tool or file, or no sm90 generic kernel
at 64 and 80 rows in the input.
"""
import bisect
import glob
import os
import re
import shutil
import subprocess
import sys

FUNCTION = re.compile(r"^\s*Function : (\S+)", re.M)
ARCH = re.compile(r"^arch = (\w+)", re.M)
# dash::rt::sm90::bwd_kernel<TablePolicy, D, DT, TM>
GENERIC = re.compile(r"4sm9010bwd_kernelINS0_11TablePolicyELi(\d+)ELi(\d+)ELi(\d+)EEEv")
MARGIN = 16
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(msg):
    print(f"sass_check.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def find_cuobjdump(given):
    if given:
        if not os.access(given, os.X_OK):
            fail(f"--cuobjdump {given}: not an executable file")
        return given
    found = shutil.which("cuobjdump")
    if found:
        return found
    wheel = sorted(glob.glob(os.path.join(ROOT, "build-venv", "lib", "python3*", "site-packages", "nvidia", "cu*",
                                          "bin", "cuobjdump")))
    if wheel:
        return wheel[-1]
    fail("no cuobjdump: give --cuobjdump PATH, put it on PATH, or run scripts/setup.sh (build-venv/)")


def counts(text):
    """{(d, dtype, tm): (r2ur, hgmma)} of every sm90 generic kernel of the sm_90a code in a SASS dump.
    An object holds the same kernels for sm_80 too (stubs that trap): where the dump marks its
    sections (`arch = sm_80`), only those of sm_90a count."""
    out = {}
    arches = [(m.start(), m.group(1)) for m in ARCH.finditer(text)]
    starts = [pos for pos, _ in arches]
    heads = list(FUNCTION.finditer(text))
    for i, m in enumerate(heads):
        g = GENERIC.search(m.group(1))
        if not g:
            continue
        # The section this function sits in: the last `arch =` line before it.
        at = bisect.bisect_left(starts, m.start()) - 1
        if arches and (at < 0 or arches[at][1] != "sm_90a"):
            continue
        body = text[m.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        key = (int(g.group(1)), int(g.group(2)), int(g.group(3)))
        out[key] = (len(re.findall(r"\bR2UR\b", body)), len(re.findall(r"\bHGMMA\b", body)))
    return out


def main(argv):
    options = {"--cuobjdump": None, "--only": None}
    saved = False
    files = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in options:
            if i + 1 >= len(argv):
                fail(f"{a} needs a value")
            options[a] = argv[i + 1]
            i += 2
            continue
        if a == "--sass":
            saved = True
        elif a.startswith("-"):
            fail(f"unknown option {a}")
        else:
            files.append(a)
        i += 1
    tool, only = options["--cuobjdump"], options["--only"]
    if not files:
        fail("no input (usage: sass_check.py [--cuobjdump PATH] OBJECT ... | --sass FILE ...)")
    if only is not None:
        files = [f for f in files if only in f]
        if not files:
            fail(f"no input path contains '{only}'")
    if saved and tool:
        fail("--sass reads saved dumps; --cuobjdump is for objects")
    found = {}
    for f in files:
        if not os.path.isfile(f):
            fail(f"{f}: no such file")
        if saved:
            with open(f, errors="replace") as fh:
                text = fh.read()
        else:
            exe = find_cuobjdump(tool)
            # cuobjdump -sass runs nvdisasm: the one next to it first (the wheels install both there).
            env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(exe)) + os.pathsep + os.environ.get("PATH", ""))
            r = subprocess.run([exe, "-arch", "sm_90a", "-sass", f], capture_output=True, text=True, env=env)
            if r.returncode != 0:
                fail(f"cuobjdump -sass {f}: exit {r.returncode}: {r.stderr.strip()[:200]}")
            text = r.stdout
        found.update(counts(text))
    status = 0
    dtypes = sorted({k[1] for k in found if k[2] == 80})
    if not dtypes:
        fail("no sm90 generic kernel at 80 rows in the input (built without sm_90a?)")
    for key in sorted(found):
        d, dt, tm = key
        r2ur, hgmma = found[key]
        if hgmma == 0:
            fail(f"sm90 generic d{d} m{tm}: no HGMMA (a stub, not sm_90a code)")
        print(f"sm90 generic d{d} {'bf16' if dt == 0 else 'fp16'} m{tm}: {r2ur} R2UR, {hgmma} HGMMA")
    for dt in dtypes:
        if (128, dt, 64) not in found:
            fail(f"no 64-row d128 kernel of dtype {dt} to compare the 80-row one with")
        r80, r64 = found[(128, dt, 80)][0], found[(128, dt, 64)][0]
        if r80 > r64 + MARGIN:
            print(f"FAIL: d128 {'bf16' if dt == 0 else 'fp16'}: the 80-row kernel has {r80} R2UR, the 64-row one {r64} "
                  f"(allowed: {r64 + MARGIN}); its wgmma descriptors are built in vector registers again")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
