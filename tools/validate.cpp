// dash validate: check a schedule file (coverage, rank permutations, no deadlock) for its problem.
#include "dagsim/model/validate.h"

#include <cstdio>
#include <memory>

#include "dagsim/core/error.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace dash::cli {
namespace {

struct ValidateOptions {
  CommonOptions common;
};

void run_validate(ValidateOptions const& opts) {
  if (!opts.common.has("schedule")) user_error("validate needs --schedule FILE");
  // resolve() reads and shape-checks the file against any problem flags; chosen_schedule()
  // runs the full validation.
  Resolved const resolved = resolve(opts.common);
  (void)chosen_schedule(opts.common, resolved);
  std::puts("valid");
}

}  // namespace

void setup_validate(CLI::App& app) {
  auto opts = std::make_shared<ValidateOptions>();
  auto* sub = app.add_subcommand("validate",
                                 "check a schedule file; prints \"valid\" or the error (exit 2)");
  add_common_flags(*sub, opts->common,
                   FlagSet{.strategy = false, .schedule = true, .timeline = false});
  sub->callback([sub, opts] {
    record_given(*sub, opts->common);
    run_validate(*opts);
  });
}

}  // namespace dash::cli
