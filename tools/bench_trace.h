#pragma once
// Measured kernel traces (`dash bench --trace`): the raw record of a traced backward
// (runtime/kernel_trace.h) decoded against the schedule that ran, drawn with the simulator's tracks
// and slice names (dagsim/model/trace.h), and summarized per step. Pure host code: testable
// without a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "dagsim/core/schedule.h"
#include "dagsim/model/trace.h"
#include "runtime/kernel_trace.h"

namespace dash::cli {

/// Nanoseconds since the earliest CTA's start.
struct TraceStep {
  std::int64_t at[rt::kStepStamps] = {};
};
struct TraceItem {
  std::int64_t at[rt::kItemStamps] = {};
  int steps = 0;  ///< its steps (the schedule's walk)
};
struct CtaTrace {
  int sm = 0;
  std::vector<TraceStep> steps;  ///< the steps the schedule gives the CTA, in run order
  std::vector<TraceItem> items;
};
struct KernelTrace {
  std::vector<CtaTrace> ctas;
  std::int64_t span_ns = 0;  ///< earliest start to latest end
};

/// Puts every CTA's clock64 stamps on one nanosecond axis through its (%globaltimer, clock64)
/// pairs. Throws UserError when the record does not fit the schedule (another grid, fewer steps)
/// or a stamp the schedule's steps and items need is missing or out of order.
KernelTrace decode_trace(rt::RawTrace const& raw, sim::Schedule const& schedule);

/// The trace as the simulator draws a schedule: per step a compute slice "C b h i j" (ready when
/// the warpgroups asked for the step's loads, from when they had them until the partial dQ was
/// handed to the writer; a work item's first one from where the CTA's previous step handed its
/// partial over, or the CTA asked for its first item, as the model charges CostModel::item
/// there) and a reduce slice "R b h i j" (ready when the writer took it, from when the ticket was
/// acquired until the add completed), in SM cycles at `cycles_per_ns`.
sim::Timeline measured_timeline(KernelTrace const& trace, sim::Schedule const& schedule,
                                double cycles_per_ns);

/// Means per step over every CTA (ns), and what they add up to.
struct TraceSummary {
  std::int64_t steps = 0;
  std::int64_t items = 0;
  double span_ns = 0;
  double compute_ns = 0;      ///< loads in hand to partial dQ computed
  double load_wait_ns = 0;    ///< waiting for the step's Q, dO
  double buffer_wait_ns = 0;  ///< waiting for a free dQ buffer
  double writer_lag_ns = 0;   ///< partial handed over to the writer taking it
  double ticket_wait_ns = 0;  ///< the writer waiting for the rank
  double reduce_ns = 0;       ///< the add (and, det, its completion and the release)
  double item_gap_ns = 0;     ///< per item after a CTA's first: previous item's last partial handed
                              ///< over to this item's first loads in hand; of which (the three
                              ///< parts, less the few instructions between them):
  double item_end_ns = 0;     ///<   previous item's last partial handed over to its dK, dV stored
  double item_kv_ns = 0;      ///<   waiting for this item's K, V
  double item_first_ns = 0;   ///<   K, V in hand to the first step's Q, dO in hand
  double busy = 0;            ///< compute over (CTAs x span)
};
TraceSummary summarize(KernelTrace const& trace);
std::string format_summary(TraceSummary const& s);

}  // namespace dash::cli
