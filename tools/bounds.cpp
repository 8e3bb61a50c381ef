// Placeholder until the real `bounds` subcommand lands.
#include <CLI/CLI.hpp>

#include "dagsim/error.h"
#include "tools/commands.h"

namespace dash::cli {

void setup_bounds(CLI::App& app) {
  auto* sub = app.add_subcommand("bounds", "bounds (not built yet)");
  sub->allow_extras();
  sub->callback([] { throw dash::UserError("bounds is not built yet"); });
}

}  // namespace dash::cli
