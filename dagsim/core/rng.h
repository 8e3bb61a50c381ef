#pragma once
// Our own seeded random numbers. std:: distributions are implementation-defined, so the same seed
// would give different schedules with libstdc++ and libc++; determinism is the product, so every
// draw goes through this file: splitmix64 expands the seed, xoshiro256** generates, and the
// bounded draws are ours (unbiased by rejection).
#include <cstdint>
#include <utility>
#include <vector>

#include "dagsim/core/error.h"
#include "dagsim/core/splitmix.h"

namespace dash::sim {

/// xoshiro256** seeded through splitmix64. Same seed -> same sequence on every platform.
class Rng {
 public:
  explicit constexpr Rng(std::uint64_t seed) {
    std::uint64_t mix = seed;
    for (auto& word : state_) word = splitmix64(mix);
  }

  /// Next raw 64-bit value.
  constexpr std::uint64_t next() {
    std::uint64_t const result = rotl(state_[1] * 5, 7) * 9;
    std::uint64_t const t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform in [0, bound), bound >= 1, without modulo bias: values in the incomplete last block
  /// of 2^64 are rejected (at most one retry in two, in the worst case).
  constexpr std::uint64_t below(std::uint64_t bound) {
    DASH_ASSERT(bound >= 1);
    std::uint64_t const limit = ~std::uint64_t{0} - (~std::uint64_t{0} % bound);
    for (;;) {
      std::uint64_t const x = next();
      if (x < limit) return x % bound;
    }
  }

  /// Uniform integer in [lo, hi], both inclusive, lo <= hi.
  constexpr std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) {
    DASH_ASSERT(lo <= hi);
    std::uint64_t const span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    if (span == ~std::uint64_t{0}) return static_cast<std::int64_t>(next());
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + below(span + 1));
  }

  /// int-typed convenience for indices and sizes.
  constexpr int uniform(int lo, int hi) { return static_cast<int>(uniform_int(lo, hi)); }

  /// True with probability num / den.
  constexpr bool chance(std::uint64_t num, std::uint64_t den) { return below(den) < num; }

  /// Uniform in [0, 1) with 53 random bits.
  constexpr double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Fisher-Yates with our own bounded draws.
  template <typename T>
  void shuffle(std::vector<T>& values) {
    for (std::size_t k = values.size(); k > 1; --k) {
      std::size_t const pick = static_cast<std::size_t>(below(k));
      std::swap(values[k - 1], values[pick]);
    }
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4]{};
};

}  // namespace dash::sim
