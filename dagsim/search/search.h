#pragma once
// `search`: the best deterministic schedule the model knows for a problem and machine, with a
// certificate (docs/design.md section 3, docs/search.md). Pipeline, cheapest first: named strategies
// and list-scheduling seeds -> exact branch-and-bound on small instances -> local search on the
// cheap first-come evaluator (search_plan.h), in deterministic streams -> the winner validated and
// confirmed by simulate(). The answer is never worse than the best named strategy.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/units.h"
#include "dagsim/model/bounds.h"
#include "dagsim/model/memory_floor.h"
#include "dagsim/model/working_set.h"
#include "dagsim/model/cost_model.h"

namespace dash::sim {

struct SearchProgress {
  std::int64_t evaluations = 0;
  Cycles best = 0;
  Cycles lower_bound = 0;
  double elapsed_ms = 0;
  double budget_ms = 0;
};

/// The default working-set cap: the H100 / H200 L2 (50 MiB).
inline constexpr std::int64_t kDefaultLiveCap = std::int64_t{50} << 20;

struct SearchOptions {
  std::int64_t budget_ms = 2000;  ///< wall-clock budget of the local search
  std::uint64_t seed = 1;
  int threads = 1;                ///< workers; never changes the result (streams are fixed)
  LaunchModel launch = LaunchModel::kPersistent;
  /// > 0: stop at the first round end with at least this many local-search evaluations. With it
  /// the result does not depend on the machine's speed either; SearchStats::local_evaluations
  /// (the JSON's `local_evaluations`) is the count reached, so a time-budgeted run is replayed
  /// exactly by passing it back.
  std::int64_t max_evaluations = 0;
  int streams = 8;                ///< independent deterministic search streams
  bool pair = false;              ///< also search the 2-CTA mode (search_pair.h)
  bool exact = true;              ///< branch-and-bound on small instances (search_exact.h)
  /// > 0: the search keeps no schedule whose working set (working_set.h: the most bytes of Q, dO
  /// and dQ accumulator live at once) exceeds this many bytes, or the best named strategy's if
  /// that is larger. The search minimizes the DAG's makespan, which has no memory term; on the
  /// H200, schedules that kept 2.6-5x its L2 live ran 12-31% slower than the DAG said
  /// (docs/model.md, "Working set"; the memory floor, memory_floor.h, decides only between the
  /// search's schedule and the best named strategy). 0: no cap.
  std::int64_t max_live_bytes = kDefaultLiveCap;
  std::function<void(SearchProgress const&)> progress;  ///< called between rounds, if set
};

/// Why candidates died, counted per stage (Timeloop-style histogram).
struct SearchStats {
  std::int64_t evaluations = 0;   ///< cheap (first-come) evaluations, seeds included
  /// Local-search evaluations of this search alone (no seeds, no --pair search): what
  /// SearchOptions::max_evaluations counts, so passing it back replays a timed run exactly.
  std::int64_t local_evaluations = 0;
  std::int64_t simulations = 0;   ///< full simulate() runs (named strategies, confirmations)
  std::int64_t invalid = 0;       ///< a seed or candidate that failed validate()
  std::int64_t deadlock = 0;      ///< ... failed it with a deadlock
  std::int64_t worse = 0;         ///< measured and rejected
  std::int64_t improved = 0;      ///< measured and kept as strictly better
  std::int64_t equal = 0;         ///< kept as a sideways move
  std::int64_t exact_nodes = 0;   ///< branch-and-bound nodes visited
  std::int64_t rounds = 0;
  std::int64_t model_mismatch = 0;  ///< cheap evaluator != simulate() on the winner (a bug if > 0)
  std::int64_t over_live_cap = 0;   ///< seeds, exact or local-search winners over the live cap
};

struct NamedResult {
  std::string name;
  std::optional<Cycles> makespan;  ///< empty when the strategy refused or failed validation
  std::string error;
};

/// The 2-CTA mode's answer (search_pair.h): its makespan on the paired model and the schedule of
/// the equivalent problem (KV tiles of 2*tile_n, half the SMs).
struct PairResult {
  Cycles makespan = 0;
  Cycles lower_bound = 0;
  Problem problem;
  Machine machine;
  CostModel cost;
  Schedule schedule;
};

struct SearchResult {
  Schedule schedule;       ///< validated; strategy "search"
  Cycles makespan = 0;     ///< simulate(schedule).makespan
  /// simulate(schedule).memory and predicted(): the memory floor (memory_floor.h) and the larger
  /// of it and the makespan. The search minimizes the makespan; the floor decides only between
  /// its schedule and the best named strategy.
  MemoryFloor memory;
  Cycles predicted = 0;
  Cycles lower_bound = 0;  ///< max(compute_bounds().lower(), packing bound)
  Bounds bounds;
  double gap = 0;          ///< (makespan - lower_bound) / lower_bound
  bool optimal = false;
  std::string certificate;  ///< "bound met", "exhaustive: <space>", or empty
  std::string origin;       ///< the seed the winner grew from ("lpt/desc", "shift", ...)
  std::vector<NamedResult> named;
  std::string best_named;      ///< the named strategy with the smallest predicted() time
  Cycles best_named_makespan = 0;
  Cycles best_named_predicted = 0;
  SearchStats stats;
  std::int64_t live_cap = 0;    ///< the cap applied (SearchOptions::max_live_bytes raised to the
                                ///< best named strategy's working set); 0: none
  WorkingSet working_set;             ///< the schedule's (working_set.h, `machine.sms` slots)
  WorkingSet best_named_working_set;  ///< the best named strategy's; all zero when none ran
  double elapsed_ms = 0;
  std::optional<PairResult> pair;
};

/// Throws UserError on an invalid problem or options (threads < 1, negative budget, ...).
SearchResult search(Problem const& problem, Machine const& machine, CostModel const& cost,
                    SearchOptions const& options);

}  // namespace dash::sim
