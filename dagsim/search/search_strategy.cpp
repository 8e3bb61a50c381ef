#include "dagsim/search/search_strategy.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "dagsim/core/error.h"

namespace dash::sim {

std::vector<int> make_q_order(std::vector<int> const& visible, QOrderKind kind, int rotation) {
  int const n = static_cast<int>(visible.size());
  std::vector<int> order;
  order.reserve(visible.size());
  if (n == 0) return order;
  int const rot = ((rotation % n) + n) % n;
  switch (kind) {
    case QOrderKind::kAscending:
      for (int t = 0; t < n; ++t) order.push_back(visible[(rot + t) % n]);
      break;
    case QOrderKind::kDescending:
      for (int t = 0; t < n; ++t) order.push_back(visible[((rot - t) % n + n) % n]);
      break;
    case QOrderKind::kTwoPhase:
      for (int t = rot; t < n; ++t) order.push_back(visible[t]);
      for (int t = rot - 1; t >= 0; --t) order.push_back(visible[t]);
      break;
  }
  return order;
}

namespace {
// How many of the latest CTAs the secondary objective sums: enough to reward shortening the
// runners-up of the critical CTA, few enough that it stays about the tail.
constexpr std::size_t kTailCtas = 8;
}  // namespace

LocalSearch::LocalSearch(PlanEvaluator const& evaluator, Plan start, Measurement start_cost,
                         std::uint64_t seed)
    : evaluator_(evaluator), rng_(seed) {
  reset(std::move(start), std::move(start_cost));
}

void LocalSearch::reset(Plan plan, Measurement cost) {
  plan_ = std::move(plan);
  cost_ = std::move(cost);
  cost_tail_ = tail_key(cost_);
  undo_ = Undo{};
  by_finish_.resize(plan_.ctas.size());
  std::iota(by_finish_.begin(), by_finish_.end(), 0);
  if (cost_.cta_finish.size() == plan_.ctas.size()) {
    std::stable_sort(by_finish_.begin(), by_finish_.end(),
                     [&](int a, int b) { return cost_.cta_finish[a] > cost_.cta_finish[b]; });
  }
}

std::int64_t LocalSearch::tail_key(Measurement const& m) const {
  if (m.cta_finish.empty()) return 0;
  std::vector<Cycles> finish = m.cta_finish;
  std::size_t const top = std::min(kTailCtas, finish.size());
  std::partial_sort(finish.begin(), finish.begin() + static_cast<std::ptrdiff_t>(top), finish.end(),
                    std::greater<>());
  return std::accumulate(finish.begin(), finish.begin() + static_cast<std::ptrdiff_t>(top), Cycles{0});
}

int LocalSearch::pick_late() {
  int const n = static_cast<int>(by_finish_.size());
  // Mostly the critical CTA, sometimes one of the next few, rarely any.
  if (rng_.chance(1, 8)) return rng_.uniform(0, n - 1);
  return by_finish_[rng_.uniform(0, std::min(n, 4) - 1)];
}

int LocalSearch::pick_early() {
  int const n = static_cast<int>(by_finish_.size());
  if (rng_.chance(1, 8)) return rng_.uniform(0, n - 1);
  return by_finish_[n - 1 - rng_.uniform(0, std::min(n, 4) - 1)];
}

bool LocalSearch::propose() {
  int const n = static_cast<int>(plan_.ctas.size());
  if (n == 0) return false;
  bool const dynamic = plan_.launch == LaunchModel::kDynamic;
  int const kind = rng_.uniform(0, 99);
  undo_ = Undo{};
  if (!dynamic && n > 1 && kind < 35) {
    int const from = pick_late();
    int const to = pick_early();
    auto& src = plan_.ctas[from];
    if (from == to || src.size() < 2) return false;
    int const pos = rng_.uniform(0, static_cast<int>(src.size()) - 1);
    auto& dst = plan_.ctas[to];
    int const at = rng_.uniform(0, static_cast<int>(dst.size()));
    int const item = src[pos];
    src.erase(src.begin() + pos);
    dst.insert(dst.begin() + at, item);
    undo_ = Undo{Move::kRelocate, from, pos, to, at, item, {}};
    return true;
  }
  if (n > 1 && kind < 60) {
    int a = 0, pa = 0, b = 0, pb = 0;
    if (dynamic) {
      // Launch order: move a late-finishing CTA's item earlier by swapping with another.
      a = pick_late();
      b = rng_.uniform(0, n - 1);
    } else {
      a = pick_late();
      b = pick_early();
      pa = rng_.uniform(0, static_cast<int>(plan_.ctas[a].size()) - 1);
      pb = rng_.uniform(0, static_cast<int>(plan_.ctas[b].size()) - 1);
    }
    if (a == b) return false;
    std::swap(plan_.ctas[a][pa], plan_.ctas[b][pb]);
    undo_ = Undo{Move::kSwap, a, pa, b, pb, 0, {}};
    return true;
  }
  if (!dynamic && kind < 75) {
    int const c = pick_late();
    auto& list = plan_.ctas[c];
    if (list.size() < 2) return false;
    int const pa = rng_.uniform(0, static_cast<int>(list.size()) - 1);
    int const pb = rng_.uniform(0, static_cast<int>(list.size()) - 1);
    if (pa == pb) return false;
    std::swap(list[pa], list[pb]);
    undo_ = Undo{Move::kSwapInCta, c, pa, c, pb, 0, {}};
    return true;
  }
  int const c = rng_.chance(3, 4) ? pick_late() : rng_.uniform(0, n - 1);
  auto const& list = plan_.ctas[c];
  int const item = list[rng_.uniform(0, static_cast<int>(list.size()) - 1)];
  auto const& visible = evaluator_.visible(item);
  int const rotation = rng_.uniform(0, static_cast<int>(visible.size()) - 1);
  auto const q_kind = static_cast<QOrderKind>(rng_.uniform(0, 2));
  std::vector<int> order = make_q_order(visible, q_kind, rotation);
  if (order == plan_.q_order[item]) return false;
  undo_ = Undo{Move::kQOrder, c, 0, c, 0, item, std::move(plan_.q_order[item])};
  plan_.q_order[item] = std::move(order);
  return true;
}

void LocalSearch::undo() {
  switch (undo_.move) {
    case Move::kNone: break;
    case Move::kRelocate: {
      auto& dst = plan_.ctas[undo_.cta_b];
      dst.erase(dst.begin() + undo_.pos_b);
      auto& src = plan_.ctas[undo_.cta_a];
      src.insert(src.begin() + undo_.pos_a, undo_.item);
      break;
    }
    case Move::kSwap:
      std::swap(plan_.ctas[undo_.cta_a][undo_.pos_a], plan_.ctas[undo_.cta_b][undo_.pos_b]);
      break;
    case Move::kSwapInCta:
      std::swap(plan_.ctas[undo_.cta_a][undo_.pos_a], plan_.ctas[undo_.cta_a][undo_.pos_b]);
      break;
    case Move::kQOrder: plan_.q_order[undo_.item] = std::move(undo_.old_order); break;
  }
  undo_ = Undo{};
}

Plan const* LocalSearch::next() {
  // A few draws can be no-ops (same CTA, single item); retry, but never spin forever.
  for (int attempt = 0; attempt < 64; ++attempt) {
    if (propose()) {
      ++stats_.proposed;
      return &plan_;
    }
  }
  return nullptr;
}

void LocalSearch::report(Measurement const& measured) {
  DASH_ASSERT(undo_.move != Move::kNone);
  std::int64_t const tail = tail_key(measured);
  bool const better = measured.makespan < cost_.makespan ||
                      (measured.makespan == cost_.makespan && tail < cost_tail_);
  bool const same = measured.makespan == cost_.makespan && tail == cost_tail_;
  if (better || same) {
    ++(better ? stats_.improved : stats_.equal);
    undo_ = Undo{};
    Plan kept = std::move(plan_);
    reset(std::move(kept), measured);
    return;
  }
  ++stats_.worse;
  undo();
}

}  // namespace dash::sim
