#pragma once
// What `dash generate` specializes: the best named strategy for a shape (auto), and the default set
// checked into generated/ for the H200.
#include <string>
#include <vector>

#include "dagsim/core/machine.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/model/cost_model.h"
#include "runtime/kernels/family.h"

namespace dash::codegen {

/// The named strategy with the smallest simulated makespan under `cost` (ties: the earlier name in
/// sim::strategy_names()). Strategies that refuse the problem are skipped; UserError if all do.
sim::Schedule best_named_schedule(sim::Problem const& problem, sim::Machine const& machine,
                                  sim::CostModel const& cost, sim::LaunchModel launch);

struct DefaultShape {
  sim::Problem problem;
  sim::Machine machine;
};

/// H200, batch 1, seqlen 8192, the family's default tiles (rt::default_tile_m: 128x128 at
/// head_dim 64; 64x128 at 128, the sm90 family's 80x128 there without a mask): head_dim 128 with
/// 16 heads and head_dim 64 with 32 heads (hidden 2048), each full and causal.
std::vector<DefaultShape> default_shapes(rt::KernelFamily family);

/// Where the code generator's template (the table-driven schedule policy) lives in this source
/// tree.
std::string default_template_path();
/// The name a template is shown under in banners and manifests: its path relative to the source
/// tree when inside it, else its file name (never an absolute path).
std::string template_display_name(std::string const& path);

}  // namespace dash::codegen
