#include "dagsim/search/search_seeds.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>
#include <utility>

#include "dagsim/search/search_bound.h"
#include "dagsim/search/search_strategy.h"

namespace dash::sim {
namespace {

enum class ItemOrder { kLongestFirst, kShortestFirst };
enum class QChoice { kDescending, kAscending, kShiftAscending, kShiftDescending };

Plan list_schedule(PlanEvaluator const& ev, LaunchModel launch, ItemOrder item_order, QChoice q) {
  std::vector<int> items = ev.live_items();
  auto key = [&](int id) {
    ItemKey const k = ev.index().item_key(id);
    // Equal items alternate heads and batches: (tile, batch, head) varies the head fastest.
    return std::make_tuple(ev.item_work(id), k.tile, k.batch, k.head);
  };
  std::stable_sort(items.begin(), items.end(), [&](int a, int b) {
    auto ka = key(a);
    auto kb = key(b);
    if (std::get<0>(ka) != std::get<0>(kb)) {
      return item_order == ItemOrder::kLongestFirst ? std::get<0>(ka) > std::get<0>(kb)
                                                    : std::get<0>(ka) < std::get<0>(kb);
    }
    return ka < kb;
  });
  Plan plan;
  plan.launch = launch;
  plan.q_order.assign(static_cast<std::size_t>(ev.num_items()), {});
  for (int const id : items) {
    auto const& vis = ev.visible(id);
    int const tile = ev.index().item_key(id).tile;
    int const n = static_cast<int>(vis.size());
    switch (q) {
      case QChoice::kDescending: plan.q_order[id] = make_q_order(vis, QOrderKind::kDescending, n - 1); break;
      case QChoice::kAscending: plan.q_order[id] = make_q_order(vis, QOrderKind::kAscending, 0); break;
      case QChoice::kShiftAscending: plan.q_order[id] = make_q_order(vis, QOrderKind::kAscending, tile); break;
      case QChoice::kShiftDescending:
        plan.q_order[id] = make_q_order(vis, QOrderKind::kDescending, n - 1 - tile);
        break;
    }
  }
  if (launch == LaunchModel::kDynamic) {
    for (int const id : items) plan.ctas.push_back({id});
    return plan;
  }
  int const ctas = std::min(ev.machine().sms, static_cast<int>(items.size()));
  plan.ctas.assign(static_cast<std::size_t>(ctas), {});
  using Load = std::pair<Cycles, int>;
  std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
  for (int c = 0; c < ctas; ++c) loads.emplace(0, c);
  for (int const id : items) {
    auto [load, c] = loads.top();
    loads.pop();
    plan.ctas[c].push_back(id);
    loads.emplace(load + ev.item_work(id), c);
  }
  return plan;
}

}  // namespace

std::vector<Seed> list_schedule_seeds(PlanEvaluator const& ev, LaunchModel launch) {
  std::vector<Seed> seeds;
  if (ev.live_items().empty()) return seeds;
  std::pair<ItemOrder, char const*> const orders[] = {{ItemOrder::kLongestFirst, "lpt"},
                                                      {ItemOrder::kShortestFirst, "spt"}};
  std::pair<QChoice, char const*> const qs[] = {{QChoice::kDescending, "desc"},
                                                {QChoice::kAscending, "asc"},
                                                {QChoice::kShiftAscending, "shift-asc"},
                                                {QChoice::kShiftDescending, "shift-desc"}};
  for (auto const& [order, order_name] : orders) {
    for (auto const& [q, q_name] : qs) {
      seeds.push_back(Seed{std::string(order_name) + "/" + q_name, list_schedule(ev, launch, order, q)});
    }
  }
  return seeds;
}

Cycles packing_bound(PlanEvaluator const& ev) {
  std::vector<Cycles> work;
  for (int const id : ev.live_items()) work.push_back(ev.item_work(id));
  if (work.empty()) return 0;
  // Under GQA the item weights already end with their epilogue (reduction, then dK/dV).
  bool const trailing_reduce = ev.cost().dq_buffer > 0 && !ev.problem().is_gqa();
  Cycles const tail = trailing_reduce ? ev.cost().reduce : 0;
  return load_lower_bound(std::move(work), ev.machine().sms) + tail;
}

}  // namespace dash::sim
