#pragma once
// The GPU side of `dash bench`: the device, the rotated input buffers and the timed backward calls.
// No CUDA types in this header, so the CLI compiles without CUDA; there every entry point refuses
// with a UserError (one line, exit 2).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "runtime/kernel_trace.h"
#include "runtime/kernels/family.h"
#include "tools/bench_plan.h"

namespace dash::cli {

struct DeviceInfo {
  std::string name;  ///< e.g. "NVIDIA H200"
  int sms = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int clock_khz = 0;  ///< peak SM clock (cudaDevAttrClockRate): measured traces' cycles
  /// The family `--kernel auto` plans this device's shapes with (rt::planning_family: the first
  /// built into this binary that runs here); none if no family does.
  std::optional<rt::KernelFamily> planning_family;
};

/// Device 0. UserError when dash was built without CUDA or no GPU is visible.
DeviceInfo query_device();

struct Timing {
  std::vector<double> ms;  ///< one per timed call, in run order
  std::string kernel;      ///< the main kernel that ran
  int grid = 0;            ///< its CTAs
  int input_sets = 0;      ///< buffers rotated through
  bool dq_zeroed = false;  ///< each call zeroed the dQ accumulator first (rt::Attention::zeroes_dq)
};

struct TimingPlan {
  int warmup = 3;
  int iters = 10;
};

/// Times attention backward (preprocess + main + postprocess, as one call of the runtime) with
/// CUDA events around each call. Inputs are seeded random bf16 values, rotated over enough sets
/// that every call reads data that was evicted from L2 by the calls before it.
class BackwardTimer {
 public:
  BackwardTimer(DeviceInfo device, std::uint64_t seed);
  ~BackwardTimer();
  BackwardTimer(BackwardTimer const&) = delete;
  BackwardTimer& operator=(BackwardTimer const&) = delete;

  /// Allocates (or reuses) and fills the inputs of `problem`, runs the forward pass for O and LSE.
  /// UserError when the runtime refuses the problem.
  void set_problem(sim::Problem const& problem);
  /// Uploads the schedule (validated by the runtime) for a kernel of `family` (none: the
  /// runtime's auto choice); `generic`: the family's generic table-driven kernel even where a
  /// specialization of the schedule is registered. UserError when it is refused.
  void set_schedule(sim::Schedule const& schedule, std::optional<rt::KernelFamily> family,
                    bool generic = false);
  /// The main kernel set_schedule picked (the registry's name).
  [[nodiscard]] std::string kernel_name() const;
  [[nodiscard]] Timing time(BenchMode mode, TimingPlan plan);
  /// One more (untimed) backward with the kernel trace on (runtime/kernel_trace.h); its record.
  /// UserError in a build without DASH_KERNEL_TRACE.
  [[nodiscard]] rt::RawTrace trace(BenchMode mode);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dash::cli
