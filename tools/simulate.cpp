// dash simulate: validate one schedule (a named strategy or a file), then simulate it.
#include "dagsim/model/simulate.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/model/bounds.h"
#include "dagsim/model/trace.h"
#include "dagsim/model/working_set.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace dash::cli {
namespace {

struct SimulateOptions {
  CommonOptions common;
  std::string reduction = "det";  ///< det | atomic (CostModel::ordered)
};

struct Spread {
  sim::Cycles min = 0;
  double mean = 0.0;
  sim::Cycles max = 0;
};

template <typename Field>
Spread spread_of(std::vector<sim::CtaStats> const& ctas, Field field) {
  Spread s;
  if (ctas.empty()) return s;
  s.min = s.max = field(ctas.front());
  double total = 0.0;
  for (auto const& c : ctas) {
    sim::Cycles const v = field(c);
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    total += static_cast<double>(v);
  }
  s.mean = total / static_cast<double>(ctas.size());
  return s;
}

nlohmann::json to_json(Spread const& s) {
  return {{"min", s.min}, {"mean", s.mean}, {"max", s.max}};
}

/// The first and last few nodes of the critical path: where it starts and how it ends.
std::string path_excerpt(sim::SimResult const& result, std::size_t each_end) {
  auto const& path = result.critical_path;
  auto label = [&](int id) {
    return sim::node_label(result.dag.nodes[static_cast<std::size_t>(id)]);
  };
  std::string out;
  for (std::size_t k = 0; k < path.size(); ++k) {
    if (path.size() > 2 * each_end && k == each_end) {
      out += " -> ...";
      k = path.size() - each_end;
    }
    if (!out.empty()) out += " -> ";
    out += label(path[k]);
  }
  return out;
}

void run_simulate(SimulateOptions const& opts) {
  CommonOptions const& o = opts.common;
  Resolved resolved = resolve(o);
  if (opts.reduction != "det" && opts.reduction != "atomic") {
    user_error("--reduction must be det or atomic, got '{}'", opts.reduction);
  }
  resolved.cost.ordered = opts.reduction == "det";
  sim::Schedule const schedule = chosen_schedule(o, resolved);
  sim::SimResult const result =
      sim::simulate(resolved.problem, resolved.machine, resolved.cost, schedule);
  sim::Bounds const bounds = sim::compute_bounds(resolved.problem, resolved.machine, resolved.cost);
  std::string const title = fmt::format("{}{} on {}: {}", schedule.strategy,
                                        resolved.cost.ordered ? "" : " (atomic: arrival order)",
                                        describe(resolved.machine), describe(resolved.problem));
  write_outputs(o, resolved, schedule, result, title);

  double const gap = sim::gap_to_bound(result.makespan, bounds.lower());
  double const utilization = result.utilization(resolved.machine.sms);
  auto const busy = spread_of(result.ctas, [](sim::CtaStats const& c) { return c.busy; });
  auto const waiting = spread_of(result.ctas, [](sim::CtaStats const& c) { return c.waiting; });
  auto const idle = spread_of(result.ctas, [](sim::CtaStats const& c) { return c.idle; });
  std::int64_t path_compute = 0;
  for (int const id : result.critical_path) {
    path_compute += result.dag.nodes[static_cast<std::size_t>(id)].kind == sim::NodeKind::kCompute;
  }
  auto const path_nodes = static_cast<std::int64_t>(result.critical_path.size());
  sim::WorkingSet const& live = result.live;
  // The passes around the main kernel (docs/model.md, "Calibration"): not in the makespan.
  sim::Cycles const prepost = sim::prepost_cycles(resolved.problem, resolved.rates, resolved.cost.ordered,
                                                  rt::family_traits(model_family(o)).dq_first_claims);

  if (o.json) {
    nlohmann::json j = {
        {"strategy", schedule.strategy},
        {"valid", true},
        {"machine", {{"name", resolved.machine.name}, {"sms", resolved.machine.sms}}},
        {"problem", describe(resolved.problem)},
        {"launch", sim::to_string(resolved.launch)},
        {"model",
         {{"c", resolved.cost.compute},
          {"r", resolved.cost.reduce},
          {"latency", resolved.cost.latency},
          {"r_kv", resolved.cost.reduce_kv},
          {"dq_buffer", resolved.cost.dq_buffer},
          {"item", resolved.cost.item},
          {"proportional", resolved.cost.proportional},
          {"hbm_bytes_per_cycle", resolved.cost.hbm_bytes_per_cycle},
          {"l2_bytes", resolved.cost.l2_bytes},
          {"ordered", resolved.cost.ordered}}},
        {"steps", result.steps},
        {"ctas", result.ctas.size()},
        {"makespan", result.makespan},
        {"memory_floor",
         {{"cycles", result.memory.cycles},
          {"bytes", result.memory.bytes},
          {"miss_permille", result.memory.miss_permille}}},
        {"predicted", result.predicted()},
        {"prepost_cycles", prepost},
        {"lower_bound", bounds.lower()},
        {"work_bound", bounds.work},
        {"chain_bound", bounds.chain},
        {"gap", gap},
        {"utilization", utilization},
        {"cta_busy", to_json(busy)},
        {"cta_waiting", to_json(waiting)},
        {"cta_idle", to_json(idle)},
        {"critical_path_nodes", path_nodes},
        {"critical_path_compute_nodes", path_compute},
        {"critical_path_excerpt", path_excerpt(result, 3)},
        {"working_set",
         {{"max_heads", live.max_heads},
          {"median_heads", live.median_heads},
          {"max_bytes", live.max_bytes},
          {"median_bytes", live.median_bytes}}},
    };
    std::puts(j.dump(2).c_str());
    return;
  }
  std::string out;
  auto line = [&out](std::string const& text) { out += text + '\n'; };
  line(fmt::format("strategy      {} ({} launch, {} CTAs)", schedule.strategy,
                   sim::to_string(resolved.launch), result.ctas.size()));
  line(fmt::format("machine       {}", describe(resolved.machine)));
  line(fmt::format("problem       {}", describe(resolved.problem)));
  line(fmt::format("model         c={} r={} L={} k={}{}", resolved.cost.compute,
                   resolved.cost.reduce, resolved.cost.latency, resolved.cost.dq_buffer,
                   resolved.cost.proportional ? ", masked steps proportional" : ""));
  line(fmt::format("steps         {}", result.steps));
  line("");
  line(fmt::format("makespan      {:>14} cycles", result.makespan));
  if (resolved.cost.hbm_bytes_per_cycle > 0) {
    // docs/model.md, "The memory floor".
    line(fmt::format("memory floor  {:>14} cycles ({} HBM bytes, {:.1f}% of the steps' traffic missing "
                     "the L2){}",
                     result.memory.cycles, result.memory.bytes, static_cast<double>(result.memory.miss_permille) / 10.0,
                     result.memory.cycles > result.makespan ? ": the prediction" : ""));
  }
  if (prepost > 0) {
    line(fmt::format("pre/post      {:>14} cycles (the passes around the main kernel, not in the makespan)", prepost));
  }
  line(fmt::format("lower bound   {:>14} cycles (work {}, chain {})", bounds.lower(), bounds.work,
                   bounds.chain));
  line(fmt::format("gap           {:>13.2f}%", 100.0 * gap));
  line(fmt::format("utilization   {:>13.2f}%", 100.0 * utilization));
  line("");
  line(fmt::format("per CTA       {:>14} {:>14} {:>14}", "min", "mean", "max"));
  for (auto const& [name, s] :
       {std::pair{"busy", busy}, std::pair{"waiting", waiting}, std::pair{"idle", idle}}) {
    line(fmt::format("  {:<11} {:>14} {:>14.0f} {:>14}", name, s.min, s.mean, s.max));
  }
  line("");
  line(fmt::format("critical path {} nodes ({} compute, {} reduce)", path_nodes, path_compute,
                   path_nodes - path_compute));
  line(fmt::format("  {}", path_excerpt(result, 3)));
  line("");
  line(fmt::format("working set   {} heads (batch, q head) in progress at most, {} median; {:.1f} MiB live at "
                   "most, {:.1f} median (Q, dO in 16 bits and the fp32 dQ accumulator per head; not in the "
                   "model)",
                   live.max_heads, live.median_heads, static_cast<double>(live.max_bytes) / (1 << 20),
                   static_cast<double>(live.median_bytes) / (1 << 20)));
  std::fputs(out.c_str(), stdout);
}

}  // namespace

void setup_simulate(CLI::App& app) {
  auto opts = std::make_shared<SimulateOptions>();
  auto* sub = app.add_subcommand("simulate",
                                 "validate and simulate one schedule; print makespan, bound, gap");
  add_common_flags(*sub, opts->common);
  sub->add_option("--reduction", opts->reduction,
                  "det: dQ (and GQA dK/dV) partials added in the schedule's rank order through tickets; "
                  "atomic: in arrival order, as the kernel's non-deterministic mode (no hand-offs, no chain "
                  "bound)")
      ->capture_default_str();
  sub->callback([sub, opts] {
    record_given(*sub, opts->common);
    run_simulate(*opts);
  });
}

}  // namespace dash::cli
