// The two evaluations of the model: exact hand-computed cases for every edge type, the paper's
// closed forms, and longest path == event-driven on hundreds of random valid schedules.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "dagsim/core/schedule_io.h"
#include "dagsim/model/bounds.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"
#include "dagsim/search/search.h"
#include "tests/dagsim/fixtures.h"
#include "tests/dagsim/random_schedule.h"

using namespace dash::sim;
using namespace dash::sim::testing;

namespace {

// Both evaluations, after validation; returns the longest-path result.
SimResult both(Problem const& p, Machine const& m, CostModel const& cost, Schedule const& s) {
  validate(p, m, s);
  SimResult result = simulate(p, m, cost, s);
  REQUIRE(simulate_events(p, m, cost, s) == result.makespan);
  return result;
}

// The paper's FA3 order: CTA j owns KV tile j of every head in turn, Q ascending, ranks by KV
// ascending. Full mask, n x n tiles, m heads, n SMs.
Schedule fa3_full(int n, int m) {
  std::vector<std::vector<WorkItem>> ctas(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    for (int h = 0; h < m; ++h) {
      WorkItem item{0, h, j, {}};
      for (int i = 0; i < n; ++i) item.q_order.push_back(i);
      ctas[static_cast<std::size_t>(j)].push_back(item);
    }
  }
  std::vector<int> ascending;
  for (int j = 0; j < n; ++j) ascending.push_back(j);
  return make(ctas, std::vector<std::vector<int>>(static_cast<std::size_t>(n * m), ascending));
}

// DASH's shift: KV tile a visits Q tiles (a + t) mod n; ranks by lock-step order.
Schedule shift_full(Problem const& p, int n, int m) {
  Schedule s;
  s.launch = LaunchModel::kPersistent;
  s.ctas.resize(static_cast<std::size_t>(n));
  for (int a = 0; a < n; ++a) {
    for (int h = 0; h < m; ++h) {
      WorkItem item{0, h, a, {}};
      for (int t = 0; t < n; ++t) item.q_order.push_back((a + t) % n);
      s.ctas[static_cast<std::size_t>(a)].items.push_back(item);
    }
  }
  assign_lockstep_ranks(p, s);
  return s;
}

}  // namespace

TEST_CASE("one CTA: program order, C->R, writer order and the buffer depth k", "[simulate]") {
  Problem const p = grid(3, 1);
  Machine const m = machine_with_sms(1);
  Schedule const s = make({{WorkItem{0, 0, 0, {0, 1, 2}}}}, {{0}, {0}, {0}});
  // Nodes: C0=0 R0=1 C1=2 R1=3 C2=4 R2=5. c = 5, r = 10: the writer is the bottleneck.
  SECTION("k = 0: C and R back to back") {
    SimResult const r = both(p, m, costs(5, 10, 0, 0), s);
    CHECK(r.makespan == 45);
    CHECK(r.node_start == std::vector<Cycles>{0, 5, 15, 20, 30, 35});
    CHECK(r.ctas[0].busy == 45);
    CHECK(r.ctas[0].waiting == 0);
    CHECK(r.ctas[0].idle == 0);
  }
  SECTION("k = 1: C(t+2) waits for R(t)") {
    SimResult const r = both(p, m, costs(5, 10, 0, 1), s);
    CHECK(r.makespan == 35);
    CHECK(r.node_start == std::vector<Cycles>{0, 5, 5, 15, 15, 25});
    CHECK(r.ctas[0].busy == 15);
    CHECK(r.ctas[0].waiting == 5);  // C2 ready at 10, buffer frees at 15
    CHECK(r.ctas[0].idle == 15);
    auto const slices = r.slices();
    REQUIRE(slices.size() == 6);
    CHECK(slices[4].ready == 10);   // C2: after C1
    CHECK(slices[4].start == 15);   // ... but R0 had to drain first
    CHECK(slices[3].ready == 15);   // R1: after R0 (its C1 finished at 10)
    CHECK(slices[3].finish == 25);
  }
  SECTION("k = 2: C runs ahead, the writer sets the pace") {
    SimResult const r = both(p, m, costs(5, 10, 0, 2), s);
    CHECK(r.makespan == 35);
    CHECK(r.node_start == std::vector<Cycles>{0, 5, 5, 15, 10, 25});
    CHECK(r.ctas[0].waiting == 0);
    CHECK(r.critical_path == std::vector<int>{0, 1, 3, 5});
  }
}

