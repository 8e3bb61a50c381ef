#pragma once
// Small hand-made problems, cost models and schedules shared by the dagsim tests.
#include <utility>
#include <vector>

#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/model/cost_model.h"

namespace dash::sim::testing {

/// q_tiles x kv_tiles square tiles of 64 per (batch, head), one batch.
inline Problem grid(int q_tiles, int kv_tiles, int q_heads = 1, int kv_heads = 1, Mask mask = {}) {
  Problem p;
  p.q_heads = q_heads;
  p.kv_heads = kv_heads;
  p.tile_m = 64;
  p.tile_n = 64;
  p.seqlen_q = 64 * q_tiles;
  p.seqlen_k = 64 * kv_tiles;
  p.mask = mask;
  return p;
}

/// Exact integer costs; diagonal steps at full cost unless `proportional`.
inline CostModel costs(Cycles c, Cycles r, Cycles latency, int k, Cycles reduce_kv = 0,
                       bool proportional = false) {
  CostModel cost;
  cost.compute = c;
  cost.reduce = r;
  cost.latency = latency;
  cost.dq_buffer = k;
  cost.proportional = proportional;
  cost.reduce_kv = reduce_kv;
  return cost;
}

/// A schedule from per-CTA item lists and rank lists, as written out in a test.
inline Schedule make(std::vector<std::vector<WorkItem>> ctas, std::vector<std::vector<int>> dq_order,
                     std::vector<std::vector<int>> dkv_order = {},
                     LaunchModel launch = LaunchModel::kPersistent) {
  Schedule s;
  s.strategy = "test";
  s.launch = launch;
  for (auto& items : ctas) s.ctas.push_back(Cta{std::move(items)});
  s.dq_order = std::move(dq_order);
  s.dkv_order = std::move(dkv_order);
  return s;
}

}  // namespace dash::sim::testing
