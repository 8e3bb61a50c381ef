// `dash bench` without a GPU: the plan (--dry-run) with the simulator's exact predictions, its
// JSON records, and every refusal as one error line with exit code 2 and no file left behind.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/machine.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/working_set.h"
#include "dagsim/search/search.h"
#include "runtime/kernels/family.h"
#include "runtime/kernels/family_model.h"
#include "tests/cli/dash_process.h"
#include "tests/shape.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using Result = dash::test::Output;
using TempDir = dash::test::Scratch;
using dash::test::slurp;

Result bench(std::string const& args, std::string const& env = "") {
  return dash::test::run_dash("bench " + args, env);
}

/// A dry run that must succeed: its printed table and its JSON records.
struct Plan {
  Result run;
  json records;
};
/// `dash bench --dry-run ARGS --json T/NAME`.
Plan dry_run(TempDir const& t, std::string const& args, std::string const& name = "plan.json") {
  std::string const file = t.path(name);
  Result r = bench(fmt::format("--dry-run {} --json '{}'", args, file));
  INFO("stderr: " << r.err);
  REQUIRE(r.rc == 0);
  return Plan{std::move(r), json::parse(slurp(file))};
}

void check_refused(Result const& r, std::string const& expected) {
  dash::test::check_user_error(r, expected);
}

dash::sim::Problem grid_problem(int seqlen, int head_dim, dash::sim::MaskKind mask) {
  // The grid's default: the CUDA kernel's tiles.
  return dash::test::kernel_shape(16384 / seqlen, 2048 / head_dim, seqlen, head_dim,
                                  dash::sim::Mask{mask, 0, 0});
}

/// One head dim 128 causal 1k sequence of 6 heads: the one-shape runs' problem.
dash::sim::Problem six_heads_causal_1k() {
  dash::sim::Problem p = grid_problem(1024, 128, dash::sim::MaskKind::kCausal);
  p.batch = 1;
  p.q_heads = p.kv_heads = 6;
  return p;
}

}  // namespace

TEST_CASE("bench: without a visible GPU it refuses in one line", "[cli][bench]") {
  // Hides any GPU, so the test means the same on a machine that has one.
  check_refused(bench("--head-dims 64 --seqlens 1024", "CUDA_VISIBLE_DEVICES="), "GPU");
}

TEST_CASE("bench: bad flags are one error line, exit 2, and no file", "[cli][bench]") {
  TempDir const t;
  std::string const file = t.path("b.json");
  check_refused(bench(fmt::format("--dry-run --iters 9 --json '{}'", file)), "--iters");
  check_refused(bench(fmt::format("--dry-run --seqlens 1000 --json '{}'", file)),
                "does not divide");
  check_refused(bench(fmt::format("--dry-run --head-dims 96 --json '{}'", file)), "--head-dims");
  check_refused(bench(fmt::format("--dry-run --tile-m 0 --json '{}'", file)),
                "tile-m must be positive");
  check_refused(bench(fmt::format("--dry-run --tile-m -16 --json '{}'", file)),
                "tile-m must be positive");
  check_refused(bench("--dry-run --strategies fa3,nope"), "unknown strategy 'nope'");
  check_refused(bench("--dry-run --strategies fa3,fa3"), "listed twice");
  check_refused(bench("--dry-run --strategies search --search-evals 0"), "--search-evals");
  check_refused(bench("--dry-run --modes det,sometimes"), "unknown mode");
  check_refused(bench("--dry-run --masks full,diagonal"), "unknown mask");
  check_refused(bench("--dry-run --kernel sm70"), "unknown --kernel 'sm70'");
  check_refused(bench("--dry-run --seqlen 4096 --seqlens 4096"), "cannot be combined");
  check_refused(bench(fmt::format("--dry-run --json '{}'", t.path("no/such/dir/b.json"))),
                "does not exist");
  CHECK(!fs::exists(file));
}

TEST_CASE("bench: the predictions use the rates of the family named by --kernel", "[cli][bench]") {
  dash::sim::Problem const p = grid_problem(2048, 128, dash::sim::MaskKind::kCausal);
  dash::sim::Machine const machine = dash::sim::machine_preset("h200");
  std::int64_t predicted[2] = {0, 0};
  int n = 0;
  for (dash::rt::KernelFamily const family :
       {dash::rt::KernelFamily::kSm80, dash::rt::KernelFamily::kSm90}) {
    TempDir const t;
    json const records =
        dry_run(t, fmt::format("--kernel {} --head-dims 128 --seqlens 2048 --masks causal "
                               "--strategies symmetric-shift --modes det",
                               dash::rt::family_name(family)))
            .records;
    REQUIRE(records.size() == 1);
    dash::sim::CostModel const cost = dash::rt::family_default_model(p, family);
    std::int64_t const expected =
        dash::sim::simulate(p, machine, cost,
                            dash::sim::make_strategy("symmetric-shift", p, machine))
            .makespan;
    CHECK(records[0]["predicted_makespan"].get<std::int64_t>() == expected);
    predicted[n++] = expected;
  }
  // The families' rates differ, so must the predictions, or the test could not tell them apart.
  CHECK(predicted[0] != predicted[1]);
}