TEST_CASE("rank order with hand-off latency", "[simulate]") {
  Problem const p = grid(1, 2);
  Machine const m = machine_with_sms(2);
  // KV tile 1 (CTA 1) adds first; CTA 0 waits for its ticket: 15 + L = 22.
  Schedule const s = make({{WorkItem{0, 0, 0, {0}}}, {WorkItem{0, 0, 1, {0}}}}, {{1, 0}});
  SimResult const r = both(p, m, costs(10, 5, 7, 0), s);
  CHECK(r.makespan == 27);
  CHECK(r.node_start == std::vector<Cycles>{0, 22, 0, 10});
  CHECK(r.ctas[0].busy == 15);
  CHECK(r.ctas[0].waiting == 12);
  CHECK(r.ctas[0].idle == 0);
  CHECK(r.ctas[1].waiting == 0);
  CHECK(r.ctas[1].idle == 12);
  CHECK(r.critical_path == std::vector<int>{2, 3, 1});
  auto const slices = r.slices();
  REQUIRE(slices.size() == 4);
  CHECK(slices[1].ready == 10);  // R of CTA 0 was ready at 10, paid 12 for the ticket
  CHECK(slices[1].start == 22);
  CHECK(slices[1].finish == 27);
}

TEST_CASE("dynamic launch: list scheduling onto the first free SM", "[simulate]") {
  // Causal 3x3: KV tile j sees Q tiles j..2, so items have 3, 2 and 1 steps.
  Problem const p = grid(3, 3, 1, 1, Mask{MaskKind::kCausal, 0, 0});
  CostModel const cost = costs(10, 2, 0, 0);
  SECTION("one SM: strictly one after another") {
    Schedule const s = make({{WorkItem{0, 0, 2, {2}}}, {WorkItem{0, 0, 1, {1, 2}}}}, {{}, {}, {}},
                            {}, LaunchModel::kDynamic);
    // Not every step is covered: use the full schedule below for exact values.
    CHECK_THROWS_AS(validate(p, machine_with_sms(1), s), dash::UserError);
  }
  SECTION("rank waits on a CTA launched when an SM frees") {
    Schedule const s = make({{WorkItem{0, 0, 0, {0, 1, 2}}}, {WorkItem{0, 0, 2, {2}}}, {WorkItem{0, 0, 1, {1, 2}}}},
                            {{0}, {0, 1}, {0, 1, 2}}, {}, LaunchModel::kDynamic);
    SimResult const r = both(p, machine_with_sms(2), cost, s);
    CHECK(r.makespan == 62);
    CHECK(r.ctas[0].finish == 36);
    CHECK(r.ctas[2].start == 36);
    CHECK(r.ctas[2].sm == 0);
    CHECK(r.ctas[1].finish == 62);
    // Under one SM CTA 1 would wait forever on CTA 2, which needs CTA 1's SM.
    CHECK_THROWS_WITH(validate(p, machine_with_sms(1), s), Catch::Contains("deadlock"));
  }
  SECTION("the earlier finisher's SM is taken") {
    Schedule const s = make({{WorkItem{0, 0, 0, {0, 1, 2}}}, {WorkItem{0, 0, 2, {2}}}, {WorkItem{0, 0, 1, {1, 2}}}},
                            {{0}, {1, 0}, {2, 1, 0}}, {}, LaunchModel::kDynamic);
    SimResult const r = both(p, machine_with_sms(2), cost, s);
    CHECK(r.makespan == 38);
    CHECK(r.ctas[1].finish == 12);
    CHECK(r.ctas[2].start == 12);
    CHECK(r.ctas[2].sm == 1);
    CHECK(r.ctas[0].finish == 38);
  }
  SECTION("one SM runs them back to back") {
    Schedule const s = make({{WorkItem{0, 0, 0, {0, 1, 2}}}, {WorkItem{0, 0, 1, {1, 2}}}, {WorkItem{0, 0, 2, {2}}}},
                            {{0}, {0, 1}, {0, 1, 2}}, {}, LaunchModel::kDynamic);
    SimResult const r = both(p, machine_with_sms(1), cost, s);
    CHECK(r.makespan == 6 * 12);
    CHECK(r.ctas[1].start == 36);
    CHECK(r.ctas[2].start == 60);
    CHECK(r.ctas[2].idle == 60);
  }
}

