#pragma once
// splitmix64, the one definition of the mixer every seeded generator of the project starts from:
// the schedule search's generator (dagsim/core/rng.h), the GPU tests' host generator and their
// device-side fill (tests/runtime), the schedule-file tests. Host and device code call it, so this
// header includes nothing that nvcc cannot compile.
#include <cstdint>

#include "dagsim/core/host_device.h"

namespace dash::sim {

/// The increment of splitmix64's state per draw (2^64 divided by the golden ratio).
inline constexpr std::uint64_t kSplitmix64Gamma = 0x9E3779B97F4A7C15ULL;

/// splitmix64's output function: a bijective mix of one 64-bit value.
DASH_HOST_DEVICE constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// One step of splitmix64: advances `state` and returns the next value of its stream.
DASH_HOST_DEVICE constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  state += kSplitmix64Gamma;
  return splitmix64_mix(state);
}

}  // namespace dash::sim
