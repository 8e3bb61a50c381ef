// The memory floor (dagsim/model/memory_floor.h): HBM bytes over the bandwidth, and the prediction
// as the larger of it and the makespan.
#include <algorithm>

#include <catch2/catch.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/memory_floor.h"
#include "dagsim/model/named_run.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/working_set.h"
#include "dagsim/search/search.h"
#include "fixtures.h"
#include "tests/shape.h"

using namespace dash::sim;
using dash::sim::testing::costs;
using dash::sim::testing::grid;
using dash::sim::testing::make;

namespace {

WorkItem item(int head, int steps) {
  WorkItem w;
  w.head = head;
  w.kv_tile = 0;
  for (int i = 0; i < steps; ++i) w.q_order.push_back(i);
  return w;
}

/// Two CTAs, one head each, all three Q tiles of its one KV tile: both heads in progress at once.
Schedule two_heads() { return make({{item(0, 3)}, {item(1, 3)}}, {{0}, {0}, {0}, {0}, {0}, {0}}); }

/// d128, a (1024, 0) window, 8k, b2 h16 (the named strategies keep 32 to 72 MiB live).
Problem windowed_8k() { return dash::test::kernel_shape(2, 16, 8192, 128, parse_mask("window:1024,0")); }

/// The sm90 family's rates in profiles/h200.json, without its floor.
KernelRates sm90_rates() {
  KernelRates rates;
  rates.flops_per_cycle = 2379;
  rates.reduce_bytes_per_cycle = 15;
  rates.latency = 1309;
  rates.dq_buffer = 2;
  rates.item_cycles = 5195;
  return rates;
}

}  // namespace

TEST_CASE("memory floor: compulsory bytes plus the missing part of every step's traffic",
          "[memory_floor]") {
  Problem p = grid(3, 1, 2, 2);  // 192 queries, 64 keys, 2 heads; tiles 64 x 64
  p.head_dim = 64;
  Schedule const s = two_heads();
  WorkingSet const live = working_set(p, s, 2);
  std::int64_t const per_head = 192 * 64 * (2 + 2 + 4);  // Q, dO, fp32 dQ of one head's sequence
  REQUIRE(live.max_bytes == 2 * per_head);               // 196608

  CostModel cost = costs(100, 10, 0, 1);
  CHECK(memory_floor(p, s, cost, live).cycles == 0);  // no bandwidth: no floor
  CHECK(memory_floor(p, s, cost, live).bytes == 0);

  cost.hbm_bytes_per_cycle = 1000;
  // K, V read and dK, dV written (2 bytes each, 64 x 64 x 2 heads); Q, dO read and dQ written.
  std::int64_t const compulsory = 4 * 2 * (64 * 64 * 2) + (2 * 2 + 4) * (192 * 64 * 2);
  std::int64_t const step =
      64 * 64 * 2 * 2 + 64 * 8 + 64 * 64 * 8;  // Q, dO; LSE, dPsum; dQ in, out
  cost.l2_bytes = live.max_bytes;              // all of it fits: only the compulsory bytes
  MemoryFloor f = memory_floor(p, s, cost, live);
  CHECK(f.compulsory_bytes == compulsory);
  CHECK(f.step_bytes == step);
  CHECK(f.steps == 6);
  CHECK(f.miss_permille == 0);
  CHECK(f.bytes == compulsory);
  CHECK(f.cycles == (compulsory + 999) / 1000);

  cost.l2_bytes = live.max_bytes / 4;  // three quarters miss
  f = memory_floor(p, s, cost, live);
  CHECK(f.miss_permille == 750);
  CHECK(f.bytes == compulsory + 6 * step * 750 / 1000);
  CHECK(f.cycles == (f.bytes + 999) / 1000);

  cost.l2_bytes = 0;  // nothing held
  f = memory_floor(p, s, cost, live);
  CHECK(f.miss_permille == 1000);
  CHECK(f.bytes == compulsory + 6 * step);
}

