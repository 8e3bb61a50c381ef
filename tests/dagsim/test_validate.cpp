// Validation: every rule has a negative case whose message names the offending tile; random
// valid schedules pass; deadlocks are found under both launch models, also on 262k-step schedules.
#include <catch2/catch.hpp>

#include <vector>

#include "dagsim/core/error.h"
#include "dagsim/model/validate.h"
#include "tests/dagsim/fixtures.h"
#include "tests/dagsim/random_schedule.h"

using namespace dash::sim;
using Catch::Contains;

using namespace dash::sim::testing;

namespace {

// 2x2 full mask, one CTA per KV tile, Q ascending, ranks by KV ascending: valid.
Schedule two_by_two() {
  return make({{WorkItem{0, 0, 0, {0, 1}}}, {WorkItem{0, 0, 1, {0, 1}}}}, {{0, 1}, {0, 1}});
}

}  // namespace

TEST_CASE("a valid schedule passes", "[validate]") {
  CHECK_NOTHROW(validate(grid(2, 2), machine_with_sms(2), two_by_two()));
}

TEST_CASE("launch shape", "[validate]") {
  Problem const p = grid(2, 2);
  CHECK_THROWS_WITH(validate(p, machine_with_sms(1), two_by_two()), Contains("persistent grid of 2 CTAs exceeds the 1 SMs"));
  Schedule none = two_by_two();
  none.ctas.clear();
  CHECK_THROWS_WITH(validate(p, machine_with_sms(2), none), Contains("no CTAs"));
  Schedule two_items = make({{WorkItem{0, 0, 0, {0, 1}}, WorkItem{0, 0, 1, {0, 1}}}}, {{0, 1}, {0, 1}}, {},
                            LaunchModel::kDynamic);
  CHECK_THROWS_WITH(validate(p, machine_with_sms(2), two_items), Contains("CTA 0 has 2 work items, expected exactly one"));
  // Many more dynamic CTAs than work items is refused before anything is sized by it.
  Schedule many = two_by_two();
  many.launch = LaunchModel::kDynamic;
  many.ctas.resize(100000, Cta{{WorkItem{0, 0, 0, {0, 1}}}});
  CHECK_THROWS_WITH(validate(p, machine_with_sms(2), many), Contains("only 2 work items"));
}

TEST_CASE("coverage: duplicate, missing, masked and out-of-range steps", "[validate]") {
  Problem const p = grid(2, 2);
  Machine const m = machine_with_sms(2);
  SECTION("duplicate step") {
    Schedule s = two_by_two();
    s.ctas[1].items[0].q_order = {1, 0, 1};
    CHECK_THROWS_WITH(validate(p, m, s), Contains("step (b=0, h=0, i=1, j=1) appears twice in CTA 1"));
  }
  SECTION("duplicate work item") {
    Schedule s = two_by_two();
    s.ctas[1].items[0].kv_tile = 0;
    CHECK_THROWS_WITH(validate(p, m, s), Contains("work item (b=0, h=0, j=0) appears twice (CTA 0 and CTA 1)"));
  }
  SECTION("missing step") {
    Schedule s = two_by_two();
    s.ctas[0].items[0].q_order = {1};
    CHECK_THROWS_WITH(validate(p, m, s), Contains("step (b=0, h=0, i=0, j=0) is missing from CTA 0"));
  }
  SECTION("missing work item") {
    Schedule s = two_by_two();
    s.ctas.pop_back();
    CHECK_THROWS_WITH(validate(p, m, s), Contains("step (b=0, h=0, i=0, j=1) is missing"));
  }
  SECTION("out of range") {
    Schedule s = two_by_two();
    s.ctas[0].items[0].batch = 3;
    CHECK_THROWS_WITH(validate(p, m, s), Contains("batch 3 out of range"));
    s = two_by_two();
    s.ctas[0].items[0].head = -1;
    CHECK_THROWS_WITH(validate(p, m, s), Contains("head -1 out of range"));
    s = two_by_two();
    s.ctas[0].items[0].kv_tile = 2;
    CHECK_THROWS_WITH(validate(p, m, s), Contains("KV tile 2 out of range"));
    s = two_by_two();
    s.ctas[0].items[0].q_order = {0, 7};
    CHECK_THROWS_WITH(validate(p, m, s), Contains("visits Q tile 7 out of range 0..1"));
  }
  SECTION("masked step") {
    Problem const causal = grid(2, 2, 1, 1, Mask{MaskKind::kCausal, 0, 0});
    Schedule s = make({{WorkItem{0, 0, 0, {0, 1}}}, {WorkItem{0, 0, 1, {0, 1}}}}, {{0}, {0, 1}});
    CHECK_THROWS_WITH(validate(causal, m, s), Contains("step (b=0, h=0, i=0, j=1) in CTA 1 is fully masked"));
    // Without it the schedule is valid; an item with no visible tile may be absent or empty.
    s.ctas[1].items[0].q_order = {1};
    CHECK_NOTHROW(validate(causal, m, s));
  }
}

