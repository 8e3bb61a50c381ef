// The model against measured runs (tools/bench_fidelity.h, `dash fidelity`): bench files are read
// as the det timings of named strategies, exact timings score zero error, the pre/postprocess
// bytes are counted as documented, and a fit to timings the model itself made gets back below 1%.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/machine.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/simulate.h"
#include "runtime/kernels/family_model.h"
#include "tests/cli/dash_process.h"
#include "tools/bench_fidelity.h"
#include "tests/shape.h"

namespace {

namespace fs = std::filesystem;
using namespace dash::sim;
using dash::cli::MeasuredShape;
using dash::test::Output;
using dash::test::run_dash;

Problem shape(int heads, int seqlen, char const* mask) {
  return dash::test::kernel_shape(1, heads, seqlen, 128, parse_mask(mask));
}

/// A bench record as `dash bench --json` writes one (the fields the reader uses).
nlohmann::json record(Problem const& p, std::string const& strategy, char const* mode, double ms, int sms) {
  return {{"batch", p.batch},       {"heads", p.q_heads},     {"kv_heads", p.kv_heads},
          {"seqlen_q", p.seqlen_q}, {"seqlen_k", p.seqlen_k}, {"head_dim", p.head_dim},
          {"tile_m", p.tile_m},     {"tile_n", p.tile_n},     {"mask", to_string(p.mask)},
          {"schedule_sms", sms},    {"status", "ok"},         {"mode", mode},
          {"measured", true},       {"ms", ms},               {"strategy", strategy}};
}

/// Times the model itself gives under `truth` (makespan and pre/postprocess at 1000 MHz), in rank
/// order or (`ordered` false) arrival order.
double model_ms(Problem const& p, int sms, std::string const& strategy, KernelRates const& truth,
                bool ordered = true) {
  Machine const m = machine_with_sms(sms);
  CostModel cost = default_model(p, truth);
  cost.ordered = ordered;
  Cycles const c = simulate(p, m, cost, make_strategy(strategy, p, m)).predicted();
  return static_cast<double>(c + prepost_cycles(p, truth, ordered)) / 1e6;
}

/// Each case's timings as the model gives them under `truth`: four named strategies, det (and,
/// with `nondet`, unordered too).
std::vector<MeasuredShape> model_shapes(std::vector<std::pair<Problem, int>> const& cases, KernelRates const& truth,
                                        bool nondet) {
  std::vector<MeasuredShape> shapes;
  for (auto const& [p, sms] : cases) {
    MeasuredShape s;
    s.problem = p;
    s.sms = sms;
    for (char const* name : {"fa3", "descending", "symmetric-shift", "shift"}) {
      s.strategies.emplace_back(name);
      s.ms.push_back(model_ms(p, sms, name, truth));
      if (nondet) s.nondet_ms.push_back(model_ms(p, sms, name, truth, false));
    }
    shapes.push_back(s);
  }
  return shapes;
}

/// A scratch folder that writes JSON documents.
struct Files : dash::test::Scratch {
  [[nodiscard]] std::string write(std::string const& name, nlohmann::json const& j) const {
    return Scratch::write(name, j.dump(1));
  }
};

}  // namespace

