#include "tools/bench_fidelity.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/json_input.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/mask.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"
#include "runtime/kernels/family_model.h"

namespace dash::cli {
namespace {

using json = nlohmann::json;

constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{1} << 28;

int int_field(json const& r, char const* key, std::string const& where) {
  auto const it = r.find(key);
  if (it == r.end() || !it->is_number_integer()) user_error("{}: a record has no integer \"{}\"", where, key);
  std::int64_t const v = it->get<std::int64_t>();
  if (v < 0 || v > (1 << 30)) user_error("{}: \"{}\" {} is out of range", where, key, v);
  return static_cast<int>(v);
}

std::string string_field(json const& r, char const* key, std::string const& where) {
  auto const it = r.find(key);
  if (it == r.end() || !it->is_string()) user_error("{}: a record has no string \"{}\"", where, key);
  return it->get<std::string>();
}

/// The problem of a bench record (its shape fields), validated.
sim::Problem problem_of(json const& r, std::string const& file) {
  sim::Problem p;
  p.batch = int_field(r, "batch", file);
  p.q_heads = int_field(r, "heads", file);
  p.kv_heads = int_field(r, "kv_heads", file);
  p.seqlen_q = int_field(r, "seqlen_q", file);
  p.seqlen_k = int_field(r, "seqlen_k", file);
  p.head_dim = int_field(r, "head_dim", file);
  p.tile_m = int_field(r, "tile_m", file);
  p.tile_n = int_field(r, "tile_n", file);
  p.mask = sim::parse_mask(string_field(r, "mask", file));
  sim::validate_problem(p);
  return p;
}

/// The records of a JSON file that must be an array of objects (`what` names the file's kind in
/// the errors, `document` the kind of document it must be).
json read_records(std::string const& file, char const* what, char const* document) {
  json doc = sim::parse_user_json(sim::read_user_file(file, what, kMaxFileBytes), 4);
  if (!doc.is_array()) user_error("{}: not a {} document (an array of records)", file, document);
  for (json const& r : doc) {
    if (!r.is_object()) user_error("{}: a record is not an object", file);
  }
  return doc;
}

/// A positive, finite "ms" of a record.
double ms_field(json const& r, std::string const& where) {
  auto const it = r.find("ms");
  double const ms = it != r.end() && it->is_number() ? it->get<double>() : 0.0;
  if (!(ms > 0) || !std::isfinite(ms)) user_error("{}: a record's \"ms\" is not a positive time", where);
  return ms;
}

/// The pre/postprocess of a measured call with (`ordered`) or without tickets: zeroing dQ's
/// accumulator as the shape's records say, else as the kernels before the records said did.
sim::Cycles measured_prepost(MeasuredShape const& s, sim::KernelRates const& rates, bool ordered) {
  std::optional<bool> const& zeroed = ordered ? s.det_dq_zeroed : s.nondet_dq_zeroed;
  if (!zeroed) return sim::prepost_cycles(s.problem, rates, ordered);
  return sim::prepost_cycles(s.problem, rates, *zeroed ? sim::DqZeroing::kZeroed : sim::DqZeroing::kFirstStores);
}

}  // namespace

std::vector<MeasuredShape> read_measured_shapes(std::vector<std::string> const& files) {
  std::vector<std::string> const& names = sim::strategy_names();
  std::vector<MeasuredShape> out;
  for (auto const& file : files) {
    json const doc = read_records(file, "bench file", "dash bench --json");
    // (problem key) -> strategy -> ms, in file order.
    std::map<std::tuple<int, int, int, int, int, int, int, int, std::string, int>, MeasuredShape> shapes;
    std::vector<decltype(shapes)::key_type> order;
    for (json const& r : doc) {
      if (string_field(r, "status", file) != "ok") continue;
      std::string const mode = string_field(r, "mode", file);
      if (mode != "det" && mode != "nondet") continue;
      if (!r.contains("measured") || r["measured"] != true || !r.contains("ms") || !r["ms"].is_number()) continue;
      std::string const strategy = string_field(r, "strategy", file);
      if (std::find(names.begin(), names.end(), strategy) == names.end()) continue;  // search, ...
      sim::Problem const p = problem_of(r, file);
      std::string const mask = string_field(r, "mask", file);
      int const sms = int_field(r, "schedule_sms", file);
      auto const key = std::make_tuple(p.batch, p.q_heads, p.kv_heads, p.seqlen_q, p.seqlen_k, p.head_dim, p.tile_m,
                                       p.tile_n, mask, sms);
      auto [it, fresh] = shapes.try_emplace(key);
      if (fresh) {
        it->second.problem = p;
        it->second.sms = sms;
        it->second.source = file;
        order.push_back(key);
      }
      MeasuredShape& s = it->second;
      double const ms = ms_field(r, file);
      auto at = std::find(s.strategies.begin(), s.strategies.end(), strategy);
      if (at == s.strategies.end()) {
        s.strategies.push_back(strategy);
        s.ms.push_back(0);
        s.nondet_ms.push_back(0);
        at = s.strategies.end() - 1;
      }
      auto const i = static_cast<std::size_t>(at - s.strategies.begin());
      double& slot = mode == "det" ? s.ms[i] : s.nondet_ms[i];
      if (slot > 0) user_error("{}: two {} records of {} for one shape", file, mode, strategy);
      slot = ms;
      if (auto const z = r.find("dq_zeroed"); z != r.end()) {
        if (!z->is_boolean()) user_error("{}: a record's \"dq_zeroed\" is not true or false", file);
        std::optional<bool>& zeroed = mode == "det" ? s.det_dq_zeroed : s.nondet_dq_zeroed;
        if (zeroed && *zeroed != z->get<bool>()) {
          user_error("{}: the {} records of d={} {} s={}/{} b={} h={}/{} disagree on \"dq_zeroed\" ({} says {})",
                     file, mode, p.head_dim, mask, p.seqlen_q, p.seqlen_k, p.batch, p.q_heads, p.kv_heads,
                     strategy, z->get<bool>());
        }
        zeroed = z->get<bool>();
      }
    }
    for (auto const& key : order) {
      MeasuredShape s = shapes[key];
      // A strategy measured only without order has no place in the comparison.
      for (std::size_t i = s.strategies.size(); i-- > 0;) {
        if (s.ms[i] > 0) continue;
        s.strategies.erase(s.strategies.begin() + static_cast<std::ptrdiff_t>(i));
        s.ms.erase(s.ms.begin() + static_cast<std::ptrdiff_t>(i));
        s.nondet_ms.erase(s.nondet_ms.begin() + static_cast<std::ptrdiff_t>(i));
      }
      auto const fa3 = std::find(s.strategies.begin(), s.strategies.end(), "fa3");
      if (fa3 == s.strategies.end()) continue;  // no reference for the speedups
      auto const k = fa3 - s.strategies.begin();
      std::swap(s.strategies[0], s.strategies[static_cast<std::size_t>(k)]);
      std::swap(s.ms[0], s.ms[static_cast<std::size_t>(k)]);
      std::swap(s.nondet_ms[0], s.nondet_ms[static_cast<std::size_t>(k)]);
      out.push_back(std::move(s));
    }
  }
  if (out.empty()) user_error("no measured deterministic fa3 record in the bench files");
  return out;
}

std::vector<MainKernelTime> read_main_kernel_times(std::vector<std::string> const& files) {
  std::vector<std::string> const& names = sim::strategy_names();
  std::vector<MainKernelTime> out;
  for (auto const& file : files) {
    json const doc = read_records(file, "main-kernel times file", "scripts/kernel_times.py --records");
    for (json const& r : doc) {
      auto const part = r.find("part");
      if (part == r.end() || *part != "main kernel") {
        user_error("{}: a record without \"part\": \"main kernel\" (a dash bench file times whole calls; "
                   "main-kernel durations come from scripts/kernel_times.py --records)",
                   file);
      }
      if (string_field(r, "mode", file) != "det") user_error("{}: a main-kernel record that is not \"det\"", file);
      std::string const strategy = string_field(r, "strategy", file);
      if (std::find(names.begin(), names.end(), strategy) == names.end()) {
        user_error("{}: \"{}\" is not a named strategy", file, strategy.substr(0, 32));
      }
      MainKernelTime t;
      t.problem = problem_of(r, file);
      t.sms = int_field(r, "schedule_sms", file);
      if (t.sms < 1) user_error("{}: \"schedule_sms\" must be at least 1", file);
      t.strategy = strategy;
      t.ms = ms_field(r, file);
      t.source = file;
      out.push_back(std::move(t));
    }
  }
  if (out.empty()) user_error("no main-kernel record in the main-kernel times files");
  return out;
}

std::vector<sim::Schedule> make_schedules(std::vector<MainKernelTime> const& times) {
  std::vector<sim::Schedule> out;
  out.reserve(times.size());
  for (MainKernelTime const& t : times) out.push_back(sim::make_strategy(t.strategy, t.problem, sim::machine_with_sms(t.sms)));
  return out;
}

std::vector<int> main_kernel_rows(std::vector<MainKernelTime> const& times, std::vector<MeasuredShape> const& shapes) {
  std::vector<int> rows(times.size(), -1);
  for (std::size_t k = 0; k < times.size(); ++k) {
    int row = 0;  // evaluate_fidelity's rows: shape by shape, strategy by strategy
    for (MeasuredShape const& s : shapes) {
      for (std::string const& name : s.strategies) {
        if (rows[k] < 0 && s.problem == times[k].problem && s.sms == times[k].sms && name == times[k].strategy) {
          rows[k] = row;
        }
        ++row;
      }
    }
  }
  return rows;
}

MainKernelFidelity evaluate_main_kernel(std::vector<MainKernelTime> const& times,
                                        std::vector<sim::Schedule> const& schedules, sim::KernelRates const& rates,
                                        int clock_mhz, Fidelity const* whole, std::vector<int> const& rows) {
  DASH_ASSERT(clock_mhz > 0 && schedules.size() == times.size());
  DASH_ASSERT(whole == nullptr || rows.size() == times.size());
  MainKernelFidelity f;
  double sum = 0;
  for (std::size_t k = 0; k < times.size(); ++k) {
    MainKernelTime const& t = times[k];
    sim::Cycles makespan = 0;
    if (whole != nullptr && rows[k] >= 0) {
      FidelityRow const& row = whole->rows.at(static_cast<std::size_t>(rows[k]));
      DASH_ASSERT(row.strategy == t.strategy && row.shape->problem == t.problem && row.shape->sms == t.sms);
      makespan = row.predicted;
    } else {
      sim::CostModel const cost = rt::tiles_model(t.problem, rates);
      makespan = sim::simulate(t.problem, sim::machine_with_sms(t.sms), cost, schedules[k]).predicted();
    }
    double const e = std::fabs(std::log(static_cast<double>(makespan) / (clock_mhz * 1000.0) / t.ms));
    sum += e;
    f.error_max = std::max(f.error_max, e);
    f.within_3pct += e <= std::log(1.03) ? 1 : 0;
    ++f.compared;
  }
  f.error = f.compared > 0 ? sum / f.compared : 0.0;
  return f;
}

ShapeSchedules make_schedules(std::vector<MeasuredShape> const& shapes) {
  ShapeSchedules out;
  out.reserve(shapes.size());
  for (MeasuredShape const& s : shapes) {
    sim::Machine const m = sim::machine_with_sms(s.sms);
    std::vector<sim::Schedule> per_strategy;
    per_strategy.reserve(s.strategies.size());
    for (auto const& name : s.strategies) per_strategy.push_back(sim::make_strategy(name, s.problem, m));
    out.push_back(std::move(per_strategy));
  }
  return out;
}

Fidelity evaluate_fidelity(std::vector<MeasuredShape> const& shapes, ShapeSchedules const& schedules,
                           sim::KernelRates const& rates, int clock_mhz, bool order) {
  DASH_ASSERT(clock_mhz > 0);
  DASH_ASSERT(schedules.size() == shapes.size());
  // One task per shape; each simulates the shape's strategies.
  auto one = [&](std::size_t k) {
    MeasuredShape const& s = shapes[k];
    sim::Machine const m = sim::machine_with_sms(s.sms);
    sim::CostModel const cost = rt::tiles_model(s.problem, rates);
    sim::CostModel unordered = cost;
    unordered.ordered = false;
    // Per strategy: ordered, then unordered (0 where not wanted).
    std::vector<sim::Cycles> makespans;
    for (std::size_t i = 0; i < schedules[k].size(); ++i) {
      sim::Schedule const& schedule = schedules[k][i];
      makespans.push_back(sim::simulate(s.problem, m, cost, schedule).predicted());
      bool const want = order && i < s.nondet_ms.size() && s.nondet_ms[i] > 0;
      makespans.push_back(want ? sim::simulate(s.problem, m, unordered, schedule).predicted() : 0);
    }
    return makespans;
  };
  std::vector<std::vector<sim::Cycles>> predicted(shapes.size());
  unsigned const threads = std::max(1U, std::min(8U, std::thread::hardware_concurrency()));
  for (std::size_t first = 0; first < shapes.size(); first += threads) {
    std::vector<std::future<std::vector<sim::Cycles>>> tasks;
    for (std::size_t k = first; k < std::min(shapes.size(), first + threads); ++k) {
      tasks.push_back(std::async(std::launch::async, one, k));
    }
    for (std::size_t k = 0; k < tasks.size(); ++k) predicted[first + k] = tasks[k].get();
  }
  Fidelity f;
  double speedup_sum = 0;
  double time_sum = 0;
  double order_sum = 0;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    MeasuredShape const& s = shapes[k];
    // The measured call includes the pre- and postprocess passes: so does the prediction.
    sim::Cycles const prepost = measured_prepost(s, rates, true);
    sim::Cycles const prepost_unordered = measured_prepost(s, rates, false);
    for (std::size_t i = 0; i < s.strategies.size(); ++i) {
      FidelityRow row;
      row.shape = &s;
      row.strategy = s.strategies[i];
      row.predicted = predicted[k][2 * i];
      row.measured_ms = s.ms[i];
      row.predicted_speedup =
          static_cast<double>(predicted[k][0] + prepost) / static_cast<double>(predicted[k][2 * i] + prepost);
      row.predicted_call = row.predicted + prepost;
      if (i < s.nondet_ms.size()) row.measured_nondet_ms = s.nondet_ms[i];
      if (sim::Cycles const unordered = predicted[k][2 * i + 1]; unordered > 0) {
        row.predicted_nondet_call = unordered + prepost_unordered;
        double const e = std::fabs(std::log(row.predicted_order_cost() / row.measured_order_cost()));
        order_sum += e;
        f.order_error_max = std::max(f.order_error_max, e);
        f.order_within_3pct += e <= std::log(1.03) ? 1 : 0;
        ++f.order_compared;
      }
      row.measured_speedup = s.ms[0] / s.ms[i];
      double const predicted_ms = static_cast<double>(row.predicted + prepost) / (clock_mhz * 1000.0);
      double const t = std::fabs(std::log(predicted_ms / row.measured_ms));
      time_sum += t;
      f.time_error_max = std::max(f.time_error_max, t);
      if (i > 0) {
        double const e = std::fabs(std::log(row.predicted_speedup / row.measured_speedup));
        speedup_sum += e;
        f.speedup_error_max = std::max(f.speedup_error_max, e);
        f.within_3pct += e <= std::log(1.03) ? 1 : 0;
        ++f.compared;
      }
      f.rows.push_back(row);
    }
  }
  f.speedup_error = f.compared > 0 ? speedup_sum / f.compared : 0.0;
  f.time_error = f.rows.empty() ? 0.0 : time_sum / static_cast<double>(f.rows.size());
  f.order_error = f.order_compared > 0 ? order_sum / f.order_compared : 0.0;
  return f;
}

