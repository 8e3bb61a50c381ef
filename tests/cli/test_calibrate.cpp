// Calibration (dagsim/model/calibrate.h, `dash calibrate`): a trace reads back as written, gives
// back the schedule that ran, and a trace of the simulator itself is fitted back to the rates that
// made it, so that the fitted model predicts that trace's makespan exactly.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/calibrate.h"
#include "dagsim/model/profile.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/trace.h"
#include "runtime/kernels/family_model.h"
#include "tests/cli/dash_process.h"
#include "tests/shape.h"

namespace {

namespace fs = std::filesystem;
using namespace dash::sim;
using dash::test::Output;
using dash::test::run_dash;

Problem causal_problem(int batch, int heads, int seqlen, int head_dim) {
  return dash::test::kernel_shape(batch, heads, seqlen, head_dim, Mask{MaskKind::kCausal, 0, 0},
                                  dash::rt::KernelFamily::kSm90);
}

/// The simulator's trace of `strategy` on `p` under `rates`, written and read back.
TraceRecord simulated_trace(Problem const& p, int sms, KernelRates const& rates,
                            std::string const& strategy, Schedule* schedule_out = nullptr,
                            Cycles* makespan = nullptr) {
  Machine const m = machine_with_sms(sms);
  Schedule const s = make_strategy(strategy, p, m);
  SimResult const r = simulate(p, m, default_model(p, rates), s);
  TraceMeta const meta{p, "sm90", sms, "simulated"};
  if (schedule_out != nullptr) *schedule_out = s;
  if (makespan != nullptr) *makespan = r.makespan;
  return trace_from_json(to_chrome_trace(timeline_of(r), "test", &meta));
}

auto key(Slice const& s) {
  return std::tie(s.cta, s.kind, s.batch, s.head, s.q_tile, s.kv_tile, s.start, s.finish, s.ready,
                  s.sm);
}

}  // namespace

TEST_CASE("calibrate: a trace reads back as it was written") {
  Problem const p = causal_problem(1, 2, 1024, 128);
  Machine const m = machine_with_sms(8);
  SimResult const r =
      simulate(p, m, default_model(p, dash::rt::family_model_rates(dash::rt::KernelFamily::kSm90)),
               make_strategy("fa3", p, m));
  Timeline const written = timeline_of(r);
  TraceMeta const meta{p, "sm90", 8, "simulated"};
  TraceRecord const t = trace_from_json(to_chrome_trace(written, "x", &meta));
  CHECK(t.problem == p);
  CHECK(t.family == "sm90");
  CHECK(t.sms == 8);
  CHECK(t.timeline.makespan == written.makespan);
  CHECK(t.timeline.cta_sms == written.cta_sms);
  CHECK(t.timeline.time_unit == "model cycles");
  std::vector<Slice> a = written.slices;
  std::vector<Slice> b = t.timeline.slices;
  auto by_key = [](Slice const& x, Slice const& y) { return key(x) < key(y); };
  std::sort(a.begin(), a.end(), by_key);
  std::sort(b.begin(), b.end(), by_key);
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k) CHECK(key(a[k]) == key(b[k]));
}

TEST_CASE("calibrate: the trace gives back the schedule that ran") {
  for (char const* strategy : {"fa3", "descending", "symmetric-shift"}) {
    INFO(strategy);
    Schedule s;
    TraceRecord const t =
        simulated_trace(causal_problem(2, 2, 2048, 64), 16,
                        dash::rt::family_model_rates(dash::rt::KernelFamily::kSm90), strategy, &s);
    auto const back = schedule_from_trace(t);
    REQUIRE(back.has_value());
    CHECK(back->ctas == s.ctas);
    CHECK(back->dq_order == s.dq_order);
  }
  // GQA: the dK/dV order is not in a trace.
  Problem gqa = causal_problem(1, 4, 512, 64);
  gqa.kv_heads = 2;
  CHECK_FALSE(schedule_from_trace(simulated_trace(gqa, 8, KernelRates{}, "fa3")).has_value());
}

