#pragma once
// The cost model's rates per kernel family (dagsim's KernelRates) and the default model they give:
// what `--model default` and the PyTorch op's schedule search use for the family a schedule is
// made for (docs/model.md). The rates are the built-in machine profile's (profiles/h200.json,
// compiled in: dagsim/model/profile.h), which says where each family's figures come from.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "dagsim/core/error.h"
#include "dagsim/core/mask.h"
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

/// The family's tiles at a head dim, in words ("64x128", "64x128 or 80x128"): for refusals.
inline std::string family_tiles_text(KernelFamily f, int head_dim) {
  std::string const tn = std::to_string(family_tile_n(f));
  int const base = family_tile_m(f, head_dim);
  int const full = family_default_tile_m(f, head_dim, false);
  std::string text = std::to_string(base) + "x" + tn;
  if (full != base) text += " or " + std::to_string(full) + "x" + tn;
  return text;
}

/// The Q tile a problem with `mask` gets from family `f` when it names none
/// (family_default_tile_m: a mask is a causal or a window one).
inline int default_tile_m(KernelFamily f, int head_dim, sim::Mask const& mask) {
  return family_default_tile_m(f, head_dim, mask.kind != sim::MaskKind::kFull);
}

/// The default cost model of `problem` for family `f` from the family's `rates`: its dQ buffer
/// depth capped at what the family's kernel has at the problem's tiles (one at the sm90 80-row
/// tile, where the family's rates say two).
inline sim::CostModel family_model(sim::Problem const& problem, sim::KernelRates rates,
                                   KernelFamily f) {
  if (auto const cap = family_dq_buffer_cap(f, problem.head_dim, problem.tile_m)) {
    rates.dq_buffer = std::min(rates.dq_buffer, *cap);
  }
  return sim::default_model(problem, rates);
}

/// The same where the family is not known but the tiles tell (records of measured runs): the dQ
/// buffer depth capped where any family's kernel has fewer buffers at the problem's tiles; those
/// tiles (80 rows at head_dim 128) are one family's only, so the cap is that family's.
inline sim::CostModel tiles_model(sim::Problem const& problem, sim::KernelRates const& rates) {
  for (KernelFamily f : kAllFamilies) {
    if (family_dq_buffer_cap(f, problem.head_dim, problem.tile_m)) return family_model(problem, rates, f);
  }
  return sim::default_model(problem, rates);
}

/// The default cost model of `problem` for a schedule made for family `f` (built-in rates).
inline sim::CostModel family_default_model(sim::Problem const& problem, KernelFamily f) {
  return family_model(problem, family_model_rates(f), f);
}

}  // namespace dash::rt
