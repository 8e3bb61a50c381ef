#pragma once
// Integer costs of the DAG's nodes and edges (docs/design.md section 2).
#include <string>
#include <vector>

#include "dagsim/core/problem.h"
#include "dagsim/core/units.h"

namespace dash::sim {

struct CostModel {
  Cycles compute = 3800;  ///< c: one full (unmasked) step (i, j): the five GEMMs
  Cycles reduce = 1000;   ///< r: one ordered reduce-add of a dQ partial tile into global memory
  Cycles latency = 1000;  ///< L: ticket hand-off between consecutive reductions into one dQ tile
  int dq_buffer = 1;      ///< k: 0 = C then R back to back; k >= 1 = writer warp, k-deep buffer
  /// Partially masked steps (diagonal, window edge) cost c * visible / tile pairs when true
  /// (rounded up, at least 1); full c when false.
  bool proportional = true;
  Cycles reduce_kv = 2000;  ///< GQA: one ordered reduce-add of a dK+dV partial of a KV tile
  /// o: added to the first step of each work item (what a new item costs a CTA beyond its steps:
  /// its K/V load, refilling the pipeline, the previous item's dK/dV epilogue where the kernel
  /// does not overlap them)
  Cycles item = 0;
  Cycles dsmem = 400;       ///< 2-CTA mode: per-step DSMEM exchange between the pair
  /// The memory floor (memory_floor.h): HBM bytes the whole GPU moves per SM cycle; 0 = no floor.
  std::int64_t hbm_bytes_per_cycle = 0;
  /// The L2 capacity the schedule's working set is held against (bytes; with the floor only).
  std::int64_t l2_bytes = 0;
  /// false: the reductions land in arrival order, as the kernel's atomic (non-deterministic) mode
  /// adds them: no rank edges, no hand-offs, no chain bound. The writer still adds each partial.
  bool ordered = true;

  friend bool operator==(CostModel const&, CostModel const&) = default;

  /// Cost of step (i, j) of batch b under this model (without `item`).
  [[nodiscard]] Cycles step_cost(Problem const& problem, int b, int i, int j) const;
  /// The same for the `t`-th step of a work item's walk: the first one carries `item`.
  [[nodiscard]] Cycles walk_step_cost(Problem const& problem, int b, int i, int j,
                                      std::size_t t) const {
    return step_cost(problem, b, i, j) + (t == 0 ? item : 0);
  }
};

/// A compute rate for one head dimension (KernelRates::flops_by_head_dim).
struct HeadDimFlops {
  int head_dim = 0;
  int flops_per_cycle = 0;

  friend bool operator==(HeadDimFlops const&, HeadDimFlops const&) = default;
};

/// Per-SM rates of a kernel's backward that default_model() derives its costs from. The defaults
/// are the portable (mma.sync) kernel's on the H200; runtime/kernels/family_model.h has each
/// kernel family's.
struct KernelRates {
  int flops_per_cycle = 1024;      ///< bf16 FLOP per cycle of a step's five GEMMs
  int reduce_bytes_per_cycle = 32;  ///< of one ordered dQ (or dK/dV) reduce-add
  Cycles latency = 1000;            ///< L: one ticket hand-off
  int dq_buffer = 1;                ///< k
  Cycles item_cycles = 0;           ///< o: per work item (CostModel::item)
  /// The pre- and postprocess passes around the main kernel (GPU-wide bytes per SM cycle; 0: not
  /// modelled): what a whole backward call costs beyond the makespan (prepost_cycles()).
  int prepost_bytes_per_cycle = 0;
  /// CostModel::hbm_bytes_per_cycle and l2_bytes: the memory floor's (memory_floor.h); 0 = none.
  std::int64_t hbm_bytes_per_cycle = 0;
  std::int64_t l2_bytes = 0;
  /// F of the head dimensions whose steps run at another rate than flops_per_cycle, sorted by
  /// head_dim, each once: a step at head dim 64 does the elementwise work of one at 128 (the same
  /// tile pairs at twice the rows) for half the FLOPs (docs/model.md, "Calibration").
  std::vector<HeadDimFlops> flops_by_head_dim;

  /// F for a step of head dim `head_dim`: its entry in flops_by_head_dim, else flops_per_cycle.
  [[nodiscard]] int flops_for(int head_dim) const;

  friend bool operator==(KernelRates const&, KernelRates const&) = default;
};

/// Whether the preprocess zeroes dQ's fp32 accumulator before the main kernel: when some Q tile
/// sees no key, or unordered unless the kernel's first contribution to a tile claims it
/// (`first_claims`: the kernel family's dq_first_claims); else the first contribution to each tile stores
/// (in rank order: rank 0's).
bool zeroes_dq(Problem const& problem, bool ordered, bool first_claims = false);

/// How a call's dQ accumulator starts: zeroed by the preprocess, or written by the first
/// contribution to each tile (a store, not an add).
enum class DqZeroing { kFirstStores, kZeroed };

/// Cycles of the pre- and postprocess passes of `problem` at `rates`: their bytes (O and dO read,
/// dQ's fp32 accumulator read and dQ written: 10 bytes per Q element; 4 more where the
/// accumulator is zeroed first; under GQA the dK and dV accumulators zeroed, read and written: 20
/// per K element) over prepost_bytes_per_cycle; 0 when that is 0. The same for every schedule of
/// the problem.
Cycles prepost_cycles(Problem const& problem, KernelRates const& rates, DqZeroing zeroing);
/// The same, zeroing as zeroes_dq(problem, ordered, first_claims) says.
Cycles prepost_cycles(Problem const& problem, KernelRates const& rates, bool ordered = true,
                      bool first_claims = false);

/// The DASH paper's model: L = 0, k = 0, diagonal steps at full cost, c and r as given.
CostModel paper_model(Cycles compute, Cycles reduce);
/// The default for a problem, in cycles of one SM: c from the step's FLOPs, r from the dQ tile's
/// bytes, L, k and the memory floor's bandwidth and L2 as the rates say.
CostModel default_model(Problem const& problem, KernelRates const& rates = KernelRates{});

}  // namespace dash::sim
