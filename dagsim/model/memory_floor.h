#pragma once
// The memory floor: a schedule cannot finish before the GPU's HBM has moved the bytes it needs
// (docs/model.md, "The memory floor"). The DAG charges every step the same cost wherever its
// operands come from; measured on an H100 (docs/results/2026-12-06-h100-memory-floor.md), the
// walks that keep more heads live than the L2 holds waited 3x longer for their Q and dO per step
// and ran 25% slower without tickets at all. The floor is the model's bound for that: the
// compulsory traffic plus, for each step, its Q, dO, statistics and dQ accumulator traffic
// times the fraction of the working set the L2 cannot hold, over the HBM bandwidth.
#include <cstdint>

#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/units.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/working_set.h"

namespace dash::sim {

struct MemoryFloor {
  std::int64_t compulsory_bytes = 0;  ///< K, V, Q, dO read once; dK, dV, dQ written once
  std::int64_t step_bytes = 0;        ///< one full step's Q, dO, LSE, dPsum and dQ accumulator
  std::int64_t steps = 0;             ///< the schedule's steps
  std::int64_t miss_permille = 0;     ///< (working set - L2) / working set, 0 within the L2
  std::int64_t bytes = 0;             ///< compulsory + steps x step bytes x miss
  Cycles cycles = 0;                  ///< bytes / CostModel::hbm_bytes_per_cycle; 0 without a floor
};

/// The floor of `schedule` under `cost` for a working set `live` (working_set()); all zero when
/// cost.hbm_bytes_per_cycle is 0. Integer arithmetic throughout.
MemoryFloor memory_floor(Problem const& problem, Schedule const& schedule, CostModel const& cost,
                         WorkingSet const& live);

}  // namespace dash::sim
