// Placeholder until the real `simulate` subcommand lands.
#include <CLI/CLI.hpp>

#include "dagsim/error.h"
#include "tools/commands.h"

namespace dash::cli {

void setup_simulate(CLI::App& app) {
  auto* sub = app.add_subcommand("simulate", "simulate (not built yet)");
  sub->allow_extras();
  sub->callback([] { throw dash::UserError("simulate is not built yet"); });
}

}  // namespace dash::cli
