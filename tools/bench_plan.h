#pragma once
// The plan of `dash bench`: which shapes (the DASH/FA3 grid of docs/design.md section 6, or one shape),
// which strategies and which reduction modes (the FLOPs and TFLOP/s, the grid's rule and the
// median are dash::sim's: dagsim/core/flops.h, grid.h, median.h). Pure values: no GPU, testable on any
// machine.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dagsim/benchmark/grid.h"
#include "dagsim/core/mask.h"
#include "dagsim/core/problem.h"
#include "runtime/kernels/family.h"

namespace dash::cli {

/// Deterministic (ordered tickets) or not (arrival-order atomics).
enum class BenchMode : std::uint8_t { kDet, kNondet };

std::string to_string(BenchMode mode);  ///< "det" | "nondet"
/// "det,nondet" and the like; UserError naming `flag` on an unknown or repeated entry.
std::vector<BenchMode> parse_modes(std::string const& text, std::string const& flag);
/// "full,causal"; UserError naming `flag` otherwise.
std::vector<sim::Mask> parse_masks(std::string const& text, std::string const& flag);
/// The strategy name that stands for `dash search`'s best schedule of each shape (bench only).
inline constexpr char const* kSearchStrategy = "search";
/// Comma-separated strategy names, each one of sim::strategy_names() or kSearchStrategy, no
/// repeats.
std::vector<std::string> parse_strategies(std::string const& text, std::string const& flag);

/// The benchmark grid: batch = total_tokens / seqlen, heads = hidden / head_dim.
struct BenchGrid {
  int total_tokens = sim::kGridTotalTokens;
  int hidden = sim::kGridHidden;
  std::vector<int> head_dims{64, 128};
  std::vector<int> seqlens{512, 1024, 2048, 4096, 8192, 16384};
  std::vector<sim::Mask> masks{sim::Mask{sim::MaskKind::kFull}, sim::Mask{sim::MaskKind::kCausal}};
  std::optional<int> tile_m;  ///< none: `family`'s default per head dim and mask (rt::default_tile_m)
  int tile_n = 128;
  rt::KernelFamily family = rt::kDefaultFamily;  ///< the family the shapes run on
};

/// Every shape of the grid, head_dim outermost, then mask, then seqlen (the table's order).
/// UserError when a seqlen does not divide total_tokens or a head_dim does not divide hidden.
std::vector<sim::Problem> grid_shapes(BenchGrid const& grid);

}  // namespace dash::cli
