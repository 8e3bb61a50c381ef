#include "dagsim/core/strategies.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dagsim/core/error.h"
#include "dagsim/core/tile_index.h"

// Constructions, degradations and closed forms are documented in docs/strategies.md.
//
// Deadlock freedom, the one property every strategy must keep, rests on two arguments:
// - ranks that follow the order in which items are enumerated, with every CTA running its items in
//   that order (fa3, fa3-spt): every edge of the DAG goes forward in the enumeration, and dynamic
//   launch follows the enumeration, so no CTA ever waits on one launched after it;
// - ranks by lock-step order: a virtual timeline where every step takes one unit and nothing waits
//   (descending, shift, symmetric-shift). Persistent: all CTAs start at 0 (assign_lockstep_ranks).
//   Dynamic: CTAs start when the virtual dispatcher gives them an SM (dispatch_starts). Every edge
//   goes forward in (virtual time, launch slot), so the graph is acyclic. And residency cannot
//   block: take the unfinished node v with the least (time, slot). Everything below it is done,
//   which includes every CTA that had virtually finished when v's CTA k was virtually dispatched at
//   s_k <= time(v) — at least k - sms + 1 of CTAs 0..k-1 — so k is resident and v can run. Ranks
//   pointing backwards in launch order are therefore fine; only a timeline that ignored the
//   dispatcher (every CTA starting at 0 while few SMs exist) would deadlock.

