#pragma once
// The results of `dash bench`: one record per (shape, strategy, mode), the ratios derived from
// them (det / non-det, measured and predicted speedup over fa3) and their two renderings: a human
// table and JSON.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dagsim/core/problem.h"
#include "dagsim/core/units.h"
#include "tools/bench_plan.h"

namespace dash::cli {

/// What is the same for every record of one run.
struct BenchRun {
  std::string date;      ///< UTC, ISO 8601
  std::string gpu;       ///< device name, or "dry-run (<machine>)" without one
  int sms = 0;           ///< SMs of the device (or of the modelled machine in a dry run)
  int schedule_sms = 0;  ///< SMs the schedules were made for
  std::string commit;    ///< --commit, may be empty
  int iters = 0;
  int warmup = 0;
  std::uint64_t seed = 0;
  bool measured = false;  ///< false: dry run, predictions only
};

struct BenchRecord {
  sim::Problem problem;
  std::string strategy;
  BenchMode mode = BenchMode::kDet;
  std::string refused;  ///< why it did not run (empty when it ran or, in a dry run, was planned)
  double flops = 0.0;
  // Measured.
  std::vector<double> ms;  ///< every timed call
  std::optional<double> ms_median;
  std::string kernel;
  int grid = 0;
  int input_sets = 0;
  /// Each call zeroed the fp32 dQ accumulator first (a pass the model's pre/postprocess term
  /// counts); absent in a dry run.
  std::optional<bool> dq_zeroed;
  // The model (deterministic schedules: the simulator has no arrival-order mode).
  std::optional<sim::Cycles> predicted_makespan;
  std::optional<sim::Cycles> fa3_makespan;  ///< fa3's prediction for the same shape
  /// The schedule's working set (most bytes of Q, dO and dQ accumulator live at once; not in the
  /// model's cost): set beside the measurement to see what the L2 does to it.
  std::optional<std::int64_t> live_bytes;
  // Derived by derive_ratios.
  std::optional<double> det_over_nondet;   ///< det TFLOP/s / non-det TFLOP/s of this strategy
  std::optional<double> predicted_vs_fa3;  ///< fa3 makespan / this makespan
  std::optional<double> measured_vs_fa3;   ///< fa3 det time / this det time

  [[nodiscard]] std::optional<double> tflops() const;
};

/// Fills the ratios from records of the same shape: det/nondet per strategy, the predicted
/// speedup over fa3 (fa3_makespan / predicted_makespan) and the measured one (over the fa3 record
/// of the same shape and mode). Absent where an operand is missing.
void derive_ratios(std::vector<BenchRecord>& records);

/// One line per (shape, strategy): det and non-det side by side, then the fidelity columns.
std::string format_table(BenchRun const& run, std::vector<BenchRecord> const& records);

/// A JSON array, one object per record, each carrying the run's date, GPU, SMs and commit.
nlohmann::json to_json(BenchRun const& run, std::vector<BenchRecord> const& records);

/// "b=16 h=32 s=1024 d=64 causal" (the table's shape column).
std::string shape_label(sim::Problem const& problem);

}  // namespace dash::cli
