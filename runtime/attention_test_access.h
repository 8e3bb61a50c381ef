#pragma once
// Test-only access to an Attention's uploaded schedule tables, past validation: the watchdog test
// (tests/runtime) corrupts one rank so that the schedule cannot finish. Not part of the API.
#include "runtime/attention.h"

namespace dash::rt {

struct AttentionTestAccess {
  /// Sets the rank of entry `step` of the step table the generic kernels read ({q_tile, rank} per
  /// step) and returns the rank it replaced. Needs set_schedule first; `step` must exist.
  static int set_dq_rank(Attention& attn, int step, int rank);
};

}  // namespace dash::rt
