// Machine profiles (dagsim/model/profile.h): the built-in one is profiles/h200.json and has every
// kernel family; a profile round-trips through JSON; a defective file is one clear error;
// `--profile` sets the default model's rates in the CLI.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/profile.h"
#include "runtime/kernels/family.h"
#include "runtime/kernels/family_model.h"
#include "tests/cli/dash_process.h"

namespace {

namespace fs = std::filesystem;
using dash::sim::profile_from_json;

using dash::test::Output;
using dash::test::run_dash;
using dash::test::Scratch;
using dash::test::slurp;

std::string const kSource = slurp(fs::path(DASH_SOURCE_DIR) / "profiles" / "h200.json");

/// The built-in profile's JSON with one edit: `edit` applied to the parsed document.
template <typename Edit>
std::string edited(Edit edit) {
  nlohmann::json j = nlohmann::json::parse(kSource);
  edit(j);
  return j.dump(2);
}

}  // namespace

TEST_CASE("profile: the built-in one is profiles/h200.json and has every kernel family") {
  REQUIRE(!kSource.empty());
  dash::sim::MachineProfile const& p = dash::sim::builtin_profile();
  CHECK(p == profile_from_json(kSource, dash::rt::kFamilyNames));
  CHECK(p.gpu == "h200");
  CHECK(p.sms == dash::sim::machine_preset("h200").sms);
  for (auto f : dash::rt::kAllFamilies) {
    INFO(dash::rt::family_name(f));
    REQUIRE(p.rates_for(dash::rt::family_name(f)) != nullptr);
    CHECK(*p.rates_for(dash::rt::family_name(f)) == dash::rt::family_model_rates(f));
  }
  // The file's rates are what the default model uses.
  dash::sim::Problem problem;
  auto const* sm90 = p.rates_for("sm90");
  REQUIRE(sm90 != nullptr);
  CHECK(dash::rt::family_default_model(problem, dash::rt::KernelFamily::kSm90) ==
        dash::sim::default_model(problem, *sm90));
}

