// Runs the built `dash` binary and checks exit codes, stdout JSON and stderr lines.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/schedule_io.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/bounds.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/working_set.h"
#include "dagsim/search/search.h"
#include "runtime/kernels/family.h"
#include "runtime/kernels/family_model.h"
#include "tests/cli/dash_process.h"

namespace {

namespace fs = std::filesystem;
using dash::test::check_user_error;
using dash::test::Output;
using dash::test::run_dash;
using dash::test::Scratch;
using dash::test::slurp;
using nlohmann::json;

dash::sim::Problem small_problem() {
  dash::sim::Problem p;
  p.q_heads = p.kv_heads = 4;
  p.seqlen_q = p.seqlen_k = 2048;
  p.mask = dash::sim::Mask{dash::sim::MaskKind::kCausal, 0, 0};
  return p;
}
constexpr char const* kSmall = "--sms 16 --heads 4 --seqlen 2048";

}  // namespace

TEST_CASE("cli: simulate --json reports the simulator's exact numbers", "[cli]") {
  Output const o = run_dash(fmt::format("simulate {} --strategy descending --json", kSmall));
  REQUIRE(o.rc == 0);
  CHECK(o.err.empty());
  json const j = json::parse(o.out);
  auto const p = small_problem();
  auto const m = dash::sim::machine_with_sms(16);
  auto const cost = dash::rt::family_default_model(p, dash::rt::kDefaultFamily);
  auto const expected =
      dash::sim::simulate(p, m, cost, dash::sim::make_strategy("descending", p, m));
  auto const bounds = dash::sim::compute_bounds(p, m, cost);
  CHECK(j["strategy"] == "descending");
  CHECK(j["valid"] == true);
  CHECK(j["makespan"].get<std::int64_t>() == expected.makespan);
  CHECK(j["steps"].get<std::int64_t>() == expected.steps);
  CHECK(j["lower_bound"].get<std::int64_t>() == bounds.lower());
  CHECK(j["critical_path_nodes"].get<std::size_t>() == expected.critical_path.size());
  CHECK(j["gap"].get<double>() ==
        Approx(dash::sim::gap_to_bound(expected.makespan, bounds.lower())));
  CHECK(j["utilization"].get<double>() == Approx(expected.utilization(16)));
  CHECK(j["model"]["c"].get<std::int64_t>() == cost.compute);
  // The passes around the main kernel, at the default family's pre/postprocess rate: O and dO read,
  // dQ's accumulator read and dQ written (10 bytes per Q element; every Q tile sees a key).
  auto const rates = dash::rt::family_model_rates(dash::rt::kDefaultFamily);
  REQUIRE(rates.prepost_bytes_per_cycle > 0);
  std::int64_t const q_bytes = 10LL * 2048 * 4 * 128;
  CHECK(j["prepost_cycles"].get<std::int64_t>() ==
        (q_bytes + rates.prepost_bytes_per_cycle - 1) / rates.prepost_bytes_per_cycle);
  // descending on 16 SMs keeps 2 of the 4 heads in progress at once, each 2048 rows x d128 of Q and
  // dO in 16 bits and of the fp32 dQ accumulator (2 MiB).
  auto const live = dash::sim::working_set(p, dash::sim::make_strategy("descending", p, m), 16);
  CHECK(live.max_heads == 2);
  CHECK(j["working_set"]["max_heads"].get<int>() == 2);
  CHECK(j["working_set"]["median_heads"].get<int>() == 2);
  CHECK(j["working_set"]["max_bytes"].get<std::int64_t>() == 2 * 2048 * 128 * (2 + 2 + 4));
  CHECK(j["working_set"]["median_bytes"].get<std::int64_t>() == 2 * 2048 * 128 * (2 + 2 + 4));
}

