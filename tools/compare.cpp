// dash compare: every named strategy (plus a --schedule file) on one problem, side by side.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/bounds.h"
#include "dagsim/model/named_run.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"
#include "dagsim/search/search.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace dash::cli {
namespace {

struct CompareOptions {
  CommonOptions common;
  double search_budget_s = 0.2;  ///< the `search` row's budget; 0 leaves the row out
};

struct Record {
  std::string name;
  std::string refused;  ///< why the strategy produced no schedule here (empty when it did)
  sim::Schedule schedule;
  std::optional<sim::SimResult> result;
};

Record evaluate(std::string const& name, Resolved const& resolved,
                std::optional<sim::Schedule> given) {
  Record record;
  record.name = name;
  if (!given) {
    // A strategy outside its premise may refuse; the others still deserve a comparison.
    sim::NamedRun run = sim::run_named(name, resolved.problem, resolved.machine, resolved.cost, resolved.launch);
    record.refused = std::move(run.refused);
    record.schedule = std::move(run.schedule);
    record.result = std::move(run.result);
    return record;
  }
  // A given schedule (a file, search's) that fails is the user's mistake and stops the command.
  record.schedule = *given;
  sim::validate(resolved.problem, resolved.machine, record.schedule);
  record.result = sim::simulate(resolved.problem, resolved.machine, resolved.cost, record.schedule);
  return record;
}

void run_compare(CompareOptions const& opts) {
  CommonOptions const& o = opts.common;
  Resolved const resolved = resolve(o);
  sim::Bounds const bounds = sim::compute_bounds(resolved.problem, resolved.machine, resolved.cost);
  std::vector<Record> records;
  for (auto const& name : sim::strategy_names()) {
    records.push_back(evaluate(name, resolved, std::nullopt));
  }
  if (!(opts.search_budget_s >= 0 && opts.search_budget_s <= 3600)) {
    user_error("--search-budget must be between 0 and 3600 seconds, got {}", opts.search_budget_s);
  }
  if (opts.search_budget_s > 0) {
    sim::SearchOptions search_options;
    search_options.budget_ms = static_cast<std::int64_t>(opts.search_budget_s * 1000.0);
    search_options.launch = resolved.launch;
    auto found = sim::search(resolved.problem, resolved.machine, resolved.cost, search_options);
    records.push_back(evaluate("search", resolved, std::move(found.schedule)));
  }
  if (resolved.document) {
    auto const& file = resolved.document->schedule;
    records.push_back(evaluate(fmt::format("{} (file)", file.strategy), resolved, file));
  }
  std::optional<sim::Cycles> fa3;
  Record const* best = nullptr;
  for (auto const& r : records) {
    if (!r.result) continue;
    // Ranked by the prediction: the makespan, or the memory floor where the model has one and it
    // is longer (docs/model.md, "The memory floor").
    if (r.name == "fa3") fa3 = r.result->predicted();
    if (best == nullptr || r.result->faster_than(*best->result)) best = &r;
  }
  if (best == nullptr) {
    user_error("no strategy produced a schedule for {}", describe(resolved.problem));
  }
  write_outputs(o, resolved, best->schedule, *best->result,
                fmt::format("best: {} on {}: {}", best->name, describe(resolved.machine),
                            describe(resolved.problem)));

  auto speedup = [&](sim::Cycles makespan) -> std::optional<double> {
    if (!fa3 || makespan <= 0) return std::nullopt;
    return static_cast<double>(*fa3) / static_cast<double>(makespan);
  };
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (auto const& r : records) {
      nlohmann::json j = {{"strategy", r.name}, {"valid", r.result.has_value()}};
      if (!r.result) {
        j["refused"] = r.refused;
      } else {
        auto const s = speedup(r.result->predicted());
        j["makespan"] = r.result->makespan;
        j["memory_floor"] = r.result->memory.cycles;
        j["predicted"] = r.result->predicted();
        j["speedup_vs_fa3"] = s ? nlohmann::json(*s) : nlohmann::json();
        j["lower_bound"] = bounds.lower();
        j["gap"] = sim::gap_to_bound(r.result->makespan, bounds.lower());
        j["utilization"] = r.result->utilization(resolved.machine.sms);
        j["steps"] = r.result->steps;
        j["best"] = &r == best;
      }
      list.push_back(std::move(j));
    }
    std::puts(list.dump(2).c_str());
    return;
  }
  std::string out =
      fmt::format("{} on {}, {} launch\nlower bound {} cycles (work {}, chain {})\n\n",
                  describe(resolved.problem), describe(resolved.machine),
                  sim::to_string(resolved.launch), bounds.lower(), bounds.work, bounds.chain);
  bool const floor = resolved.cost.hbm_bytes_per_cycle > 0;
  out += fmt::format("{:<22} {:>14}{} {:>9} {:>9} {:>9}\n", "strategy", "makespan",
                     floor ? fmt::format(" {:>14}", "memory floor") : std::string(), "vs fa3", "gap", "util");
  for (auto const& r : records) {
    if (!r.result) {
      out += fmt::format("{:<22} refused: {}\n", r.name, r.refused);
      continue;
    }
    auto const s = speedup(r.result->predicted());
    out += fmt::format("{:<22} {:>14}{} {:>9} {:>8.2f}% {:>8.2f}%{}\n", r.name, r.result->makespan,
                       floor ? fmt::format(" {:>14}", r.result->memory.cycles) : std::string(),
                       s ? fmt::format("{:.3f}x", *s) : std::string("-"),
                       100.0 * sim::gap_to_bound(r.result->makespan, bounds.lower()),
                       100.0 * r.result->utilization(resolved.machine.sms),
                       &r == best ? "  <- best" : "");
  }
  std::fputs(out.c_str(), stdout);
}

}  // namespace

void setup_compare(CLI::App& app) {
  auto opts = std::make_shared<CompareOptions>();
  auto* sub = app.add_subcommand(
      "compare", "simulate every named strategy (and --schedule FILE) side by side");
  add_common_flags(*sub, opts->common, FlagSet{.strategy = false});
  sub->add_option("--search-budget", opts->search_budget_s,
                  "seconds for the search row (0: no search row)")
      ->capture_default_str();
  sub->callback([sub, opts] {
    record_given(*sub, opts->common);
    run_compare(*opts);
  });
}

}  // namespace dash::cli
