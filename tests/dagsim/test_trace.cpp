#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/strategies.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/trace.h"

namespace {

using namespace dash::sim;
using nlohmann::json;

struct Run {
  Problem problem;
  Machine machine;
  SimResult result;
};

Run run(int sms, int heads, int seqlen, Mask mask, CostModel const& cost,
        std::string const& strategy, LaunchModel launch = LaunchModel::kPersistent) {
  Run r;
  r.problem.q_heads = r.problem.kv_heads = heads;
  r.problem.seqlen_q = r.problem.seqlen_k = seqlen;
  r.problem.mask = mask;
  r.machine = machine_with_sms(sms);
  Schedule const s = make_strategy(strategy, r.problem, r.machine, launch);
  r.result = simulate(r.problem, r.machine, cost, s);
  return r;
}

}  // namespace

TEST_CASE("trace: node labels", "[trace]") {
  Node n;
  n.kind = NodeKind::kCompute;
  n.batch = 0;
  n.head = 3;
  n.q_tile = 5;
  n.kv_tile = 2;
  CHECK(node_label(n) == "C b0 h3 i5 j2");
  n.kind = NodeKind::kReduce;
  CHECK(node_label(n) == "R b0 h3 i5 j2");
  n.kind = NodeKind::kReduceKv;
  CHECK(node_label(n) == "K b0 h3 j2");
}

TEST_CASE("trace: Chrome trace has one slice per node, waits and named CTA tracks", "[trace]") {
  // Paper model: k = 0, so every CTA has one lane and fa3 makes CTAs wait on dQ ranks.
  Run const r = run(4, 2, 1024, Mask{MaskKind::kCausal, 0, 0}, paper_model(100, 30), "fa3");
  json const doc = json::parse(to_chrome_trace(r.result, "t\"itle"));
  REQUIRE(doc["traceEvents"].is_array());
  CHECK(doc["otherData"]["title"] == "t\"itle");
  std::map<std::string, int> count;
  std::map<int, std::string> thread_names;
  std::set<std::string> names;
  Cycles wait_total = 0;
  Cycles last_finish = 0;
  for (auto const& e : doc["traceEvents"]) {
    CHECK(e["pid"] == 0);
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") thread_names[e["tid"].get<int>()] = e["args"]["name"];
      continue;
    }
    REQUIRE(e["ph"] == "X");
    count[e["cat"].get<std::string>()]++;
    CHECK(e["dur"].get<Cycles>() >= 0);
    last_finish = std::max(last_finish, e["ts"].get<Cycles>() + e["dur"].get<Cycles>());
    if (e["cat"] == "wait") {
      CHECK(e["name"] == "wait");
      CHECK(e["dur"].get<Cycles>() > 0);
      wait_total += e["dur"].get<Cycles>();
    } else {
      names.insert(e["name"].get<std::string>());
    }
  }
  CHECK(count["compute"] == r.result.steps);
  CHECK(count["reduce"] == r.result.steps);
  CHECK(names.count("C b0 h1 i15 j7") == 1);
  CHECK(names.count("R b0 h0 i0 j0") == 1);
  CHECK(last_finish == r.result.makespan);
  // Single lane: the waits are exactly what the per-CTA statistics call waiting.
  Cycles stats_wait = 0;
  for (auto const& c : r.result.ctas) stats_wait += c.waiting;
  CHECK(wait_total == stats_wait);
  CHECK(wait_total > 0);
  REQUIRE(thread_names.size() == r.result.ctas.size());
  for (std::size_t c = 0; c < r.result.ctas.size(); ++c) {
    CHECK(thread_names[static_cast<int>(c)] ==
          fmt::format("CTA {} (SM {})", c, r.result.ctas[c].sm));
  }
}

TEST_CASE("trace: overlapping writer-warp reductions get their own properly nested track",
          "[trace]") {
  CostModel cost = paper_model(100, 30);
  cost.dq_buffer = 2;
  cost.latency = 10;
  Run const r = run(3, 1, 1024, Mask{}, cost, "fa3");
  json const doc = json::parse(to_chrome_trace(r.result, "k2"));
  std::map<int, std::vector<std::pair<Cycles, Cycles>>> per_tid;
  int writer_tracks = 0;
  for (auto const& e : doc["traceEvents"]) {
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name" &&
          e["args"]["name"].get<std::string>().find("dQ writer") != std::string::npos) {
        ++writer_tracks;
      }
      continue;
    }
    per_tid[e["tid"].get<int>()].emplace_back(e["ts"].get<Cycles>(),
                                              e["ts"].get<Cycles>() + e["dur"].get<Cycles>());
  }
  CHECK(writer_tracks > 0);
  for (auto& [tid, list] : per_tid) {
    std::sort(list.begin(), list.end());
    for (std::size_t k = 1; k < list.size(); ++k) {
      INFO("tid " << tid << " slice " << k);
      CHECK(list[k].first >= list[k - 1].second);
    }
  }
}

TEST_CASE("trace: SVG Gantt has rows, legend and axis, and stays small for big runs", "[trace]") {
  Run const small = run(4, 2, 1024, Mask{MaskKind::kCausal, 0, 0}, paper_model(100, 30), "fa3");
  std::string const svg = to_svg_gantt(small.result, 4, "a<b");
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("a&lt;b") != std::string::npos);
  for (int c = 0; c < 4; ++c) CHECK(svg.find(fmt::format(">CTA {} (SM ", c)) != std::string::npos);
  CHECK(svg.find(">compute<") != std::string::npos);
  CHECK(svg.find(">wait<") != std::string::npos);
  CHECK(svg.find(">model cycles<") != std::string::npos);
  CHECK(svg.find("fill=\"#e45756\">\n<rect") != std::string::npos);  // some wait is drawn

  // ~130k steps on 132 SMs, and a dynamic launch with thousands of CTAs: rows are capped and
  // the file stays far below one byte per step.
  Run const big = run(132, 16, 8192, Mask{}, default_model(Problem{}), "fa3");
  REQUIRE(big.result.steps > 100000);
  std::string const big_svg = to_svg_gantt(big.result, 132, "big");
  CHECK(big_svg.size() < 2'000'000);
  Run const dyn = run(132, 16, 4096, Mask{MaskKind::kCausal, 0, 0}, default_model(Problem{}), "fa3",
                      LaunchModel::kDynamic);
  REQUIRE(dyn.result.ctas.size() > 132);
  std::string const dyn_svg = to_svg_gantt(dyn.result, 132, "dyn");
  std::regex const label("<text [^>]*>(CTA|SM|SMs) [0-9]");
  auto const rows = std::distance(std::sregex_iterator(dyn_svg.begin(), dyn_svg.end(), label),
                                  std::sregex_iterator());
  CHECK(rows == 132);
  CHECK(dyn_svg.find(">SM 131<") != std::string::npos);
  // More SMs than rows: groups of SMs.
  Run const wide =
      run(300, 16, 4096, Mask{}, default_model(Problem{}), "fa3", LaunchModel::kDynamic);
  std::string const wide_svg = to_svg_gantt(wide.result, 300, "wide");
  CHECK(wide_svg.find(">SMs 0-2<") != std::string::npos);
  CHECK(wide_svg.find(">SMs 298-299<") != std::string::npos);
}
