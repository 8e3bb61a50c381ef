// The DASH/FA3 grid's rule: batch and heads from total tokens and hidden size; bad sizes refused.
#include <catch2/catch.hpp>

#include "dagsim/benchmark/grid.h"
#include "dagsim/core/error.h"

using namespace dash::sim;

TEST_CASE("grid_problem: batch = tokens / seqlen, heads = hidden / head_dim") {
  Mask const causal{MaskKind::kCausal, 0, 0};
  Problem const p = grid_problem(2048, 64, causal, 128);
  CHECK(p.batch == 8);
  CHECK(p.q_heads == 32);
  CHECK(p.kv_heads == 32);
  CHECK(p.seqlen_q == 2048);
  CHECK(p.seqlen_k == 2048);
  CHECK(p.head_dim == 64);
  CHECK(p.tile_m == 128);
  CHECK(p.tile_n == 128);
  CHECK(p.mask == causal);
  CHECK(p.seqlens_q.empty());
  Problem const q = grid_problem(512, 128, Mask{}, 64, 128, 4096, 1024);
  CHECK(q.batch == 8);
  CHECK(q.q_heads == 8);
  CHECK(q.mask.kind == MaskKind::kFull);

  CHECK_THROWS_AS(grid_problem(1000, 64, causal, 128), dash::UserError);  // 16384 % 1000
  CHECK_THROWS_AS(grid_problem(2048, 96, causal, 128), dash::UserError);  // 2048 % 96
  CHECK_THROWS_AS(grid_problem(0, 64, causal, 128), dash::UserError);
  CHECK_THROWS_AS(grid_problem(2048, 64, causal, 50), dash::UserError);  // tiles of 16
}