TEST_CASE("fidelity: the pre/postprocess bytes") {
  Problem p = shape(4, 1000, "causal");
  p.batch = 2;
  KernelRates r;
  r.prepost_bytes_per_cycle = 0;
  CHECK(prepost_cycles(p, r) == 0);
  r.prepost_bytes_per_cycle = 7;
  std::int64_t const q = 2LL * 1000 * 4 * 128;
  CHECK(prepost_cycles(p, r) == (10 * q + 6) / 7);
  CHECK(prepost_cycles(p, r, false) == (14 * q + 6) / 7);  // unordered: dQ's accumulator zeroed first
  Problem keyless = p;  // causal, 1000 queries on 500 keys: the first Q tiles see no key
  keyless.seqlen_k = 500;
  std::int64_t const keyless_q = q;  // the same queries
  CHECK(prepost_cycles(keyless, r) == (14 * keyless_q + 6) / 7);
  // A kernel whose first contribution claims its tile without tickets zeroes nothing, unless a Q
  // tile sees no key.
  CHECK(prepost_cycles(p, r, false, true) == (10 * q + 6) / 7);
  CHECK(prepost_cycles(keyless, r, false, true) == (14 * keyless_q + 6) / 7);
  CHECK(zeroes_dq(p, false));
  CHECK_FALSE(zeroes_dq(p, true));
  CHECK_FALSE(zeroes_dq(p, false, true));
  CHECK(zeroes_dq(keyless, true));
  // Told how the call zeroed: as told, whatever the order.
  CHECK(prepost_cycles(p, r, DqZeroing::kZeroed) == (14 * q + 6) / 7);
  CHECK(prepost_cycles(p, r, DqZeroing::kFirstStores) == (10 * q + 6) / 7);
  p.kv_heads = 2;  // GQA: the dK/dV accumulators too
  CHECK(prepost_cycles(p, r) == (10 * q + 20 * (q / 2) + 6) / 7);
}

TEST_CASE("fidelity: bench records read as det timings of named strategies, fa3 first") {
  Files const f;
  Problem const p = shape(2, 1024, "causal");
  nlohmann::json doc = nlohmann::json::array();
  doc.push_back(record(p, "descending", "det", 2.0, 8));
  doc.push_back(record(p, "descending", "nondet", 1.0, 8));  // beside its det time
  doc.push_back(record(p, "shift", "nondet", 1.2, 8));       // no det time: skipped
  doc.push_back(record(p, "search", "det", 1.5, 8));         // its schedule is not rebuilt: skipped
  doc.push_back(record(p, "fa3", "det", 3.0, 8));
  auto refused = record(p, "shift", "det", 9.0, 8);
  refused["status"] = "refused";
  doc.push_back(refused);
  doc.push_back(record(shape(2, 512, "full"), "shift", "det", 1.0, 8));  // no fa3 for that shape: dropped
  std::vector<MeasuredShape> const shapes = dash::cli::read_measured_shapes({f.write("a.json", doc)});
  REQUIRE(shapes.size() == 1);
  CHECK(shapes[0].problem == p);
  CHECK(shapes[0].sms == 8);
  CHECK(shapes[0].strategies == std::vector<std::string>{"fa3", "descending"});
  CHECK(shapes[0].ms == std::vector<double>{3.0, 2.0});
  CHECK(shapes[0].nondet_ms == std::vector<double>{0.0, 1.0});
  CHECK_FALSE(shapes[0].det_dq_zeroed.has_value());  // a file from before the field
  CHECK_FALSE(shapes[0].nondet_dq_zeroed.has_value());

  // dq_zeroed, per mode, where the records carry it; records of one mode must agree.
  auto zeroed = [&](std::string const& strategy, char const* mode, nlohmann::json value) {
    nlohmann::json r = record(p, strategy, mode, 1.0, 8);
    r["dq_zeroed"] = std::move(value);
    return r;
  };
  nlohmann::json marked = nlohmann::json::array(
      {zeroed("fa3", "det", false), zeroed("fa3", "nondet", true), zeroed("shift", "det", false)});
  std::vector<MeasuredShape> const with_field = dash::cli::read_measured_shapes({f.write("z.json", marked)});
  REQUIRE(with_field.size() == 1);
  CHECK(with_field[0].det_dq_zeroed == std::optional<bool>(false));
  CHECK(with_field[0].nondet_dq_zeroed == std::optional<bool>(true));
  nlohmann::json disagree = nlohmann::json::array(
      {zeroed("fa3", "nondet", true), zeroed("fa3", "det", false), zeroed("shift", "nondet", false)});
  CHECK_THROWS_WITH(dash::cli::read_measured_shapes({f.write("z2.json", disagree)}),
                    Catch::Contains("disagree on \"dq_zeroed\" (shift says false)"));
  nlohmann::json not_bool = nlohmann::json::array({zeroed("fa3", "det", 0)});
  CHECK_THROWS_WITH(dash::cli::read_measured_shapes({f.write("z3.json", not_bool)}),
                    Catch::Contains("\"dq_zeroed\" is not true or false"));

  CHECK_THROWS_WITH(dash::cli::read_measured_shapes({f.write("b.json", nlohmann::json::object())}),
                    Catch::Contains("not a dash bench --json document"));
  nlohmann::json twice = nlohmann::json::array({record(p, "fa3", "det", 1.0, 8), record(p, "fa3", "det", 1.1, 8)});
  CHECK_THROWS_WITH(dash::cli::read_measured_shapes({f.write("c.json", twice)}), Catch::Contains("two det records"));
  nlohmann::json twice_nondet = nlohmann::json::array(
      {record(p, "fa3", "det", 1.0, 8), record(p, "fa3", "nondet", 1.0, 8), record(p, "fa3", "nondet", 1.1, 8)});
  CHECK_THROWS_WITH(dash::cli::read_measured_shapes({f.write("c2.json", twice_nondet)}),
                    Catch::Contains("two nondet records"));
  nlohmann::json none = nlohmann::json::array({record(p, "shift", "det", 1.0, 8)});
  CHECK_THROWS_WITH(dash::cli::read_measured_shapes({f.write("d.json", none)}),
                    Catch::Contains("no measured deterministic fa3 record"));
}