TEST_CASE("cli: simulate --reduction atomic drops the order", "[cli]") {
  Output const o = run_dash(fmt::format("simulate {} --strategy descending --reduction atomic --json", kSmall));
  REQUIRE(o.rc == 0);
  json const j = json::parse(o.out);
  auto const p = small_problem();
  auto const m = dash::sim::machine_with_sms(16);
  auto cost = dash::rt::family_default_model(p, dash::rt::kDefaultFamily);
  cost.ordered = false;
  auto const expected = dash::sim::simulate(p, m, cost, dash::sim::make_strategy("descending", p, m));
  CHECK(j["model"]["ordered"] == false);
  CHECK(j["makespan"].get<std::int64_t>() == expected.makespan);
  CHECK(j["chain_bound"].get<std::int64_t>() == 0);
  Output const det = run_dash(fmt::format("simulate {} --strategy descending --json", kSmall));
  REQUIRE(det.rc == 0);
  CHECK(json::parse(det.out)["model"]["ordered"] == true);
  CHECK(json::parse(det.out)["makespan"].get<std::int64_t>() >= expected.makespan);
  // Without the order the sm90 family's first contribution to claim a dQ tile stores it, as rank 0's
  // does in order: no zeroing pass either way (the sm80 family's would add 4 bytes per Q element:
  // test_fidelity.cpp).
  CHECK(j["prepost_cycles"].get<std::int64_t>() == json::parse(det.out)["prepost_cycles"].get<std::int64_t>());
  check_user_error(run_dash(fmt::format("simulate {} --reduction fast", kSmall)), "--reduction must be det or atomic");
}

TEST_CASE("cli: search --json reports its working set and the live cap", "[cli]") {
  auto const p = small_problem();
  auto const m = dash::sim::machine_with_sms(16);
  for (char const* cap : {"", " --live-cap 0", " --live-cap 0.5"}) {
    INFO(cap);
    Output const o = run_dash(fmt::format("search {} --evaluations 32 --json{}", kSmall, cap));
    REQUIRE(o.rc == 0);
    json const j = json::parse(o.out);
    std::int64_t const named = dash::sim::working_set(
        p, dash::sim::make_strategy(j["best_named"].get<std::string>(), p, m), 16).max_bytes;
    std::int64_t const asked =
        *cap == 0 ? dash::sim::kDefaultLiveCap : (std::string(cap).ends_with(" 0") ? 0 : 1 << 19);
    CHECK(j["live_cap_bytes"].get<std::int64_t>() == (asked == 0 ? 0 : std::max(asked, named)));
    CHECK(j["live_bytes"].get<std::int64_t>() > 0);
    if (asked > 0) CHECK(j["live_bytes"].get<std::int64_t>() <= j["live_cap_bytes"].get<std::int64_t>());
    CHECK(j["over_live_cap"].get<std::int64_t>() >= 0);
  }
}

TEST_CASE(
    "cli: the Q tile defaults to the kernel family's for the head dim and mask and --tile-m "
    "overrides it",
    "[cli]") {
  auto const m = dash::sim::machine_with_sms(16);
  using dash::rt::KernelFamily;
  for (int const head_dim : {64, 128}) {
    for (auto const mask : {dash::sim::MaskKind::kCausal, dash::sim::MaskKind::kFull}) {
      for (int const tile_m : {0, 64, 80, 128}) {  // 0: not given
        if (tile_m == 80 && head_dim == 64) continue;
        bool const full = mask == dash::sim::MaskKind::kFull;
        CAPTURE(head_dim, full, tile_m);
        std::string const flags =
            fmt::format("{} --head-dim {} --mask {}{}", kSmall, head_dim, full ? "full" : "causal",
                        tile_m > 0 ? fmt::format(" --tile-m {}", tile_m) : "");
        Output const o = run_dash(fmt::format("simulate {} --strategy descending --json", flags));
        REQUIRE(o.rc == 0);
        json const j = json::parse(o.out);
        auto p = small_problem();
        p.head_dim = head_dim;
        p.mask.kind = mask;
        // The default family's (sm90), written out rather than taken from family.h: 128 rows
        // at d64; at d128 80 without a mask, else 64 (the portable family's: test_bench.cpp).
        int const by_default = head_dim == 64 ? 128 : (full ? 80 : 64);
        p.tile_m = tile_m > 0 ? tile_m : by_default;
        REQUIRE(dash::rt::kDefaultFamily == KernelFamily::kSm90);
        auto const cost = dash::rt::family_default_model(p, KernelFamily::kSm90);
        // The sm90 kernel has one dQ buffer at 80 rows, two at its other tiles (its rates).
        CHECK(cost.dq_buffer == (p.tile_m == 80 ? 1 : 2));
        CHECK(j["model"]["c"].get<std::int64_t>() == cost.compute);
        CHECK(j["model"]["dq_buffer"].get<int>() == cost.dq_buffer);
        CHECK(
            j["makespan"].get<std::int64_t>() ==
            dash::sim::simulate(p, m, cost, dash::sim::make_strategy("descending", p, m)).makespan);
      }
    }
  }
}