TEST_CASE("GQA: dK/dV epilogue chains", "[simulate][gqa]") {
  CostModel const cost = costs(10, 5, 3, 1, 7);
  SECTION("two CTAs, head 1 adds first") {
    Problem const p = grid(1, 1, 2, 1);
    Schedule const s = make({{WorkItem{0, 0, 0, {0}}}, {WorkItem{0, 1, 0, {0}}}}, {{0}, {0}}, {{1, 0}});
    SimResult const r = both(p, machine_with_sms(2), cost, s);
    CHECK(r.makespan == 32);  // K of head 1 at [15, 22], visible at 25, K of head 0 at [25, 32]
  }
  SECTION("one CTA: the next item starts after the epilogue") {
    Problem const p = grid(1, 1, 2, 1);
    Schedule const s = make({{WorkItem{0, 0, 0, {0}}, WorkItem{0, 1, 0, {0}}}}, {{0}, {0}}, {{0, 1}});
    SimResult const r = both(p, machine_with_sms(1), cost, s);
    CHECK(r.makespan == 44);
    CHECK(r.ctas[0].waiting == 12);  // C of item 2 ready at 10, starts after K at 22
    CHECK(r.ctas[0].busy == 20);
  }
  SECTION("items without visible tiles still pass the chain") {
    // window 0,0 with offset 128: only KV tile 2 sees the single Q tile.
    Problem const p = grid(1, 3, 2, 1, Mask{MaskKind::kWindow, 0, 0});
    REQUIRE_FALSE(p.is_visible(0, 0, 0));
    REQUIRE_FALSE(p.is_visible(0, 0, 1));
    Schedule const s = make({{WorkItem{0, 0, 0, {}}, WorkItem{0, 0, 1, {}}, WorkItem{0, 0, 2, {0}}},
                             {WorkItem{0, 1, 0, {}}, WorkItem{0, 1, 1, {}}, WorkItem{0, 1, 2, {0}}}},
                            {{2}, {2}}, {{1, 0}, {0, 1}, {0, 1}});
    SimResult const r = both(p, machine_with_sms(2), cost, s);
    CHECK(r.makespan == 56);
    // Without the empty items the schedule is incomplete under GQA.
    Schedule missing = s;
    missing.ctas[0].items.erase(missing.ctas[0].items.begin());
    CHECK_THROWS_WITH(validate(p, machine_with_sms(2), missing), Catch::Contains("(b=0, h=0, j=0) is missing"));
  }
}

TEST_CASE("default model: costs from the kernel's rates, rounded up", "[simulate][model]") {
  Problem p;
  p.head_dim = 128;
  p.tile_m = 64;
  p.tile_n = 128;
  CostModel const portable = default_model(p);
  CHECK(portable.compute == 10240);  // 10 * 64 * 128 * 128 / 1024
  CHECK(portable.reduce == 1024);    // 64 * 128 * 4 B at 32 B/cycle
  CHECK(portable.reduce_kv == 4096);
  CHECK(portable.latency == 1000);
  CHECK(portable.dq_buffer == 1);
  CostModel const fast = default_model(p, KernelRates{2100, 20, 1100, 2});
  CHECK(fast.compute == 4994);  // ceil(10485760 / 2100)
  CHECK(fast.reduce == 1639);   // ceil(32768 / 20)
  CHECK(fast.reduce_kv == 6554);
  CHECK(fast.latency == 1100);
  CHECK(fast.dq_buffer == 2);
  CHECK(fast.proportional);
}

TEST_CASE("paper model closed form: FA3 ascending, full mask = m n (c + r) + (n - 1) r", "[simulate][closed-form]") {
  for (int n = 1; n <= 6; ++n) {
    for (int m = 1; m <= 4; ++m) {
      for (auto [c, r] : {std::pair<Cycles, Cycles>{4, 1}, {3, 2}, {10, 7}, {1, 5}}) {
        Problem const p = grid(n, n, m, m);
        Schedule const s = fa3_full(n, m);
        SimResult const result = both(p, machine_with_sms(n), paper_model(c, r), s);
        INFO("n=" << n << " m=" << m << " c=" << c << " r=" << r);
        CHECK(result.makespan == m * n * (c + r) + (n - 1) * r);
      }
    }
  }
}

