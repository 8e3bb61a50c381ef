// Measured kernel traces on the host side (tools/bench_trace.h): decoding a raw record against its
// schedule, the timeline it draws, the summary, and `dash bench --trace`'s refusals. The kernels'
// side runs on the GPU (tests/runtime, in a DASH_KERNEL_TRACE build).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/model/trace.h"
#include "tests/cli/dash_process.h"
#include "tools/bench_trace.h"

namespace {

using dash::cli::decode_trace;
using dash::rt::RawTrace;
using Result = dash::test::Output;

Result dash_run(std::string const& args) { return dash::test::run_dash(args); }

// Two CTAs: CTA 0 runs item (b0 h1 j0) over Q tiles 1, 0 and then (b0 h1 j2) over Q tile 1; CTA 1
// runs (b0 h0 j1) over Q tile 0.
dash::sim::Schedule two_ctas() {
  dash::sim::Schedule s;
  s.ctas.resize(2);
  s.ctas[0].items.push_back({0, 1, 0, {1, 0}});
  s.ctas[0].items.push_back({0, 1, 2, {1}});
  s.ctas[1].items.push_back({0, 0, 1, {0}});
  return s;
}

// A record in which CTA c's clock runs `cycles_per_ns[c]` cycles per ns and starts at clock
// 1000 (c + 1), global time 5000 + 100 c. Every stamp of step n of CTA c is at ns 10 (n + 1) x
// (stamp + 1) after the CTA's start, items at 7 k, 7 k + 1, 7 k + 2 + 10 steps.
RawTrace record(dash::sim::Schedule const& s, int steps, int items) {
  RawTrace raw;
  raw.ctas = static_cast<int>(s.ctas.size());
  raw.steps = steps;
  raw.items = items;
  std::int64_t const region = dash::rt::trace_region_slots(steps, items);
  raw.slots.assign(static_cast<std::size_t>(region * raw.ctas), 0);
  int const rate[2] = {2, 3};
  for (int c = 0; c < raw.ctas; ++c) {
    std::int64_t* r = raw.slots.data() + region * c;
    std::int64_t const c0 = 1000 * (c + 1);
    std::int64_t const g0 = 5000 + 100 * c;
    auto clock_at = [&](std::int64_t ns) { return c0 + rate[c] * ns; };
    r[dash::rt::kTraceSm] = 40 + c;
    r[dash::rt::kTraceStartNs] = g0;
    r[dash::rt::kTraceStartClock] = c0;
    r[dash::rt::kTraceEndNs] = g0 + 1000;
    r[dash::rt::kTraceEndClock] = clock_at(1000);
    int n = 0;
    int k = 0;
    for (auto const& item : s.ctas[static_cast<std::size_t>(c)].items) {
      for (int e = 0; e < dash::rt::kItemStamps; ++e) {
        r[dash::rt::trace_item_slot(steps, k, e)] = clock_at(7 * k + e + (e == 2 ? 10 : 0));
      }
      for (std::size_t t = 0; t < item.q_order.size(); ++t, ++n) {
        for (int e = 0; e < dash::rt::kStepStamps; ++e) {
          r[dash::rt::trace_step_slot(steps, n, e)] = clock_at(10 * (n + 1) * (e + 1));
        }
      }
      ++k;
    }
  }
  return raw;
}

}  // namespace

TEST_CASE("trace: the layout of a CTA's region") {
  using namespace dash::rt;
  // Header, then 4 leader stamps per step, 3 writer stamps per step, 3 per item: no overlap.
  CHECK(trace_region_slots(5, 2) == kTraceHeaderSlots + 7 * 5 + 3 * 2);
  CHECK(trace_step_slot(5, 0, kStepEntry) == kTraceHeaderSlots);
  CHECK(trace_step_slot(5, 4, kStepStaged) == kTraceHeaderSlots + 19);
  CHECK(trace_step_slot(5, 0, kStepTaken) == kTraceHeaderSlots + 20);
  CHECK(trace_step_slot(5, 4, kStepDone) == kTraceHeaderSlots + 34);
  CHECK(trace_item_slot(5, 0, kItemWait) == kTraceHeaderSlots + 35);
  CHECK(trace_item_slot(5, 1, kItemEnd) == trace_region_slots(5, 2) - 1);
}

