#pragma once
// The statistics behind every timed figure (docs/bench.md): one definition for `dash bench`, the
// runtime's own benchmark and the hand-off probe.
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

/// The upper middle of `values`: the middle one of an odd count, the larger of the middle two of an
/// even one. An element of the input, so integer samples give an integer (the model's time is).
/// 0 when there are none.
template <typename T>
T upper_median(std::vector<T> values) {
  if (values.empty()) return T{};
  std::size_t const mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  return values[mid];
}

}  // namespace dash::sim
