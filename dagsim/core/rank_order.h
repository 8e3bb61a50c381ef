#pragma once
// A reduction order (the contributors of one dQ or GQA dK/dV tile, first to last) turned into the
// rank of each contributor: the one inversion that the DAG builder, the runtime's tables and the
// code generator's rank tables all need.
#include <cstddef>
#include <span>
#include <vector>

#include "dagsim/core/error.h"

namespace dash::sim {

/// ranks[c - base] = the position of contributor c in `order`, for every c in it; other entries
/// are left as they are. Every c must lie in [base, base + ranks.size()).
inline void scatter_ranks(std::vector<int> const& order, int base, std::span<int> ranks) {
  for (std::size_t r = 0; r < order.size(); ++r) {
    int const at = order[r] - base;
    DASH_ASSERT(at >= 0 && static_cast<std::size_t>(at) < ranks.size());
    ranks[static_cast<std::size_t>(at)] = static_cast<int>(r);
  }
}

}  // namespace dash::sim
