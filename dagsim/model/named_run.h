#pragma once
// A named strategy (docs/strategies.md) run on one problem: built, validated and simulated, or
// refused with the reason. The one place that does this for search, compare, bench and codegen's
// default set.
#include <optional>
#include <string>
#include <vector>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/simulate.h"

namespace dash::sim {

struct NamedRun {
  std::string name;
  Schedule schedule;                ///< validated; empty when refused
  std::optional<SimResult> result;  ///< simulate()'s; none when refused
  std::string refused;              ///< why not (the UserError's message); empty when it ran

  [[nodiscard]] bool ran() const { return result.has_value(); }
};

/// make_strategy -> validate -> simulate. A refusal (outside the strategy's premise, an invalid or
/// deadlocking schedule) is recorded in the result, not thrown.
NamedRun run_named(std::string const& name, Problem const& problem, Machine const& machine,
                   CostModel const& cost, LaunchModel launch);

/// The fastest named strategy (SimResult::faster_than: the prediction, then the makespan; the
/// earlier in strategy_names() on ties), each run in turn so that one simulation's DAG
/// at a time is alive. UserError naming every refusal when none ran.
NamedRun fastest_named(Problem const& problem, Machine const& machine, CostModel const& cost, LaunchModel launch);

}  // namespace dash::sim