TEST_CASE("fidelity: the model's own timings score zero, and a fit gets back to them") {
  KernelRates const truth{1500, 24, 700, 2, 2000, 900};
  std::vector<std::pair<Problem, int>> const cases{{shape(2, 2048, "causal"), 16},
                                                   {shape(2, 1024, "full"), 12},
                                                   {shape(4, 1024, "causal"), 24}};
  std::vector<MeasuredShape> const shapes = model_shapes(cases, truth, true);
  dash::cli::Fidelity const exact = dash::cli::evaluate_fidelity(shapes, truth, 1000);
  CHECK(exact.rows.size() == 12);
  CHECK(exact.compared == 9);
  CHECK(exact.within_3pct == 9);
  CHECK(exact.speedup_error < 1e-12);
  CHECK(exact.time_error < 1e-12);
  CHECK(exact.order_compared == 12);
  CHECK(exact.order_within_3pct == 12);
  CHECK(exact.order_error < 1e-12);
  // Each row's predicted calls (pre/postprocess included) are the model's own timings, with the
  // order and without it, at the 1000 MHz clock the timings were made at.
  for (dash::cli::FidelityRow const& r : exact.rows) {
    REQUIRE(r.predicted_nondet_call > 0);
    CHECK(static_cast<double>(r.predicted_call) == Approx(r.measured_ms * 1e6).epsilon(1e-9));
    CHECK(static_cast<double>(r.predicted_nondet_call) ==
          Approx(r.measured_nondet_ms * 1e6).epsilon(1e-9));
  }
  // The order costs something somewhere here (descending's chains), and the rows say so.
  CHECK(std::any_of(exact.rows.begin(), exact.rows.end(),
                    [](dash::cli::FidelityRow const& r) { return r.measured_order_cost() > 1.01; }));
  // Timings where det and nondet ran alike: the model's price of the order is then an error.
  std::vector<MeasuredShape> level = shapes;
  for (auto& s : level) s.nondet_ms = s.ms;
  CHECK(dash::cli::evaluate_fidelity(level, truth, 1000).order_error > 0.001);
  // Runs without tickets that zeroed nothing (the first partial to claim each tile stored it), as
  // their records say: modelled so, and only so.
  std::vector<MeasuredShape> claimed = shapes;
  for (std::size_t k = 0; k < claimed.size(); ++k) {
    MeasuredShape& s = claimed[k];
    Cycles const saved = prepost_cycles(s.problem, truth, false) - prepost_cycles(s.problem, truth, false, true);
    REQUIRE(saved > 0);
    for (double& ms : s.nondet_ms) ms -= static_cast<double>(saved) / 1e6;
  }
  CHECK(dash::cli::evaluate_fidelity(claimed, truth, 1000).order_error > 0.001);  // read as zeroing
  for (auto& s : claimed) s.nondet_dq_zeroed = false;  // det's left to the rule: not zeroed here
  CHECK(dash::cli::evaluate_fidelity(claimed, truth, 1000).order_error < 1e-12);
  // A deterministic call that zeroed (as told) costs its zeroing pass more.
  std::vector<MeasuredShape> zeroed_det = shapes;
  zeroed_det[0].det_dq_zeroed = true;
  dash::cli::Fidelity const told = dash::cli::evaluate_fidelity(zeroed_det, truth, 1000);
  CHECK(told.rows[0].predicted_call - exact.rows[0].predicted_call ==
        prepost_cycles(shapes[0].problem, truth, DqZeroing::kZeroed) - prepost_cycles(shapes[0].problem, truth));

  KernelRates const start{2100, 20, 1100, 2, 0, 0};
  dash::cli::Fidelity const before = dash::cli::evaluate_fidelity(shapes, start, 1000);
  KernelRates const fitted = dash::cli::fit_rates(shapes, dash::cli::make_schedules(shapes), start, 1000);
  dash::cli::Fidelity const after = dash::cli::evaluate_fidelity(shapes, fitted, 1000);
  INFO("before " << before.speedup_error << " + " << before.time_error << ", after " << after.speedup_error << " + "
                 << after.time_error);
  CHECK(before.time_error > 0.05);
  CHECK(after.speedup_error < 0.01);
  CHECK(after.time_error < 0.01);
  CHECK(fitted.dq_buffer == truth.dq_buffer);
  // A measured pre/postprocess rate held: the fit leaves it, and still gets back to the truth when
  // the held rate is the true one.
  KernelRates start_held = start;
  start_held.prepost_bytes_per_cycle = truth.prepost_bytes_per_cycle;
  KernelRates const held =
      dash::cli::fit_rates(shapes, dash::cli::make_schedules(shapes), start_held, 1000, true);
  CHECK(held.prepost_bytes_per_cycle == truth.prepost_bytes_per_cycle);
  dash::cli::Fidelity const after_held = dash::cli::evaluate_fidelity(shapes, held, 1000);
  CHECK(after_held.speedup_error < 0.01);
  CHECK(after_held.time_error < 0.01);
}

