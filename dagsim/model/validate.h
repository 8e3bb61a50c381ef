#pragma once
// Validation runs before simulation, code generation and upload: coverage (every unmasked step
// exactly once), ranks are permutations, and no deadlock under the launch model.
#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"

namespace dash::sim {

/// Throws UserError with one line naming the offending tile(s), e.g.
/// "step (b=0, h=3, i=5, j=2) appears twice (CTA 4 and CTA 9)" or
/// "deadlock: CTA 7 waits on dQ tile (b=0, h=1, i=3) rank 2 that can never be released".
/// Also validates the problem (validate_problem).
void validate(Problem const& problem, Machine const& machine, Schedule const& schedule);

}  // namespace dash::sim
