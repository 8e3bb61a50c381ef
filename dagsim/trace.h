#pragma once
// Views of a simulation: Chrome/Perfetto trace JSON (one track per CTA) and an SVG Gantt chart.
#include <string>

#include "dagsim/simulate.h"

namespace dash::sim {

std::string to_chrome_trace(SimResult const& result, std::string const& title);
std::string to_svg_gantt(SimResult const& result, int sms, std::string const& title);

}  // namespace dash::sim
