// dash search: the best deterministic schedule the model knows for a shape and GPU, with its
// lower bound, gap and certificate (dagsim/search/search.h). The hidden --report runs the quality grid of
// docs/results/2026-11-29-model-search-quality*.md.
#include "dagsim/search/search.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/benchmark/grid.h"
#include "dagsim/core/error.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"
#include "dagsim/model/working_set.h"
#include "runtime/kernels/family.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace dash::cli {
namespace {

struct SearchCliOptions {
  CommonOptions common;
  double budget_s = 2.0;
  std::uint64_t seed = 1;
  int threads = 1;
  std::int64_t evaluations = 0;
  double live_cap_mib = static_cast<double>(sim::kDefaultLiveCap) / (1 << 20);
  bool pair = false;
  bool report = false;
};

sim::SearchOptions search_options(SearchCliOptions const& o, sim::LaunchModel launch) {
  if (!(o.budget_s >= 0.0) || o.budget_s > 86400.0) {
    user_error("--budget must be between 0 and 86400 seconds, got {}", o.budget_s);
  }
  sim::SearchOptions s;
  s.budget_ms = static_cast<std::int64_t>(std::llround(o.budget_s * 1000.0));
  s.seed = o.seed;
  s.threads = o.threads;
  s.max_evaluations = o.evaluations;
  if (!(o.live_cap_mib >= 0.0) || o.live_cap_mib > 1e9) {
    user_error("--live-cap must be between 0 and 1e9 MiB, got {}", o.live_cap_mib);
  }
  // A positive cap stays a cap however small (at least one byte).
  s.max_live_bytes = o.live_cap_mib > 0 ? std::max<std::int64_t>(1, std::llround(o.live_cap_mib * (1 << 20))) : 0;
  s.launch = launch;
  s.pair = o.pair;
  return s;
}

// A one-line bar on a terminal only: redirected stderr stays clean for logs and scripts.
void show_progress(sim::SearchProgress const& p) {
  double const frac = p.budget_ms > 0 ? std::min(1.0, p.elapsed_ms / p.budget_ms) : 1.0;
  int const width = 30;
  int const filled = static_cast<int>(frac * width);
  double const gap = p.lower_bound > 0 ? 100.0 * static_cast<double>(p.best - p.lower_bound) /
                                             static_cast<double>(p.lower_bound)
                                       : 0.0;
  std::fprintf(stderr, "\r[%s%s] %5.1fs  best %lld  gap %.3f%%  %lld evals ",
               std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(width - filled), '.').c_str(), p.elapsed_ms / 1000.0,
               static_cast<long long>(p.best), gap, static_cast<long long>(p.evaluations));
  std::fflush(stderr);
}

nlohmann::json to_json(sim::SearchResult const& r) {
  nlohmann::json named = nlohmann::json::array();
  for (auto const& n : r.named) {
    nlohmann::json j = {{"name", n.name}};
    if (n.makespan) {
      j["makespan"] = *n.makespan;
    } else {
      j["error"] = n.error;
    }
    named.push_back(j);
  }
  nlohmann::json j = {
      {"makespan", r.makespan},
      {"lower_bound", r.lower_bound},
      {"work_bound", r.bounds.work},
      {"chain_bound", r.bounds.chain},
      {"gap", r.gap},
      {"optimal", r.optimal},
      {"certificate", r.certificate},
      {"seed_strategy", r.origin},
      {"best_named", r.best_named},
      {"best_named_makespan", r.best_named_makespan},
      {"memory_floor", r.memory.cycles},
      {"predicted", r.predicted},
      {"best_named_predicted", r.best_named_predicted},
      {"speedup_over_best_named",
       r.makespan > 0 ? static_cast<double>(r.best_named_makespan) / static_cast<double>(r.makespan) : 0.0},
      {"evaluations", r.stats.evaluations},
      {"local_evaluations", r.stats.local_evaluations},
      {"simulations", r.stats.simulations},
      {"rounds", r.stats.rounds},
      {"died", {{"invalid", r.stats.invalid}, {"deadlock", r.stats.deadlock}, {"worse", r.stats.worse}}},
      {"kept", {{"improved", r.stats.improved}, {"equal", r.stats.equal}}},
      {"exact_nodes", r.stats.exact_nodes},
      {"live_cap_bytes", r.live_cap},
      {"live_bytes", r.working_set.max_bytes},
      {"over_live_cap", r.stats.over_live_cap},
      {"elapsed_ms", r.elapsed_ms},
      {"named", named},
  };
  if (r.pair) {
    j["pair"] = {{"makespan", r.pair->makespan},
                 {"lower_bound", r.pair->lower_bound},
                 {"speedup_over_search", r.pair->makespan > 0 ? static_cast<double>(r.makespan) /
                                                                    static_cast<double>(r.pair->makespan)
                                                              : 0.0}};
  }
  return j;
}

