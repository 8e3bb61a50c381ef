#include "tools/bench_plan.h"

#include <algorithm>
#include <cstdint>

#include <fmt/ranges.h>

#include "dagsim/benchmark/grid.h"
#include "dagsim/core/error.h"
#include "dagsim/core/strategies.h"
#include "runtime/kernels/family_model.h"

namespace dash::cli {
namespace {

std::vector<std::string> split_list(std::string const& text, std::string const& flag) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t const comma = text.find(',', start);
    std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (part.empty()) user_error("{}: empty entry in '{}'", flag, text);
    if (std::find(parts.begin(), parts.end(), part) != parts.end()) {
      user_error("{}: '{}' is listed twice", flag, part);
    }
    parts.push_back(std::move(part));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

}  // namespace

std::string to_string(BenchMode mode) { return mode == BenchMode::kDet ? "det" : "nondet"; }

std::vector<BenchMode> parse_modes(std::string const& text, std::string const& flag) {
  std::vector<BenchMode> modes;
  for (auto const& part : split_list(text, flag)) {
    if (part == "det") {
      modes.push_back(BenchMode::kDet);
    } else if (part == "nondet") {
      modes.push_back(BenchMode::kNondet);
    } else {
      user_error("{}: unknown mode '{}' (expected det, nondet)", flag, part);
    }
  }
  return modes;
}

std::vector<sim::Mask> parse_masks(std::string const& text, std::string const& flag) {
  std::vector<sim::Mask> masks;
  for (auto const& part : split_list(text, flag)) {
    if (part == "full") {
      masks.push_back(sim::Mask{sim::MaskKind::kFull});
    } else if (part == "causal") {
      masks.push_back(sim::Mask{sim::MaskKind::kCausal});
    } else {
      user_error("{}: unknown mask '{}' (expected full, causal; windows: --mask with one shape)",
                 flag, part);
    }
  }
  return masks;
}

std::vector<std::string> parse_strategies(std::string const& text, std::string const& flag) {
  std::vector<std::string> known = sim::strategy_names();
  known.emplace_back(kSearchStrategy);
  std::vector<std::string> names = split_list(text, flag);
  for (auto const& name : names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      user_error("{}: unknown strategy '{}' (expected {})", flag, name, fmt::join(known, ", "));
    }
  }
  return names;
}

std::vector<sim::Problem> grid_shapes(BenchGrid const& grid) {
  if (grid.total_tokens <= 0 || grid.hidden <= 0) {
    user_error("--total-tokens and --hidden must be positive, got {} and {}", grid.total_tokens,
               grid.hidden);
  }
  std::vector<sim::Problem> shapes;
  for (int d : grid.head_dims) {
    if (d <= 0 || grid.hidden % d != 0) {
      user_error("--head-dims: {} does not divide the hidden size {}", d, grid.hidden);
    }
    for (auto const& mask : grid.masks) {
      for (int s : grid.seqlens) {
        if (s <= 0 || grid.total_tokens % s != 0) {
          user_error("--seqlens: {} does not divide the total tokens {}", s, grid.total_tokens);
        }
        shapes.push_back(sim::grid_problem(
            s, d, mask, grid.tile_m.value_or(rt::default_tile_m(grid.family, d, mask)), grid.tile_n,
            grid.total_tokens, grid.hidden));
      }
    }
  }
  if (shapes.empty()) user_error("the benchmark grid is empty");
  return shapes;
}

}  // namespace dash::cli
