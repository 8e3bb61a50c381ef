#pragma once
// Lowering: (Problem, Machine, Schedule) -> KernelSpec. Pure. The schedule is validated first;
// each part of the schedule (work assignment, Q order, dQ ranks, dK/dV ranks) gets a closed form
// only if the host evaluation of that form reproduces the schedule exactly, else a compact table,
// so a specialized kernel always follows exactly the schedule it was made for.
#include <string>

#include "codegen/kernel_spec.h"
#include "dagsim/machine.h"
#include "dagsim/problem.h"
#include "dagsim/schedule.h"

namespace dash::codegen {

/// Throws UserError on an invalid schedule, a varlen problem or an unknown dtype ("bf16", "fp16").
KernelSpec lower(sim::Problem const& problem, sim::Machine const& machine,
                 sim::Schedule const& schedule, std::string const& dtype = "bf16");

/// The compact tables for every part of the schedule (no closed forms): what lower() falls back to.
ScheduleForm table_form(KernelSpec const& spec, sim::Schedule const& schedule);

}  // namespace dash::codegen