void print_table(sim::SearchResult const& r, Resolved const& resolved) {
  std::string out;
  auto line = [&out](std::string const& text) { out += text + '\n'; };
  line(fmt::format("machine       {}", describe(resolved.machine)));
  line(fmt::format("problem       {}", describe(resolved.problem)));
  line(fmt::format("launch        {}", sim::to_string(resolved.launch)));
  line("");
  for (auto const& n : r.named) {
    if (n.makespan) {
      line(fmt::format("  {:<16} {:>14}", n.name, *n.makespan));
    } else {
      line(fmt::format("  {:<16} {:>14}  ({})", n.name, "-", n.error));
    }
  }
  line(fmt::format("  {:<16} {:>14}  (grew from {})", "search", r.makespan, r.origin));
  if (r.pair) line(fmt::format("  {:<16} {:>14}  (2-CTA mode, model only)", "search-2cta", r.pair->makespan));
  line("");
  line(fmt::format("lower bound   {:>14} cycles (work {}, chain {}, packing)", r.lower_bound, r.bounds.work,
                   r.bounds.chain));
  line(fmt::format("gap           {:>13.3f}%", 100.0 * r.gap));
  line(fmt::format("optimal       {}{}", r.optimal ? "yes" : "not proven",
                   r.certificate.empty() ? "" : " (" + r.certificate + ")"));
  line(fmt::format("vs best named {:>13.3f}x ({})",
                   static_cast<double>(r.best_named_makespan) / static_cast<double>(r.makespan), r.best_named));
  if (resolved.cost.hbm_bytes_per_cycle > 0) {
    // docs/model.md, "The memory floor": it decides between the search's schedule and the best
    // named strategy, not within the search.
    line(fmt::format("memory floor  {:>14} cycles; predicted {} (best named {}){}", r.memory.cycles, r.predicted,
                     r.best_named_predicted, r.origin == r.best_named ? ", the best named strategy kept" : ""));
  }
  line(fmt::format("evaluations   {} cheap, {} full simulations, {} rounds, {:.0f} ms", r.stats.evaluations,
                   r.stats.simulations, r.stats.rounds, r.elapsed_ms));
  line(fmt::format("died          invalid {}, deadlock {}, worse {}", r.stats.invalid, r.stats.deadlock,
                   r.stats.worse));
  // What the memory floor charges (docs/model.md, "Working set", "The memory floor").
  auto const live = [](sim::WorkingSet const& ws) {
    return fmt::format("{} heads, {:.1f} MiB", ws.max_heads, static_cast<double>(ws.max_bytes) / (1 << 20));
  };
  line(fmt::format("working set   search {}; {} {} (most in progress at once)",
                   live(r.working_set), r.best_named.empty() ? "no named strategy" : r.best_named,
                   r.best_named.empty() ? "-" : live(r.best_named_working_set)));
  line(r.live_cap > 0 ? fmt::format("live cap      {:.1f} MiB ({} candidates over it dropped)",
                                    static_cast<double>(r.live_cap) / (1 << 20), r.stats.over_live_cap)
                      : std::string("live cap      none"));
  std::fputs(out.c_str(), stdout);
}