TEST_CASE("paper model closed form: shift, full mask = m n (c + r), the work bound", "[simulate][closed-form]") {
  for (int n = 1; n <= 6; ++n) {
    for (int m = 1; m <= 3; ++m) {
      Problem const p = grid(n, n, m, m);
      Schedule const s = shift_full(p, n, m);
      CostModel const cost = paper_model(5, 2);
      SimResult const result = both(p, machine_with_sms(n), cost, s);
      INFO("n=" << n << " m=" << m);
      CHECK(result.makespan == m * n * 7);
      CHECK(result.makespan == compute_bounds(p, machine_with_sms(n), cost).work);
    }
  }
}

TEST_CASE("longest path equals the event-driven run on random valid schedules", "[simulate][random]") {
  Rng rng(7);
  int dynamic = 0;
  int gqa = 0;
  for (int trial = 0; trial < 600; ++trial) {
    testing::RandomCase const rc = testing::random_case(rng);
    INFO("trial " << trial);
    REQUIRE_NOTHROW(validate(rc.problem, rc.machine, rc.schedule));
    SimResult const r = simulate(rc.problem, rc.machine, rc.cost, rc.schedule);
    REQUIRE(simulate_events(rc.problem, rc.machine, rc.cost, rc.schedule) == r.makespan);
    // Arrival order (the atomic mode): both simulators agree too, and dropping the rank edges
    // never lengthens the run.
    CostModel unordered = rc.cost;
    unordered.ordered = false;
    SimResult const u = simulate(rc.problem, rc.machine, unordered, rc.schedule);
    REQUIRE(simulate_events(rc.problem, rc.machine, unordered, rc.schedule) == u.makespan);
    REQUIRE(u.makespan <= r.makespan);
    dynamic += rc.schedule.launch == LaunchModel::kDynamic ? 1 : 0;
    gqa += rc.problem.is_gqa() ? 1 : 0;

    // Time split: busy + waiting + idle = makespan, all non-negative.
    for (auto const& cta : r.ctas) {
      REQUIRE(cta.busy >= 0);
      REQUIRE(cta.waiting >= 0);
      REQUIRE(cta.idle >= 0);
      REQUIRE(cta.busy + cta.waiting + cta.idle == r.makespan);
      REQUIRE(cta.finish <= r.makespan);
      REQUIRE(cta.sm >= 0);
      REQUIRE(cta.sm < rc.machine.sms);
    }
    // The critical path is a chain of edges whose weights and latencies add up to the makespan.
    REQUIRE_FALSE(r.critical_path.empty());
    Dag const& dag = r.dag;
    int const first = r.critical_path.front();
    REQUIRE(r.node_start[static_cast<std::size_t>(first)] ==
            (rc.schedule.launch == LaunchModel::kPersistent ? 0 : r.ctas[static_cast<std::size_t>(dag.nodes[static_cast<std::size_t>(first)].cta)].start));
    for (std::size_t k = 1; k < r.critical_path.size(); ++k) {
      int const from = r.critical_path[k - 1];
      int const to = r.critical_path[k];
      bool found = false;
      for (int e = dag.in_begin[static_cast<std::size_t>(to)]; e < dag.in_begin[static_cast<std::size_t>(to) + 1]; ++e) {
        Edge const& edge = dag.in_edges[static_cast<std::size_t>(e)];
        if (edge.from == from && r.node_start[static_cast<std::size_t>(from)] + dag.nodes[static_cast<std::size_t>(from)].weight +
                                         edge.latency == r.node_start[static_cast<std::size_t>(to)]) {
          found = true;
        }
      }
      REQUIRE(found);
    }
    int const last = r.critical_path.back();
    REQUIRE(r.node_start[static_cast<std::size_t>(last)] + dag.nodes[static_cast<std::size_t>(last)].weight == r.makespan);
    REQUIRE(r.steps == count_steps(rc.schedule));
    // No schedule beats the lower bounds.
    REQUIRE(compute_bounds(rc.problem, rc.machine, rc.cost).lower() <= r.makespan);
  }
  CHECK(dynamic > 200);
  CHECK(gqa > 200);
}

