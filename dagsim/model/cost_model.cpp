#include "dagsim/model/cost_model.h"

namespace dash::sim {

Cycles CostModel::step_cost(Problem const& problem, int b, int i, int j) const {
  if (!proportional) return compute;
  std::int64_t const visible = problem.visible_pairs(b, i, j);
  std::int64_t const whole = std::int64_t{problem.tile_m} * problem.tile_n;
  if (visible >= whole) return compute;
  Cycles const cost = (compute * visible + whole - 1) / whole;
  return cost > 0 ? cost : 1;
}

CostModel paper_model(Cycles compute, Cycles reduce) {
  CostModel model;
  model.compute = compute;
  model.reduce = reduce;
  model.latency = 0;
  model.dq_buffer = 0;
  model.proportional = false;
  return model;
}

CostModel default_model(Problem const& problem) {
  // Per-SM rates in cycles at ~1.98 GHz on an H200: the portable mma.sync kernel sustains about
  // 1024 bf16 FLOP/cycle/SM (~290 TFLOP/s backward at d128 8k on 132 SMs,
  // docs/results/2026-12-01-h200-symmetric-k2-first-store.md); a reduce-add streams ~32
  // B/cycle/SM into L2; one ticket hand-off is ~1000 cycles (measured 823-1232 one-way).
  std::int64_t const tm = problem.tile_m;
  std::int64_t const tn = problem.tile_n;
  std::int64_t const d = problem.head_dim;
  CostModel model;
  model.compute = (10 * tm * tn * d + 1023) / 1024;
  model.reduce = (tm * d * 4 + 31) / 32;
  model.latency = 1000;
  model.dq_buffer = 1;
  model.proportional = true;
  model.reduce_kv = (2 * tn * d * 4 + 31) / 32;
  model.dsmem = (tm * d * 4 + 63) / 64;
  return model;
}

}  // namespace dash::sim
