#pragma once
// The `dash` subcommands: one file each, `setup_<name>(app)` registers flags and the callback;
// only the callback does I/O. A UserError thrown anywhere becomes one line on stderr and exit 2.
#include <CLI/CLI.hpp>

namespace dash::cli {

void setup_simulate(CLI::App& app);
void setup_compare(CLI::App& app);
void setup_bounds(CLI::App& app);
void setup_validate(CLI::App& app);
void setup_search(CLI::App& app);
void setup_generate(CLI::App& app);
void setup_bench(CLI::App& app);
void setup_calibrate(CLI::App& app);
void setup_fidelity(CLI::App& app);
void setup_probe(CLI::App& app);

}  // namespace dash::cli
