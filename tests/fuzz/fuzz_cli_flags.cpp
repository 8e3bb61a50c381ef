// libFuzzer target: the flags every schedule-facing `dash` subcommand shares (tools/options.h),
// parsed by CLI11 and resolved into a problem, a machine and a cost model, then the named
// strategy built and validated where the problem is small. The input is the argument list, one
// argument per line. Every input must end in a resolved run or one error (CLI11's or a
// UserError): never a crash, a sanitizer report, a leak or a hang. Flags that read or write files
// (--schedule, --schedule-out, --trace, --svg) are left out: the schedule reader has its own
// target (fuzz_schedule.cpp) and a fuzzer must not write files.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dagsim/core/error.h"
#include "tools/options.h"

namespace {
constexpr std::size_t kMaxArgs = 48;
constexpr std::int64_t kMaxStrategySteps = 1 << 14;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::vector<std::string> args;
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    char const ch = static_cast<char>(data[i]);
    if (ch == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current += ch;
    }
  }
  if (!current.empty()) args.push_back(current);
  if (args.size() > kMaxArgs) return 0;
  for (auto const& a : args) {
    for (char const* file_flag : {"--schedule", "--trace", "--svg"}) {
      if (a.rfind(file_flag, 0) == 0) return 0;
    }
  }
  CLI::App app{"dash"};
  CLI::App* sub = app.add_subcommand("simulate", "");
  dash::cli::CommonOptions opts;
  dash::cli::add_common_flags(*sub, opts, dash::cli::FlagSet{true, true, true, true});
  std::vector<char const*> argv = {"dash", "simulate"};
  for (auto const& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    dash::cli::record_given(*sub, opts);
    dash::cli::Resolved const resolved = dash::cli::resolve(opts);
    (void)dash::cli::kernel_family(opts);
    (void)dash::cli::describe(resolved.problem);
    (void)dash::cli::describe(resolved.machine);
    if (resolved.problem.tile_count() <= kMaxStrategySteps)
      (void)dash::cli::chosen_schedule(opts, resolved);
  } catch (CLI::Error const&) {
  } catch (dash::UserError const&) {
  }
  return 0;
}
