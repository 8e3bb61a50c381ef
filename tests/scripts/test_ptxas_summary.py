#!/usr/bin/env python3
"""scripts/ptxas_summary.py on a ptxas -v log written here (generic and generated kernels, two
architectures, a kernel built twice, a non-backward kernel, the kernel templated on its policy, the
Hopper family's kernel) and
on bad input."""
import os
import sys
import tempfile

from checks import ScriptChecks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "ptxas_summary.py")
GENERIC = "_ZN4dash2rt50_GLOBAL__N__48c2c5ed_11_bwd_main_cu_3ec3c29c_1011215bwd_main_kernelILi{d}ELi{t}EEEvNS0_9BwdParamsE"
SPEC = ("_ZN4dash2rt84_GLOBAL__N__e8f0aa61_45_d128_full_s8192x8192_h16_b1_shift_0ea6060e_cu_4bfeaf9b_"
        "1554815bwd_main_kernelILi128ELi0EEEvNS0_9BwdParamsE")


def entry(name, arch, registers, spills=None):
    lines = [f"ptxas info    : Compiling entry function '{name}' for '{arch}'",
             f"ptxas info    : Function properties for {name}"]
    if spills is not None:
        lines.append(f"    16 bytes stack frame, {spills[0]} bytes spill stores, {spills[1]} bytes spill loads")
    lines.append(f"ptxas info    : Used {registers} registers, used 1 barriers, 744 bytes cmem[0]")
    return lines


LOG = "\n".join(
    ["[1/8] Building CUDA object runtime/CMakeFiles/dash_rt.dir/bwd_main.cu.o", "ptxas info    : 0 bytes gmem"]
    + entry(GENERIC.format(d=128, t=0), "sm_80", 255, (124, 160))
    + entry(GENERIC.format(d=128, t=0), "sm_90a", 255, (12, 16))
    + entry(GENERIC.format(d=64, t=1), "sm_90a", 243, (0, 0))
    + entry("_ZN4dash2rt15fwd_kernelILi64EEEvNS0_9FwdParamsE", "sm_90a", 128, (0, 0))
    + entry(SPEC, "sm_90a", 253)
    + entry(GENERIC.format(d=128, t=0), "sm_90a", 255, (12, 16))  # built twice
) + "\n"

checks = ScriptChecks(SCRIPT)
check, run, failures = checks.check, checks.run, checks.failures


