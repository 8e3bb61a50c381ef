#include "dagsim/search/search_exact.h"

#include <algorithm>

#include <fmt/format.h>

#include "dagsim/search/search_strategy.h"

namespace dash::sim {
namespace {
constexpr int kMaxItems = 12;
}  // namespace

bool exact_applicable(PlanEvaluator const& ev, LaunchModel /*launch*/) {
  auto const live = static_cast<int>(ev.live_items().size());
  return live > 0 && live <= kMaxItems && live <= ev.machine().sms;
}

ExactResult exact_search(PlanEvaluator& ev, LaunchModel launch, Cycles cutoff, Cycles lower,
                         std::int64_t limit) {
  ExactResult result;
  if (!exact_applicable(ev, launch)) return result;
  Problem const& problem = ev.problem();
  bool const symmetric = !problem.is_gqa() && problem.seqlens_q.empty() && problem.seqlens_k.empty();
  // Representatives: one group's items when groups are identical, else every item.
  std::vector<int> reps;
  for (int const id : ev.live_items()) {
    ItemKey const key = ev.index().item_key(id);
    if (!symmetric || (key.batch == 0 && key.head == 0)) reps.push_back(id);
  }
  std::vector<std::vector<std::vector<int>>> choices;
  std::int64_t total = 1;
  for (int const id : reps) {
    auto const& vis = ev.visible(id);
    std::vector<std::vector<int>> orders;
    for (int kind = 0; kind < 3; ++kind) {
      for (int rot = 0; rot < static_cast<int>(vis.size()); ++rot) {
        auto order = make_q_order(vis, static_cast<QOrderKind>(kind), rot);
        if (std::find(orders.begin(), orders.end(), order) == orders.end()) orders.push_back(std::move(order));
      }
    }
    total *= static_cast<std::int64_t>(orders.size());
    if (total > limit) return result;
    choices.push_back(std::move(orders));
  }
  result.space = fmt::format(
      "one item per CTA, {} items{}, Q orders ascending/descending/two-phase at every rotation, "
      "first-come ranks ({} plans)",
      reps.size(), symmetric ? " of one (batch, head) group" : "", total);

  Plan plan;
  plan.launch = launch;
  plan.q_order.assign(static_cast<std::size_t>(ev.num_items()), {});
  for (int const id : ev.live_items()) plan.ctas.push_back({id});
  // Which representative's order each live item copies.
  std::vector<int> rep_of(static_cast<std::size_t>(ev.num_items()), -1);
  for (int const id : ev.live_items()) {
    ItemKey const key = ev.index().item_key(id);
    for (std::size_t r = 0; r < reps.size(); ++r) {
      if (ev.index().item_key(reps[r]).tile == key.tile || !symmetric) {
        if (!symmetric && reps[r] != id) continue;
        rep_of[id] = static_cast<int>(r);
        break;
      }
    }
  }
  std::vector<std::size_t> digit(reps.size(), 0);
  Cycles best = cutoff > 0 ? cutoff : 0;
  bool have = false;
  for (;;) {
    for (int const id : ev.live_items()) {
      auto const r = static_cast<std::size_t>(rep_of[id]);
      plan.q_order[id] = choices[r][digit[r]];
    }
    Cycles const makespan = ev.evaluate(plan);
    ++result.nodes;
    if ((!have && cutoff <= 0) || makespan < best) {
      best = makespan;
      have = true;
      result.plan = plan;
      result.makespan = makespan;
    }
    if (have && best <= lower) break;  // bound met: nothing can be better
    std::size_t d = 0;
    while (d < digit.size() && ++digit[d] == choices[d].size()) digit[d++] = 0;
    if (d == digit.size()) break;
  }
  result.complete = true;
  return result;
}

}  // namespace dash::sim
