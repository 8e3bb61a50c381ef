// dash probe's measurement on the GPU: every pair of SMs measured, latencies in a plausible range,
// the clock measured; bad rounds refused.
#include <algorithm>
#include <cstdint>

#include <catch2/catch.hpp>

#include "dagsim/core/error.h"
#include "runtime/handoff_probe.h"

TEST_CASE("probe: the ticket hand-off between every pair of SMs", "[probe]") {
  dash::sim::HandoffMatrix const m = dash::rt::probe_handoff(8);
  REQUIRE(m.sms >= 2);
  auto const n = static_cast<std::size_t>(m.sms);
  REQUIRE(m.one_way.size() == n * n);
  REQUIRE(m.smid.size() == n);
  std::size_t measured = 0;
  for (std::size_t a = 0; a < n; ++a) {
    CHECK(m.one_way[a * n + a] == 0);
    for (std::size_t b = 0; b < n; ++b) {
      if (a == b || m.one_way[a * n + b] == 0) continue;
      ++measured;
      // A hand-off through L2 takes hundreds of cycles, not tens, and not a millisecond.
      CHECK(m.one_way[a * n + b] > 50);
      CHECK(m.one_way[a * n + b] < 1'000'000);
    }
  }
  // Each launch's pinger is the CTA on the row's SM, wherever the hardware put the CTAs: every
  // pair is measured.
  CHECK(measured == n * (n - 1));
  CHECK(m.clock_mhz > 500);
  CHECK(m.clock_mhz < 4000);
  dash::sim::HandoffSummary const s = dash::sim::summarize(m);
  CHECK(s.min <= s.median);
  CHECK(s.median <= s.max);
}

TEST_CASE("probe: rounds out of range are refused", "[probe]") {
  CHECK_THROWS_AS(dash::rt::probe_handoff(0), dash::UserError);
  CHECK_THROWS_AS(dash::rt::probe_handoff(257), dash::UserError);
}
