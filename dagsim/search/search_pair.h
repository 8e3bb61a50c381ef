#pragma once
// FA4's 2-CTA mode in the model. Two CTAs (2p, 2p+1) run in lock step over KV tiles (2q, 2q+1)
// of one (b, h): each computes its own KV tile's step for the same Q tile, they exchange half of
// dS through distributed shared memory (CostModel::dsmem per step), and the pair emits ONE dQ
// contribution per Q tile — half the ordered reductions of the 1-CTA mode.
//
// The smallest model extension: such a pair behaves exactly like one CTA of the ordinary model
// that owns a KV tile of 2 * tile_n rows on a machine with half the SMs, whose full step costs
// c + dsmem (each SM computes its tile_m x tile_n half in parallel with its partner) and whose dQ
// partial is still tile_m x head_dim (one reduce, cost r). So a paired schedule is an ordinary
// schedule of that equivalent problem, and simulate() evaluates it unchanged. Partially masked
// steps scale with the visible fraction of the pair's 2 * tile_n columns (the exchange of masked
// rows is skipped too); dK/dV stay per CTA, each half reduced in parallel (reduce_kv per pair).
#include <optional>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/model/cost_model.h"

namespace dash::sim {

struct PairView {
  Problem problem;  ///< tile_n doubled
  Machine machine;  ///< half the SMs (pairs), named "<gpu>-2cta"
  CostModel cost;   ///< compute += dsmem
};

/// The equivalent problem of the 2-CTA mode, or nothing where it does not apply (fewer than two
/// SMs, or 2 * tile_n above the largest tile of 256 rows).
std::optional<PairView> pair_view(Problem const& problem, Machine const& machine, CostModel const& cost);

}  // namespace dash::sim