// ----- The quality report: the DASH grid and the hard cases, one row each. -----

struct ReportCase {
  std::string label;
  sim::Problem problem;
  sim::Machine machine;
};

/// The tiles every kernel family has (rt::family_tile_m), so that the report's cases stay those of
/// its committed results; `dash bench`'s grid gives d128 full shapes the sm90 family's 80-row tile.
sim::Problem grid_problem(int seqlen, int head_dim, char const* mask) {
  return sim::grid_problem(seqlen, head_dim, sim::parse_mask(mask),
                           rt::family_tile_m(rt::kDefaultFamily, head_dim), rt::family_tile_n(rt::kDefaultFamily));
}

std::vector<ReportCase> report_cases() {
  std::vector<ReportCase> cases;
  auto const h200 = sim::machine_preset("h200");
  for (char const* mask : {"full", "causal"}) {
    for (int const d : {64, 128}) {
      for (int const s : {512, 1024, 2048, 4096, 8192, 16384}) {
        cases.push_back({fmt::format("grid d{} {} s{}", d, mask, s), grid_problem(s, d, mask), h200});
      }
    }
  }
  for (int const sms : {114, 108, 78, 148}) {
    for (char const* mask : {"full", "causal"}) {
      cases.push_back({fmt::format("sm{} d128 {} s4096", sms, mask), grid_problem(4096, 128, mask),
                       sim::machine_with_sms(sms)});
    }
  }
  auto odd = grid_problem(4096, 128, "causal");
  odd.seqlen_q = odd.seqlen_k = 4096 - 128 * 3 + 40;  // 29 KV tiles, a ragged tail
  cases.push_back({"odd tiles causal s3752", odd, h200});
  auto qk = grid_problem(2048, 128, "causal");
  qk.seqlen_k = 4096;
  cases.push_back({"seqlen_q 2048 != seqlen_k 4096 causal", qk, h200});
  auto qk2 = grid_problem(4096, 128, "full");
  qk2.seqlen_q = 1024;
  cases.push_back({"seqlen_q 1024 != seqlen_k 4096 full", qk2, h200});
  auto win = grid_problem(8192, 128, "full");
  win.mask = sim::parse_mask("window:1024,0");
  cases.push_back({"sliding window 1024 s8192", win, h200});
  sim::Problem varlen = grid_problem(1024, 128, "causal");
  varlen.batch = 8;
  varlen.seqlens_q = {4096, 512, 2048, 256, 3072, 1024, 640, 4736};
  varlen.seqlens_k = varlen.seqlens_q;
  cases.push_back({"varlen mix causal (8 seqs)", varlen, h200});
  auto gqa = grid_problem(4096, 128, "causal");
  gqa.kv_heads = 2;  // 16 q heads, 8:1
  cases.push_back({"GQA 8:1 causal s4096", gqa, h200});
  auto gqa_full = grid_problem(2048, 128, "full");
  gqa_full.kv_heads = 2;
  cases.push_back({"GQA 8:1 full s2048", gqa_full, h200});
  for (char const* mask : {"full", "causal"}) {
    for (int const kv : {1, 2, 3, 4, 5, 6}) {
      sim::Problem p = grid_problem(1024, 128, mask);
      p.batch = 1;
      p.q_heads = p.kv_heads = 2;
      p.seqlen_q = p.seqlen_k = kv * 128;
      cases.push_back({fmt::format("small {} {} KV x 2 heads", mask, kv), p, h200});
    }
  }
  return cases;
}

