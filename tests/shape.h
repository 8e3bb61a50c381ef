#pragma once
// One attention shape as the tests write it: batch x heads x seqlen at a head dim, with the tiles
// a kernel family runs (runtime/kernels/family.h) and no GQA.
#include "dagsim/core/problem.h"
#include "runtime/kernels/family.h"

namespace dash::test {

inline sim::Problem kernel_shape(int batch, int heads, int seqlen, int head_dim, sim::Mask mask,
                                 rt::KernelFamily family = rt::kDefaultFamily) {
  sim::Problem p;
  p.batch = batch;
  p.q_heads = heads;
  p.kv_heads = heads;
  p.seqlen_q = seqlen;
  p.seqlen_k = seqlen;
  p.head_dim = head_dim;
  p.tile_m = rt::family_tile_m(family, head_dim);
  p.tile_n = rt::family_tile_n(family);
  p.mask = mask;
  return p;
}

}  // namespace dash::test
