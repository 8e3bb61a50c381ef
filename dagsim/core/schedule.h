#pragma once
// A schedule for one problem on one machine (docs/design.md section 3). Plain data: JSON round-trip
// (dagsim/core/schedule_io.h), replayable, diffable. Validate it (dagsim/model/validate.h) before any use.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dash::sim {

enum class LaunchModel : std::uint8_t {
  kPersistent,  ///< grid <= SMs; each CTA runs its static list of work items, all CTAs resident
  kDynamic,     ///< one CTA per work item, dispatched in launch order to the first free SM
};

/// One CTA's walk over the Q tiles that see KV tile `kv_tile` of (batch, q head).
struct WorkItem {
  int batch = 0;
  int head = 0;  ///< q head
  int kv_tile = 0;
  std::vector<int> q_order;  ///< the Q tiles visited, in order; exactly the visible ones

  friend bool operator==(WorkItem const&, WorkItem const&) = default;
};

struct Cta {
  std::vector<WorkItem> items;  ///< run one after another; dynamic launch: exactly one item
  friend bool operator==(Cta const&, Cta const&) = default;
};

struct Schedule {
  std::string strategy;  ///< where it came from ("fa3", "shift", "search", "file", ...)
  LaunchModel launch = LaunchModel::kPersistent;
  /// Persistent: the grid (size <= SMs). Dynamic: CTAs in launch order.
  std::vector<Cta> ctas;
  /// Per dQ tile (TileIndex::dq_id): the KV tiles that contribute to it, in rank order (rank 0
  /// first). A permutation of the KV tiles that see the dQ tile.
  std::vector<std::vector<int>> dq_order;
  /// GQA/MQA only (empty otherwise): per dK/dV tile (TileIndex::dkv_id), the q heads of the group
  /// in rank order. A permutation of the group's q heads.
  std::vector<std::vector<int>> dkv_order;

  friend bool operator==(Schedule const&, Schedule const&) = default;
};

std::string to_string(LaunchModel launch);
LaunchModel parse_launch(std::string const& text);  ///< "persistent" | "dynamic"; else UserError

/// Number of steps (unmasked (i, j) pairs over all items) the schedule runs.
std::int64_t count_steps(Schedule const& schedule);

/// FNV-1a 64 over the schedule's integers, each as 8 little-endian bytes of its int64 value, in
/// the order of docs/schedule-protocol.md; 0 maps to 1. The key under which generated kernels
/// register with the runtime, so code generator and runtime must compute it identically: this is
/// the one implementation both call.
std::uint64_t schedule_hash(Schedule const& schedule);

/// Ranks by lock-step order: for every dQ tile (and dK/dV tile under GQA), order contributions by
/// the time at which they occur when every step takes one unit and CTA c starts at starts[c] (no
/// starts: all at 0, the CTAs walk their lists in lock step, step t of every CTA before step t+1 of
/// any); ties by CTA index. Used by `shift`, `symmetric-shift` and search seeds, and with the
/// dispatch times of a dynamic launch.
struct Problem;
void assign_lockstep_ranks(Problem const& problem, Schedule& schedule, std::span<std::int64_t const> starts = {});

}  // namespace dash::sim
