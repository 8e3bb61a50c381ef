#pragma once
// The DASH/FA3 benchmark grid's rule (docs/design.md section 6): one definition for `dash bench`, the
// search quality report and the runtime's own benchmark.
#include "dagsim/core/mask.h"
#include "dagsim/core/problem.h"

namespace dash::sim {

inline constexpr int kGridTotalTokens = 16384;
inline constexpr int kGridHidden = 2048;

/// One shape of the grid: batch = total_tokens / seqlen, q and KV heads = hidden / head_dim,
/// seqlen_q = seqlen_k = seqlen, the given tiles and mask. Validated (validate_problem); UserError
/// when seqlen does not divide total_tokens or head_dim does not divide hidden.
Problem grid_problem(int seqlen, int head_dim, Mask mask, int tile_m, int tile_n = 128,
                     int total_tokens = kGridTotalTokens, int hidden = kGridHidden);

}  // namespace dash::sim
