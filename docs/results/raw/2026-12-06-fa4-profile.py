# FlashAttention-4's deterministic backward inside a profiler range, for Nsight Compute:
#   ncu --clock-control none --profile-from-start off --set full -f -o fa4 \
#       python3 2026-12-06-fa4-profile.py 64 4096 causal
# DASH grid shape (batch = 16384 / seqlen, heads = 2048 / head_dim), bf16, seeded random inputs;
# three backward calls before the profiled one (the first JIT-compiles).
import sys

import torch
from flash_attn.cute.interface import flash_attn_func

d, s, causal = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "causal"
b, h = 16384 // s, 2048 // d
g = torch.Generator(device="cuda").manual_seed(1)
q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16, generator=g).requires_grad_()
           for _ in range(3))
o = flash_attn_func(q, k, v, causal=causal, deterministic=True)
o = o[0] if isinstance(o, tuple) else o
do = torch.randn_like(o)
for _ in range(3):
    torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
