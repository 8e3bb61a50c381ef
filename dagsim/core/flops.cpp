#include "dagsim/core/flops.h"

#include <cstdint>

#include "dagsim/core/error.h"

namespace dash::sim {
namespace {

// Visible (query, key) pairs of one head of batch entry b, exactly: the problem's own count per
// tile (Problem::visible_pairs), summed over the tiles.
std::int64_t visible_pairs(Problem const& p, int b) {
  std::int64_t pairs = 0;
  for (int i = 0; i < p.q_tiles(b); ++i) {
    for (int j = 0; j < p.kv_tiles(b); ++j) pairs += p.visible_pairs(b, i, j);
  }
  return pairs;
}

}  // namespace

double backward_flops(Problem const& p) {
  double pairs = 0.0;
  for (int b = 0; b < p.batch; ++b) {
    bool const square_causal = p.mask.kind == MaskKind::kCausal && p.len_q(b) == p.len_k(b);
    pairs += square_causal ? static_cast<double>(p.len_q(b)) * static_cast<double>(p.len_k(b)) / 2.0
                           : static_cast<double>(visible_pairs(p, b));
  }
  return 2.5 * 4.0 * static_cast<double>(p.q_heads) * static_cast<double>(p.head_dim) * pairs;
}

double tflops(double flops, double ms) {
  DASH_ASSERT(ms > 0.0);
  return flops / (ms * 1e-3) / 1e12;
}

}  // namespace dash::sim
