#pragma once
// The backward pass as a DAG (docs/design.md section 2): compute nodes C, dQ reduction nodes R and,
// under GQA, dK/dV reduction nodes K, with the schedule's program orders and rank orders as edges.
#include <cstdint>
#include <string>
#include <vector>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/units.h"
#include "dagsim/model/cost_model.h"

namespace dash::sim {

enum class NodeKind : std::uint8_t { kCompute, kReduce, kReduceKv };

struct Node {
  NodeKind kind = NodeKind::kCompute;
  int cta = 0;          ///< CTA (persistent) or launch slot (dynamic) that runs it
  int batch = 0, head = 0, q_tile = 0, kv_tile = 0;
  Cycles weight = 0;
};

struct Edge {
  int from = 0;
  int to = 0;
  Cycles latency = 0;  ///< added to from's finish time (L on rank edges, 0 elsewhere)
};

/// Nodes plus edges in CSR form (edges grouped by destination).
struct Dag {
  std::vector<Node> nodes;
  std::vector<int> in_begin;  ///< size nodes + 1; in-edges of node v are in_edges[in_begin[v]..in_begin[v+1])
  std::vector<Edge> in_edges;
};

/// Builds the DAG of a validated schedule. Dynamic launch is not a static DAG (which SM a CTA
/// lands on depends on when earlier CTAs finish); build_dag adds the dispatch edges it is given
/// (dispatch[k] = the CTA whose finish frees the SM for CTA k, or -1) — simulate() derives them.
Dag build_dag(Problem const& problem, CostModel const& cost, Schedule const& schedule,
              std::vector<int> const& dispatch = {});

/// Graphviz DOT, for small instances.
std::string to_dot(Dag const& dag);

}  // namespace dash::sim
