#pragma once
// Random VALID schedules for tests, from our seeded RNG: small random problems (batches, GQA
// groups, tails, varlen, full / causal / window masks), random program orders, and ranks taken
// from a random interleaving of the CTAs. Because every rank order follows one play of the
// program orders that respects residency, the schedule cannot deadlock under either launch model.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/rng.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/tile_index.h"
#include "dagsim/model/cost_model.h"

namespace dash::sim::testing {

/// A small problem: at most a few hundred steps, every mask kind, tails, varlen and GQA.
inline Problem random_problem(Rng& rng) {
  Problem p;
  p.batch = rng.uniform(1, 3);
  p.kv_heads = rng.uniform(1, 3);
  p.q_heads = p.kv_heads * (rng.chance(1, 2) ? 1 : rng.uniform(2, 3));
  p.head_dim = 16 * rng.uniform(1, 8);
  p.tile_m = 16 * rng.uniform(1, 4);
  p.tile_n = 16 * rng.uniform(1, 4);
  int const max_len = 160;
  if (rng.chance(1, 3)) {
    for (int b = 0; b < p.batch; ++b) {
      p.seqlens_q.push_back(rng.uniform(1, max_len));
      p.seqlens_k.push_back(rng.uniform(1, max_len));
    }
  } else {
    p.seqlen_q = rng.uniform(1, max_len);
    p.seqlen_k = rng.chance(1, 2) ? p.seqlen_q : rng.uniform(1, max_len);
  }
  switch (rng.uniform(0, 2)) {
    case 0: p.mask = Mask{MaskKind::kFull, 0, 0}; break;
    case 1: p.mask = Mask{MaskKind::kCausal, 0, 0}; break;
    default: p.mask = Mask{MaskKind::kWindow, rng.uniform(0, 100), rng.uniform(0, 100)}; break;
  }
  return p;
}

/// Random integer costs; dq_buffer in 0..3, latency sometimes zero.
inline CostModel random_cost(Rng& rng) {
  CostModel cost;
  cost.compute = rng.uniform(1, 50);
  cost.reduce = rng.uniform(0, 20);
  cost.latency = rng.chance(1, 4) ? 0 : rng.uniform(0, 30);
  cost.dq_buffer = rng.uniform(0, 3);
  cost.proportional = rng.chance(1, 2);
  cost.reduce_kv = rng.uniform(0, 25);
  cost.item = rng.chance(1, 2) ? 0 : rng.uniform(0, 60);
  return cost;
}

/// A valid schedule for `problem` on `machine`: items dealt to random CTAs in random order, each
/// walking its visible Q tiles in a random order; ranks from a random residency-respecting play.
inline Schedule random_schedule(Problem const& problem, Machine const& machine, LaunchModel launch, Rng& rng) {
  TileIndex const index(problem);
  bool const gqa = problem.is_gqa();
  std::vector<WorkItem> items;
  for (int b = 0; b < problem.batch; ++b) {
    for (int h = 0; h < problem.q_heads; ++h) {
      for (int j = 0; j < problem.kv_tiles(b); ++j) {
        WorkItem item{b, h, j, problem.visible_q_tiles(b, j)};
        rng.shuffle(item.q_order);
        // Items without visible tiles are optional, except under GQA (their dK/dV chain).
        if (item.q_order.empty() && !gqa && rng.chance(1, 2)) continue;
        items.push_back(std::move(item));
      }
    }
  }
  rng.shuffle(items);
  Schedule schedule;
  schedule.strategy = "random";
  schedule.launch = launch;
  if (launch == LaunchModel::kDynamic) {
    for (auto& item : items) schedule.ctas.push_back(Cta{{std::move(item)}});
  } else {
    int const max_ctas = std::max(1, std::min(machine.sms, static_cast<int>(items.size())));
    schedule.ctas.resize(static_cast<std::size_t>(rng.uniform(1, max_ctas)));
    for (auto& item : items) {
      schedule.ctas[static_cast<std::size_t>(rng.uniform(0, static_cast<int>(schedule.ctas.size()) - 1))]
          .items.push_back(std::move(item));
    }
  }
  if (schedule.ctas.empty()) schedule.ctas.resize(1);  // a problem with no work at all

  // The play: a random resident CTA performs its next event (a step, or an item's dK/dV epilogue).
  struct Cursor {
    std::size_t item = 0;
    std::size_t step = 0;
  };
  auto const num_ctas = static_cast<int>(schedule.ctas.size());
  std::vector<Cursor> cursor(static_cast<std::size_t>(num_ctas));
  auto finished = [&](int c) { return cursor[static_cast<std::size_t>(c)].item >= schedule.ctas[static_cast<std::size_t>(c)].items.size(); };
  schedule.dq_order.assign(static_cast<std::size_t>(index.num_dq_tiles()), {});
  if (gqa) schedule.dkv_order.assign(static_cast<std::size_t>(index.num_dkv_tiles()), {});
  int const resident_limit = launch == LaunchModel::kDynamic ? machine.sms : num_ctas;
  std::vector<int> resident;
  int next_launch = 0;
  auto fill = [&] {
    while (static_cast<int>(resident.size()) < resident_limit && next_launch < num_ctas) {
      int const c = next_launch++;
      // Non-GQA items without steps have no events: skip past them.
      auto& cur = cursor[static_cast<std::size_t>(c)];
      auto const& list = schedule.ctas[static_cast<std::size_t>(c)].items;
      while (!gqa && cur.item < list.size() && list[cur.item].q_order.empty()) ++cur.item;
      if (finished(c)) continue;  // finishes at once and frees its SM
      resident.push_back(c);
    }
  };
  fill();
  while (!resident.empty()) {
    auto const pick = static_cast<std::size_t>(rng.uniform(0, static_cast<int>(resident.size()) - 1));
    int const c = resident[pick];
    auto& cur = cursor[static_cast<std::size_t>(c)];
    auto const& list = schedule.ctas[static_cast<std::size_t>(c)].items;
    WorkItem const& item = list[cur.item];
    bool did_step = false;
    if (cur.step < item.q_order.size()) {
      int const i = item.q_order[cur.step];
      schedule.dq_order[static_cast<std::size_t>(index.dq_id(item.batch, item.head, i))].push_back(item.kv_tile);
      ++cur.step;
      did_step = true;
    }
    if (cur.step == item.q_order.size()) {
      if (gqa) {
        // The epilogue is an event of its own (sometimes a later pick), so chains interleave too.
        if (did_step && rng.chance(1, 2)) continue;
        int const kvh = item.head / problem.group_size();
        schedule.dkv_order[static_cast<std::size_t>(index.dkv_id(item.batch, kvh, item.kv_tile))].push_back(item.head);
      }
      ++cur.item;
      cur.step = 0;
      while (!gqa && cur.item < list.size() && list[cur.item].q_order.empty()) ++cur.item;
    }
    if (finished(c)) {
      resident.erase(resident.begin() + static_cast<std::ptrdiff_t>(pick));
      fill();
    }
  }
  return schedule;
}

/// Problem, machine, cost and a valid schedule, all random.
struct RandomCase {
  Problem problem;
  Machine machine;
  CostModel cost;
  Schedule schedule;
};

inline RandomCase random_case(Rng& rng) {
  RandomCase out;
  out.problem = random_problem(rng);
  out.machine = machine_with_sms(rng.uniform(1, 8));
  out.cost = random_cost(rng);
  LaunchModel const launch = rng.chance(1, 2) ? LaunchModel::kPersistent : LaunchModel::kDynamic;
  out.schedule = random_schedule(out.problem, out.machine, launch, rng);
  return out;
}

}  // namespace dash::sim::testing
