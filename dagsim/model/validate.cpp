#include "dagsim/model/validate.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "dagsim/core/error.h"
#include "dagsim/core/tile_index.h"
#include "dagsim/model/dag.h"

namespace dash::sim {
namespace {

/// Per batch, how many Q tiles see each KV tile (columns) and how many KV tiles each Q tile sees
/// (rows). Sized by the problem only, never by the schedule.
struct Visibility {
  std::vector<std::vector<int>> column;  // [b][j]
  std::vector<std::vector<int>> row;     // [b][i]
};

Visibility count_visible(Problem const& problem) {
  Visibility vis;
  vis.column.resize(static_cast<std::size_t>(problem.batch));
  vis.row.resize(static_cast<std::size_t>(problem.batch));
  for (int b = 0; b < problem.batch; ++b) {
    auto& column = vis.column[static_cast<std::size_t>(b)];
    auto& row = vis.row[static_cast<std::size_t>(b)];
    column.assign(static_cast<std::size_t>(problem.kv_tiles(b)), 0);
    row.assign(static_cast<std::size_t>(problem.q_tiles(b)), 0);
    for (int i = 0; i < problem.q_tiles(b); ++i) {
      for (int j = 0; j < problem.kv_tiles(b); ++j) {
        if (problem.is_visible(b, i, j)) {
          ++column[static_cast<std::size_t>(j)];
          ++row[static_cast<std::size_t>(i)];
        }
      }
    }
  }
  return vis;
}

void check_launch(Machine const& machine, Schedule const& schedule, TileIndex const& index) {
  if (machine.sms < 1) user_error("machine '{}' has {} SMs; it needs at least one", machine.name, machine.sms);
  if (schedule.ctas.empty()) user_error("schedule has no CTAs");
  if (schedule.launch == LaunchModel::kPersistent) {
    if (schedule.ctas.size() > static_cast<std::size_t>(machine.sms)) {
      user_error("persistent grid of {} CTAs exceeds the {} SMs of {}: all CTAs must be resident at once",
                 schedule.ctas.size(), machine.sms, machine.name);
    }
    return;
  }
  if (schedule.ctas.size() > static_cast<std::size_t>(index.num_items())) {
    user_error("dynamic launch with {} CTAs, but the problem has only {} work items (one per CTA)",
               schedule.ctas.size(), index.num_items());
  }
  for (std::size_t c = 0; c < schedule.ctas.size(); ++c) {
    if (schedule.ctas[c].items.size() != 1) {
      user_error("dynamic launch: CTA {} has {} work items, expected exactly one", c, schedule.ctas[c].items.size());
    }
  }
}

/// Coverage: every visible step exactly once, nothing masked, ids in range.
void check_items(Problem const& problem, Schedule const& schedule, TileIndex const& index,
                             Visibility const& vis) {
  std::vector<int> item_cta(static_cast<std::size_t>(index.num_items()), -1);
  std::vector<int> stamp(static_cast<std::size_t>(index.max_q_tiles()), -1);  // item id that visited Q tile i
  auto first_missing = [&](int b, int j, int id) {
    for (int i = 0; i < problem.q_tiles(b); ++i) {
      if (problem.is_visible(b, i, j) && stamp[static_cast<std::size_t>(i)] != id) return i;
    }
    return -1;
  };
  for (std::size_t c = 0; c < schedule.ctas.size(); ++c) {
    for (auto const& item : schedule.ctas[c].items) {
      int const b = item.batch;
      int const h = item.head;
      int const j = item.kv_tile;
      if (b < 0 || b >= problem.batch) user_error("CTA {}: work item has batch {} out of range 0..{}", c, b, problem.batch - 1);
      if (h < 0 || h >= problem.q_heads) user_error("CTA {}: work item has head {} out of range 0..{}", c, h, problem.q_heads - 1);
      if (j < 0 || j >= problem.kv_tiles(b)) {
        user_error("CTA {}: work item (b={}, h={}) has KV tile {} out of range 0..{}", c, b, h, j, problem.kv_tiles(b) - 1);
      }
      int const id = index.item_id(b, h, j);
      int& owner = item_cta[static_cast<std::size_t>(id)];
      if (owner >= 0) user_error("work item (b={}, h={}, j={}) appears twice (CTA {} and CTA {})", b, h, j, owner, c);
      owner = static_cast<int>(c);
      for (int const i : item.q_order) {
        if (i < 0 || i >= problem.q_tiles(b)) {
          user_error("CTA {}: work item (b={}, h={}, j={}) visits Q tile {} out of range 0..{}", c, b, h, j, i,
                     problem.q_tiles(b) - 1);
        }
        int& seen = stamp[static_cast<std::size_t>(i)];
        if (seen == id) user_error("step (b={}, h={}, i={}, j={}) appears twice in CTA {}", b, h, i, j, c);
        if (!problem.is_visible(b, i, j)) {
          user_error("step (b={}, h={}, i={}, j={}) in CTA {} is fully masked", b, h, i, j, c);
        }
        seen = id;
      }
      if (item.q_order.size() != static_cast<std::size_t>(vis.column[static_cast<std::size_t>(b)][static_cast<std::size_t>(j)])) {
        user_error("step (b={}, h={}, i={}, j={}) is missing from CTA {}", b, h, first_missing(b, j, id), j, c);
      }
    }
  }
  for (int id = 0; id < index.num_items(); ++id) {
    if (item_cta[static_cast<std::size_t>(id)] >= 0) continue;
    ItemKey const key = index.item_key(id);
    if (problem.is_gqa()) {
      user_error("work item (b={}, h={}, j={}) is missing: under GQA every work item must be scheduled, "
                 "its dK/dV reduction chain passes through it",
                 key.batch, key.head, key.tile);
    }
    if (vis.column[static_cast<std::size_t>(key.batch)][static_cast<std::size_t>(key.tile)] > 0) {
      user_error("step (b={}, h={}, i={}, j={}) is missing: no CTA runs work item (b={}, h={}, j={})", key.batch,
                 key.head, first_missing(key.batch, key.tile, id), key.tile, key.batch, key.head, key.tile);
    }
  }
}

void check_ranks(Problem const& problem, Schedule const& schedule, TileIndex const& index, Visibility const& vis) {
  if (schedule.dq_order.size() != static_cast<std::size_t>(index.num_dq_tiles())) {
    user_error("dq_order has {} entries, expected {} (one per dQ tile)", schedule.dq_order.size(),
               index.num_dq_tiles());
  }
  int max_kv = 0;
  for (int b = 0; b < problem.batch; ++b) max_kv = std::max(max_kv, problem.kv_tiles(b));
  std::vector<int> stamp(static_cast<std::size_t>(max_kv), -1);
  for (int d = 0; d < index.num_dq_tiles(); ++d) {
    ItemKey const key = index.dq_key(d);
    int const b = key.batch;
    int const i = key.tile;
    auto const& order = schedule.dq_order[static_cast<std::size_t>(d)];
    for (int const j : order) {
      if (j < 0 || j >= problem.kv_tiles(b)) {
        user_error("dQ tile (b={}, h={}, i={}): rank order names KV tile {} out of range 0..{}", b, key.head, i, j,
                   problem.kv_tiles(b) - 1);
      }
      int& seen = stamp[static_cast<std::size_t>(j)];
      if (seen == d) user_error("dQ tile (b={}, h={}, i={}): KV tile {} appears twice in its rank order", b, key.head, i, j);
      if (!problem.is_visible(b, i, j)) {
        user_error("dQ tile (b={}, h={}, i={}): KV tile {} in its rank order does not see it (masked)", b, key.head, i, j);
      }
      seen = d;
    }
    if (order.size() != static_cast<std::size_t>(vis.row[static_cast<std::size_t>(b)][static_cast<std::size_t>(i)])) {
      int missing = -1;
      for (int j = 0; j < problem.kv_tiles(b) && missing < 0; ++j) {
        if (problem.is_visible(b, i, j) && stamp[static_cast<std::size_t>(j)] != d) missing = j;
      }
      user_error("dQ tile (b={}, h={}, i={}): rank order misses KV tile {}", b, key.head, i, missing);
    }
  }
  if (!problem.is_gqa()) {
    if (!schedule.dkv_order.empty()) user_error("dkv_order must be empty without GQA (kv-heads == heads)");
    return;
  }
  if (schedule.dkv_order.size() != static_cast<std::size_t>(index.num_dkv_tiles())) {
    user_error("dkv_order has {} entries, expected {} (one per dK/dV tile)", schedule.dkv_order.size(),
               index.num_dkv_tiles());
  }
  int const group = problem.group_size();
  std::vector<int> head_stamp(static_cast<std::size_t>(group), -1);
  for (int t = 0; t < index.num_dkv_tiles(); ++t) {
    ItemKey const key = index.dkv_key(t);
    auto const& order = schedule.dkv_order[static_cast<std::size_t>(t)];
    int const first = key.head * group;
    for (int const h : order) {
      if (h < first || h >= first + group) {
        user_error("dK/dV tile (b={}, kvh={}, j={}): rank order names q head {}, not in its group {}..{}", key.batch,
                   key.head, key.tile, h, first, first + group - 1);
      }
      int& seen = head_stamp[static_cast<std::size_t>(h - first)];
      if (seen == t) {
        user_error("dK/dV tile (b={}, kvh={}, j={}): q head {} appears twice in its rank order", key.batch, key.head,
                   key.tile, h);
      }
      seen = t;
    }
    if (order.size() != static_cast<std::size_t>(group)) {
      int missing = first;
      while (head_stamp[static_cast<std::size_t>(missing - first)] == t) ++missing;
      user_error("dK/dV tile (b={}, kvh={}, j={}): rank order misses q head {}", key.batch, key.head, key.tile, missing);
    }
  }
}

// Deadlock. A unit-cost play of the model's DAG with the residency rule of dynamic launch
// (CTA k may only run once k < sms + number of finished CTAs), by Kahn's algorithm: iterative,
// O(nodes + edges). Cycles cannot come from the writer-order or buffer edges (3, 4 in
// docs/model.md): they join nodes of one CTA and point forward in its program order. Only rank
// edges cross CTAs, and the R/K nodes of one CTA are reachable from each other exactly in writer
// order whatever the buffer depth, so whether a schedule deadlocks does not depend on the cost
// model: the play uses an unbounded buffer (fewest edges) and unit costs.
void check_deadlock(Problem const& problem, Machine const& machine, Schedule const& schedule,
                    TileIndex const& index) {
  CostModel play;
  play.dq_buffer = std::numeric_limits<int>::max();
  play.proportional = false;
  Dag const dag = build_dag(problem, play, schedule);
  auto const n = dag.nodes.size();
  auto const num_ctas = static_cast<int>(schedule.ctas.size());
  std::vector<int> base(static_cast<std::size_t>(num_ctas) + 1, 0);
  for (std::size_t v = 0; v < n; ++v) ++base[static_cast<std::size_t>(dag.nodes[v].cta) + 1];
  for (int c = 0; c < num_ctas; ++c) base[static_cast<std::size_t>(c) + 1] += base[static_cast<std::size_t>(c)];

  std::vector<int> out_begin(n + 1, 0);
  for (auto const& e : dag.in_edges) ++out_begin[static_cast<std::size_t>(e.from) + 1];
  for (std::size_t v = 0; v < n; ++v) out_begin[v + 1] += out_begin[v];
  std::vector<int> out_to(dag.in_edges.size());
  {
    std::vector<int> fill(out_begin.begin(), out_begin.end() - 1);
    for (auto const& e : dag.in_edges) out_to[static_cast<std::size_t>(fill[static_cast<std::size_t>(e.from)]++)] = e.to;
  }
  std::vector<int> indeg(n);
  for (std::size_t v = 0; v < n; ++v) indeg[v] = dag.in_begin[v + 1] - dag.in_begin[v];
  bool const dynamic = schedule.launch == LaunchModel::kDynamic;
  int const resident = dynamic ? std::min(machine.sms, num_ctas) : num_ctas;
  for (int c = resident; c < num_ctas; ++c) {
    if (base[c] < base[c + 1]) ++indeg[static_cast<std::size_t>(base[c])];  // the launch gate
  }
  std::vector<int> queue;
  queue.reserve(n);
  std::vector<char> done(n, 0);
  std::vector<int> remaining(static_cast<std::size_t>(num_ctas));
  for (int c = 0; c < num_ctas; ++c) remaining[static_cast<std::size_t>(c)] = base[c + 1] - base[c];
  int launched = resident;
  auto cta_finished = [&]() {
    // One SM freed: launch the next CTA; one without nodes frees its SM at once.
    while (launched < num_ctas) {
      int const c = launched++;
      if (base[c] < base[c + 1]) {
        if (--indeg[static_cast<std::size_t>(base[c])] == 0) queue.push_back(base[c]);
        return;
      }
    }
  };
  for (std::size_t v = 0; v < n; ++v) {
    if (indeg[v] == 0) queue.push_back(static_cast<int>(v));
  }
  for (int c = 0; c < resident; ++c) {
    if (base[c] == base[c + 1]) cta_finished();
  }
  for (std::size_t head = 0; head < queue.size(); ++head) {
    auto const v = static_cast<std::size_t>(queue[head]);
    done[v] = 1;
    for (int e = out_begin[v]; e < out_begin[v + 1]; ++e) {
      auto const to = static_cast<std::size_t>(out_to[static_cast<std::size_t>(e)]);
      if (--indeg[to] == 0) queue.push_back(static_cast<int>(to));
    }
    if (--remaining[static_cast<std::size_t>(dag.nodes[v].cta)] == 0) cta_finished();
  }
  if (queue.size() == n) return;

  // Stuck. A launched CTA with work left is blocked at its first unfinished node, which can only
  // be a reduction waiting for its predecessor in rank order (its own earlier nodes are done).
  auto blocker = [&](int c) {
    int v = base[c];
    while (done[static_cast<std::size_t>(v)]) ++v;
    for (int e = dag.in_begin[static_cast<std::size_t>(v)]; e < dag.in_begin[static_cast<std::size_t>(v) + 1]; ++e) {
      Edge const& edge = dag.in_edges[static_cast<std::size_t>(e)];
      if (!done[static_cast<std::size_t>(edge.from)]) return std::pair<int, int>{v, edge.from};
    }
    DASH_ASSERT(false && "a stuck node has an unfinished predecessor");
    return std::pair<int, int>{v, -1};
  };
  int stuck = 0;
  while (stuck < launched && remaining[static_cast<std::size_t>(stuck)] == 0) ++stuck;
  DASH_ASSERT(stuck < launched);
  auto const [v, pred] = blocker(stuck);
  // Follow the waits to their root: a CTA that is never launched, or a cycle of rank orders.
  std::vector<char> seen(static_cast<std::size_t>(num_ctas), 0);
  seen[static_cast<std::size_t>(stuck)] = 1;
  int const holder = dag.nodes[static_cast<std::size_t>(pred)].cta;
  int root = holder;
  while (root < launched && !seen[static_cast<std::size_t>(root)]) {
    seen[static_cast<std::size_t>(root)] = 1;
    root = dag.nodes[static_cast<std::size_t>(blocker(root).second)].cta;
  }
  std::string const why =
      root >= launched
          ? fmt::format("the waits end at CTA {}, which is never launched: dynamic launch keeps only {} CTAs resident",
                        root, machine.sms)
          : fmt::format("the rank orders wait on each other in a cycle through CTA {}", root);
  Node const& node = dag.nodes[static_cast<std::size_t>(v)];
  if (node.kind == NodeKind::kReduceKv) {
    int const kvh = node.head / problem.group_size();
    auto const& order = schedule.dkv_order[static_cast<std::size_t>(index.dkv_id(node.batch, kvh, node.kv_tile))];
    auto const rank = std::find(order.begin(), order.end(), node.head) - order.begin();
    user_error("deadlock: CTA {} waits on dK/dV tile (b={}, kvh={}, j={}) rank {} that can never be released "
               "(rank {} belongs to CTA {}; {})",
               stuck, node.batch, kvh, node.kv_tile, rank, rank - 1, holder, why);
  }
  DASH_ASSERT(node.kind == NodeKind::kReduce);
  auto const& order = schedule.dq_order[static_cast<std::size_t>(index.dq_id(node.batch, node.head, node.q_tile))];
  auto const rank = std::find(order.begin(), order.end(), node.kv_tile) - order.begin();
  user_error("deadlock: CTA {} waits on dQ tile (b={}, h={}, i={}) rank {} that can never be released "
             "(rank {} belongs to CTA {}; {})",
             stuck, node.batch, node.head, node.q_tile, rank, rank - 1, holder, why);
}

}  // namespace

void validate(Problem const& problem, Machine const& machine, Schedule const& schedule) {
  validate_problem(problem);
  TileIndex const index(problem);
  check_launch(machine, schedule, index);
  Visibility const vis = count_visible(problem);
  check_items(problem, schedule, index, vis);
  check_ranks(problem, schedule, index, vis);
  check_deadlock(problem, machine, schedule, index);
}

}  // namespace dash::sim
