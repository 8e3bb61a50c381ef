// Lower bounds: exact values on small problems, tightness where the model says so, and never
// above the makespan of any random valid schedule.
#include <catch2/catch.hpp>

#include <cmath>

#include "dagsim/core/error.h"
#include "dagsim/model/bounds.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"
#include "tests/dagsim/fixtures.h"
#include "tests/dagsim/random_schedule.h"

using namespace dash::sim;
using namespace dash::sim::testing;

TEST_CASE("work bound: SM-bound work over SMs, or the largest item", "[bounds]") {
  // k = 0: a step occupies the SM for c + r. 4 steps of 5 over 2 SMs; each item 2 steps.
  Bounds b = compute_bounds(grid(2, 2), machine_with_sms(2), paper_model(4, 1));
  CHECK(b.work == 10);
  CHECK(b.chain == 4 + 2 * 1);
  CHECK(b.lower() == 10);
  // k >= 1: R leaves the SM; the chain carries the hand-off latency.
  b = compute_bounds(grid(2, 2), machine_with_sms(2), costs(4, 1, 3, 1));
  CHECK(b.work == 8);
  CHECK(b.chain == 4 + 2 * 1 + 3);
  CHECK(b.lower() == 9);
  // More SMs than items: the largest item decides.
  b = compute_bounds(grid(3, 2), machine_with_sms(64), costs(4, 1, 0, 1));
  CHECK(b.work == 12);
  // Rounding up: 3 items of 3 steps of 4 over 2 SMs = 18.
  b = compute_bounds(grid(3, 3), machine_with_sms(2), costs(4, 1, 0, 1));
  CHECK(b.work == 18);
}

TEST_CASE("bounds use the masked step costs", "[bounds]") {
  // Causal 2x2, compute 4096 per full tile: diagonal tiles have 64*65/2 = 2080 visible pairs.
  Problem const p = grid(2, 2, 1, 1, Mask{MaskKind::kCausal, 0, 0});
  Bounds const b = compute_bounds(p, machine_with_sms(2), costs(4096, 100, 10, 1, 0, true));
  CHECK(b.work == 2080 + 4096);                 // item j = 0: Q tiles 0 (diagonal) and 1 (full)
  CHECK(b.chain == 2080 + 2 * 100 + 10);        // dQ tile 1: contributors j = 0 and j = 1 (diagonal)
}

TEST_CASE("GQA: the dK/dV chain bound is tight on a two-head group", "[bounds][gqa]") {
  Problem const p = grid(1, 1, 2, 1);
  CostModel const cost = costs(10, 5, 3, 1, 7);
  Bounds const b = compute_bounds(p, machine_with_sms(2), cost);
  CHECK(b.chain == 10 + 5 + 2 * 7 + 3);
  CHECK(b.work == 10);
  Schedule s;
  s.ctas = {Cta{{WorkItem{0, 0, 0, {0}}}}, Cta{{WorkItem{0, 1, 0, {0}}}}};
  s.dq_order = {{0}, {0}};
  s.dkv_order = {{1, 0}};
  validate(p, machine_with_sms(2), s);
  CHECK(simulate(p, machine_with_sms(2), cost, s).makespan == b.lower());
}

TEST_CASE("gap_to_bound", "[bounds]") {
  CHECK(gap_to_bound(110, 100) == Approx(0.1));
  CHECK(gap_to_bound(100, 100) == 0.0);
  CHECK(gap_to_bound(0, 0) == 0.0);
  CHECK(std::isinf(gap_to_bound(5, 0)));
}

TEST_CASE("bad inputs to bounds are user errors", "[bounds]") {
  CHECK_THROWS_AS(compute_bounds(grid(1, 1), machine_with_sms(1), costs(-1, 1, 1, 1)), dash::UserError);
  Problem bad = grid(1, 1);
  bad.batch = 0;
  CHECK_THROWS_AS(compute_bounds(bad, machine_with_sms(1), costs(1, 1, 1, 1)), dash::UserError);
}

TEST_CASE("no random valid schedule beats the bounds", "[bounds][random]") {
  Rng rng(4242);
  int tight = 0;
  for (int trial = 0; trial < 400; ++trial) {
    testing::RandomCase const rc = testing::random_case(rng);
    INFO("trial " << trial);
    Bounds const b = compute_bounds(rc.problem, rc.machine, rc.cost);
    Cycles const makespan = simulate(rc.problem, rc.machine, rc.cost, rc.schedule).makespan;
    REQUIRE(b.work <= makespan);
    REQUIRE(b.chain <= makespan);
    REQUIRE(gap_to_bound(makespan, b.lower()) >= 0.0);
    tight += makespan == b.lower() ? 1 : 0;
  }
  CHECK(tight > 0);  // the bounds are reached sometimes, so they are not trivially loose
}
