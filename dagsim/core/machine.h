#pragma once
// The GPU as the model sees it: a name and a number of SMs (one CTA per SM).
#include <string>
#include <vector>

namespace dash::sim {

struct Machine {
  std::string name = "h200";
  int sms = 132;

  friend bool operator==(Machine const&, Machine const&) = default;
};

/// Presets: h100, h200, h800 (132 SMs), h20 (78), a100 (108), b200 (148). Throws UserError on an
/// unknown name, listing the known ones.
Machine machine_preset(std::string const& name);
/// Any SM count (>= 1, <= 4096), named "smN".
Machine machine_with_sms(int sms);
std::vector<std::string> machine_preset_names();

}  // namespace dash::sim
