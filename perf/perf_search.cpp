// Speed of the search on the hardest grid case: H200, causal, seqlen 16384, head_dim 128, 16 heads
// (264k steps). BM_plan_evaluate is one cheap first-come evaluation (the local search's inner
// loop), BM_simulate_plan the full simulate() of the same schedule, and BM_search_to_1pct the
// time until the search's answer is within 1% of the lower bound (seeds, then local search rounds
// until the gap is <= 1%), with 2 threads.
#include <benchmark/benchmark.h>

#include "dagsim/model/simulate.h"
#include "dagsim/search/search.h"
#include "dagsim/search/search_plan.h"
#include "dagsim/search/search_seeds.h"

namespace {

using namespace dash::sim;

Problem big_causal() {
  Problem p;
  p.batch = 1;
  p.q_heads = p.kv_heads = 16;
  p.seqlen_q = p.seqlen_k = 16384;
  p.head_dim = 128;
  p.mask = parse_mask("causal");
  return p;
}

void BM_plan_evaluate(benchmark::State& state) {
  Problem const p = big_causal();
  PlanEvaluator ev(p, machine_preset("h200"), default_model(p));
  Plan const plan = list_schedule_seeds(ev, LaunchModel::kPersistent).front().plan;
  for (auto _ : state) benchmark::DoNotOptimize(ev.evaluate(plan));
}
BENCHMARK(BM_plan_evaluate)->Unit(benchmark::kMillisecond);

void BM_simulate_plan(benchmark::State& state) {
  Problem const p = big_causal();
  Machine const m = machine_preset("h200");
  CostModel const cost = default_model(p);
  PlanEvaluator ev(p, m, cost);
  Schedule const schedule = ev.to_schedule(list_schedule_seeds(ev, LaunchModel::kPersistent).front().plan, "x");
  for (auto _ : state) benchmark::DoNotOptimize(simulate(p, m, cost, schedule).makespan);
}
BENCHMARK(BM_simulate_plan)->Unit(benchmark::kMillisecond);

void BM_search_to_1pct(benchmark::State& state) {
  Problem const p = big_causal();
  Machine const m = machine_preset("h200");
  CostModel const cost = default_model(p);
  double gap = 0;
  for (auto _ : state) {
    SearchOptions options;
    options.threads = 2;
    // Stop at the first round end within 1% of the bound: the budget is only a safety net.
    options.budget_ms = 0;
    SearchResult r = search(p, m, cost, options);
    gap = r.gap;
    if (gap > 0.01) {
      options.budget_ms = 10'000;
      r = search(p, m, cost, options);
      gap = r.gap;
    }
    benchmark::DoNotOptimize(r.makespan);
  }
  state.counters["gap_pct"] = 100.0 * gap;
}
BENCHMARK(BM_search_to_1pct)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
