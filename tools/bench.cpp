// dash bench: time the backward pass of the named strategies (and, on request, `dash search`'s best
// schedule) on the GPU, deterministic and not, over the DASH/FA3 grid (docs/design.md section 6) or one
// shape, next to the simulator's prediction.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dagsim/core/error.h"
#include "dagsim/core/flops.h"
#include "dagsim/core/median.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/named_run.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/trace.h"
#include "dagsim/model/validate.h"
#include "dagsim/model/working_set.h"
#include "dagsim/search/search.h"
#include "tools/bench_device.h"
#include "tools/bench_plan.h"
#include "tools/bench_report.h"
#include "tools/bench_trace.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace dash::cli {
namespace {

struct BenchOptions {
  CommonOptions common;
  std::string strategies;
  std::string modes = "det,nondet";
  std::string head_dims = "64,128";
  std::string seqlens = "512,1024,2048,4096,8192,16384";
  std::string masks = "full,causal";
  int total_tokens = sim::kGridTotalTokens;
  int hidden = sim::kGridHidden;
  int iters = 10;
  int warmup = 3;
  std::uint64_t seed = 1;
  std::string commit;
  std::string json_file;
  bool dry_run = false;
  /// Strategy "search": local-search evaluations per shape (a count, not a time: the schedule
  /// does not depend on the machine's speed).
  std::int64_t search_evals = 256;
  /// Schedule files timed next to the strategies, each on its own problem (a shape of the run).
  std::vector<std::string> schedule_files;
};

/// A --schedule file: its schedule, validated, and the row name it is timed under.
struct ScheduleFile {
  std::string name;  ///< "file:" and the file name without its directory and .json
  sim::ScheduleDocument document;
};

/// Reads every --schedule file and validates it on the run's machine, where it is simulated and
/// timed like the strategies. UserError naming the file when one is malformed, for another problem
/// than the run's, or made for more SMs.
std::vector<ScheduleFile> read_schedule_files(std::vector<std::string> const& paths,
                                              std::vector<sim::Problem> const& shapes, sim::Machine const& machine) {
  std::vector<ScheduleFile> out;
  for (auto const& path : paths) {
    ScheduleFile f{"file:" + std::filesystem::path(path).stem().string(), sim::read_schedule_file(path)};
    sim::Problem const& p = f.document.problem;
    if (std::find(shapes.begin(), shapes.end(), p) == shapes.end()) {
      user_error(
          "--schedule {}: its problem ({}) is not a shape of this run: give its shape's flags "
          "(--tile-m too where its tiles are not the default)",
          path, describe(p));
    }
    if (f.document.machine.sms > machine.sms) {
      user_error("--schedule {}: made for {} SMs, this run plans for {}", path,
                 f.document.machine.sms, machine.sms);
    }
    try {
      sim::validate(p, machine, f.document.schedule);
    } catch (UserError const& e) {
      user_error("--schedule {}: {}", path, e.what());
    }
    for (ScheduleFile const& other : out) {
      if (other.name == f.name) user_error("--schedule {}: a second file named {}", path, f.name);
    }
    out.push_back(std::move(f));
  }
  return out;
}

// Flags that pick one shape, and flags that shape the grid: one or the other.
constexpr char const* kShapeFlags[] = {"batch",    "heads",    "kv-heads", "seqlen",
                                       "seqlen-k", "head-dim", "mask"};
constexpr char const* kGridFlags[] = {"head-dims", "seqlens", "masks", "total-tokens", "hidden"};

/// The shapes of the run, with `family`'s default tiles where --tile-m names none.
std::vector<sim::Problem> planned_shapes(BenchOptions const& o, rt::KernelFamily family) {
  CommonOptions c = o.common;
  c.kernel = std::string(rt::family_name(family));
  bool shape_given = false;
  for (char const* f : kShapeFlags) shape_given = shape_given || c.has(f);
  std::vector<std::string> grid_given;
  for (char const* f : kGridFlags) {
    if (c.has(f)) grid_given.push_back(fmt::format("--{}", f));
  }
  if (shape_given) {
    if (!grid_given.empty()) {
      user_error(
          "{} restrict the grid and cannot be combined with one-shape flags (--batch, --seqlen, "
          "...)",
          fmt::join(grid_given, ", "));
    }
    return {resolve(c).problem};
  }
  BenchGrid grid;
  grid.total_tokens = o.total_tokens;
  grid.hidden = o.hidden;
  grid.head_dims = parse_int_list(o.head_dims, "--head-dims");
  grid.seqlens = parse_int_list(o.seqlens, "--seqlens");
  grid.masks = parse_masks(o.masks, "--masks");
  if (c.has("tile-m")) grid.tile_m = c.tile_m;
  grid.tile_n = c.tile_n;
  grid.family = family;
  return grid_shapes(grid);
}

// The cost model for one shape: the shared flags (--model, --c, ...) applied to that shape, with
// the rates of the family the shape runs on.
sim::CostModel cost_for(CommonOptions const& common, sim::Problem const& p, rt::KernelFamily family) {
  CommonOptions o = common;
  o.kernel = std::string(rt::family_name(family));
  // Here --seqlens is the grid's list, not the shared varlen flag that resolve() reads.
  o.given.erase("seqlens");
  o.batch = p.batch;
  o.heads = p.q_heads;
  o.kv_heads = p.kv_heads;
  o.seqlen = p.seqlen_q;
  o.seqlen_k = p.seqlen_k;
  o.head_dim = p.head_dim;
  o.tile_m = p.tile_m;
  o.tile_n = p.tile_n;
  o.mask = sim::to_string(p.mask);
  for (char const* f : {"batch", "heads", "kv-heads", "seqlen", "seqlen-k", "head-dim", "tile-m",
                        "tile-n", "mask"}) {
    o.given.insert(f);
  }
  Resolved const r = resolve(o);
  DASH_ASSERT(r.problem == p);
  return r.cost;
}

struct Prediction {
  std::optional<sim::Schedule> schedule;
  std::string refused;
  std::optional<sim::Cycles> makespan;  ///< SimResult::predicted(): the makespan or the memory floor
  std::int64_t live_bytes = 0;          ///< the schedule's working set (WorkingSet::max_bytes)
};

/// `dash search`'s best schedule of one shape: persistent launch, the seed and stream count of
/// `dash search`, at most `evals` local-search evaluations (the wall-clock budget only guards).
sim::SearchResult search_shape(sim::Problem const& p, sim::Machine const& machine,
                               sim::CostModel const& cost, std::int64_t evals) {
  sim::SearchOptions options;
  options.max_evaluations = evals;
  options.budget_ms = 600'000;
  options.threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  return sim::search(p, machine, cost, options);
}

// Makes (or searches), validates and simulates every strategy of one shape (fa3 first: the
// reference).
std::vector<Prediction> predict(sim::Problem const& p, sim::Machine const& machine,
                                sim::CostModel const& cost, std::vector<std::string> const& names,
                                std::int64_t search_evals) {
  std::vector<Prediction> out;
  for (auto const& name : names) {
    Prediction pred;
    try {
      if (name == kSearchStrategy) {
        sim::SearchResult r = search_shape(p, machine, cost, search_evals);
        pred.makespan = r.predicted;
        pred.live_bytes = r.working_set.max_bytes;
        pred.schedule = std::move(r.schedule);  // validated and simulated by search()
      } else {
        sim::NamedRun run = sim::run_named(name, p, machine, cost, sim::LaunchModel::kPersistent);
        if (!run.ran()) user_error("{}", run.refused);
        pred.makespan = run.result->predicted();
        pred.live_bytes = run.result->live.max_bytes;
        pred.schedule = std::move(run.schedule);
      }
    } catch (UserError const& e) {
      pred.refused = e.what();
    }
    out.push_back(std::move(pred));
  }
  return out;
}

sim::Machine schedule_machine(CommonOptions const& o, std::optional<DeviceInfo> const& device) {
  if (!device) return o.has("sms") ? sim::machine_with_sms(o.sms) : sim::machine_preset(o.gpu);
  if (o.has("sms")) return sim::machine_with_sms(o.sms);
  if (o.has("gpu")) {
    sim::Machine const preset = sim::machine_preset(o.gpu);
    if (preset.sms != device->sms) {
      user_error("--gpu {} has {} SMs, but the GPU here ({}) has {}; use --sms to plan for fewer",
                 o.gpu, preset.sms, device->name, device->sms);
    }
    return preset;
  }
  sim::Machine m = sim::machine_with_sms(device->sms);
  m.name = device->name;
  return m;
}

/// --trace / --svg: one more backward of the (only) shape and strategy with the kernel trace on,
/// written with the simulator's tracks and slice names; its summary on stdout.
void write_kernel_trace(BenchOptions const& o, BackwardTimer& timer, DeviceInfo const& device,
                        BenchMode mode, rt::KernelFamily family, sim::Problem const& p,
                        sim::Machine const& machine, sim::CostModel const& cost,
                        std::string const& strategy, sim::Schedule const& schedule) {
  KernelTrace const trace = decode_trace(timer.trace(mode), schedule);
  double const cycles_per_ns = static_cast<double>(device.clock_khz) / 1e6;
  if (!(cycles_per_ns > 0)) user_error("--trace: the GPU reports no clock rate");
  sim::Timeline const measured = measured_timeline(trace, schedule, cycles_per_ns);
  std::string const title = fmt::format("{} {} {} on {} ({})", shape_label(p), strategy,
                                        to_string(mode), device.name, timer.kernel_name());
  sim::TraceMeta const meta{
      p, std::string(rt::family_name(family)), machine.sms,
      fmt::format("measured on {} ({}), {}", device.name, timer.kernel_name(), to_string(mode))};
  sim::write_file_atomic(o.common.trace,
                         sim::to_chrome_trace(measured, "measured: " + title, &meta));
  if (o.common.has("svg")) {
    sim::Timeline const simulated = sim::timeline_of(sim::simulate(p, machine, cost, schedule));
    sim::write_file_atomic(o.common.svg, sim::to_svg_gantt_pair(measured, "measured", simulated,
                                                                "simulated", machine.sms, title));
  }
  std::fputs(format_summary(summarize(trace)).c_str(), stdout);
}

void run_bench(BenchOptions const& o) {
  CommonOptions const& c = o.common;
  std::vector<std::string> const strategies =
      c.has("strategies") ? parse_strategies(o.strategies, "--strategies") : sim::strategy_names();
  std::vector<BenchMode> const modes = parse_modes(o.modes, "--modes");
  if (o.iters < 10 || o.iters > 100000)
    user_error("--iters must be in 10..100000 (a median of >= 10), got {}", o.iters);
  if (o.warmup < 1 || o.warmup > 10000)
    user_error("--warmup must be in 1..10000, got {}", o.warmup);
  if (o.search_evals < 1 || o.search_evals > 100'000'000) {
    user_error("--search-evals must be in 1..100000000, got {}", o.search_evals);
  }
  // Planned with the named family's tiles, else the default family's; checked here, before the
  // GPU is asked for, and planned again below where `auto` takes another family on this GPU.
  rt::KernelFamily const planned_family = model_family(c);
  std::vector<sim::Problem> shapes = planned_shapes(o, planned_family);
  if (c.has("json")) check_writable(o.json_file, "--json");
  if (c.has("svg") && !c.has("trace")) user_error("--svg draws a kernel trace: give --trace too");
  if (!o.schedule_files.empty() && c.has("trace")) {
    user_error("--trace records one named strategy; time a --schedule file without it");
  }
  if (c.has("trace")) {
    if (shapes.size() != 1 || strategies.size() != 1) {
      user_error(
          "--trace records one backward: give one shape and one strategy (shapes: {}, strategies: "
          "{})",
          shapes.size(), strategies.size());
    }
    if (o.dry_run) user_error("--trace records a run on the GPU; --dry-run runs nothing");
    // resolve() checked that both files can be written.
  }

  // auto: rt::planning_family, whose tiles the shapes get (the runtime's auto_family picks it for
  // them: family.h).
  std::optional<rt::KernelFamily> const family = kernel_family(o.common);
  std::optional<DeviceInfo> device;
  if (!o.dry_run) device = query_device();  // no GPU: one line, exit 2, before any work
  sim::Machine const machine = schedule_machine(c, device);
  // The model's rates: the named family's; under auto the family the runtime picks on this GPU
  // (the default family's in a dry run).
  rt::KernelFamily run_family = planned_family;
  if (!family && device && device->planning_family) run_family = *device->planning_family;
  // Its default tiles too: a GPU without the sm90 family runs 64-row tiles at head dim 128.
  if (run_family != planned_family) shapes = planned_shapes(o, run_family);

  BenchRun run;
  run.date = utc_now("%Y-%m-%dT%H:%M:%SZ");
  run.gpu = device ? device->name : fmt::format("dry-run ({})", machine.name);
  run.sms = device ? device->sms : machine.sms;
  run.schedule_sms = machine.sms;
  run.commit = o.commit;
  run.iters = o.iters;
  run.warmup = o.warmup;
  run.seed = o.seed;
  run.measured = device.has_value();
  std::vector<ScheduleFile> const files = read_schedule_files(o.schedule_files, shapes, machine);

  // fa3 is always simulated: the reference of the predicted speedups.
  std::vector<std::string> simulated{"fa3"};
  for (auto const& s : strategies) {
    if (s != "fa3") simulated.push_back(s);
  }
  std::unique_ptr<BackwardTimer> timer;
  if (device) timer = std::make_unique<BackwardTimer>(*device, o.seed);
  TimingPlan const plan{o.warmup, o.iters};

  std::vector<BenchRecord> records;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    sim::Problem const& p = shapes[k];
    sim::CostModel const cost = cost_for(c, p, run_family);
    // The simulator runs on the CPU while the GPU sets up and times this shape.
    std::future<std::vector<Prediction>> future =
        std::async(std::launch::async, predict, p, machine, cost, simulated, o.search_evals);
    std::string shape_refused;
    if (timer) {
      try {
        timer->set_problem(p);
      } catch (UserError const& e) {
        shape_refused = e.what();
      }
    }
    std::vector<Prediction> predictions = future.get();
    // The named strategies wanted, then the schedule files of this shape.
    std::vector<std::pair<std::string, std::size_t>> rows;
    for (std::size_t si = 0; si < simulated.size(); ++si) {
      if (std::find(strategies.begin(), strategies.end(), simulated[si]) != strategies.end()) {
        rows.emplace_back(simulated[si], si);
      }
    }
    for (ScheduleFile const& f : files) {
      if (!(f.document.problem == p)) continue;
      Prediction pred;
      pred.schedule = f.document.schedule;
      sim::SimResult const file_run = sim::simulate(p, machine, cost, f.document.schedule);
      pred.makespan = file_run.predicted();
      pred.live_bytes = file_run.live.max_bytes;
      rows.emplace_back(f.name, predictions.size());
      predictions.push_back(std::move(pred));
    }
    for (auto const& [name, si] : rows) {
      Prediction const& pred = predictions[si];
      std::string refused = !pred.refused.empty() ? pred.refused : shape_refused;
      if (timer && refused.empty()) {
        try {
          timer->set_schedule(*pred.schedule, family);
        } catch (UserError const& e) {
          refused = fmt::format("runtime: {}", e.what());
        }
      }
      std::optional<std::int64_t> live_bytes;  // one per schedule, beside both modes
      if (pred.schedule) live_bytes = pred.live_bytes;
      for (BenchMode mode : modes) {
        BenchRecord r;
        r.problem = p;
        r.strategy = name;
        r.mode = mode;
        r.refused = refused;
        r.flops = sim::backward_flops(p);
        if (mode == BenchMode::kDet) {
          r.predicted_makespan = pred.makespan;
          r.fa3_makespan = predictions.front().makespan;
        }
        r.live_bytes = live_bytes;
        if (timer && refused.empty()) {
          Timing t = timer->time(mode, plan);
          r.ms = std::move(t.ms);
          r.ms_median = sim::median(r.ms);
          r.kernel = std::move(t.kernel);
          r.grid = t.grid;
          r.input_sets = t.input_sets;
          r.dq_zeroed = t.dq_zeroed;
          std::fprintf(stderr, "[%zu/%zu] %s %s %s: %.3f ms\n", k + 1, shapes.size(),
                       shape_label(p).c_str(), name.c_str(), to_string(mode).c_str(), *r.ms_median);
        }
        records.push_back(std::move(r));
      }
      if (timer && refused.empty() && c.has("trace")) {
        write_kernel_trace(o, *timer, *device, modes.front(), run_family, p, machine, cost, name,
                           *pred.schedule);
      }
    }
  }
  derive_ratios(records);
  if (c.has("json")) sim::write_file_atomic(o.json_file, to_json(run, records).dump(1) + "\n");
  std::fputs(format_table(run, records).c_str(), stdout);
}

}  // namespace

