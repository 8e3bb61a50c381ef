#include "dagsim/model/dag.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>

#include <fmt/format.h>

#include "dagsim/core/error.h"
#include "dagsim/core/large_buffer.h"
#include "dagsim/core/rank_order.h"
#include "dagsim/core/tile_index.h"

namespace dash::sim {
namespace {

// Where each reduction node sits, by (dQ tile, contributing KV tile) and by (dK/dV tile, q head),
// so rank edges can be emitted while walking the CTAs. The contributors of one dQ tile are indexed
// relative to the smallest KV tile in its rank list: a band mask makes them a contiguous range,
// so the table has one slot per step instead of one per (dQ tile, KV tile) pair. The rank
// predecessor of every slot is resolved in one pass over the dQ tiles, which touches each tile's
// slots together: one scattered access per step instead of three.
struct RankTables {
  std::vector<int> dq_lo;       // per dQ tile: smallest contributing KV tile
  std::vector<int> dq_base;     // per dQ tile: first slot; size num_dq + 1
  std::vector<int> dq_node;     // per slot: node id of its R
  std::vector<int> dq_pred;     // per slot: node id of the R ranked just before it, or -1
  std::vector<int> dkv_rank;    // per (dK/dV tile, head in group): rank
  std::vector<int> dkv_node;    // per (dK/dV tile, head in group): node id of its K
};

RankTables make_rank_tables(Problem const& problem, TileIndex const& index, Schedule const& schedule) {
  RankTables tables;
  auto const num_dq = static_cast<std::size_t>(index.num_dq_tiles());
  DASH_ASSERT(schedule.dq_order.size() == num_dq);
  tables.dq_lo.assign(num_dq, 0);
  tables.dq_base.assign(num_dq + 1, 0);
  for (std::size_t d = 0; d < num_dq; ++d) {
    auto const& order = schedule.dq_order[d];
    int lo = std::numeric_limits<int>::max();
    int hi = -1;
    for (int const j : order) {
      lo = std::min(lo, j);
      hi = std::max(hi, j);
    }
    int const span = order.empty() ? 0 : hi - lo + 1;
    tables.dq_lo[d] = order.empty() ? 0 : lo;
    tables.dq_base[d + 1] = tables.dq_base[d] + span;
  }
  tables.dq_node.assign(static_cast<std::size_t>(tables.dq_base.back()), -1);
  if (problem.is_gqa()) {
    int const group = problem.group_size();
    auto const slots = static_cast<std::size_t>(index.num_dkv_tiles()) * static_cast<std::size_t>(group);
    DASH_ASSERT(schedule.dkv_order.size() == static_cast<std::size_t>(index.num_dkv_tiles()));
    tables.dkv_rank.assign(slots, -1);
    tables.dkv_node.assign(slots, -1);
    for (std::size_t t = 0; t < schedule.dkv_order.size(); ++t) {
      ItemKey const key = index.dkv_key(static_cast<int>(t));
      scatter_ranks(schedule.dkv_order[t], key.head * group,
                    std::span<int>(tables.dkv_rank).subspan(t * static_cast<std::size_t>(group),
                                                            static_cast<std::size_t>(group)));
    }
  }
  return tables;
}

}  // namespace

Dag build_dag(Problem const& problem, CostModel const& cost, Schedule const& schedule,
              std::vector<int> const& dispatch) {
  TileIndex const index(problem);
  bool const gqa = problem.is_gqa();
  int const group = problem.group_size();
  int const k = cost.dq_buffer;
  DASH_ASSERT(k >= 0);
  auto const num_ctas = static_cast<int>(schedule.ctas.size());
  DASH_ASSERT(dispatch.empty() || dispatch.size() == schedule.ctas.size());

  // Pass 1: node ids. Each CTA's nodes are contiguous, in program order C(0) R(0) C(1) R(1) ...
  // with K(item) after its item's steps, so within a CTA every edge goes from a lower id to a higher.
  std::vector<int> cta_base(static_cast<std::size_t>(num_ctas) + 1, 0);
  for (int c = 0; c < num_ctas; ++c) {
    std::int64_t count = 0;
    for (auto const& item : schedule.ctas[c].items) {
      count += 2 * static_cast<std::int64_t>(item.q_order.size()) + (gqa ? 1 : 0);
    }
    DASH_ASSERT(cta_base[c] + count < std::numeric_limits<int>::max());
    cta_base[c + 1] = cta_base[c] + static_cast<int>(count);
  }
  int const num_nodes = cta_base.back();

  RankTables tables = make_rank_tables(problem, index, schedule);

  Dag dag;
  reserve_large(dag.nodes, static_cast<std::size_t>(num_nodes));
  for (int c = 0; c < num_ctas; ++c) {
    int v = cta_base[c];
    for (auto const& item : schedule.ctas[c].items) {
      // A step's cost depends on (b, i, j) only; the walk of one item shares b and j.
      for (std::size_t t = 0; t < item.q_order.size(); ++t) {
        int const i = item.q_order[t];
        Cycles const weight = cost.walk_step_cost(problem, item.batch, i, item.kv_tile, t);
        dag.nodes.push_back(Node{NodeKind::kCompute, c, item.batch, item.head, i, item.kv_tile, weight});
        dag.nodes.push_back(Node{NodeKind::kReduce, c, item.batch, item.head, i, item.kv_tile, cost.reduce});
        int const d = index.dq_id(item.batch, item.head, i);
        tables.dq_node[static_cast<std::size_t>(tables.dq_base[d] + item.kv_tile - tables.dq_lo[d])] = v + 1;
        v += 2;
      }
      if (gqa) {
        dag.nodes.push_back(Node{NodeKind::kReduceKv, c, item.batch, item.head, -1, item.kv_tile, cost.reduce_kv});
        int const kvh = item.head / group;
        auto const slot = static_cast<std::size_t>(index.dkv_id(item.batch, kvh, item.kv_tile)) *
                              static_cast<std::size_t>(group) +
                          static_cast<std::size_t>(item.head - kvh * group);
        tables.dkv_node[slot] = v;
        v += 1;
      }
    }
    DASH_ASSERT(v == cta_base[c + 1]);
  }

  tables.dq_pred.assign(tables.dq_node.size(), -1);
  for (std::size_t d = 0; d < schedule.dq_order.size(); ++d) {
    auto const& order = schedule.dq_order[d];
    int const first = tables.dq_base[d] - tables.dq_lo[d];
    for (std::size_t w = 1; w < order.size(); ++w) {
      tables.dq_pred[static_cast<std::size_t>(first + order[w])] = tables.dq_node[static_cast<std::size_t>(first + order[w - 1])];
    }
  }

  // The first node of a dynamic CTA waits for the CTA whose SM it takes. A CTA without nodes
  // finishes the moment it starts, so the edge comes from whatever freed the SM for it.
  auto dispatch_source = [&](int c) {
    if (dispatch.empty()) return -1;
    int d = dispatch[static_cast<std::size_t>(c)];
    while (d >= 0 && cta_base[d] == cta_base[d + 1]) d = dispatch[static_cast<std::size_t>(d)];
    return d < 0 ? -1 : cta_base[d + 1] - 1;
  };

  // Pass 2: in-edges, grouped by destination in node order (CSR).
  reserve_large(dag.in_begin, static_cast<std::size_t>(num_nodes) + 1);
  dag.in_begin.assign(static_cast<std::size_t>(num_nodes) + 1, 0);
  reserve_large(dag.in_edges, static_cast<std::size_t>(num_nodes) * 3 + static_cast<std::size_t>(num_ctas));
  auto add = [&](int from, int to, Cycles latency) { dag.in_edges.push_back(Edge{from, to, latency}); };
  Cycles const latency = cost.latency;
  std::vector<int> r_of_step;  // R(t) of the current CTA, reused across CTAs
  for (int c = 0; c < num_ctas; ++c) {
    int const first = cta_base[c];
    int const source = dispatch_source(c);
    int v = first;
    int step = 0;          // the CTA's global step counter t
    int prev_c = -1;       // C(t-1)
    int prev_k = -1;       // K of the previous item (GQA)
    bool item_start = false;
    r_of_step.clear();
    for (auto const& item : schedule.ctas[c].items) {
      item_start = true;
      int last_r = -1;
      for (int const i : item.q_order) {
        // C(t)
        if (v == first && source >= 0) add(source, v, 0);
        if (prev_c >= 0) add(prev_c, v, 0);
        // 64-bit: k comes from the user and may be huge.
        std::int64_t const drained = std::int64_t{step} - k - 1;
        if (drained >= 0) add(r_of_step[static_cast<std::size_t>(drained)], v, 0);
        if (item_start && prev_k >= 0) add(prev_k, v, 0);
        dag.in_begin[static_cast<std::size_t>(v) + 1] = static_cast<int>(dag.in_edges.size());
        prev_c = v;
        item_start = false;
        ++v;
        // R(t)
        add(v - 1, v, 0);
        if (step > 0) add(r_of_step[static_cast<std::size_t>(step - 1)], v, 0);
        int const d = index.dq_id(item.batch, item.head, i);
        auto const slot = static_cast<std::size_t>(tables.dq_base[d] + item.kv_tile - tables.dq_lo[d]);
        int const pred = tables.dq_pred[slot];
        if (pred >= 0 && cost.ordered) add(pred, v, latency);
        dag.in_begin[static_cast<std::size_t>(v) + 1] = static_cast<int>(dag.in_edges.size());
        r_of_step.push_back(v);
        last_r = v;
        ++v;
        ++step;
      }
      if (gqa) {
        // K(item): after the item's last R (which follows its last C); an empty item passes the
        // chain on after the previous item's epilogue.
        if (v == first && source >= 0) add(source, v, 0);
        if (last_r >= 0) {
          add(last_r, v, 0);
        } else if (prev_k >= 0) {
          add(prev_k, v, 0);
        }
        int const kvh = item.head / group;
        auto const tile = static_cast<std::size_t>(index.dkv_id(item.batch, kvh, item.kv_tile));
        auto const g = static_cast<std::size_t>(group);
        int const rank = tables.dkv_rank[tile * g + static_cast<std::size_t>(item.head - kvh * group)];
        DASH_ASSERT(rank >= 0);
        if (rank > 0 && cost.ordered) {
          int const pred_h = schedule.dkv_order[tile][static_cast<std::size_t>(rank - 1)];
          int const pred = tables.dkv_node[tile * g + static_cast<std::size_t>(pred_h - kvh * group)];
          DASH_ASSERT(pred >= 0);
          add(pred, v, latency);
        }
        dag.in_begin[static_cast<std::size_t>(v) + 1] = static_cast<int>(dag.in_edges.size());
        prev_k = v;
        ++v;
      }
    }
    DASH_ASSERT(v == cta_base[c + 1]);
  }
  return dag;
}

std::string to_dot(Dag const& dag) {
  std::string out = "digraph dash {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (std::size_t v = 0; v < dag.nodes.size(); ++v) {
    Node const& n = dag.nodes[v];
    char const* kind = n.kind == NodeKind::kCompute ? "C" : n.kind == NodeKind::kReduce ? "R" : "K";
    if (n.kind == NodeKind::kReduceKv) {
      out += fmt::format("  n{} [label=\"{}(b{} h{} j{})\\nCTA {} w={}\"];\n", v, kind, n.batch, n.head,
                         n.kv_tile, n.cta, n.weight);
    } else {
      out += fmt::format("  n{} [label=\"{}(b{} h{} i{} j{})\\nCTA {} w={}\"];\n", v, kind, n.batch, n.head,
                         n.q_tile, n.kv_tile, n.cta, n.weight);
    }
  }
  for (auto const& e : dag.in_edges) {
    if (e.latency != 0) {
      out += fmt::format("  n{} -> n{} [label=\"+{}\"];\n", e.from, e.to, e.latency);
    } else {
      out += fmt::format("  n{} -> n{};\n", e.from, e.to);
    }
  }
  out += "}\n";
  return out;
}

}  // namespace dash::sim
