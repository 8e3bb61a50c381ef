#include "dagsim/model/bounds.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "dagsim/core/error.h"

namespace dash::sim {

// Why these are lower bounds on the makespan of every valid schedule (docs/model.md):
//
// Work. The SM-bound nodes of one CTA run one after another: C(t) waits for C(t-1), and with
// k = 0 also C(t) -> R(t) -> C(t+1) and R(last) -> K -> next C. So a CTA is busy for at least the
// sum of their weights before it finishes, and each SM runs its CTAs one after another (persistent:
// one CTA per SM; dynamic: a CTA takes an SM only once the previous one has finished). Hence
// sms * makespan >= total SM-bound work, and makespan >= the work of any single item, whose
// steps all run on one CTA.
//
// dQ chain. The contributions to one dQ tile are added one at a time in rank order with L
// between consecutive ones; the first can start only after its own C, which costs at least the
// cheapest contributor's c. So makespan >= min c + n r + (n - 1) L.
//
// dK/dV chain (GQA). K of the first-ranked head waits for its item's last R, which follows all the
// item's C nodes on one CTA: at least sum c + r (nothing for an item without visible tiles); then
// all g heads add one at a time with L between: + g r_kv + (g - 1) L. Every head's item of a
// given (b, j) walks the same Q tiles, so the sum does not depend on which head is first.
Bounds compute_bounds(Problem const& problem, Machine const& machine, CostModel const& cost) {
  validate_problem(problem);
  if (machine.sms < 1) user_error("machine '{}' has {} SMs; it needs at least one", machine.name, machine.sms);
  if (cost.compute < 0 || cost.reduce < 0 || cost.latency < 0 || cost.reduce_kv < 0 ||
      cost.dq_buffer < 0 || cost.item < 0) {
    user_error("costs and the dQ buffer depth must be non-negative");
  }
  bool const on_sm = cost.dq_buffer == 0;
  bool const gqa = problem.is_gqa();
  Cycles const r = cost.reduce;
  Cycles const L = cost.latency;
  Bounds bounds;
  Cycles total = 0;
  Cycles largest_item = 0;
  for (int b = 0; b < problem.batch; ++b) {
    int const q_tiles = problem.q_tiles(b);
    int const kv_tiles = problem.kv_tiles(b);
    std::vector<Cycles> column_compute(static_cast<std::size_t>(kv_tiles), 0);
    std::vector<std::int64_t> column_steps(static_cast<std::size_t>(kv_tiles), 0);
    for (int i = 0; i < q_tiles; ++i) {
      Cycles cheapest = std::numeric_limits<Cycles>::max();
      std::int64_t contributors = 0;
      for (int j = 0; j < kv_tiles; ++j) {
        if (!problem.is_visible(b, i, j)) continue;
        Cycles const c = cost.step_cost(problem, b, i, j);
        column_compute[static_cast<std::size_t>(j)] += c;
        ++column_steps[static_cast<std::size_t>(j)];
        cheapest = std::min(cheapest, c);
        ++contributors;
      }
      if (contributors > 0) {
        bounds.chain = std::max(bounds.chain, cheapest + contributors * r + (contributors - 1) * L);
      }
    }
    for (int j = 0; j < kv_tiles; ++j) {
      std::int64_t const steps = column_steps[static_cast<std::size_t>(j)];
      // The item's first step carries the per-item cost o (an item without steps has none).
      Cycles const compute =
          column_compute[static_cast<std::size_t>(j)] + (steps > 0 ? cost.item : 0);
      Cycles const item = compute + (on_sm ? steps * r + (gqa ? cost.reduce_kv : 0) : 0);
      largest_item = std::max(largest_item, item);
      total += item * problem.q_heads;
      if (gqa) {
        std::int64_t const g = problem.group_size();
        Cycles const epilogue = steps > 0 ? compute + r : 0;
        bounds.chain = std::max(bounds.chain, epilogue + g * cost.reduce_kv + (g - 1) * L);
      }
    }
  }
  if (!cost.ordered) bounds.chain = 0;  // arrival order: no chain
  Cycles const spread = (total + machine.sms - 1) / machine.sms;
  bounds.work = std::max(spread, largest_item);
  return bounds;
}

double gap_to_bound(Cycles makespan, Cycles bound) {
  if (bound <= 0) return makespan > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  return static_cast<double>(makespan - bound) / static_cast<double>(bound);
}

}  // namespace dash::sim
