// Placeholder so that `dash` links before the real `bench` subcommand lands; its owner replaces
// this file.
#include <CLI/CLI.hpp>

#include "dagsim/error.h"
#include "tools/commands.h"

namespace dash::cli {

void setup_bench(CLI::App& app) {
  auto* sub = app.add_subcommand("bench", "bench (not built yet)");
  sub->allow_extras();
  sub->callback([] { throw dash::UserError("bench is not built yet"); });
}

}  // namespace dash::cli
