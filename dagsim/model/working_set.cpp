#include "dagsim/model/working_set.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "dagsim/core/error.h"

namespace dash::sim {

namespace {

/// A head's item starting (+1) or ending (-1) at a clock.
struct Event {
  std::int64_t clock;
  int delta;
  int head;  ///< batch * q_heads + q head
};

/// The value below which half of the clocks lie (the lower one of two middles).
template <typename T>
T weighted_median(std::vector<std::pair<T, std::int64_t>> values, std::int64_t total) {
  std::sort(values.begin(), values.end());
  std::int64_t seen = 0;
  for (auto const& [value, weight] : values) {
    seen += weight;
    if (2 * seen >= total) return value;
  }
  return values.back().first;
}

}  // namespace

WorkingSet working_set(Problem const& problem, Schedule const& schedule, int slots, int elem_bytes) {
  if (slots < 1) user_error("working set: resident CTAs must be >= 1, got {}", slots);
  if (elem_bytes < 1) user_error("working set: element bytes must be >= 1, got {}", elem_bytes);
  std::vector<Event> events;
  // One CTA's items one after another from `clock`; returns where its last one ends.
  auto const place = [&](Cta const& cta, std::int64_t clock) {
    for (WorkItem const& item : cta.items) {
      auto const steps = static_cast<std::int64_t>(item.q_order.size());
      int const head = item.batch * problem.q_heads + item.head;
      if (steps > 0) {
        events.push_back({clock, +1, head});
        events.push_back({clock + steps, -1, head});
      }
      clock += steps;
    }
    return clock;
  };
  if (schedule.launch == LaunchModel::kPersistent) {
    for (Cta const& cta : schedule.ctas) place(cta, 0);
  } else {
    // List scheduling in CTA order on `slots` resident CTAs: each starts where one ends first.
    std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> free_at;
    for (int s = 0; s < slots; ++s) free_at.push(0);
    for (Cta const& cta : schedule.ctas) {
      std::int64_t const start = free_at.top();
      free_at.pop();
      free_at.push(place(cta, start));
    }
  }
  WorkingSet ws;
  if (events.empty()) return ws;
  // Sweep in clock order, ends before starts at equal clocks: a head counts while any of its items
  // is in progress.
  std::sort(events.begin(), events.end(), [](Event const& a, Event const& b) {
    return a.clock != b.clock ? a.clock < b.clock : a.delta < b.delta;
  });
  auto const bytes_of_head = [&](int head) {
    int const b = head / problem.q_heads;
    return std::int64_t{problem.len_q(b)} * problem.head_dim * (2 * std::int64_t{elem_bytes} + 4);
  };
  std::vector<int> active(static_cast<std::size_t>(problem.batch) * problem.q_heads, 0);  // items in progress
  int heads = 0;
  std::int64_t bytes = 0;
  std::vector<std::pair<int, std::int64_t>> head_counts;  // (value, clocks it held)
  std::vector<std::pair<std::int64_t, std::int64_t>> byte_counts;
  std::int64_t clock = events.front().clock;
  for (Event const& e : events) {
    if (e.clock > clock) {
      head_counts.push_back({heads, e.clock - clock});
      byte_counts.push_back({bytes, e.clock - clock});
      clock = e.clock;
    }
    int& n = active[static_cast<std::size_t>(e.head)];
    bool const changes = e.delta > 0 ? n++ == 0 : --n == 0;
    if (changes) {
      heads += e.delta;
      bytes += e.delta * bytes_of_head(e.head);
    }
    ws.max_heads = std::max(ws.max_heads, heads);
    ws.max_bytes = std::max(ws.max_bytes, bytes);
  }
  ws.clocks = clock;
  std::int64_t const total = clock - events.front().clock;
  ws.median_heads = weighted_median(head_counts, total);
  ws.median_bytes = weighted_median(byte_counts, total);
  return ws;
}

}  // namespace dash::sim