TEST_CASE("cli: explicit cost flags override the model", "[cli]") {
  Output const o = run_dash(fmt::format(
      "simulate {} --model paper --c 100 --r 40 --latency 7 --dq-buffer 2 --json", kSmall));
  REQUIRE(o.rc == 0);
  json const j = json::parse(o.out);
  CHECK(j["model"]["c"] == 100);
  CHECK(j["model"]["r"] == 40);
  CHECK(j["model"]["latency"] == 7);
  CHECK(j["model"]["dq_buffer"] == 2);
  CHECK(j["model"]["proportional"] == false);
  auto const p = small_problem();
  auto cost = dash::sim::paper_model(100, 40);
  cost.latency = 7;
  cost.dq_buffer = 2;
  auto const m = dash::sim::machine_with_sms(16);
  CHECK(j["makespan"].get<std::int64_t>() ==
        dash::sim::simulate(p, m, cost, dash::sim::make_strategy("fa3", p, m)).makespan);
}

TEST_CASE("cli: the GQA dK/dV reduce cost is printed and takes --r-kv", "[cli]") {
  // GQA 4 / 2, so that the dK/dV epilogue (r_kv) is on the critical path's candidates.
  std::string const gqa = "--sms 4 --batch 1 --heads 4 --kv-heads 2 --seqlen 512 --head-dim 64 --mask causal";
  Output const d = run_dash(fmt::format("simulate {} --json", gqa));
  REQUIRE(d.rc == 0);
  json const jd = json::parse(d.out);
  dash::sim::Problem p;
  p.q_heads = 4;
  p.kv_heads = 2;
  p.seqlen_q = p.seqlen_k = 512;
  p.head_dim = 64;
  p.tile_m = 128;
  p.tile_n = 128;
  p.mask = dash::sim::Mask{dash::sim::MaskKind::kCausal, 0, 0};
  CHECK(jd["model"]["r_kv"] == dash::rt::family_default_model(p, dash::rt::kDefaultFamily).reduce_kv);
  Output const o = run_dash(fmt::format("simulate {} --r-kv 123456 --json", gqa));
  REQUIRE(o.rc == 0);
  json const j = json::parse(o.out);
  CHECK(j["model"]["r_kv"] == 123456);
  auto cost = dash::rt::family_default_model(p, dash::rt::kDefaultFamily);
  cost.reduce_kv = 123456;
  auto const m = dash::sim::machine_with_sms(4);
  CHECK(j["makespan"].get<std::int64_t>() ==
        dash::sim::simulate(p, m, cost, dash::sim::make_strategy("fa3", p, m)).makespan);
  CHECK(j["makespan"].get<std::int64_t>() > jd["makespan"].get<std::int64_t>());
}

TEST_CASE("cli: simulate prints a human table", "[cli]") {
  Output const o = run_dash(fmt::format("simulate {}", kSmall));
  REQUIRE(o.rc == 0);
  for (char const* field : {"makespan", "lower bound", "gap", "utilization", "busy", "waiting",
                            "idle", "critical path", "C b0 h0 i0 j0"}) {
    CHECK(o.out.find(field) != std::string::npos);
  }
}

TEST_CASE("cli: compare lists every strategy with speedups over fa3", "[cli]") {
  Output const o = run_dash(fmt::format("compare {} --json", kSmall));
  REQUIRE(o.rc == 0);
  json const list = json::parse(o.out);
  REQUIRE(list.is_array());
  auto const names = dash::sim::strategy_names();
  // The named strategies in order, then the search row (on by default).
  REQUIRE(list.size() == names.size() + 1);
  CHECK(list.back()["strategy"] == "search");
  std::int64_t fa3 = 0;
  int best = 0;
  std::int64_t best_makespan = INT64_MAX;
  for (std::size_t k = 0; k < list.size(); ++k) {
    if (k < names.size()) CHECK(list[k]["strategy"] == names[k]);
    if (!list[k]["valid"].get<bool>()) continue;
    if (list[k]["strategy"] == "fa3") fa3 = list[k]["makespan"];
    best += list[k]["best"].get<bool>() ? 1 : 0;
    best_makespan = std::min(best_makespan, list[k]["makespan"].get<std::int64_t>());
  }
  REQUIRE(fa3 > 0);
  CHECK(best == 1);
  for (auto const& r : list) {
    if (!r["valid"].get<bool>()) continue;
    CHECK(r["speedup_vs_fa3"].get<double>() ==
          Approx(static_cast<double>(fa3) / r["makespan"].get<double>()));
    CHECK(r["makespan"].get<std::int64_t>() >= r["lower_bound"].get<std::int64_t>());
    if (r["best"].get<bool>()) CHECK(r["makespan"].get<std::int64_t>() == best_makespan);
  }
  Output const table = run_dash(fmt::format("compare {}", kSmall));
  REQUIRE(table.rc == 0);
  for (auto const& name : names) CHECK(table.out.find(name) != std::string::npos);
  CHECK(table.out.find("1.000x") != std::string::npos);
}