TEST_CASE("fidelity: a run at 80-row Q tiles is scored with the one dQ buffer its kernel has") {
  // Rates with two dQ buffers, as the sm90 family's are (at 80 rows its kernel has one), and a dQ
  // reduce-add about as long as a step, so that the depth shows in the predictions.
  KernelRates const truth{1500, 4, 700, 2, 2000, 900};
  Problem p = shape(2, 2048, "full");
  p.tile_m = 80;
  int const sms = 16;
  Machine const m = machine_with_sms(sms);
  CostModel const capped = dash::rt::tiles_model(p, truth);
  REQUIRE(capped.dq_buffer == 1);
  CostModel const two = default_model(p, truth);
  REQUIRE(two.dq_buffer == 2);
  MeasuredShape s;
  s.problem = p;
  s.sms = sms;
  bool depth_matters = false;
  for (char const* name : {"fa3", "descending", "symmetric-shift", "shift"}) {
    Schedule const schedule = make_strategy(name, p, m);
    Cycles const one_buffer = simulate(p, m, capped, schedule).predicted();
    depth_matters |= one_buffer != simulate(p, m, two, schedule).predicted();
    s.strategies.emplace_back(name);
    s.ms.push_back(static_cast<double>(one_buffer + prepost_cycles(p, truth)) / 1e6);
  }
  // The depth changes some prediction here, or the check below could not tell the models apart.
  CHECK(depth_matters);
  dash::cli::Fidelity const f = dash::cli::evaluate_fidelity({s}, truth, 1000);
  CHECK(f.compared == 3);
  CHECK(f.speedup_error < 1e-12);
  CHECK(f.time_error < 1e-12);
}

