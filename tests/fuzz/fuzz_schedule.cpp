// libFuzzer target: a schedule file as `dash` reads it (docs/schedule-format.md), through the
// reader, the validator and, where the schedule is small, both simulators. Every input must end
// in a document or one UserError: never a crash, a sanitizer report, a leak or a hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "dagsim/core/error.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"

namespace {
// Simulating costs time linear in the steps; the reader and validator see every input.
constexpr std::int64_t kMaxSimulatedSteps = 1 << 14;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string const text(reinterpret_cast<char const*>(data), size);
  try {
    dash::sim::ScheduleDocument const doc = dash::sim::schedule_from_json(text);
    dash::sim::validate(doc.problem, doc.machine, doc.schedule);
    if (dash::sim::count_steps(doc.schedule) <= kMaxSimulatedSteps) {
      dash::sim::CostModel const cost{};
      dash::sim::SimResult const result =
          dash::sim::simulate(doc.problem, doc.machine, cost, doc.schedule);
      // The two simulators agree on every valid schedule (tests/dagsim): a disagreement is a bug.
      if (dash::sim::simulate_events(doc.problem, doc.machine, cost, doc.schedule) !=
          result.makespan)
        __builtin_trap();
      // A valid document prints and reads back to the same document.
      if (!(dash::sim::schedule_from_json(dash::sim::to_json(doc)).schedule == doc.schedule))
        __builtin_trap();
    }
  } catch (dash::UserError const&) {
  }
  return 0;
}