with tempfile.TemporaryDirectory() as tmp:
    log = os.path.join(tmp, "build.log")
    with open(log, "w") as f:
        f.write(LOG)
    r = run(["--arch", "sm_90a", log])
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
    check(r.stdout.splitlines() == [
        "bwd_main d128 bf16 sm_90a: 255 registers, 12 B spill stores, 16 B spill loads",
        "bwd_main d64 fp16 sm_90a: 243 registers, 0 B spill stores, 0 B spill loads",
        "d128_full_s8192x8192_h16_b1_shift_0ea6060e d128 bf16 sm_90a: 253 registers, 0 B spill stores, "
        "0 B spill loads",
    ], f"sm_90a rows: {r.stdout!r}")
    r = run([], stdin=LOG)  # every architecture, from standard input
    check(r.returncode == 0 and r.stdout.splitlines()[0] ==
          "bwd_main d128 bf16 sm_80: 255 registers, 124 B spill stores, 160 B spill loads",
          f"stdin, all archs: {r.stdout!r}")
    check(len(r.stdout.splitlines()) == 4, f"4 rows over both archs: {r.stdout!r}")
    for args, stdin, what in [(["--arch", "sm_75", log], None, "no kernel for the arch"),
                              ([os.path.join(tmp, "missing.log")], None, "unreadable file"),
                              (["--bogus"], None, "unknown option"),
                              (["--arch"], None, "--arch without a value"),
                              ([], "nothing here\n", "no kernel in the input")]:
        r = run(args, stdin=stdin)
        check(r.returncode == 2 and r.stdout == "" and r.stderr.startswith("ptxas_summary.py: error: ")
              and r.stderr.count("\n") == 1, f"{what}: exit {r.returncode}, {r.stderr!r}")

    # The kernel templated on its policy: the table-driven one (generic) and a generated one, whose
    # anonymous namespace names its file.
    policy_log = os.path.join(tmp, "policy.log")
    with open(policy_log, "w") as f:
        f.write("\n".join(
            entry("_ZN4dash2rt4sm8015bwd_main_kernelILi64ELi0ENS0_11TablePolicyEEEvNS0_9BwdParamsE",
                  "sm_90a", 240, (0, 0))
            + entry("_ZN4dash2rt4sm8015bwd_main_kernelILi64ELi0ENS0_83_GLOBAL__N__88d6ec7b_44_"
                    "d64_full_s8192x8192_h32_b1_shift_3bac6b48_cu_d6359a99_1162631SchedulePolicy_"
                    "dc2a437f21a747f9EEEvNS0_9BwdParamsE", "sm_90a", 238)
            + entry("_ZN4dash2rt4sm9010bwd_kernelINS0_11TablePolicyELi128ELi1EEEvNS0_9BwdParamsENS1_10TensorMapsE",
                    "sm_90a", 168, (48, 72))
            + entry("_ZN4dash2rt4sm9010bwd_kernelINS0_83_GLOBAL__N__88d6ec7b_44_"
                    "d64_full_s8192x8192_h32_b1_shift_3bac6b48_cu_d6359a99_1162631SchedulePolicy_"
                    "dc2a437f21a747f9EELi64ELi0EEEvNS0_9BwdParamsENS1_10TensorMapsE", "sm_90a", 168)
            # templated on its Q tile too: <Policy, D, DT, TM>
            + entry("_ZN4dash2rt4sm9010bwd_kernelINS0_11TablePolicyELi128ELi0ELi80EEEvNS0_9BwdParamsENS1_10TensorMapsE",
                    "sm_90a", 168, (64, 120))) + "\n")
    r = run([policy_log])
    check(r.returncode == 0 and r.stdout.splitlines() == [
        "generic d64 bf16 sm_90a: 240 registers, 0 B spill stores, 0 B spill loads",
        "d64_full_s8192x8192_h32_b1_shift_3bac6b48 d64 bf16 sm_90a: 238 registers, 0 B spill stores, "
        "0 B spill loads",
        "sm90 generic d128 fp16 sm_90a: 168 registers, 48 B spill stores, 72 B spill loads",
        "sm90 d64_full_s8192x8192_h32_b1_shift_3bac6b48 d64 bf16 sm_90a: 168 registers, 0 B spill stores, "
        "0 B spill loads",
        "sm90 generic d128 m80 bf16 sm_90a: 168 registers, 64 B spill stores, 120 B spill loads",
    ], f"policy-templated kernels: {r.stdout!r} {r.stderr!r}")

    # ptxas serialized one kernel's wgmma: its row says so and the exit code is 1.
    sm90 = "_ZN4dash2rt4sm9010bwd_kernelINS0_11TablePolicyELi64ELi0EEEvNS0_9BwdParamsENS1_10TensorMapsE"
    serial_log = os.path.join(tmp, "serial.log")
    with open(serial_log, "w") as f:
        f.write("\n".join(
            entry(sm90, "sm_80", 24, (0, 0))  # the trap stub: no wgmma, never flagged
            + entry(sm90, "sm_90a", 168, (0, 0))
            + [f"ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized "
               f"due to program dependence on compiler-inserted WG.AR in divergent path in the function '{sm90}'"]
            + entry(GENERIC.format(d=64, t=1), "sm_90a", 243, (0, 0))) + "\n")
    r = run([serial_log])
    check(r.returncode == 1 and r.stdout.splitlines() == [
        "sm90 generic d64 bf16 sm_80: 24 registers, 0 B spill stores, 0 B spill loads",
        "sm90 generic d64 bf16 sm_90a: 168 registers, 0 B spill stores, 0 B spill loads, "
        "wgmma SERIALIZED (ptxas C7520)",
        "bwd_main d64 fp16 sm_90a: 243 registers, 0 B spill stores, 0 B spill loads",
    ], f"serialized wgmma: exit {r.returncode}, {r.stdout!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ptxas_summary.py: all checks passed")
