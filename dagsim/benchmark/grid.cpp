#include "dagsim/benchmark/grid.h"

#include "dagsim/core/error.h"
#include "dagsim/core/problem.h"

namespace dash::sim {

Problem grid_problem(int seqlen, int head_dim, Mask mask, int tile_m, int tile_n, int total_tokens,
                     int hidden) {
  if (seqlen <= 0 || total_tokens <= 0 || total_tokens % seqlen != 0) {
    user_error("grid: seqlen {} does not divide the total tokens {}", seqlen, total_tokens);
  }
  if (head_dim <= 0 || hidden <= 0 || hidden % head_dim != 0) {
    user_error("grid: head_dim {} does not divide the hidden size {}", head_dim, hidden);
  }
  Problem p;
  p.batch = total_tokens / seqlen;
  p.q_heads = p.kv_heads = hidden / head_dim;
  p.seqlen_q = p.seqlen_k = seqlen;
  p.head_dim = head_dim;
  p.tile_m = tile_m;
  p.tile_n = tile_n;
  p.mask = mask;
  validate_problem(p);
  return p;
}

}  // namespace dash::sim
