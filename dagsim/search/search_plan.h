#pragma once
// The searched form of a schedule (a Plan) and its cheap evaluator. A Plan says which CTA runs
// which work items, in which order, and each item's Q order; it carries no ranks. The evaluator
// runs the model event by event and hands every ticket out first come, first served; recording that
// order as the ranks gives a deterministic schedule whose run replays the first-come one exactly, so
// simulate() on to_schedule(plan) returns the same makespan (tested). One evaluation is
// O(steps log CTAs) with no allocation beyond the evaluator's scratch, several times cheaper than
// building the DAG.
#include <cstdint>
#include <string>
#include <vector>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/tile_index.h"
#include "dagsim/core/units.h"
#include "dagsim/model/cost_model.h"

namespace dash::sim {

struct Plan {
  LaunchModel launch = LaunchModel::kPersistent;
  /// Item ids (TileIndex::item_id) per CTA. Dynamic launch: one item per CTA, in launch order.
  std::vector<std::vector<int>> ctas;
  /// Per item id: the Q tiles it visits, in order (exactly the visible ones).
  std::vector<std::vector<int>> q_order;
  friend bool operator==(Plan const&, Plan const&) = default;
};

/// What one evaluation found, besides the makespan: where time went, for the local search moves.
struct PlanCost {
  Cycles makespan = 0;
  std::vector<Cycles> cta_finish;  ///< per CTA: its last node's finish
  std::vector<Cycles> cta_wait;    ///< per CTA: cycles its SM stalled on tickets or a full buffer
};

class PlanEvaluator {
 public:
  PlanEvaluator(Problem const& problem, Machine const& machine, CostModel const& cost);

  [[nodiscard]] Problem const& problem() const { return problem_; }
  [[nodiscard]] Machine const& machine() const { return machine_; }
  [[nodiscard]] CostModel const& cost() const { return cost_; }
  [[nodiscard]] TileIndex const& index() const { return index_; }
  [[nodiscard]] int num_items() const { return index_.num_items(); }
  /// Items with at least one visible step; fully masked items are never scheduled.
  [[nodiscard]] std::vector<int> const& live_items() const { return live_; }
  /// The item's visible Q tiles, ascending.
  [[nodiscard]] std::vector<int> const& visible(int item) const { return visible_[item]; }
  /// Time the item holds its SM at least: its steps (plus their reductions when they run on the
  /// SM, k = 0; plus, under GQA, the last reduction and the dK/dV epilogue the next item waits for).
  [[nodiscard]] Cycles item_work(int item) const { return work_[item]; }
  [[nodiscard]] Cycles step_cost(int item, int q_tile) const;

  /// Makespan of the plan with first-come-first-served ranks. The plan must cover every live item
  /// once with a permutation of its visible Q tiles (check_plan); persistent plans need ctas.size()
  /// <= SMs.
  Cycles evaluate(Plan const& plan);
  PlanCost evaluate_detailed(Plan const& plan);
  /// The plan as a Schedule whose ranks are the first-come order of an evaluation.
  Schedule to_schedule(Plan const& plan, std::string const& strategy);
  /// The plan's CTAs and launch model as a Schedule without ranks and without an evaluation:
  /// enough for what depends on placement alone (working_set()).
  [[nodiscard]] Schedule placement(Plan const& plan) const;
  /// The assignment and Q orders of a schedule (its ranks are dropped).
  [[nodiscard]] Plan from_schedule(Schedule const& schedule) const;
  /// DASH_ASSERTs the plan's coverage; for plans the search built (never user input).
  void check_plan(Plan const& plan) const;

 private:
  Cycles run(Plan const& plan, PlanCost* detail, Schedule* ranks);

  Problem problem_;
  Machine machine_;
  CostModel cost_;
  TileIndex index_;
  std::vector<int> live_;
  std::vector<std::vector<int>> visible_;
  std::vector<int> first_q_;             // per item: first visible Q tile (cost_ offset base)
  std::vector<std::int64_t> cost_off_;   // per item: offset of its costs in cost_
  std::vector<Cycles> step_cost_;        // indexed cost_off_[item] + (q - first_q_[item])
  std::vector<Cycles> work_;
  std::vector<int> item_dq_base_;        // per item: dq_id(b, h, 0)
  std::vector<int> item_dkv_;            // per item: dkv_id(b, h / group, j) (GQA only)
  // Scratch reused across evaluations.
  std::vector<Cycles> tile_free_, dkv_free_;
};

}  // namespace dash::sim
