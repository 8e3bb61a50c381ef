// Placeholder so that `dash` links before the real `generate` subcommand lands; its owner replaces
// this file.
#include <CLI/CLI.hpp>

#include "dagsim/error.h"
#include "tools/commands.h"

namespace dash::cli {

void setup_generate(CLI::App& app) {
  auto* sub = app.add_subcommand("generate", "generate (not built yet)");
  sub->allow_extras();
  sub->callback([] { throw dash::UserError("generate is not built yet"); });
}

}  // namespace dash::cli