TEST_CASE("fidelity: main-kernel durations read, scored against the makespan, and fitted to") {
  Files const f;
  KernelRates const truth{1500, 24, 700, 2, 2000, 900};
  std::vector<std::pair<Problem, int>> const cases{{shape(2, 2048, "causal"), 16}, {shape(2, 1024, "full"), 12},
                                                   {shape(4, 1024, "causal"), 24}, {shape(1, 512, "full"), 8}};
  // Records as scripts/kernel_times.py --records writes them: the model's own makespans (1000 MHz).
  nlohmann::json doc = nlohmann::json::array();
  for (auto const& [p, sms] : cases) {
    Machine const m = machine_with_sms(sms);
    Cycles const c =
        simulate(p, m, default_model(p, truth), make_strategy("symmetric-shift", p, m)).predicted();
    nlohmann::json r = record(p, "symmetric-shift", "det", static_cast<double>(c) / 1e6, sms);
    r["part"] = "main kernel";
    doc.push_back(r);
  }
  std::vector<dash::cli::MainKernelTime> const times = dash::cli::read_main_kernel_times({f.write("m.json", doc)});
  REQUIRE(times.size() == cases.size());
  CHECK(times[1].problem == cases[1].first);
  CHECK(times[1].sms == 12);
  CHECK(times[1].strategy == "symmetric-shift");
  auto const schedules = dash::cli::make_schedules(times);
  dash::cli::MainKernelFidelity const exact = dash::cli::evaluate_main_kernel(times, schedules, truth, 1000);
  CHECK(exact.compared == 4);
  CHECK(exact.within_3pct == 4);
  CHECK(exact.error < 1e-12);
  // 10% off on one of them: its error, and only its.
  std::vector<dash::cli::MainKernelTime> off = times;
  off[0].ms *= 1.1;
  dash::cli::MainKernelFidelity const one = dash::cli::evaluate_main_kernel(off, schedules, truth, 1000);
  CHECK(one.within_3pct == 3);
  CHECK(one.error_max == Approx(std::log(1.1)).epsilon(1e-9));

  // A fit that answers to the main kernel too: from rates off in every parameter, the whole-call
  // timings of the same shapes and the main-kernel durations both come back within 1%.
  std::vector<MeasuredShape> const shapes = model_shapes(cases, truth, false);
  KernelRates const start{2100, 20, 1100, 2, 0, 0};
  // The records are the shapes' symmetric-shift rows (strategy 2 of 4): their makespans are taken
  // from a whole-call evaluation under the same rates, and score as when simulated again. A record
  // of no shape (another SM count) is simulated.
  std::vector<int> const rows = dash::cli::main_kernel_rows(times, shapes);
  CHECK(rows == std::vector<int>{2, 6, 10, 14});
  dash::cli::Fidelity const whole = dash::cli::evaluate_fidelity(shapes, start, 1000);
  dash::cli::MainKernelFidelity const shared =
      dash::cli::evaluate_main_kernel(times, schedules, start, 1000, &whole, rows);
  dash::cli::MainKernelFidelity const again = dash::cli::evaluate_main_kernel(times, schedules, start, 1000);
  CHECK(shared.error == again.error);
  CHECK(shared.error_max == again.error_max);
  std::vector<dash::cli::MainKernelTime> other = times;
  other[3].sms = 9;
  std::vector<int> const other_rows = dash::cli::main_kernel_rows(other, shapes);
  CHECK(other_rows == std::vector<int>{2, 6, 10, -1});
  std::vector<Schedule> other_schedules = schedules;
  other_schedules[3] = make_strategy("symmetric-shift", other[3].problem, machine_with_sms(9));
  other[3].ms = static_cast<double>(simulate(other[3].problem, machine_with_sms(9), default_model(other[3].problem, truth),
                                             other_schedules[3])
                                        .predicted()) /
                1e6;
  dash::cli::Fidelity const whole_truth = dash::cli::evaluate_fidelity(shapes, truth, 1000);
  dash::cli::MainKernelFidelity const mixed =
      dash::cli::evaluate_main_kernel(other, other_schedules, truth, 1000, &whole_truth, other_rows);
  CHECK(mixed.within_3pct == 4);
  CHECK(mixed.error < 1e-12);
  dash::cli::MainKernelSet const main{times, schedules};
  KernelRates const fitted = dash::cli::fit_rates(shapes, dash::cli::make_schedules(shapes), start, 1000, false, main);
  dash::cli::MainKernelFidelity const after = dash::cli::evaluate_main_kernel(times, schedules, fitted, 1000);
  INFO("main kernel before " << dash::cli::evaluate_main_kernel(times, schedules, start, 1000).error << ", after "
                             << after.error);
  CHECK(dash::cli::evaluate_main_kernel(times, schedules, start, 1000).error > 0.05);
  CHECK(after.error < 0.01);
  CHECK(dash::cli::evaluate_fidelity(shapes, fitted, 1000).time_error < 0.01);

  // Refused: a bench record (whole calls), a non-det record, an unknown strategy, no records.
  nlohmann::json plain = nlohmann::json::array({record(cases[0].first, "symmetric-shift", "det", 1.0, 8)});
  CHECK_THROWS_WITH(dash::cli::read_main_kernel_times({f.write("p.json", plain)}),
                    Catch::Contains("without \"part\": \"main kernel\""));
  nlohmann::json nondet = doc;
  nondet[0]["mode"] = "nondet";
  CHECK_THROWS_WITH(dash::cli::read_main_kernel_times({f.write("n.json", nondet)}), Catch::Contains("not \"det\""));
  nlohmann::json unknown = doc;
  unknown[0]["strategy"] = "search";
  CHECK_THROWS_WITH(dash::cli::read_main_kernel_times({f.write("u.json", unknown)}),
                    Catch::Contains("\"search\" is not a named strategy"));
  CHECK_THROWS_WITH(dash::cli::read_main_kernel_times({f.write("e.json", nlohmann::json::array())}),
                    Catch::Contains("no main-kernel record"));
  nlohmann::json zero = doc;
  zero[0]["ms"] = 0;
  CHECK_THROWS_WITH(dash::cli::read_main_kernel_times({f.write("z.json", zero)}),
                    Catch::Contains("not a positive time"));
}

