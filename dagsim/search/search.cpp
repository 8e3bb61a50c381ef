#include "dagsim/search/search.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "dagsim/core/error.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/named_run.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"
#include "dagsim/model/working_set.h"
#include "dagsim/search/search_exact.h"
#include "dagsim/search/search_pair.h"
#include "dagsim/search/search_plan.h"
#include "dagsim/search/search_seeds.h"
#include "dagsim/search/search_strategy.h"

namespace dash::sim {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Candidate {
  std::string origin;
  Plan plan;
  Measurement cost;
};

Measurement measure(PlanEvaluator& ev, Plan const& plan) {
  PlanCost detail = ev.evaluate_detailed(plan);
  return Measurement{detail.makespan, std::move(detail.cta_finish)};
}

void check_options(SearchOptions const& o) {
  if (o.budget_ms < 0 || o.budget_ms > 24LL * 3600 * 1000) {
    user_error("search budget must be between 0 and 24 hours, got {} ms", o.budget_ms);
  }
  if (o.threads < 1 || o.threads > 256) user_error("threads must be in 1..256, got {}", o.threads);
  if (o.streams < 1 || o.streams > 1024) user_error("streams must be in 1..1024, got {}", o.streams);
  if (o.max_evaluations < 0) user_error("evaluations must be non-negative, got {}", o.max_evaluations);
  if (o.max_live_bytes < 0) user_error("the live-bytes cap must be non-negative, got {}", o.max_live_bytes);
}

// Local-search evaluations per stream per round: rounds of roughly equal work whatever the size,
// short enough that the time budget is checked often, long enough to amortize the thread start.
int evaluations_per_round(std::int64_t steps) {
  std::int64_t const per = 4'000'000 / std::max<std::int64_t>(steps, 1);
  return static_cast<int>(std::clamp<std::int64_t>(per, 2, 256));
}

}  // namespace