TEST_CASE("memory floor: simulate reports it and predicts the larger of it and the makespan",
          "[memory_floor]") {
  Problem p = grid(3, 1, 2, 2);
  p.head_dim = 64;
  Schedule const s = two_heads();
  Machine const m = machine_with_sms(2);
  CostModel cost = costs(100, 10, 0, 1);
  SimResult const plain = simulate(p, m, cost, s);
  CHECK(plain.memory.cycles == 0);
  CHECK(plain.predicted() == plain.makespan);

  cost.hbm_bytes_per_cycle = 1;  // a slow memory: the floor decides
  cost.l2_bytes = 0;
  SimResult const slow = simulate(p, m, cost, s);
  CHECK(slow.makespan == plain.makespan);  // the DAG is the same
  CHECK(slow.memory.cycles == slow.memory.bytes);
  CHECK(slow.memory.cycles > slow.makespan);
  CHECK(slow.predicted() == slow.memory.cycles);
  CHECK(simulate_events(p, m, cost, s) == slow.makespan);  // the second simulator: the makespan

  cost.hbm_bytes_per_cycle = 1'000'000'000;  // a fast one: the makespan does
  SimResult const fast = simulate(p, m, cost, s);
  CHECK(fast.memory.cycles == 1);
  CHECK(fast.predicted() == fast.makespan);

  cost.hbm_bytes_per_cycle = -1;
  CHECK_THROWS_AS(simulate(p, m, cost, s), dash::UserError);
}

TEST_CASE("memory floor: the fastest named strategy is the fastest predicted one",
          "[memory_floor]") {
  // d128, a (1024, 0) window, 8k, b2 h16 on the H200's 132 SMs: shift has the shortest makespan
  // and keeps 56 MiB live, descending 32 MiB. Under an L2 of 40 MiB and a memory so slow that every
  // floor binds, descending is the fastest prediction.
  Problem const p = windowed_8k();
  Machine const m = machine_preset("h200");
  KernelRates const rates = sm90_rates();
  CostModel cost = default_model(p, rates);
  NamedRun const without = fastest_named(p, m, cost, LaunchModel::kPersistent);
  CHECK(without.name == "shift");
  CHECK(without.result->memory.cycles == 0);
  cost.l2_bytes = std::int64_t{40} << 20;
  cost.hbm_bytes_per_cycle = 50;
  NamedRun const with = fastest_named(p, m, cost, LaunchModel::kPersistent);
  CHECK(with.name == "descending");
  for (auto const& name : strategy_names()) {
    NamedRun const run = run_named(name, p, m, cost, LaunchModel::kPersistent);
    if (!run.ran()) continue;
    INFO(name);
    CHECK(with.result->predicted() <= run.result->predicted());
    CHECK(run.result->predicted() == std::max(run.result->makespan, run.result->memory.cycles));
    // Within the L2 the floor is the compulsory traffic alone, the same for every schedule.
    if (working_set(p, run.schedule, m.sms).max_bytes <= cost.l2_bytes) {
      CHECK(run.result->memory.miss_permille == 0);
    } else {
      CHECK(run.result->memory.miss_permille > 0);
    }
  }
  CHECK(with.result->makespan > without.result->makespan);
}

TEST_CASE("memory floor: the prediction ranks first, the makespan breaks its ties",
          "[memory_floor]") {
  SimResult a;
  SimResult b;
  a.makespan = 100;
  b.makespan = 90;
  CHECK(b.faster_than(a));
  a.memory.cycles = 500;  // both floor-bound at the same floor: the shorter critical path
  b.memory.cycles = 500;
  CHECK(b.faster_than(a));
  CHECK_FALSE(a.faster_than(b));
  b.memory.cycles = 501;
  CHECK(a.faster_than(b));
  CHECK_FALSE(a.faster_than(a));
}

TEST_CASE("memory floor: the search keeps the best named strategy where its prediction is faster",
          "[memory_floor][search]") {
  // The windowed shape of the test above: under an L2 of 40 MiB and a slow memory, descending
  // (32 MiB live) is the fastest named prediction; the search's space (capped at 50 MiB) also holds
  // schedules over the L2, whose floor binds.
  Problem const p = windowed_8k();
  KernelRates rates = sm90_rates();
  rates.hbm_bytes_per_cycle = 50;
  rates.l2_bytes = std::int64_t{40} << 20;
  Machine const m = machine_preset("h200");
  SearchOptions options;
  options.max_evaluations = 64;
  options.threads = 1;
  SearchResult const r = search(p, m, default_model(p, rates), options);
  CHECK(r.best_named == "descending");
  CHECK(r.predicted == std::max(r.makespan, r.memory.cycles));
  CHECK(r.predicted <= r.best_named_predicted);
  SimResult const again = simulate(p, m, default_model(p, rates), r.schedule);
  CHECK(again.makespan == r.makespan);
  CHECK(again.memory.cycles == r.memory.cycles);
  if (r.origin == "descending") CHECK(r.certificate.empty());
}
