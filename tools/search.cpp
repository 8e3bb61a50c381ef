// Placeholder so that `dash` links before the real `search` subcommand lands; its owner replaces
// this file.
#include <CLI/CLI.hpp>

#include "dagsim/error.h"
#include "tools/commands.h"

namespace dash::cli {

void setup_search(CLI::App& app) {
  auto* sub = app.add_subcommand("search", "search (not built yet)");
  sub->allow_extras();
  sub->callback([] { throw dash::UserError("search is not built yet"); });
}

}  // namespace dash::cli