TEST_CASE("longest path equals the event-driven run on medium schedules with many SMs", "[simulate][random]") {
  Rng rng(31337);
  for (int trial = 0; trial < 24; ++trial) {
    Problem p;
    p.batch = rng.uniform(1, 2);
    p.kv_heads = rng.uniform(1, 2);
    p.q_heads = p.kv_heads * rng.uniform(1, 3);
    p.tile_m = 64;
    p.tile_n = 64 * rng.uniform(1, 2);
    p.seqlen_q = rng.uniform(300, 1200);
    p.seqlen_k = rng.chance(1, 2) ? p.seqlen_q : rng.uniform(300, 1200);
    p.mask = rng.chance(1, 2) ? Mask{MaskKind::kCausal, 0, 0} : Mask{MaskKind::kWindow, rng.uniform(0, 300), rng.uniform(0, 300)};
    Machine const m = machine_with_sms(rng.uniform(4, 40));
    LaunchModel const launch = trial % 2 == 0 ? LaunchModel::kPersistent : LaunchModel::kDynamic;
    Schedule const s = testing::random_schedule(p, m, launch, rng);
    CostModel const cost = testing::random_cost(rng);
    INFO("trial " << trial << " steps " << count_steps(s));
    REQUIRE_NOTHROW(validate(p, m, s));
    SimResult const r = simulate(p, m, cost, s);
    REQUIRE(simulate_events(p, m, cost, s) == r.makespan);
    REQUIRE(compute_bounds(p, m, cost).lower() <= r.makespan);
  }
}

TEST_CASE("to_dot draws nodes, edges and latencies", "[simulate][dag]") {
  Problem const p = grid(1, 2);
  Schedule const s = make({{WorkItem{0, 0, 0, {0}}}, {WorkItem{0, 0, 1, {0}}}}, {{1, 0}});
  Dag const dag = build_dag(p, costs(10, 5, 7, 0), s);
  REQUIRE(dag.nodes.size() == 4);
  REQUIRE(dag.in_begin.size() == 5);
  std::string const dot = to_dot(dag);
  CHECK(dot.find("digraph") != std::string::npos);
  CHECK(dot.find("n0 -> n1;") != std::string::npos);
  CHECK(dot.find("n3 -> n1 [label=\"+7\"]") != std::string::npos);
}

TEST_CASE("negative costs are a user error", "[simulate]") {
  Problem const p = grid(1, 1);
  Schedule const s = make({{WorkItem{0, 0, 0, {0}}}}, {{0}});
  CHECK_THROWS_AS(simulate(p, machine_with_sms(1), costs(-1, 1, 0, 0), s), dash::UserError);
  CHECK_THROWS_AS(simulate_events(p, machine_with_sms(1), costs(1, 1, 0, -1), s), dash::UserError);
}

TEST_CASE("per-item cost: every work item's first step carries it", "[simulate][model]") {
  // One CTA runs every item in turn and its writer keeps up, so each item's o is on the critical
  // path once.
  Problem p = grid(8, 4, 3, 3, Mask{MaskKind::kCausal, 0, 0});
  p.head_dim = 64;
  Machine const m = machine_with_sms(1);
  Schedule one;
  one.launch = LaunchModel::kPersistent;
  one.ctas.resize(1);
  for (int h = 0; h < p.q_heads; ++h) {
    for (int j = 0; j < p.kv_tiles(0); ++j) {
      WorkItem item{0, h, j, p.visible_q_tiles(0, j)};
      one.ctas[0].items.push_back(item);
    }
  }
  assign_lockstep_ranks(p, one);
  auto const items = static_cast<Cycles>(one.ctas[0].items.size());
  for (int k : {0, 1, 2}) {
    CostModel base = default_model(p);
    base.dq_buffer = k;
    base.latency = 0;  // r < c and no hand-off: the writer never holds the CTA back
    CostModel with = base;
    with.item = 777;
    Cycles const a = both(p, m, base, one).makespan;
    Cycles const b = both(p, m, with, one).makespan;
    INFO("k = " << k);
    CHECK(b - a == items * 777);
    // The work bound counts it too, and stays below the makespan.
    CHECK(compute_bounds(p, m, with).work - compute_bounds(p, m, base).work == items * 777);
    CHECK(compute_bounds(p, m, with).lower() <= b);
  }
  // The node weights: the first step of each item only.
  CostModel with = default_model(p);
  with.item = 777;
  SimResult const r = simulate(p, m, with, one);
  std::size_t n = 0;
  for (auto const& item : one.ctas[0].items) {
    for (std::size_t t = 0; t < item.q_order.size(); ++t, n += 2) {
      Node const& c = r.dag.nodes[n];
      REQUIRE(c.kind == NodeKind::kCompute);
      CHECK(c.weight == with.step_cost(p, 0, item.q_order[t], item.kv_tile) + (t == 0 ? 777 : 0));
    }
  }
  CostModel negative = default_model(p);
  negative.item = -1;
  CHECK_THROWS_AS(simulate(p, m, negative, one), dash::UserError);
  CHECK_THROWS_AS(compute_bounds(p, m, negative), dash::UserError);
}

