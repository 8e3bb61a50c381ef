#pragma once
// The cost model's rates per kernel family (dagsim's KernelRates) and the default model they give:
// what `--model default` and the PyTorch op's schedule search use for the family a schedule is
// made for (docs/model.md).
#include "dagsim/model/cost_model.h"
#include "runtime/kernels/family.h"

namespace dash::rt {

/// From H200 measurements (1.98 GHz):
/// - sm80 (portable, mma.sync): KernelRates' defaults. ~1024 bf16 FLOP/cycle/SM (~290 TFLOP/s
///   backward at d128 8k on 132 SMs, docs/results/2026-12-01-h200-symmetric-k2-first-store.md);
///   each warp's reduce-adds stream ~32 B/cycle/SM into L2; one ticket hand-off ~1000 cycles
///   (823-1232 one-way, measured 2026-11-29 with a stand-alone probe outside this repository).
/// - sm90 (Hopper): ~2100 FLOP/cycle/SM (544-597 TFLOP/s at d128 8k,
///   docs/results/2026-12-03-h200-sm90-ds-stages.md); one ordered dQ link (acquire, 32 KB bulk
///   reduce-add, completion, release) cost 1.33-1.46 us, ~2700 cycles (measured 2026-12-02 with a
///   stand-alone probe outside this repository), here split into r = 32 KB at 20 B/cycle (1639)
///   and L = 1100; two dQ buffers. Against the grid and off-grid runs of that results file these
///   rates predict each strategy's speedup over fa3 with a mean |log error| of 0.078 (grid) and
///   0.070 (off the grid), against 0.108 and 0.117 with the sm80 rates.
constexpr sim::KernelRates family_model_rates(KernelFamily f) {
  if (f == KernelFamily::kSm90) return sim::KernelRates{2100, 20, 1100, 2};
  return sim::KernelRates{};
}

/// The default cost model of `problem` for a schedule made for family `f`.
inline sim::CostModel family_default_model(sim::Problem const& problem, KernelFamily f) {
  return sim::default_model(problem, family_model_rates(f));
}

}  // namespace dash::rt
