#include <catch2/catch.hpp>

#include "dagsim/core/flops.h"
#include "dagsim/core/problem.h"

using namespace dash::sim;

TEST_CASE("backward_flops: 2.5 x 4 b h d x visible pairs, causal squares halved") {
  Problem p;
  p.batch = 2;
  p.q_heads = p.kv_heads = 3;
  p.head_dim = 64;
  p.seqlen_q = p.seqlen_k = 100;
  double const per_pair = 2.5 * 4.0 * 2 * 3 * 64;  // per visible pair and batch entry
  CHECK(backward_flops(p) == per_pair * 100.0 * 100.0);
  p.mask = Mask{MaskKind::kCausal, 0, 0};
  CHECK(backward_flops(p) == per_pair * 100.0 * 100.0 / 2.0);
  // Window (left 1, right 0): row r sees keys r - 1 .. r, row 0 only itself: 2 * 100 - 1 pairs.
  p.mask = Mask{MaskKind::kWindow, 1, 0};
  CHECK(backward_flops(p) == per_pair * 199.0);
  // Causal with s_q < s_k aligns the diagonal at the bottom right: row r sees r + 50 + 1 keys.
  p.mask = Mask{MaskKind::kCausal, 0, 0};
  p.seqlen_k = 150;
  CHECK(backward_flops(p) == per_pair * (100.0 * 51.0 + 100.0 * 99.0 / 2.0));
}

TEST_CASE("tflops: FLOPs over milliseconds, in 10^12 per second") {
  CHECK(tflops(2e12, 1000.0) == Approx(2.0));
  CHECK(tflops(3e9, 0.5) == Approx(6.0));
}
