// The median behind every timed figure: odd and even counts, unsorted input, none.
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
