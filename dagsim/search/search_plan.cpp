#include "dagsim/search/search_plan.h"

#include <algorithm>
#include <utility>

#include "dagsim/core/error.h"

namespace dash::sim {

PlanEvaluator::PlanEvaluator(Problem const& problem, Machine const& machine, CostModel const& cost)
    : problem_(problem), machine_(machine), cost_(cost), index_(problem) {
  int const items = index_.num_items();
  visible_.resize(items);
  first_q_.assign(items, 0);
  cost_off_.assign(items, 0);
  work_.assign(items, 0);
  item_dq_base_.assign(items, 0);
  item_dkv_.assign(items, 0);
  std::int64_t offset = 0;
  for (int id = 0; id < items; ++id) {
    ItemKey const key = index_.item_key(id);
    int const b = key.batch;
    auto& vis = visible_[id];
    vis = problem.visible_q_tiles(b, key.tile);
    item_dq_base_[id] = index_.dq_id(b, key.head, 0);
    item_dkv_[id] = problem.is_gqa() ? index_.dkv_id(b, key.head / problem.group_size(), key.tile) : 0;
    if (vis.empty()) continue;
    live_.push_back(id);
    first_q_[id] = vis.front();
    cost_off_[id] = offset;
    int const span = vis.back() - vis.front() + 1;
    step_cost_.resize(static_cast<std::size_t>(offset + span), 0);
    Cycles work = cost.item;  // the first step's per-item cost
    for (int const i : vis) {
      Cycles const c = cost.step_cost(problem, b, i, key.tile);
      step_cost_[static_cast<std::size_t>(offset + i - vis.front())] = c;
      work += c + (cost.dq_buffer == 0 ? cost.reduce : 0);
    }
    // GQA: the next item's first step waits for this item's dK/dV epilogue, which follows its
    // last reduction — so that much of the item's time is the SM's too.
    if (problem.is_gqa()) work += (cost.dq_buffer > 0 ? cost.reduce : 0) + cost.reduce_kv;
    work_[id] = work;
    offset += span;
  }
  tile_free_.assign(static_cast<std::size_t>(index_.num_dq_tiles()), 0);
  if (problem.is_gqa()) dkv_free_.assign(static_cast<std::size_t>(index_.num_dkv_tiles()), 0);
}

Cycles PlanEvaluator::step_cost(int item, int q_tile) const {
  return step_cost_[static_cast<std::size_t>(cost_off_[item] + q_tile - first_q_[item])];
}

void PlanEvaluator::check_plan(Plan const& plan) const {
  std::vector<char> seen(static_cast<std::size_t>(num_items()), 0);
  DASH_ASSERT(plan.q_order.size() == static_cast<std::size_t>(num_items()));
  if (plan.launch == LaunchModel::kPersistent) {
    DASH_ASSERT(static_cast<int>(plan.ctas.size()) <= machine_.sms);
  }
  for (auto const& cta : plan.ctas) {
    if (plan.launch == LaunchModel::kDynamic) DASH_ASSERT(cta.size() == 1);
    for (int const id : cta) {
      DASH_ASSERT(id >= 0 && id < num_items() && !seen[id] && !visible_[id].empty());
      seen[id] = 1;
      auto order = plan.q_order[id];
      std::sort(order.begin(), order.end());
      DASH_ASSERT(order == visible_[id]);
    }
  }
  for (int const id : live_) DASH_ASSERT(seen[id]);
}

Cycles PlanEvaluator::evaluate(Plan const& plan) { return run(plan, nullptr, nullptr); }

PlanCost PlanEvaluator::evaluate_detailed(Plan const& plan) {
  PlanCost detail;
  detail.makespan = run(plan, &detail, nullptr);
  return detail;
}

Schedule PlanEvaluator::to_schedule(Plan const& plan, std::string const& strategy) {
  Schedule schedule = placement(plan);
  schedule.strategy = strategy;
  schedule.dq_order.assign(static_cast<std::size_t>(index_.num_dq_tiles()), {});
  if (problem_.is_gqa()) schedule.dkv_order.assign(static_cast<std::size_t>(index_.num_dkv_tiles()), {});
  run(plan, nullptr, &schedule);
  return schedule;
}

Schedule PlanEvaluator::placement(Plan const& plan) const {
  Schedule schedule;
  schedule.launch = plan.launch;
  schedule.ctas.reserve(plan.ctas.size());
  for (auto const& list : plan.ctas) {
    Cta cta;
    for (int const id : list) {
      ItemKey const key = index_.item_key(id);
      cta.items.push_back(WorkItem{key.batch, key.head, key.tile, plan.q_order[id]});
    }
    schedule.ctas.push_back(std::move(cta));
  }
  return schedule;
}

Plan PlanEvaluator::from_schedule(Schedule const& schedule) const {
  Plan plan;
  plan.launch = schedule.launch;
  plan.q_order.assign(static_cast<std::size_t>(num_items()), {});
  for (auto const& cta : schedule.ctas) {
    std::vector<int> list;
    for (auto const& item : cta.items) {
      int const id = index_.item_id(item.batch, item.head, item.kv_tile);
      list.push_back(id);
      plan.q_order[id] = item.q_order;
    }
    if (!list.empty()) plan.ctas.push_back(std::move(list));
  }
  return plan;
}

namespace {

// Per-CTA state of the event run: where its walk is and what its SM and writer warp are doing.
struct Walker {
  int list_pos = 0;       // index of the current item in the CTA's list
  int step = 0;           // index into the current item's Q order
  std::int64_t t = 0;     // steps done by this CTA (ring index)
  Cycles c_finish = 0;    // finish of the CTA's latest compute node
  Cycles writer = 0;      // finish of its latest reduction (the writer warp, or the SM when k = 0)
  Cycles start = 0;       // dynamic: dispatch time
  bool pending_kv = false;  // GQA: the item's dK/dV reduction is the next request
  Cycles kv_finish = 0;   // GQA: finish of the previous item's dK/dV reduction
  std::int64_t ring = 0;  // offset of its R finish ring in the shared ring buffer
  int ring_size = 1;
  Cycles wait = 0;
};

// A binary min-heap of (time, CTA) with replace-top: the CTA just served usually goes straight back
// in with a later time, so one sift-down replaces a pop and a push.
class EventHeap {
 public:
  [[nodiscard]] bool empty() const { return data_.empty(); }
  [[nodiscard]] std::pair<Cycles, int> const& top() const { return data_.front(); }
  void push(Cycles at, int who) {
    data_.emplace_back(at, who);
    std::size_t i = data_.size() - 1;
    while (i > 0) {
      std::size_t const parent = (i - 1) / 2;
      if (!(data_[i] < data_[parent])) break;
      std::swap(data_[i], data_[parent]);
      i = parent;
    }
  }
  void pop() {
    data_.front() = data_.back();
    data_.pop_back();
    if (!data_.empty()) sift_down();
  }
  void replace_top(Cycles at, int who) {
    data_.front() = {at, who};
    sift_down();
  }