void run_report(SearchCliOptions const& o) {
  CommonOptions const& c = o.common;
  std::fputs("| case | steps | best named | makespan | search | vs named | lower bound | gap | certificate | evals | ms |\n",
             stdout);
  std::fputs("|---|---|---|---|---|---|---|---|---|---|---|\n", stdout);
  for (auto const& rc : report_cases()) {
    sim::CostModel const cost = sim::default_model(rc.problem);
    sim::SearchOptions opts = search_options(o, sim::parse_launch(c.launch));
    sim::SearchResult const r = sim::search(rc.problem, rc.machine, cost, opts);
    std::int64_t const steps = sim::count_steps(r.schedule);
    std::printf("| %s | %lld | %s | %lld | %lld | %.4fx | %lld | %.3f%% | %s | %lld | %.0f |\n",
                rc.label.c_str(), static_cast<long long>(steps), r.best_named.c_str(),
                static_cast<long long>(r.best_named_makespan), static_cast<long long>(r.makespan),
                static_cast<double>(r.best_named_makespan) / static_cast<double>(r.makespan),
                static_cast<long long>(r.lower_bound), 100.0 * r.gap,
                r.certificate.empty() ? "-" : r.certificate.c_str(), static_cast<long long>(r.stats.evaluations),
                r.elapsed_ms);
    std::fflush(stdout);
  }
}

void run_search(SearchCliOptions const& o) {
  if (o.report) {
    run_report(o);
    return;
  }
  CommonOptions const& c = o.common;
  Resolved const resolved = resolve(c);
  sim::SearchOptions opts = search_options(o, resolved.launch);
  bool const bar = !c.json && isatty(STDERR_FILENO) == 1;
  if (bar) opts.progress = show_progress;
  sim::SearchResult const r = sim::search(resolved.problem, resolved.machine, resolved.cost, opts);
  if (bar) std::fputs("\n", stderr);
  if (!c.schedule_out.empty()) {
    sim::validate(resolved.problem, resolved.machine, r.schedule);
    sim::write_schedule_file(c.schedule_out, sim::ScheduleDocument{resolved.problem, resolved.machine, r.schedule});
  }
  if (!c.trace.empty() || !c.svg.empty()) {
    sim::SimResult const sim_result = sim::simulate(resolved.problem, resolved.machine, resolved.cost, r.schedule);
    CommonOptions timeline = c;
    timeline.schedule_out.clear();  // written above
    write_outputs(timeline, resolved, r.schedule, sim_result,
                  fmt::format("search on {}: {}", describe(resolved.machine), describe(resolved.problem)));
  }
  if (c.json) {
    std::puts(to_json(r).dump(2).c_str());
  } else {
    print_table(r, resolved);
  }
}

}  // namespace

void setup_search(CLI::App& app) {
  auto opts = std::make_shared<SearchCliOptions>();
  auto* sub = app.add_subcommand("search", "search the best deterministic schedule; print it with its bound");
  add_common_flags(*sub, opts->common, FlagSet{false, true, true});
  sub->add_option("--budget", opts->budget_s, "local-search budget in seconds")->capture_default_str();
  sub->add_option("--seed", opts->seed, "search seed (same seed, same result)")->capture_default_str();
  sub->add_option("--threads", opts->threads, "worker threads (never change the result)")->capture_default_str();
  sub->add_option("--evaluations", opts->evaluations,
                  "stop after this many evaluations instead of the time budget (reproducible anywhere)");
  sub->add_option("--live-cap", opts->live_cap_mib,
                  "MiB: keep no schedule whose working set exceeds this or the best named strategy's "
                  "(default: the H100/H200 L2; 0: no cap)")
      ->capture_default_str();
  sub->add_flag("--pair", opts->pair, "also search FA4's 2-CTA mode (model only)");
  sub->add_flag("--report", opts->report, "run the quality grid and print a markdown table")->group("");
  sub->callback([sub, opts] {
    record_given(*sub, opts->common);
    run_search(*opts);
  });
}

}  // namespace dash::cli
