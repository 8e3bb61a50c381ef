#pragma once
// The schedule protocol: what a backward main kernel asks its schedule, stated once as a concept
// (docs/schedule-protocol.md). Every kernel family takes its schedule as a policy type P with
// BwdSchedule<P>, so the generic table-driven policy (runtime/schedule/table_policy.cuh) and every
// generated one (generated/*.cu) plug into any family's kernel. No kernel code and no CUDA
// headers: clang parses this for codegen, and the host compilers of every family include it.
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "runtime/kernel_params.h"

namespace dash::rt {

/// The hooks, as static member functions with exactly these types (the kernel calls them as
/// P::hook(...); codegen replaces their bodies, never their signatures):
///   next_work_item(tables, cta, k): the k-th work item (k = 0, 1, ...) of CTA `cta`
///     (= blockIdx.x); an item with batch < 0 when the CTA has no k-th item.
///   q_tile_at(tables, item, t): the Q tile `item` visits at step t (0 <= t < item.num_steps).
///   dq_rank(tables, item, t, q_tile): the rank of step t's dQ partial among the contributions to
///     dQ tile (item.batch, item.head, q_tile); 0 adds first.
///   dkv_rank(tables, item): GQA/MQA only, the rank of the item's dK/dV partial among the q heads
///     of its group.
using NextWorkItemFn = WorkItemRef (*)(ScheduleTables const& tables, int cta, int k);
using QTileAtFn = int (*)(ScheduleTables const& tables, WorkItemRef const& item, int t);
using DqRankFn = int (*)(ScheduleTables const& tables, WorkItemRef const& item, int t, int q_tile);
using DkvRankFn = int (*)(ScheduleTables const& tables, WorkItemRef const& item);

/// A schedule policy: the four hooks and the compile-time facts a specialization fixes. The
/// generic values mean "decided at run time": kHeadDim 0 (every head dim of the family), kDType
/// -1 (bf16 and fp16), kMaskKind -1 (the runtime flag), kTileM 0 (the family's tile for the head
/// dim), kScheduleHash 0 (any schedule, read from the tables).
template <class P>
concept BwdSchedule =
    std::same_as<decltype(&P::next_work_item), NextWorkItemFn> &&
    std::same_as<decltype(&P::q_tile_at), QTileAtFn> &&
    std::same_as<decltype(&P::dq_rank), DqRankFn> &&
    std::same_as<decltype(&P::dkv_rank), DkvRankFn> &&
    std::same_as<decltype(P::kHeadDim), int const> &&
    std::same_as<decltype(P::kDType), int const> &&
    std::same_as<decltype(P::kMaskKind), int const> &&
    std::same_as<decltype(P::kTileM), int const> &&
    std::same_as<decltype(P::kTileN), int const> &&
    std::same_as<decltype(P::kScheduleHash), std::uint64_t const> &&
    // Constant expressions (a kernel branches on them at compile time), within their domains.
    requires {
      typename std::integral_constant<std::uint64_t, P::kScheduleHash>;
      requires P::kHeadDim >= 0 && P::kTileM >= 0 && P::kTileN > 0;
      requires P::kDType >= -1 && P::kDType <= 1;
      requires P::kMaskKind >= -1 && P::kMaskKind <= kMaskWindow;
    };

}  // namespace dash::rt
