// dash calibrate: fits the cost model's rates to traces (dash bench --trace on the GPU, or dash
// simulate --trace) and writes them as a machine profile (docs/model.md, "Calibration").
#include "dagsim/model/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/model/profile.h"
#include "dagsim/model/simulate.h"
#include "runtime/kernels/family_model.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace dash::cli {
namespace {

struct CalibrateOptions {
  std::vector<std::string> traces;
  std::string profile;  ///< the base profile (default: the built-in one)
  std::string out;
  bool json = false;
};

struct TraceCheck {
  std::string file;
  std::string family;
  sim::Cycles measured = 0;
  std::optional<sim::Cycles> predicted;  ///< the fitted model on the schedule the trace ran
};

void run_calibrate(CLI::App const& sub, CalibrateOptions const& o) {
  if (o.traces.empty()) user_error("calibrate needs at least one trace file");
  if (sub.count("--out") > 0) check_writable(o.out, "--out");
  sim::MachineProfile profile = sub.count("--profile") > 0
                                    ? sim::read_profile_file(o.profile, rt::kFamilyNames)
                                    : sim::builtin_profile();
  std::vector<sim::TraceRecord> traces;
  for (auto const& path : o.traces) {
    traces.push_back(sim::read_trace_file(path));
    std::string const& family = traces.back().family;
    if (!rt::parse_family(family))
      user_error("{}: unknown kernel family '{}'", path, family.substr(0, 32));
  }
  std::vector<sim::CalibrationFit> const fits = sim::calibrate(traces, profile.families);
  for (auto const& fit : fits) {
    std::string const source = fmt::format(
        "dash calibrate {}: {} trace(s); medians of {} full-step compute, {} dQ reduce, {} "
        "hand-off and {} work-item samples",
        utc_now("%Y-%m-%d"), o.traces.size(), fit.flops_per_cycle.samples,
        fit.bytes_per_cycle.samples, fit.latency.samples, fit.item.samples);
    auto it = std::find_if(profile.families.begin(), profile.families.end(),
                           [&](sim::FamilyRates const& f) { return f.family == fit.family; });
    if (it == profile.families.end()) {
      profile.families.push_back({fit.family, fit.rates, source});
    } else {
      it->rates = fit.rates;
      it->source = source;
    }
  }
  std::vector<TraceCheck> checks;
  for (std::size_t k = 0; k < traces.size(); ++k) {
    sim::TraceRecord const& t = traces[k];
    TraceCheck c{o.traces[k], t.family, t.timeline.makespan, std::nullopt};
    if (auto const schedule = sim::schedule_from_trace(t)) {
      sim::KernelRates const* rates = profile.rates_for(t.family);
      DASH_ASSERT(rates != nullptr);
      c.predicted =
          sim::simulate(
              t.problem,
              sim::machine_with_sms(std::max(t.sms, static_cast<int>(schedule->ctas.size()))),
              rt::family_model(t.problem, *rates, *rt::parse_family(t.family)), *schedule)
              .predicted();
    }
    checks.push_back(c);
  }
  if (sub.count("--out") > 0) sim::write_file_atomic(o.out, sim::to_json(profile));

  if (o.json) {
    nlohmann::json j;
    j["families"] = nlohmann::json::array();
    for (auto const& f : fits) {
      auto rate = [](sim::RateFit const& r) {
        return nlohmann::json{{"median", r.value}, {"spread", r.spread}, {"samples", r.samples}};
      };
      nlohmann::json family = sim::rates_to_json(f.rates);
      family["family"] = f.family;
      family["fit"] = {{"flops_per_cycle", rate(f.flops_per_cycle)},
                       {"reduce_bytes_per_cycle", rate(f.bytes_per_cycle)},
                       {"latency", rate(f.latency)},
                       {"item_cycles", rate(f.item)}};
      j["families"].push_back(std::move(family));
      nlohmann::json by = nlohmann::json::object();
      for (auto const& [d, r] : f.flops_by_head_dim) {
        by[std::to_string(d)] = {{"flops_per_cycle", f.rates.flops_for(d)}, {"fit", rate(r)}};
      }
      j["families"].back()["by_head_dim"] = std::move(by);
    }
    j["traces"] = nlohmann::json::array();
    for (auto const& c : checks) {
      nlohmann::json t{{"file", c.file}, {"family", c.family}, {"measured_cycles", c.measured}};
      t["predicted_cycles"] = c.predicted ? nlohmann::json(*c.predicted) : nlohmann::json();
      j["traces"].push_back(t);
    }
    std::puts(j.dump(1).c_str());
    return;
  }
  std::printf("%-6s %-22s %10s %9s %8s\n", "family", "rate", "fitted", "samples", "spread");
  for (auto const& f : fits) {
    auto line = [&](char const* name, long long value, sim::RateFit const& r) {
      std::printf("%-6s %-22s %10lld %9lld %7.1f%%\n", f.family.c_str(), name, value,
                  static_cast<long long>(r.samples), 100.0 * r.spread);
    };
    line("flops_per_cycle", f.rates.flops_per_cycle, f.flops_per_cycle);
    if (f.flops_by_head_dim.size() > 1) {
      for (auto const& [d, r] : f.flops_by_head_dim) {
        line(fmt::format("  at head dim {}", d).c_str(), f.rates.flops_for(d), r);
      }
    }
    line("reduce_bytes_per_cycle", f.rates.reduce_bytes_per_cycle, f.bytes_per_cycle);
    line("latency", static_cast<long long>(f.rates.latency), f.latency);
    line("item_cycles", static_cast<long long>(f.rates.item_cycles), f.item);
  }
  std::puts("");
  for (auto const& c : checks) {
    if (c.predicted) {
      std::printf(
          "%s (%s): makespan measured %lld, fitted model %lld cycles (%+.1f%%)\n", c.file.c_str(),
          c.family.c_str(), static_cast<long long>(c.measured),
          static_cast<long long>(*c.predicted),
          c.measured > 0
              ? 100.0 * (static_cast<double>(*c.predicted) / static_cast<double>(c.measured) - 1.0)
              : 0.0);
    } else {
      std::printf(
          "%s (%s): makespan measured %lld; its schedule is not in the trace (GQA or an atomic "
          "run)\n",
          c.file.c_str(), c.family.c_str(), static_cast<long long>(c.measured));
    }
  }
}

}  // namespace

void setup_calibrate(CLI::App& app) {
  auto opts = std::make_shared<CalibrateOptions>();
  auto* sub = app.add_subcommand(
      "calibrate",
      "fit the cost model's rates to traces (dash bench --trace) and write a machine profile");
  sub->add_option("traces", opts->traces,
                  "trace files of dash bench --trace (or dash simulate --trace)")
      ->required();
  sub->add_option(
      "--profile", opts->profile,
      "the profile whose other families and dq_buffer are kept (default: the built-in one)");
  sub->add_option("--out", opts->out, "write the calibrated machine profile here (atomically)");
  sub->add_flag("--json", opts->json, "print JSON instead of a table");
  sub->callback([sub, opts] { run_calibrate(*sub, *opts); });
}

}  // namespace dash::cli
