#include "dagsim/model/cost_model.h"

#include "dagsim/core/error.h"

namespace dash::sim {

Cycles CostModel::step_cost(Problem const& problem, int b, int i, int j) const {
  if (!proportional) return compute;
  std::int64_t const visible = problem.visible_pairs(b, i, j);
  std::int64_t const whole = std::int64_t{problem.tile_m} * problem.tile_n;
  if (visible >= whole) return compute;
  Cycles const cost = (compute * visible + whole - 1) / whole;
  return cost > 0 ? cost : 1;
}

int KernelRates::flops_for(int head_dim) const {
  for (HeadDimFlops const& f : flops_by_head_dim) {
    if (f.head_dim == head_dim) return f.flops_per_cycle;
  }
  return flops_per_cycle;
}

namespace {

/// Whether every Q tile sees at least one key (not so for causal with seqlen_q > seqlen_k, or
/// some windows): then a call in rank order stores the first contribution to each dQ tile.
bool every_q_tile_sees_a_key(Problem const& problem) {
  for (int b = 0; b < problem.batch; ++b) {
    for (int i = 0; i < problem.q_tiles(b); ++i) {
      if (problem.visible_kv_tiles(b, i).empty()) return false;
    }
  }
  return true;
}

}  // namespace

bool zeroes_dq(Problem const& problem, bool ordered, bool first_claims) {
  return (!ordered && !first_claims) || !every_q_tile_sees_a_key(problem);
}

Cycles prepost_cycles(Problem const& problem, KernelRates const& rates, DqZeroing zeroing) {
  if (rates.prepost_bytes_per_cycle <= 0) return 0;
  std::int64_t const q = problem.total_q() * problem.q_heads * problem.head_dim;
  std::int64_t const k = problem.total_k() * problem.kv_heads * problem.head_dim;
  std::int64_t const bytes = (zeroing == DqZeroing::kZeroed ? 14 : 10) * q + (problem.is_gqa() ? 20 * k : 0);
  return (bytes + rates.prepost_bytes_per_cycle - 1) / rates.prepost_bytes_per_cycle;
}

Cycles prepost_cycles(Problem const& problem, KernelRates const& rates, bool ordered, bool first_claims) {
  return prepost_cycles(problem, rates,
                        zeroes_dq(problem, ordered, first_claims) ? DqZeroing::kZeroed : DqZeroing::kFirstStores);
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

CostModel default_model(Problem const& problem, KernelRates const& rates) {
  std::int64_t const tm = problem.tile_m;
  std::int64_t const tn = problem.tile_n;
  std::int64_t const d = problem.head_dim;
  DASH_ASSERT(rates.flops_for(problem.head_dim) > 0 && rates.reduce_bytes_per_cycle > 0);
  std::int64_t const flops = rates.flops_for(problem.head_dim);
  std::int64_t const bytes = rates.reduce_bytes_per_cycle;
  CostModel model;
  model.compute = (10 * tm * tn * d + flops - 1) / flops;
  model.reduce = (tm * d * 4 + bytes - 1) / bytes;
  model.latency = rates.latency;
  model.dq_buffer = rates.dq_buffer;
  model.item = rates.item_cycles;
  model.proportional = true;
  model.reduce_kv = (2 * tn * d * 4 + bytes - 1) / bytes;
  model.dsmem = (tm * d * 4 + 63) / 64;
  model.hbm_bytes_per_cycle = rates.hbm_bytes_per_cycle;
  model.l2_bytes = rates.l2_bytes;
  return model;
}

}  // namespace dash::sim
