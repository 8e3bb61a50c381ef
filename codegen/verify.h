#pragma once
// Host evaluation of a ScheduleForm with the same index arithmetic the device runs (forms.inc),
// and the check that it reproduces a schedule exactly: every (CTA, k), every step t, every rank.
#include <array>
#include <optional>
#include <string>

#include "codegen/kernel_spec.h"
#include "dagsim/core/schedule.h"

namespace dash::codegen {

struct WorkCoord {
  int batch = 0, head = 0, kv_tile = 0;
  friend bool operator==(WorkCoord const&, WorkCoord const&) = default;
};

/// The integer fields of forms.inc's DashCfLockstep, in declaration order, for a "lockstep" dQ
/// rank over this form's (closed) work and Q order: the host check and the emitted kernel build
/// their arguments from this one list.
std::array<int, 10> lockstep_fields(KernelSpec const& spec, ScheduleForm const& form);

/// The leading arguments of forms.inc's dash_cf_rank_waves (grid, kv_tiles, heads, n, lo, mult,
/// offset) for a "waves" dQ rank: one list for the host check and the emitted kernel.
std::array<int, 7> waves_fields(KernelSpec const& spec, ScheduleForm const& form);

std::optional<WorkCoord> eval_work(KernelSpec const& spec, WorkForm const& work, int cta, int k);
int eval_q_tile(KernelSpec const& spec, ScheduleForm const& form, WorkCoord item, int t);
int eval_dq_rank(KernelSpec const& spec, ScheduleForm const& form, int batch, int head, int q_tile,
                 int kv_tile);
int eval_dkv_rank(KernelSpec const& spec, ScheduleForm const& form, int batch, int q_head,
                  int kv_tile);

/// Each returns "" when the form reproduces the schedule's part exactly, else the first mismatch.
/// The schedule must be valid for the spec's problem.
std::string work_mismatch(KernelSpec const& spec, WorkForm const& work,
                          sim::Schedule const& schedule);
std::string q_order_mismatch(KernelSpec const& spec, ScheduleForm const& form,
                             sim::Schedule const& schedule);
std::string dq_rank_mismatch(KernelSpec const& spec, ScheduleForm const& form,
                             sim::Schedule const& schedule);
std::string dkv_rank_mismatch(KernelSpec const& spec, ScheduleForm const& form,
                              sim::Schedule const& schedule);
/// All four; "" when the whole form follows the schedule.
std::string form_mismatch(KernelSpec const& spec, sim::Schedule const& schedule);

}  // namespace dash::codegen
