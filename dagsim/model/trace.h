#pragma once
// Views of a simulation: Chrome/Perfetto trace JSON (one track per CTA) and an SVG Gantt chart.
#include <string>
#include <vector>

#include "dagsim/core/problem.h"
#include "dagsim/model/dag.h"
#include "dagsim/model/simulate.h"

namespace dash::sim {

/// What the views draw: slices per CTA, simulated (timeline_of) or measured on the GPU (`dash bench
/// --trace`, tools/bench_trace.h), in cycles.
struct Timeline {
  std::vector<Slice> slices;
  std::vector<int> cta_sms;  ///< per CTA: the SM it ran on
  Cycles makespan = 0;
  std::string time_unit = "model cycles";  ///< what a cycle is (traces say it)
};
Timeline timeline_of(SimResult const& result);

/// What a trace is a trace of: written into its otherData so that `dash calibrate` can read it back
/// (dagsim/model/calibrate.h).
struct TraceMeta {
  Problem problem;
  std::string family;  ///< the kernel family whose rates it shows ("sm90")
  int sms = 0;         ///< the machine the schedule was made for
  std::string source;  ///< "simulated", or what measured it
};

/// Chrome trace JSON: "X" slices on pid 0, one tid per CTA named "CTA n (SM m)" (plus a
/// "dQ writer" track when its reductions overlap its compute), waits as their own "wait" slices.
/// Cycles are written as microseconds.
std::string to_chrome_trace(Timeline const& timeline, std::string const& title,
                            TraceMeta const* meta = nullptr);
std::string to_chrome_trace(SimResult const& result, std::string const& title);
/// One row per CTA (at most 132 rows: larger grids are shown per SM or per group of SMs), slices
/// narrower than a pixel merged, so the file stays small for any number of steps.
std::string to_svg_gantt(Timeline const& timeline, int sms, std::string const& title);
std::string to_svg_gantt(SimResult const& result, int sms, std::string const& title);
/// Two charts one above the other on one time axis (the longer makespan): e.g. a measured trace
/// over the simulation of the same schedule.
std::string to_svg_gantt_pair(Timeline const& top, std::string const& top_title,
                              Timeline const& bottom, std::string const& bottom_title, int sms,
                              std::string const& title);

/// "C b0 h3 i5 j2", "R b0 h3 i5 j2", "K b0 h3 j2" (dK/dV reduction of q head 3 into KV tile 2).
std::string node_label(Node const& node);
std::string slice_label(Slice const& slice);

}  // namespace dash::sim