TEST_CASE("cli: bounds match the library", "[cli]") {
  Output const o = run_dash(fmt::format("bounds {} --json", kSmall));
  REQUIRE(o.rc == 0);
  json const j = json::parse(o.out);
  auto const p = small_problem();
  auto const b =
      dash::sim::compute_bounds(p, dash::sim::machine_with_sms(16),
                                dash::rt::family_default_model(p, dash::rt::kDefaultFamily));
  CHECK(j["work"].get<std::int64_t>() == b.work);
  CHECK(j["chain"].get<std::int64_t>() == b.chain);
  CHECK(j["lower"].get<std::int64_t>() == b.lower());
  Output const text = run_dash(fmt::format("bounds {}", kSmall));
  CHECK(text.out.find(fmt::format("{}", b.work)) != std::string::npos);
}

TEST_CASE("cli: schedule files round-trip through --schedule-out, validate and simulate", "[cli]") {
  Scratch const tmp;
  std::string const file = tmp / "s.json";
  Output const made = run_dash(fmt::format(
      "simulate {} --strategy shift --mask full --json --schedule-out '{}'", kSmall, file));
  REQUIRE(made.rc == 0);
  auto const doc = dash::sim::read_schedule_file(file);
  CHECK(doc.schedule.strategy == "shift");
  CHECK(doc.machine.sms == 16);

  Output const valid = run_dash(fmt::format("validate --schedule '{}'", file));
  CHECK(valid.rc == 0);
  CHECK(valid.out == "valid\n");

  // The file carries its problem: no flags needed, same makespan.
  Output const replay = run_dash(fmt::format("simulate --schedule '{}' --json", file));
  REQUIRE(replay.rc == 0);
  CHECK(json::parse(replay.out)["makespan"] == json::parse(made.out)["makespan"]);
  // Flags that agree are fine; flags that disagree are an error.
  CHECK(run_dash(fmt::format("simulate --schedule '{}' --heads 4 --sms 16 --mask full", file)).rc ==
        0);
  check_user_error(run_dash(fmt::format("simulate --schedule '{}' --seqlen 4096", file)),
                   "is a schedule for batch 1, heads 4, seqlen 2048");
  check_user_error(run_dash(fmt::format("simulate --schedule '{}' --gpu h200", file)),
                   "is a schedule for sm16 (16 SMs), but the flags ask for h200 (132 SMs)");
  check_user_error(run_dash(fmt::format("simulate --schedule '{}' --launch dynamic", file)),
                   "persistent launch, but --launch asks for dynamic");
  // compare includes the file's schedule as its own row.
  Output const cmp = run_dash(fmt::format("compare --schedule '{}' --json", file));
  REQUIRE(cmp.rc == 0);
  json const rows = json::parse(cmp.out);
  CHECK(rows.back()["strategy"] == "shift (file)");
}

TEST_CASE("cli: a deadlocking or incomplete schedule is rejected by validate and simulate",
          "[cli]") {
  Scratch const tmp;
  std::string const file = tmp / "s.json";
  REQUIRE(
      run_dash(fmt::format(
                   "simulate --sms 1 --heads 1 --seqlen 256 --mask full --schedule-out '{}'", file))
          .rc == 0);
  json doc = json::parse(slurp(file));
  REQUIRE(doc["ctas"][0]["items"].size() == 2);
  // One CTA walking KV tile 1 first, while rank 0 of every dQ tile belongs to KV tile 1's
  // successor on the same CTA: it can never proceed.
  std::swap(doc["ctas"][0]["items"][0], doc["ctas"][0]["items"][1]);
  std::ofstream(tmp / "dead.json") << doc.dump();
  check_user_error(run_dash(fmt::format("validate --schedule '{}'", tmp / "dead.json")),
                   "deadlock");
  check_user_error(run_dash(fmt::format("simulate --schedule '{}'", tmp / "dead.json")),
                   "deadlock");
  json missing = json::parse(slurp(file));
  missing["ctas"][0]["items"][0]["q"].erase(0);
  std::ofstream(tmp / "missing.json") << missing.dump();
  Output const o = run_dash(fmt::format("validate --schedule '{}'", tmp / "missing.json"));
  CHECK(o.rc == 2);
  CHECK(o.err.rfind("dash: error: ", 0) == 0);
}