TEST_CASE("calibrate: a simulated trace is fitted back to the rates that made it") {
  KernelRates const truth{1500, 24, 700, 2, 3000};
  std::vector<TraceRecord> traces;
  // Two head dims (two step costs), a causal mask (waits, so hand-off samples).
  traces.push_back(simulated_trace(causal_problem(1, 4, 4096, 128), 32, truth, "fa3"));
  traces.push_back(simulated_trace(causal_problem(2, 4, 2048, 64), 32, truth, "descending"));
  std::vector<FamilyRates> const base{{"sm90", KernelRates{999, 9, 9, 2}, "base"}};
  std::vector<CalibrationFit> const fits = calibrate(traces, base);
  REQUIRE(fits.size() == 1);
  CalibrationFit const& f = fits[0];
  CHECK(f.family == "sm90");
  CHECK(f.flops_per_cycle.samples > 100);
  CHECK(f.bytes_per_cycle.samples > 100);
  CHECK(f.latency.samples > 10);
  CHECK(f.latency.value == 700);
  CHECK(f.latency.spread == 0);
  CHECK(f.item.samples > 10);
  // A first step's period also holds what its successor waited for (fa3's causal waits), so the
  // samples spread; their median is the truth.
  CHECK(f.item.value == 3000);
  CHECK(f.rates.item_cycles == 3000);
  // Rounding up to whole cycles leaves the rates within a cycle's worth; the model they give is the
  // truth's exactly.
  CHECK(std::abs(f.rates.flops_per_cycle - truth.flops_per_cycle) <= 1);
  CHECK(std::abs(f.rates.reduce_bytes_per_cycle - truth.reduce_bytes_per_cycle) <= 1);
  CHECK(f.rates.dq_buffer == 2);
  for (TraceRecord const& t : traces) {
    CHECK(default_model(t.problem, f.rates) == default_model(t.problem, truth));
  }
  // A family with no full step has nothing to fit.
  Problem tiny = causal_problem(1, 1, 64, 128);
  CHECK_THROWS_WITH(calibrate({simulated_trace(tiny, 4, truth, "fa3")}, base),
                    Catch::Contains("no full step"));
}

TEST_CASE("calibrate: a step rate per head dim is fitted back per head dim") {
  // Head dim 64 at its own rate (its steps do more elementwise work per FLOP), 128 at the common one.
  KernelRates truth{1500, 24, 700, 2, 3000};
  truth.flops_by_head_dim = {{64, 1200}};
  std::vector<TraceRecord> traces;
  traces.push_back(simulated_trace(causal_problem(1, 4, 4096, 128), 32, truth, "fa3"));
  traces.push_back(simulated_trace(causal_problem(2, 4, 2048, 64), 32, truth, "descending"));
  // The base has an entry for a head dim not traced (kept) and one for a traced one (replaced).
  KernelRates base_rates{999, 9, 9, 2};
  base_rates.flops_by_head_dim = {{64, 5}, {96, 777}};
  std::vector<CalibrationFit> const fits = calibrate(traces, {{"sm90", base_rates, "base"}});
  REQUIRE(fits.size() == 1);
  CalibrationFit const& f = fits[0];
  REQUIRE(f.flops_by_head_dim.size() == 2);
  CHECK(f.flops_by_head_dim[0].first == 64);
  CHECK(std::abs(f.flops_by_head_dim[0].second.value - 1200) <= 1);
  CHECK(f.flops_by_head_dim[1].first == 128);
  CHECK(std::abs(f.flops_by_head_dim[1].second.value - 1500) <= 1);
  CHECK(std::abs(f.rates.flops_for(64) - 1200) <= 1);
  CHECK(std::abs(f.rates.flops_for(128) - 1500) <= 1);
  CHECK(f.rates.flops_for(96) == 777);
  for (TraceRecord const& t : traces) {
    INFO(t.problem.head_dim);
    CHECK(default_model(t.problem, f.rates) == default_model(t.problem, truth));
  }
  // Under one F for both, the model of one of them is off.
  KernelRates one = f.rates;
  one.flops_by_head_dim.clear();
  CHECK((default_model(traces[0].problem, one) != default_model(traces[0].problem, truth) ||
         default_model(traces[1].problem, one) != default_model(traces[1].problem, truth)));
}