TEST_CASE("bench: --dry-run records carry the grid's shapes, FLOPs and exact predictions",
          "[cli][bench]") {
  TempDir const t;
  auto const [r, records] =
      dry_run(t, "--head-dims 64 --seqlens 2048 --masks causal --strategies fa3,descending");
  REQUIRE(records.size() == 4);  // 1 shape x 2 strategies x 2 modes

  dash::sim::Problem const p = grid_problem(2048, 64, dash::sim::MaskKind::kCausal);
  dash::sim::Machine const machine = dash::sim::machine_preset("h200");
  dash::sim::CostModel const cost = dash::rt::family_default_model(p, dash::rt::kDefaultFamily);
  auto makespan = [&](char const* name) {
    return dash::sim::simulate(p, machine, cost, dash::sim::make_strategy(name, p, machine))
        .makespan;
  };
  std::int64_t const fa3 = makespan("fa3");
  std::int64_t const descending = makespan("descending");
  // 2.5 x 4*b*h*s*s*d, halved for causal: b = 8, h = 32.
  double const flops = 2.5 * 4.0 * 8 * 32 * 2048.0 * 2048.0 * 64 / 2;
  for (auto const& rec : records) {
    CHECK(rec["batch"] == 8);
    CHECK(rec["heads"] == 32);
    CHECK(rec["seqlen_q"] == 2048);
    CHECK(rec["head_dim"] == 64);
    CHECK(rec["tile_m"] == 128);
    CHECK(rec["mask"] == "causal");
    CHECK(rec["flops"].get<double>() == flops);
    CHECK(rec["status"] == "planned");
    CHECK(rec["measured"] == false);
    CHECK(rec["ms"].is_null());
    CHECK(rec["sms"] == 132);
    std::string const name = rec["strategy"].get<std::string>();
    CHECK(rec["live_bytes"].get<std::int64_t>() ==
          dash::sim::working_set(p, dash::sim::make_strategy(name, p, machine), 132).max_bytes);
    if (rec["mode"] == "nondet") {
      CHECK(rec["predicted_makespan"].is_null());  // bench predicts the deterministic run only
      continue;
    }
    bool const is_fa3 = rec["strategy"] == "fa3";
    CHECK(rec["predicted_makespan"].get<std::int64_t>() == (is_fa3 ? fa3 : descending));
    CHECK(rec["predicted_vs_fa3"].get<double>() ==
          Approx(static_cast<double>(fa3) / static_cast<double>(is_fa3 ? fa3 : descending)));
  }
  // Causal at this size: descending must beat fa3 in the model, or the comparison is vacuous.
  CHECK(descending < fa3);
  CHECK(r.out.find("descending") != std::string::npos);
  CHECK(r.out.find(
            fmt::format("{:.3f}x", static_cast<double>(fa3) / static_cast<double>(descending))) !=
        std::string::npos);
}

TEST_CASE("bench: the default grid is docs/design.md's, and one shape replaces it",
          "[cli][bench]") {
  TempDir const t;
  // Small hidden size: the same grid rule at a fraction of the simulation cost.
  json const records = dry_run(t, "--hidden 256 --strategies fa3 --modes det", "grid.json").records;
  std::set<std::tuple<int, int, std::string>> shapes;
  for (auto const& rec : records) {
    int const s = rec["seqlen_q"];
    int const d = rec["head_dim"];
    CHECK(rec["batch"].get<int>() * s == 16384);
    CHECK(rec["heads"].get<int>() * d == 256);
    shapes.emplace(d, s, rec["mask"].get<std::string>());
    // The default family's tiles (sm90): 128 rows at d64; at d128 80 without a mask, else 64.
    CHECK(rec["tile_m"] == (d == 64 ? 128 : rec["mask"] == "full" ? 80 : 64));
    CHECK(rec["tile_n"] == 128);
  }
  CHECK(records.size() == 24);
  CHECK(shapes.size() == 24);
  for (int d : {64, 128}) {
    for (int s : {512, 1024, 2048, 4096, 8192, 16384}) {
      CHECK(shapes.count({d, s, "full"}) == 1);
      CHECK(shapes.count({d, s, "causal"}) == 1);
    }
  }

  // The portable family has no 80-row tile: its d128 full shapes keep 64 rows.
  json const prec =
      dry_run(
          t,
          "--kernel sm80 --head-dims 128 --seqlens 2048 --masks full --strategies fa3 --modes det",
          "portable.json")
          .records;
  REQUIRE(prec.size() == 1);
  CHECK(prec[0]["tile_m"] == 64);

  json const recs =
      dry_run(t, "--batch 2 --heads 4 --seqlen 1024 --head-dim 128 --mask full --strategies shift",
              "one.json")
          .records;
  REQUIRE(recs.size() == 2);
  CHECK(recs[0]["batch"] == 2);
  CHECK(recs[0]["heads"] == 4);
  CHECK(recs[0]["strategy"] == "shift");
  CHECK(recs[0]["tile_m"] == 80);  // one shape: the default family's tile for d128 full too
  CHECK(recs[0]["flops"].get<double>() == 2.5 * 4.0 * 2 * 4 * 1024.0 * 1024.0 * 128);
}

