#include "dagsim/search/search_pair.h"

namespace dash::sim {

std::optional<PairView> pair_view(Problem const& problem, Machine const& machine, CostModel const& cost) {
  constexpr int kMaxTile = 256;  // validate_problem's limit on tile rows
  if (machine.sms < 2 || 2 * problem.tile_n > kMaxTile) return std::nullopt;
  PairView view{problem, machine, cost};
  view.problem.tile_n = 2 * problem.tile_n;
  view.machine.sms = machine.sms / 2;
  view.machine.name = machine.name + "-2cta";
  view.cost.compute = cost.compute + cost.dsmem;
  return view;
}

}  // namespace dash::sim