TEST_CASE("dynamic launch: CTAs finishing together, one waiting on the CTA the other released",
          "[simulate]") {
  // MQA with zero-cost dK/dV reductions: CTAs without steps finish the moment their rank comes, so
  // several finish at one time, some of them only after the CTA that another one's finish
  // launched. The SM (and the dispatch edge) must come from the finish that did the launching; a
  // choice by SM id among the simultaneous finishes made a cycle in the DAG (found by the random
  // bounds test).
  ScheduleDocument const doc = schedule_from_json(R"json({
  "version": "dash.schedule/1",
  "strategy": "random",
  "problem": {"batch": 2, "q_heads": 3, "kv_heads": 1, "seqlen_q": 35, "seqlen_k": 112, "head_dim": 80, "tile_m": 32, "tile_n": 64, "mask": "window:5,60", "seqlens_q": [], "seqlens_k": []},
  "machine": {"name": "sm5", "sms": 5},
  "launch": "dynamic",
  "ctas": [
    {"items": [{"b": 0, "h": 0, "j": 1, "q": [0, 1]}]},
    {"items": [{"b": 1, "h": 1, "j": 0, "q": []}]},
    {"items": [{"b": 0, "h": 1, "j": 0, "q": []}]},
    {"items": [{"b": 0, "h": 2, "j": 1, "q": [1, 0]}]},
    {"items": [{"b": 0, "h": 1, "j": 1, "q": [1, 0]}]},
    {"items": [{"b": 0, "h": 0, "j": 0, "q": []}]},
    {"items": [{"b": 1, "h": 0, "j": 1, "q": [1, 0]}]},
    {"items": [{"b": 1, "h": 1, "j": 1, "q": [0, 1]}]},
    {"items": [{"b": 0, "h": 2, "j": 0, "q": []}]},
    {"items": [{"b": 1, "h": 2, "j": 1, "q": [1, 0]}]},
    {"items": [{"b": 1, "h": 2, "j": 0, "q": []}]},
    {"items": [{"b": 1, "h": 0, "j": 0, "q": []}]}
  ],
  "dq_order": [
    [1],
    [1],
    [1],
    [1],
    [1],
    [1],
    [1],
    [1],
    [1],
    [1],
    [1],
    [1]
  ],
  "dkv_order": [
    [1, 0, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 0, 2]
  ]
}
)json");
  CostModel const cost = costs(42, 20, 0, 3, 0);
  validate(doc.problem, doc.machine, doc.schedule);
  SimResult const r = simulate(doc.problem, doc.machine, cost, doc.schedule);
  CHECK(r.makespan == simulate_events(doc.problem, doc.machine, cost, doc.schedule));
  CHECK(r.makespan == 208);
}

TEST_CASE("arrival order: no rank edges, no hand-offs, no chain bound", "[simulate]") {
  // Two CTAs, one KV tile each, both walking Q tiles 0 then 1; tile 0 ranks CTA 1 first, so CTA 0
  // waits for it with the order and not without.
  Problem const p = grid(2, 2);
  Machine const m = machine_with_sms(2);
  WorkItem a{0, 0, 0, {0, 1}};
  WorkItem b{0, 0, 1, {0, 1}};
  Schedule const s = make({{a}, {b}}, {{1, 0}, {0, 1}});
  CostModel const ordered = costs(100, 10, 1000, 1);
  CostModel unordered = ordered;
  unordered.ordered = false;
  SimResult const det = both(p, m, ordered, s);
  SimResult const atomic = both(p, m, unordered, s);
  // Without the order: each CTA computes two steps and adds two partials, 100 + 100 + 10.
  CHECK(atomic.makespan == 210);
  // With it: CTA 0's first add waits for CTA 1's (100 + 10) and the hand-off (1000).
  CHECK(det.makespan > atomic.makespan + 1000);
  CHECK(compute_bounds(p, m, unordered).chain == 0);
  CHECK(compute_bounds(p, m, ordered).chain > 0);
  CHECK_THROWS_WITH(search(p, m, unordered, SearchOptions{}), Catch::Contains("ordered"));
}
