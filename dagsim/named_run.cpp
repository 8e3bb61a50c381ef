#include "dagsim/named_run.h"

#include <fmt/format.h>

#include "dagsim/error.h"
#include "dagsim/strategies.h"
#include "dagsim/validate.h"

namespace dash::sim {

NamedRun run_named(std::string const& name, Problem const& problem, Machine const& machine,
                   CostModel const& cost, LaunchModel launch) {
  NamedRun run;
  run.name = name;
  try {
    Schedule schedule = make_strategy(name, problem, machine, launch);
    validate(problem, machine, schedule);
    run.result = simulate(problem, machine, cost, schedule);
    run.schedule = std::move(schedule);
  } catch (UserError const& e) {
    run.refused = e.what();
    run.result.reset();
  }
  return run;
}

std::vector<NamedRun> run_all_named(Problem const& problem, Machine const& machine, CostModel const& cost,
                                    LaunchModel launch) {
  std::vector<NamedRun> runs;
  for (auto const& name : strategy_names()) runs.push_back(run_named(name, problem, machine, cost, launch));
  return runs;
}

NamedRun const& fastest(std::vector<NamedRun> const& runs) {
  NamedRun const* best = nullptr;
  std::string refusals;
  for (auto const& run : runs) {
    if (!run.ran()) {
      refusals += fmt::format(" {}: {};", run.name, run.refused);
      continue;
    }
    if (best == nullptr || run.result->makespan < best->result->makespan) best = &run;
  }
  if (best == nullptr) user_error("no named strategy accepts this problem:{}", refusals);
  return *best;
}

}  // namespace dash::sim
