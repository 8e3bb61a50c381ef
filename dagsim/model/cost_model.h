#pragma once
// Integer costs of the DAG's nodes and edges (docs/design.md section 2).
#include <string>

#include "dagsim/core/problem.h"
#include "dagsim/core/units.h"

namespace dash::sim {

struct CostModel {
  Cycles compute = 3800;  ///< c: one full (unmasked) step (i, j): the five GEMMs
  Cycles reduce = 1000;   ///< r: one ordered reduce-add of a dQ partial tile into global memory
  Cycles latency = 1000;  ///< L: ticket hand-off between consecutive reductions into one dQ tile
  int dq_buffer = 1;      ///< k: 0 = C then R back to back; k >= 1 = writer warp, k-deep buffer
  /// Partially masked steps (diagonal, window edge) cost c * visible / tile pairs when true
  /// (rounded up, at least 1); full c when false.
  bool proportional = true;
  Cycles reduce_kv = 2000;  ///< GQA: one ordered reduce-add of a dK+dV partial of a KV tile
  Cycles dsmem = 400;       ///< 2-CTA mode: per-step DSMEM exchange between the pair

  friend bool operator==(CostModel const&, CostModel const&) = default;

  /// Cost of step (i, j) of batch b under this model.
  [[nodiscard]] Cycles step_cost(Problem const& problem, int b, int i, int j) const;
};

/// The DASH paper's model: L = 0, k = 0, diagonal steps at full cost, c and r as given.
CostModel paper_model(Cycles compute, Cycles reduce);
/// A default for a problem on an H100-class SM, in cycles: c from the step's FLOPs at the measured
/// matmul rate, r from the dQ tile's bytes, L from the measured ticket hand-off.
CostModel default_model(Problem const& problem);

}  // namespace dash::sim
