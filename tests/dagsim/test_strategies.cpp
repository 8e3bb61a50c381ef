#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/strategies.h"
#include "dagsim/core/tile_index.h"
#include "dagsim/model/bounds.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/named_run.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"

namespace {

using dash::UserError;
using namespace dash::sim;

constexpr LaunchModel kLaunches[] = {LaunchModel::kPersistent, LaunchModel::kDynamic};

Problem square_problem(int batch, int heads, int n, MaskKind kind) {
  Problem p;
  p.batch = batch;
  p.q_heads = heads;
  p.kv_heads = heads;
  p.tile_m = 64;
  p.tile_n = 64;
  p.seqlen_q = n * 64;
  p.seqlen_k = n * 64;
  p.head_dim = 64;
  p.mask = Mask{kind, 0, 0};
  return p;
}

/// Short queries on long keys: 4 Q tiles over 16 KV tiles (64 x 64 tiles), full mask.
Problem kv_long_problem(int heads, int kv_heads) {
  Problem p = square_problem(1, heads, 1, MaskKind::kFull);
  p.kv_heads = kv_heads;
  p.seqlen_q = 4 * 64;
  p.seqlen_k = 16 * 64;
  return p;
}

Cycles paper_makespan(std::string const& name, Problem const& problem, int sms, LaunchModel launch,
                      Cycles c, Cycles r) {
  Machine const machine = machine_with_sms(sms);
  Schedule const schedule = make_strategy(name, problem, machine, launch);
  validate(problem, machine, schedule);
  CostModel const cost = paper_model(c, r);
  Cycles const makespan = simulate(problem, machine, cost, schedule).makespan;
  REQUIRE(simulate_events(problem, machine, cost, schedule) == makespan);
  return makespan;
}

/// m = batch x heads, in several splits.
std::vector<std::pair<int, int>> splits(int m) {
  std::vector<std::pair<int, int>> out;
  for (int batch = 1; batch <= m; ++batch) {
    if (m % batch == 0 && (batch == 1 || batch == m || out.size() < 3)) out.emplace_back(batch, m / batch);
  }
  return out;
}

struct Costs {
  Cycles c;
  Cycles r;
};
constexpr Costs kAnyCosts[] = {{7, 2}, {5, 3}, {10, 1}, {3, 3}, {2, 5}, {1, 9}};
constexpr Costs kComputeAtLeastReduce[] = {{7, 2}, {5, 3}, {10, 1}, {3, 3}, {3800, 1000}};

// ---- validity sweep ----------------------------------------------------------------------------

Problem make(int batch, int q_heads, int kv_heads, int sq, int sk, int tm, int tn, Mask mask) {
  Problem p;
  p.batch = batch;
  p.q_heads = q_heads;
  p.kv_heads = kv_heads;
  p.seqlen_q = sq;
  p.seqlen_k = sk;
  p.tile_m = tm;
  p.tile_n = tn;
  p.head_dim = 64;
  p.mask = mask;
  return p;
}

std::vector<std::pair<std::string, Problem>> sweep_problems() {
  Mask const full{MaskKind::kFull, 0, 0};
  Mask const causal{MaskKind::kCausal, 0, 0};
  std::vector<std::pair<std::string, Problem>> out;
  out.emplace_back("full, 8x4 tiles", make(1, 1, 1, 512, 512, 64, 128, full));
  out.emplace_back("causal, tail tiles", make(1, 2, 2, 1000, 1000, 64, 64, causal));
  out.emplace_back("causal, sq < sk, odd kv", make(1, 2, 2, 384, 640, 64, 128, causal));
  out.emplace_back("causal, sq > sk (empty dQ tiles)", make(2, 1, 1, 640, 384, 64, 64, causal));
  out.emplace_back("window 100,50", make(2, 3, 3, 1024, 1024, 64, 64, Mask{MaskKind::kWindow, 100, 50}));
  out.emplace_back("window 0,0, sk >> sq (empty items)",
                   make(1, 2, 2, 256, 1024, 64, 64, Mask{MaskKind::kWindow, 0, 0}));
  out.emplace_back("gqa causal, odd tiles", make(1, 4, 2, 320, 320, 64, 64, causal));
  out.emplace_back("mqa window, empty items",
                   make(2, 3, 1, 128, 1024, 64, 64, Mask{MaskKind::kWindow, 16, 0}));
  out.emplace_back("causal square even (symmetric premise)", make(2, 3, 3, 384, 384, 64, 64, causal));
  out.emplace_back("full, many heads", make(4, 8, 8, 256, 256, 64, 64, full));
  out.emplace_back("full, odd grid 5x3", make(1, 3, 3, 320, 192, 64, 64, full));
  Problem varlen = make(3, 2, 2, 0, 0, 64, 64, causal);
  varlen.seqlens_q = {100, 513, 64};
  varlen.seqlens_k = {300, 513, 16};
  out.emplace_back("varlen causal", varlen);
  Problem varlen_gqa = make(3, 4, 1, 0, 0, 64, 128, Mask{MaskKind::kWindow, 64, 64});
  varlen_gqa.seqlens_q = {700, 64, 300};
  varlen_gqa.seqlens_k = {200, 900, 300};
  out.emplace_back("varlen window mqa", varlen_gqa);
  return out;
}

std::int64_t visible_steps(Problem const& problem) {
  std::int64_t steps = 0;
  for (int b = 0; b < problem.batch; ++b) {
    for (int i = 0; i < problem.q_tiles(b); ++i) {
      for (int j = 0; j < problem.kv_tiles(b); ++j) {
        if (problem.is_visible(b, i, j)) steps += problem.q_heads;
      }
    }
  }
  return steps;
}

TEST_CASE("every strategy is valid on every problem, SM count and launch model", "[strategies]") {
  for (auto const& [label, problem] : sweep_problems()) {
    TileIndex const index(problem);
    for (auto const& name : strategy_names()) {
      for (int const sms : {1, 2, 3, 7, 16, 132, 4096}) {
        for (LaunchModel const launch : kLaunches) {
          INFO(label << ", " << name << ", " << sms << " SMs, " << to_string(launch));
          Machine const machine = machine_with_sms(sms);
          Schedule const schedule = make_strategy(name, problem, machine, launch);
          CHECK(schedule.strategy == name);
          CHECK(schedule.launch == launch);
          REQUIRE_NOTHROW(validate(problem, machine, schedule));
          CHECK(count_steps(schedule) == visible_steps(problem));
          std::int64_t items = 0;
          for (auto const& cta : schedule.ctas) {
            items += static_cast<std::int64_t>(cta.items.size());
            if (launch == LaunchModel::kDynamic) CHECK(cta.items.size() == 1);
            for (auto const& item : cta.items) {
              // Empty items only where GQA needs them for the dK/dV chain.
              CHECK((problem.is_gqa() || !item.q_order.empty()));
            }
          }
          if (problem.is_gqa()) CHECK(items == index.num_items());
          if (launch == LaunchModel::kPersistent) {
            // grid = min(sms, units); a unit is one item, or a pair under symmetric-shift.
            auto const grid = static_cast<std::size_t>(std::min<std::int64_t>(sms, items));
            if (name == "symmetric-shift") {
              CHECK(schedule.ctas.size() <= grid);
              CHECK(schedule.ctas.size() >= std::min(grid, (grid + 1) / 2));
            } else {
              CHECK(schedule.ctas.size() == grid);
            }
          }
          // Both evaluations run to completion and agree (no deadlock in the model either).
          CostModel const cost = default_model(problem);
          Cycles const makespan = simulate(problem, machine, cost, schedule).makespan;
          CHECK(makespan > 0);
          CHECK(simulate_events(problem, machine, cost, schedule) == makespan);
        }
      }
    }
  }
}

TEST_CASE("strategies reject unknown names and bad machines", "[strategies]") {
  Problem const problem = square_problem(1, 1, 4, MaskKind::kFull);
  CHECK_THROWS_AS(make_strategy("ascending", problem, machine_with_sms(4)), UserError);
  CHECK_THROWS_WITH(make_strategy("ascending", problem, machine_with_sms(4)),
                    Catch::Contains("unknown strategy 'ascending'") && Catch::Contains("symmetric-shift"));
  CHECK_THROWS_AS(make_strategy("fa3", problem, Machine{"none", 0}), UserError);
  CHECK_THROWS_AS(make_strategy("fa3", problem, Machine{"huge", 5000}), UserError);
  Problem bad = problem;
  bad.kv_heads = 3;
  CHECK_THROWS_AS(make_strategy("shift", bad, machine_with_sms(4)), UserError);
  CHECK(strategy_names().size() == 5);
}

// ---- structure -----------------------------------------------------------------------------------

TEST_CASE("fa3 deals items round-robin with Q ascending and ranks by KV ascending", "[strategies]") {
  Problem const problem = square_problem(2, 3, 5, MaskKind::kCausal);  // 30 items
  Schedule const s = make_strategy("fa3", problem, machine_with_sms(7));
  REQUIRE(s.ctas.size() == 7);
  TileIndex const index(problem);
  for (std::size_t c = 0; c < s.ctas.size(); ++c) {
    auto const& items = s.ctas[c].items;
    for (std::size_t k = 0; k < items.size(); ++k) {
      auto const& item = items[k];
      CHECK(index.item_id(item.batch, item.head, item.kv_tile) == static_cast<int>(c + 7 * k));
      CHECK(std::is_sorted(item.q_order.begin(), item.q_order.end()));
      CHECK(item.q_order.front() == item.kv_tile);  // causal, square: from the diagonal
    }
  }
  for (auto const& order : s.dq_order) CHECK(std::is_sorted(order.begin(), order.end()));
  CHECK(s.dkv_order.empty());
}

TEST_CASE("fa3-spt launches the shortest items first and ranks by KV descending", "[strategies]") {
  Problem const problem = square_problem(1, 2, 6, MaskKind::kCausal);
  Schedule const s = make_strategy("fa3-spt", problem, machine_with_sms(3), LaunchModel::kDynamic);
  REQUIRE(s.ctas.size() == 12);
  for (std::size_t k = 0; k < s.ctas.size(); ++k) {
    auto const& item = s.ctas[k].items.front();
    CHECK(item.head == static_cast<int>(k / 6));
    CHECK(item.kv_tile == 5 - static_cast<int>(k % 6));
    CHECK(item.q_order.front() == item.kv_tile);
    CHECK(std::is_sorted(item.q_order.begin(), item.q_order.end()));
  }
  for (auto const& order : s.dq_order) CHECK(std::is_sorted(order.rbegin(), order.rend()));
}

TEST_CASE("descending visits Q tiles downwards", "[strategies]") {
  Problem const problem = square_problem(1, 2, 5, MaskKind::kCausal);
  for (LaunchModel const launch : kLaunches) {
    Schedule const s = make_strategy("descending", problem, machine_with_sms(5), launch);
    for (auto const& cta : s.ctas) {
      for (auto const& item : cta.items) {
        CHECK(item.q_order.front() == 4);
        CHECK(item.q_order.back() == item.kv_tile);
        CHECK(std::is_sorted(item.q_order.rbegin(), item.q_order.rend()));
      }
    }
  }
}

TEST_CASE("shift rotates each KV tile's walk and spreads the start rows", "[strategies]") {
  SECTION("n == M: KV tile a visits (a + t) mod M") {
    Problem const problem = square_problem(1, 1, 6, MaskKind::kFull);
    Schedule const s = make_strategy("shift", problem, machine_with_sms(6));
    REQUIRE(s.ctas.size() == 6);
    for (auto const& cta : s.ctas) {
      auto const& item = cta.items.front();
      for (int t = 0; t < 6; ++t) CHECK(item.q_order[static_cast<std::size_t>(t)] == (item.kv_tile + t) % 6);
    }
    // Ranks are lock-step order: exactly what assign_lockstep_ranks gives.
    Schedule copy = s;
    assign_lockstep_ranks(problem, copy);
    CHECK(copy.dq_order == s.dq_order);
  }
  SECTION("n != M: start rows floor(j * M / n)") {
    Problem problem = square_problem(1, 1, 1, MaskKind::kFull);
    problem.seqlen_q = 7 * 64;
    problem.seqlen_k = 3 * 128;
    problem.tile_n = 128;
    Schedule const s = make_strategy("shift", problem, machine_with_sms(3));
    for (auto const& cta : s.ctas) {
      auto const& item = cta.items.front();
      REQUIRE(item.q_order.size() == 7);
      CHECK(item.q_order.front() == item.kv_tile * 7 / 3);
      for (std::size_t t = 1; t < 7; ++t) CHECK(item.q_order[t] == (item.q_order[t - 1] + 1) % 7);
    }
  }
  SECTION("n > M: start rows j mod M, heads interleaved so that a head's running items never meet") {
    // 8 heads of 16 KV tiles over 4 Q tiles on 8 SMs: at most M / 2 = 2 items of a head at once,
    // so groups of 4 heads, dealt KV tile by KV tile, head fastest.
    Problem const problem = kv_long_problem(8, 8);
    Machine const machine = machine_with_sms(8);
    Schedule const s = make_strategy("shift", problem, machine);
    validate(problem, machine, s);
    REQUIRE(s.ctas.size() == 8);
    // CTA c's first item: unit c = head c % 4, KV tile c / 4.
    for (int c = 0; c < 8; ++c) {
      WorkItem const& item = s.ctas[static_cast<std::size_t>(c)].items.front();
      CHECK(item.head == c % 4);
      CHECK(item.kv_tile == c / 4);
      CHECK(item.q_order == std::vector<int>{c / 4, (c / 4 + 1) % 4, (c / 4 + 2) % 4, (c / 4 + 3) % 4});
    }
    // In lock step (every CTA one step per unit of time), no two CTAs add into one dQ tile at once.
    std::size_t const steps = s.ctas.front().items.size() * 4;
    for (std::size_t t = 0; t < steps; ++t) {
      std::vector<std::pair<int, int>> touched;  // (head, Q tile)
      for (auto const& cta : s.ctas) {
        WorkItem const& item = cta.items[t / 4];
        touched.emplace_back(item.head, item.q_order[t % 4]);
      }
      std::sort(touched.begin(), touched.end());
      CHECK(std::adjacent_find(touched.begin(), touched.end()) == touched.end());
    }
    // And the simulator agrees: no contribution waits, so shift meets fa3's work bound here.
    CostModel const cost = paper_model(100, 30);
    Cycles const shift = simulate(problem, machine, cost, s).makespan;
    Cycles const fa3 = simulate(problem, machine, cost, make_strategy("fa3", problem, machine)).makespan;
    CHECK(shift == 8 * 4 * (100 + 30) * 2);
    CHECK(shift < fa3);
  }
  SECTION("n > M under GQA: the heads running together never hold one dK/dV tile at once") {
    // 8 q heads on 2 KV heads, 16 KV tiles over 4 Q tiles, 8 SMs: groups of 4 q heads (all of one
    // KV head), each walking the KV tiles from its own offset 0, 4, 8, 12.
    Problem const problem = kv_long_problem(8, 2);
    Machine const machine = machine_with_sms(8);
    Schedule const s = make_strategy("shift", problem, machine);
    validate(problem, machine, s);
    REQUIRE(s.ctas.size() == 8);
    std::size_t const items = s.ctas.front().items.size();
    for (auto const& cta : s.ctas) REQUIRE(cta.items.size() == items);
    for (std::size_t k = 0; k < items; ++k) {
      std::vector<std::pair<int, int>> held;  // (KV head, KV tile) of the items running together
      for (auto const& cta : s.ctas) {
        WorkItem const& item = cta.items[k];
        held.emplace_back(item.head / problem.group_size(), item.kv_tile);
      }
      std::sort(held.begin(), held.end());
      CHECK(std::adjacent_find(held.begin(), held.end()) == held.end());
    }
  }
}

TEST_CASE("lock-step ranks follow a CTA's own order where its contributions come at one time", "[strategies]") {
  // MQA: two q heads of the one KV head; KV tile 0 is visible to no query (empty items, kept under
  // GQA). CTA 0 runs head 1's empty item before head 0's: both dK/dV contributions to tile j0
  // come at time 0, and ranking them by head would make CTA 0 wait for its own later item.
  Problem problem = square_problem(1, 2, 1, MaskKind::kWindow);
  problem.kv_heads = 1;
  problem.seqlen_q = 64;
  problem.seqlen_k = 128;
  problem.mask = Mask{MaskKind::kWindow, 0, 0};
  REQUIRE(problem.visible_q_tiles(0, 0).empty());
  REQUIRE(problem.visible_q_tiles(0, 1) == std::vector<int>{0});
  Schedule s;
  s.ctas.resize(2);
  s.ctas[0].items = {WorkItem{0, 1, 0, {}}, WorkItem{0, 0, 0, {}}};
  s.ctas[1].items = {WorkItem{0, 0, 1, {0}}, WorkItem{0, 1, 1, {0}}};
  assign_lockstep_ranks(problem, s);
  TileIndex const index(problem);
  CHECK(s.dkv_order[static_cast<std::size_t>(index.dkv_id(0, 0, 0))] == std::vector<int>{1, 0});
  CHECK_NOTHROW(validate(problem, machine_with_sms(2), s));
}

TEST_CASE("symmetric-shift pairs KV tiles (p, n-1-p) on one CTA", "[strategies]") {
  for (int const n : {4, 5, 8}) {
    Problem const problem = square_problem(1, 2, n, MaskKind::kCausal);
    Schedule const s = make_strategy("symmetric-shift", problem, machine_with_sms(64));
    INFO("n = " << n);
    CHECK(s.ctas.size() == static_cast<std::size_t>(2 * ((n + 1) / 2)));
    for (auto const& cta : s.ctas) {
      auto const& items = cta.items;
      if (items.size() == 1) {
        CHECK(n % 2 == 1);
        CHECK(items[0].kv_tile == n / 2);
        continue;
      }
      REQUIRE(items.size() == 2);
      CHECK(items[0].kv_tile + items[1].kv_tile == n - 1);
      // Together a pair covers n + 1 steps: the load of every CTA is the same.
      CHECK(items[0].q_order.size() + items[1].q_order.size() == static_cast<std::size_t>(n + 1));
    }
  }
}

TEST_CASE("GQA schedules keep every item and rank the group's q heads", "[strategies]") {
  // Window 0,0 with seqlen_k >> seqlen_q leaves most KV tiles with no visible Q tile.
  Problem const problem = make(1, 4, 2, 128, 1024, 64, 64, Mask{MaskKind::kWindow, 0, 0});
  TileIndex const index(problem);
  for (auto const& name : strategy_names()) {
    for (LaunchModel const launch : kLaunches) {
      Schedule const s = make_strategy(name, problem, machine_with_sms(3), launch);
      INFO(name << " " << to_string(launch));
      std::int64_t empty = 0;
      for (auto const& cta : s.ctas) {
        for (auto const& item : cta.items) empty += item.q_order.empty() ? 1 : 0;
      }
      CHECK(empty == 4 * 14);  // 16 KV tiles, the last 2 see the 2 Q tiles; 4 q heads
      REQUIRE(s.dkv_order.size() == static_cast<std::size_t>(index.num_dkv_tiles()));
      for (std::size_t t = 0; t < s.dkv_order.size(); ++t) {
        int const kvh = index.dkv_key(static_cast<int>(t)).head;
        std::vector<int> heads = s.dkv_order[t];
        std::sort(heads.begin(), heads.end());
        CHECK(heads == std::vector<int>{2 * kvh, 2 * kvh + 1});
      }
    }
  }
  // Without GQA the same problem drops the empty items.
  Problem mha = problem;
  mha.kv_heads = 4;
  Schedule const s = make_strategy("fa3", mha, machine_with_sms(3));
  CHECK(count_steps(s) == visible_steps(mha));
  std::size_t items = 0;
  for (auto const& cta : s.ctas) items += cta.items.size();
  CHECK(items == 4 * 2);
}

TEST_CASE("dynamic launch ranks by lock-step order in the dispatcher's timeline", "[strategies]") {
  // shift, full, 3x3 tiles: KV tile a visits rows a, a+1, a+2 (mod 3).
  Problem const problem = square_problem(1, 1, 3, MaskKind::kFull);
  SECTION("all CTAs resident: lock step") {
    Schedule const s = make_strategy("shift", problem, machine_with_sms(3), LaunchModel::kDynamic);
    CHECK(s.dq_order == std::vector<std::vector<int>>{{0, 2, 1}, {1, 0, 2}, {2, 1, 0}});
  }
  SECTION("two SMs: CTA 2 starts when one of the first two finishes") {
    // Row 0: CTA 0 at t=0, CTA 1 at t=2, CTA 2 at t=3+1. Lock step (every CTA from t=0) would rank
    // CTA 2 first on row 2, and CTAs 0 and 1 would wait for a CTA that needs one of their SMs.
    Schedule const s = make_strategy("shift", problem, machine_with_sms(2), LaunchModel::kDynamic);
    CHECK(s.dq_order == std::vector<std::vector<int>>{{0, 1, 2}, {1, 0, 2}, {1, 0, 2}});
    REQUIRE_NOTHROW(validate(problem, machine_with_sms(2), s));
    Schedule lock_step = s;
    assign_lockstep_ranks(problem, lock_step);
    CHECK_THROWS_WITH(validate(problem, machine_with_sms(2), lock_step), Catch::Contains("deadlock"));
  }
  SECTION("few SMs, many heads, every backward-ranked strategy completes") {
    Problem const big = square_problem(2, 3, 6, MaskKind::kCausal);
    for (int const sms : {1, 2, 3, 5, 7}) {
      for (auto const& name : {"shift", "symmetric-shift", "descending"}) {
        INFO(name << " on " << sms << " SMs");
        Machine const machine = machine_with_sms(sms);
        Schedule const s = make_strategy(name, big, machine, LaunchModel::kDynamic);
        REQUIRE_NOTHROW(validate(big, machine, s));
        CHECK(simulate(big, machine, paper_model(5, 2), s).makespan >= 2 * 3 * 21 * 7 / sms);
      }
    }
  }
}

// ---- closed forms (paper model: L = 0, k = 0, full-cost diagonal; n KV tiles = n SMs) ----------

TEST_CASE("closed form: fa3 = m n (c + r) + (n - 1) r, full and causal", "[strategies][closed-form]") {
  for (auto const [c, r] : kAnyCosts) {
    for (int n = 1; n <= 8; ++n) {
      for (int m = 1; m <= 6; ++m) {
        for (auto const [batch, heads] : splits(m)) {
          for (MaskKind const kind : {MaskKind::kFull, MaskKind::kCausal}) {
            for (LaunchModel const launch : kLaunches) {
              INFO("c=" << c << " r=" << r << " n=" << n << " b=" << batch << " h=" << heads
                        << " causal=" << (kind == MaskKind::kCausal) << " " << to_string(launch));
              Problem const problem = square_problem(batch, heads, n, kind);
              CHECK(paper_makespan("fa3", problem, n, launch, c, r) == m * n * (c + r) + (n - 1) * r);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("closed form: shift, full mask = m n (c + r)", "[strategies][closed-form]") {
  for (auto const [c, r] : kAnyCosts) {
    for (int n = 1; n <= 8; ++n) {
      for (int m = 1; m <= 6; ++m) {
        for (auto const [batch, heads] : splits(m)) {
          for (LaunchModel const launch : kLaunches) {
            INFO("c=" << c << " r=" << r << " n=" << n << " b=" << batch << " h=" << heads << " "
                      << to_string(launch));
            Problem const problem = square_problem(batch, heads, n, MaskKind::kFull);
            CHECK(paper_makespan("shift", problem, n, launch, c, r) == m * n * (c + r));
          }
        }
      }
    }
  }
}

TEST_CASE("closed form: symmetric-shift, causal = m (n + 1) (c + r) / 2 (n, m even)",
          "[strategies][closed-form]") {
  for (auto const [c, r] : kAnyCosts) {
    for (int n = 2; n <= 12; n += 2) {
      for (int m = 1; m <= 6; ++m) {
        for (auto const [batch, heads] : splits(m)) {
          INFO("c=" << c << " r=" << r << " n=" << n << " b=" << batch << " h=" << heads);
          Problem const problem = square_problem(batch, heads, n, MaskKind::kCausal);
          // Odd m leaves the last round's second half of the SMs idle: ceil(m / 2) rounds.
          Cycles const expected = ((m + 1) / 2) * (n + 1) * (c + r);
          if (m % 2 == 0) CHECK(expected == m * (n + 1) * (c + r) / 2);
          CHECK(paper_makespan("symmetric-shift", problem, n, LaunchModel::kPersistent, c, r) == expected);
        }
      }
    }
  }
}

TEST_CASE("closed form: symmetric-shift with k Q tiles per KV tile = m k (n + 1) (c + r) / 2",
          "[strategies][closed-form]") {
  // tile_n = k tile_m (the kernel's 64 x 128 tiles at head_dim 128 are k = 2): the exact
  // construction still never waits in lock step, and a pair is k (n + 1) steps.
  for (int const k : {2, 4}) {
    for (auto const [c, r] : kAnyCosts) {
      for (int n = 2; n <= 8; n += 2) {
        for (int m = 1; m <= 4; ++m) {
          for (auto const [batch, heads] : splits(m)) {
            INFO("k=" << k << " c=" << c << " r=" << r << " n=" << n << " b=" << batch
                      << " h=" << heads);
            Problem problem = square_problem(batch, heads, n, MaskKind::kCausal);
            problem.tile_m = problem.tile_n / k;
            Cycles const expected = ((m + 1) / 2) * k * (n + 1) * (c + r);
            CHECK(paper_makespan("symmetric-shift", problem, n, LaunchModel::kPersistent, c, r) ==
                  expected);
          }
        }
      }
    }
  }
}

TEST_CASE("symmetric-shift's exact construction needs k Q tiles per KV tile", "[strategies]") {
  // tile_n = 2 tile_m: pair p walks 2 (n + 1) steps, the dense rectangle first.
  Problem problem = square_problem(1, 1, 4, MaskKind::kCausal);
  problem.tile_m = 32;
  Schedule const s = make_strategy("symmetric-shift", problem, machine_with_sms(2));
  REQUIRE(s.ctas.size() == 2);
  CHECK(s.ctas[0].items[0].q_order == std::vector<int>{4, 5, 6, 7, 0, 1, 2, 3});
  CHECK(s.ctas[0].items[1].q_order == std::vector<int>{7, 6});
  CHECK(s.ctas[1].items[0].q_order == std::vector<int>{5, 6, 7, 4, 2, 3});
  CHECK(s.ctas[1].items[1].q_order == std::vector<int>{7, 6, 5, 4});
  // A tail that breaks q_tiles == k kv_tiles (seqlen 3 * 64 + 16: 7 Q tiles, 4 KV tiles) falls
  // back to descending walks, still valid.
  problem.seqlen_q = problem.seqlen_k = 3 * 64 + 16;
  Schedule const tail = make_strategy("symmetric-shift", problem, machine_with_sms(3));
  validate(problem, machine_with_sms(3), tail);
  CHECK(tail.ctas[0].items[0].q_order.front() == problem.q_tiles(0) - 1);
}

TEST_CASE("closed form: descending, causal (c >= r)", "[strategies][closed-form]") {
  for (auto const [c, r] : kComputeAtLeastReduce) {
    for (int n = 1; n <= 8; ++n) {
      for (int m = 1; m <= 7; ++m) {
        for (auto const [batch, heads] : splits(m)) {
          Cycles const pairs = m / 2;
          Cycles const expected = m % 2 == 0 ? pairs * (n + 1) * (c + r) + (n - 1) * r
                                             : pairs * (n + 1) * (c + r) + n * (c + r);
          for (LaunchModel const launch : kLaunches) {
            INFO("c=" << c << " r=" << r << " n=" << n << " b=" << batch << " h=" << heads << " "
                      << to_string(launch));
            Problem const problem = square_problem(batch, heads, n, MaskKind::kCausal);
            CHECK(paper_makespan("descending", problem, n, launch, c, r) == expected);
          }
        }
      }
    }
  }
}

// ---- the table in docs/strategies.md (run with: test_dagsim "[.table]" -s) ----------------------

TEST_CASE("print simulated makespans of the strategies", "[.table]") {
  struct Row {
    char const* label;
    Problem problem;
  };
  auto grid = [](int seqlen, MaskKind kind) {
    Problem p;
    p.batch = 16384 / seqlen;
    p.q_heads = 16;
    p.kv_heads = 16;
    p.seqlen_q = seqlen;
    p.seqlen_k = seqlen;
    p.head_dim = 128;
    p.tile_m = 64;
    p.tile_n = 128;
    p.mask = Mask{kind, 0, 0};
    return p;
  };
  auto square = [](Problem p) {
    p.tile_m = 128;  // the symmetric-shift premise: a square tile grid
    return p;
  };
  std::vector<Row> const rows = {
      {"d128 full 2k", grid(2048, MaskKind::kFull)},
      {"d128 causal 2k", grid(2048, MaskKind::kCausal)},
      {"d128 full 8k", grid(8192, MaskKind::kFull)},
      {"d128 causal 8k", grid(8192, MaskKind::kCausal)},
      {"d128 causal 8k, 128x128 tiles", square(grid(8192, MaskKind::kCausal))},
  };
  Machine const machine = machine_preset("h200");
  std::printf("| shape | launch | bound |");
  for (auto const& name : strategy_names()) std::printf(" %s |", name.c_str());
  std::printf("\n");
  for (auto const& row : rows) {
    CostModel const cost = default_model(row.problem);
    Bounds const bounds = compute_bounds(row.problem, machine, cost);
    for (LaunchModel const launch : kLaunches) {
      std::printf("| %s | %s | %lld |", row.label, to_string(launch).c_str(),
                  static_cast<long long>(bounds.lower()));
      for (auto const& name : strategy_names()) {
        Schedule const s = make_strategy(name, row.problem, machine, launch);
        validate(row.problem, machine, s);
        Cycles const makespan = simulate(row.problem, machine, cost, s).makespan;
        std::printf(" %lld (+%.1f%%) |", static_cast<long long>(makespan),
                    100.0 * gap_to_bound(makespan, bounds.lower()));
      }
      std::printf("\n");
    }
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("fastest_named is the named strategy with the smallest makespan, the earlier on ties", "[strategies]") {
  CostModel const cost = paper_model(4, 1);
  for (MaskKind kind : {MaskKind::kFull, MaskKind::kCausal}) {
    for (int sms : {3, 8}) {
      Problem const p = square_problem(2, 3, 6, kind);
      Machine const machine = machine_with_sms(sms);
      NamedRun const best = fastest_named(p, machine, cost, LaunchModel::kPersistent);
      REQUIRE(best.ran());
      std::string expected;
      Cycles least = 0;
      for (auto const& name : strategy_names()) {
        NamedRun const run = run_named(name, p, machine, cost, LaunchModel::kPersistent);
        if (run.ran() && (expected.empty() || run.result->makespan < least)) {
          expected = name;
          least = run.result->makespan;
        }
      }
      INFO("mask " << static_cast<int>(kind) << ", " << sms << " SMs");
      CHECK(best.name == expected);
      CHECK(best.result->makespan == least);
      CHECK(best.schedule.strategy == expected);
    }
  }
}
