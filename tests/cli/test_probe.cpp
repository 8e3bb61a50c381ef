// `dash probe` without a GPU: every refusal is one line, exit 2, and no file; a recorded matrix
// (--matrix) is summarized and written into a profile the other subcommands take. (The
// measurement itself is tested on the GPU: tests/runtime/test_probe.cpp.)
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/cli/dash_process.h"
#include "tests/scratch.h"

using dash::test::check_user_error;
using dash::test::run_dash;

TEST_CASE("probe: without a visible GPU it refuses in one line", "[cli][probe]") {
  check_user_error(run_dash("probe", "CUDA_VISIBLE_DEVICES="), "GPU");
}

TEST_CASE("probe: bad flags are refused before any measurement, and write no file",
          "[cli][probe]") {
  dash::test::Scratch const t;
  std::string const out = t / "p.json";
  check_user_error(run_dash(fmt::format("probe --rounds 0 --out '{}'", out)), "--rounds");
  check_user_error(run_dash("probe --rounds 257"), "--rounds");
  check_user_error(run_dash(fmt::format("probe --out '{}'", t / "no/such/dir/p.json")),
                   "does not exist");
  check_user_error(
      run_dash(fmt::format("probe --profile '{}' --out '{}'", t / "missing.json", out)),
      "missing.json");
  CHECK_FALSE(std::filesystem::exists(out));
}

namespace {

/// A probe document of 4 SMs (ids 0, 2, 4, 6): SMs 0 and 4 in one group, 2 and 6 in the other;
/// 1000 cycles within a group, 1300 across.
std::string four_sms(double clock_mhz = 1500.0, int across = 1300) {
  std::string lat;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      int const v = a == b ? 0 : (a % 2 == b % 2 ? 1000 : across);
      lat += fmt::format("{}{}", lat.empty() ? "" : ",", v);
    }
  }
  return fmt::format(
      R"({{"device": "test GPU", "sms": 4, "rounds": 8, "clock_mhz": {}, "smid": [0, 2, 4, 6], )"
      R"("one_way_cycles": [{}]}})",
      clock_mhz, lat);
}

}  // namespace

TEST_CASE("probe: a recorded matrix is summarized and written into a profile", "[cli][probe]") {
  dash::test::Scratch const t;
  std::string const matrix = t.write("m.json", four_sms());
  std::string const out = t / "p.json";
  dash::test::Output const o =
      run_dash(fmt::format("probe --matrix '{}' --gpu testgpu --out '{}'", matrix, out));
  INFO("stderr: " << o.err);
  REQUIRE(o.rc == 0);
  CHECK(o.out.find("12 measured") != std::string::npos);
  CHECK(o.out.find("min 1000, median 1300, max 1300") != std::string::npos);
  CHECK(o.out.find("2 and 2 SMs") != std::string::npos);
  CHECK(o.out.find("within 1000 / 1000, across 1300") != std::string::npos);
  CHECK(o.out.find("SM ids 2,6") != std::string::npos);
  nlohmann::json const p = nlohmann::json::parse(dash::test::slurp(out));
  CHECK(p["gpu"] == "testgpu");
  CHECK(p["sms"] == 4);
  CHECK(p["clock_mhz"] == 1500);
  for (auto const& [family, rates] : p["families"].items()) {
    CAPTURE(family);
    CHECK(rates["latency"] == 1300);
    CHECK(rates["source"].get<std::string>().find("dash probe") != std::string::npos);
  }
  // The profile is one the other subcommands take.
  dash::test::Output const sim =
      run_dash(fmt::format("simulate --profile '{}' --seqlen 1024 --heads 2", out));
  CHECK(sim.rc == 0);
}

TEST_CASE("probe: a malformed matrix is one error line and no profile", "[cli][probe]") {
  dash::test::Scratch const t;
  std::string const out = t / "p.json";
  std::string const good = four_sms();
  auto refused = [&](std::string const& text, std::string const& expected) {
    std::string const matrix = t.write("bad.json", text);
    check_user_error(run_dash(fmt::format("probe --matrix '{}' --out '{}'", matrix, out)),
                     expected);
    CHECK_FALSE(std::filesystem::exists(out));
  };
  refused("{", "malformed JSON");
  refused("[1, 2]", "JSON object");
  std::string text = good;
  refused(text.replace(text.find("\"sms\": 4"), 8, "\"sms\": 5"), "must be an array of 5 integers");
  text = good;
  refused(text.replace(text.find("\"sms\": 4"), 8, "\"sms\": 1"), "\"sms\"");
  text = good;
  refused(text.replace(text.find("[0, 2, 4, 6]"), 12, "[0, 2, 4]"), "smid");
  text = good;
  refused(text.replace(text.find("1300"), 4, "-130"), "one_way_cycles");
  text = good;
  refused(text.replace(text.find("\"rounds\": 8"), 11, "\"rounds\": \"8\""), "rounds");
  refused(
      R"({"device": "x", "sms": 2, "rounds": 1, "clock_mhz": 1, "smid": [0, 1], "one_way_cycles": [0, 0, 0, 0]})",
      "no pair was measured");
  check_user_error(run_dash(fmt::format("probe --matrix '{}'", t / "missing.json")),
                   "missing.json");
}

TEST_CASE("probe: --out writes only a profile the other subcommands take", "[cli][probe]") {
  dash::test::Scratch const t;
  std::string const out = t / "p.json";
  // A clock that rounds to 0 MHz, a latency above the profile's range: refused, nothing written.
  std::string const slow = t.write("slow.json", four_sms(0.2));
  check_user_error(run_dash(fmt::format("probe --matrix '{}' --out '{}'", slow, out)), "clock_mhz");
  std::string const far = t.write("far.json", four_sms(1500.0, 2000000000));
  check_user_error(run_dash(fmt::format("probe --matrix '{}' --out '{}'", far, out)), "latency");
  CHECK_FALSE(std::filesystem::exists(out));
  // Probing into the profile it starts from again and again replaces the probe's note.
  std::string const matrix = t.write("m.json", four_sms());
  REQUIRE(run_dash(fmt::format("probe --matrix '{}' --out '{}'", matrix, out)).rc == 0);
  std::string const once = dash::test::slurp(out);
  for (int k = 0; k < 3; ++k) {
    REQUIRE(run_dash(fmt::format("probe --matrix '{}' --profile '{}' --out '{}'", matrix, out, out))
                .rc == 0);
  }
  CHECK(dash::test::slurp(out) == once);
}
