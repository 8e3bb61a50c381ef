// Placeholder until the real `compare` subcommand lands.
#include <CLI/CLI.hpp>

#include "dagsim/error.h"
#include "tools/commands.h"

namespace dash::cli {

void setup_compare(CLI::App& app) {
  auto* sub = app.add_subcommand("compare", "compare (not built yet)");
  sub->allow_extras();
  sub->callback([] { throw dash::UserError("compare is not built yet"); });
}

}  // namespace dash::cli