TEST_CASE("cli: every bad input is one error line and exit code 2", "[cli]") {
  Scratch const tmp;
  std::ofstream(tmp / "garbage.json") << "{\"version\": \"dash.schedule/1\", \"ctas\": [";
  std::ofstream(tmp / "array.json") << "[1, 2]";
  std::ofstream(tmp / "wrong.json") << "{\"version\": \"dash.schedule/7\"}";
  struct Case {
    std::string args;
    std::string expected;
  };
  std::vector<Case> const cases = {
      {"simulate --batch 0", "batch must be positive"},
      {"simulate --heads -4", "heads must be positive"},
      {"simulate --seqlen 0", "sequence lengths must be positive"},
      {"simulate --seqlen 99999999999999", "--seqlen"},
      {"simulate --seqlen 16777216 --batch 4096", "simulator's limit"},
      {"simulate --head-dim 4096", "head-dim 4096 is larger"},
      {"simulate --tile-m 50", "tiles must be multiples of 16"},
      {"simulate --heads 6 --kv-heads 4", "kv-heads (4) must divide heads (6)"},
      {"simulate --gpu z100", "unknown GPU 'z100'"},
      {"simulate --sms 0", "SM count must be in 1..4096"},
      {"simulate --sms 100000", "SM count must be in 1..4096"},
      {"simulate --gpu h100 --sms 8", "excludes"},
      {"simulate --strategy best", "unknown strategy 'best'"},
      {"simulate --mask triangle", "unknown mask 'triangle'"},
      {"simulate --mask window:4,-1", "bad mask"},
      {"simulate --model magic", "unknown cost model 'magic'"},
      {"simulate --c 0", "--c must be in 1..1000000000"},
      {"simulate --c 99999999999", "--c must be in"},
      {"simulate --latency -5", "--latency must be in"},
      {"simulate --r-kv -1", "--r-kv must be in 0..1000000000"},
      {"simulate --dq-buffer 1000", "--dq-buffer must be in 0..64"},
      {"simulate --launch eager", "unknown launch model 'eager'"},
      {"simulate --seqlens 512,abc", "--seqlens: 'abc' is not a positive integer"},
      {"simulate --seqlens 512,1024 --batch 3", "varlen needs 3"},
      {"simulate --seqlens-k 512", "--seqlens-k needs --seqlens"},
      {"simulate --no-such-flag", "--no-such-flag"},
      {"simulate --schedule /no/such/file.json", "no such file"},
      {fmt::format("simulate --schedule '{}'", tmp.dir.string()), "not a regular file"},
      {fmt::format("simulate --schedule '{}'", tmp / "garbage.json"), "malformed JSON"},
      {fmt::format("simulate --schedule '{}'", tmp / "array.json"), "document: expected an object"},
      {fmt::format("simulate --schedule '{}'", tmp / "wrong.json"),
       "unsupported 'dash.schedule/7'"},
      {fmt::format("simulate --schedule '{}' --strategy fa3", tmp / "wrong.json"), "excludes"},
      {"validate", "validate needs --schedule FILE"},
      {"compare --strategy fa3", "--strategy"},
      {"search --live-cap -1", "--live-cap must be between 0 and 1e9 MiB"},
      {"search --live-cap nan", "--live-cap must be between 0 and 1e9 MiB"},
      {"bounds --svg x.svg", "--svg"},
      {"nonsense", "nonsense"},
  };
  for (auto const& c : cases) {
    INFO(c.args);
    check_user_error(run_dash(c.args), c.expected);
  }
}

