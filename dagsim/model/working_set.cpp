#include "dagsim/model/working_set.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <utility>
#include <vector>

#include "dagsim/core/error.h"

namespace dash::sim {

namespace {

struct Span {
  std::int64_t begin;
  std::int64_t end;  // exclusive
  int pair;
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
  return values.empty() ? T{} : values.back().first;
}

}  // namespace

WorkingSet working_set(Problem const& problem, Schedule const& schedule, int slots, int elem_bytes) {
  if (slots < 1) user_error("working set: resident CTAs must be >= 1, got {}", slots);
  if (elem_bytes < 1) user_error("working set: element bytes must be >= 1, got {}", elem_bytes);
  auto const pair_of = [&](WorkItem const& item) { return item.batch * problem.q_heads + item.head; };
  std::vector<Span> spans;
  if (schedule.launch == LaunchModel::kPersistent) {
    for (Cta const& cta : schedule.ctas) {
      std::int64_t clock = 0;
      for (WorkItem const& item : cta.items) {
        auto const steps = static_cast<std::int64_t>(item.q_order.size());
        if (steps > 0) spans.push_back({clock, clock + steps, pair_of(item)});
        clock += steps;
      }
    }
  } else {
    // List scheduling in CTA order on `slots` resident CTAs: each starts where one ends first.
    std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> free_at;
    for (int s = 0; s < slots; ++s) free_at.push(0);
    for (Cta const& cta : schedule.ctas) {
      std::int64_t clock = free_at.top();
      free_at.pop();
      for (WorkItem const& item : cta.items) {
        auto const steps = static_cast<std::int64_t>(item.q_order.size());
        if (steps > 0) spans.push_back({clock, clock + steps, pair_of(item)});
        clock += steps;
      }
      free_at.push(clock);
    }
  }
  WorkingSet ws;
  if (spans.empty()) return ws;
  // Sweep the spans' ends and starts in clock order (ends first at equal clocks): a pair counts
  // while any of its items is in progress.
  std::vector<std::pair<std::int64_t, int>> events;  // (clock, +1 start / -1 end), pair apart
  std::vector<int> event_pair;
  events.reserve(2 * spans.size());
  for (Span const& s : spans) {
    events.push_back({s.begin, +1});
    event_pair.push_back(s.pair);
    events.push_back({s.end, -1});
    event_pair.push_back(s.pair);
  }
  std::vector<std::size_t> order(events.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return events[a].first != events[b].first ? events[a].first < events[b].first
                                               : events[a].second < events[b].second;
  });
  auto const bytes_of_pair = [&](int pair) {
    int const b = pair / problem.q_heads;
    return std::int64_t{problem.len_q(b)} * problem.head_dim * (2 * std::int64_t{elem_bytes} + 4);
  };
  std::map<int, int> active;  // pair -> items in progress
  int pairs = 0;
  std::int64_t bytes = 0;
  std::vector<std::pair<int, std::int64_t>> pair_counts;
  std::vector<std::pair<std::int64_t, std::int64_t>> byte_counts;
  std::int64_t clock = events[order.front()].first;
  for (std::size_t k = 0; k < order.size();) {
    std::int64_t const now = events[order[k]].first;
    if (now > clock) {
      pair_counts.push_back({pairs, now - clock});
      byte_counts.push_back({bytes, now - clock});
      clock = now;
    }
    for (; k < order.size() && events[order[k]].first == now; ++k) {
      int const pair = event_pair[order[k]];
      int& n = active[pair];
      if (events[order[k]].second > 0) {
        if (n++ == 0) {
          ++pairs;
          bytes += bytes_of_pair(pair);
        }
      } else if (--n == 0) {
        --pairs;
        bytes -= bytes_of_pair(pair);
      }
    }
    ws.max_pairs = std::max(ws.max_pairs, pairs);
    ws.max_bytes = std::max(ws.max_bytes, bytes);
  }
  ws.clocks = clock;
  std::int64_t total = 0;
  for (auto const& pc : pair_counts) total += pc.second;
  ws.median_pairs = weighted_median(pair_counts, total);
  ws.median_bytes = weighted_median(byte_counts, total);
  return ws;
}

}  // namespace dash::sim
