#include "tools/options.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dagsim/core/error.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/profile.h"
#include "dagsim/model/trace.h"
#include "dagsim/model/validate.h"
#include "runtime/kernel_params.h"
#include "runtime/kernels/family_model.h"

namespace dash::cli {
namespace {

// Costs far above any real tile and small enough that 2^27 steps of them stay within int64.
constexpr sim::Cycles kMaxCost = 1'000'000'000;

sim::Problem apply_problem_flags(sim::Problem p, CommonOptions const& o, bool all) {
  auto set = [&](char const* flag) { return all || o.has(flag); };
  if (set("batch")) p.batch = o.batch;
  if (set("heads")) {
    p.q_heads = o.heads;
    if (!o.has("kv-heads")) p.kv_heads = o.heads;
  }
  if (o.has("kv-heads")) p.kv_heads = o.kv_heads;
  if (set("seqlen")) {
    p.seqlen_q = o.seqlen;
    if (!o.has("seqlen-k")) p.seqlen_k = o.seqlen;
  }
  if (o.has("seqlen-k")) p.seqlen_k = o.seqlen_k;
  if (set("head-dim")) p.head_dim = o.head_dim;
  if (set("mask")) p.mask = sim::parse_mask(o.mask);
  if (o.has("tile-m")) {
    p.tile_m = o.tile_m;
  } else if (all) {
    // The named family's tiles (subcommands with --kernel), else the default family's; at head
    // dim 128 they depend on the mask (rt::default_tile_m).
    p.tile_m =
        rt::default_tile_m(model_family(o), p.head_dim, p.mask);
  }
  if (set("tile-n")) p.tile_n = o.tile_n;
  if (o.has("seqlens-k") && !o.has("seqlens")) user_error("--seqlens-k needs --seqlens");
  if (o.has("seqlens")) {
    p.seqlens_q = parse_int_list(o.seqlens, "--seqlens");
    p.seqlens_k = o.has("seqlens-k") ? parse_int_list(o.seqlens_k, "--seqlens-k") : p.seqlens_q;
    // The list fixes the batch unless --batch says otherwise (then they must agree).
    if (!o.has("batch")) p.batch = static_cast<int>(p.seqlens_q.size());
    // Keep the uniform fields meaningful (and positive) for printing: the longest entry.
    p.seqlen_q = *std::max_element(p.seqlens_q.begin(), p.seqlens_q.end());
    p.seqlen_k = *std::max_element(p.seqlens_k.begin(), p.seqlens_k.end());
  }
  return p;
}

// Varlen problems ignore the uniform lengths, so they take no part in "same problem".
bool same_problem(sim::Problem a, sim::Problem b) {
  if (!a.seqlens_q.empty()) a.seqlen_q = a.seqlen_k = 0;
  if (!b.seqlens_q.empty()) b.seqlen_q = b.seqlen_k = 0;
  return a == b;
}

sim::Machine machine_from_flags(CommonOptions const& o) {
  return o.has("sms") ? sim::machine_with_sms(o.sms) : sim::machine_preset(o.gpu);
}

/// The rates of the named family (--kernel), else of the default family, as for the tiles; from
/// --profile FILE when given, else from the built-in profile.
sim::KernelRates rates_from_flags(CommonOptions const& o) {
  rt::KernelFamily const family = model_family(o);
  return o.has("profile") ? rt::family_rates(sim::read_profile_file(o.profile, rt::kFamilyNames), family,
                                             "'" + o.profile + "'")
                          : rt::family_model_rates(family);
}

sim::CostModel cost_from_flags(CommonOptions const& o, sim::Problem const& problem, sim::KernelRates const& rates) {
  sim::CostModel const base = rt::family_model(problem, rates, model_family(o));
  sim::CostModel cost;
  if (o.model == "default") {
    cost = base;
  } else if (o.model == "paper") {
    cost = sim::paper_model(base.compute, base.reduce);
  } else {
    user_error("unknown cost model '{}': expected paper or default", o.model);
  }
  auto checked = [](char const* flag, sim::Cycles value, sim::Cycles lo) {
    if (value < lo || value > kMaxCost) {
      user_error("--{} must be in {}..{}, got {}", flag, lo, kMaxCost, value);
    }
    return value;
  };
  if (o.has("c")) cost.compute = checked("c", o.c, 1);
  if (o.has("r")) cost.reduce = checked("r", o.r, 0);
  if (o.has("latency")) cost.latency = checked("latency", o.latency, 0);
  if (o.has("r-kv")) cost.reduce_kv = checked("r-kv", o.r_kv, 0);
  if (o.has("item")) cost.item = checked("item", o.item, 0);
  if (o.has("dq-buffer")) {
    if (o.dq_buffer < 0 || o.dq_buffer > 64) {
      user_error("--dq-buffer must be in 0..64, got {}", o.dq_buffer);
    }
    cost.dq_buffer = o.dq_buffer;
  }
  return cost;
}

void check_output_path(CommonOptions const& o, char const* flag, std::string const& path) {
  if (o.has(flag)) check_writable(path, fmt::format("--{}", flag));
}

}  // namespace

void check_writable(std::string const& path, std::string const& flag) {
  if (path.empty()) user_error("{} needs a file name", flag);
  std::filesystem::path const parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    user_error("cannot write '{}': directory '{}' does not exist", path, parent.string());
  }
  if (std::filesystem::is_directory(path, ec))
    user_error("cannot write '{}': it is a directory", path);
}

