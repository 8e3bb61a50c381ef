// dash bounds: the work, chain and combined lower bounds on any schedule's makespan.
#include "dagsim/model/bounds.h"

#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/commands.h"
#include "tools/options.h"

namespace dash::cli {
namespace {

struct BoundsOptions {
  CommonOptions common;
};

void run_bounds(BoundsOptions const& opts) {
  Resolved const resolved = resolve(opts.common);
  sim::Bounds const b = sim::compute_bounds(resolved.problem, resolved.machine, resolved.cost);
  if (opts.common.json) {
    nlohmann::json const j = {
        {"work", b.work},
        {"chain", b.chain},
        {"lower", b.lower()},
        {"machine", {{"name", resolved.machine.name}, {"sms", resolved.machine.sms}}},
        {"problem", describe(resolved.problem)}};
    std::puts(j.dump(2).c_str());
    return;
  }
  std::fputs(fmt::format(
                 "{} on {}\nwork   {:>14} cycles\nchain  {:>14} cycles\nlower  {:>14} cycles\n",
                 describe(resolved.problem), describe(resolved.machine), b.work, b.chain, b.lower())
                 .c_str(),
             stdout);
}

}  // namespace

void setup_bounds(CLI::App& app) {
  auto opts = std::make_shared<BoundsOptions>();
  auto* sub =
      app.add_subcommand("bounds", "lower bounds on the makespan: work, chain, their maximum");
  add_common_flags(*sub, opts->common,
                   FlagSet{.strategy = false, .schedule = false, .timeline = false});
  sub->callback([sub, opts] {
    record_given(*sub, opts->common);
    run_bounds(*opts);
  });
}

}  // namespace dash::cli