TEST_CASE("fidelity: dash fidelity on a committed run, and its refusals") {
  std::string const run =
      (fs::path(DASH_SOURCE_DIR) / "docs/results/raw/bench-2026-12-03b-offgrid-sm90-3-dash.json").string();
  Output const o = run_dash(fmt::format("fidelity '{}' --json", run));
  INFO(o.err);
  REQUIRE(o.rc == 0);
  nlohmann::json const j = nlohmann::json::parse(o.out);
  CHECK(j["family"] == "sm90");
  CHECK(j["rows"].size() >= 2);
  CHECK(j["rows"][0]["strategy"] == "fa3");
  CHECK(j["fit"]["speedups_compared"].get<int>() == static_cast<int>(j["rows"].size()) - 1);
  dash::test::check_user_error(run_dash("fidelity /nonexistent/b.json"),
                               "cannot read bench file '/nonexistent/b.json'");
  dash::test::check_user_error(run_dash(fmt::format("fidelity '{}' --out /tmp/p.json", run)),
                               "give --fit too");
  dash::test::check_user_error(run_dash(fmt::format("fidelity '{}' --hold-prepost", run)), "give --fit too");
  dash::test::check_user_error(run_dash(fmt::format("fidelity '{}' --family sm99", run)),
                               "unknown --family 'sm99'");
  dash::test::check_user_error(run_dash(fmt::format("fidelity '{}' --main-kernel '{}'", run, run)),
                               "without \"part\": \"main kernel\"");
}