namespace dash::sim {
namespace {

/// The items that must stay on one CTA (one item, or a symmetric-shift pair), in enumeration order.
using Unit = std::vector<WorkItem>;

/// visible[b][j]: the Q tiles that see KV tile j of batch b, ascending. Masks do not depend on the
/// head, so this is computed once per batch.
using VisibleTiles = std::vector<std::vector<std::vector<int>>>;

VisibleTiles visible_tiles(Problem const& problem) {
  VisibleTiles visible(static_cast<std::size_t>(problem.batch));
  for (int b = 0; b < problem.batch; ++b) {
    int const kv_tiles = problem.kv_tiles(b);
    auto& per_kv = visible[static_cast<std::size_t>(b)];
    per_kv.resize(static_cast<std::size_t>(kv_tiles));
    for (int j = 0; j < kv_tiles; ++j) per_kv[static_cast<std::size_t>(j)] = problem.visible_q_tiles(b, j);
  }
  return visible;
}

std::vector<int> const& visible_of(VisibleTiles const& visible, int b, int j) {
  return visible[static_cast<std::size_t>(b)][static_cast<std::size_t>(j)];
}

/// An item with no visible Q tile does no work; it is dropped, except under GQA where its (empty)
/// dK/dV contribution keeps its place in the group's fixed order.
bool keep_item(Problem const& problem, WorkItem const& item) {
  return problem.is_gqa() || !item.q_order.empty();
}

/// Rotates `tiles` so that it starts at the first tile >= `first` (or at its front if none is).
std::vector<int> rotated_from(std::vector<int> const& tiles, int first) {
  auto const start = std::lower_bound(tiles.begin(), tiles.end(), first);
  std::vector<int> order(start, tiles.end());
  order.insert(order.end(), tiles.begin(), start);
  return order;
}

/// Shift's walk for KV tile j of n over M Q tiles: start at floor(j * M / n), so the n start rows
/// are spread over the M tiles (j itself when n == M), then wrap around the visible tiles.
std::vector<int> shift_order(std::vector<int> const& visible, int j, int kv_tiles, int q_tiles) {
  auto const first = static_cast<int>(std::int64_t{j} * q_tiles / kv_tiles);
  return rotated_from(visible, first);
}

std::vector<int> descending_order(std::vector<int> const& visible) {
  return {visible.rbegin(), visible.rend()};
}

// ---- placement -------------------------------------------------------------------------------

std::int64_t unit_steps(Unit const& unit) {
  std::int64_t steps = 0;
  for (auto const& item : unit) steps += static_cast<std::int64_t>(item.q_order.size());
  return steps;
}

/// Dynamic launch: every item is its own CTA, launched in enumeration order.
std::vector<Cta> launch_in_order(std::vector<Unit> const& units) {
  std::vector<Cta> ctas;
  for (auto const& unit : units) {
    for (auto const& item : unit) ctas.push_back(Cta{{item}});
  }
  return ctas;
}

/// Persistent: grid = min(sms, units); CTA c runs units c, c + G, c + 2G, ...
std::vector<Cta> place_round_robin(std::vector<Unit> const& units, int sms) {
  // Never empty: the last query row always sees the last key column, whatever the mask.
  DASH_ASSERT(!units.empty());
  std::size_t const grid = std::min(units.size(), static_cast<std::size_t>(sms));
  std::vector<Cta> ctas(grid);
  for (std::size_t u = 0; u < units.size(); ++u) {
    auto& items = ctas[u % grid].items;
    items.insert(items.end(), units[u].begin(), units[u].end());
  }
  return ctas;
}

/// Persistent: each unit, in enumeration order, goes to the CTA with the fewest steps so far (ties:
/// lowest index) — the assignment a dynamic dispatcher makes when nothing waits.
std::vector<Cta> place_list_scheduled(std::vector<Unit> const& units, int sms) {
  DASH_ASSERT(!units.empty());
  std::size_t const grid = std::min(units.size(), static_cast<std::size_t>(sms));
  std::vector<Cta> ctas(grid);
  using Slot = std::pair<std::int64_t, std::size_t>;  // (steps so far, CTA)
  std::priority_queue<Slot, std::vector<Slot>, std::greater<>> slots;
  for (std::size_t c = 0; c < grid; ++c) slots.emplace(0, c);
  for (auto const& unit : units) {
    auto [load, c] = slots.top();
    slots.pop();
    ctas[c].items.insert(ctas[c].items.end(), unit.begin(), unit.end());
    slots.emplace(load + unit_steps(unit), c);
  }
  return ctas;
}

// ---- ranks -----------------------------------------------------------------------------------

/// Ranks in enumeration order: per dQ tile the KV tiles in the order their items were enumerated,
/// per dK/dV tile the q heads likewise.
void assign_enumeration_ranks(Problem const& problem, std::vector<Unit> const& units,
                              Schedule& schedule) {
  TileIndex const index(problem);
  schedule.dq_order.assign(static_cast<std::size_t>(index.num_dq_tiles()), {});
  schedule.dkv_order.clear();
  if (problem.is_gqa()) schedule.dkv_order.resize(static_cast<std::size_t>(index.num_dkv_tiles()));
  for (auto const& unit : units) {
    for (auto const& item : unit) {
      for (int const i : item.q_order) {
        schedule.dq_order[index.dq_id(item.batch, item.head, i)].push_back(item.kv_tile);
      }
      if (problem.is_gqa()) {
        int const kvh = item.head / problem.group_size();
        schedule.dkv_order[index.dkv_id(item.batch, kvh, item.kv_tile)].push_back(item.head);
      }
    }
  }
}

/// Start step of each CTA when CTAs are dispatched in launch order to the first free of `sms` SMs
/// and every step takes one unit of time (nothing waits).
std::vector<std::int64_t> dispatch_starts(Schedule const& schedule, int sms) {
  using Slot = std::pair<std::int64_t, int>;  // (free at, SM)
  std::priority_queue<Slot, std::vector<Slot>, std::greater<>> free_sms;
  for (int s = 0; s < sms; ++s) free_sms.emplace(0, s);
  std::vector<std::int64_t> starts;
  starts.reserve(schedule.ctas.size());
  for (auto const& cta : schedule.ctas) {
    auto [at, sm] = free_sms.top();
    free_sms.pop();
    starts.push_back(at);
    std::int64_t steps = 0;
    for (auto const& item : cta.items) steps += static_cast<std::int64_t>(item.q_order.size());
    free_sms.emplace(at + steps, sm);
  }
  return starts;
}

/// Ranks by lock-step order under the schedule's launch model.
void assign_lockstep_ranks_for(Problem const& problem, Machine const& machine, Schedule& schedule) {
  if (schedule.launch == LaunchModel::kPersistent) {
    assign_lockstep_ranks(problem, schedule);
  } else {
    // Dynamic launch: order in the dispatch timeline of dispatch_starts, ties by launch slot.
    // Safe with any SM count (see the comment at the top of this file).
    assign_lockstep_ranks(problem, schedule, dispatch_starts(schedule, machine.sms));
  }
}

// ---- item enumerations -----------------------------------------------------------------------

/// One unit per kept item (b, h, j), j fastest, with the Q order `order_of(visible, b, j)`.
template <typename OrderOf>
std::vector<Unit> single_item_units(Problem const& problem, VisibleTiles const& visible,
                                    OrderOf order_of) {
  std::vector<Unit> units;
  for (int b = 0; b < problem.batch; ++b) {
    for (int h = 0; h < problem.q_heads; ++h) {
      for (int j = 0; j < problem.kv_tiles(b); ++j) {
        WorkItem item{b, h, j, order_of(visible_of(visible, b, j), b, j)};
        if (keep_item(problem, item)) units.push_back(Unit{std::move(item)});
      }
    }
  }
  return units;
}

std::vector<Unit> fa3_units(Problem const& problem, VisibleTiles const& visible) {
  return single_item_units(problem, visible,
                           [](std::vector<int> const& tiles, int, int) { return tiles; });
}

/// Per (b, h): the items with the fewest visible Q tiles first, ties by KV tile descending (so a
/// causal mask gives exactly KV descending).
std::vector<Unit> fa3_spt_units(Problem const& problem, VisibleTiles const& visible) {
  std::vector<Unit> units;
  for (int b = 0; b < problem.batch; ++b) {
    std::vector<int> kv_order(static_cast<std::size_t>(problem.kv_tiles(b)));
    for (int j = 0; j < problem.kv_tiles(b); ++j) kv_order[static_cast<std::size_t>(j)] = j;
    std::stable_sort(kv_order.begin(), kv_order.end(), [&](int x, int y) {
      auto const nx = visible_of(visible, b, x).size();
      auto const ny = visible_of(visible, b, y).size();
      return nx != ny ? nx < ny : x > y;
    });
    for (int h = 0; h < problem.q_heads; ++h) {
      for (int const j : kv_order) {
        WorkItem item{b, h, j, visible_of(visible, b, j)};
        if (keep_item(problem, item)) units.push_back(Unit{std::move(item)});
      }
    }
  }
  return units;
}

std::vector<Unit> descending_units(Problem const& problem, VisibleTiles const& visible) {
  return single_item_units(problem, visible, [](std::vector<int> const& tiles, int, int) {
    return descending_order(tiles);
  });
}

/// Shift. Where a batch has more KV tiles than Q tiles (n > M: short queries on long keys) the M
/// rows cannot keep a whole head's items apart: at any step about n / M of them would add into
/// each row. There each item starts at row j mod M, and the heads are interleaved in groups of
/// `group`, enough that at most M / 2 items of a head run at once on `sms` SMs: a head's running
/// items then touch distinct rows, with room to drift. Items are enumerated group by group, KV
/// tile by KV tile, head fastest (under GQA each head of a group from its own KV offset).
std::vector<Unit> shift_units(Problem const& problem, VisibleTiles const& visible, int sms) {
  std::vector<Unit> units;
  auto add = [&](int b, int h, int j, std::vector<int> order) {
    WorkItem item{b, h, j, std::move(order)};
    if (keep_item(problem, item)) units.push_back(Unit{std::move(item)});
  };
  for (int b = 0; b < problem.batch; ++b) {
    int const n = problem.kv_tiles(b);
    int const m = problem.q_tiles(b);
    if (n <= m) {
      for (int h = 0; h < problem.q_heads; ++h) {
        for (int j = 0; j < n; ++j) add(b, h, j, shift_order(visible_of(visible, b, j), j, n, m));
      }
      continue;
    }
    int const per_head = std::max(1, m / 2);
    int const group = std::clamp((sms + per_head - 1) / per_head, 1, problem.q_heads);
    // Under GQA the q heads of one KV head add into the same dK/dV tiles in a fixed order, so the
    // heads running together walk the KV tiles from different offsets (the k-th head of a group
    // of g from k n / g): no two of them reach the same KV tile at once.
    bool const gqa = problem.is_gqa();
    for (int h0 = 0; h0 < problem.q_heads; h0 += group) {
      int const heads = std::min(problem.q_heads, h0 + group) - h0;
      for (int u = 0; u < n; ++u) {
        for (int k = 0; k < heads; ++k) {
          int const j = gqa ? static_cast<int>((u + std::int64_t{k} * n / heads) % n) : u;
          add(b, h0 + k, j, rotated_from(visible_of(visible, b, j), j % m));
        }
      }
    }
  }
  return units;
}

/// The exact construction holds for a causal batch with seqlen_q == seqlen_k, tile_n a multiple
/// k of tile_m, k Q tiles per KV tile (q_tiles == k * kv_tiles) and an even number of KV tiles:
/// then KV tile j sees exactly Q tiles k j .. k n - 1.
bool symmetric_premise(Problem const& problem, int b) {
  if (problem.mask.kind != MaskKind::kCausal || problem.len_q(b) != problem.len_k(b) ||
      problem.tile_n % problem.tile_m != 0) {
    return false;
  }
  int const k = problem.tile_n / problem.tile_m;
  return problem.kv_tiles(b) % 2 == 0 && problem.q_tiles(b) == k * problem.kv_tiles(b);
}

/// Symmetric shift: per (b, h), pairs (p, n-1-p) on one CTA. With the premise (k Q tiles per KV
/// tile, h = n/2 pairs, Q tiles 0 .. k n - 1), pair p walks
///   the dense rectangle, Q tiles k h .. k n - 1 of KV tile p, rotated: k h + (p + t) mod (k h);
///   the rest of KV tile p upwards: Q tiles k p .. k h - 1;
///   KV tile n-1-p downwards: Q tiles k n - 1 .. k (n-1-p).
/// k (n + 1) steps per pair. At step t the h pairs of a head touch h distinct Q tiles: in the
/// rectangle since h <= k h; after it, pair p's rows are k p + t' (below k h) and then
/// k n - 1 + k h - k p - t' (at least k h), each distinct across p. So nothing waits in lock step.
/// Without the premise, the same pairing with each item's Q tiles rotated as in shift (full mask)
/// or descending (other masks); an odd n leaves the middle KV tile alone.
std::vector<Unit> symmetric_shift_units(Problem const& problem, VisibleTiles const& visible) {
  std::vector<Unit> units;
  auto add_unit = [&](Unit unit) {
    std::erase_if(unit, [&](WorkItem const& item) { return !keep_item(problem, item); });
    if (!unit.empty()) units.push_back(std::move(unit));
  };
  for (int b = 0; b < problem.batch; ++b) {
    int const n = problem.kv_tiles(b);
    int const half = n / 2;
    bool const exact = symmetric_premise(problem, b);
    int const k = exact ? problem.tile_n / problem.tile_m : 1;
    int const dense = k * half;  // the first Q tile of the dense rectangle, and its height
    auto fallback_order = [&](int j) {
      auto const& tiles = visible_of(visible, b, j);
      return problem.mask.kind == MaskKind::kFull ? shift_order(tiles, j, n, problem.q_tiles(b))
                                                  : descending_order(tiles);
    };
    for (int h = 0; h < problem.q_heads; ++h) {
      for (int p = 0; p < half; ++p) {
        int const a = p;
        int const z = n - 1 - p;
        if (!exact) {
          add_unit(Unit{WorkItem{b, h, a, fallback_order(a)}, WorkItem{b, h, z, fallback_order(z)}});
          continue;
        }
        std::vector<int> first;
        first.reserve(static_cast<std::size_t>(k * (n - a)));
        for (int t = 0; t < dense; ++t) first.push_back(dense + (p + t) % dense);
        for (int i = k * p; i < dense; ++i) first.push_back(i);
        std::vector<int> second;
        second.reserve(static_cast<std::size_t>(k * (p + 1)));
        for (int i = k * n - 1; i >= k * z; --i) second.push_back(i);
        // The construction must cover exactly what the mask leaves visible.
        DASH_ASSERT(std::is_permutation(first.begin(), first.end(),
                                        visible_of(visible, b, a).begin(),
                                        visible_of(visible, b, a).end()));
        DASH_ASSERT(std::is_permutation(second.begin(), second.end(),
                                        visible_of(visible, b, z).begin(),
                                        visible_of(visible, b, z).end()));
        add_unit(Unit{WorkItem{b, h, a, std::move(first)}, WorkItem{b, h, z, std::move(second)}});
      }
      if (n % 2 == 1) add_unit(Unit{WorkItem{b, h, half, fallback_order(half)}});
    }
  }
  return units;
}

void check_machine(Machine const& machine) {
  if (machine.sms < 1 || machine.sms > 4096) {
    user_error("SM count must be in 1..4096, got {}", machine.sms);
  }
}

}  // namespace

std::vector<std::string> strategy_names() {
  return {"fa3", "fa3-spt", "descending", "shift", "symmetric-shift"};
}

Schedule make_strategy(std::string const& name, Problem const& problem, Machine const& machine,
                       LaunchModel launch) {
  auto const names = strategy_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    user_error("unknown strategy '{}': known are {}", name, fmt::join(names, ", "));
  }
  validate_problem(problem);
  check_machine(machine);
  VisibleTiles const visible = visible_tiles(problem);

  Schedule schedule;
  schedule.strategy = name;
  schedule.launch = launch;
  bool const dynamic = launch == LaunchModel::kDynamic;
  if (name == "fa3" || name == "fa3-spt") {
    std::vector<Unit> const units =
        name == "fa3" ? fa3_units(problem, visible) : fa3_spt_units(problem, visible);
    schedule.ctas = dynamic ? launch_in_order(units) : place_round_robin(units, machine.sms);
    assign_enumeration_ranks(problem, units, schedule);
  } else if (name == "descending") {
    std::vector<Unit> const units = descending_units(problem, visible);
    schedule.ctas = dynamic ? launch_in_order(units) : place_list_scheduled(units, machine.sms);
    assign_lockstep_ranks_for(problem, machine, schedule);
  } else {
    std::vector<Unit> const units = name == "shift" ? shift_units(problem, visible, machine.sms)
                                                    : symmetric_shift_units(problem, visible);
    schedule.ctas = dynamic ? launch_in_order(units) : place_round_robin(units, machine.sms);
    assign_lockstep_ranks_for(problem, machine, schedule);
  }
  return schedule;
}

}  // namespace dash::sim
