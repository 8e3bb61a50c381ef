// dash fidelity: the model against measured `dash bench --json` runs (predicted vs measured speedup
// over fa3 and time), under a machine profile, and with --fit the family's rates fitted to them.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/model/profile.h"
#include "runtime/kernels/family_model.h"
#include "tools/bench_fidelity.h"
#include "tools/bench_report.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace dash::cli {
namespace {

struct FidelityOptions {
  std::vector<std::string> files;
  std::vector<std::string> held_out;
  std::vector<std::string> main_kernel;
  std::string family = std::string(rt::family_name(rt::kDefaultFamily));
  std::string profile;
  std::string out;
  bool fit = false;
  bool hold_prepost = false;
  bool json = false;
};

nlohmann::json summary_json(Fidelity const& f) {
  return {{"mean_abs_log_speedup_error", f.speedup_error}, {"max_abs_log_speedup_error", f.speedup_error_max},
          {"speedups_within_3pct", f.within_3pct},         {"speedups_compared", f.compared},
          {"mean_abs_log_time_error", f.time_error},       {"max_abs_log_time_error", f.time_error_max},
          {"mean_abs_log_order_cost_error", f.order_error}, {"max_abs_log_order_cost_error", f.order_error_max},
          {"order_costs_within_3pct", f.order_within_3pct}, {"order_costs_compared", f.order_compared}};
}

/// One row of the JSON report: the measured row under the profile's rates and, with --fit, the
/// fitted rates' prediction of it.
nlohmann::json row_json(FidelityRow const& r, FidelityRow const* fitted) {
  nlohmann::json row{{"shape", shape_label(r.shape->problem)},
                     {"file", r.shape->source},
                     {"strategy", r.strategy},
                     {"measured_ms", r.measured_ms},
                     {"measured_vs_fa3", r.measured_speedup},
                     {"predicted_cycles", r.predicted},
                     {"predicted_call_cycles", r.predicted_call},
                     {"predicted_vs_fa3", r.predicted_speedup}};
  if (r.measured_nondet_ms > 0) row["measured_nondet_ms"] = r.measured_nondet_ms;
  if (r.measured_nondet_ms > 0 && r.predicted_nondet_call > 0) {
    row["measured_det_over_nondet_time"] = r.measured_order_cost();
    row["predicted_det_over_nondet_time"] = r.predicted_order_cost();
    row["predicted_nondet_call_cycles"] = r.predicted_nondet_call;
  }
  if (fitted != nullptr) {
    row["fitted_cycles"] = fitted->predicted;
    row["fitted_vs_fa3"] = fitted->predicted_speedup;
  }
  return row;
}

nlohmann::json main_kernel_json(MainKernelFidelity const& m) {
  return {{"mean_abs_log_error", m.error}, {"max_abs_log_error", m.error_max},
          {"within_3pct", m.within_3pct}, {"compared", m.compared}};
}

std::string main_kernel_line(char const* what, MainKernelFidelity const& m) {
  return fmt::format("{}  makespan vs main-kernel durations: mean |log err| {:.3f} (max {:.3f}), {} of {} within 3%\n",
                     what, m.error, m.error_max, m.within_3pct, m.compared);
}

std::string summary_line(char const* what, Fidelity const& f) {
  std::string line = fmt::format(
      "{}: speedup over fa3 mean |log err| {:.3f} (max {:.3f}), {} of {} within 3%; time mean |log err| {:.3f} "
      "(max {:.3f})\n",
      what, f.speedup_error, f.speedup_error_max, f.within_3pct, f.compared, f.time_error, f.time_error_max);
  if (f.order_compared > 0) {
    line += fmt::format("{}  price of the order (det / nondet time): mean |log err| {:.3f} (max {:.3f}), {} of {} within 3%\n",
                        what, f.order_error, f.order_error_max, f.order_within_3pct, f.order_compared);
  }
  return line;
}

void run_fidelity(CLI::App const& sub, FidelityOptions const& o) {
  auto const family = rt::parse_family(o.family);
  if (!family) user_error("unknown --family '{}': expected sm80 or sm90", o.family.substr(0, 32));
  if (sub.count("--out") > 0 && !o.fit) user_error("--out writes the fitted profile: give --fit too");
  if (o.hold_prepost && !o.fit) user_error("--hold-prepost keeps a rate out of the fit: give --fit too");
  if (sub.count("--out") > 0) check_writable(o.out, "--out");
  sim::MachineProfile profile =
      sub.count("--profile") > 0 ? sim::read_profile_file(o.profile, rt::kFamilyNames) : sim::builtin_profile();
  sim::KernelRates const base =
      rt::family_rates(profile, *family, sub.count("--profile") > 0 ? "'" + o.profile + "'" : "built in");
  std::vector<MeasuredShape> const shapes = read_measured_shapes(o.files);
  std::vector<MeasuredShape> const held_out =
      o.held_out.empty() ? std::vector<MeasuredShape>{} : read_measured_shapes(o.held_out);
  ShapeSchedules const schedules = make_schedules(shapes);
  ShapeSchedules const held_schedules = make_schedules(held_out);
  MainKernelSet main;
  if (!o.main_kernel.empty()) {
    main.times = read_main_kernel_times(o.main_kernel);
    main.schedules = make_schedules(main.times);
  }
  // The records' makespans, where the whole-call evaluation `whole` (same rates) has them already.
  std::vector<int> const main_rows = main_kernel_rows(main.times, shapes);
  auto const main_fidelity = [&](sim::KernelRates const& r, Fidelity const& whole) {
    return evaluate_main_kernel(main.times, main.schedules, r, profile.clock_mhz, &whole, main_rows);
  };

  Fidelity const before = evaluate_fidelity(shapes, schedules, base, profile.clock_mhz);
  MainKernelFidelity const main_before = main_fidelity(base, before);
  Fidelity const before_held = evaluate_fidelity(held_out, held_schedules, base, profile.clock_mhz);
  sim::KernelRates fitted = base;
  Fidelity after = before;
  Fidelity after_held = before_held;
  MainKernelFidelity main_after = main_before;
  if (o.fit) {
    fitted = fit_rates(shapes, schedules, base, profile.clock_mhz, o.hold_prepost, main);
    after = evaluate_fidelity(shapes, schedules, fitted, profile.clock_mhz);
    after_held = evaluate_fidelity(held_out, held_schedules, fitted, profile.clock_mhz);
    main_after = main_fidelity(fitted, after);
    auto it = std::find_if(profile.families.begin(), profile.families.end(),
                           [&](sim::FamilyRates const& f) { return f.family == o.family; });
    DASH_ASSERT(it != profile.families.end());
    it->rates = fitted;
    it->source = fmt::format(
        "dash fidelity --fit {}: end-to-end deterministic timings of {} shapes ({}); speedup over "
        "fa3 mean |log "
        "error| {:.3f}, time {:.3f} on them{}{}",
        utc_now("%Y-%m-%d"), shapes.size(), fmt::join(o.files, ", "), after.speedup_error,
        after.time_error, o.hold_prepost ? "; the pre/postprocess rate held, not fitted" : "",
        main.times.empty() ? std::string()
                           : fmt::format("; and the makespan to {} main-kernel durations ({}): mean |log error| {:.3f}",
                                         main.times.size(), fmt::join(o.main_kernel, ", "), main_after.error));
    if (sub.count("--out") > 0) sim::write_file_atomic(o.out, sim::to_json(profile));
  }

  if (o.json) {
    nlohmann::json j;
    j["family"] = o.family;
    j["rates"] = sim::rates_to_json(base);
    j["fit"] = summary_json(before);
    if (!held_out.empty()) j["held_out"] = summary_json(before_held);
    if (!main.times.empty()) j["main_kernel"] = main_kernel_json(main_before);
    if (o.fit) {
      j["fitted"] = {{"rates", sim::rates_to_json(fitted)}, {"fit", summary_json(after)}};
      if (!held_out.empty()) j["fitted"]["held_out"] = summary_json(after_held);
      if (!main.times.empty()) j["fitted"]["main_kernel"] = main_kernel_json(main_after);
    }
    j["rows"] = nlohmann::json::array();
    for (std::size_t k = 0; k < before.rows.size(); ++k) {
      j["rows"].push_back(row_json(before.rows[k], o.fit ? &after.rows[k] : nullptr));
    }
    j["held_out_rows"] = nlohmann::json::array();
    for (std::size_t k = 0; k < before_held.rows.size(); ++k) {
      j["held_out_rows"].push_back(row_json(before_held.rows[k], o.fit ? &after_held.rows[k] : nullptr));
    }
    std::puts(j.dump(1).c_str());
    return;
  }
  auto table = [&](char const* heading, Fidelity const& base_rows, Fidelity const& fit_rows) {
    std::printf("%s\n%-44s %-16s %9s %9s %9s %9s %9s %9s\n", heading, "shape", "strategy", "ms", "meas/fa3",
                "pred/fa3", "meas d/n", "pred d/n", o.fit ? "fit/fa3" : "");
    for (std::size_t k = 0; k < base_rows.rows.size(); ++k) {
      FidelityRow const& r = base_rows.rows[k];
      std::printf("%-44s %-16s %9.3f %9.3f %9.3f", shape_label(r.shape->problem).c_str(), r.strategy.c_str(),
                  r.measured_ms, r.measured_speedup, r.predicted_speedup);
      if (r.measured_nondet_ms > 0 && r.predicted_nondet_call > 0) {
        std::printf(" %9.3f %9.3f", r.measured_order_cost(), r.predicted_order_cost());
      } else {
        std::printf(" %9s %9s", "-", "-");
      }
      if (o.fit) std::printf(" %9.3f", fit_rows.rows[k].predicted_speedup);
      std::puts("");
    }
    std::puts("");
  };
  table("fitting set", before, after);
  if (!held_out.empty()) table("held out", before_held, after_held);
  std::printf("%s %s rates: %s\n", o.family.c_str(), sub.count("--profile") > 0 ? o.profile.c_str() : "built-in",
              sim::rates_line(base).c_str());
  std::fputs(summary_line("  fitting set", before).c_str(), stdout);
  if (!held_out.empty()) std::fputs(summary_line("  held out", before_held).c_str(), stdout);
  if (!main.times.empty()) std::fputs(main_kernel_line("", main_before).c_str(), stdout);
  if (o.fit) {
    std::printf("fitted: %s\n", sim::rates_line(fitted).c_str());
    std::fputs(summary_line("  fitting set", after).c_str(), stdout);
    if (!held_out.empty()) std::fputs(summary_line("  held out", after_held).c_str(), stdout);
    if (!main.times.empty()) std::fputs(main_kernel_line("", main_after).c_str(), stdout);
  }
}

}  // namespace

