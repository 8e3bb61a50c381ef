#include "dagsim/model/named_run.h"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "dagsim/core/error.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/validate.h"

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

NamedRun fastest_named(Problem const& problem, Machine const& machine, CostModel const& cost, LaunchModel launch) {
  std::optional<NamedRun> best;
  std::string refusals;
  for (auto const& name : strategy_names()) {
    NamedRun run = run_named(name, problem, machine, cost, launch);
    if (!run.ran()) {
      refusals += fmt::format(" {}: {};", run.name, run.refused);
    } else if (!best || run.result->faster_than(*best->result)) {
      best = std::move(run);
    }
  }
  if (!best) user_error("no named strategy accepts this problem:{}", refusals);
  return std::move(*best);
}

}  // namespace dash::sim