std::string utc_now(char const* format) {
  std::time_t const now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

void add_common_flags(CLI::App& sub, CommonOptions& o, FlagSet flags) {
  auto* gpu =
      sub.add_option("--gpu", o.gpu,
                     fmt::format("GPU preset ({})", fmt::join(sim::machine_preset_names(), ", ")))
          ->capture_default_str();
  auto* sms = sub.add_option("--sms", o.sms, "any SM count instead of a preset (1..4096)");
  gpu->excludes(sms);
  sub.add_option("--batch", o.batch, "batch size")->capture_default_str();
  sub.add_option("--heads", o.heads, "query heads")->capture_default_str();
  sub.add_option("--kv-heads", o.kv_heads, "KV heads (GQA/MQA; default: --heads)");
  sub.add_option("--seqlen", o.seqlen, "query sequence length")->capture_default_str();
  sub.add_option("--seqlen-k", o.seqlen_k, "key sequence length (default: --seqlen)");
  sub.add_option("--seqlens", o.seqlens, "varlen: per-batch query lengths, comma-separated");
  sub.add_option("--seqlens-k", o.seqlens_k, "varlen: per-batch key lengths (default: --seqlens)");
  sub.add_option("--head-dim", o.head_dim, "head dimension")->capture_default_str();
  sub.add_option(
      "--tile-m", o.tile_m,
      "rows of a Q tile (default: the kernel family's: 128 at head-dim 64; at 128, 80 without a "
      "mask on sm90, else 64)");
  sub.add_option("--tile-n", o.tile_n, "rows of a KV tile")->capture_default_str();
  sub.add_option("--mask", o.mask, "full | causal | window:L,R")->capture_default_str();
  sub.add_option("--model", o.model, "cost model: paper | default")->capture_default_str();
  sub.add_option("--c", o.c, "cycles of one full step (overrides the model)");
  sub.add_option("--r", o.r, "cycles of one dQ reduce-add (overrides the model)");
  sub.add_option("--latency", o.latency, "cycles of a ticket hand-off (overrides the model)");
  sub.add_option("--r-kv", o.r_kv, "GQA: cycles of one dK/dV reduce-add of a KV tile (overrides the model)");
  sub.add_option("--dq-buffer", o.dq_buffer, "dQ buffer depth, 0 = paper model (overrides)");
  sub.add_option("--item", o.item,
                 "cycles added to each work item's first step (overrides the model)");
  sub.add_option(
      "--profile", o.profile,
      "machine profile JSON (docs/model.md): the rates of the default model (default: the "
      "built-in profiles/h200.json)");
  if (flags.strategy) {
    sub.add_option("--strategy", o.strategy,
                   fmt::format("named schedule ({})", fmt::join(sim::strategy_names(), ", ")))
        ->capture_default_str();
  }
  if (flags.schedule) {
    auto* file = sub.add_option("--schedule", o.schedule_file,
                                "schedule JSON file (docs/schedule-format.md)");
    if (auto* strategy = sub.get_option_no_throw("--strategy")) strategy->excludes(file);
    sub.add_option("--schedule-out", o.schedule_out, "write the schedule used to this file");
    sub.add_option("--launch", o.launch, "persistent | dynamic")->capture_default_str();
  }
  if (flags.kernel) {
    sub.add_option("--kernel", o.kernel, "kernel family: sm80 | sm90 | auto")
        ->capture_default_str();
  }
  sub.add_flag("--json", o.json, "print JSON instead of a table");
  if (flags.timeline) {
    sub.add_option("--trace", o.trace, "write a Chrome/Perfetto trace of the timeline");
    sub.add_option("--svg", o.svg, "write an SVG Gantt chart of the timeline");
  }
}

void record_given(CLI::App const& sub, CommonOptions& o) {
  o.given.clear();
  for (auto const* opt : sub.get_options()) {
    if (opt->count() == 0) continue;
    std::string name = opt->get_name();
    name.erase(0, name.find_first_not_of('-'));
    o.given.insert(name);
  }
}

std::optional<rt::KernelFamily> kernel_family(CommonOptions const& o) {
  if (o.kernel == "auto") return std::nullopt;
  if (auto const family = rt::parse_family(o.kernel)) return family;
  user_error("unknown --kernel '{}': expected sm80, sm90 or auto", o.kernel);
}

rt::KernelFamily model_family(CommonOptions const& o) { return kernel_family(o).value_or(rt::kDefaultFamily); }

std::vector<int> parse_int_list(std::string const& text, std::string const& flag) {
  std::vector<int> values;
  std::size_t start = 0;
  while (true) {
    std::size_t const comma = text.find(',', start);
    std::string const part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int value = 0;
    auto const [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc{} || ptr != part.data() + part.size() || value <= 0) {
      user_error("{}: '{}' is not a positive integer (expected e.g. 512,1024)", flag, part);
    }
    if (values.size() >= (1u << 16)) user_error("{}: more than {} entries", flag, 1 << 16);
    values.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return values;
}

Resolved resolve(CommonOptions const& o) {
  check_output_path(o, "schedule-out", o.schedule_out);
  check_output_path(o, "trace", o.trace);
  check_output_path(o, "svg", o.svg);
  Resolved out;
  if (o.has("schedule")) {
    sim::ScheduleDocument doc = sim::read_schedule_file(o.schedule_file);
    out.problem = apply_problem_flags(doc.problem, o, false);
    if (!same_problem(out.problem, doc.problem)) {
      user_error("{} is a schedule for {}, but the flags ask for {}", o.schedule_file,
                 describe(doc.problem), describe(out.problem));
    }
    out.machine = doc.machine;
    if (o.has("gpu") || o.has("sms")) {
      sim::Machine const asked = machine_from_flags(o);
      if (asked.sms != doc.machine.sms) {
        user_error("{} is a schedule for {}, but the flags ask for {}", o.schedule_file,
                   describe(doc.machine), describe(asked));
      }
    }
    out.launch = doc.schedule.launch;
    if (o.has("launch") && sim::parse_launch(o.launch) != out.launch) {
      user_error("{} is a schedule for {} launch, but --launch asks for {}", o.schedule_file,
                 sim::to_string(out.launch), o.launch);
    }
    out.document = std::move(doc);
  } else {
    out.problem = apply_problem_flags(sim::Problem{}, o, true);
    out.machine = machine_from_flags(o);
    out.launch = sim::parse_launch(o.launch);
  }
  sim::validate_problem(out.problem);
  out.rates = rates_from_flags(o);
  out.cost = cost_from_flags(o, out.problem, out.rates);
  return out;
}

sim::Schedule chosen_schedule(CommonOptions const& o, Resolved const& resolved) {
  sim::Schedule schedule =
      resolved.document
          ? resolved.document->schedule
          : sim::make_strategy(o.strategy, resolved.problem, resolved.machine, resolved.launch);
  sim::validate(resolved.problem, resolved.machine, schedule);
  return schedule;
}

void write_outputs(CommonOptions const& o, Resolved const& resolved, sim::Schedule const& schedule,
                   sim::SimResult const& result, std::string const& title) {
  if (o.has("schedule-out")) {
    sim::write_schedule_file(o.schedule_out,
                             sim::ScheduleDocument{resolved.problem, resolved.machine, schedule});
  }
  if (o.has("trace")) {
    // What `dash calibrate` needs to read it back: the problem, the family whose rates it shows.
    sim::TraceMeta const meta{
        resolved.problem,
        std::string(rt::family_name(model_family(o))),
        resolved.machine.sms, "simulated"};
    sim::write_file_atomic(o.trace, sim::to_chrome_trace(sim::timeline_of(result), title, &meta));
  }
  if (o.has("svg")) {
    sim::write_file_atomic(o.svg, sim::to_svg_gantt(result, resolved.machine.sms, title));
  }
}

std::string describe(sim::Machine const& machine) {
  return fmt::format("{} ({} SMs)", machine.name, machine.sms);
}

std::string describe(sim::Problem const& p) {
  std::string heads =
      p.is_gqa() ? fmt::format("{}/{}", p.q_heads, p.kv_heads) : fmt::format("{}", p.q_heads);
  std::string lengths =
      p.seqlens_q.empty()
          ? (p.seqlen_q == p.seqlen_k ? fmt::format("seqlen {}", p.seqlen_q)
                                      : fmt::format("seqlen {}/{}", p.seqlen_q, p.seqlen_k))
          : fmt::format("seqlens [{}]/[{}]", fmt::join(p.seqlens_q, ","),
                        fmt::join(p.seqlens_k, ","));
  return fmt::format("batch {}, heads {}, {}, head-dim {}, tiles {}x{}, {}", p.batch, heads,
                     lengths, p.head_dim, p.tile_m, p.tile_n, sim::to_string(p.mask));
}

}  // namespace dash::cli