 private:
  void sift_down() {
    std::size_t const n = data_.size();
    std::size_t i = 0;
    auto const moving = data_[0];
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && data_[child + 1] < data_[child]) ++child;
      if (!(data_[child] < moving)) break;
      data_[i] = data_[child];
      i = child;
    }
    data_[i] = moving;
  }
  std::vector<std::pair<Cycles, int>> data_;
};

}  // namespace

Cycles PlanEvaluator::run(Plan const& plan, PlanCost* detail, Schedule* ranks) {
  int const ctas = static_cast<int>(plan.ctas.size());
  int const k = cost_.dq_buffer;
  bool const gqa = problem_.is_gqa();
  std::vector<Walker> walkers(static_cast<std::size_t>(ctas));
  std::int64_t ring_total = 0;
  for (int c = 0; c < ctas; ++c) {
    std::int64_t steps = 0;
    for (int const id : plan.ctas[c]) steps += static_cast<std::int64_t>(plan.q_order[id].size());
    auto& w = walkers[c];
    w.ring = ring_total;
    w.ring_size = static_cast<int>(std::min<std::int64_t>(k, steps) + 1);
    ring_total += w.ring_size;
  }
  std::vector<Cycles> ring(static_cast<std::size_t>(ring_total), 0);
  std::fill(tile_free_.begin(), tile_free_.end(), Cycles{0});
  std::fill(dkv_free_.begin(), dkv_free_.end(), Cycles{0});
  if (detail) {
    detail->cta_finish.assign(static_cast<std::size_t>(ctas), 0);
    detail->cta_wait.assign(static_cast<std::size_t>(ctas), 0);
  }

  EventHeap requests;
  EventHeap free_sms;  // dynamic: (time, finished CTA)
  bool served = false;  // the top of `requests` is the CTA just served: replace it, not push
  Cycles makespan = 0;
  int next_launch = 0;

  auto schedule_request = [&](Cycles at, int c) {
    if (served) {
      requests.replace_top(at, c);
      served = false;
    } else {
      requests.push(at, c);
    }
  };
  // Computes the CTA's next ticket request, or retires it.
  auto advance = [&](int c) {
    auto& w = walkers[c];
    auto const& list = plan.ctas[c];
    if (w.pending_kv) {
      schedule_request(std::max(w.c_finish, w.writer), c);
      return;
    }
    if (w.list_pos == static_cast<int>(list.size())) {
      Cycles const finish = std::max(w.c_finish, w.writer);
      makespan = std::max(makespan, finish);
      if (detail) {
        detail->cta_finish[c] = finish;
        detail->cta_wait[c] = w.wait;
      }
      if (plan.launch == LaunchModel::kDynamic) free_sms.push(finish, c);
      if (served) {
        requests.pop();
        served = false;
      }
      return;
    }
    int const id = list[w.list_pos];
    int const q = plan.q_order[id][w.step];
    Cycles ready = std::max(w.c_finish, w.start);
    // The next item's first step waits for the previous item's dK/dV epilogue.
    if (w.step == 0) ready = std::max(ready, w.kv_finish);
    if (k == 0) {
      ready = std::max(ready, w.writer);
    } else if (w.t >= k + 1) {
      ready = std::max(ready, ring[w.ring + (w.t % w.ring_size)]);
    }
    w.wait += ready - std::max(w.c_finish, w.start);
    w.c_finish = ready + step_cost(id, q) + (w.step == 0 ? cost_.item : 0);
    schedule_request(std::max(w.c_finish, w.writer), c);
  };

  auto dispatch = [&](Cycles at) {
    auto& w = walkers[next_launch];
    w.start = at;
    w.c_finish = at;
    w.writer = at;
    w.kv_finish = at;
    advance(next_launch);
    ++next_launch;
  };

  if (plan.launch == LaunchModel::kPersistent) {
    for (int c = 0; c < ctas; ++c) advance(c);
  } else {
    int const first = std::min(ctas, machine_.sms);
    for (int c = 0; c < first; ++c) dispatch(0);
  }

  while (!requests.empty() || !free_sms.empty()) {
    if (!free_sms.empty() && (requests.empty() || free_sms.top().first <= requests.top().first)) {
      Cycles const at = free_sms.top().first;
      free_sms.pop();
      if (next_launch < ctas) dispatch(at);
      continue;
    }
    auto const [at, c] = requests.top();
    served = true;
    auto& w = walkers[c];
    int const id = plan.ctas[c][w.list_pos];
    if (w.pending_kv) {
      // The item's dK/dV partial, ordered over the q heads of its group.
      Cycles& free_at = dkv_free_[static_cast<std::size_t>(item_dkv_[id])];
      Cycles const start = std::max(at, free_at);
      w.writer = start + cost_.reduce_kv;
      w.kv_finish = w.writer;
      free_at = w.writer + cost_.latency;
      if (ranks) ranks->dkv_order[item_dkv_[id]].push_back(index_.item_key(id).head);
      w.pending_kv = false;
      ++w.list_pos;
      w.step = 0;
      advance(c);
      continue;
    }
    int const q = plan.q_order[id][w.step];
    int const tile = item_dq_base_[id] + q;
    Cycles& free_at = tile_free_[static_cast<std::size_t>(tile)];
    Cycles const start = std::max(at, free_at);
    w.writer = start + cost_.reduce;
    free_at = w.writer + cost_.latency;
    if (k > 0) ring[w.ring + (w.t % w.ring_size)] = w.writer;
    if (ranks) ranks->dq_order[tile].push_back(index_.item_key(id).tile);
    ++w.t;
    ++w.step;
    if (w.step == static_cast<int>(plan.q_order[id].size())) {
      if (gqa) {
        w.pending_kv = true;
      } else {
        ++w.list_pos;
        w.step = 0;
      }
    }
    advance(c);
  }
  return makespan;
}

}  // namespace dash::sim