TEST_CASE("profile: JSON round trip") {
  dash::sim::MachineProfile p;
  p.gpu = "test \"gpu\"";
  p.sms = 78;
  p.clock_mhz = 1755;
  p.source = "made up for a test";
  p.families.push_back({"sm80", dash::sim::KernelRates{1, 1, 1'000'000'000, 0}, ""});
  dash::sim::KernelRates with_floor{1999, 17, 0, 3};
  with_floor.hbm_bytes_per_cycle = 1500;
  with_floor.l2_bytes = std::int64_t{50} << 20;
  with_floor.flops_by_head_dim = {{64, 1999}, {128, 2315}};
  p.families.push_back({"sm90", with_floor, "x"});
  std::string const text = dash::sim::to_json(p);
  CHECK(text.find("\"hbm_bytes_per_cycle\": 1500") != std::string::npos);
  CHECK(text.find("\"l2_bytes\": 52428800") != std::string::npos);
  CHECK(text.find("\"flops_per_cycle_by_head_dim\": {\"64\": 1999, \"128\": 2315}") != std::string::npos);
  CHECK(with_floor.flops_for(64) == 1999);
  CHECK(with_floor.flops_for(96) == with_floor.flops_per_cycle);
  // The default model takes a head dim's own F.
  dash::sim::Problem d64;
  d64.head_dim = 64;
  d64.tile_m = 128;
  d64.tile_n = 128;
  CHECK(dash::sim::default_model(d64, with_floor).compute == (10LL * 128 * 128 * 64 + 1998) / 1999);
  CHECK(profile_from_json(text, dash::rt::kFamilyNames) == p);
  CHECK(dash::sim::to_json(profile_from_json(text, {})) == text);
  CHECK(text.back() == '\n');
  // Written in name order whatever the order in memory.
  dash::sim::MachineProfile q = p;
  std::swap(q.families[0], q.families[1]);
  CHECK(dash::sim::to_json(q) == text);
}

TEST_CASE("profile: a defective file is one clear error") {
  auto refused = [](std::string const& text, std::string const& what) {
    INFO(text);
    CHECK_THROWS_WITH(profile_from_json(text, dash::rt::kFamilyNames), Catch::Contains(what));
  };
  refused("[]", "expected a JSON object");
  refused("{", "malformed JSON");
  refused(edited([](auto& j) { j["extra"] = 1; }), "profile: unknown key \"extra\"");
  refused(edited([](auto& j) { j.erase("sms"); }), "profile: missing \"sms\"");
  refused(edited([](auto& j) { j["sms"] = "132"; }), "profile.sms: expected an integer");
  refused(edited([](auto& j) { j["sms"] = 0; }), "profile.sms: 0 is outside 1..4096");
  refused(edited([](auto& j) { j["sms"] = 18446744073709551615ULL; }), "is outside 1..4096");
  refused(edited([](auto& j) { j["version"] = 2; }), "this dash reads version 1");
  refused(edited([](auto& j) { j["format"] = "dash-schedule"; }), "profile.format: expected");
  refused(edited([](auto& j) { j["families"] = nlohmann::json::object(); }), "at least one family");
  refused(edited([](auto& j) { j["families"]["sm91"] = j["families"]["sm90"]; }),
          "profile.families.\"sm91\": unknown kernel family (expected sm80, sm90)");
  refused(edited([](auto& j) { j["families"]["SM90"] = j["families"]["sm90"]; }),
          "lower-case letters and digits");
  refused(edited([](auto& j) { j["families"]["sm90"]["flops_per_cycle"] = 0; }),
          "profile.families.\"sm90\".flops_per_cycle: 0 is outside 1..1000000");
  refused(edited([](auto& j) { j["families"]["sm90"]["dq_buffer"] = 65; }),
          "dq_buffer: 65 is outside 0..64");
  refused(edited([](auto& j) { j["families"]["sm90"]["latency"] = -1; }), "latency: -1 is outside");
  refused(edited([](auto& j) { j["families"]["sm90"]["latency"] = 1.5; }),
          "latency: expected an integer");
  refused(edited([](auto& j) { j["families"]["sm90"]["speed"] = 1; }), "unknown key \"speed\"");
  // F per head dim: an object of head dims (1..1024, decimal) to rates.
  refused(edited([](auto& j) { j["families"]["sm90"]["flops_per_cycle_by_head_dim"] = 5; }),
          "flops_per_cycle_by_head_dim: expected an object");
  refused(edited([](auto& j) { j["families"]["sm90"]["flops_per_cycle_by_head_dim"] = {{"x", 5}}; }),
          "\"x\" is not a head dimension");
  refused(edited([](auto& j) { j["families"]["sm90"]["flops_per_cycle_by_head_dim"] = {{"064", 5}}; }),
          "\"064\" is not a head dimension");
  refused(edited([](auto& j) { j["families"]["sm90"]["flops_per_cycle_by_head_dim"] = {{"2048", 5}}; }),
          "\"2048\" is not a head dimension");
  refused(edited([](auto& j) { j["families"]["sm90"]["flops_per_cycle_by_head_dim"] = {{"64", 0}}; }),
          "flops_per_cycle_by_head_dim.64: 0 is outside 1..1000000");
  // The memory floor's two keys come together.
  refused(edited([](auto& j) { j["families"]["sm90"].erase("l2_bytes"); }), "missing \"l2_bytes\"");
  refused(edited([](auto& j) { j["families"]["sm90"].erase("hbm_bytes_per_cycle"); }),
          "missing \"hbm_bytes_per_cycle\"");
  refused(edited([](auto& j) {
            j["families"]["sm90"]["hbm_bytes_per_cycle"] = 0;
            j["families"]["sm90"]["l2_bytes"] = 1;
          }),
          "hbm_bytes_per_cycle: 0 is outside 1..");
  refused(edited([](auto& j) {
            j["families"]["sm90"]["hbm_bytes_per_cycle"] = 1;
            j["families"]["sm90"]["l2_bytes"] = -1;
          }),
          "l2_bytes: -1 is outside 0..");
  refused(edited([](auto& j) { j["families"]["sm90"].erase("source"); }), "missing \"source\"");
  refused(edited([](auto& j) { j["gpu"] = std::string(100, 'x'); }), "longer than 64");
  // A repeated key would silently win in plain JSON parsers.
  std::string dup = kSource;
  dup.insert(dup.find("\"sms\""), "\"sms\": 7,\n  ");
  refused(dup, "duplicate key \"sms\"");
  refused(std::string(20, '[') + std::string(20, ']'), "nested deeper");
}

TEST_CASE("profile: --profile sets the default model's rates of the family in use") {
  Scratch const s;
  // Half the sm90 FLOP rate: c doubles (the default family is sm90).
  std::string const slow =
      s.write("slow.json", edited([](auto& j) {
                j["families"]["sm90"]["flops_per_cycle"] =
                    j["families"]["sm90"]["flops_per_cycle"].template get<int>() / 2;
              }));
  std::string const args =
      "simulate --sms 16 --heads 4 --seqlen 2048 --mask causal --strategy fa3 --json";
  Output const base = run_dash(args);
  Output const halved = run_dash(args + " --profile '" + slow + "'");
  REQUIRE(base.rc == 0);
  REQUIRE(halved.rc == 0);
  auto const c0 = nlohmann::json::parse(base.out)["model"]["c"].get<std::int64_t>();
  auto const c1 = nlohmann::json::parse(halved.out)["model"]["c"].get<std::int64_t>();
  // Default shape: head dim 128, tiles 64 x 128: c = ceil(10 * 64 * 128 * 128 / F).
  std::int64_t const work = 10LL * 64 * 128 * 128;
  int const f = dash::rt::family_model_rates(dash::rt::KernelFamily::kSm90).flops_per_cycle;
  CHECK(c0 == (work + f - 1) / f);
  CHECK(c1 == (work + f / 2 - 1) / (f / 2));
  // The built-in file given explicitly changes nothing.
  Output const same = run_dash(args + " --profile '" +
                               (fs::path(DASH_SOURCE_DIR) / "profiles/h200.json").string() + "'");
  CHECK(same.out == base.out);

  std::string const no_sm90 =
      s.write("no_sm90.json", edited([](auto& j) { j["families"].erase("sm90"); }));
  dash::test::check_user_error(run_dash(args + " --profile '" + no_sm90 + "'"),
                               "has no rates for kernel family sm90");
  dash::test::check_user_error(run_dash(args + " --profile /nonexistent/p.json"),
                               "cannot read profile '/nonexistent/p.json': no such file");
  std::string const bad = s.write("bad.json", "{\"format\": 1}");
  dash::test::check_user_error(run_dash(args + " --profile '" + bad + "'"),
                               "bad.json: profile.format: expected a string");
  // Every subcommand with a cost model takes it.
  for (char const* sub : {"compare", "bounds", "search --budget 1"}) {
    INFO(sub);
    dash::test::check_user_error(
        run_dash(fmt::format("{} --sms 16 --heads 4 --seqlen 2048 --profile '{}'", sub, no_sm90)),
        "has no rates for kernel family sm90");
  }
}

TEST_CASE("profile: a memory floor in the profile reaches simulate and compare") {
  Scratch const s;
  // A slow memory and a small L2: the floor binds for every schedule of this shape.
  std::string const floor = s.write("floor.json", edited([](auto& j) {
                                      j["families"]["sm90"]["hbm_bytes_per_cycle"] = 20;
                                      j["families"]["sm90"]["l2_bytes"] = 1 << 20;
                                    }));
  // The built-in profile has a floor (the H200's); without the two keys there is none.
  std::string const none = s.write("none.json", edited([](auto& j) {
                                     j["families"]["sm90"].erase("hbm_bytes_per_cycle");
                                     j["families"]["sm90"].erase("l2_bytes");
                                   }));
  std::string const shape = "--sms 16 --heads 4 --seqlen 2048 --mask causal";
  Output const plain = run_dash("simulate " + shape + " --strategy fa3 --json --profile '" + none + "'");
  Output const bound = run_dash("simulate " + shape + " --strategy fa3 --json --profile '" + floor + "'");
  REQUIRE(plain.rc == 0);
  REQUIRE(bound.rc == 0);
  auto const p = nlohmann::json::parse(plain.out);
  auto const b = nlohmann::json::parse(bound.out);
  CHECK(p["memory_floor"]["cycles"] == 0);
  CHECK(p["predicted"] == p["makespan"]);
  CHECK(b["makespan"] == p["makespan"]);  // the DAG is the same
  CHECK(b["model"]["hbm_bytes_per_cycle"] == 20);
  auto const cycles = b["memory_floor"]["cycles"].get<std::int64_t>();
  CHECK(cycles == (b["memory_floor"]["bytes"].get<std::int64_t>() + 19) / 20);
  CHECK(cycles > b["makespan"].get<std::int64_t>());
  CHECK(b["predicted"] == cycles);
  CHECK(b["memory_floor"]["miss_permille"].get<int>() > 0);

  Output const text = run_dash("simulate " + shape + " --strategy fa3 --profile '" + floor + "'");
  REQUIRE(text.rc == 0);
  CHECK(text.out.find("memory floor") != std::string::npos);
  CHECK(text.out.find(": the prediction") != std::string::npos);
  CHECK(run_dash("simulate " + shape + " --strategy fa3 --profile '" + none + "'").out.find("memory floor") ==
        std::string::npos);
  // The built-in one's floor on this small shape: the compulsory bytes at 2424 B/cycle, far below
  // the makespan.
  auto const builtin = nlohmann::json::parse(run_dash("simulate " + shape + " --strategy fa3 --json").out);
  CHECK(builtin["memory_floor"]["cycles"].get<std::int64_t>() > 0);
  CHECK(builtin["predicted"] == builtin["makespan"]);

  Output const compared = run_dash("compare " + shape + " --search-budget 0 --json --profile '" + floor + "'");
  REQUIRE(compared.rc == 0);
  // The best row is the one with the smallest prediction, then the smallest makespan; speedups are
  // of predictions.
  nlohmann::json const rows = nlohmann::json::parse(compared.out);
  nlohmann::json const* expected = nullptr;
  std::int64_t fa3 = 0;
  for (auto const& row : rows) {
    if (!row["valid"].get<bool>()) continue;
    INFO(row.dump());
    CHECK(row["predicted"] == std::max(row["makespan"].get<std::int64_t>(), row["memory_floor"].get<std::int64_t>()));
    if (row["strategy"] == "fa3") fa3 = row["predicted"].get<std::int64_t>();
    auto const rank = [](nlohmann::json const& r) {
      return std::pair{r["predicted"].get<std::int64_t>(), r["makespan"].get<std::int64_t>()};
    };
    if (expected == nullptr || rank(row) < rank(*expected)) expected = &row;
  }
  REQUIRE(expected != nullptr);
  CHECK((*expected)["best"] == true);
  REQUIRE(fa3 > 0);
  for (auto const& row : rows) {
    if (!row["valid"].get<bool>()) continue;
    CHECK(row["speedup_vs_fa3"].get<double>() ==
          Approx(static_cast<double>(fa3) / row["predicted"].get<double>()));
  }
}