TEST_CASE("calibrate: dash calibrate writes a profile that reproduces a simulated trace") {
  dash::test::Scratch const scratch;
  fs::path const& dir = scratch.dir;
  std::string const trace = (dir / "t.json").string();
  std::string const profile = (dir / "p.json").string();
  std::string const shape = "--sms 32 --heads 4 --seqlen 4096 --mask causal --strategy fa3";
  Output const sim = run_dash(fmt::format("simulate {} --json --trace '{}'", shape, trace));
  REQUIRE(sim.rc == 0);
  Output const cal = run_dash(fmt::format("calibrate '{}' --out '{}' --json", trace, profile));
  INFO(cal.err);
  REQUIRE(cal.rc == 0);
  nlohmann::json const j = nlohmann::json::parse(cal.out);
  REQUIRE(j["families"].size() == 1);
  // The built-in sm90 rates come back (the trace was made with them), and the fitted model gives
  // the trace's makespan to the cycle.
  KernelRates const builtin = dash::rt::family_model_rates(dash::rt::KernelFamily::kSm90);
  CHECK(j["families"][0]["flops_per_cycle"] == builtin.flops_per_cycle);
  CHECK(j["families"][0]["reduce_bytes_per_cycle"] == builtin.reduce_bytes_per_cycle);
  CHECK(j["families"][0]["latency"] == builtin.latency);
  CHECK(j["families"][0]["item_cycles"] == builtin.item_cycles);
  CHECK(j["traces"][0]["predicted_cycles"] == j["traces"][0]["measured_cycles"]);
  CHECK(j["traces"][0]["measured_cycles"] == nlohmann::json::parse(sim.out)["makespan"]);
  MachineProfile const written = read_profile_file(profile, dash::rt::kFamilyNames);
  REQUIRE(written.rates_for("sm90") != nullptr);
  CHECK(*written.rates_for("sm90") == builtin);
  CHECK(*written.rates_for("sm80") == dash::rt::family_model_rates(dash::rt::KernelFamily::kSm80));
  // The table form says the same.
  Output const table = run_dash(fmt::format("calibrate '{}'", trace));
  CHECK(table.rc == 0);
  CHECK(table.out.find("(+0.0%)") != std::string::npos);

  dash::test::check_user_error(run_dash("calibrate"), "traces is required");
  dash::test::check_user_error(run_dash("calibrate /nonexistent/t.json"),
                               "cannot read trace '/nonexistent/t.json': no such file");
  std::ofstream(dir / "plain.json") << R"({"traceEvents": [], "otherData": {"title": "x"}})";
  dash::test::check_user_error(
      run_dash(fmt::format("calibrate '{}'", (dir / "plain.json").string())),
      "otherData has no \"problem\"");
  std::string const text = dash::test::slurp(trace);
  std::string wrong = text;
  wrong.replace(wrong.find("\"family\":\"sm90\""), 15, "\"family\":\"sm77\"");
  std::ofstream(dir / "family.json") << wrong;
  dash::test::check_user_error(
      run_dash(fmt::format("calibrate '{}'", (dir / "family.json").string())),
      "unknown kernel family 'sm77'");
  std::string outside = text;
  outside.replace(outside.find("\"name\":\"C b0 h0 i"), 17, "\"name\":\"C b7 h0 i");
  std::ofstream(dir / "outside.json") << outside;
  dash::test::check_user_error(
      run_dash(fmt::format("calibrate '{}'", (dir / "outside.json").string())),
      "is not a step of the problem");
  dash::test::check_user_error(
      run_dash(fmt::format("calibrate '{}' --out /nonexistent/p.json", trace)),
      "directory '/nonexistent' does not exist");
}
