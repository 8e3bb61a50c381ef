#!/usr/bin/env python3
"""Registers and spills of the backward main kernels from `ptxas -v` output (nvcc -Xptxas -v, or a
CMake build log with DASH_PTXAS_VERBOSE=ON): one line per kernel and architecture,

    [sm90 ]SOURCE d<head_dim> <bf16|fp16> <arch>: <N> registers, <S> B spill stores, <L> B spill loads

(`sm90 ` before the Hopper family's kernel, runtime/kernels/sm90; none before the portable one's.)
A kernel whose wgmma instructions ptxas serialized (its info C7520, "Potential Performance Loss":
a wait or a branch between a warpgroup's wgmma issues; the kernel runs about a quarter slower)
gets `, wgmma SERIALIZED (ptxas C7520)` at the end of its line, and the exit code is 1.

SOURCE is what the kernel was compiled from, read from its mangled name: `generic` for a kernel
instantiated with the table-driven policy (runtime/kernels/<family>/generic.cu), the spec name for
a generated file (its policy's anonymous namespace names the file), `bwd_main` for kernels built
from the earlier single-file kernel, before the kernel took a policy. Lines repeated in the input (a kernel built
twice) are printed once, in order of first appearance.

Usage: scripts/ptxas_summary.py [--arch sm_90a] [LOG ...]   (no LOG: standard input)
Exit 0; 1 when a backward kernel's wgmma were serialized; 2 on bad usage, an unreadable file or
input without any backward kernel.
"""
import re
import sys

ENTRY = re.compile(r"Compiling entry function '(\S+)' for '(sm_\w+)'")
KERNEL = re.compile(r"bwd_main_kernelILi(\d+)ELi(\d+)E")
# The Hopper family's kernel, templated <Policy, D, DT> or <Policy, D, DT, TM> (Q rows per step,
# shown as "m<TM>"): dash::rt::sm90::bwd_kernel.
KERNEL_SM90 = re.compile(r"4sm90\d+bwd_kernelI.*ELi(\d+)ELi(\d+)EEEv")
KERNEL_SM90_TM = re.compile(r"4sm90\d+bwd_kernelI.*ELi(\d+)ELi(\d+)ELi(\d+)EEEv")
# The anonymous namespace of a .cu file: _GLOBAL__N__<hash>_<length>_<file name>_cu_<hash>_...
SOURCE = re.compile(r"_GLOBAL__N__[0-9a-f]+_\d+_(\w+?)_cu_[0-9a-f]+_")
# The table-driven policy (dash::rt::TablePolicy) as a template argument of the kernel.
GENERIC_POLICY = "11TablePolicyE"
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
REGISTERS = re.compile(r"Used (\d+) registers")
SERIALIZED = re.compile(r"C7520.*wgmma.*serialized.*in the function '(\S+?)'")


def fail(message):
    print(f"ptxas_summary.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def summarize(lines, arch):
    serialized = {m.group(1) for m in map(SERIALIZED.search, lines) if m}
    out = []
    current = None
    flag = ""
    flagged = False
    spills = ("0", "0")
    for line in lines:
        entry = ENTRY.search(line)
        if entry:
            name, entry_arch = entry.groups()
            kernel = KERNEL.search(name)
            family = ""
            tile = ""
            if kernel is None:
                kernel = KERNEL_SM90_TM.search(name)
                if kernel:
                    tile = f" m{kernel.group(3)}"
                else:
                    kernel = KERNEL_SM90.search(name)
                family = "sm90 " if kernel else ""
            current = None
            if kernel and (arch is None or entry_arch == arch):
                source = SOURCE.search(name)
                dtype = "bf16" if kernel.group(2) == "0" else "fp16"
                label = source.group(1) if source else ("generic" if GENERIC_POLICY in name else "?")
                current = f"{family}{label} d{kernel.group(1)}{tile} {dtype} {entry_arch}"
                spills = ("0", "0")
                # wgmma exists on sm_90a only (other architectures carry the kernel's trap stub).
                flag = (", wgmma SERIALIZED (ptxas C7520)"
                        if name in serialized and entry_arch.startswith("sm_90") else "")
            continue
        if current is None:
            continue
        spill = SPILLS.search(line)
        if spill:
            spills = spill.groups()
            continue
        registers = REGISTERS.search(line)
        if registers:
            row = (f"{current}: {registers.group(1)} registers, {spills[0]} B spill stores, "
                   f"{spills[1]} B spill loads{flag}")
            flagged = flagged or bool(flag)
            if row not in out:
                out.append(row)
            current = None
    return out, flagged


def main(argv):
    arch = None
    paths = []
    i = 0
    while i < len(argv):
        if argv[i] == "--arch":
            if i + 1 >= len(argv):
                fail("--arch needs a value (e.g. sm_90a)")
            arch = argv[i + 1]
            i += 2
        elif argv[i].startswith("-"):
            fail(f"unknown option {argv[i]} (usage: ptxas_summary.py [--arch ARCH] [LOG ...])")
        else:
            paths.append(argv[i])
            i += 1
    lines = []
    if not paths:
        lines = sys.stdin.read().splitlines()
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines += f.read().splitlines()
        except OSError as e:
            fail(f"{path}: {e.strerror}")
    rows, flagged = summarize(lines, arch)
    if not rows:
        fail("no backward kernel (bwd_main_kernel, sm90 bwd_kernel) in the input" + (f" for {arch}" if arch else ""))
    print("\n".join(rows))
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
