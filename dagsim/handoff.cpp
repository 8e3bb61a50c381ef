#include "dagsim/handoff.h"

#include <cstdint>
#include <vector>

#include "dagsim/tile_index.h"

namespace dash::sim {

double tight_handoff_share(Problem const& problem, Schedule const& schedule) {
  TileIndex const index(problem);
  // position[dq_off[tile] + kv_tile]: lock-step position of KV tile kv_tile's contribution.
  std::vector<std::int64_t> const dq_off = index.dq_kv_offsets();
  std::vector<std::int64_t> position(static_cast<std::size_t>(dq_off.back()), 0);
  for (auto const& cta : schedule.ctas) {
    std::int64_t step = 0;
    for (auto const& item : cta.items) {
      for (int i : item.q_order) {
        position[dq_off[index.dq_id(item.batch, item.head, i)] + item.kv_tile] = step++;
      }
    }
  }
  std::int64_t handoffs = 0;
  std::int64_t tight = 0;
  for (std::size_t id = 0; id < schedule.dq_order.size(); ++id) {
    auto const& order = schedule.dq_order[id];
    for (std::size_t r = 1; r < order.size(); ++r) {
      ++handoffs;
      if (position[dq_off[id] + order[r]] <= position[dq_off[id] + order[r - 1]]) ++tight;
    }
  }
  return handoffs == 0 ? 0.0 : static_cast<double>(tight) / static_cast<double>(handoffs);
}

}  // namespace dash::sim