SearchResult search(Problem const& problem, Machine const& machine, CostModel const& cost,
                    SearchOptions const& options) {
  validate_problem(problem);
  check_options(options);
  if (!cost.ordered) user_error("search orders the reductions: it needs the ordered (deterministic) cost model");
  auto const start = Clock::now();
  SearchResult result;
  SearchStats& stats = result.stats;
  result.bounds = compute_bounds(problem, machine, cost);
  PlanEvaluator evaluator(problem, machine, cost);
  result.lower_bound = std::max(result.bounds.lower(), packing_bound(evaluator));

  // A plan holds live items only, but under GQA a valid schedule must also run every fully masked
  // item (its dK/dV rank); such problems keep the named strategies and skip the plan stages.
  bool const plans_complete =
      !problem.is_gqa() || evaluator.live_items().size() == static_cast<std::size_t>(evaluator.num_items());

  // Stage 1: the named strategies, exactly as they are (their own ranks), by simulate().
  std::optional<Schedule> best_named;
  MemoryFloor best_named_memory;
  WorkingSet best_named_live;
  std::vector<Candidate> seeds;
  for (auto const& name : strategy_names()) {
    // One at a time: a simulation keeps its whole DAG, and only the makespan is needed here.
    NamedRun run = run_named(name, problem, machine, cost, options.launch);
    NamedResult named{run.name, std::nullopt, {}};
    if (run.ran()) {
      Cycles const makespan = run.result->makespan;
      Cycles const predicted = run.result->predicted();
      ++stats.simulations;
      named.makespan = makespan;
      if (!best_named ||
          predicted_faster(predicted, makespan, result.best_named_predicted, result.best_named_makespan)) {
        result.best_named = run.name;
        result.best_named_makespan = makespan;
        result.best_named_predicted = predicted;
        best_named_memory = run.result->memory;
        best_named_live = run.result->live;
        best_named = run.schedule;
      }
      if (plans_complete) seeds.push_back(Candidate{run.name, evaluator.from_schedule(run.schedule), {}});
    } else {
      named.error = run.refused;
      ++(named.error.find("deadlock") != std::string::npos ? stats.deadlock : stats.invalid);
    }
    result.named.push_back(std::move(named));
  }

  // The working-set cap (SearchOptions::max_live_bytes), never below the best named strategy's.
  auto const live = [&](Schedule const& s) { return working_set(problem, s, machine.sms); };
  if (best_named) result.best_named_working_set = best_named_live;
  if (options.max_live_bytes > 0) {
    result.live_cap = std::max(options.max_live_bytes, result.best_named_working_set.max_bytes);
  }
  auto const fits = [&](Plan const& plan) {
    if (result.live_cap == 0 || live(evaluator.placement(plan)).max_bytes <= result.live_cap) return true;
    ++stats.over_live_cap;
    return false;
  };

  // Stage 2: list-scheduling seeds; every seed (named ones too) under first-come ranks. Seeds over
  // the cap are dropped before they are measured.
  for (auto& seed : list_schedule_seeds(evaluator, options.launch)) {
    if (!plans_complete) break;
    seeds.push_back(Candidate{seed.name, std::move(seed.plan), {}});
  }
  std::erase_if(seeds, [&](Candidate const& seed) { return !fits(seed.plan); });
  for (auto& seed : seeds) {
    seed.cost = measure(evaluator, seed.plan);
    ++stats.evaluations;
  }
  std::stable_sort(seeds.begin(), seeds.end(), [](Candidate const& a, Candidate const& b) {
    return a.cost.makespan < b.cost.makespan;
  });

  Candidate best;
  bool have_best = !seeds.empty();
  if (have_best) best = seeds.front();

  // Stage 3: small instances, exact.
  if (plans_complete && options.exact && exact_applicable(evaluator, options.launch) &&
      !(have_best && best.cost.makespan <= result.lower_bound)) {
    ExactResult exact = exact_search(evaluator, options.launch, have_best ? best.cost.makespan : 0,
                                     result.lower_bound);
    stats.exact_nodes += exact.nodes;
    // The exhaustive space ignores the cap: its optimum certifies only where it fits. (Its plans
    // put one item per CTA, every head in progress at once, as the named strategies do on such
    // problems, so with a named strategy the cap never refuses one; the guard is for a problem
    // every named strategy refused.)
    bool const exact_fits = !exact.plan || fits(*exact.plan);
    if (exact.plan && exact_fits && (!have_best || exact.makespan < best.cost.makespan)) {
      best = Candidate{"exact", std::move(*exact.plan), measure(evaluator, *exact.plan)};
      have_best = true;
    }
    if (exact.complete && exact_fits) result.certificate = "exhaustive: " + exact.space;
  }

  // Stage 4: local search in deterministic streams; threads only decide who runs which stream.
  if (have_best && best.cost.makespan > result.lower_bound && result.certificate.empty()) {
    int const num_streams = options.streams;
    std::vector<std::unique_ptr<LocalSearch>> streams;
    std::vector<std::string> origin(static_cast<std::size_t>(num_streams));
    for (int s = 0; s < num_streams; ++s) {
      // No seed within the cap (every named strategy refused, the exact stage's plan kept): from it.
      Candidate const& from =
          seeds.empty() ? best : seeds[static_cast<std::size_t>(s) % std::min<std::size_t>(seeds.size(), 4)];
      std::uint64_t mix = options.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(s);
      streams.push_back(std::make_unique<LocalSearch>(evaluator, from.plan, from.cost, splitmix64(mix)));
      origin[static_cast<std::size_t>(s)] = from.origin;
    }
    int const workers = std::min(options.threads, num_streams);
    std::vector<PlanEvaluator> evaluators(static_cast<std::size_t>(workers), evaluator);
    int const per_round = evaluations_per_round(count_steps(evaluator.to_schedule(best.plan, "")));
    std::vector<char> exhausted(static_cast<std::size_t>(num_streams), 0);
    auto run_stream = [&](int s, PlanEvaluator& ev) {
      auto& stream = *streams[static_cast<std::size_t>(s)];
      for (int e = 0; e < per_round; ++e) {
        Plan const* candidate = stream.next();
        if (!candidate) {
          exhausted[static_cast<std::size_t>(s)] = 1;
          return;
        }
        stream.report(measure(ev, *candidate));
      }
    };
    for (;;) {
      if (workers == 1) {
        for (int s = 0; s < num_streams; ++s) run_stream(s, evaluators[0]);
      } else {
        std::vector<std::thread> pool;
        for (int w = 0; w < workers; ++w) {
          pool.emplace_back([&, w] {
            for (int s = w; s < num_streams; s += workers) run_stream(s, evaluators[static_cast<std::size_t>(w)]);
          });
        }
        for (auto& t : pool) t.join();
      }
      ++stats.rounds;
      // Deterministic reduction: best by (makespan, stream id); a leader over the live cap goes
      // back to the best plan and the next one is asked.
      std::int64_t evaluations = 0;
      for (auto const& st : streams) evaluations += st->stats().proposed;
      for (;;) {
        int lead = 0;
        for (int s = 1; s < num_streams; ++s) {
          if (streams[s]->makespan() < streams[lead]->makespan()) lead = s;
        }
        if (streams[lead]->makespan() >= best.cost.makespan) break;
        if (fits(streams[lead]->current())) {
          best = Candidate{origin[static_cast<std::size_t>(lead)], streams[lead]->current(),
                           measure(evaluator, streams[lead]->current())};
          break;
        }
        streams[lead]->reset(best.plan, best.cost);
        origin[static_cast<std::size_t>(lead)] = best.origin;
      }
      // Every few rounds the laggards restart from the leader (their own random streams go on).
      if (stats.rounds % 4 == 0) {
        for (int s = 0; s < num_streams; ++s) {
          if (streams[s]->makespan() > best.cost.makespan) {
            streams[s]->reset(best.plan, best.cost);
            origin[static_cast<std::size_t>(s)] = best.origin;
          }
        }
      }
      double const elapsed = ms_since(start);
      if (options.progress) {
        options.progress(SearchProgress{evaluations, best.cost.makespan, result.lower_bound, elapsed,
                                        static_cast<double>(options.budget_ms)});
      }
      bool const all_done = std::all_of(exhausted.begin(), exhausted.end(), [](char d) { return d != 0; });
      if (best.cost.makespan <= result.lower_bound || all_done) break;
      if (options.max_evaluations > 0 && evaluations >= options.max_evaluations) break;
      if (options.max_evaluations == 0 && elapsed >= static_cast<double>(options.budget_ms)) break;
    }
    for (auto const& st : streams) {
      stats.evaluations += st->stats().proposed;
      stats.local_evaluations += st->stats().proposed;
      stats.improved += st->stats().improved;
      stats.equal += st->stats().equal;
      stats.worse += st->stats().worse;
    }
  }

  // Stage 5: confirm the winner with the full simulator; keep the best named one if it is better.
  if (have_best) {
    Schedule schedule = evaluator.to_schedule(best.plan, "search");
    validate(problem, machine, schedule);
    SimResult const confirmed = simulate(problem, machine, cost, schedule);
    Cycles const makespan = confirmed.makespan;
    ++stats.simulations;
    // The cheap evaluator is the same model; a difference is our bug, counted so tests see it.
    if (makespan != best.cost.makespan) ++stats.model_mismatch;
    result.schedule = std::move(schedule);
    result.makespan = makespan;
    result.memory = confirmed.memory;
    result.working_set = confirmed.live;
    result.predicted = confirmed.predicted();
    result.origin = best.origin;
  }
  if (best_named && (!have_best || predicted_faster(result.best_named_predicted, result.best_named_makespan,
                                                    result.predicted, result.makespan))) {
    result.schedule = *best_named;
    result.schedule.strategy = "search";
    result.makespan = result.best_named_makespan;
    result.memory = best_named_memory;
    result.working_set = best_named_live;
    result.predicted = result.best_named_predicted;
    result.origin = result.best_named;
    result.certificate.clear();  // the exhaustive space did not contain this one
  }
  if (!have_best && !best_named) user_error("search found no valid schedule for this problem");
  result.gap = gap_to_bound(result.makespan, result.lower_bound);
  if (result.makespan <= result.lower_bound) result.certificate = "bound met";
  result.optimal = !result.certificate.empty();

  if (options.pair) {
    if (auto view = pair_view(problem, machine, cost)) {
      SearchOptions sub = options;
      sub.pair = false;
      sub.progress = nullptr;
      SearchResult paired = search(view->problem, view->machine, view->cost, sub);
      result.pair = PairResult{paired.makespan, paired.lower_bound, view->problem, view->machine,
                               view->cost, std::move(paired.schedule)};
      stats.evaluations += paired.stats.evaluations;
      stats.simulations += paired.stats.simulations;
    }
  }
  result.elapsed_ms = ms_since(start);
  return result;
}

}  // namespace dash::sim
