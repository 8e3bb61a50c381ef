#pragma once
// How tightly a schedule chains the ordered dQ reductions: for each hand-off (rank w to w + 1 of
// one dQ tile), is the next contributor due at least one lock-step position after this one?
// Lock-step position: a CTA's step count before the contribution (every step one unit, every CTA
// from 0). The runtime uses it to place the ticket release (docs/schedule-protocol.md).
#include "dagsim/problem.h"
#include "dagsim/schedule.h"

namespace dash::sim {

/// Share of the hand-offs whose next contributor is due at the same position or earlier: near 0
/// when contributors are staggered (shift), near 1 when they run side by side (descending, fa3
/// on whole heads). 0 when there is no hand-off. The schedule must be valid. Positions model a
/// persistent grid (every CTA starts at 0); for a dynamic launch they ignore the launch waves.
double tight_handoff_share(Problem const& problem, Schedule const& schedule);

}  // namespace dash::sim
