#pragma once
// The table-driven schedule policy: answers the protocol (runtime/schedule/protocol.cuh) from the
// ScheduleTables that DeviceSchedule uploads, so that one compiled kernel of any family runs any
// validated schedule.
//
// This file is also the code generator's TEMPLATE (docs/codegen.md): codegen copies the struct
// marked `dash::policy`, renames it, replaces the bodies of its `dash::hook` functions with the
// closed forms or compact tables of one schedule and the values of its `dash::constant`s with that
// schedule's problem, and plugs the result into a family's kernel header. So it holds nothing but
// the policy: no kernel code, nothing of one family, no heavy headers (clang parses it).
#include <cstdint>

#include "runtime/kernel_params.h"
#include "runtime/schedule/protocol.cuh"

namespace dash::rt {

struct [[clang::annotate("dash::policy")]] TablePolicy {
  // ---- Problem constants (codegen substitutes the values) -----------------------------------
  [[clang::annotate("dash::constant")]] static constexpr int kHeadDim = 0;    // 0: every head dim
  [[clang::annotate("dash::constant")]] static constexpr int kDType = -1;     // -1: bf16 and fp16
  [[clang::annotate("dash::constant")]] static constexpr int kMaskKind = -1;  // -1: runtime flag
  [[clang::annotate("dash::constant")]] static constexpr int kTileM = 0;  // 0: the family's tile
  [[clang::annotate("dash::constant")]] static constexpr int kTileN = 128;
  [[clang::annotate("dash::constant")]] static constexpr std::uint64_t kScheduleHash = 0;  // 0: any

  // ---- Schedule hooks (codegen replaces the bodies) -------------------------------------------
  [[clang::annotate("dash::hook")]] static __device__ inline WorkItemRef
  next_work_item(ScheduleTables const& tables, int cta, int k) {
    WorkItemRef item;
    int const n = tables.cta_begin[cta] + k;
    if (n >= tables.cta_begin[cta + 1]) return item;  // batch = -1: none
    int const* rec = tables.items + 4 * n;
    item.batch = rec[0];
    item.head = rec[1];
    item.kv_tile = rec[2];
    item.step_base = rec[3];
    item.num_steps = rec[7] - rec[3];  // the next record's step_base (a sentinel ends the table)
    item.index = n;
    return item;
  }

  [[clang::annotate("dash::hook")]] static __device__ inline int
  q_tile_at(ScheduleTables const& tables, WorkItemRef const& item, int t) {
    return tables.steps[2 * (item.step_base + t)];
  }

  [[clang::annotate("dash::hook")]] static __device__ inline int
  dq_rank(ScheduleTables const& tables, WorkItemRef const& item, int t, int q_tile) {
    (void)q_tile;
    return tables.steps[2 * (item.step_base + t) + 1];
  }

  [[clang::annotate("dash::hook")]] static __device__ inline int
  dkv_rank(ScheduleTables const& tables, WorkItemRef const& item) {
    return tables.item_dkv_rank[item.index];
  }
};

static_assert(BwdSchedule<TablePolicy>);

}  // namespace dash::rt
