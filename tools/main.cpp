// dash: deterministic attention backward — model, search, generate, run, measure.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "dagsim/core/error.h"
#include "tools/commands.h"

namespace {

// The contract is exactly one error line, whatever a message carries.
std::string one_line(char const* what) {
  std::string text = what;
  for (char& ch : text) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

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
  dash::cli::setup_calibrate(app);
  dash::cli::setup_fidelity(app);
  dash::cli::setup_probe(app);
  try {
    // CLI11 would only say "A subcommand is required" for a misspelt one; name it instead.
    if (argc > 1 && argv[1][0] != '-') {
      std::string known;
      bool found = false;
      for (auto const* sub : app.get_subcommands({})) {
        found = found || sub->get_name() == argv[1];
        known += (known.empty() ? "" : ", ") + sub->get_name();
      }
      if (!found) {
        throw dash::UserError(fmt::format("unknown subcommand '{}': known are {}", argv[1], known));
      }
    }
    app.parse(argc, argv);
  } catch (CLI::CallForHelp const& e) {
    return app.exit(e);
  } catch (CLI::CallForAllHelp const& e) {
    return app.exit(e);
  } catch (CLI::ParseError const& e) {
    std::fprintf(stderr, "dash: error: %s\n", one_line(e.what()).c_str());
    return 2;
  } catch (dash::UserError const& e) {
    std::fprintf(stderr, "dash: error: %s\n", one_line(e.what()).c_str());
    return 2;
  } catch (std::bad_alloc const&) {
    std::fputs("dash: error: out of memory\n", stderr);
    return 2;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "dash: error: %s\n", one_line(e.what()).c_str());
    return 2;
  } catch (...) {
    std::fputs("dash: error: unexpected failure\n", stderr);
    return 2;
  }
  return 0;
}
