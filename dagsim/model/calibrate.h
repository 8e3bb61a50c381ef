#pragma once
// Calibration: the cost model's rates fitted to traces (docs/model.md, "Calibration"). A trace is
// what `dash bench --trace` (measured on the GPU) or `dash simulate --trace` writes: Chrome trace
// JSON whose otherData names the problem, the kernel family and the SM count. From its slices:
//   - c: a full step's period, from its start (loads in hand) to the start of the CTA's next step
//     of the same item, so that what the CTA does between two steps' slices (waiting for loads,
//     the last GEMM, releasing the stage) counts; first steps of work items left out;
//   - o: a work item's first step's period less the step's cost under that c (the K/V load, the
//     pipeline's refill and the previous item's epilogue are in it);
//   - r: a dQ reduce slice (the add, its completion and the release);
//   - L: the hand-off from one rank's release to the next rank's start, where the next one was
//     already waiting for it.
// Each rate is the median over its samples (robust to the few steps that an interrupt or a late
// load stretches), reported with its spread. The trace also gives back the schedule that ran: the
// steps of each CTA in order and, deterministic, each dQ tile's contributions in order, so the
// fitted model's makespan can be set against the measured one.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/profile.h"
#include "dagsim/model/trace.h"

namespace dash::sim {

/// A trace read back: its timeline and what it was a trace of.
struct TraceRecord {
  Problem problem;
  std::string family;  ///< kernel family whose rates it measures
  int sms = 0;         ///< SMs of the machine the schedule was made for
  Timeline timeline;
};

/// Reads a trace written by to_chrome_trace with TraceMeta. UserError on anything else.
TraceRecord trace_from_json(std::string const& text);
TraceRecord read_trace_file(std::string const& path);

/// The schedule a trace ran (persistent launch): per CTA its steps in start order, items split
/// where (b, h, j) changes; per dQ tile the KV tiles in the order their reduce slices started.
/// None when the problem is GQA (the dK/dV order is not in the trace) or the steps do not form a
/// schedule of the problem.
std::optional<Schedule> schedule_from_trace(TraceRecord const& trace);

/// Samples of one rate and their median.
struct RateFit {
  double value = 0;   ///< the median sample
  double spread = 0;  ///< (p90 - p10) / median of the samples; 0 without samples
  std::int64_t samples = 0;
};

struct CalibrationFit {
  std::string family;
  KernelRates rates;        ///< fitted (dq_buffer: the base's, a property of the kernel)
  RateFit flops_per_cycle;  ///< from full compute slices (not first): 10 tile_m tile_n d / duration
  /// The same per head dim of the traces (rates.flops_by_head_dim takes those that differ from
  /// the overall median).
  std::vector<std::pair<int, RateFit>> flops_by_head_dim;
  RateFit bytes_per_cycle;  ///< from reduce slices: 4 tile_m d / duration
  RateFit latency;          ///< hand-off samples, cycles
  RateFit item;             ///< per-item samples, cycles
};

/// Fits the rates of every family named by `traces` (base: the rates a family keeps where its
/// traces give no sample of a rate, and its dq_buffer). UserError when a family has no compute
/// sample at all (nothing to fit).
std::vector<CalibrationFit> calibrate(std::vector<TraceRecord> const& traces,
                                      std::vector<FamilyRates> const& base);

}  // namespace dash::sim
