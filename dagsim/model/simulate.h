#pragma once
// Critical-path simulation of a validated schedule: the makespan, per-CTA time split and the
// critical path. Two independent evaluations that must agree exactly: a longest-path pass over
// the DAG, and an event-driven run of CTAs as state machines (tickets, writer warps, dispatch).
#include <cstdint>
#include <vector>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/units.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/dag.h"
#include "dagsim/model/memory_floor.h"
#include "dagsim/model/working_set.h"

namespace dash::sim {

struct CtaStats {
  int sm = 0;              ///< SM it ran on (dynamic: the dispatch result)
  Cycles start = 0;
  Cycles finish = 0;
  Cycles busy = 0;          ///< compute on the SM (C nodes; R and K too when dq_buffer == 0)
  Cycles waiting = 0;       ///< stalled on a reduction rank (ticket not yet ours) or a full buffer
  Cycles idle = 0;          ///< makespan - busy - waiting on its SM
};

/// One interval of a CTA's timeline, for traces and Gantt charts.
struct Slice {
  int cta = 0;
  int sm = 0;
  NodeKind kind = NodeKind::kCompute;
  int batch = 0, head = 0, q_tile = 0, kv_tile = 0;
  Cycles start = 0;
  Cycles finish = 0;
  Cycles ready = 0;  ///< when its own CTA was ready for it; start - ready is the wait it paid
};

struct SimResult {
  Cycles makespan = 0;  ///< the DAG's critical path
  /// The memory floor (memory_floor.h) when the cost model has one; makespan and floor taken
  /// together are the prediction (predicted()).
  MemoryFloor memory;
  WorkingSet live;  ///< the schedule's working set (working_set.h, one slot per SM)
  std::int64_t steps = 0;
  std::vector<CtaStats> ctas;
  std::vector<int> critical_path;  ///< node ids into `dag.nodes`, first to last
  Dag dag;                         ///< the graph that was evaluated (with dispatch edges)
  std::vector<Cycles> node_start;  ///< per node
  int dq_buffer = 1;               ///< the cost model's k: decides the lanes of slices() (docs/model.md)
  [[nodiscard]] std::vector<Slice> slices() const;
  [[nodiscard]] double utilization(int sms) const;  ///< total busy / (sms * makespan)
  /// What the model predicts for the main kernel: the critical path, or the memory floor where
  /// the HBM traffic takes longer.
  [[nodiscard]] Cycles predicted() const { return makespan > memory.cycles ? makespan : memory.cycles; }
  /// The order of two predictions: the prediction, then the makespan. Where the floor binds for
  /// both (the compulsory traffic of a short sequence can), the shorter critical path still runs
  /// faster.
  [[nodiscard]] bool faster_than(SimResult const& other) const;
};

/// The order of SimResult::faster_than on (prediction, makespan) pairs kept without their results.
inline bool predicted_faster(Cycles predicted, Cycles makespan, Cycles other_predicted, Cycles other_makespan) {
  return predicted != other_predicted ? predicted < other_predicted : makespan < other_makespan;
}

inline bool SimResult::faster_than(SimResult const& other) const {
  return predicted_faster(predicted(), makespan, other.predicted(), other.makespan);
}

/// Longest-path evaluation. The schedule must be valid (validate()).
SimResult simulate(Problem const& problem, Machine const& machine, CostModel const& cost,
                   Schedule const& schedule);

/// Event-driven evaluation of the same model; returns the makespan (the DAG's, without the memory
/// floor). Equal to simulate().makespan on every valid schedule (tested).
Cycles simulate_events(Problem const& problem, Machine const& machine, CostModel const& cost,
                       Schedule const& schedule);

}  // namespace dash::sim
