#include "dagsim/core/schedule.h"

#include <algorithm>
#include <tuple>

#include "dagsim/core/error.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/tile_index.h"

namespace dash::sim {

std::string to_string(LaunchModel launch) {
  return launch == LaunchModel::kPersistent ? "persistent" : "dynamic";
}

LaunchModel parse_launch(std::string const& text) {
  if (text == "persistent") return LaunchModel::kPersistent;
  if (text == "dynamic") return LaunchModel::kDynamic;
  user_error("unknown launch model '{}': expected persistent or dynamic", text);
}

std::int64_t count_steps(Schedule const& schedule) {
  std::int64_t steps = 0;
  for (auto const& cta : schedule.ctas) {
    for (auto const& item : cta.items) steps += static_cast<std::int64_t>(item.q_order.size());
  }
  return steps;
}

namespace {

void feed(std::uint64_t& hash, std::int64_t value) {
  auto const bits = static_cast<std::uint64_t>(value);
  for (int byte = 0; byte < 8; ++byte) {
    hash ^= (bits >> (8 * byte)) & 0xffU;
    hash *= 0x100000001b3ULL;  // FNV-1a 64 prime
  }
}

void feed_orders(std::uint64_t& hash, std::vector<std::vector<int>> const& orders) {
  feed(hash, static_cast<std::int64_t>(orders.size()));
  for (auto const& order : orders) {
    feed(hash, static_cast<std::int64_t>(order.size()));
    for (int const x : order) feed(hash, x);
  }
}

}  // namespace

std::uint64_t schedule_hash(Schedule const& schedule) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis
  feed(hash, schedule.launch == LaunchModel::kPersistent ? 0 : 1);
  feed(hash, static_cast<std::int64_t>(schedule.ctas.size()));
  for (auto const& cta : schedule.ctas) {
    feed(hash, static_cast<std::int64_t>(cta.items.size()));
    for (auto const& item : cta.items) {
      feed(hash, item.batch);
      feed(hash, item.head);
      feed(hash, item.kv_tile);
      feed(hash, static_cast<std::int64_t>(item.q_order.size()));
      for (int const q : item.q_order) feed(hash, q);
    }
  }
  feed_orders(hash, schedule.dq_order);
  feed_orders(hash, schedule.dkv_order);
  return hash == 0 ? 1 : hash;
}

void assign_lockstep_ranks(Problem const& problem, Schedule& schedule, std::span<std::int64_t const> starts) {
  TileIndex const index(problem);
  // (time, CTA, the CTA's count of contributions so far, contributor) per reduction target;
  // sorted, the contributors are the ranks. The count breaks ties in the CTA's own order: two
  // empty GQA items of one dK/dV tile in a row on a CTA come at one time, and ranking them by
  // head instead could make the CTA wait for its own later item.
  using Visit = std::tuple<std::int64_t, int, std::int64_t, int>;
  std::vector<std::vector<Visit>> dq(static_cast<std::size_t>(index.num_dq_tiles()));
  std::vector<std::vector<Visit>> dkv;
  if (problem.is_gqa()) dkv.resize(static_cast<std::size_t>(index.num_dkv_tiles()));
  for (int c = 0; c < static_cast<int>(schedule.ctas.size()); ++c) {
    std::int64_t time = starts.empty() ? 0 : starts[static_cast<std::size_t>(c)];
    std::int64_t seq = 0;
    for (auto const& item : schedule.ctas[static_cast<std::size_t>(c)].items) {
      for (int const i : item.q_order) {
        dq[index.dq_id(item.batch, item.head, i)].emplace_back(time, c, seq++, item.kv_tile);
        ++time;
      }
      if (problem.is_gqa()) {
        int const kvh = item.head / problem.group_size();
        dkv[index.dkv_id(item.batch, kvh, item.kv_tile)].emplace_back(time, c, seq++, item.head);
      }
    }
  }
  auto ranks_of = [](std::vector<std::vector<Visit>>& visits) {
    std::vector<std::vector<int>> order(visits.size());
    for (std::size_t t = 0; t < visits.size(); ++t) {
      std::sort(visits[t].begin(), visits[t].end());
      order[t].reserve(visits[t].size());
      for (auto const& [time, cta, seq, who] : visits[t]) order[t].push_back(who);
    }
    return order;
  };
  schedule.dq_order = ranks_of(dq);
  schedule.dkv_order = problem.is_gqa() ? ranks_of(dkv) : std::vector<std::vector<int>>{};
}

}  // namespace dash::sim
