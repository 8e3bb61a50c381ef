#pragma once
// Lower bounds on the makespan of any schedule for a problem, machine and cost model.
#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/units.h"
#include "dagsim/model/cost_model.h"

namespace dash::sim {

struct Bounds {
  Cycles work = 0;   ///< total SM-bound work over SMs, a KV tile's steps staying on one SM
  Cycles chain = 0;  ///< the longest dQ (or dK/dV) reduction chain with its latencies
  [[nodiscard]] Cycles lower() const { return work > chain ? work : chain; }
};

Bounds compute_bounds(Problem const& problem, Machine const& machine, CostModel const& cost);

/// (makespan - bound) / bound, as a fraction.
double gap_to_bound(Cycles makespan, Cycles bound);

}  // namespace dash::sim