TEST_CASE("cli: no partial files on failure", "[cli]") {
  Scratch const tmp;
  // Output directory that does not exist.
  Output const o =
      run_dash(fmt::format("simulate {} --schedule-out '{}'", kSmall, tmp / "missing/s.json"));
  check_user_error(o, "cannot write");
  CHECK_FALSE(fs::exists(tmp.dir / "missing"));
  // One good output and one impossible one: neither is written.
  check_user_error(run_dash(fmt::format("simulate {} --trace '{}' --svg '{}'", kSmall,
                                        tmp / "t.json", tmp / "missing/g.svg")),
                   "directory");
  check_user_error(run_dash(fmt::format("simulate {} --svg '{}'", kSmall, tmp.dir.string())),
                   "it is a directory");
  // Bad input: nothing is written, not even the outputs that could have been.
  std::ofstream(tmp / "bad.json") << "{\"version\": \"dash.schedule/1\", \"problem\": 5}";
  check_user_error(run_dash(fmt::format(
                       "simulate --schedule '{0}' --schedule-out '{1}' --trace '{2}' --svg '{3}'",
                       tmp / "bad.json", tmp / "s.json", tmp / "t.json", tmp / "g.svg")),
                   "problem: expected an object");
  check_user_error(run_dash(fmt::format("compare --batch 0 --schedule-out '{}' --trace '{}'",
                                        tmp / "s.json", tmp / "t.json")),
                   "batch must be positive");
  CHECK(tmp.entries() == 1);  // only bad.json
}

TEST_CASE("cli: --trace and --svg write the timeline of the chosen or best schedule", "[cli]") {
  Scratch const tmp;
  Output const o =
      run_dash(fmt::format("compare {} --json --trace '{}' --svg '{}' --schedule-out '{}'", kSmall,
                           tmp / "t.json", tmp / "g.svg", tmp / "best.json"));
  REQUIRE(o.rc == 0);
  json const rows = json::parse(o.out);
  std::string best;
  std::int64_t best_makespan = 0;
  for (auto const& r : rows) {
    if (r.value("best", false)) {
      best = r["strategy"];
      best_makespan = r["makespan"];
    }
  }
  json const trace = json::parse(slurp(tmp.dir / "t.json"));
  CHECK(trace["otherData"]["makespan_cycles"].get<std::int64_t>() == best_makespan);
  CHECK(trace["otherData"]["title"].get<std::string>().find(best) != std::string::npos);
  CHECK(dash::sim::read_schedule_file(tmp / "best.json").schedule.strategy == best);
  std::string const svg = slurp(tmp.dir / "g.svg");
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find(fmt::format("makespan {} model cycles", best_makespan)) != std::string::npos);
}

#if DASH_HAVE_CODEGEN
TEST_CASE("cli: generate --kernel picks the kernel family and refuses unknown names", "[cli]") {
  Scratch const tmp;
  for (std::string const kernel : {"sm80", "sm90", "auto"}) {
    INFO(kernel);
    // auto: the default family, the one --kernel auto runs where it can.
    std::string const family =
        kernel == "auto" ? std::string(dash::rt::family_name(dash::rt::kDefaultFamily)) : kernel;
    std::string const out = tmp / ("out-" + kernel);
    Output const o = run_dash(
        fmt::format("generate {} --strategy fa3 --kernel {} --out '{}'", kSmall, kernel, out));
    INFO("stderr: " << o.err);
    REQUIRE(o.rc == 0);
    CHECK(o.err.empty());
    json const manifest = json::parse(slurp(fs::path(out) / "manifest.json"));
    REQUIRE(manifest["kernels"].size() == 1);
    CHECK(manifest["kernels"][0]["family"] == family);
    std::string const cu = slurp(fs::path(out) / manifest["kernels"][0]["file"].get<std::string>());
    CHECK(cu.find(fmt::format("#include \"runtime/kernels/{}/kernel.cuh\"", family)) != std::string::npos);
    CHECK(cu.find(fmt::format("dash::rt::{}::Registrar<", family)) != std::string::npos);
  }
  // Without --kernel: auto, the same bytes.
  std::string const plain = tmp / "out-plain";
  REQUIRE(run_dash(fmt::format("generate {} --strategy fa3 --out '{}'", kSmall, plain)).rc == 0);
  CHECK(slurp(fs::path(plain) / "manifest.json") ==
        slurp(fs::path(tmp / "out-auto") / "manifest.json"));
  check_user_error(run_dash(fmt::format("generate {} --kernel sm70 --out '{}'", kSmall,
                                        tmp / "out-sm70")),
                   "unknown --kernel 'sm70': expected sm80, sm90 or auto");
  // Refused runs write nothing.
  CHECK_FALSE(fs::exists(tmp / "out-sm70"));
}
#endif

TEST_CASE("cli: help exits 0", "[cli]") {
  Output const o = run_dash("simulate --help");
  CHECK(o.rc == 0);
  CHECK(o.out.find("--schedule-out") != std::string::npos);
}
