#include "dagsim/flops.h"

#include <algorithm>
#include <cstdint>

namespace dash::sim {
namespace {

// Visible (query, key) pairs of one head of batch entry b, exactly, one query row at a time.
std::int64_t visible_pairs(Problem const& p, int b) {
  std::int64_t const len_q = p.len_q(b);
  std::int64_t const len_k = p.len_k(b);
  if (p.mask.kind == MaskKind::kFull) return len_q * len_k;
  std::int64_t const offset = len_k - len_q;
  std::int64_t const left = p.mask.kind == MaskKind::kWindow ? p.mask.left : len_k;
  std::int64_t const right = p.mask.kind == MaskKind::kWindow ? p.mask.right : 0;
  std::int64_t pairs = 0;
  for (std::int64_t r = 0; r < len_q; ++r) {
    std::int64_t const lo = std::max<std::int64_t>(0, r + offset - left);
    std::int64_t const hi = std::min<std::int64_t>(len_k - 1, r + offset + right);
    if (hi >= lo) pairs += hi - lo + 1;
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

}  // namespace dash::sim