TEST_CASE("rank orders must be permutations of the contributors", "[validate]") {
  Problem const p = grid(2, 2);
  Machine const m = machine_with_sms(2);
  Schedule s = two_by_two();
  s.dq_order[1] = {1, 1};
  CHECK_THROWS_WITH(validate(p, m, s), Contains("dQ tile (b=0, h=0, i=1): KV tile 1 appears twice in its rank order"));
  s.dq_order[1] = {1};
  CHECK_THROWS_WITH(validate(p, m, s), Contains("dQ tile (b=0, h=0, i=1): rank order misses KV tile 0"));
  s.dq_order[1] = {0, 5};
  CHECK_THROWS_WITH(validate(p, m, s), Contains("names KV tile 5 out of range"));
  s.dq_order.pop_back();
  CHECK_THROWS_WITH(validate(p, m, s), Contains("dq_order has 1 entries, expected 2"));
  s = two_by_two();
  s.dkv_order = {{0}};
  CHECK_THROWS_WITH(validate(p, m, s), Contains("dkv_order must be empty without GQA"));

  Problem const causal = grid(2, 2, 1, 1, Mask{MaskKind::kCausal, 0, 0});
  Schedule c = make({{WorkItem{0, 0, 0, {0, 1}}}, {WorkItem{0, 0, 1, {1}}}}, {{0, 1}, {0, 1}});
  CHECK_THROWS_WITH(validate(causal, m, c), Contains("dQ tile (b=0, h=0, i=0): KV tile 1 in its rank order does not see it"));

  // GQA: two q heads share KV head 0.
  Problem const gqa = grid(1, 1, 2, 1);
  Schedule g = make({{WorkItem{0, 0, 0, {0}}}, {WorkItem{0, 1, 0, {0}}}}, {{0}, {0}}, {{1, 0}});
  CHECK_NOTHROW(validate(gqa, m, g));
  g.dkv_order = {{1, 1}};
  CHECK_THROWS_WITH(validate(gqa, m, g), Contains("dK/dV tile (b=0, kvh=0, j=0): q head 1 appears twice"));
  g.dkv_order = {{1}};
  CHECK_THROWS_WITH(validate(gqa, m, g), Contains("rank order misses q head 0"));
  g.dkv_order = {{1, 2}};
  CHECK_THROWS_WITH(validate(gqa, m, g), Contains("names q head 2, not in its group 0..1"));
  g.dkv_order = {};
  CHECK_THROWS_WITH(validate(gqa, m, g), Contains("dkv_order has 0 entries, expected 1"));
}

TEST_CASE("deadlock: rank orders that wait on each other", "[validate][deadlock]") {
  Problem const p = grid(2, 2);
  // CTA 0 adds into Q tile 0 after CTA 1, which first adds into Q tile 1 after CTA 0's second step.
  Schedule const s = make({{WorkItem{0, 0, 0, {0, 1}}}, {WorkItem{0, 0, 1, {1, 0}}}}, {{1, 0}, {0, 1}});
  CHECK_THROWS_WITH(validate(p, machine_with_sms(2), s),
                    Contains("deadlock: CTA 0 waits on dQ tile (b=0, h=0, i=0) rank 1 that can never be released") &&
                        Contains("cycle"));
  // Consistent ranks for the same program orders are fine.
  Schedule ok = s;
  ok.dq_order = {{0, 1}, {1, 0}};
  CHECK_NOTHROW(validate(p, machine_with_sms(2), ok));
}

