#include "dagsim/model/memory_floor.h"

#include "dagsim/core/error.h"

namespace dash::sim {

namespace {
constexpr std::int64_t kElemBytes = 2;  // bf16 / fp16 Q, K, V, dO, dK, dV
}  // namespace

MemoryFloor memory_floor(Problem const& problem, Schedule const& schedule, CostModel const& cost,
                         WorkingSet const& live) {
  MemoryFloor f;
  if (cost.hbm_bytes_per_cycle <= 0) return f;
  DASH_ASSERT(cost.l2_bytes >= 0);
  std::int64_t const d = problem.head_dim;
  std::int64_t const q = problem.total_q() * problem.q_heads * d;
  std::int64_t const k = problem.total_k() * problem.kv_heads * d;
  // K, V read and dK, dV written; Q, dO read and the fp32 dQ accumulator written once each.
  f.compulsory_bytes = 4 * kElemBytes * k + (2 * kElemBytes + 4) * q;
  std::int64_t const tm = problem.tile_m;
  // Q and dO tiles, LSE and dPsum (fp32 per row), the fp32 dQ accumulator read and written.
  f.step_bytes = tm * d * 2 * kElemBytes + tm * 8 + tm * d * 8;
  f.steps = count_steps(schedule);
  if (live.max_bytes > cost.l2_bytes) {
    f.miss_permille = (1000 * (live.max_bytes - cost.l2_bytes)) / live.max_bytes;
  }
  f.bytes = f.compulsory_bytes + f.steps * f.step_bytes * f.miss_permille / 1000;
  f.cycles = (f.bytes + cost.hbm_bytes_per_cycle - 1) / cost.hbm_bytes_per_cycle;
  return f;
}

}  // namespace dash::sim