Fidelity evaluate_fidelity(std::vector<MeasuredShape> const& shapes, sim::KernelRates const& rates, int clock_mhz) {
  return evaluate_fidelity(shapes, make_schedules(shapes), rates, clock_mhz);
}

sim::KernelRates fit_rates(std::vector<MeasuredShape> const& shapes, ShapeSchedules const& schedules,
                           sim::KernelRates start, int clock_mhz, bool hold_prepost, MainKernelSet const& main) {
  DASH_ASSERT(main.times.size() == main.schedules.size());
  // The records' makespans come from the whole-call rows that simulate the same problems.
  std::vector<int> const rows = main_kernel_rows(main.times, shapes);
  auto objective = [&](sim::KernelRates const& r) {
    Fidelity const f = evaluate_fidelity(shapes, schedules, r, clock_mhz, false);
    double const m =
        main.times.empty() ? 0.0 : evaluate_main_kernel(main.times, main.schedules, r, clock_mhz, &f, rows).error;
    return f.speedup_error + f.time_error + m;
  };
  sim::KernelRates best = start;
  // The pre/postprocess rate starts somewhere reasonable when the profile does not model it.
  if (best.prepost_bytes_per_cycle == 0 && !hold_prepost) best.prepost_bytes_per_cycle = 1000;
  double best_value = objective(best);
  // Each parameter scaled up and down; a step that helps is kept (and tried again), then the step
  // shrinks. o starts from 0, so it moves in steps of a fraction of a full step's cost instead.
  sim::CostModel const reference = sim::default_model(shapes.front().problem, start);
  for (double factor : {1.25, 1.1, 1.03, 1.01}) {
    bool improved = true;
    while (improved) {
      improved = false;
      int const params = 6 + static_cast<int>(best.flops_by_head_dim.size());
      for (int param = 0; param < params; ++param) {
        for (int dir : {1, -1}) {
          sim::KernelRates r = best;
          double const scale = dir > 0 ? factor : 1.0 / factor;
          switch (param) {
            case 0: r.flops_per_cycle = std::max(1, static_cast<int>(std::lround(r.flops_per_cycle * scale))); break;
            case 1:
              r.reduce_bytes_per_cycle = std::max(1, static_cast<int>(std::lround(r.reduce_bytes_per_cycle * scale)));
              break;
            case 2: r.latency = std::max<sim::Cycles>(0, std::llround(static_cast<double>(r.latency) * scale)); break;
            case 3:
              if (hold_prepost) continue;
              r.prepost_bytes_per_cycle =
                  std::max(1, static_cast<int>(std::lround(r.prepost_bytes_per_cycle * scale)));
              break;
            case 4: {
              auto const step = static_cast<sim::Cycles>(std::llround(static_cast<double>(reference.compute) *
                                                                      (factor - 1.0)));
              r.item_cycles = std::max<sim::Cycles>(0, r.item_cycles + dir * std::max<sim::Cycles>(1, step));
              break;
            }
            case 5:
              // The memory floor's bandwidth, where the profile has a floor (the L2 is the GPU's).
              if (r.hbm_bytes_per_cycle == 0) continue;
              r.hbm_bytes_per_cycle =
                  std::max<std::int64_t>(1, std::llround(static_cast<double>(r.hbm_bytes_per_cycle) * scale));
              break;
            default: {
              // A head dim's own F, where the profile has one.
              int& f = r.flops_by_head_dim[static_cast<std::size_t>(param - 6)].flops_per_cycle;
              f = std::max(1, static_cast<int>(std::lround(f * scale)));
            }
          }
          if (r == best) continue;
          double const v = objective(r);
          if (v < best_value - 1e-9) {
            best = r;
            best_value = v;
            improved = true;
          }
        }
      }
    }
  }
  return best;
}

}  // namespace dash::cli
