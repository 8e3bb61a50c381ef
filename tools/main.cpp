// dash: deterministic attention backward — model, search, generate, run, measure.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "dagsim/error.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"dash: schedules for deterministic attention backward"};
  app.require_subcommand(1);
  dash::cli::setup_simulate(app);
  dash::cli::setup_compare(app);
  dash::cli::setup_bounds(app);
  dash::cli::setup_validate(app);
  dash::cli::setup_search(app);
  dash::cli::setup_generate(app);
  dash::cli::setup_bench(app);
  try {
    app.parse(argc, argv);
  } catch (CLI::CallForHelp const& e) {
    return app.exit(e);
  } catch (CLI::CallForAllHelp const& e) {
    return app.exit(e);
  } catch (CLI::ParseError const& e) {
    std::fprintf(stderr, "dash: error: %s\n", e.what());
    return 2;
  } catch (dash::UserError const& e) {
    std::fprintf(stderr, "dash: error: %s\n", e.what());
    return 2;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "dash: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
