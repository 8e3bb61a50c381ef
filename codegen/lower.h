#pragma once
// Lowering: (Problem, Machine, Schedule) -> KernelSpec. Pure. The schedule is validated first;
// each part of the schedule (work assignment, Q order, dQ ranks, dK/dV ranks) gets a closed form
// only if the host evaluation of that form reproduces the schedule exactly, else a compact table,
// so a specialized kernel always follows exactly the schedule it was made for.
#include <string>

#include "codegen/kernel_spec.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "runtime/kernels/family.h"

namespace dash::codegen {

/// Which forms lowering may choose beyond the plain closed forms.
struct LowerOptions {
  /// Offer the "lockstep" dQ rank (the hook counts earlier contributors in a loop over the KV tiles
  /// of the head). Exact, but measured on an H200 at 1.3-2.1x the generic kernel's time
  /// (docs/results/2026-11-29-h200-codegen-closed-forms.md): every thread of the CTA runs the loop
  /// on every step, so by default a rank table is used instead.
  bool count_lockstep = false;
  /// Offer the "waves" dQ rank: the same lock-step order in closed form (no loop, no table) where
  /// it holds (strided work with rotated walks on whole heads: shift on a full mask). Measured on
  /// an H200 faster than the rank table (docs/results/2026-11-29-h200-tile128.md), so on by
  /// default.
  bool wave_ranks = true;
  /// The kernel family the policy is generated for: its tiles are the only ones accepted, and
  /// it must have a kernel header to plug into (codegen/kernel_target.h).
  rt::KernelFamily family = rt::KernelFamily::kSm80;
};

/// Throws UserError on an invalid schedule, a varlen problem or an unknown dtype ("bf16", "fp16").
KernelSpec lower(sim::Problem const& problem, sim::Machine const& machine,
                 sim::Schedule const& schedule, std::string const& dtype = "bf16",
                 LowerOptions const& options = {});

/// The compact tables for every part of the schedule (no closed forms): what lower() falls back to.
ScheduleForm table_form(KernelSpec const& spec, sim::Schedule const& schedule);

}  // namespace dash::codegen
