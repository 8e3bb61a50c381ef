// simulate() on the reference case: H200 (132 SMs), batch 1, 16 heads, seqlen 16384, head_dim 128,
// tiles 64x128, causal (about 262k steps). Target: <= 20 ms per simulate() single-threaded
// (Release). The schedule is built here by a tiny fa3-like constructor so the benchmark does not
// depend on the strategies library: work items (h, j) dealt round-robin over the 132 CTAs, Q tiles
// ascending over the visible ones, ranks by lock-step order.
#include <benchmark/benchmark.h>

#include <utility>
#include <vector>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"

namespace {

using namespace dash::sim;

Problem reference_problem() {
  Problem problem;
  problem.batch = 1;
  problem.q_heads = 16;
  problem.kv_heads = 16;
  problem.seqlen_q = 16384;
  problem.seqlen_k = 16384;
  problem.head_dim = 128;
  problem.tile_m = 64;
  problem.tile_n = 128;
  problem.mask = Mask{MaskKind::kCausal, 0, 0};
  return problem;
}

Schedule round_robin_ascending(Problem const& problem, Machine const& machine) {
  Schedule schedule;
  schedule.strategy = "bench-fa3-like";
  schedule.launch = LaunchModel::kPersistent;
  schedule.ctas.resize(static_cast<std::size_t>(machine.sms));
  std::size_t next = 0;
  for (int b = 0; b < problem.batch; ++b) {
    for (int h = 0; h < problem.q_heads; ++h) {
      for (int j = 0; j < problem.kv_tiles(b); ++j) {
        WorkItem item{b, h, j, problem.visible_q_tiles(b, j)};
        schedule.ctas[next % schedule.ctas.size()].items.push_back(std::move(item));
        ++next;
      }
    }
  }
  assign_lockstep_ranks(problem, schedule);
  return schedule;
}

// Dynamic launch: one CTA per work item in (head, KV tile) order, ranks by launch order (a CTA
// only ever waits on CTAs launched before it, so the schedule cannot deadlock).
Schedule launch_order_dynamic(Problem const& problem) {
  Schedule schedule;
  schedule.strategy = "bench-dynamic";
  schedule.launch = LaunchModel::kDynamic;
  for (int h = 0; h < problem.q_heads; ++h) {
    for (int j = 0; j < problem.kv_tiles(0); ++j) {
      schedule.ctas.push_back(Cta{{WorkItem{0, h, j, problem.visible_q_tiles(0, j)}}});
    }
  }
  for (int h = 0; h < problem.q_heads; ++h) {
    for (int i = 0; i < problem.q_tiles(0); ++i) schedule.dq_order.push_back(problem.visible_kv_tiles(0, i));
  }
  return schedule;
}

struct Case {
  Problem problem = reference_problem();
  Machine machine = machine_preset("h200");
  CostModel cost = default_model(problem);
  Schedule schedule = round_robin_ascending(problem, machine);
  Schedule dynamic = launch_order_dynamic(problem);
};

Case const& reference_case() {
  static Case const instance = [] {
    Case c;
    validate(c.problem, c.machine, c.schedule);
    validate(c.problem, c.machine, c.dynamic);
    return c;
  }();
  return instance;
}

/// simulate() of one of the reference case's schedules; its makespan and steps as counters.
void time_simulate(benchmark::State& state, Schedule const& schedule) {
  Case const& c = reference_case();
  for (auto _ : state) {
    SimResult result = simulate(c.problem, c.machine, c.cost, schedule);
    benchmark::DoNotOptimize(result.makespan);
    state.counters["makespan"] = static_cast<double>(result.makespan);
    state.counters["steps"] = static_cast<double>(result.steps);
  }
}

void BM_simulate(benchmark::State& state) { time_simulate(state, reference_case().schedule); }
BENCHMARK(BM_simulate)->Unit(benchmark::kMillisecond);

void BM_simulate_dynamic(benchmark::State& state) { time_simulate(state, reference_case().dynamic); }
BENCHMARK(BM_simulate_dynamic)->Unit(benchmark::kMillisecond);

void BM_validate(benchmark::State& state) {
  Case const& c = reference_case();
  for (auto _ : state) validate(c.problem, c.machine, c.schedule);
}
BENCHMARK(BM_validate)->Unit(benchmark::kMillisecond);

void BM_simulate_events(benchmark::State& state) {
  Case const& c = reference_case();
  for (auto _ : state) benchmark::DoNotOptimize(simulate_events(c.problem, c.machine, c.cost, c.schedule));
}
BENCHMARK(BM_simulate_events)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
