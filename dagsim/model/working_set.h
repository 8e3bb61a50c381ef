#pragma once
// A schedule's working set: how many heads (a (batch, q head)) it keeps in progress at once, and the
// bytes they keep live (docs/model.md, "Working set"): what the memory floor (memory_floor.h)
// holds against the L2. Measured on the H200 (docs/results/2026-12-04-h200-pytorch-op.md),
// schedules whose heads' Q, dO and fp32 dQ accumulators together exceed the 50 MB L2 ran 12-31%
// slower than ones within it, which the DAG, rating them 1-3% faster, does not see.
#include <cstdint>

#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"

namespace dash::sim {

/// The clock is each CTA's step count: a persistent CTA runs its items one after another, one step
/// per unit; under a dynamic launch a CTA starts where the first of `slots` resident CTAs ends.
/// A head is in progress from its item's first step to its last; items without steps hold none.
struct WorkingSet {
  int max_heads = 0;       ///< most heads in progress at one clock
  int median_heads = 0;    ///< over the clocks until the last CTA's last step
  std::int64_t max_bytes = 0;  ///< most live bytes at one clock: per head, Q and dO of its sequence
                               ///< (elem_bytes per element) and its fp32 dQ accumulator
  std::int64_t median_bytes = 0;
  std::int64_t clocks = 0;  ///< the clock's length: the last step's end (persistent: the longest
                            ///< CTA's steps; dynamic: the list schedule's span)
};

/// `slots`: resident CTAs under a dynamic launch (ignored for a persistent one), >= 1.
/// `elem_bytes`: bytes per Q / dO element (2 for bf16 and fp16).
WorkingSet working_set(Problem const& problem, Schedule const& schedule, int slots, int elem_bytes = 2);

}  // namespace dash::sim
