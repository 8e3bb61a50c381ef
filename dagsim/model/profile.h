#pragma once
// A machine profile: the cost model's rates per kernel family on one GPU, with where they came
// from (docs/model.md, "Machine profiles"). A JSON file: `--profile FILE` on every subcommand that
// builds a cost model, written by `dash calibrate`; profiles/h200.json is built in and is the
// default. Reading never trusts the file: any defect is one UserError.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dagsim/model/cost_model.h"

namespace dash::sim {

struct FamilyRates {
  std::string family;  ///< a kernel family's name ("sm80", "sm90")
  KernelRates rates;
  std::string source;  ///< how the rates were obtained
  friend bool operator==(FamilyRates const&, FamilyRates const&) = default;
};

struct MachineProfile {
  std::string gpu;     ///< e.g. "h200"
  int sms = 0;         ///< of the GPU it was measured on (rates are per SM: any --sms may use them)
  int clock_mhz = 0;   ///< the SM clock its cycles count
  std::string source;  ///< what was measured, when, with which commit
  std::vector<FamilyRates> families;  ///< as read: in name order
  friend bool operator==(MachineProfile const&, MachineProfile const&) = default;

  /// The rates of `family`, or null when the profile has none.
  [[nodiscard]] KernelRates const* rates_for(std::string_view family) const;
};

/// Parses a profile; `families`: the kernel family names a profile may name (others are a typo).
MachineProfile profile_from_json(std::string const& text,
                                 std::span<std::string_view const> families);
/// Stable key order (families by name), ends in a newline; profile_from_json reads back a profile
/// whose families are in name order equal.
std::string to_json(MachineProfile const& profile);
/// profile_from_json of a file (at most 1 MiB), the path in every error.
MachineProfile read_profile_file(std::string const& path,
                                 std::span<std::string_view const> families);

/// A family's rates as a JSON object, with the profile's key names (reports: dash fidelity, dash
/// calibrate).
nlohmann::json rates_to_json(KernelRates const& rates);
/// The rates on one line: "F 2379 (d64 ..), B 15, L 1309, k 2, o 5195, pre/post 843 B/cycle, ...".
std::string rates_line(KernelRates const& rates);

/// The built-in profile (profiles/h200.json, compiled in): the default rates of every family.
MachineProfile const& builtin_profile();

}  // namespace dash::sim