TEST_CASE("deadlock only under dynamic launch: a resident CTA waits on one never launched", "[validate][deadlock]") {
  Problem const p = grid(3, 3, 1, 1, Mask{MaskKind::kCausal, 0, 0});
  // Launch order KV 2, KV 1, KV 0; ranks by KV ascending: KV 2 waits on KV 1 waits on KV 0.
  Schedule s = make({{WorkItem{0, 0, 2, {2}}}, {WorkItem{0, 0, 1, {1, 2}}}, {WorkItem{0, 0, 0, {0, 1, 2}}}},
                    {{0}, {0, 1}, {0, 1, 2}}, {}, LaunchModel::kDynamic);
  CHECK_NOTHROW(validate(p, machine_with_sms(3), s));
  CHECK_THROWS_WITH(validate(p, machine_with_sms(2), s),
                    Contains("deadlock: CTA 0 waits on dQ tile (b=0, h=0, i=2) rank 2") &&
                        Contains("the waits end at CTA 2, which is never launched: dynamic launch keeps only 2 CTAs resident"));
  // The same program as a persistent grid of 3 CTAs is fine.
  s.launch = LaunchModel::kPersistent;
  CHECK_NOTHROW(validate(p, machine_with_sms(3), s));
}

TEST_CASE("random valid schedules pass; a removed step is caught", "[validate][random]") {
  Rng rng(99);
  int mutated = 0;
  for (int trial = 0; trial < 300; ++trial) {
    testing::RandomCase const rc = testing::random_case(rng);
    INFO("trial " << trial);
    REQUIRE_NOTHROW(validate(rc.problem, rc.machine, rc.schedule));
    Schedule broken = rc.schedule;
    bool dropped = false;
    for (auto& cta : broken.ctas) {
      for (auto& item : cta.items) {
        if (dropped || item.q_order.empty()) continue;
        item.q_order.erase(item.q_order.begin() + rng.uniform(0, static_cast<int>(item.q_order.size()) - 1));
        dropped = true;
      }
    }
    REQUIRE(dropped);
    CHECK_THROWS_WITH(validate(rc.problem, rc.machine, broken), Contains("is missing"));
    ++mutated;
  }
  CHECK(mutated == 300);
}

TEST_CASE("deadlock check scales: 262k steps, iterative", "[validate][deadlock][large]") {
  // 256 heads x 512 Q tiles x 2 KV tiles; CTA 0 walks the heads up, CTA 1 down.
  int const heads = 256;
  int const q_tiles = 512;
  Problem const p = grid(q_tiles, 2, heads, heads);
  Schedule s;
  s.ctas.resize(2);
  for (int h = 0; h < heads; ++h) {
    WorkItem up{0, h, 0, {}};
    WorkItem down{0, heads - 1 - h, 1, {}};
    for (int i = 0; i < q_tiles; ++i) {
      up.q_order.push_back(i);
      down.q_order.push_back(i);
    }
    s.ctas[0].items.push_back(up);
    s.ctas[1].items.push_back(down);
  }
  s.dq_order.assign(static_cast<std::size_t>(heads * q_tiles), std::vector<int>{0, 1});
  CHECK_NOTHROW(validate(p, machine_with_sms(2), s));
  // Head 0, Q tile 0: KV 1 first. CTA 1 reaches it last, and before that it waits (rank 1
  // everywhere else) on CTA 0, whose writer is stuck on its very first reduction.
  s.dq_order[0] = {1, 0};
  CHECK_THROWS_WITH(validate(p, machine_with_sms(2), s),
                    Contains("deadlock: CTA 0 waits on dQ tile (b=0, h=0, i=0) rank 1") && Contains("cycle"));
}
