#pragma once
// Constructive starting points for the search: list scheduling of work items onto CTAs (LPT:
// longest item first onto the least loaded CTA; SPT: shortest first), with ties between equal
// items broken across heads and batches so that CTAs running at the same time touch different
// dQ tiles, and several Q orders per item (ascending, descending, shifted by the KV tile).
#include <string>
#include <vector>

#include "dagsim/search/search_plan.h"

namespace dash::sim {

struct Seed {
  std::string name;  ///< e.g. "lpt/desc", "lpt-w/desc" (heads in windows), or a named strategy
  Plan plan;
};

/// Deterministic list-scheduling seeds for the evaluator's problem, machine and launch model.
std::vector<Seed> list_schedule_seeds(PlanEvaluator const& evaluator, LaunchModel launch);

/// A lower bound of every schedule's makespan from packing the items (each on one SM, never
/// split; weights from PlanEvaluator::item_work) onto the SMs (load_lower_bound, search_bound.h:
/// the largest item, the pigeonhole bound, the smallest subset sum of item loads that reaches the
/// average), plus the reduction that trails a CTA's last step when the writer warp runs it
/// (k >= 1, no GQA). Valid for persistent and dynamic launch.
Cycles packing_bound(PlanEvaluator const& evaluator);

}  // namespace dash::sim
