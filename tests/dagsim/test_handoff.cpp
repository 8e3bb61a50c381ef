// The hand-off matrix summary of `dash probe`: medians, the two groups of SMs (hand-offs within a
// group faster than across), refusals.
#include <cstdint>

#include <catch2/catch.hpp>

#include "dagsim/core/error.h"
#include "dagsim/model/handoff.h"

using namespace dash::sim;

namespace {

/// `sms` SMs, the SMs of `in_group1` in group 1, the others in group 0: a pair costs 1000 cycles
/// within a group, 1300 across, plus `jitter` cycles that vary with the pair (deterministically).
template <class InGroup1>
HandoffMatrix synthetic(int sms, InGroup1 in_group1, int jitter) {
  HandoffMatrix m;
  m.sms = sms;
  for (int a = 0; a < sms; ++a) m.smid.push_back(2 * a);
  m.one_way.assign(static_cast<std::size_t>(sms * sms), 0);
  for (int a = 0; a < sms; ++a) {
    for (int b = 0; b < sms; ++b) {
      if (a == b) continue;
      std::int64_t const v =
          1000 + 300 * (in_group1(a) != in_group1(b)) + (a * 7 + b * 13) % (jitter + 1);
      m.one_way[static_cast<std::size_t>(a * sms + b)] = v;
    }
  }
  return m;
}

}  // namespace

TEST_CASE("hand-off summary finds the two groups of SMs and the class medians", "[handoff]") {
  // Group 1: every SM whose index is 2 or 3 mod 4 (interleaved, as the hardware's partitions are),
  // so that the first SM's split is not the answer by luck.
  auto const odd_pairs = [](int a) { return a % 4 >= 2; };
  HandoffSummary const s = summarize(synthetic(12, odd_pairs, 40));
  CHECK(s.pairs == 12 * 11);
  CHECK(s.group1_sms == 6);
  for (int a = 0; a < 12; ++a)
    CHECK(s.group[static_cast<std::size_t>(a)] == (odd_pairs(a) ? 1 : 0));
  CHECK(s.min >= 1000);
  CHECK(s.max <= 1340);
  CHECK(s.within0 >= 1000);
  CHECK(s.within0 <= 1040);
  CHECK(s.within1 >= 1000);
  CHECK(s.within1 <= 1040);
  CHECK(s.across >= 1300);
  CHECK(s.across <= 1340);
}

TEST_CASE("hand-off summary: one stray entry moves no SM", "[handoff]") {
  auto const odd_pairs = [](int a) { return a % 4 >= 2; };
  for (int stray = 1; stray < 12; ++stray) {
    HandoffMatrix m = synthetic(12, odd_pairs, 40);
    m.one_way[static_cast<std::size_t>(stray)] = 20000;  // (0, stray)
    HandoffSummary const s = summarize(m);
    CAPTURE(stray);
    CHECK(s.group1_sms == 6);
    for (int a = 0; a < 12; ++a)
      CHECK(s.group[static_cast<std::size_t>(a)] == (odd_pairs(a) ? 1 : 0));
  }
}

TEST_CASE("hand-off summary keeps one group when the SMs are alike", "[handoff]") {
  HandoffSummary const s = summarize(synthetic(
      8, [](int) { return false; }, 50));
  CHECK(s.group1_sms == 0);
  CHECK(s.across == 0);
  CHECK(s.within1 == 0);
  CHECK(s.within0 == s.median);
}

TEST_CASE("hand-off summary skips pairs not measured", "[handoff]") {
  HandoffMatrix m = synthetic(
      4, [](int) { return false; }, 0);
  m.one_way[1] = 0;  // (0, 1) not measured
  HandoffSummary const s = summarize(m);
  CHECK(s.pairs == 4 * 3 - 1);
}

TEST_CASE("hand-off summary refuses a malformed matrix", "[handoff]") {
  HandoffMatrix m = synthetic(
      4, [](int a) { return a == 0; }, 0);
  m.one_way.pop_back();
  CHECK_THROWS_AS(summarize(m), dash::UserError);
  m = synthetic(
      4, [](int a) { return a == 0; }, 0);
  m.one_way[2] = -5;
  CHECK_THROWS_AS(summarize(m), dash::UserError);
  m = synthetic(
      4, [](int a) { return a == 0; }, 0);
  m.smid.pop_back();
  CHECK_THROWS_AS(summarize(m), dash::UserError);
  CHECK_THROWS_AS(summarize(synthetic(
                      1, [](int) { return false; }, 0)),
                  dash::UserError);
  m = synthetic(
      3, [](int) { return false; }, 0);
  for (auto& v : m.one_way) v = 0;
  CHECK_THROWS_AS(summarize(m), dash::UserError);
}
