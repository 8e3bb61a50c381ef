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

/// `window` > 0: the list runs window by window of that many heads ((batch, q head) in order),
/// longest (shortest) first inside one; 0: all items by length alone, which starts every head at
/// once (more live than the L2 holds on large problems: SearchOptions::max_live_bytes).
Plan list_schedule(PlanEvaluator const& ev, LaunchModel launch, ItemOrder item_order, QChoice q, int window) {
  std::vector<int> items = ev.live_items();
  int const q_heads = ev.problem().q_heads;
  auto key = [&](int id) {
    ItemKey const k = ev.index().item_key(id);
    int const group = window > 0 ? (k.batch * q_heads + k.head) / window : 0;
    // Equal items alternate heads and batches: (tile, batch, head) varies the head fastest.
    return std::make_tuple(group, ev.item_work(id), k.tile, k.batch, k.head);
  };
  std::stable_sort(items.begin(), items.end(), [&](int a, int b) {
    auto ka = key(a);
    auto kb = key(b);
    if (std::get<0>(ka) != std::get<0>(kb)) return std::get<0>(ka) < std::get<0>(kb);
    if (std::get<1>(ka) != std::get<1>(kb)) {
      return item_order == ItemOrder::kLongestFirst ? std::get<1>(ka) > std::get<1>(kb)
                                                    : std::get<1>(ka) < std::get<1>(kb);
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
  // Windowed seeds ("lpt-w/..."): windows of about as many items as the machine has SMs.
  Problem const& p = ev.problem();
  int const heads = p.batch * p.q_heads;
  int const per_head = std::max(1, static_cast<int>(ev.live_items().size()) / std::max(1, heads));
  int const window = std::max(1, (ev.machine().sms + per_head - 1) / per_head);
  for (int const w : {0, window}) {
    if (w >= heads) continue;  // one window holds every head: the plain seeds again
    for (auto const& [order, order_name] : orders) {
      for (auto const& [q, q_name] : qs) {
        std::string const name = std::string(order_name) + (w > 0 ? "-w/" : "/") + q_name;
        seeds.push_back(Seed{name, list_schedule(ev, launch, order, q, w)});
      }
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
