#pragma once
// Search as ask/tell (STYLE.md): a strategy proposes a candidate with next(), the caller measures
// it — with the model now, on a GPU later — and hands the makespan back with report(). The
// strategy never runs anything itself, so the same search can be driven by either.
#include <cstdint>
#include <vector>

#include "dagsim/core/rng.h"
#include "dagsim/core/units.h"
#include "dagsim/search/search_plan.h"

namespace dash::sim {

/// One measurement of a proposed candidate. cta_finish is optional (a GPU run may only give the
/// makespan); when present it steers the moves towards the CTAs that finish last.
struct Measurement {
  Cycles makespan = 0;
  std::vector<Cycles> cta_finish;
};

class SearchStrategy {
 public:
  SearchStrategy() = default;
  SearchStrategy(SearchStrategy const&) = delete;
  SearchStrategy& operator=(SearchStrategy const&) = delete;
  virtual ~SearchStrategy() = default;
  /// The next candidate to measure; valid until the next call. nullptr: nothing left to propose.
  virtual Plan const* next() = 0;
  /// The measurement of the candidate last returned by next().
  virtual void report(Measurement const& measured) = 0;
};

/// The order in which an item visits its visible Q tiles (v ascending, n of them).
enum class QOrderKind : std::uint8_t {
  kAscending,   ///< v[(rot + t) mod n]
  kDescending,  ///< v[(rot - t) mod n]
  kTwoPhase,    ///< v[rot..n) ascending, then v[0..rot) descending: start mid-band, sweep out
};
std::vector<int> make_q_order(std::vector<int> const& visible, QOrderKind kind, int rotation);

/// Counts of what happened to proposals.
struct MoveStats {
  std::int64_t proposed = 0;
  std::int64_t improved = 0;  ///< strictly better than the current candidate
  std::int64_t equal = 0;     ///< kept as a sideways move
  std::int64_t worse = 0;     ///< rejected and undone
};

/// Local search from a start plan: moves an item from a late CTA to an early one, swaps items
/// between them, re-orders an item's Q tiles, or swaps two items inside a CTA (dynamic launch:
/// swaps launch positions). Keeps a move when the measured (makespan, sum of the latest CTA
/// finishes) does not get worse; undoes it otherwise. Deterministic for a given seed.
class LocalSearch final : public SearchStrategy {
 public:
  LocalSearch(PlanEvaluator const& evaluator, Plan start, Measurement start_cost, std::uint64_t seed);

  Plan const* next() override;
  void report(Measurement const& measured) override;

  [[nodiscard]] Plan const& current() const { return plan_; }
  [[nodiscard]] Cycles makespan() const { return cost_.makespan; }
  [[nodiscard]] MoveStats const& stats() const { return stats_; }
  /// Restarts from another plan (e.g. the best of all streams).
  void reset(Plan plan, Measurement cost);

 private:
  enum class Move : std::uint8_t { kNone, kRelocate, kSwap, kQOrder, kSwapInCta };
  struct Undo {
    Move move = Move::kNone;
    int cta_a = 0, pos_a = 0, cta_b = 0, pos_b = 0, item = 0;
    std::vector<int> old_order;
  };
  [[nodiscard]] std::int64_t tail_key(Measurement const& m) const;
  int pick_late();
  int pick_early();
  bool propose();
  void undo();

  PlanEvaluator const& evaluator_;
  Plan plan_;
  Measurement cost_;
  std::int64_t cost_tail_ = 0;
  Undo undo_;
  Rng rng_;
  MoveStats stats_;
  std::vector<int> by_finish_;  // CTAs sorted by finish, latest first (refreshed on accept)
};

}  // namespace dash::sim
