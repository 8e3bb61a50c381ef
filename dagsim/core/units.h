#pragma once
// Units of the model. Time is an integer everywhere: no float drift, exact tests.
#include <cstdint>

namespace dash::sim {

/// Model time. Cycles of one SM clock unless a cost model says otherwise (the paper preset uses
/// abstract units). Always an integer.
using Cycles = std::int64_t;

}  // namespace dash::sim