TEST_CASE("trace: decoding puts every CTA on one nanosecond axis") {
  dash::sim::Schedule const s = two_ctas();
  // Capacity larger than any CTA needs (the kernel sizes it by the busiest CTA).
  dash::cli::KernelTrace const t = decode_trace(record(s, 4, 3), s);
  REQUIRE(t.ctas.size() == 2);
  CHECK(t.ctas[0].sm == 40);
  CHECK(t.ctas[1].sm == 41);
  REQUIRE(t.ctas[0].steps.size() == 3);
  REQUIRE(t.ctas[1].steps.size() == 1);
  REQUIRE(t.ctas[0].items.size() == 2);
  CHECK(t.ctas[0].items[0].steps == 2);
  CHECK(t.ctas[0].items[1].steps == 1);
  // CTA 0 starts at global 5000 (the base), CTA 1 at 5100: its stamps are 100 ns later.
  CHECK(t.ctas[0].steps[2].at[dash::rt::kStepLoaded] == 30 * 2);
  CHECK(t.ctas[1].steps[0].at[dash::rt::kStepEntry] == 100 + 10);
  CHECK(t.ctas[1].steps[0].at[dash::rt::kStepDone] == 100 + 70);
  CHECK(t.ctas[0].items[1].at[dash::rt::kItemEnd] == 7 + 2 + 10);
  CHECK(t.span_ns == 1100);
}

TEST_CASE("trace: a record that does not fit the schedule is refused") {
  dash::sim::Schedule const s = two_ctas();
  RawTrace const good = record(s, 3, 2);
  SECTION("another grid") {
    dash::sim::Schedule three = s;
    three.ctas.emplace_back();
    CHECK_THROWS_WITH(decode_trace(good, three),
                      Catch::Contains("2 CTAs recorded, the schedule has 3"));
  }
  SECTION("too small for a CTA's steps") {
    RawTrace small = record(s, 2, 2);
    CHECK_THROWS_WITH(decode_trace(small, s), Catch::Contains("runs 3 steps and 2 items"));
  }
  SECTION("a missing stamp") {
    RawTrace bad = good;
    std::int64_t const region = dash::rt::trace_region_slots(3, 2);
    bad.slots[static_cast<std::size_t>(
        region + dash::rt::trace_step_slot(3, 0, dash::rt::kStepAcquired))] = 0;
    CHECK_THROWS_WITH(decode_trace(bad, s),
                      Catch::Contains("CTA 1 recorded no step stamp for step 0"));
  }
  SECTION("stamps out of order") {
    RawTrace bad = good;
    std::swap(
        bad.slots[static_cast<std::size_t>(dash::rt::trace_step_slot(3, 1, dash::rt::kStepEntry))],
        bad.slots[static_cast<std::size_t>(
            dash::rt::trace_step_slot(3, 1, dash::rt::kStepStaged))]);
    CHECK_THROWS_WITH(decode_trace(bad, s), Catch::Contains("CTA 0 step 1: stamps out of order"));
  }
  SECTION("no header: a kernel that did not record") {
    RawTrace bad = good;
    bad.slots[dash::rt::kTraceEndClock] = 0;
    CHECK_THROWS_WITH(decode_trace(bad, s),
                      Catch::Contains("CTA 0 did not record its start and end"));
  }
  SECTION("slots that do not match the capacity") {
    RawTrace bad = good;
    bad.slots.pop_back();
    CHECK_THROWS_AS(decode_trace(bad, s), dash::UserError);
  }
}

TEST_CASE("trace: measured slices carry the simulator's names, in cycles") {
  dash::sim::Schedule const s = two_ctas();
  dash::cli::KernelTrace const t = decode_trace(record(s, 3, 2), s);
  dash::sim::Timeline const tl = dash::cli::measured_timeline(t, s, 2.0);
  REQUIRE(tl.slices.size() == 8);  // compute and reduce per step
  CHECK(tl.cta_sms == std::vector<int>{40, 41});
  CHECK(tl.makespan == 2200);
  // CTA 0's second step: item (b0 h1 j0), Q tile 0; stamps 20, 40, ..., 140 ns.
  dash::sim::Slice const& c = tl.slices[2];
  CHECK(dash::sim::slice_label(c) == "C b0 h1 i0 j0");
  CHECK(c.ready == 40);
  CHECK(c.start == 80);
  CHECK(c.finish == 160);
  dash::sim::Slice const& r = tl.slices[3];
  CHECK(dash::sim::slice_label(r) == "R b0 h1 i0 j0");
  CHECK(r.ready == 200);
  CHECK(r.start == 240);
  CHECK(r.finish == 280);
  CHECK(dash::sim::slice_label(tl.slices[4]) == "C b0 h1 i1 j2");
  // A work item's first step starts where the previous one handed its partial over (80 ns), the
  // CTA's first where it asked for its first item (0 ns).
  CHECK(tl.slices[4].start == 160);
  CHECK(tl.slices[4].ready == 160);
  CHECK(tl.slices[0].start == 0);
  CHECK(dash::sim::slice_label(tl.slices[6]) == "C b0 h0 i0 j1");

  nlohmann::json const j = nlohmann::json::parse(dash::sim::to_chrome_trace(tl, "measured"));
  CHECK(j["otherData"]["time_unit"] == "SM cycles (measured) shown as microseconds");
  int named = 0;
  for (auto const& e : j["traceEvents"]) named += e.value("name", "") == "C b0 h1 i0 j0" ? 1 : 0;
  CHECK(named == 1);
}

