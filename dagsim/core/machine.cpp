#include "dagsim/core/machine.h"

#include <array>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dagsim/core/error.h"

namespace dash::sim {
namespace {

constexpr std::array<std::pair<char const*, int>, 6> kPresets{{
    {"h100", 132}, {"h200", 132}, {"h800", 132}, {"h20", 78}, {"a100", 108}, {"b200", 148},
}};

}  // namespace

std::vector<std::string> machine_preset_names() {
  std::vector<std::string> names;
  for (auto const& [name, sms] : kPresets) names.emplace_back(name);
  return names;
}

Machine machine_preset(std::string const& name) {
  for (auto const& [preset, sms] : kPresets) {
    if (name == preset) return Machine{preset, sms};
  }
  user_error("unknown GPU '{}': known are {}", name, fmt::join(machine_preset_names(), ", "));
}

Machine machine_with_sms(int sms) {
  if (sms < 1 || sms > 4096) user_error("SM count must be in 1..4096, got {}", sms);
  return Machine{fmt::format("sm{}", sms), sms};
}

}  // namespace dash::sim
