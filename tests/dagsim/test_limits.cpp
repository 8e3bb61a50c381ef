// The model's size limits (docs/model.md, "Limits"), each tested at its boundary: the largest
// accepted value passes, one more is refused with one line naming the limit. Problems with more
// than 32767 tiles along one dimension (a 16-bit tile index overflows there) validate, simulate
// (both simulators agree) and round-trip through the schedule format for every named strategy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"
#include "tests/dagsim/fixtures.h"

using namespace dash::sim;
using Catch::Contains;

namespace {

Problem small() { return testing::grid(2, 2); }

}  // namespace

TEST_CASE("problem limits hold at their boundaries", "[limits]") {
  SECTION("batch, heads, head dim") {
    struct Limit {
      int Problem::*field;
      int max;
      char const* refusal;
    };
    for (Limit const& l : {Limit{&Problem::batch, 1 << 16, "batch 65537 is larger than 65536"},
                           Limit{&Problem::q_heads, 1 << 12, "heads 4097 is larger than 4096"},
                           Limit{&Problem::head_dim, 1024, "head-dim 1025 is larger than 1024"}}) {
      INFO(l.refusal);
      Problem p = small();
      p.*l.field = l.max;
      CHECK_NOTHROW(validate_problem(p));
      p.*l.field = l.max + 1;
      CHECK_THROWS_WITH(validate_problem(p), Contains(l.refusal));
    }
  }
  SECTION("tiles") {
    Problem p = small();
    p.tile_m = 256;
    p.tile_n = 16;
    CHECK_NOTHROW(validate_problem(p));
    p.tile_m = 272;
    CHECK_THROWS_WITH(validate_problem(p), Contains("multiples of 16 and at most 256"));
    p.tile_m = 24;
    CHECK_THROWS_WITH(validate_problem(p), Contains("multiples of 16 and at most 256"));
  }
  SECTION("sequence length, fixed and varlen") {
    Problem p = small();
    p.seqlen_q = 1 << 24;  // 262144 Q tiles of 64 against 2 KV tiles: within the step limit
    CHECK_NOTHROW(validate_problem(p));
    p.seqlen_q += 1;
    CHECK_THROWS_WITH(validate_problem(p), Contains("sequence length above 16777216 in batch 0"));
    Problem v = small();
    v.batch = 2;
    v.seqlens_q = {64, 1 << 24};
    v.seqlens_k = {64, 128};
    CHECK_NOTHROW(validate_problem(v));
    v.seqlens_k = {64, (1 << 24) + 1};
    CHECK_THROWS_WITH(validate_problem(v), Contains("sequence length above 16777216 in batch 1"));
  }
  SECTION("tile pairs: the simulator's limit of 2^27") {
    Problem p = small();
    p.seqlen_q = 64 << 14;  // 2^14 x 2^13 tile pairs = 2^27
    p.seqlen_k = 64 << 13;
    REQUIRE(p.tile_count() == std::int64_t{1} << 27);
    CHECK_NOTHROW(validate_problem(p));
    p.seqlen_k += 64;
    CHECK_THROWS_WITH(validate_problem(p), Contains("more than the simulator's limit of 134217728"));
  }
}

TEST_CASE("more than 32767 tiles along one dimension: every named strategy", "[limits]") {
  constexpr int kMany = 40000;
  // Many Q tiles per KV tile (long dQ columns), and many KV tiles per Q tile (long dQ chains).
  Problem tall = testing::grid(kMany, 2);
  Problem wide = testing::grid(2, kMany);
  Machine const machine = machine_with_sms(132);
  for (Problem const* p : {&tall, &wide}) {
    REQUIRE_NOTHROW(validate_problem(*p));
    CostModel const cost = default_model(*p);
    int ran = 0;
    for (std::string const& name : strategy_names()) {
      Schedule schedule;
      try {
        schedule = make_strategy(name, *p, machine);
      } catch (dash::UserError const&) {
        continue;  // the strategy refuses this shape
      }
      INFO(name << (p == &tall ? " tall" : " wide"));
      REQUIRE_NOTHROW(validate(*p, machine, schedule));
      // The long dimension's last tile index, past where a 16-bit index would have wrapped.
      int max_q = 0;
      int max_kv = 0;
      for (Cta const& cta : schedule.ctas) {
        for (WorkItem const& item : cta.items) {
          max_kv = std::max(max_kv, item.kv_tile);
          for (int q : item.q_order) max_q = std::max(max_q, q);
        }
      }
      CHECK((p == &tall ? max_q : max_kv) == kMany - 1);
      SimResult const sim = simulate(*p, machine, cost, schedule);
      CHECK(sim.steps == 2 * std::int64_t{kMany});
      CHECK(simulate_events(*p, machine, cost, schedule) == sim.makespan);
      std::string const text = to_json(ScheduleDocument{*p, machine, schedule});
      ScheduleDocument const back = schedule_from_json(text);
      CHECK(to_json(back) == text);
      ++ran;
    }
    CHECK(ran >= 2);
  }
}