TEST_CASE("trace: the summary's means per step") {
  dash::sim::Schedule const s = two_ctas();
  dash::cli::TraceSummary const m = dash::cli::summarize(decode_trace(record(s, 3, 2), s));
  CHECK(m.steps == 4);
  CHECK(m.items == 3);
  // Step n of a CTA (n = 0, 1, 2 on CTA 0; 0 on CTA 1) has stamps 10 (n + 1) (e + 1): compute
  // (loaded -> staging) 10 (n + 1), and so on; the means over n + 1 = 1, 2, 3, 1 are 7/4 x 10.
  CHECK(m.compute_ns == Approx(17.5));
  CHECK(m.load_wait_ns == Approx(17.5));
  CHECK(m.buffer_wait_ns == Approx(17.5));
  CHECK(m.writer_lag_ns == Approx(17.5));
  CHECK(m.ticket_wait_ns == Approx(17.5));
  CHECK(m.reduce_ns == Approx(17.5));
  // One item boundary (CTA 0): step 1 staged at 80, step 2 loaded at 60 -> -20.
  CHECK(m.item_gap_ns == Approx(-20.0));
  // Its parts: item 0 ends at 12 (10 steps after its wait at 0, + 2), 68 before step 1 was
  // staged; item 1 waits at 7 for K, V in hand at 8; step 2's loads are in hand at 60.
  CHECK(m.item_end_ns == Approx(-68.0));
  CHECK(m.item_kv_ns == Approx(1.0));
  CHECK(m.item_first_ns == Approx(52.0));
  CHECK(dash::cli::format_summary(m).find("4 steps, 3 items") != std::string::npos);
}

TEST_CASE("trace: the measured and simulated charts share one SVG and one time axis") {
  dash::sim::Schedule const s = two_ctas();
  dash::sim::Timeline const a =
      dash::cli::measured_timeline(decode_trace(record(s, 3, 2), s), s, 1.0);
  dash::sim::Timeline b = a;
  b.time_unit = "model cycles";
  b.makespan = 4 * a.makespan;
  std::string const svg = dash::sim::to_svg_gantt_pair(a, "measured", b, "simulated", 132, "pair");
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find(">measured<") != std::string::npos);
  CHECK(svg.find(">simulated<") != std::string::npos);
  CHECK(svg.find(">SM cycles (measured)<") != std::string::npos);
  CHECK(svg.find(">model cycles<") != std::string::npos);
  // Both axes span the longer makespan (4400 cycles: ticks every 500): the 4000 tick twice.
  std::size_t const first = svg.find(">4k<");
  REQUIRE(first != std::string::npos);
  CHECK(svg.find(">4k<", first + 1) != std::string::npos);
}

TEST_CASE("bench --trace: one shape and one strategy, refused otherwise") {
  dash::test::check_user_error(
      dash_run("bench --trace /tmp/t.json --strategies fa3,shift --seqlen 1024 --head-dim 64 "
               "--mask full"),
      "give one shape and one strategy (shapes: 1, strategies: 2)");
  dash::test::check_user_error(dash_run("bench --trace /tmp/t.json --strategies fa3"),
                               "(shapes: 24, strategies: 1)");
  dash::test::check_user_error(
      dash_run("bench --svg /tmp/t.svg --strategies fa3 --seqlen 1024 --head-dim 64 --mask full"),
      "--svg draws a kernel trace: give --trace too");
  dash::test::check_user_error(
      dash_run("bench --dry-run --trace /tmp/t.json --strategies fa3 --seqlen 1024 --head-dim "
               "64 --mask full"),
      "--dry-run runs nothing");
  dash::test::check_user_error(
      dash_run("bench --trace /nonexistent/t.json --strategies fa3 --seqlen 1024 --head-dim 64 "
               "--mask full"),
      "cannot write '/nonexistent/t.json': directory '/nonexistent' does not exist");
}