TEST_CASE("bench: strategy search times dash search's best schedule of each shape",
          "[cli][bench]") {
  TempDir const t;
  json const records =
      dry_run(t,
              "--batch 1 --heads 6 --seqlen 1024 --head-dim 128 --mask causal --modes det "
              "--strategies symmetric-shift,search --search-evals 64")
          .records;
  REQUIRE(records.size() == 2);
  CHECK(records[1]["strategy"] == "search");

  dash::sim::Problem const p = six_heads_causal_1k();
  dash::sim::Machine const machine = dash::sim::machine_preset("h200");
  dash::sim::CostModel const cost = dash::rt::family_default_model(p, dash::rt::kDefaultFamily);
  dash::sim::SearchOptions options;
  options.max_evaluations = 64;
  options.budget_ms = 600'000;
  options.threads = 1;  // the thread count never changes the result
  std::int64_t const searched = dash::sim::search(p, machine, cost, options).makespan;
  std::int64_t const named =
      dash::sim::simulate(p, machine, cost, dash::sim::make_strategy("symmetric-shift", p, machine))
          .makespan;
  CHECK(records[0]["predicted_makespan"].get<std::int64_t>() == named);
  CHECK(records[1]["predicted_makespan"].get<std::int64_t>() == searched);
  // Never worse than the best named strategy; here strictly better (symmetric-shift's 24 pairs keep
  // only 24 of the 132 SMs busy), so the check can tell the two apart.
  CHECK(searched < named);
}

TEST_CASE("bench: --schedule times a schedule file on its own problem, next to the strategies",
          "[cli][bench]") {
  TempDir const t;
  std::string const shape = "--batch 1 --heads 6 --seqlen 1024 --head-dim 128 --mask causal";
  std::string const file = t.path("mine.json");
  Result const made = dash::test::run_dash(
      fmt::format("simulate {} --strategy descending --schedule-out '{}'", shape, file));
  REQUIRE(made.rc == 0);
  auto const [r, records] = dry_run(
      t, fmt::format("{} --strategies fa3 --modes det --schedule '{}'", shape, file), "b.json");
  CHECK(r.out.find("file:mine") != std::string::npos);
  REQUIRE(records.size() == 2);
  CHECK(records[0]["strategy"] == "fa3");
  CHECK(records[1]["strategy"] == "file:mine");
  dash::sim::Problem const p = six_heads_causal_1k();
  dash::sim::Machine const machine = dash::sim::machine_preset("h200");
  dash::sim::CostModel const cost = dash::rt::family_default_model(p, dash::rt::kDefaultFamily);
  CHECK(records[1]["predicted_makespan"].get<std::int64_t>() ==
        dash::sim::simulate(p, machine, cost, dash::sim::make_strategy("descending", p, machine))
            .makespan);

  // Refusals: one line, exit 2, no file.
  std::string const none = t.path("none.json");
  check_refused(
      bench(fmt::format("--dry-run --batch 2 --heads 6 --seqlen 1024 --head-dim 128 --mask causal "
                        "--schedule '{}' --json '{}'",
                        file, none)),
      "is not a shape of this run");
  check_refused(bench(fmt::format("--dry-run {} --schedule '{}' --json '{}'", shape,
                                  t.write("bad.json", "{\"version\":"), none)),
                "bad.json");
  fs::create_directories(t.path("other"));
  fs::copy_file(file, t.path("other/mine.json"));
  check_refused(bench(fmt::format("--dry-run {} --schedule '{}' --schedule '{}' --json '{}'", shape,
                                  file, t.path("other/mine.json"), none)),
                "a second file named file:mine");
  check_refused(bench(fmt::format("--dry-run {} --schedule '{}' --trace '{}'", shape, file,
                                  t.path("t.json"))),
                "--trace records one named strategy");
  CHECK(!fs::exists(none));
}
