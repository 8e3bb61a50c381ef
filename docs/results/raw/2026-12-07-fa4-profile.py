# FlashAttention-4's backward inside a profiler range, for Nsight Compute (--profile-from-start off):
#   python3 2026-12-07-fa4-profile.py D SEQLEN MASK BATCH HEADS KV_HEADS DET
# bf16, seeded random inputs; three backward calls before the profiled one (the first JIT-compiles).
import sys

import torch
from flash_attn.cute.interface import flash_attn_func

d, s, causal = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "causal"
b, h, hk, det = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7] == "1"
g = torch.Generator(device="cuda").manual_seed(1)
q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16, generator=g).requires_grad_()
k, v = (torch.randn(b, s, hk, d, device="cuda", dtype=torch.bfloat16, generator=g).requires_grad_() for _ in range(2))
o = flash_attn_func(q, k, v, causal=causal, deterministic=det)
o = o[0] if isinstance(o, tuple) else o
do = torch.randn_like(o)
for _ in range(3):
    torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