void setup_fidelity(CLI::App& app) {
  auto opts = std::make_shared<FidelityOptions>();
  auto* sub = app.add_subcommand(
      "fidelity", "the model against measured dash bench --json runs; --fit fits the family's rates to them");
  sub->add_option("files", opts->files, "dash bench --json files (deterministic records of named strategies)")
      ->required();
  sub->add_option("--held-out", opts->held_out, "bench files reported, not fitted to");
  sub->add_option("--main-kernel", opts->main_kernel,
                  "main-kernel durations (scripts/kernel_times.py --records): the makespan compared with them "
                  "and, with --fit, fitted to them too");
  sub->add_option("--family", opts->family, "kernel family whose rates are tried: sm80 | sm90")->capture_default_str();
  sub->add_option("--profile", opts->profile, "machine profile (default: the built-in one)");
  sub->add_flag("--fit", opts->fit,
                "fit F, B, L, o, the pre/postprocess rate and, where the profile has a memory floor, its "
                "HBM bandwidth (coordinate descent on the errors)");
  sub->add_flag("--hold-prepost", opts->hold_prepost,
                "with --fit: keep the profile's pre/postprocess rate (measured apart from the main kernel by "
                "scripts/kernel_times.sh) and fit the rest");
  sub->add_option("--out", opts->out, "with --fit: write the profile with the fitted rates");
  sub->add_flag("--json", opts->json, "print JSON instead of a table");
  sub->callback([sub, opts] { run_fidelity(*sub, *opts); });
}

}  // namespace dash::cli
