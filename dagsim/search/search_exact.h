#pragma once
// Exhaustive search for small instances (at most 12 live work items, all fitting on the SMs).
//
// The space, and why it is enough for the assignment: with no more items than SMs, giving every
// item its own CTA dominates any other assignment — merging two items onto one CTA only adds
// program-order edges to the DAG, and adding edges never shortens a longest path. Without GQA
// and varlen, the (batch, head) groups then share no CTA and no dQ tile, so they are independent
// and identical: the makespan is that of one group, and the search enumerates one group's items.
// Each item's Q order ranges over ascending, descending and two-phase orders at every rotation of
// its visible Q tiles; ranks are first-come under the model. "Complete" means that whole product
// was enumerated (or a plan reached the lower bound, which certifies it over all schedules).
#include <cstdint>
#include <optional>
#include <string>

#include "dagsim/search/search_plan.h"

namespace dash::sim {

struct ExactResult {
  std::optional<Plan> plan;  ///< the best plan enumerated, if better than the cutoff given
  Cycles makespan = 0;
  bool complete = false;
  std::int64_t nodes = 0;
  std::string space;         ///< the enumerated space, in words
};

/// Small enough for exact_search: persistent or dynamic, at most 12 live items, items <= SMs.
bool exact_applicable(PlanEvaluator const& evaluator, LaunchModel launch);

/// Enumerates the space above when it has at most `limit` points (else returns incomplete without
/// trying), stopping early at `lower`. `cutoff` > 0: only plans strictly better are returned.
ExactResult exact_search(PlanEvaluator& evaluator, LaunchModel launch, Cycles cutoff, Cycles lower,
                         std::int64_t limit = 200'000);

}  // namespace dash::sim
