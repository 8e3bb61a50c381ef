#pragma once
// The flags every schedule-facing subcommand shares (simulate, compare, bounds, validate, and
// search / generate / bench): the problem, the machine, the cost model, where the schedule
// comes from and, for subcommands that build or run kernels, the kernel family. setup adds them
// to a subcommand; resolve turns them into validated values.
#include <optional>
#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/core/units.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/simulate.h"
#include "runtime/kernels/family.h"

namespace dash::cli {

/// Raw flag values as typed; `given` names the flags that were on the command line (without
/// dashes), so explicit values can be told from defaults.
struct CommonOptions {
  // Problem.
  int batch = 1;
  int heads = 16;
  int kv_heads = 0;  ///< 0: same as heads
  int seqlen = 8192;
  int seqlen_k = 0;       ///< 0: same as seqlen
  std::string seqlens;    ///< varlen q lengths, comma-separated
  std::string seqlens_k;  ///< varlen k lengths; empty: same as seqlens
  int head_dim = 128;
  int tile_m = 0;  ///< only when given (has("tile-m")); else the family's for the head dim and mask
  int tile_n = 128;
  std::string mask = "causal";
  // Machine.
  std::string gpu = "h200";
  int sms = 0;
  // Schedule source and outputs.
  std::string strategy = "fa3";
  std::string schedule_file;
  std::string schedule_out;
  std::string launch = "persistent";
  // Kernel family (runtime/kernels/family.h).
  std::string kernel = "auto";
  // Cost model.
  std::string model = "default";
  std::string profile;  ///< --profile FILE: the model's rates (dagsim/model/profile.h)
  sim::Cycles c = 0;
  sim::Cycles r = 0;
  sim::Cycles latency = 0;
  sim::Cycles r_kv = 0;
  sim::Cycles item = 0;
  int dq_buffer = 0;
  // Output.
  bool json = false;
  std::string trace;
  std::string svg;

  std::set<std::string> given;
  [[nodiscard]] bool has(std::string const& flag) const { return given.count(flag) > 0; }
};

/// Which groups of flags a subcommand takes.
struct FlagSet {
  bool strategy = true;  ///< --strategy
  bool schedule = true;  ///< --schedule/--schedule-out/--launch
  bool timeline = true;  ///< --trace/--svg
  bool kernel = false;   ///< --kernel sm80|sm90|auto (subcommands that build or run kernels)
};

void add_common_flags(CLI::App& sub, CommonOptions& opts, FlagSet flags = {});

/// Records which flags were given; call first thing in the subcommand's callback.
void record_given(CLI::App const& sub, CommonOptions& opts);

/// Everything a subcommand needs, validated. With --schedule FILE the problem, machine and launch
/// come from the file and explicit flags must agree with it.
struct Resolved {
  sim::Problem problem;
  sim::Machine machine;
  sim::CostModel cost;
  sim::KernelRates rates;  ///< the family's rates the cost model derives from (--kernel, --profile)
  sim::LaunchModel launch = sim::LaunchModel::kPersistent;
  std::optional<sim::ScheduleDocument> document;  ///< set when --schedule FILE was given
};

Resolved resolve(CommonOptions const& opts);

/// The schedule to run: the file's, or the named strategy's (validated either way).
sim::Schedule chosen_schedule(CommonOptions const& opts, Resolved const& resolved);

/// Writes what --schedule-out, --trace and --svg ask for (each atomically). `title` heads traces.
void write_outputs(CommonOptions const& opts, Resolved const& resolved,
                   sim::Schedule const& schedule, sim::SimResult const& result,
                   std::string const& title);

/// --kernel: the family it names, or none for "auto" (each subcommand decides what auto picks).
/// UserError for any other spelling.
std::optional<rt::KernelFamily> kernel_family(CommonOptions const& opts);

/// The family whose tiles and rates the model takes: the one --kernel names, else the default
/// family (rt::kDefaultFamily) for "auto", which the model cannot resolve without a GPU.
rt::KernelFamily model_family(CommonOptions const& opts);

/// Fails before any work is done when an output could not be written (no name, a missing
/// directory, a directory): a missing directory should not cost a long run, nor leave the run's
/// other outputs written without it. `flag` names it in the error ("--out").
void check_writable(std::string const& path, std::string const& flag);

/// The current UTC time in strftime's `format` ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%SZ").
std::string utc_now(char const* format);

/// Comma-separated positive integers ("512,1024,4096"); UserError naming the flag otherwise.
std::vector<int> parse_int_list(std::string const& text, std::string const& flag);

/// "h200 (132 SMs)", "b=1 h=16 s=8192 d=128 tile 64x128 causal" — one-line descriptions.
std::string describe(sim::Machine const& machine);
std::string describe(sim::Problem const& problem);

}  // namespace dash::cli
