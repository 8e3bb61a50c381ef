#pragma once
// The cost model's rates per kernel family (dagsim's KernelRates) and the default model they give:
// what `--model default` and the PyTorch op's schedule search use for the family a schedule is
// made for (docs/model.md). The rates are the built-in machine profile's (profiles/h200.json,
// compiled in: dagsim/model/profile.h), which says where each family's figures come from.
#include <array>
#include <string_view>

#include "dagsim/core/error.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/profile.h"
#include "runtime/kernels/family.h"

namespace dash::rt {

/// Every family's name, in kAllFamilies' order: the names a machine profile may use.
inline constexpr std::array<std::string_view, std::size(kAllFamilies)> kFamilyNames = [] {
  std::array<std::string_view, std::size(kAllFamilies)> names{};
  for (std::size_t k = 0; k < names.size(); ++k) names[k] = family_name(kAllFamilies[k]);
  return names;
}();

/// Family `f`'s rates in `profile`; UserError naming `origin` when the profile has none.
inline sim::KernelRates family_rates(sim::MachineProfile const& profile, KernelFamily f,
                                     std::string_view origin) {
  sim::KernelRates const* r = profile.rates_for(family_name(f));
  if (r == nullptr)
    user_error("profile {} has no rates for kernel family {}", origin, family_name(f));
  return *r;
}

/// The built-in profile's rates of family `f` (it has every family: tested).
inline sim::KernelRates family_model_rates(KernelFamily f) {
  return family_rates(sim::builtin_profile(), f, "profiles/h200.json (built in)");
}

/// The default cost model of `problem` for a schedule made for family `f`.
inline sim::CostModel family_default_model(sim::Problem const& problem, KernelFamily f) {
  return sim::default_model(problem, family_model_rates(f));
}

}  // namespace dash::rt
