#pragma once
// Views of a simulation: Chrome/Perfetto trace JSON (one track per CTA) and an SVG Gantt chart.
#include <string>

#include "dagsim/model/dag.h"
#include "dagsim/model/simulate.h"

namespace dash::sim {

/// Chrome trace JSON: "X" slices on pid 0, one tid per CTA named "CTA n (SM m)" (plus a
/// "dQ writer" track when its reductions overlap its compute), waits as their own "wait" slices.
/// Model cycles are written as microseconds.
std::string to_chrome_trace(SimResult const& result, std::string const& title);
/// One row per CTA (at most 132 rows: larger grids are shown per SM or per group of SMs), slices
/// narrower than a pixel merged, so the file stays small for any number of steps.
std::string to_svg_gantt(SimResult const& result, int sms, std::string const& title);

/// "C b0 h3 i5 j2", "R b0 h3 i5 j2", "K b0 h3 j2" (dK/dV reduction of q head 3 into KV tile 2).
std::string node_label(Node const& node);
std::string slice_label(Slice const& slice);

}  // namespace dash::sim
