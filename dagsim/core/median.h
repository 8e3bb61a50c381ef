#pragma once
// The statistic behind every timed figure (docs/bench.md): one definition for `dash bench` and the
// runtime's own benchmark.
#include <algorithm>
#include <vector>

#include "dagsim/core/error.h"

namespace dash::sim {

/// The median of `samples`: the middle one, or the mean of the middle two for an even count.
/// UserError when there are none.
inline double median(std::vector<double> samples) {
  if (samples.empty()) user_error("no timed runs to take a median of");
  std::sort(samples.begin(), samples.end());
  std::size_t const n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
}

}  // namespace dash::sim
