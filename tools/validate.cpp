// Placeholder until the real `validate` subcommand lands.
#include <CLI/CLI.hpp>

#include "dagsim/error.h"
#include "tools/commands.h"

namespace dash::cli {

void setup_validate(CLI::App& app) {
  auto* sub = app.add_subcommand("validate", "validate (not built yet)");
  sub->allow_extras();
  sub->callback([] { throw dash::UserError("validate is not built yet"); });
}

}  // namespace dash::cli
