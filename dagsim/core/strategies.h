#pragma once
// Named schedules (docs/design.md section 3). Each works for any SM count, odd tile counts,
// seqlen_q != seqlen_k, many heads and batches; where its premise fails it degrades to a valid
// schedule (documented per strategy) — never a deadlocking one.
#include <string>
#include <vector>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"

namespace dash::sim {

/// "fa3", "fa3-spt", "descending", "shift", "symmetric-shift". Throws UserError on others.
Schedule make_strategy(std::string const& name, Problem const& problem, Machine const& machine,
                       LaunchModel launch = LaunchModel::kPersistent);

std::vector<std::string> strategy_names();

}  // namespace dash::sim
