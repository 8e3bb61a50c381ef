#pragma once
// JSON form of Schedule (docs/schedule-format.md). Reading never trusts the input: malformed or
// adversarial JSON (wrong types, huge sizes, negative ids) becomes a UserError, never a crash.
#include <string>

#include <nlohmann/json.hpp>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"

namespace dash::sim {

/// The document carries the problem and machine it was made for, so a file is self-describing.
struct ScheduleDocument {
  Problem problem;
  Machine machine;
  Schedule schedule;
};

std::string to_json(
    ScheduleDocument const& doc);  ///< stable key order, byte-identical for equal input
ScheduleDocument schedule_from_json(std::string const& text);
ScheduleDocument read_schedule_file(std::string const& path);
/// The problem as a schedule file holds it (one JSON object), and read back with the same checks
/// (validate_problem included); `path` names the object in errors. Traces carry it too.
std::string problem_to_json(Problem const& problem);
Problem problem_from_json(nlohmann::json const& value, std::string const& path);
/// Writes atomically (temp file + rename): never a partial file.
void write_schedule_file(std::string const& path, ScheduleDocument const& doc);
/// The same for any text output (traces, SVG): the file appears whole or not at all.
void write_file_atomic(std::string const& path, std::string const& content);

}  // namespace dash::sim
