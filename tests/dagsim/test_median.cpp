// The median behind every timed figure: odd and even counts, unsorted input, none; the upper
// median of integer samples (the hand-off probe).
#include <cstdint>

#include <catch2/catch.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/median.h"

using dash::sim::median;

TEST_CASE("median: the middle sample, or the mean of the middle two") {
  CHECK(median({3.0}) == 3.0);
  CHECK(median({5.0, 1.0, 4.0}) == 4.0);
  CHECK(median({4.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(median({2.0, 2.0, 9.0, 1.0, 2.0, 7.0}) == 2.0);
  CHECK_THROWS_AS(median({}), dash::UserError);
}

TEST_CASE("upper median: an element of the input, the larger of the middle two") {
  using dash::sim::upper_median;
  CHECK(upper_median<std::int64_t>({7}) == 7);
  CHECK(upper_median<std::int64_t>({5, 1, 4}) == 4);
  CHECK(upper_median<std::int64_t>({4, 1, 3, 2}) == 3);  // not 2.5: the model's time is an integer
  CHECK(upper_median<std::int64_t>({1195, 1006, 1397, 1290}) == 1290);
  CHECK(upper_median<std::int64_t>({}) == 0);
}