void setup_bench(CLI::App& app) {
  auto opts = std::make_shared<BenchOptions>();
  auto* sub = app.add_subcommand(
      "bench",
      "time attention backward on the GPU per strategy, det and non-det, next to the simulator");
  add_common_flags(*sub, opts->common,
                   FlagSet{.strategy = false, .schedule = false, .timeline = false, .kernel = true});
  // The grid's --seqlens is a list of lengths to sweep (bench runs no varlen), and --json names a
  // file here: drop the shared meanings of both.
  for (char const* shared : {"--seqlens", "--seqlens-k", "--json"}) {
    if (auto* opt = sub->get_option_no_throw(shared)) sub->remove_option(opt);
  }
  sub->add_option("--strategies", opts->strategies,
                  fmt::format("comma-separated strategies (default: all of {}); {} also times "
                              "dash search's best schedule of each shape",
                              fmt::join(sim::strategy_names(), ","), kSearchStrategy));
  sub->add_option("--search-evals", opts->search_evals,
                  "strategy search: local-search evaluations per shape")
      ->capture_default_str();
  sub->add_option("--modes", opts->modes, "det, nondet or both")->capture_default_str();
  sub->add_option("--head-dims", opts->head_dims, "grid: head dims")->capture_default_str();
  sub->add_option("--seqlens", opts->seqlens, "grid: sequence lengths")->capture_default_str();
  sub->add_option("--masks", opts->masks, "grid: full, causal")->capture_default_str();
  sub->add_option("--total-tokens", opts->total_tokens, "grid: batch x seqlen")
      ->capture_default_str();
  sub->add_option("--hidden", opts->hidden, "grid: heads x head dim")->capture_default_str();
  sub->add_option("--iters", opts->iters,
                  "timed calls per (shape, strategy, mode); the median is reported")
      ->capture_default_str();
  sub->add_option("--warmup", opts->warmup, "untimed calls before them")->capture_default_str();
  sub->add_option("--seed", opts->seed, "seed of the random inputs")->capture_default_str();
  sub->add_option("--commit", opts->commit, "commit hash to record in the JSON");
  sub->add_option("--json", opts->json_file,
                  "also write one JSON record per (shape, strategy, mode) here");
  // The shared --trace/--svg fields (resolve() checks their paths); here they take a measured run.
  sub->add_option(
      "--trace", opts->common.trace,
      "one shape and one strategy: after timing, one more backward (in the first of --modes) "
      "records a kernel trace, written here as Chrome/Perfetto JSON with dash simulate "
      "--trace's tracks and slice names, and summarized (needs a build with "
      "-DDASH_KERNEL_TRACE=ON)");
  sub->add_option(
      "--svg", opts->common.svg,
      "with --trace: the measured Gantt chart over the simulated one, on one time axis");
  sub->add_option("--schedule", opts->schedule_files,
                  "schedule files (docs/schedule-format.md) to time next to the strategies, each on its "
                  "own problem, which must be a shape of the run (give its flags)");
  sub->add_flag("--dry-run", opts->dry_run,
                "print the plan and the simulator's predictions; no GPU");
  sub->callback([sub, opts] {
    record_given(*sub, opts->common);
    // Here --schedule lists files timed next to the strategies, not the shared flag that makes
    // the file's problem the command's (resolve()).
    opts->common.given.erase("schedule");
    run_bench(*opts);
  });
}

}  // namespace dash::cli
